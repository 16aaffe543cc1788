"""A stand-in capture device for tests of :class:`drivers.audio.capture.ResilientCapture`.

It behaves like a sound card behind :class:`drivers.audio.capture.Capture`: a clock thread hands
``frames_per_buffer`` samples at a time, paced at the device's rate, into a bounded ring buffer
(the oldest chunk dropped when full, counted in ``overflows``). The socket it hangs off
(:class:`Jack`) can be unplugged: the running capture's stream stops (its ``chunks()`` raises
:class:`DeviceLostError`, as PortAudio's stream does when ALSA reports the device gone) and opening
fails with :class:`AudioDeviceError` until it is plugged in again, possibly with another native
rate and channel count, or "deaf" (opens, but delivers nothing).
"""
from __future__ import annotations

import queue
import threading
import time

import numpy as np

from drivers.audio.devices import AudioDeviceError, DeviceLostError


class Jack:
    """Where the stand-in microphone is plugged in.

    Args:
        rate: native sample rate in Hz; channels: native channel count.
        source: ``(n, channels)`` int16 samples the device "hears", looped; silence when None.
        speed: how many times faster than real time the clock runs (1.0 = real time).
    """

    def __init__(self, rate: int, channels: int, source: np.ndarray | None = None, speed: float = 1.0):
        self.speed = speed
        self.opens = 0  # open() calls, successful or not
        self.live: FakeMic | None = None
        self.plug(rate, channels, source)

    def plug(self, rate: int, channels: int, source: np.ndarray | None = None, deaf_s: float = 0.0) -> None:
        """(Re)connect a device at ``rate`` Hz x ``channels``; ``deaf_s``: the next open succeeds but
        its stream sends nothing for that long (s)."""
        self.rate, self.channels, self.deaf_s = int(rate), int(channels), float(deaf_s)
        self.source = source if source is not None else np.zeros((rate, channels), dtype=np.int16)
        self.present = True

    def unplug(self) -> None:
        self.present = False
        if self.live is not None:
            self.live.stop()

    def open(self, frames_per_buffer: int = 1024, max_queued: int = 256) -> "FakeMic":
        """What ``Capture(...)`` does against this jack."""
        self.opens += 1
        if not self.present:
            raise AudioDeviceError("no capture device named 'fake-mic' (devices: none); plug it in")
        self.live = FakeMic(self, frames_per_buffer, max_queued)
        self.deaf_s = 0.0
        return self.live


class FakeMic:
    """One open stream of the stand-in device; the :class:`~drivers.audio.capture.Capture` interface."""

    def __init__(self, jack: Jack, frames_per_buffer: int, max_queued: int):
        self.rate, self.channels, self.device_name = jack.rate, jack.channels, "fake-mic"
        self.frames_per_buffer = frames_per_buffer
        self.overflows = self.xruns = self.overflow_stalls = 0
        self.delivered = 0  # chunks put into the ring buffer
        self._src, self._speed, self._deaf_s = jack.source, jack.speed, jack.deaf_s
        self._queue: queue.Queue = queue.Queue(maxsize=max_queued)
        self._running = True
        self._closed = False
        self._thread = threading.Thread(target=self._clock, name="fake-mic-clock", daemon=True)
        self._thread.start()

    def _clock(self) -> None:
        period = self.frames_per_buffer / self.rate / self._speed
        t = time.monotonic() + self._deaf_s
        pos = 0
        while self._running:
            t += period
            delay = t - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            if not self._running:
                return
            idx = (pos + np.arange(self.frames_per_buffer)) % len(self._src)
            pos += self.frames_per_buffer
            chunk = self._src[idx]
            while True:
                try:
                    self._queue.put_nowait(chunk)
                    self.delivered += 1
                    break
                except queue.Full:
                    try:
                        self._queue.get_nowait()
                        self.overflows += 1
                    except queue.Empty:
                        pass

    def stop(self) -> None:
        """The device went away: the stream stops running."""
        self._running = False

    def chunks(self, timeout: float | None = None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                yield self._queue.get(timeout=0.05)
                deadline = None if timeout is None else time.monotonic() + timeout
                continue
            except queue.Empty:
                pass
            if self._closed:
                return
            if not self._running:
                raise DeviceLostError("capture device 'fake-mic' stopped: its stream is no longer running")
            if deadline is not None and time.monotonic() >= deadline:
                raise DeviceLostError(f"capture device 'fake-mic' delivered no audio for {timeout} s")

    @property
    def queued(self) -> int:
        return self._queue.qsize()

    def drain(self) -> int:
        n = 0
        while True:
            try:
                self._queue.get_nowait()
                n += 1
            except queue.Empty:
                return n

    def close(self) -> None:
        self._closed = True
        self._running = False
