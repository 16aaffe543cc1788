"""Whisper's encoder in a shorter window (``asr.whisper.window_s``): the window is used only when the
utterance leaves room in it, a transcript that loops is decoded again in the full 30 s, and a
command comes out as the full window hears it (real tiny.en model, espeak-ng speech)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from edge.stages.asr import vocabulary
from edge.stages.asr.whisper import FULL_WINDOW_S, SAMPLE_RATE, WhisperRecognizer, looped
from edge.stages.nlu.grammar import Grammar
from edge.stock.store import Store
from tests.helpers import INVENTORY
from tests.synth import silence, speech


@pytest.fixture(scope="module")
def items(tmp_path_factory):
    s = Store(tmp_path_factory.mktemp("inv") / "edge.db")
    s.import_csv(INVENTORY)
    yield s.items()
    s.close()


@pytest.fixture(scope="module")
def recognizers(items):
    """The same model in a 10 s and in the full window, biased toward the inventory as the loop does."""
    short, full = WhisperRecognizer("whisper-tiny-en", window_s=10), WhisperRecognizer("whisper-tiny-en")
    for r in (short, full):
        r.set_vocabulary(vocabulary(items))
    return short, full


@pytest.mark.parametrize("text", ["remove 4 safety glasses remove 4 safety glasses", "um um um",
                                  "How many fuses do we have? How many fuses do we have?"])
def test_a_transcript_that_repeats_itself_is_a_loop(text):
    assert looped(text)


@pytest.mark.parametrize("text", ["how many M8 bolts are in bin twelve", "we used three, no, two drill bits",
                                  "add twenty twenty washers", "bin 12 12", ""])
def test_a_command_as_said_is_not_a_loop(text):
    assert not looped(text)


def test_the_window_holds_the_utterance_with_room_to_spare_or_it_is_the_full_one(recognizers):
    short, full = recognizers
    assert short.window_for(5 * SAMPLE_RATE) == 10.0 and short.window_for(7 * SAMPLE_RATE) == 10.0
    assert short.window_for(int(7.1 * SAMPLE_RATE)) == FULL_WINDOW_S  # less than 3 s of the window left
    assert full.window_for(2 * SAMPLE_RATE) == FULL_WINDOW_S


# not every command: the short window hears some differently (espeak's "how many M8 bolts are in bin
# twelve" as "How many, I made, m old, sowing bin 12"; bench/endpointing.py counts the intents)
@pytest.mark.parametrize("command", ["how many fuses do we have", "we used three drill bits from drawer four",
                                     "do we have any safety goggles on shelf B"])
def test_a_command_in_the_short_window_means_what_it_means_in_the_full_one(recognizers, items, command):
    short, full = recognizers
    audio = np.concatenate([silence(0.3), speech(command), silence(0.64)])
    heard_short, heard_full = short.transcribe(audio).text, full.transcribe(audio).text
    grammar = Grammar(items)
    a, b = grammar.parse(heard_short), grammar.parse(heard_full)
    assert a is not None and b is not None, (heard_short, heard_full)
    assert (a.intent, a.sku, a.quantity, a.direction) == (b.intent, b.sku, b.quantity, b.direction)


def test_a_looping_short_window_decode_is_done_again_in_the_full_window(recognizers):
    short, full = recognizers
    said = speech("how many fuses do we have")
    audio = np.concatenate([silence(0.3)] + [said, silence(0.3)] * 2 + [silence(0.34)])  # said twice
    assert short.window_for(len(audio)) == 10.0
    before = short.window_fallbacks
    heard = short.transcribe(audio).text
    assert short.window_fallbacks == before + 1  # the short window's transcript repeats itself
    assert heard == full.transcribe(audio).text  # what is kept is the full window's decode


def test_a_recheck_decodes_the_last_windowed_decode_in_the_full_window(recognizers):
    short, full = recognizers
    audio = np.concatenate([silence(0.3), speech("we used three drill bits from drawer four"), silence(0.64)])
    first = short.transcribe(audio)
    assert first.window_s == 10.0 and full.transcribe(audio).window_s is None
    before = short.rechecks
    again = short.recheck()
    assert again is not None and again.window_s is None and short.rechecks == before + 1
    assert again.text == full.transcribe(audio).text  # the same input as the full window's own decode
    assert short.recheck() is None and full.recheck() is None  # the last decode was in 30 s already


def test_a_rechecked_speculation_is_what_finish_returns(recognizers):
    short, _full = recognizers
    frames = np.concatenate([silence(0.3), speech("how many fuses do we have"), silence(0.2)])
    short.start()
    for i in range(0, len(frames) - 1279, 1280):
        short.accept(frames[i:i + 1280])
    spec = short.speculate()
    assert spec.window_s == 10.0
    again = short.recheck()
    assert again is not None and again.window_s is None and again.audio_ms == spec.audio_ms
    n = short.speculations
    assert short.finish() is again and short.speculations == n  # no third decode


def test_a_recheck_goes_through_the_recognizer_worker(recognizers, items):
    from edge.config import AsrSettings
    from edge.stages.asr.worker import AsrWorker

    _short, full = recognizers
    audio = np.concatenate([silence(0.3), speech("we used three drill bits from drawer four"), silence(0.64)])
    from edge.governor.memwatch import MemoryWatch

    # over its budget from the first utterance: the recycle waits until the recheck is done
    w = AsrWorker(AsrSettings(whisper={"window_s": 10.0}), watch=MemoryWatch(budget_bytes=1, warmup=0))
    try:
        pid = w.pid
        first = w.transcribe(audio, vocabulary(items))
        again = w.recheck()
        assert first.window_s == 10.0 and again is not None and again.window_s is None
        assert again.text == full.transcribe(audio).text
        assert w.pid == pid and w.recycles == 0  # the same child decoded it again
        w.set_partials(0, 0.0)  # the next call: now the worker is recycled
        assert w.recycles == 1 and w.pid != pid
    finally:
        w.close()


def test_partials_keep_to_their_share_of_the_wall_time_on_busy_cores():
    """Three busy processes on the one CPU this recognizer runs on: each partial re-decode takes
    far longer in wall time than in CPU time, and the next one waits for the wall time over the
    share (the audio keeps coming in real time whatever the CPU time was)."""
    cpu, mask = min(os.sched_getaffinity(0)), os.sched_getaffinity(0)
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(3)]
    try:
        for h in hogs:
            os.sched_setaffinity(h.pid, {cpu})
        os.sched_setaffinity(0, {cpu})  # this thread; the recognizer's threads are made from it
        r = WhisperRecognizer("whisper-tiny-en", threads=1)
        r.set_partials(80, 1.0)
        r.start()
        audio = np.concatenate([speech("how many M8 bolts are in bin twelve and how many fuses in bin thirty"),
                                silence(10.0)])[: 12 * SAMPLE_RATE]
        decodes = []  # (samples accepted when it ran, its wall ms, its CPU ms)
        for i in range(0, len(audio) - 1279, 1280):
            n, wall, cpu_ms = r.partials, r.partial_wall_ms, r.partial_cpu_ms
            r.accept(audio[i:i + 1280])
            if r.partials > n:
                decodes.append((i + 1280, r.partial_wall_ms - wall, r.partial_cpu_ms - cpu_ms))
    finally:
        os.sched_setaffinity(0, mask)
        for h in hogs:
            h.kill()
            h.wait()
    assert len(decodes) >= 2
    assert any(wall > 1.5 * cpu_ms for _, wall, cpu_ms in decodes)  # the cores were busy
    for (at, wall, cpu_ms), (after, _, _) in zip(decodes, decodes[1:], strict=False):
        assert after - at >= int(SAMPLE_RATE * max(wall, cpu_ms) / 1.0 / 1000), decodes
