"""Microphone capture through PortAudio: :class:`Capture` (one open device, its ring buffer) and
:class:`ResilientCapture` (the one reconnect policy: waits for a device that is not there yet,
reopens one that went away, with a doubling back-off, and says so once).

Capture opens the input device at its NATIVE default rate and channel count (what the hardware or
sound server offers without a second resampler in ALSA; :func:`~drivers.audio.devices.native_format`)
and converts once, in :class:`~drivers.audio.convert.FrameConverter`, to the pipeline frame format
(16 kHz mono int16, 1280 samples = 80 ms). Opening PortAudio, finding the device and the errors are
in :mod:`drivers.audio.devices`.

Messages go to the ``drivers.audio.capture`` logger: one warning per consumer stall that dropped
chunks (case C04), per lost device and per device back (case C05), and when waiting for a device at
start (case C06); each failed open attempt at debug level.
"""
from __future__ import annotations

import contextlib
import logging
import math
import queue
import threading
import time
from typing import Iterator

import numpy as np

from drivers.audio.convert import FrameConverter
from drivers.audio.devices import (
    FIX_NO_INPUT,
    FRAMES_PER_BUFFER,
    AudioDeviceError,
    DeviceLostError,
    describe,
    library_messages,
    native_format,
    open_portaudio,
    resolve_device,
    sound_server_signature,
    sound_server_sockets,
    stderr_captured,
)

MAX_QUEUED_CHUNKS = 256    # ~5 s at 48 kHz / 1024; beyond this the oldest chunk is dropped
POLL_S = 0.25              # s between checks that a capture stream still runs while no chunk comes (design
                           # choice: a loss is seen within 0.25 s for 4 wake-ups a second of a starved consumer)

log = logging.getLogger(__name__)

_END = object()  # queue sentinel: the stream was closed


def chunks_for(ring_ms: float, rate: int, frames_per_buffer: int) -> int:
    """Chunks of ``frames_per_buffer`` device samples at ``rate`` Hz that hold ``ring_ms`` ms of
    audio (at least 1)."""
    return max(1, math.ceil(ring_ms / 1000.0 * rate / frames_per_buffer))


class Capture:
    """Live input: the device at its native rate/channels, delivered as 16 kHz mono int16 frames.

    PortAudio's callback thread (the capture thread) puts each raw int16 chunk into a bounded
    queue, the ring buffer; it never blocks. When the queue is full (the consumer fell behind by
    ``max_queued`` chunks) the OLDEST chunk is dropped and ``overflows`` is incremented, so latency
    stays bounded; ``xruns`` counts the overflows PortAudio itself reports (the driver lost samples
    before we saw them). A stall of the consumer that cost chunks is logged once, as a warning on
    the ``drivers.audio.capture`` logger, when the consumer takes the next chunk (case C04); the
    next warning comes only after the consumer has caught up (found the queue empty) and fallen
    behind again, so a consumer that stays slow logs once, not once per chunk.

    The rate and channels are the device's native ones (:func:`native_format`), converted once to
    16 kHz mono by a :class:`~drivers.audio.convert.FrameConverter` built for them (case C01).

    Args:
        device: ``None`` = system default input (ALSA ``default``, i.e. PulseAudio when it runs),
            an ``int`` PortAudio index, or a ``str`` (exact name, else case-insensitive substring).
        frames_per_buffer: device samples per callback.
        max_queued: chunks held before the oldest is dropped.
        ring_ms: the ring buffer as audio time in ms instead (overrides ``max_queued``), e.g. 1000.
    Attributes:
        rate, channels: what the device was opened with (Hz, channels). device_name, device_index.
        overflows: chunks dropped because the consumer was too slow.
        overflow_stalls: consumer stalls that dropped chunks (one warning each).
        xruns: callbacks flagged with ``paInputOverflow`` by PortAudio.
        max_queued: the ring buffer's size in chunks.
    Raises:
        AudioDeviceError: no such device, no input device, a device without a usable sample rate,
            or the device refuses to open.

    Use::

        with Capture() as cap:
            for frame in cap.frames(timeout=2.0):   # (1280,) int16 at 16 kHz
                ...
    """

    def __init__(self, device: int | str | None = None, *, frames_per_buffer: int = FRAMES_PER_BUFFER,
                 max_queued: int = MAX_QUEUED_CHUNKS, ring_ms: float | None = None):
        self.overflows = 0
        self.overflow_stalls = 0
        self.xruns = 0
        self._overflows_seen = 0
        self._behind = False  # in a stall that dropped chunks, until the consumer catches up
        self._queue: queue.Queue = queue.Queue(maxsize=max(1, int(max_queued)))
        self._lock = threading.Lock()
        self._stream_lock = threading.Lock()  # close() vs. a consumer asking whether the stream runs
        self._closed = False
        self._stream = None
        self._pyaudio, self._pa, noise = open_portaudio()
        try:
            info = resolve_device(self._pa, device, "input")
            self.device_index = int(info["index"])
            self.device_name = str(info["name"])
            self.rate, self.channels = native_format(info)
            self.frames_per_buffer = int(frames_per_buffer)
            if ring_ms is not None:
                self._queue = queue.Queue(maxsize=chunks_for(ring_ms, self.rate, self.frames_per_buffer))
            self.max_queued = self._queue.maxsize
            self._converter = FrameConverter(self.rate, self.channels)
            with stderr_captured() as err:
                try:
                    self._stream = self._pa.open(
                        format=self._pyaudio.paInt16, channels=self.channels, rate=self.rate,
                        input=True, input_device_index=self.device_index,
                        frames_per_buffer=self.frames_per_buffer, stream_callback=self._callback,
                        start=True)
                    open_error = None
                except Exception as e:
                    open_error = e
            if open_error is not None:
                raise AudioDeviceError(
                    f"cannot open capture {describe(info)} at {self.rate} Hz x {self.channels} ch int16 "
                    f"({open_error}){library_messages(noise + ''.join(err))}; is another program holding it? "
                    f"{FIX_NO_INPUT}") from open_error
        except BaseException:
            self._pa.terminate()
            raise

    # PortAudio thread
    def _callback(self, in_data, frame_count, time_info, status):  # noqa: ARG002
        if status & self._pyaudio.paInputOverflow:
            self.xruns += 1
        if in_data:
            self._put(in_data)
        return (None, self._pyaudio.paContinue)

    def _put(self, item) -> None:
        """Enqueue without blocking; when full, drop the oldest chunk (counted in ``overflows``).
        The end marker is only put after the stream has stopped, so it is never dropped."""
        with self._lock:
            while True:
                try:
                    self._queue.put_nowait(item)
                    return
                except queue.Full:
                    with contextlib.suppress(queue.Empty):
                        self._queue.get_nowait()
                        self.overflows += 1

    def chunks(self, timeout: float | None = None) -> Iterator[np.ndarray]:
        """Raw device chunks, ``(n, channels)`` int16 at :attr:`rate`, until :meth:`close`.

        While no chunk comes, the stream is checked every :data:`POLL_S` s: PortAudio ends it when
        the device goes away (an ALSA read error: unplugged, the sound server died).

        Raises:
            DeviceLostError: the stream stopped running, or no chunk arrived within ``timeout``
                seconds (the device stalled). Both are :class:`AudioDeviceError`.
        """
        while True:
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                wait = POLL_S if deadline is None else max(0.0, min(POLL_S, deadline - time.monotonic()))
                try:
                    item = self._queue.get(timeout=wait)
                    break
                except queue.Empty:
                    pass
                if not self._closed and not self._stream_running():
                    raise DeviceLostError(
                        f"capture device {self.device_index} {self.device_name!r} stopped: its stream is no "
                        "longer running (unplugged, or the sound server went away); it must be reopened")
                if deadline is not None and time.monotonic() >= deadline:
                    raise DeviceLostError(
                        f"capture device {self.device_index} {self.device_name!r} delivered no audio for "
                        f"{timeout} s; check that it is not suspended or muted (PulseAudio: "
                        "`pactl list sources short`), and PULSE_SERVER")
            if item is _END:
                return
            self._note_overflows()
            yield np.frombuffer(item, dtype=np.int16).reshape(-1, self.channels)

    def _stream_running(self) -> bool:
        with self._stream_lock:  # never ask PortAudio about a stream close() is tearing down
            stream = self._stream
            if stream is None or self._closed:
                return False
            try:
                return bool(stream.is_active())
            except Exception:  # closed under us
                return False

    def _note_overflows(self) -> None:
        """Consumer side: one warning per stall that dropped chunks (see the class docstring)."""
        dropped = self.overflows
        if dropped > self._overflows_seen:
            if not self._behind:
                self._behind = True
                self.overflow_stalls += 1
                new = dropped - self._overflows_seen
                ms = 1000.0 * new * self.frames_per_buffer / self.rate
                log.warning("capture overflow on %s: the consumer fell behind by more than the ring buffer "
                            "(%d chunks = %.0f ms); dropped %d chunks (~%.0f ms of audio, %d in all)",
                            self.device_name, self.max_queued,
                            1000.0 * self.max_queued * self.frames_per_buffer / self.rate, new, ms, dropped)
            self._overflows_seen = dropped
        elif self._behind and self._queue.qsize() == 0:
            self._behind = False  # caught up: the next overflow is a new stall

    @property
    def queued(self) -> int:
        """Chunks waiting in the ring buffer now."""
        return self._queue.qsize()

    def frames(self, timeout: float | None = None) -> Iterator[np.ndarray]:
        """Pipeline frames: ``(1280,)`` int16, 16 kHz mono, until :meth:`close` (then the
        resampler is drained and the last partial frame zero-padded).

        Args:
            timeout: longest wait in seconds for the device's next chunk; ``None`` waits forever.
        Raises:
            AudioDeviceError: the device delivered nothing within ``timeout``.
        """
        for chunk in self.chunks(timeout=timeout):
            yield from self._converter.push(chunk)
        yield from self._converter.flush()

    def drain(self) -> int:
        """Discard every chunk captured so far (e.g. while the box was speaking); returns how many."""
        n = 0
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return n
            if item is _END:
                self._queue.put_nowait(item)
                return n
            n += 1

    def read(self, seconds: float, timeout: float = 2.0) -> np.ndarray:
        """Convenience: capture ``seconds`` of 16 kHz mono int16 (whole frames, at least that long)."""
        want = int(np.ceil(seconds * 16_000))
        got: list[np.ndarray] = []
        n = 0
        for frame in self.frames(timeout=timeout):
            got.append(frame)
            n += len(frame)
            if n >= want:
                break
        return np.concatenate(got) if got else np.zeros(0, dtype=np.int16)

    @property
    def active(self) -> bool:
        return self._stream is not None and not self._closed and self._stream.is_active()

    def close(self) -> None:
        """Stop and close the stream and PortAudio; a running :meth:`frames` loop ends. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            with self._stream_lock:
                try:
                    if self._stream is not None:
                        with contextlib.suppress(Exception):
                            self._stream.stop_stream()
                        with contextlib.suppress(Exception):
                            self._stream.close()
                finally:
                    self._stream = None
                    with contextlib.suppress(Exception):
                        self._pa.terminate()
        finally:
            self._put(_END)

    def __enter__(self) -> "Capture":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):  # pragma: no cover - best effort
        with contextlib.suppress(Exception):
            self.close()


# --------------------------------------------------------------------------------------------------
# Capture that survives the device going away (case C05)

RETRY_INITIAL_S = 0.5   # s before the first reopen attempt after a loss, then doubling ...
RETRY_MAX_S = 5.0       # ... up to this (the order of service.capture_retry_max_s in edge/defaults.yaml: a
                        # returning device is found within 5 s, at most ~1 PortAudio start-up per 5 s meanwhile)
STALL_TIMEOUT_S = 2.0   # s without a chunk before an open device counts as lost: ~94 missed periods of
                        # FRAMES_PER_BUFFER at 48 kHz, far beyond a scheduling hiccup


class CaptureTotals:
    """``overflows``, ``xruns`` and ``overflow_stalls`` summed over every :class:`Capture` opened so
    far: those already closed (:meth:`retire`) plus the open one's live counters (:meth:`adopt`).
    Thread-safe; used by :class:`ResilientCapture` and the service's state file (edge.service.runstate)."""

    NAMES = ("overflows", "xruns", "overflow_stalls")

    def __init__(self):
        self._done = dict.fromkeys(self.NAMES, 0)
        self.current = None
        self._lock = threading.Lock()

    def adopt(self, cap) -> None:
        """``cap`` is the open capture now."""
        with self._lock:
            self.current = cap

    def retire(self, cap) -> bool:
        """Add ``cap``'s counters to the totals once; False when it was not the open capture
        (already retired, e.g. by another thread)."""
        with self._lock:
            if self.current is not cap:
                return False
            for k in self._done:
                self._done[k] += int(getattr(cap, k, 0))
            self.current = None
            return True

    def get(self, name: str) -> int:
        with self._lock:
            cap = self.current
            return self._done[name] + (int(getattr(cap, name, 0)) if cap is not None else 0)

    def as_dict(self) -> dict[str, int]:
        return {k: self.get(k) for k in self.NAMES}


class CaptureObserver:
    """What a :class:`ResilientCapture` tells its owner (the live service: state file, STATUS=,
    watchdog); every method here does nothing, a subclass overrides what it needs.

    Calls come from the thread that iterates the capture (:meth:`ResilientCapture.open`,
    :meth:`~ResilientCapture.device_frames`, :meth:`~ResilientCapture.frames`), except
    :meth:`closed`, which comes from the thread that calls :meth:`ResilientCapture.close`. An
    exception raised by a method goes through to that caller.
    """

    def open_failed(self, err: AudioDeviceError, attempt: int, next_try_s: float) -> None:
        """An open attempt failed: the device could not be opened, or it opened but delivered no
        chunk within the stall timeout. ``attempt``: 1, 2, ... within this wait (the wait for a
        device at start, or one outage); ``next_try_s``: the delay in s before the next attempt."""

    def found(self, cap) -> None:
        """``cap`` (a :class:`Capture`) delivered its first chunk: the device works (state ``ok``).
        After a loss this is the reopen (:attr:`ResilientCapture.reopens` already counts it)."""

    def lost(self, cap, err: Exception) -> None:
        """The working device ``cap`` went away (``err``, a :class:`DeviceLostError` as a rule); it
        is closed and its counters are in the totals. Once per outage (state ``lost``); reopen
        attempts follow with the back-off."""

    def closed(self, cap) -> None:
        """:meth:`ResilientCapture.close` closed ``cap``, the capture that was open."""

    def idle(self) -> None:
        """Called every :data:`POLL_S` s or sooner while waiting between open attempts (e.g. to
        feed a watchdog)."""


class ResilientCapture:
    """:class:`Capture` that waits for a device, reopens it when it goes away, and says so once
    (cases C05, C06): the one reconnect policy of the product.

    :meth:`frames` yields pipeline frames (``(1280,)`` int16, 16 kHz mono) for as long as the object
    is open. When the device is lost (its PortAudio stream stops running, or no chunk comes for
    ``stall_timeout_s`` s: :class:`DeviceLostError`), it:

    1. logs ``microphone lost: ...`` ONCE per outage (warning, ``drivers.audio.capture`` logger),
       sets :attr:`state` to ``"lost"``, counts :attr:`lost_events` and tells the observer
       (:meth:`CaptureObserver.lost`);
    2. retries opening after ``retry_initial_s`` s, doubling up to ``retry_max_s`` s between attempts
       (sleeps, never a busy loop; :attr:`open_attempts` counts them; while it waits it watches the
       sound server's sockets (:func:`~drivers.audio.devices.sound_server_sockets`) every
       :data:`POLL_S` s, and when one appears anew the next attempt is made at once and the back-off
       starts over: the capture is back within about 0.25 s of the server's return, not after up to
       ``retry_max_s``; :attr:`server_wakeups` counts these; each failure is logged at
       debug level as ``capture device: attempt N failed (...); next try in D s`` and goes to
       :meth:`CaptureObserver.open_failed`), each attempt a fresh PortAudio instance, so a device
       that re-appears (at another index or another native rate) is found;
    3. on success builds a NEW :class:`~drivers.audio.convert.FrameConverter` for the device's
       (possibly different) native rate and channels (what the old one still held is dropped: it
       is audio from before the gap), and when the first chunk arrives logs ``microphone back: ...``,
       counts :attr:`reopens`, sets :attr:`state` back to ``"ok"`` and tells the observer
       (:meth:`CaptureObserver.found`).

    A device that opens but then delivers nothing is a failed attempt of the same outage (one
    ``lost`` report). :attr:`state` is ``"waiting"`` until a device has delivered for the first time
    (only with ``wait_for_device=True``, e.g. a sound card that appears after the service started:
    ``waiting for a microphone`` is logged once, and the attempts follow the same back-off, the
    first one at once).

    A consumer that wants to know where one device ends and the next begins (the live service runs
    one pipeline and one playback per device) uses :meth:`open` and :meth:`device_frames` instead of
    :meth:`frames`::

        with ResilientCapture(wait_for_device=True, observer=obs) as cap:
            while cap.open():                    # waits for a device, with the back-off
                for frame in cap.device_frames():  # until that device is lost
                    ...

    Args:
        device: as for :class:`Capture`.
        frames_per_buffer, max_queued, ring_ms: passed to every :class:`Capture` opened.
        stall_timeout_s: s without a chunk before the open device counts as lost (> 0).
        retry_initial_s, retry_max_s: the reopen back-off in s (> 0; max >= initial).
        wait_for_device: False: the first open happens in the constructor and its
            :class:`AudioDeviceError` is raised (a wrong device name or a device without a
            readable rate fails at start, naming the device). True: the constructor returns at
            once and the first :meth:`open` (or :meth:`frames`) tries at once, then waits for the
            device with the back-off.
        opener: a callable returning an opened :class:`Capture` (or an object with its
            ``rate``/``channels``/``device_name``/``chunks()``/``close()``/``drain()``/
            ``overflows``/``xruns`` interface, e.g. a stand-in device in tests); default: a
            :class:`Capture` with the arguments above.
        observer: a :class:`CaptureObserver` told of failed attempts, losses, devices found, and
            called while waiting; default: one that does nothing.
    Attributes:
        state: ``"ok"`` | ``"lost"`` | ``"waiting"``.
        rate, channels, device_name: of the device currently (or last) open; None before.
        converter: the :class:`FrameConverter` for the current device.
        lost_events, reopens, open_attempts: counters (for ``edge status`` / metrics).
        overflows, xruns, overflow_stalls: summed over every capture opened so far.
        last_error: the message of the last loss or failed attempt.
    Raises:
        AudioDeviceError: from the constructor when ``wait_for_device`` is False and the device
            cannot be opened.
        ValueError: a timeout or back-off that is not positive.
    """

    def __init__(self, device: int | str | None = None, *, frames_per_buffer: int = FRAMES_PER_BUFFER,
                 max_queued: int = MAX_QUEUED_CHUNKS, ring_ms: float | None = None,
                 stall_timeout_s: float = STALL_TIMEOUT_S, retry_initial_s: float = RETRY_INITIAL_S,
                 retry_max_s: float = RETRY_MAX_S, wait_for_device: bool = False, opener=None,
                 observer: CaptureObserver | None = None):
        if not stall_timeout_s > 0 or not retry_initial_s > 0 or not retry_max_s > 0:
            raise ValueError(f"stall_timeout_s ({stall_timeout_s}), retry_initial_s ({retry_initial_s}) and "
                             f"retry_max_s ({retry_max_s}) must be > 0 s")
        self.device = device
        self.stall_timeout_s = float(stall_timeout_s)
        self.retry_initial_s = float(retry_initial_s)
        self.retry_max_s = max(float(retry_max_s), self.retry_initial_s)
        self._opener = opener or (lambda: Capture(device, frames_per_buffer=frames_per_buffer,
                                                  max_queued=max_queued, ring_ms=ring_ms))
        self.observer = observer or CaptureObserver()
        self.state = "waiting"
        self.rate: int | None = None
        self.channels: int | None = None
        self.device_name: str | None = None
        self.converter: FrameConverter | None = None
        self.lost_events = 0
        self.reopens = 0
        self.open_attempts = 0
        self.last_error = ""
        self._totals = CaptureTotals()  # counters of every capture opened so far
        self._cap = None
        self._delivering = False  # the open capture has delivered a chunk
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._delay = self.retry_initial_s
        self._lost_at = 0.0
        self._attempts_in_outage = 0
        self.server_wakeups = 0  # attempts made at once because the sound server came back
        self._server_paths = sound_server_sockets()
        self._server_sig = sound_server_signature(self._server_paths)
        if not wait_for_device:
            self.open_attempts += 1
            self._adopt(self._opener())
            self.state = "ok"

    # -- counters over every capture --------------------------------------------------------------
    @property
    def overflows(self) -> int:
        return self._totals.get("overflows")

    @property
    def xruns(self) -> int:
        return self._totals.get("xruns")

    @property
    def overflow_stalls(self) -> int:
        return self._totals.get("overflow_stalls")

    def status(self) -> dict:
        """The counters and state as one dict (``edge status`` / metrics): ``state``, ``device``,
        ``rate`` (Hz), ``channels``, ``overflows``, ``overflow_stalls``, ``xruns``, ``lost_events``,
        ``reopens``, ``open_attempts``, ``server_wakeups``, ``last_error``."""
        return {"state": self.state, "device": self.device_name, "rate": self.rate, "channels": self.channels,
                "overflows": self.overflows, "overflow_stalls": self.overflow_stalls, "xruns": self.xruns,
                "lost_events": self.lost_events, "reopens": self.reopens, "open_attempts": self.open_attempts,
                "server_wakeups": self.server_wakeups, "last_error": self.last_error}

    # -- the loop -----------------------------------------------------------------------------------
    def frames(self) -> Iterator[np.ndarray]:
        """Pipeline frames, ``(1280,)`` int16 at 16 kHz, across device losses, until :meth:`close`."""
        while not self._closing.is_set():
            yield from self.device_frames()

    def open(self) -> bool:
        """Have a device open: True at once when one is; else open attempts with the back-off (see
        the class docstring) until one opens (True) or :meth:`close` is called (False). The device
        counts as working only when :meth:`device_frames` gets its first chunk."""
        if self._closing.is_set():
            return False
        return self._cap is not None or self._reopen() is not None

    def device_frames(self) -> Iterator[np.ndarray]:
        """Pipeline frames, ``(1280,)`` int16 at 16 kHz, from ONE device: the one open now (opened
        first, with the back-off, when there is none) until it is lost (reported as the class
        docstring says; the next call reopens with the back-off) or :meth:`close` is called."""
        if not self.open():
            return
        cap = self._cap
        if cap is None:  # close() came in between
            return
        try:
            for chunk in cap.chunks(timeout=self.stall_timeout_s):
                if self._closing.is_set():
                    return
                if not self._delivering:
                    self._first_chunk(cap)
                yield from self.converter.push(chunk)
            err: Exception = DeviceLostError(f"capture device {self.device_name!r}: its stream ended")
        except AudioDeviceError as e:
            err = e
        if not self._closing.is_set():  # else close() ended the stream
            self._lose(cap, err)

    def _adopt(self, cap) -> None:
        with self._lock:
            self._cap = cap
            self._delivering = False
            self._totals.adopt(cap)
            self.rate, self.channels, self.device_name = int(cap.rate), int(cap.channels), str(cap.device_name)
            self.converter = FrameConverter(self.rate, self.channels)  # rebuilt for this device's rate

    def _retire(self, cap) -> bool:
        """Close ``cap`` and add its counters to the totals (once, whichever thread comes first);
        False when another thread did."""
        with self._lock:
            if not self._totals.retire(cap):
                return False  # already retired
            self._cap = None
        with contextlib.suppress(Exception):
            cap.close()
        return True

    def _lose(self, cap, err: Exception) -> None:
        self.last_error = str(err)
        delivered = self._delivering
        self._retire(cap)
        if self.state == "ok":  # the first sign of this outage: report it once
            self.state = "lost"
            self.lost_events += 1
            self._lost_at = time.monotonic()
            self._attempts_in_outage = 0
            log.warning("microphone lost: %s; retrying in %.2f s, then doubling up to %.2f s between attempts",
                        err, self.retry_initial_s, self.retry_max_s)
            self.observer.lost(cap, err)
        if not delivered:  # opened but deaf: a failed attempt of this outage
            self._attempt_failed(err)

    def _attempt_failed(self, err: Exception) -> None:
        self.last_error = str(err)
        attempt = max(1, self._attempts_in_outage)
        log.debug("capture device: attempt %d failed (%s); next try in %.2f s", attempt, err, self._delay)
        self.observer.open_failed(err, attempt, self._delay)

    def _reopen(self):
        """Open attempts with the back-off until one succeeds (→ the capture) or close() (→ None)."""
        while True:
            if self.open_attempts:  # the very first open (wait_for_device) is tried at once
                delay = self._delay
                self._delay = min(self._delay * 2, self.retry_max_s)
                if self._wait(delay):
                    return None
            elif self._closing.is_set():
                return None
            self.open_attempts += 1
            self._attempts_in_outage += 1
            try:
                cap = self._opener()
            except AudioDeviceError as e:
                if self.state == "waiting" and self.open_attempts == 1:  # said once, like "lost"
                    log.warning("waiting for a microphone: %s; retrying after %.2f s, then doubling up to %.2f s",
                                e, self.retry_initial_s, self.retry_max_s)
                self._attempt_failed(e)
                continue
            if self._closing.is_set():
                with contextlib.suppress(Exception):
                    cap.close()
                return None
            self._adopt(cap)
            return cap

    def _wait(self, seconds: float) -> bool:
        """Sleep ``seconds``, calling the observer's :meth:`~CaptureObserver.idle` at least every
        :data:`POLL_S` s, and less when a sound server's socket appears anew (the back-off starts
        over); True when :meth:`close` was called meanwhile."""
        end = time.monotonic() + seconds
        while True:
            self.observer.idle()
            if self._server_back():
                return self._closing.is_set()
            left = end - time.monotonic()
            if left <= 0:
                return self._closing.is_set()
            if self._closing.wait(min(left, POLL_S)):
                return True

    def _server_back(self) -> bool:
        """Whether a sound server's socket appeared (or was made anew) since the last look."""
        sig = sound_server_signature(self._server_paths)
        if sig == self._server_sig:
            return False
        came = any(now is not None and now != was for now, was in zip(sig, self._server_sig, strict=True))
        self._server_sig = sig
        if came:
            self.server_wakeups += 1
            self._delay = self.retry_initial_s
            log.info("sound server socket back (%s): trying the capture device now",
                     ", ".join(p for p, now in zip(self._server_paths, sig, strict=True) if now is not None))
        return came

    def _first_chunk(self, cap) -> None:
        """First chunk from a (re)opened device: it works."""
        self._delivering = True
        if self.state == "lost":
            self.reopens += 1
            log.warning("microphone back: %s at %d Hz x %d ch after %.1f s and %d attempts (%d on the sound "
                        "server's return); frame converter rebuilt for %d Hz", self.device_name, self.rate,
                        self.channels, time.monotonic() - self._lost_at, self._attempts_in_outage,
                        self.server_wakeups, self.rate)
        elif self.state == "waiting":
            log.info("microphone found: %s at %d Hz x %d ch", self.device_name, self.rate, self.channels)
        self.state = "ok"
        self._delay = self.retry_initial_s  # the next outage starts the back-off over
        self._attempts_in_outage = 0
        self.observer.found(cap)

    # -- the rest of the Capture interface ------------------------------------------------------------
    @property
    def queued(self) -> int:
        """Chunks waiting in the current capture's ring buffer (0 when none is open)."""
        cap = self._cap
        return int(getattr(cap, "queued", 0)) if cap is not None else 0

    def drain(self) -> int:
        """Discard the chunks captured so far (see :meth:`Capture.drain`); returns how many."""
        cap = self._cap
        return cap.drain() if cap is not None else 0

    def close(self) -> None:
        """Stop: a running :meth:`frames` loop (also one waiting for the device) ends; the observer
        hears :meth:`~CaptureObserver.closed` when a capture was open. Idempotent."""
        self._closing.set()
        cap = self._cap
        if cap is not None and self._retire(cap):
            self.observer.closed(cap)

    def __enter__(self) -> "ResilientCapture":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
