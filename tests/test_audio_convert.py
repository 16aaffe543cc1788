"""drivers.audio: any PCM WAV / stream → 16 kHz mono int16 frames of 1280 samples.

Field cases C01 (sample rate / format) and C02 (chunk size) from shared/cases/README.md.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from drivers.audio import (FRAME_SAMPLES, SAMPLE_RATE, AudioFormatError, FrameConverter, read_wav,
                           to_float32, wav_frames)

REPO = Path(__file__).resolve().parents[1]
AUDIO = Path(__file__).resolve().parents[2] / "shared" / "audio"
SESSION_16K = AUDIO / "sessions" / "query_m8_bolts.wav"
SESSION_48K_24BIT = AUDIO / "formats" / "query_48k_stereo_24bit.wav"

pytestmark = pytest.mark.skipif(not AUDIO.is_dir(), reason=f"shared recordings {AUDIO} are missing")

CHUNKS = (1000, 1024, 1280, 4000)


def convert_in_chunks(samples: np.ndarray, rate: int, chunk: int) -> list[np.ndarray]:
    """Feed ``samples`` ``(n, channels)`` to a fresh converter ``chunk`` samples at a time."""
    conv = FrameConverter(rate, samples.shape[1])
    frames: list[np.ndarray] = []
    for i in range(0, len(samples), chunk):
        frames += conv.push(samples[i:i + chunk])
    frames += conv.flush()
    return frames


def assert_pipeline_frames(frames: list[np.ndarray]) -> None:
    assert frames, "no frames"
    for i, f in enumerate(frames):
        assert isinstance(f, np.ndarray), f"frame {i} is a {type(f).__name__}"
        assert f.shape == (FRAME_SAMPLES,), f"frame {i} has shape {f.shape}"
        assert f.dtype == np.int16, f"frame {i} has dtype {f.dtype}"


# --------------------------------------------------------------------------------------------
# (a) chunk size does not change a single sample (C02)


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
        for i, (a, b) in enumerate(zip(frames, whole)):
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


def test_chunk_with_wrong_channel_count_is_refused():
    conv = FrameConverter(48000, 2)
    with pytest.raises(ValueError, match="channels"):
        conv.push(np.zeros((480, 3), dtype=np.int16))


# --------------------------------------------------------------------------------------------
# (b) every format and rate gives the same 16 kHz frames (C01)

DURATION_S = 2.0
RATES = (8000, 22050, 44100, 48000)
SUBTYPES = ("PCM_U8", "PCM_16", "PCM_24", "PCM_32", "FLOAT")


def source_signal(t: np.ndarray) -> np.ndarray:
    """A band-limited test signal (all components < 4 kHz, so even 8 kHz holds it exactly),
    peak < 0.55: an amplitude-modulated 300 Hz tone plus 1234 Hz and 2900 Hz tones."""
    return (0.3 * np.sin(2 * np.pi * 300 * t) * (0.6 + 0.4 * np.sin(2 * np.pi * 3 * t))
            + 0.15 * np.sin(2 * np.pi * 1234 * t) + 0.05 * np.sin(2 * np.pi * 2900 * t + 1.0))


def side_signal(t: np.ndarray) -> np.ndarray:
    """Left-minus-right difference; averaging the channels must cancel it."""
    return 0.25 * np.sin(2 * np.pi * 700 * t)


def reference_16k() -> np.ndarray:
    t = np.arange(int(SAMPLE_RATE * DURATION_S)) / SAMPLE_RATE
    return source_signal(t)


def compare(frames: list[np.ndarray], ref: np.ndarray) -> tuple[float, float]:
    """(correlation, RMS error relative to the reference RMS) over the common length."""
    x = np.concatenate(frames).astype(np.float64) / 32767.0
    n = min(len(x), len(ref))
    corr = float(np.corrcoef(x[:n], ref[:n])[0, 1])
    rel_rms = float(np.sqrt(np.mean((x[:n] - ref[:n]) ** 2)) / np.sqrt(np.mean(ref[:n] ** 2)))
    return corr, rel_rms


@pytest.fixture(scope="module")
def ref16k() -> tuple[np.ndarray, int]:
    """The 16 kHz original and the number of frames it gives."""
    ref = reference_16k()
    conv = FrameConverter(SAMPLE_RATE, 1)
    frames = conv.push(ref.astype(np.float32)) + conv.flush()
    return ref, len(frames)


@pytest.mark.parametrize("channels", [1, 2], ids=["mono", "stereo"])
@pytest.mark.parametrize("subtype", SUBTYPES)
@pytest.mark.parametrize("rate", RATES)
def test_wav_formats_convert_to_the_16k_original(tmp_path, ref16k, rate, subtype, channels):
    ref, ref_frames = ref16k
    t = np.arange(int(rate * DURATION_S)) / rate
    s = source_signal(t)
    data = s if channels == 1 else np.stack([s + side_signal(t), s - side_signal(t)], axis=1)
    path = tmp_path / f"src_{rate}_{subtype}_{channels}ch.wav"
    sf.write(str(path), data, rate, subtype=subtype)
    info = sf.info(str(path))
    assert (info.samplerate, info.channels, info.subtype) == (rate, channels, subtype)

    frames = list(wav_frames(path))
    assert_pipeline_frames(frames)
    assert abs(len(frames) - ref_frames) <= 1, f"{len(frames)} frames, 16 kHz original gives {ref_frames}"
    corr, rel_rms = compare(frames, ref)
    # 8-bit quantisation noise is ~2 % of this signal's RMS; every deeper format is < 0.5 %
    max_rms = 0.05 if subtype == "PCM_U8" else 0.01
    assert corr > 0.99, f"correlation with the 16 kHz original {corr:.4f}"
    assert rel_rms < max_rms, f"RMS error {rel_rms:.4f} of the signal RMS"


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "float32", "float64"])
def test_native_dtypes_through_frame_converter(ref16k, dtype):
    """What a sound card hands over (any PCM dtype, 44.1 kHz stereo) converts like the original."""
    ref, ref_frames = ref16k
    rate = 44100
    t = np.arange(int(rate * DURATION_S)) / rate
    x = np.stack([source_signal(t) + side_signal(t), source_signal(t) - side_signal(t)], axis=1)
    if dtype == "uint8":
        pcm = np.clip(np.round(x * 128 + 128), 0, 255).astype(np.uint8)
    elif dtype.startswith("int"):
        full = -np.iinfo(dtype).min
        pcm = np.clip(np.round(x * full), -full, full - 1).astype(dtype)
    else:
        pcm = x.astype(dtype)
    frames = convert_in_chunks(pcm, rate, 1024)
    assert_pipeline_frames(frames)
    assert abs(len(frames) - ref_frames) <= 1
    corr, rel_rms = compare(frames, ref)
    assert corr > 0.99, f"{dtype}: correlation {corr:.4f}"
    assert rel_rms < (0.05 if dtype in ("uint8", "int8") else 0.01), f"{dtype}: RMS error {rel_rms:.4f}"


def test_to_float32_scales_each_pcm_type_to_unit_range():
    assert to_float32(np.array([0, 128, 255], dtype=np.uint8)).tolist() == [-1.0, 0.0, 127 / 128]
    assert to_float32(np.array([-128, 0, 64], dtype=np.int8)).tolist() == [-1.0, 0.0, 0.5]
    assert to_float32(np.array([-32768, 0, 16384], dtype=np.int16)).tolist() == [-1.0, 0.0, 0.5]
    assert to_float32(np.array([-(2**31), 0, 2**30], dtype=np.int32)).tolist() == [-1.0, 0.0, 0.5]
    f = to_float32(np.array([0.25, -0.5], dtype=np.float64))
    assert f.dtype == np.float32 and f.tolist() == [0.25, -0.5]
    with pytest.raises(TypeError):
        to_float32(np.array(["a"]))


def test_read_wav_gives_float_samples_and_rate():
    data, rate = read_wav(SESSION_48K_24BIT)
    assert rate == 48000
    assert data.dtype == np.float32 and data.ndim == 2 and data.shape[1] == 2
    assert len(data) == sf.info(str(SESSION_48K_24BIT)).frames
    assert 0.01 < float(np.abs(data).max()) <= 1.0


# --------------------------------------------------------------------------------------------
# (c) unreadable files name themselves


def _bad_files(tmp_path: Path) -> dict[str, Path]:
    text = tmp_path / "meeting_notes.wav"
    text.write_text("this is a text file, not a recording\n", encoding="utf-8")
    empty = tmp_path / "zero_bytes.wav"
    empty.write_bytes(b"")
    truncated = tmp_path / "cut_header.wav"
    truncated.write_bytes((AUDIO / "real" / "alexa_test.wav").read_bytes()[:30])
    return {"missing": tmp_path / "no_such_recording.wav", "text": text, "empty": empty, "truncated": truncated}


@pytest.mark.parametrize("kind", ["missing", "text", "empty", "truncated"])
@pytest.mark.parametrize("reader", ["read_wav", "wav_frames"])
def test_unreadable_file_raises_audio_format_error_naming_it(tmp_path, kind, reader):
    path = _bad_files(tmp_path)[kind]
    with pytest.raises(AudioFormatError) as ei:
        if reader == "read_wav":
            read_wav(path)
        else:
            next(iter(wav_frames(path)))  # a generator: the check runs on the first frame asked for
    assert path.name in str(ei.value)
    assert isinstance(ei.value, ValueError)  # callers that catch ValueError still catch it


# --------------------------------------------------------------------------------------------
# (d) impossible stream parameters


@pytest.mark.parametrize("rate, channels", [(0, 1), (-16000, 1), (None, 1), (16000, 0), (16000, -2)])
def test_non_positive_rate_or_channels_raise_value_error(rate, channels):
    with pytest.raises(ValueError) as ei:
        FrameConverter(rate, channels)
    assert ("rate" in str(ei.value)) if channels == 1 else ("channels" in str(ei.value))


_FIRST_FRAME = """
import sys
from drivers.audio import wav_frames
try:
    next(iter(wav_frames(sys.argv[1], chunk=int(sys.argv[2]))))
except ValueError as e:
    print(f"ValueError: {e}")
    sys.exit(0)
print("no error")
sys.exit(4)
"""


@pytest.mark.parametrize("chunk", [0, -5])
def test_wav_frames_refuses_a_chunk_that_is_not_positive(chunk):
    """``wav_frames(path, chunk=0)`` must raise ValueError. It runs in a child process because today
    it never returns: ``SoundFile.blocks(blocksize=0)`` reads 0 frames per pass and loops forever
    (100 % CPU, no frame, no error). The time limit only guards against that hang."""
    try:
        r = subprocess.run([sys.executable, "-c", _FIRST_FRAME, str(SESSION_16K), str(chunk)], cwd=REPO,
                           capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail(f"wav_frames(chunk={chunk}) hung instead of raising ValueError")
    assert r.returncode == 0, f"rc={r.returncode}\n{r.stdout}\n{r.stderr}"
    assert r.stdout.startswith("ValueError")
