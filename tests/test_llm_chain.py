"""edge.llm.chain: the fallback chain moving down and back up (case C13).

The unit under test is the chain. Its healthy CPU step is the real llama.cpp engine with SmolLM2;
failing steps are built honestly: a GGUF cut in half (load fails), the RKLLM binding on the C
stand-in library in ``fail_first_token`` / ``hang`` mode, and, for failures *during* requests, a
small neighbouring engine in this file that delegates to the real llama.cpp engine until it is
told to fail or hang.
"""
from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from edge.config import ConfigError, load_settings
from edge.llm.base import SMOKE_REQUEST, ContextOverflow, EngineError, GenerationRequest
from edge.llm.chain import (
    HEALTHY,
    UNHEALTHY,
    UNLOADED,
    EngineChain,
    NoEngine,
    StepSpec,
    default_factory,
    specs_from_settings,
)
from edge.llm.llamacpp import LlamaCppEngine
from edge.models.manifest import resolve
from edge.stages.nlu.understand import Understanding

MODEL = "smollm2-135m-instruct-q4_1"
HANG_GUARD_S = 30  # hang detection only
CPU = StepSpec("llamacpp", MODEL, 512)


def ask(text="What is a hammer?", **kw) -> GenerationRequest:
    kw.setdefault("max_tokens", 4)
    kw.setdefault("temperature", 0.0)
    return GenerationRequest([{"role": "user", "content": text}], **kw)


class Neighbour:
    """A neighbouring engine for the chain (not the unit under test): answers through a real
    llama.cpp engine, or fails / hangs when told to (``mode``)."""

    name = "neighbour"

    def __init__(self, supports_json_schema: bool = True):
        self.real = LlamaCppEngine(MODEL, n_ctx=512)
        self.n_ctx = self.real.n_ctx
        self.mode = "ok"
        self.supports_json_schema = supports_json_schema
        self.calls = 0
        self.release = threading.Event()
        self.saw_cancel = threading.Event()
        self.closed = False

    @property
    def last_stats(self):
        return self.real.last_stats

    def stream(self, request, cancel=None):
        self.calls += 1
        if self.mode == "fail":
            raise EngineError("NPU job failed (neighbour told to fail)")
        if self.mode == "hang":
            while not self.release.wait(0.02):
                if cancel is not None and cancel.cancelled:
                    self.saw_cancel.set()
                    return
            return
        yield from self.real.stream(request, cancel)

    def smoke(self, timeout_s=None):
        for _ in self.stream(SMOKE_REQUEST):
            pass
        return self.last_stats

    def count_tokens(self, text):
        return self.real.count_tokens(text)

    def close(self):
        self.closed = True


@pytest.fixture
def neighbour():
    n = Neighbour()
    yield n
    n.release.set()
    n.real.close()


def factory_with(neighbour):
    return lambda spec: neighbour if spec.engine == "neighbour" else default_factory(spec)


@pytest.fixture
def half_gguf(tmp_path) -> Path:
    src = resolve(MODEL)
    p = tmp_path / "cut.gguf"
    with open(src, "rb") as fin, open(p, "wb") as fout:
        fout.write(fin.read(src.stat().st_size // 2))
    return p


def states(chain) -> list[tuple[str, str, bool]]:
    return [(s["engine"], s["state"], s["active"]) for s in chain.status()]


# ------------------------------------------------------------------------------------ start (C13)


def test_start_skips_a_step_that_cannot_load_and_leaves_lower_steps_unloaded(half_gguf):
    chain = EngineChain([StepSpec("llamacpp", str(half_gguf), 512), CPU, CPU]).start()
    try:
        st = chain.status()
        assert [(s["state"], s["active"]) for s in st] == [(UNHEALTHY, False), (HEALTHY, True), (UNLOADED, False),
                                                           (HEALTHY, False)]
        assert "cannot load" in st[0]["reason"] and st[3]["engine"] == "grammar"
        text, stats = chain.generate(ask())
        assert text and stats.extra["step"] == 1 and stats.extra["engine"] == "llamacpp"
        assert chain.moves[-1]["to"] == f"llamacpp:{MODEL}" and "smoke" in chain.moves[-1]["reason"]
    finally:
        chain.close()


def test_start_marks_a_hung_smoke_inference_unhealthy(neighbour):
    neighbour.mode = "hang"
    chain = EngineChain([StepSpec("neighbour", "npu", smoke_timeout_s=0.5), CPU],
                        factory=factory_with(neighbour)).start()
    try:
        assert states(chain)[:2] == [("neighbour", UNHEALTHY, False), ("llamacpp", HEALTHY, True)]
        assert "hung" in chain.status()[0]["reason"]
        assert chain.generate(ask())[0]
    finally:
        chain.close()


# ------------------------------------------------------------------------- failures in requests


def test_an_engine_error_in_a_request_moves_down_and_the_request_is_retried(neighbour):
    chain = EngineChain([StepSpec("neighbour", "npu"), CPU], factory=factory_with(neighbour)).start()
    try:
        assert chain.generate(ask())[1].extra["step"] == 0
        neighbour.mode = "fail"
        text, stats = chain.generate(ask())
        assert text and stats.extra["step"] == 1 and stats.extra["fallbacks"] == 1
        st = chain.status()
        assert (st[0]["state"], st[1]["state"], st[1]["active"]) == (UNHEALTHY, HEALTHY, True)
        assert "NPU job failed" in st[0]["reason"]
        assert chain.moves[-1]["from"] == "neighbour:npu" and "request failed" in chain.moves[-1]["reason"]
    finally:
        chain.close()


def test_a_hang_in_a_request_is_cancelled_and_moves_down(neighbour):
    chain = EngineChain([StepSpec("neighbour", "npu", timeout_s=0.5), CPU], factory=factory_with(neighbour)).start()
    try:
        neighbour.mode = "hang"
        text, stats = chain.generate(ask())
        assert text and stats.extra["step"] == 1
        assert neighbour.saw_cancel.wait(HANG_GUARD_S)  # the watchdog cancelled the hung job
        assert "hung" in chain.status()[0]["reason"]
    finally:
        chain.close()


def test_the_chain_moves_back_up_after_the_cool_down(neighbour):
    now = [1000.0]
    chain = EngineChain([StepSpec("neighbour", "npu"), CPU], factory=factory_with(neighbour), cooldown_s=60,
                        clock=lambda: now[0]).start()
    try:
        neighbour.mode = "fail"
        assert chain.generate(ask())[1].extra["step"] == 1
        neighbour.mode = "ok"  # the NPU recovered, but the cool-down has not passed
        now[0] += 59
        assert chain.probe() is False
        assert chain.generate(ask())[1].extra["step"] == 1
        now[0] += 2  # past the cool-down: the next request probes the higher step first
        text, stats = chain.generate(ask())
        assert text and stats.extra["step"] == 0
        st = chain.status()
        assert (st[0]["state"], st[0]["active"], st[1]["state"]) == (HEALTHY, True, UNLOADED)
        assert "released" in st[1]["reason"]
        assert chain.moves[-1]["to"] == "neighbour:npu" and chain.moves[-1]["reason"].startswith("probe")
    finally:
        chain.close()


def test_all_steps_failing_leaves_the_grammar_path(half_gguf):
    chain = EngineChain([StepSpec("llamacpp", str(half_gguf), 512)]).start()
    assert states(chain) == [("llamacpp", UNHEALTHY, False), ("grammar", HEALTHY, True)]
    with pytest.raises(NoEngine):
        chain.generate(ask())
    intent = Understanding([], chain).understand("tell me a joke about owls")
    assert intent.intent == "other" and intent.source == "grammar" and intent.answer is None


def test_a_json_schema_request_skips_a_step_without_grammar_support():
    npu = Neighbour(supports_json_schema=False)
    chain = EngineChain([StepSpec("neighbour", "npu"), CPU], factory=factory_with(npu)).start()
    try:
        calls = npu.calls
        schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
        text, stats = chain.generate(ask("Reply with JSON: is water wet?", json_schema=schema, max_tokens=12))
        assert stats.extra["step"] == 1 and text.lstrip().startswith("{")
        assert npu.calls == calls  # not tried, not failed
        assert states(chain)[0] == ("neighbour", HEALTHY, True)
    finally:
        chain.close()
        npu.real.close()


def test_a_too_long_question_does_not_move_the_chain():
    chain = EngineChain([CPU]).start()
    try:
        with pytest.raises(ContextOverflow):
            chain.generate(ask("stock " * 900, max_tokens=16))
        assert states(chain)[0] == ("llamacpp", HEALTHY, True) and chain.status()[0]["failures"] == 0
    finally:
        chain.close()


# ------------------------------------------------------------------------------------ settings


def test_chain_steps_from_settings():
    s = load_settings(overrides={"llm": {"chain": [
        {"engine": "rkllm", "model": "qwen2.5-3b-instruct-w8a8-rk3588", "n_ctx": 4096, "lib": "/usr/lib/librkllmrt.so"},
        {"engine": "llamacpp", "model": MODEL, "n_ctx": 2048, "threads": 3},
        {"engine": "grammar"},
        {"engine": "llamacpp", "model": "ignored-after-grammar", "n_ctx": 1024},
    ]}})
    specs = specs_from_settings(s)
    assert [(p.engine, p.model, p.n_ctx) for p in specs] == [
        ("rkllm", "qwen2.5-3b-instruct-w8a8-rk3588", 4096), ("llamacpp", MODEL, 2048)]
    assert specs[0].lib == "/usr/lib/librkllmrt.so" and specs[1].threads == 3
    default = specs_from_settings(load_settings())
    assert [(p.engine, p.model, p.n_ctx) for p in default] == [("llamacpp", MODEL, 2048)]
    assert specs_from_settings(load_settings(overrides={"llm": {"engine": "none"}})) == []


def test_an_rkllm_step_without_model_is_refused_and_a_llamacpp_step_takes_llm_model():
    with pytest.raises(ConfigError, match=r"llm\.chain\.0.*needs a model"):
        load_settings(overrides={"llm": {"chain": [{"engine": "rkllm", "n_ctx": 2048}]}})
    with pytest.raises(ConfigError, match=r"llm\.chain\.0.*needs an explicit n_ctx"):
        load_settings(overrides={"llm": {"chain": [{"engine": "rkllm", "model": "x.rkllm"}]}})
    s = load_settings(overrides={"llm": {"model": "smollm2-135m-instruct-q4_1", "n_ctx": 1024, "chain": [
        {"engine": "rkllm", "model": "x.rkllm", "n_ctx": 2048}, {"engine": "llamacpp"}, {"engine": "grammar"}]}})
    assert [(p.engine, p.model, p.n_ctx) for p in specs_from_settings(s)] == [
        ("rkllm", "x.rkllm", 2048), ("llamacpp", "smollm2-135m-instruct-q4_1", 1024)]


# ------------------------------------------------------------------ RKLLM stand-in → llama.cpp


STUB = Path(__file__).resolve().parent / "rkllm_stub" / "rkllm_stub.c"


@pytest.fixture(scope="module")
def stub_lib(tmp_path_factory) -> Path:
    gcc = shutil.which("gcc")
    if gcc is None or not STUB.is_file():
        pytest.skip("needs gcc and tests/rkllm_stub/rkllm_stub.c")
    pytest.importorskip("edge.llm.rkllm")
    so = tmp_path_factory.mktemp("rkllm") / "librkllmrt.so"
    r = subprocess.run([gcc, "-shared", "-fPIC", "-O1", "-std=gnu11", '-DRKLLM_STUB_VERSION="1.3.0"', "-o", str(so),
                        str(STUB)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return so


@pytest.mark.parametrize("mode", ["fail_first_token", "hang"])
def test_rkllm_standin_failing_its_smoke_falls_back_to_llama_cpp(monkeypatch, tmp_path, stub_lib, mode):
    monkeypatch.setenv("RKLLM_STUB_MODE", mode)
    model = tmp_path / "qwen2.5-3b-instruct_w8a8_rk3588.rkllm"
    model.write_bytes(b"stand-in model: the stub only opens it\n")
    npu = StepSpec("rkllm", str(model), 1024, lib=str(stub_lib), timeout_s=1.0, smoke_timeout_s=1.0, soc="rk3588")
    chain = EngineChain([npu, CPU]).start()
    try:
        st = chain.status()
        assert (st[0]["engine"], st[0]["state"], st[1]["state"], st[1]["active"]) == ("rkllm", UNHEALTHY, HEALTHY, True)
        assert "smoke" in st[0]["reason"]
        text, stats = chain.generate(ask())
        assert text and stats.extra["engine"] == "llamacpp"
    finally:
        chain.close()
        from edge.llm.npulock import NpuArbiter, default_lock_path

        with NpuArbiter(default_lock_path()).job(wait_s=HANG_GUARD_S) as got:  # the aborted run left the NPU
            assert got


def test_rkllm_standin_serves_when_healthy(monkeypatch, tmp_path, stub_lib):
    monkeypatch.setenv("RKLLM_STUB_MODE", "stream")
    monkeypatch.setenv("RKLLM_STUB_TOKENS", "Bin| twelve|.")
    model = tmp_path / "m.rkllm"
    model.write_bytes(b"stand-in model\n")
    chain = EngineChain([StepSpec("rkllm", str(model), 1024, lib=str(stub_lib), timeout_s=5.0, soc="rk3588"), CPU]).start()
    try:
        assert states(chain)[:2] == [("rkllm", HEALTHY, True), ("llamacpp", UNLOADED, False)]
        text, stats = chain.generate(ask())
        assert text == "Bin twelve." and stats.extra["engine"] == "rkllm"
    finally:
        chain.close()
