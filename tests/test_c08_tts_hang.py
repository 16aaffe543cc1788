"""C08 TTS hang: three replies in a row from a worker thread, with the speech engine made to block.

The block is real: the speech engine's process is frozen with SIGSTOP (what a hung native call
looks like from outside). Each reply finishes within its length-scaled timeout, or the engine is
restarted and the reply still comes out; listening resumes.
"""
from __future__ import annotations

import os
import signal
import threading

import pytest
import soundfile as sf

from edge.stages.tts.engine import TtsError, WatchdogTts

REPLIES = ["There are 140 M8 bolts in bin 12.",
           "Logged 20 boxes of nitrile gloves received. Now 32 on shelf A.",
           "Undone: 20 boxes of nitrile gloves. Now 12 on shelf A."]


def test_a_frozen_speech_engine_is_restarted_and_every_reply_is_spoken(tmp_path):
    tts = WatchdogTts(base_timeout_s=2.0, per_char_s=0.02)
    results, errors, pids = [], [], []

    def worker():
        for i, text in enumerate(REPLIES):
            if i == 1:  # freeze the engine right before the second reply
                pids.append(tts.pid)
                os.kill(tts.pid, signal.SIGSTOP)
            try:
                results.append(tts.synthesize(text, tmp_path / f"r{i}.wav"))
            except Exception as e:  # reported, not raised: the test checks there were none
                errors.append(e)

    t = threading.Thread(target=worker)
    t.start()
    t.join(timeout=120)
    try:
        assert not t.is_alive(), "a reply never finished"
        assert errors == []
        assert len(results) == 3 and all(sf.info(str(p)).frames > 1000 for p in results)
        assert tts.restarts == 1
        assert tts.pid != pids[0]  # a new engine process serves after the restart
    finally:
        tts.close()


def test_timeout_scales_with_the_text():
    tts = WatchdogTts(base_timeout_s=2.0, per_char_s=0.05)
    try:
        assert tts.timeout_for("x" * 100) == tts.timeout_for("") + 5.0
    finally:
        tts.close()


def test_an_engine_that_stays_frozen_fails_the_reply_only(tmp_path):
    """Every engine process is frozen from outside as soon as it appears (a freezer thread watching
    the worker's pid): the reply fails with a clear error after one restart; once the fault is gone
    the next reply is spoken."""
    tts = WatchdogTts(base_timeout_s=1.0, per_char_s=0.0, start_timeout_s=5.0)
    stop = threading.Event()
    frozen: set[int] = set()

    def freezer():
        while not stop.is_set():
            pid = tts.pid
            if pid and pid not in frozen:
                try:
                    os.kill(pid, signal.SIGSTOP)
                    frozen.add(pid)
                except ProcessLookupError:
                    pass
            stop.wait(0.01)

    f = threading.Thread(target=freezer)
    f.start()
    try:
        while not frozen:  # the first engine is frozen before the request
            stop.wait(0.01)
        try:
            tts.synthesize("hello", tmp_path / "a.wav")
            raised = None
        except Exception as e:
            raised = e
        stop.set()
        f.join()
        # the restarted engine is frozen too: either while it starts or on the retried request
        assert isinstance(raised, TtsError)
        assert "hung twice" in str(raised) or "did not start" in str(raised)
        assert len(frozen) >= 2 and tts.restarts >= 1
        # the fault is gone: the next reply is spoken. The short budgets above only make the frozen
        # engines fail fast; a healthy start on a busy machine gets the default budgets.
        tts.base_timeout_s, tts.start_timeout_s = 5.0, 30.0
        assert tts.synthesize("hello again", tmp_path / "b.wav").exists()  # listening resumes
    finally:
        stop.set()
        tts.close()


def test_a_speech_engine_that_dies_at_start_is_a_tts_error_naming_it(tmp_path, monkeypatch):
    """The worker's interpreter ends before it says a word (here: a sitecustomize that exits with
    255, as an interpreter the service user may not run does): a TtsError with the exit code."""
    (tmp_path / "sitecustomize.py").write_text("import os\nos._exit(255)\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    with pytest.raises(TtsError, match=r"ended at start \(exit code 255\)"):
        tts = WatchdogTts(start_timeout_s=30.0)  # the engine starts here
        tts.synthesize("hello", tmp_path / "x.wav")


@pytest.mark.parametrize("start_timeout_s, starts", [(1.0, False), (120.0, True)])
def test_the_start_budget_is_tts_start_timeout_s(tmp_path, monkeypatch, start_timeout_s, starts):
    """A worker that takes ~4 s to start (a sitecustomize that sleeps, as an emulated or cold board's
    imports do) is refused within a 1 s ``tts.start_timeout_s`` and speaks within 120 s."""
    from edge.config import load_settings
    from edge.stages.tts.engine import create

    (tmp_path / "sitecustomize.py").write_text("import time\ntime.sleep(4)\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    cfg = tmp_path / "edge.yaml"
    cfg.write_text(f"board: x86-dev\ntts: {{start_timeout_s: {start_timeout_s}}}\n")
    settings = load_settings(cfg)
    assert settings.tts.start_timeout_s == start_timeout_s
    if not starts:
        with pytest.raises(TtsError, match=r"did not start within 1.0 s"):
            create(settings.tts)
        return
    tts = create(settings.tts)
    try:
        wav = tts.synthesize("hello", tmp_path / "x.wav")
        assert sf.info(str(wav)).frames > 0
    finally:
        tts.close()


def test_the_speech_engine_prints_nothing_on_the_callers_stdout(tmp_path, capfd):
    """The engine's process shares the caller's stdout, where `edge ask --json` and `edge bench --json`
    write JSON; pyttsx3's "Audio saved to …" (printed from espeak's callback thread) must not land there."""
    tts = WatchdogTts()
    try:
        for i in range(6):
            assert tts.synthesize(f"Logged {i} fuses used. Now {60 - i} in bin 30.", tmp_path / f"r{i}.wav").exists()
    finally:
        tts.close()
    out, err = capfd.readouterr()
    assert out == "", out
