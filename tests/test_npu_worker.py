"""The RKLLM engine in a worker process (edge.llm.npuworker), on the stand-in (tests/rkllm_stub):
it answers as the in-process engine does; a run that never calls back and ignores rkllm_abort (a
wedged NPU) gets its worker killed at the job's deadline, which frees the system-wide NPU lock at
once; the next call starts a new worker; in the chain the request is served by llama.cpp on the
CPU (the real SmolLM2) and no thread of the hung job is left behind."""
from __future__ import annotations

import os
import threading
import time

import pytest

from edge.llm.base import CancelToken, EngineError, GenerationRequest, generate
from edge.llm.chain import HEALTHY, UNHEALTHY, EngineChain, StepSpec
from edge.llm.npulock import VOICE, NpuArbiter, default_lock_path
from edge.llm.npuworker import RkllmWorkerEngine

try:
    from test_rkllm import model, stub, stub_libs  # noqa: F401 - fixtures
except ImportError:
    from tests.test_rkllm import model, stub, stub_libs  # noqa: F401 - fixtures

GUARD_S = 120.0  # hang guard only
CPU_MODEL = "smollm2-135m-instruct-q4_1"


def ask(text: str = "Where are the M8 bolts?", **kw) -> GenerationRequest:
    return GenerationRequest([{"role": "user", "content": text}], max_tokens=kw.pop("max_tokens", 16), **kw)


def alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a killed child not reaped yet is a zombie: gone as far as the NPU is concerned
        return open(f"/proc/{pid}/stat").read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def wait_until(cond, what: str) -> None:
    end = time.monotonic() + GUARD_S
    while not cond():
        assert time.monotonic() < end, f"{what}: not within {GUARD_S} s (hang guard)"
        time.sleep(0.01)


def npu_free(lock) -> bool:
    try:
        with NpuArbiter(lock).job(VOICE, wait_s=0):
            return True
    except EngineError:
        return False


@pytest.fixture
def stub_env(monkeypatch):
    for k in ("RKLLM_STUB_MODE", "RKLLM_STUB_TOKENS", "RKLLM_STUB_DELAY_MS", "RKLLM_STUB_OK_RUNS"):
        monkeypatch.delenv(k, raising=False)
    return monkeypatch


@pytest.mark.timeout(2 * GUARD_S)
def test_the_worker_answers_streams_and_cancels_like_the_engine(stub_env, stub, model):
    stub_env.setenv("RKLLM_STUB_TOKENS", "Bin| twelve|.")
    eng = RkllmWorkerEngine(model, 1024, library=stub, soc="rk3588", timeout_s=30.0)
    try:
        assert eng.pid != os.getpid() and alive(eng.pid)
        assert list(eng.stream(ask())) == ["Bin", " twelve", "."]
        assert eng.last_stats.completion_tokens == 3 and eng.last_stats.finish_reason == "stop"
        eng.smoke(5.0)
        with pytest.raises(EngineError, match="JSON schema"):
            generate(eng, ask(json_schema={"type": "object"}))
        cancel = CancelToken()
        cancel.cancel()
        assert generate(eng, ask(), cancel)[0] == "" and eng.last_stats.cancelled
        gen = eng.stream(ask())  # a consumer that leaves after one piece: the next job reads its own
        next(gen)
        gen.close()
        assert generate(eng, ask())[0] == "Bin twelve."
    finally:
        eng.close()
    assert eng.pid is None


@pytest.mark.timeout(2 * GUARD_S)
def test_a_wedged_run_gets_its_worker_killed_and_the_npu_freed(stub_env, stub, model, tmp_path):
    lock = tmp_path / "npu.lock"
    stub_env.setenv("RKLLM_STUB_MODE", "stuck")
    eng = RkllmWorkerEngine(model, 1024, library=stub, soc="rk3588", timeout_s=0.5, wait_s=0.5,
                            abort_grace_s=0.5, npu_lock=lock)
    try:
        pid = eng.pid
        with pytest.raises(EngineError, match="worker killed"):
            generate(eng, ask())
        assert not alive(pid) and eng.kills == 1 and not eng.healthy
        assert npu_free(lock)  # the kernel dropped the killed worker's flock: no job holds the NPU
        stub_env.setenv("RKLLM_STUB_MODE", "stream")  # the next worker reads it when it loads
        assert generate(eng, ask())[0] == "Hello world."
        assert alive(eng.pid) and eng.pid != pid
    finally:
        eng.close()


@pytest.mark.timeout(3 * GUARD_S)
def test_a_job_past_its_deadline_is_killed_and_the_cpu_step_serves_the_request(stub_env, stub, model):
    """The smoke inference passes (one good run), the request's run is wedged: the chain's watchdog
    gives up after the step's timeout and llama.cpp answers; the wedged job's worker is killed at
    its deadline, so the chain's thread of that job ends and the NPU is free."""
    stub_env.setenv("RKLLM_STUB_MODE", "stuck")
    stub_env.setenv("RKLLM_STUB_OK_RUNS", "1")
    npu = StepSpec("rkllm", str(model), 1024, lib=str(stub), timeout_s=1.0, smoke_timeout_s=30.0, soc="rk3588")
    chain = EngineChain([npu, StepSpec("llamacpp", CPU_MODEL, 1024)]).start()
    try:
        st = chain.steps[0]
        worker = st.engine
        assert chain.active is st and st.state == HEALTHY
        pid = worker.pid
        text, stats = chain.generate(ask(temperature=0.0))
        assert text and stats.extra["engine"] == "llamacpp" and stats.extra["fallbacks"] == 1
        assert st.state == UNHEALTHY and "hung" in st.reason
        wait_until(lambda: st.busy is None or not st.busy.is_alive(), "the hung job's thread to end")
        assert not alive(pid) and worker.kills == 1
        assert npu_free(default_lock_path())
        assert not [t for t in threading.enumerate() if t.name.startswith("rkllm-run")]
    finally:
        chain.close()
