"""The default LLM and who loads it.

- The package defaults and the x86 board run Qwen2.5-Coder-1.5B; the RK3588/RK3576 chains try the NPU
  (RKLLM) first, then that CPU model; a box without the memory for it (the governor's 30 % reserve),
  or without the joined file, takes SmolLM2 with the reason logged.
- The test suite's settings layer ($EDGE_SETTINGS_LAYER = tests/small-models.yaml) keeps plumbing on
  SmolLM2, in this process and in the edge commands tests start; a test of the default unsets it.
- Lazy load: a turn the templates take never loads the model (``edge ask``, ``edge run --input``, the
  understanding the loop and the service build); the first turn that needs it does, and says so
  (``llm_reload_ms`` in its turn_end).
"""
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from edge.config import LAYER_ENV, load_settings
from edge.governor.governor import Governor
from edge.llm.chain import specs_from_settings
from edge.llm.loader import admit_step, build_llm
from edge.loop.build import build_understanding, preflight
from edge.models import manifest as models
from tests.fakesys import x86_dev
from tests.helpers import INVENTORY, SESSION_WAKE, SESSIONS

REPO = Path(__file__).resolve().parents[1]
QWEN = "qwen2.5-coder-1.5b-instruct-q4_k_m"
SMOL = "smollm2-135m-instruct-q4_1"
TEMPLATE_HIT = "how many M8 bolts are in bin 12"
CHAIN_START = "llm chain:"  # the chain's first move, logged when it is built (edge.llm.chain)


def test_the_default_llm_is_qwen_and_the_test_layer_keeps_plumbing_on_smollm2(monkeypatch):
    assert os.environ[LAYER_ENV].endswith("tests/small-models.yaml")
    assert load_settings().llm.model == SMOL and load_settings(board="x86-dev").llm.model == SMOL
    rk = specs_from_settings(load_settings(board="rk3588-rock5b"))
    assert [(s.engine, s.model) for s in rk] == [("rkllm", "qwen2.5-3b-instruct-w8a8-rk3588"), ("llamacpp", SMOL)]
    monkeypatch.delenv(LAYER_ENV)
    for board in (None, "x86-dev"):
        s = load_settings(board=board)
        assert (s.llm.model, s.governor.smaller_models) == (QWEN, [SMOL]), board
    for board, npu in (("rk3588-rock5b", "qwen2.5-3b-instruct-w8a8-rk3588"),
                       ("rk3588-orangepi5", "qwen2.5-3b-instruct-w8a8-rk3588"),
                       ("rk3576-rock4d", "qwen2.5-3b-instruct-w4a16-rk3576")):
        specs = specs_from_settings(load_settings(board=board))
        assert [(s.engine, s.model, s.n_ctx) for s in specs] == [("rkllm", npu, 2048), ("llamacpp", QWEN, 2048)], board


@pytest.fixture
def small_box(tmp_path, monkeypatch):
    """Default settings (no test layer) on a fake x86 box with 2 GiB of RAM, and a manifest copy whose
    Qwen entry carries its shape (28 layers, 2 KV heads of 128, from the GGUF's own metadata), so the
    estimate needs no installed file; ``(settings, manifest_path, fake_sys)``."""
    monkeypatch.delenv(LAYER_ENV)
    data = yaml.safe_load(models.default_manifest_path().read_text())
    qwen = next(m for m in data["models"] if m["id"] == QWEN)
    qwen["arch"] = {"n_layers": 28, "n_kv_heads": 2, "head_dim": 128, "n_ctx_train": 32768}
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(yaml.safe_dump(data, sort_keys=False))
    fs = x86_dev(tmp_path / "sys", total_mib=2048, available_mib=1800)
    settings = load_settings(board="x86-dev", overrides={"store": {"path": str(tmp_path / "unused.db")},
                                                         "board": {"sensors": fs.sensors_settings()}})
    return settings, manifest, fs


def test_a_box_without_the_memory_for_qwen_takes_smollm2_and_logs_why(small_box, caplog):
    settings, manifest, fs = small_box
    caplog.set_level(logging.INFO)
    gov = Governor(settings, manifest_path=manifest)
    spec = admit_step(gov, specs_from_settings(settings)[0])
    assert spec.model == SMOL
    d = gov.decision
    assert d.degraded and d.reason.startswith(f"admitted {SMOL} with n_ctx 2048 instead of {QWEN} with n_ctx 2048")
    assert "> 70 % of MemTotal 2048.0 MiB" in d.attempts[0].why, d.attempts[0].why
    assert any(r.levelno == logging.WARNING and d.reason in r.getMessage() for r in caplog.records)
    fs.set_meminfo(total_mib=8192, available_mib=6000)  # the same settings on a box with room: Qwen
    assert admit_step(gov, specs_from_settings(settings)[0]).model == QWEN and not gov.decision.degraded


def test_a_box_without_the_joined_file_starts_on_smollm2_and_says_why(small_box, tmp_path, monkeypatch, capsys):
    settings, manifest, fs = small_box
    fs.set_meminfo(total_mib=8192, available_mib=6000)
    data = yaml.safe_load(manifest.read_text())
    qwen = next(m for m in data["models"] if m["id"] == QWEN)
    del qwen["arch"]
    qwen["root"] = str(tmp_path / "not-joined")  # setup's join never ran
    manifest.write_text(yaml.safe_dump(data, sort_keys=False))
    monkeypatch.setenv("EDGE_MANIFEST", str(manifest))
    checked = preflight(settings)  # the start-up check: the LLM stays, on its smaller model, not degraded
    err = capsys.readouterr().err
    assert f"llm.model: {QWEN}" in err and "edge models install" in err and "degraded" not in err, err
    assert checked.llm.chain == [] and checked.governor.smaller_models == [SMOL]
    gov = Governor(checked, manifest_path=manifest)
    assert admit_step(gov, specs_from_settings(checked)[0]).model == SMOL
    assert "cannot estimate" in gov.decision.attempts[0].why and "edge models install" in gov.decision.attempts[0].why


# ------------------------------------------------------------------------------------------------
# lazy load


def test_a_template_turn_never_loads_the_model_and_the_first_llm_turn_does(tmp_path, inventory_store):
    settings = load_settings(board="x86-dev", overrides={"store": {"path": str(tmp_path / "unused.db")}})
    gov = Governor(settings)
    und = build_understanding(settings, inventory_store, build_llm(settings, gov, lazy=True))
    und.warm()  # what the loop does at start: the paraphrase encoder, not the LLM
    intent = und.understand(TEMPLATE_HIT)
    assert intent.source == "template" and intent.slots()["sku"] == "BLT-M8-30"
    assert not und.llm.loaded and und.llm.unloader.loads == 0 and not gov.llm_loaded
    assert und.llm.status()[0]["state"] == "unloaded"
    und.understand("what's the weather like tomorrow")  # no template takes it: the model is needed now
    assert und.llm.loaded and und.llm.unloader.loads == 1 and gov.llm_loaded
    assert und.llm.take_reload_ms() > 0
    und.llm.close()


#: a question no template takes and the box's fixed sentences do not answer ("what's the weather" is one
#: of those): the grounded answer needs the model
NEEDS_MODEL = "what's the nicest colour for a van"


def _edge(*args, env=None, timeout=600):
    return subprocess.run([sys.executable, "-m", "edge.cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, env=env or {**os.environ, "PYTHONPATH": str(REPO)})


@pytest.fixture
def box_config(tmp_path):
    cfg = tmp_path / "edge.yaml"
    cfg.write_text(f"board: x86-dev\n{SESSION_WAKE}store: {{path: {tmp_path / 'edge.db'}}}\n")
    assert _edge("inventory", "import", str(INVENTORY), "--config", str(cfg)).returncode == 0
    return cfg


def _turn_end(stdout: str) -> dict:
    return next(e for e in map(json.loads, stdout.splitlines()) if e["type"] == "turn_end")


def test_edge_ask_on_a_template_hit_never_loads_the_model(box_config):
    r = _edge("ask", TEMPLATE_HIT, "--config", str(box_config), "--json")
    assert r.returncode == 0, r.stderr
    assert "There are 140 M8 bolts in bin 12." in r.stdout
    assert _turn_end(r.stdout)["latency_ms"] == {} and CHAIN_START not in r.stderr, r.stderr
    r = _edge("ask", NEEDS_MODEL, "--config", str(box_config), "--json")
    assert r.returncode == 0, r.stderr
    assert _turn_end(r.stdout)["latency_ms"]["llm_reload_ms"] > 0 and CHAIN_START in r.stderr, r.stderr


def test_edge_run_on_a_template_hit_never_loads_the_model(box_config, tmp_path):
    r = _edge("run", "--input", str(SESSIONS / "query_m8_bolts.wav"), "--config", str(box_config),
              "--output-dir", str(tmp_path / "out"), "--json")
    assert r.returncode == 0, r.stderr[-3000:]
    events = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    intents = [e for e in events if e["type"] == "intent"]
    assert [(e["intent"], e["source"]) for e in intents] == [("query_stock", "template")], intents
    ends = [e for e in events if e["type"] == "turn_end"]
    assert ends and all("llm_reload_ms" not in e["latency_ms"] for e in ends), ends
    assert CHAIN_START not in r.stderr, r.stderr[-3000:]


@pytest.mark.default_model
def test_edge_ask_with_the_default_model_loads_it_only_when_a_turn_needs_it(box_config):
    env = {k: v for k, v in os.environ.items() if k != LAYER_ENV}
    env["PYTHONPATH"] = str(REPO)
    if not (models.joined_dir() / f"{QWEN}.gguf").is_file():
        pytest.skip(f"{QWEN} is not installed (scripts/setup.sh runs: edge models install {QWEN})")
    r = _edge("ask", TEMPLATE_HIT, "--config", str(box_config), "--json", env=env)
    assert r.returncode == 0 and _turn_end(r.stdout)["latency_ms"] == {} and CHAIN_START not in r.stderr, r.stderr
    r = _edge("ask", NEEDS_MODEL, "--config", str(box_config), "--json", env=env)
    assert r.returncode == 0, r.stderr
    assert f"llamacpp:{QWEN}" in r.stderr and _turn_end(r.stdout)["latency_ms"]["llm_reload_ms"] > 0, r.stderr
