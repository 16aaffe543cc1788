"""The Wyoming asr service through the recognizer worker (C16 on the product path): Home Assistant's
requests reach the recognizer in a worker process (``asr.worker.wyoming: process``, the default), the
inventory's biasing goes through it, a leaking worker is recycled between requests with no request
dropped and the transcripts unchanged, and 4 concurrent clients share one worker.

Driven by the wyoming package's own client on the real stages (whisper tiny.en, the shared session
recordings, the box's own voice for a made-up item name); the leak is tests/c16_leak.py's."""
from __future__ import annotations

import asyncio
import os
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient

from drivers.audio import SAMPLE_RATE, wav_frames
from edge.config import WyomingSettings
from edge.governor.memwatch import MemoryWatch
from edge.service.wyoming.box import Box
from edge.service.wyoming.server import BackgroundServer
from edge.stages.asr.whisper import WhisperRecognizer
from edge.stages.asr.worker import AsrWorker
from tests.c16_leak import LEAK_BYTES, leaky
from tests.helpers import EXPECTED, INVENTORY, SESSIONS, csv_store

TIMEOUT_S = 180  # bound on every exchange; generous for two shared cores, never asserted on
CHUNK = 1024  # samples per audio-chunk, as Home Assistant sends
NAME = "Quorvex"  # an item name the recognizer cannot know without the inventory's biasing
SENTENCE = f"How many {NAME} brackets are in bin four?"
SESSIONS4 = ["query_m8_bolts", "log_gloves_received", "log_drill_bits_used", "log_washers_numbers"]


def run(coro, timeout_s: float = TIMEOUT_S):
    return asyncio.run(asyncio.wait_for(coro, timeout_s))


def request(samples: np.ndarray, rate: int = SAMPLE_RATE) -> list:
    return ([Transcribe(), AudioStart(rate, 2, 1)]
            + [AudioChunk(rate, 2, 1, samples[i:i + CHUNK].astype("<i2").tobytes()) for i in range(0, len(samples), CHUNK)]
            + [AudioStop()])


async def transcribe(port: int, events: list) -> str:
    """One Wyoming asr request on its own connection; the transcript (an error event fails the test)."""
    async with AsyncTcpClient("127.0.0.1", port, connect_timeout=10, read_timeout=TIMEOUT_S) as c:
        for e in events:
            await c.write_event(e.event())
        while (e := await c.read_event()) is not None:
            assert e.type != "error", e.data
            if Transcript.is_type(e.type):
                return Transcript.from_event(e).text
    raise AssertionError("the connection closed without a transcript")


def as_16k(samples: np.ndarray, rate: int, folder: Path) -> np.ndarray:
    """``samples`` at ``rate`` Hz as the pipeline hears them (through a WAV, as the loop reads a file)."""
    p = folder / "said.wav"
    sf.write(str(p), samples, rate, subtype="PCM_16")
    return np.concatenate(list(wav_frames(p)))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def settings(rig_grammar):
    s = rig_grammar[0]
    assert s.asr.worker.wyoming == "process" and s.asr.worker.loop == "inline"  # the defaults under test
    return s.model_copy(update={"wyoming": WyomingSettings(uri="tcp://127.0.0.1:0", frame_timeout_s=5.0)})


@pytest.fixture
def quorvex_store(rig_grammar, tmp_path):
    """The shared inventory plus a Quorvex bracket, behind the rig's stages for this test."""
    stages = rig_grammar[1]
    csv = INVENTORY.read_text() + f"QRV-4,{NAME} bracket,bin 4,12,pcs,{NAME.lower()} brackets\n"
    with csv_store(tmp_path, csv) as store:
        stages.store = store  # the rig gets its own back after the test (conftest)
        yield store


def test_a_leaking_worker_behind_wyoming_is_recycled_with_no_request_dropped(rig_grammar, settings, quorvex_store,
                                                                            tmp_path):
    stages = rig_grammar[1]
    # 16 KiB kept per call; a short window and a small total growth so it shows in a few calls
    worker = AsrWorker(settings.asr, watch=MemoryWatch(window=9, warmup=3, min_growth_bytes=8 * LEAK_BYTES), target=leaky)
    box = Box(settings, stages, asr=worker)
    bg = BackgroundServer(box, settings).start()
    try:
        samples, rate = run(box.synthesize(SENTENCE))
        plain = WhisperRecognizer(settings.asr.whisper.model).transcribe(as_16k(samples, rate, tmp_path)).text
        assert NAME.lower() not in plain.lower(), plain  # unbiased, the name is not heard
        first_pid, texts = worker.pid, []
        while worker.recycles == 0 and len(texts) < 30:
            texts.append(run(transcribe(bg.server.port, request(samples, rate))))
        assert worker.recycles == 1 and "a leak" in worker.reasons[0], (len(texts), worker.reasons)
        assert worker.pid != first_pid and not alive(first_pid)  # the old worker was gone before the new one
        for _ in range(2):  # the fresh worker: the same transcript, the inventory's biasing kept
            texts.append(run(transcribe(bg.server.port, request(samples, rate))))
        assert worker.recycles == 1 and worker.restarts == 0
        assert len(texts) == worker.calls  # every request answered by the worker: none dropped
        assert NAME.lower() in texts[0].lower() and set(texts) == {texts[0]}, texts
    finally:
        bg.stop()
        box.close()


def after_wake(stages, name: str) -> np.ndarray:
    """The session's audio after its wake word (what a satellite streams to the asr service)."""
    frames = list(wav_frames(SESSIONS / f"{name}.wav"))
    stages.wake.flush()
    try:
        at = next(i for i, f in enumerate(frames) if stages.wake.process(f))
    finally:
        stages.wake.flush()
    return np.concatenate(frames[at + 1:])


def test_four_concurrent_wyoming_clients_get_their_own_transcripts_from_one_worker(rig_grammar, settings,
                                                                                   inventory_store):
    stages = rig_grammar[1]
    stages.store = inventory_store
    box = Box(settings, stages)  # the defaults: a worker of its own beside the rig's inline recognizer
    assert box.worker is not None and box.asr is not stages.asr
    bg = BackgroundServer(box, settings).start()
    try:
        audio = {n: after_wake(stages, n) for n in SESSIONS4}
        pid = box.worker.pid

        async def together():
            return await asyncio.gather(*(transcribe(bg.server.port, request(audio[n])) for n in SESSIONS4))

        texts = run(together())
        for name, text in zip(SESSIONS4, texts, strict=True):  # each client its own utterance, understood
            intent = stages.understanding.understand(text)
            want = EXPECTED[name]
            assert intent is not None and (intent.intent, intent.sku) == (want["intent"], want["sku"]), (name, text)
        w = box.worker
        assert w.pid == pid and w.calls == 4 and w.recycles == 0 and w.restarts == 0  # one model instance
    finally:
        bg.stop()
        box.close()
    assert not alive(pid)  # closed with the box
