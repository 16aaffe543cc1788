"""Conversion of any PCM stream to the pipeline frame format.

The pipeline's one frame format: 16 000 Hz, mono, int16, frames of 1280 samples (80 ms). 16 kHz and
80 ms are what openWakeWord's feature models expect (openWakeWord README: "frames of 1280 samples,
multiples of 80 ms"). Resampling uses soxr's streaming resampler so that a stream cut into chunks of
any size gives the same samples as the whole file converted at once (no sample is dropped or
duplicated between chunks).
"""
from __future__ import annotations

import numpy as np
import soxr

SAMPLE_RATE = 16_000  # Hz, openWakeWord / Silero VAD / Whisper input rate
FRAME_SAMPLES = 1280  # samples per frame = 80 ms at 16 kHz (openWakeWord frame size)


def to_float32(samples: np.ndarray) -> np.ndarray:
    """Integer or float PCM → float32 in [-1, 1], shape kept.

    int8/int16/int32 are scaled by their full range (a 24-bit WAV arrives as int32 from soundfile,
    left-justified, so the same scale applies); uint8 is offset by 128. Floats are passed through.

    Raises:
        TypeError: for a dtype that is not PCM.
    """
    a = np.asarray(samples)
    if a.dtype.kind == "f":
        return a.astype(np.float32, copy=False)
    if a.dtype == np.uint8:
        return ((a.astype(np.float32) - 128.0) / 128.0)
    if a.dtype.kind == "i":
        return a.astype(np.float32) / float(-np.iinfo(a.dtype).min)
    raise TypeError(f"unsupported PCM sample type {a.dtype}; expected int8/16/32, uint8 or float")


class FrameConverter:
    """Streaming converter: chunks of ``(n, channels)`` PCM at ``in_rate`` Hz → 16 kHz mono int16
    frames of exactly 1280 samples.

    Channels are averaged to mono, then resampled with soxr (quality ``HQ``); the remainder of a
    chunk that does not fill a frame is kept for the next call.

    Args:
        in_rate: input sample rate in Hz (> 0).
        channels: input channels (≥ 1).
    Raises:
        ValueError: for a rate or channel count that is not positive.
    """

    def __init__(self, in_rate: int, channels: int = 1):
        if not in_rate or in_rate <= 0:
            raise ValueError(f"input sample rate must be a positive number of Hz, got {in_rate!r}")
        if channels < 1:
            raise ValueError(f"input channels must be >= 1, got {channels!r}")
        self.in_rate = int(in_rate)
        self.channels = int(channels)
        self._resampler = None if self.in_rate == SAMPLE_RATE else soxr.ResampleStream(
            self.in_rate, SAMPLE_RATE, 1, dtype="float32", quality="HQ")
        self._pending = np.zeros(0, dtype=np.int16)

    def _mono16k(self, chunk: np.ndarray, last: bool) -> np.ndarray:
        x = to_float32(chunk)
        if x.ndim == 2:
            if x.shape[1] != self.channels:
                raise ValueError(f"chunk has {x.shape[1]} channels, converter was built for {self.channels}")
            x = x.mean(axis=1)
        elif self.channels != 1:
            # interleaved 1-D input from a device buffer
            x = x.reshape(-1, self.channels).mean(axis=1)
        if self._resampler is not None:
            x = self._resampler.resample_chunk(np.ascontiguousarray(x, dtype=np.float32), last=last)
        return np.clip(np.round(x * 32767.0), -32768, 32767).astype(np.int16)

    def push(self, chunk: np.ndarray) -> list[np.ndarray]:
        """Feed one chunk (``(n,)`` or ``(n, channels)``; any PCM dtype); returns the whole
        frames now available, each ``(1280,)`` int16."""
        return self._frames(self._mono16k(chunk, last=False))

    def flush(self) -> list[np.ndarray]:
        """End of stream: drain the resampler and zero-pad the last partial frame."""
        tail = self._mono16k(np.zeros((0, self.channels) if self.channels > 1 else 0, dtype=np.float32), last=True)
        out = self._frames(tail)
        if len(self._pending):
            pad = np.zeros(FRAME_SAMPLES - len(self._pending), dtype=np.int16)
            out.append(np.concatenate([self._pending, pad]))
            self._pending = np.zeros(0, dtype=np.int16)
        return out

    def _frames(self, x: np.ndarray) -> list[np.ndarray]:
        buf = np.concatenate([self._pending, x]) if len(self._pending) else x
        n = len(buf) // FRAME_SAMPLES
        frames = [buf[i * FRAME_SAMPLES:(i + 1) * FRAME_SAMPLES].copy() for i in range(n)]
        self._pending = buf[n * FRAME_SAMPLES:].copy()
        return frames
