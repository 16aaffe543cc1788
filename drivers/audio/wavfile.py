"""WAV files in and out, through libsndfile (the ``soundfile`` package).

Reads any PCM WAV: 8/16/24/32-bit integer or 32/64-bit float, any rate, any channel count,
including WAVE_FORMAT_EXTENSIBLE headers that Python's ``wave`` module rejects.
"""
from __future__ import annotations

import os
import struct
import wave
from pathlib import Path
from typing import Iterator

import numpy as np
import soundfile as sf

from drivers.audio.convert import SAMPLE_RATE, FrameConverter
from edge.errors import UserError


class AudioFormatError(UserError, ValueError):
    """An audio file that cannot be read as PCM; the message names the file and the fix."""


def _native(path: Path) -> bytes:
    """``path`` as the bytes the file system holds: soundfile encodes a str path with the file
    system encoding, which is ASCII under an ASCII-only locale (LANG=C), so "zählung.wav" failed
    there as "not a readable audio file"; the bytes Python decoded the name from always work."""
    return os.fsencode(path)


def _info(path: Path) -> sf._SoundFileInfo:
    if not path.exists():
        raise AudioFormatError(f"{path}: no such file; give a WAV recording with --input")
    if path.is_dir():
        raise AudioFormatError(f"{path}: is a directory, not a WAV file; give one recording with --input, "
                               f"e.g. {path / 'session.wav'}")
    try:
        info = sf.info(_native(path))
    except Exception as e:  # libsndfile's message says what is wrong with the header
        if _header_rate(path) == 0:  # libsndfile only says "SF_INFO struct incomplete" for this
            raise AudioFormatError(
                f"{path}: the WAV header gives a sample rate of 0 Hz, so the recording's rate cannot be "
                f"known; export it again from the recording tool, with its real rate in the header") from e
        raise AudioFormatError(
            f"{path}: not a readable audio file ({e}); convert it to PCM WAV, e.g. "
            f"'sox {path.name} -r 16000 -c 1 -b 16 out.wav'") from e
    if info.samplerate <= 0:
        raise AudioFormatError(f"{path}: the header gives no sample rate; re-export it as PCM WAV")
    return info


def _header_rate(path: Path) -> int | None:
    """The sample rate (Hz) in a RIFF/WAVE ``fmt`` chunk as Python's :mod:`wave` reads it; None when
    the header cannot be read that way."""
    try:
        with wave.open(str(path), "rb") as w:
            return int(w.getframerate())
    except Exception:
        return None


def length_warning(path: str | Path) -> str | None:
    """What a RIFF/WAVE file's header promises that the file does not hold, in words; None when
    the ``data`` chunk is whole (or the file is not a plain RIFF WAV, e.g. RF64 or another format).

    A recorder killed mid-recording, a copy cut short or a header written before the recording
    ended all leave a ``data`` chunk shorter than its header says; libsndfile then reads what is
    there without a word, so this names the seconds and bytes missing.
    """
    path = Path(path)
    try:
        with path.open("rb") as f:
            head = f.read(12)
            if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
                return None
            rate = block = 0
            while True:
                chunk = f.read(8)
                if len(chunk) < 8:
                    return f"{path}: no 'data' chunk: the file ends after {f.tell()} bytes of header"
                cid, size = chunk[:4], struct.unpack("<I", chunk[4:])[0]
                if cid == b"fmt " and 16 <= size <= 4096:
                    fmt = f.read(size + (size & 1))
                    rate, block = struct.unpack("<I", fmt[4:8])[0], struct.unpack("<H", fmt[12:14])[0]
                    continue
                if cid == b"data":
                    start = f.tell()
                    break
                f.seek(size + (size & 1), 1)
        held = path.stat().st_size - start
    except OSError:
        return None
    if size <= held:
        return None

    def secs(n: int) -> str:
        return f"{n / (rate * block):.2f} s" if rate and block else f"{n} bytes"

    partial = f"; the last {held % block} bytes are half a sample frame and are dropped" if block and held % block else ""
    return (f"{path}: the header promises {secs(size)} of audio ({size} bytes) but the file holds {secs(held)} "
            f"({held} bytes): {secs(size - held)} ({size - held} bytes) missing, cut short or a recording that was "
            f"not closed{partial}; processing the {secs(held - held % block if block else held)} that are there")


def read_wav(path: str | Path) -> tuple[np.ndarray, int]:
    """Whole file → ``(samples, rate)``: samples ``(n, channels)`` float32 in [-1, 1], rate in Hz.

    Raises:
        AudioFormatError: missing file, unreadable header or no sample rate.
    """
    path = Path(path)
    info = _info(path)
    data, rate = sf.read(_native(path), dtype="float32", always_2d=True)
    return data, int(rate or info.samplerate)


def wav_frames(path: str | Path, chunk: int = 4000) -> Iterator[np.ndarray]:
    """Stream a WAV file as pipeline frames: 16 kHz mono int16 ``(1280,)``.

    The file is read in chunks of ``chunk`` input samples (any size works: the converter carries
    the remainder), like a sound card delivering periods.

    Raises:
        AudioFormatError: see :func:`read_wav`.
        ValueError: ``chunk`` < 1.
    """
    if int(chunk) < 1:
        raise ValueError(f"chunk must be >= 1 input samples, got {chunk!r}")
    path = Path(path)
    info = _info(path)
    conv = FrameConverter(info.samplerate, info.channels)
    with sf.SoundFile(_native(path)) as f:
        for block in f.blocks(blocksize=chunk, dtype="float32", always_2d=True):
            yield from conv.push(block)
    yield from conv.flush()


def write_wav(path: str | Path, samples: np.ndarray, rate: int = SAMPLE_RATE) -> Path:
    """Write int16 or float samples ``(n,)`` / ``(n, channels)`` at ``rate`` Hz as 16-bit PCM WAV."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(_native(path), samples, int(rate), subtype="PCM_16")
    return path
