"""Case C02 (shared/cases/README.md): the same clip fed in chunks of 1000, 1024, 1280 and 4000
samples gives identical wake detections and transcript for every chunk size (no sample dropped or
doubled between chunks).

Two levels: the frame converter (soxr's streaming resampler + the 1280-sample framer) gives
bit-identical frames for every chunk size, at 16 kHz and at a device-like 48 kHz stereo 24-bit,
also when a device period arrives as interleaved 1-D samples; and the real pipeline (stages built
once for the module, ``llm.engine: none``: the clip takes the grammar path) gives the same wake
detection (audio time, word and score), transcript and intent for every chunk size.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
import soundfile as sf

from drivers.audio import FRAME_SAMPLES, SAMPLE_RATE, FrameConverter, wav_frames
from edge.stock.store import Store
from tests.audio_helpers import assert_pipeline_frames, convert_in_chunks, turn_signature
from tests.helpers import AUDIO, INVENTORY, SESSIONS, of_type, run_session
from tests.test_c01_sample_rate import settings, stages  # noqa: F401  (fixtures)

SESSION_16K = SESSIONS / "query_m8_bolts.wav"
SESSION_48K_24BIT = AUDIO / "formats" / "query_48k_stereo_24bit.wav"
CHUNKS = (1000, 1024, 1280, 4000)

pytestmark = pytest.mark.skipif(not SESSION_16K.exists(), reason=f"shared recordings {AUDIO} are missing")


# ------------------------------------------------------------------------------------------------
# the converter: chunk size does not change a single sample

@pytest.mark.parametrize("path, dtype", [(SESSION_16K, "int16"), (SESSION_48K_24BIT, "int32")],
                         ids=["16k-mono-16bit", "48k-stereo-24bit"])
def test_chunk_size_gives_bit_identical_frames(path, dtype):
    samples, rate = sf.read(str(path), dtype=dtype, always_2d=True)
    whole = convert_in_chunks(samples, rate, len(samples))  # the whole file in one push
    assert_pipeline_frames(whole)
    # frames cover the whole clip: ceil(duration at 16 kHz / 1280), ±1 for the resampler's tail
    expected = int(np.ceil(len(samples) * SAMPLE_RATE / rate / FRAME_SAMPLES))
    assert abs(len(whole) - expected) <= 1, (len(whole), expected)
    assert np.abs(np.concatenate(whole).astype(np.int32)).max() > 1000, "converted clip is silent"

    for chunk in CHUNKS:
        frames = convert_in_chunks(samples, rate, chunk)
        assert_pipeline_frames(frames)
        assert len(frames) == len(whole), f"chunk {chunk}: {len(frames)} frames, whole file {len(whole)}"
        for i, (a, b) in enumerate(zip(frames, whole, strict=True)):
            assert np.array_equal(a, b), f"chunk {chunk}: frame {i} differs from the whole-file conversion"


@pytest.mark.parametrize("path", [SESSION_16K, SESSION_48K_24BIT], ids=["16k-mono-16bit", "48k-stereo-24bit"])
def test_wav_frames_chunk_size_gives_bit_identical_frames(path):
    reference = np.stack(list(wav_frames(path, chunk=CHUNKS[0])))
    assert reference.shape[1:] == (FRAME_SAMPLES,) and reference.dtype == np.int16
    for chunk in CHUNKS[1:]:
        frames = list(wav_frames(path, chunk=chunk))
        assert_pipeline_frames(frames)
        assert np.array_equal(np.stack(frames), reference), f"wav_frames(chunk={chunk}) differs from chunk={CHUNKS[0]}"


def test_interleaved_device_buffer_equals_2d_chunks():
    """A device period arrives as interleaved 1-D samples; it must give what ``(n, 2)`` gives."""
    samples, rate = sf.read(str(SESSION_48K_24BIT), dtype="int32", always_2d=True)
    samples = samples[: rate]  # 1 s is enough
    as_2d = convert_in_chunks(samples, rate, 1024)
    conv = FrameConverter(rate, 2)
    interleaved: list[np.ndarray] = []
    for i in range(0, len(samples), 1024):
        interleaved += conv.push(samples[i:i + 1024].reshape(-1))
    interleaved += conv.flush()
    assert len(interleaved) == len(as_2d)
    assert np.array_equal(np.stack(interleaved), np.stack(as_2d))


def test_uneven_chunks_give_the_same_frames():
    """Chunk sizes that change from one chunk to the next (as a callback with a variable period
    delivers them) still give the whole-file frames."""
    samples, rate = sf.read(str(SESSION_48K_24BIT), dtype="int32", always_2d=True)
    whole = convert_in_chunks(samples, rate, len(samples))
    conv, frames, i = FrameConverter(rate, 2), [], 0
    for size in np.random.default_rng(7).integers(1, 5000, size=len(samples)):
        if i >= len(samples):
            break
        frames += conv.push(samples[i:i + size])
        i += size
    frames += conv.flush()
    assert len(frames) == len(whole)
    assert np.array_equal(np.stack(frames), np.stack(whole))


# ------------------------------------------------------------------------------------------------
# the pipeline: the same turn for every chunk size

# settings, stages: the shared grammar-only rig, as in test_c01 (imported above)


@pytest.fixture(scope="module")
def turns(stages, settings, tmp_path_factory):
    """chunk size → the events of the session, each from a fresh store."""
    out = {}
    for chunk in CHUNKS:
        d = tmp_path_factory.mktemp(f"chunk{chunk}")
        store = Store(d / "edge.db")
        store.import_csv(INVENTORY)
        stages.store = store
        out[chunk] = run_session(stages, settings, SESSION_16K, d, chunk=chunk)
        store.close()
    return out


@pytest.mark.parametrize("chunk", CHUNKS)
def test_chunk_size_does_not_change_the_turn(chunk, turns):
    events = turns[chunk]
    assert not of_type(events, "error"), events
    (w,), (t,), (i,) = of_type(events, "wake"), of_type(events, "transcript"), of_type(events, "intent")
    assert (w.t_ms, w.wake_word) == (1200, "hey_mycroft")  # microWakeWord's (the rig's); openWakeWord's: 1280
    words = re.sub(r"[^a-z0-9 ]", "", t.text.lower()).split()
    assert words == "how many m8 bolts are in bin 12".split()
    assert (i.intent, i.slots["sku"]) == ("query_stock", "BLT-M8-30")
    # identical to every other chunk size: wake time, word and score, transcript, intent
    assert turn_signature(events) == turn_signature(turns[CHUNKS[-1]])
