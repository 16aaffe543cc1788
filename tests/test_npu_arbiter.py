"""One NPU arbiter for every edge process (edge.llm.npulock): two processes driving the RKLLM
stand-in (tests/rkllm_stub, one shared counter of runs in progress, as one NPU is shared by a
board's processes) never run two jobs at once; a voice turn that waits goes before an API request
that waited longer, in one process and across processes; a generation cancelled or closed while it
waits for the NPU runs nothing."""
from __future__ import annotations

import os
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from edge.llm.base import PRIORITY_API, CancelToken, GenerationRequest, generate
from edge.llm.npulock import API, VOICE, NpuArbiter, NpuBusy
from edge.llm.rkllm import RkllmEngine
from tests.helpers import REPO

try:
    from test_rkllm import make_engine, model, stub, stub_libs  # noqa: F401 - fixtures
except ImportError:
    from tests.test_rkllm import make_engine, model, stub, stub_libs  # noqa: F401 - fixtures

GUARD_S = 120.0  # hang guard only


def wait_until(cond, what: str) -> None:
    end = time.monotonic() + GUARD_S
    while not cond():
        assert time.monotonic() < end, f"{what}: not within {GUARD_S} s (hang guard)"
        time.sleep(0.002)


def counters(path: Path) -> tuple[int, int]:
    """(runs in progress, the most at once) of the stand-ins sharing ``path``."""
    return struct.unpack("ii", path.read_bytes()[:8])


def answer(stdout: str) -> str:
    """The ``OK`` line of tests/rkllm_jobs.py (the stand-in prints its start-up line too)."""
    return [ln for ln in stdout.splitlines() if ln.startswith("OK ")][-1][3:]


def jobs_process(stub, model, lock: Path, shared: Path, jobs: int, priority: int, tokens: str, delay_ms: int):
    env = {**os.environ, "PYTHONPATH": str(REPO), "RKLLM_STUB_MODE": "stream", "RKLLM_STUB_TOKENS": tokens,
           "RKLLM_STUB_DELAY_MS": str(delay_ms), "RKLLM_STUB_SHARED": str(shared)}
    return subprocess.Popen([sys.executable, str(REPO / "tests" / "rkllm_jobs.py"), str(stub), str(model), str(lock),
                             str(jobs), str(priority)], env=env, cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.timeout(2 * GUARD_S)
def test_two_processes_never_run_two_npu_jobs_at_once(stub, model, tmp_path):
    """A long answer runs in one process; a second process starts meanwhile and asks ten short
    ones: its first run starts only after the long one ended (with a lock per process it would
    start at once), and no two runs ever overlap."""
    lock, shared = tmp_path / "npu.lock", tmp_path / "runs"
    shared.write_bytes(bytes(8))
    long = jobs_process(stub, model, lock, shared, 1, VOICE, "|".join(["x"] * 200), 40)
    short = None
    try:
        wait_until(lambda: counters(shared)[0] == 1 or long.poll() is not None, "the long run to start")
        short = jobs_process(stub, model, lock, shared, 10, API, "a|b|c", 2)
        out_short, err_short = short.communicate(timeout=GUARD_S)
        out_long, err_long = long.communicate(timeout=GUARD_S)
    finally:
        for p in (long, short):
            if p is not None and p.poll() is None:
                p.kill()
    assert long.returncode == 0, err_long[-2000:]
    assert short.returncode == 0, err_short[-2000:]
    assert answer(out_long) == "x" * 200
    assert answer(out_short) == " ".join(["abc"] * 10)
    assert counters(shared) == (0, 1)  # 0 overlapping jobs


def test_a_waiting_voice_turn_goes_before_an_api_request_queued_earlier_across_processes(tmp_path):
    """Three arbiters on one lock file stand for three processes (each has its own open file, as
    processes do): the holder ends; the voice turn queued after the API request runs first."""
    lock = tmp_path / "npu.lock"
    holder, api, voice = NpuArbiter(lock), NpuArbiter(lock), NpuArbiter(lock)
    order: list[str] = []

    def wait_for(arbiter, priority, name):
        with arbiter.job(priority, wait_s=GUARD_S) as got:
            assert got
            order.append(name)

    with holder.job(VOICE, wait_s=0):
        ta = threading.Thread(target=wait_for, args=(api, API, "api"))
        ta.start()
        wait_until(lambda: api._queue, "the API request to wait")
        tv = threading.Thread(target=wait_for, args=(voice, VOICE, "voice"))
        tv.start()
        wait_until(holder.voice_waiting, "the voice turn to wait")
    ta.join(GUARD_S)
    tv.join(GUARD_S)
    assert order == ["voice", "api"]


def test_a_waiting_voice_turn_goes_first_within_one_process(tmp_path):
    arbiter = NpuArbiter(tmp_path / "npu.lock")
    order: list[str] = []

    def wait_for(priority, name):
        with arbiter.job(priority, wait_s=GUARD_S):
            order.append(name)

    with arbiter.job(VOICE, wait_s=0):
        threads = []
        for i, (priority, name) in enumerate([(API, "api-1"), (API, "api-2"), (VOICE, "voice")]):
            threads.append(threading.Thread(target=wait_for, args=(priority, name)))
            threads[-1].start()
            wait_until(lambda n=i + 1: len(arbiter._queue) == n, f"{name} to wait")
    for t in threads:
        t.join(GUARD_S)
    assert order == ["voice", "api-1", "api-2"]


def test_the_npu_held_elsewhere_past_the_wait_is_npu_busy(tmp_path):
    lock = tmp_path / "npu.lock"
    with NpuArbiter(lock).job(VOICE, wait_s=0):
        with pytest.raises(NpuBusy, match=f"NPU busy.*{lock}"):
            with NpuArbiter(lock).job(VOICE, wait_s=0):
                pass
    with NpuArbiter(lock).job(VOICE, wait_s=0) as got:  # free again once the holder ended
        assert got


def test_an_unwritable_lock_folder_is_named_with_the_setting(tmp_path):
    with pytest.raises(Exception, match="llm.npu_lock"):
        with NpuArbiter(tmp_path / "missing" / "npu.lock").job(VOICE, wait_s=0):
            pass


@pytest.mark.timeout(GUARD_S)
def test_a_generation_cancelled_or_closed_while_it_waits_for_the_npu_runs_nothing(monkeypatch, stub, model,
                                                                                   tmp_path):
    lock = tmp_path / "npu.lock"
    eng = make_engine(monkeypatch, stub, model, npu_lock=lock, wait_s=GUARD_S)
    req = GenerationRequest([{"role": "user", "content": "hi"}], max_tokens=8, priority=PRIORITY_API)
    try:
        with NpuArbiter(lock).job(VOICE, wait_s=0):  # another process holds the NPU
            cancel = CancelToken()
            out: dict = {}
            t = threading.Thread(target=lambda: out.update(text=generate(eng, req, cancel)[0]))
            t.start()
            wait_until(lambda: eng.arbiter._queue, "the generation to wait for the NPU")
            cancel.cancel()
            t.join(GUARD_S)
            assert out["text"] == "" and eng.last_stats.cancelled
            assert "run.role" not in described_or_empty(eng)  # rkllm_run was never called

            t = threading.Thread(target=lambda: out.update(closed=list(eng.stream(req))))
            t.start()
            wait_until(lambda: eng.arbiter._queue, "the generation to wait for the NPU")
            eng.close()  # waits for it: it leaves as cancelled, then the model is freed
            t.join(GUARD_S)
            assert out["closed"] == [] and eng.handle is None
    finally:
        eng.close()


def described_or_empty(eng: RkllmEngine) -> str:
    fn = eng.lib.cdll.rkllm_stub_describe
    import ctypes

    fn.restype, fn.argtypes = ctypes.c_char_p, [ctypes.c_void_p]
    return (fn(eng.handle) or b"").decode()
