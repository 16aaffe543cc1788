"""C16 long-run memory: the speech recognizer called many times on a 5 s clip, one call at a time, then
from 4 concurrent callers; then a recognizer worker that leaks a few KB per call.

Right behaviour: after warm-up the worker's resident memory does not grow call by call (the governor's
:class:`MemoryWatch` sees no slope); 4 concurrent callers get the same transcripts from one model
instance (calls serialized, one process); a leaking worker is seen (steady slope, or over its budget)
and recycled between utterances, no utterance dropped, its memory never above the budget by more
than one call's growth. This is the short variant: bench/asr_memory.py runs 5,000 calls and measures
the bytes per call and the concurrent ÷ sequential time.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

from drivers.audio import read_wav
from edge.config import load_settings
from edge.governor.memwatch import MemoryWatch, slope_per_call
from edge.stages.asr.worker import AsrWorker
from tests.c16_leak import LEAK_BYTES, SWING_BYTES, leaky, leaky_under_pressure
from tests.helpers import SESSIONS
from tests.synth import to16k


def clip(seconds: float, start_s: float = 0.0) -> np.ndarray:
    """``seconds`` of the query session from ``start_s`` (repeated when it is shorter)."""
    data, rate = read_wav(SESSIONS / "query_m8_bolts.wav")
    x = to16k(data, rate)[int(start_s * 16000):]
    return np.resize(x, int(seconds * 16000))


SPOKEN = (1.5, 1.7)  # (seconds, from): part of the spoken command


@pytest.fixture(scope="module")
def asr_settings():
    return load_settings(board="x86-dev").asr


def test_a_steady_worker_is_not_recycled_and_concurrent_callers_share_one_model(asr_settings):
    audio = clip(5.0)
    watch = MemoryWatch(window=9, warmup=4)
    w = AsrWorker(asr_settings, watch=watch)
    try:
        pid, rss = w.pid, []
        first = w.transcribe(audio).text
        assert "bolts" in first.lower(), first
        for _ in range(9):
            assert w.transcribe(audio).text == first
            rss.append(w.rss_bytes())
        results: list[str] = []
        lock = threading.Lock()

        def caller():
            for _ in range(1):
                t = w.transcribe(audio).text
                with lock:
                    results.append(t)

        threads = [threading.Thread(target=caller) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        assert results == [first] * 4  # every concurrent call answered, identically
        assert w.pid == pid and w.recycles == 0, w.reasons  # one model instance, never flagged
        assert w.calls == 14
        print(f"\nsteady worker: RSS slope after warm-up {slope_per_call(rss[4:]) / 1024:.2f} KiB/call, "
              f"peak {watch.peak / 2**20:.1f} MiB")
    finally:
        w.close()


def test_a_leaking_worker_is_recycled_between_utterances_and_no_utterance_is_dropped(asr_settings):
    audio = clip(*SPOKEN)
    # short window and a small total growth, so the 16 KiB leak shows in a few calls (defaults: 45, 2 MiB)
    watch = MemoryWatch(window=9, warmup=3, min_growth_bytes=8 * LEAK_BYTES)
    w = AsrWorker(asr_settings, watch=watch, target=leaky)
    try:
        pids, texts = {w.pid}, []
        while w.recycles == 0 and len(texts) < 30:  # the slope rule: a steady leak of 16 KiB per call
            texts.append(w.transcribe(audio).text)
            pids.add(w.pid)
        assert w.recycles == 1 and len(pids) == 2 and "a leak" in w.reasons[0], (len(texts), w.reasons)
        # the budget rule: the fresh worker warmed up, plus 4 calls' growth (far below the 30 % reserve)
        watch.slope_bytes_per_call = 1e12
        for _ in range(4):
            texts.append(w.transcribe(audio).text)
        watch.budget_bytes = budget = w.anon_bytes() + 4 * LEAK_BYTES
        for _ in range(10):
            pid = w.pid
            texts.append(w.transcribe(audio).text)
            if w.pid != pid:  # recycled: the fresh worker, once loaded, is back under the budget
                w.wait_ready()
                assert w.anon_bytes() < budget, (w.anon_bytes(), budget)
                break
        assert w.recycles == 2 and "over its budget" in w.reasons[1], w.reasons
        assert len(set(texts)) == 1 and texts[0] and len(texts) == w.calls, texts  # no utterance dropped
    finally:
        w.close()


def test_a_leak_is_seen_while_the_page_cache_swings_the_workers_rss_by_megabytes(asr_settings):
    """Under memory pressure the kernel drops and re-reads a worker's file-backed pages (its shared
    libraries), so VmRSS falls by megabytes over a few calls and jumps back; the watch reads the
    anonymous part, where a leak lives, and still sees the 16 KiB per call."""
    audio = clip(*SPOKEN)
    watch = MemoryWatch(window=9, warmup=3, min_growth_bytes=8 * LEAK_BYTES)
    w = AsrWorker(asr_settings, watch=watch, target=leaky_under_pressure)
    try:
        rss, anon, texts = [], [], []
        while w.recycles == 0 and len(texts) < 30:
            texts.append(w.transcribe(audio).text)
            if w.recycles == 0:
                rss.append(w.rss_bytes())
                anon.append(w.anon_bytes())
        assert w.recycles == 1 and "a leak" in w.reasons[0], (len(texts), w.reasons)
        assert max(rss[3:]) - min(rss[3:]) > SWING_BYTES // 2, rss  # VmRSS really swung by megabytes
        # the same VmRSS figures fed to a fresh watch: the leak is hidden in them
        plain = MemoryWatch(window=9, warmup=3, min_growth_bytes=8 * LEAK_BYTES)
        assert not any(plain.observe(r) for r in rss), [r >> 10 for r in rss]
        assert len(set(texts)) == 1 and len(texts) == w.calls  # no utterance dropped
    finally:
        w.close()
