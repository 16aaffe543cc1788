"""Shared pytest fixtures."""
import shutil

import pytest

try:  # tests/ is put on sys.path by pytest's default (prepend) import mode
    from pulse import pulse_server
except ImportError:  # tests/ became a package
    from tests.pulse import pulse_server


@pytest.fixture
def pulse_null_sink(tmp_path):
    """A private PulseAudio server (default sink ``edge_null``, default source its monitor); yields
    the environment dict for child processes (``PULSE_SERVER`` etc.). See tests/pulse.py."""
    if shutil.which("pulseaudio") is None:
        pytest.skip("the 'pulseaudio' binary is not installed (apt-get install pulseaudio)")
    with pulse_server(tmp_path) as env:
        yield env
