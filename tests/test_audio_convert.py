"""drivers.audio: any PCM WAV / stream → 16 kHz mono int16 frames of 1280 samples: sample types,
unreadable files, impossible stream parameters. Field cases C01 (sample rate / format) and C02
(chunk size) are in tests/test_c01_sample_rate.py and tests/test_c02_chunk_size.py.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from drivers.audio import AudioFormatError, FrameConverter, read_wav, to_float32, wav_frames

REPO = Path(__file__).resolve().parents[1]
AUDIO = Path(__file__).resolve().parents[2] / "shared" / "audio"
SESSION_16K = AUDIO / "sessions" / "query_m8_bolts.wav"
SESSION_48K_24BIT = AUDIO / "formats" / "query_48k_stereo_24bit.wav"

pytestmark = pytest.mark.skipif(not AUDIO.is_dir(), reason=f"shared recordings {AUDIO} are missing")

# Chunk sizes (C02) and rates/formats (C01) have their own case modules: tests/test_c02_chunk_size.py,
# tests/test_c01_sample_rate.py.


def test_chunk_with_wrong_channel_count_is_refused():
    conv = FrameConverter(48000, 2)
    with pytest.raises(ValueError, match="channels"):
        conv.push(np.zeros((480, 3), dtype=np.int16))


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
