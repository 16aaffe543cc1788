"""Speaker playback through PortAudio (the ``pyaudio`` package, opened by :mod:`drivers.audio.devices`).

Samples are written as int16 at their own rate; a device that refuses that rate gets them resampled
(soxr) to its default rate.
"""
from __future__ import annotations

import contextlib
import threading
from pathlib import Path

import numpy as np
import soxr

from drivers.audio.convert import to_float32
from drivers.audio.devices import (
    FIX_NO_OUTPUT,
    FRAMES_PER_BUFFER,
    AudioDeviceError,
    describe,
    library_messages,
    open_portaudio,
    resolve_device,
    stderr_captured,
)
from drivers.audio.wavfile import read_wav


class Playback:
    """Blocking playback on the default (or a named/indexed) output device.

    Samples are written as int16 at their own rate; if the device refuses that rate they are
    resampled (soxr) to the device's default rate. More channels than the device has are averaged
    to mono.

    Args:
        device: ``None`` = system default output, an ``int`` PortAudio index, or a ``str`` (exact
            name, else case-insensitive substring).
    Raises:
        AudioDeviceError: no output device, or it refuses to open.
    """

    def __init__(self, device: int | str | None = None):
        self._spec = device
        self._pyaudio, self._pa, self._noise = open_portaudio()
        try:
            self._info = resolve_device(self._pa, device, "output")
        except BaseException:
            self._pa.terminate()
            raise
        self.device_index = int(self._info["index"])
        self.device_name = str(self._info["name"])
        self._closed = False

    def play_wav(self, path: str | Path, stop: threading.Event | None = None) -> bool:
        """Play a WAV (any PCM format that :func:`~drivers.audio.wavfile.read_wav` reads) to the end
        or until ``stop`` is set; False when stopped early."""
        samples, rate = read_wav(path)
        return self.play(samples, rate, stop)

    def play(self, samples: np.ndarray, rate: int, stop: threading.Event | None = None) -> bool:
        """Play ``(n,)`` or ``(n, channels)`` PCM (int or float) at ``rate`` Hz; returns when the
        device has played it (the stream is drained before it is closed), or as soon as ``stop``
        is set (what is still buffered is discarded: Pa_CloseStream on an active stream aborts it).
        Returns False when stopped early.

        Raises:
            AudioDeviceError: the playback is closed, or the device refuses to open a stream.
        """
        if self._closed:
            raise AudioDeviceError("Playback is closed")
        pcm, pcm_rate = self._pcm(samples, int(rate))
        with stderr_captured() as err:
            try:
                stream = self._pa.open(format=self._pyaudio.paInt16, channels=pcm.shape[1], rate=pcm_rate,
                                       output=True, output_device_index=self.device_index,
                                       frames_per_buffer=FRAMES_PER_BUFFER)
                open_error = None
            except Exception as e:
                open_error = e
        if open_error is not None:
            raise AudioDeviceError(
                f"cannot open playback {describe(self._info)} at {pcm_rate} Hz x {pcm.shape[1]} ch "
                f"({open_error}){library_messages(self._noise + ''.join(err))}; {FIX_NO_OUTPUT}") from open_error
        try:
            step = FRAMES_PER_BUFFER * 4
            for i in range(0, len(pcm), step):
                if stop is not None and stop.is_set():
                    return False  # close() below aborts the stream
                block = pcm[i:i + step]
                stream.write(block.tobytes(), num_frames=len(block), exception_on_underflow=False)
            stream.stop_stream()  # Pa_StopStream plays out what is still buffered
            return True
        finally:
            stream.close()

    def _pcm(self, samples: np.ndarray, rate: int) -> tuple[np.ndarray, int]:
        """``(n, channels)`` int16 the device takes, and its rate in Hz."""
        x = to_float32(np.asarray(samples))
        if x.ndim == 1:
            x = x[:, None]
        if x.shape[1] > int(self._info["maxOutputChannels"]):
            x = x.mean(axis=1, keepdims=True)
        pcm_rate = rate
        if not self._rate_ok(rate, x.shape[1]):
            pcm_rate = int(round(self._info["defaultSampleRate"]))
            x = soxr.resample(x, rate, pcm_rate, quality="HQ")
            x = x[:, None] if x.ndim == 1 else x
        return np.clip(np.round(x * 32767.0), -32768, 32767).astype(np.int16), pcm_rate

    def _rate_ok(self, rate: int, channels: int) -> bool:
        try:
            return bool(self._pa.is_format_supported(
                rate, output_device=self.device_index, output_channels=channels,
                output_format=self._pyaudio.paInt16))
        except ValueError:
            return False

    def reopen(self) -> None:
        """A new PortAudio instance and the device looked up again (after the device or the sound
        server went away: PortAudio lists devices only when it starts). The default output when the
        configured one is gone (it may come back under another name).

        Raises:
            AudioDeviceError: no output device now.
        """
        with contextlib.suppress(Exception):
            self._pa.terminate()
        self._pyaudio, self._pa, self._noise = open_portaudio()
        try:
            self._info = resolve_device(self._pa, self._spec, "output")
        except AudioDeviceError:
            self._info = resolve_device(self._pa, None, "output")
        self.device_index = int(self._info["index"])
        self.device_name = str(self._info["name"])
        self._closed = False

    def close(self) -> None:
        """Terminate this playback's PortAudio instance. Idempotent."""
        if not self._closed:
            self._closed = True
            with contextlib.suppress(Exception):
                self._pa.terminate()

    def __enter__(self) -> "Playback":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def play_wav(path: str | Path, device: int | str | None = None) -> None:
    """One-shot: play a WAV file on the default (or given) output device, blocking.

    Raises:
        AudioDeviceError: no output device, or it refuses to open.
        AudioFormatError: the file is not a readable WAV.
    """
    with Playback(device) as p:
        p.play_wav(path)
