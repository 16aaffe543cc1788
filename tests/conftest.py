"""Shared pytest fixtures."""
import os
import shutil
import tempfile
from pathlib import Path

import pytest

# Plumbing tests run on SmolLM2-135M, in this process and in every edge command a test starts (they
# inherit the variable): see tests/small-models.yaml and edge/config/. Tests of the default model
# itself are marked default_model and unset it.
os.environ.setdefault("EDGE_SETTINGS_LAYER", str(Path(__file__).with_name("small-models.yaml")))

try:  # tests/ is put on sys.path by pytest's default (prepend) import mode
    from helpers import INVENTORY, SESSION_WAKE_MODELS
    from pulse import pulse_server
except ImportError:  # tests/ became a package
    from tests.helpers import INVENTORY, SESSION_WAKE_MODELS
    from tests.pulse import pulse_server


# The system-wide NPU lock (edge.llm.npulock) of this test session: parallel sessions on one
# machine must not wait for each other's stand-in jobs.
os.environ.setdefault("EDGE_NPU_LOCK", os.path.join(tempfile.mkdtemp(prefix="edge-npu-"), "npu.lock"))


@pytest.fixture
def pulse_null_sink(tmp_path):
    """A private PulseAudio server (default sink ``edge_null``, default source its monitor); yields
    the environment dict for child processes (``PULSE_SERVER`` etc.). See tests/pulse.py."""
    if shutil.which("pulseaudio") is None:
        pytest.skip("the 'pulseaudio' binary is not installed (apt-get install pulseaudio)")
    with pulse_server(tmp_path) as env:
        yield env


def _rig(tmp_path_factory, llm: bool):
    from edge.config import load_settings
    from edge.loop.build import build_stages
    from edge.stock.store import Store

    d = tmp_path_factory.mktemp("rig-llm" if llm else "rig-grammar")
    overrides = {"store": {"path": str(d / "unused.db")}, "output_dir": str(d), "wake": {"models": SESSION_WAKE_MODELS}}
    if not llm:
        overrides["llm"] = {"engine": "none"}
    settings = load_settings(board="x86-dev", overrides=overrides)
    boot = Store(d / "boot.db")
    boot.import_csv(INVENTORY)
    stages = build_stages(settings, boot)
    _RIGS.append((stages, boot))
    return settings, stages


#: the session rigs built so far, with their own store
_RIGS: list = []


@pytest.fixture(autouse=True)
def _rig_store_put_back():
    """Tests put their own store into a shared rig's ``stages.store`` and close it at their end:
    after every test the rig gets its own store back, so the next test never meets a closed one."""
    yield
    for stages, own in _RIGS:
        stages.store = own


@pytest.fixture(scope="session")
def rig_llm(tmp_path_factory):
    """``(settings, stages)``: the real stages on the x86-dev board (wake word, VAD, whisper, grammar
    + SmolLM2, TTS worker), loaded once for the whole test session. A test puts its own store in
    ``stages.store`` (see ``inventory_store``)."""
    settings, stages = _rig(tmp_path_factory, llm=True)
    yield settings, stages
    stages.tts.close()


@pytest.fixture(scope="session")
def rig_grammar(tmp_path_factory):
    """As ``rig_llm`` with ``llm.engine: none`` (grammar path only)."""
    settings, stages = _rig(tmp_path_factory, llm=False)
    yield settings, stages
    stages.tts.close()


@pytest.fixture
def inventory_store(tmp_path):
    """A fresh SQLite store in ``tmp_path`` loaded from the shared inventory.csv."""
    from edge.stock.store import Store

    store = Store(tmp_path / "edge.db")
    store.import_csv(INVENTORY)
    yield store
    store.close()
