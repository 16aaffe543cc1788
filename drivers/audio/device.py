"""Live audio through PortAudio (the ``pyaudio`` package): microphone capture and speaker playback.

Capture opens the input device at its NATIVE default rate and channel count (what the hardware or
sound server offers without a second resampler in ALSA) and converts once, in
:class:`~drivers.audio.convert.FrameConverter`, to the pipeline frame format (16 kHz mono int16,
1280 samples = 80 ms).

PortAudio reads its device list when ``pyaudio.PyAudio()`` is created, and ALSA reads its
configuration (``~/.asoundrc``, ``PULSE_SERVER`` for the pulse plugin) at the same time, so the
environment must be final before a :class:`Capture`, :class:`Playback` or :func:`list_devices` call.
On a machine where PulseAudio runs, ALSA's ``default`` device goes to PulseAudio through the
libasound2-plugins hook ``/etc/alsa/conf.d/99-pulse.conf`` (it is only used when the server
answers); otherwise ``default`` is the first sound card.

``pyaudio`` is imported inside the functions, so the rest of :mod:`drivers.audio` works without it.
ALSA's and JACK's probe messages on stderr ("Unknown PCM cards.pcm.rear", "jack server is not
running") are silenced unless ``EDGE_AUDIO_DEBUG=1``; when opening fails, the silenced text is put
into the :class:`AudioDeviceError` message instead.
"""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import logging
import math
import os
import queue
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from drivers.audio.convert import FrameConverter, to_float32
from edge.errors import UserError

FRAMES_PER_BUFFER = 1024   # device samples per PortAudio callback (~21 ms at 48 kHz)
MAX_QUEUED_CHUNKS = 256    # ~5 s at 48 kHz / 1024; beyond this the oldest chunk is dropped
MAX_CAPTURE_CHANNELS = 2   # more channels are averaged away anyway
POLL_S = 0.25              # s between checks that a capture stream still runs while no chunk comes (design
                           # choice: a loss is seen within 0.25 s for 4 wake-ups a second of a starved consumer)

log = logging.getLogger(__name__)

_FIX_NO_INPUT = ("check `arecord -l`, that the service user is in the 'audio' group, and PULSE_SERVER "
                 "(and that PulseAudio is running) if capture goes through PulseAudio")
_FIX_NO_OUTPUT = ("check `aplay -l`, that the service user is in the 'audio' group, and PULSE_SERVER "
                  "(and that PulseAudio is running) if playback goes through PulseAudio")


class AudioDeviceError(UserError):
    """A sound device that cannot be found or opened; the message names the device and the fix."""


class DeviceLostError(AudioDeviceError):
    """A capture device that was open stopped delivering audio: its stream ended (unplugged, the
    sound server went away) or no chunk came within the timeout (case C05)."""


# --------------------------------------------------------------------------------------------------
# PortAudio set-up, with ALSA/JACK noise kept off stderr

_ALSA_HANDLER = None  # keeps the ctypes callback alive for as long as libasound may call it


def _quiet_alsa() -> None:
    """Install a no-op ALSA error handler (process wide, once) so probing absent cards prints nothing."""
    global _ALSA_HANDLER
    if _ALSA_HANDLER is not None or os.environ.get("EDGE_AUDIO_DEBUG") == "1":
        return
    name = ctypes.util.find_library("asound") or "libasound.so.2"
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return
    proto = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int,
                             ctypes.c_char_p)
    _ALSA_HANDLER = proto(lambda *_: None)
    lib.snd_lib_error_set_handler(_ALSA_HANDLER)


@contextlib.contextmanager
def _stderr_captured() -> Iterator[list[str]]:
    """Redirect file descriptor 2 (C libraries write there directly) into a temp file for the block;
    yields a list that receives the captured text when the block ends."""
    out: list[str] = []
    if os.environ.get("EDGE_AUDIO_DEBUG") == "1":
        yield out
        return
    with tempfile.TemporaryFile() as tmp:
        saved = os.dup(2)
        try:
            os.dup2(tmp.fileno(), 2)
            yield out
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            out.append(tmp.read().decode("utf-8", "replace"))


def _tail(text: str, lines: int = 6) -> str:
    rows = [r for r in text.strip().splitlines() if r.strip()]
    return ("; library messages: " + " | ".join(rows[-lines:])) if rows else ""


def _pyaudio() -> Any:
    try:
        import pyaudio  # noqa: PLC0415 - lazy on purpose: the package works without it
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise AudioDeviceError(
            f"live audio needs the 'pyaudio' package ({e}); install it with "
            "`pip install pyaudio` (build dependency: apt-get install portaudio19-dev)") from e
    return pyaudio


def _open_pa() -> tuple[Any, Any, str]:
    """→ ``(pyaudio module, PyAudio instance, silenced init messages)``."""
    pyaudio = _pyaudio()
    os.environ.setdefault("JACK_NO_START_SERVER", "1")  # never spawn jackd while probing
    _quiet_alsa()
    with _stderr_captured() as err:
        try:
            pa = pyaudio.PyAudio()
        except Exception as e:  # PortAudio could not initialise at all
            init_failed = e
        else:
            init_failed = None
    noise = "".join(err)
    if init_failed is not None:
        raise AudioDeviceError(f"PortAudio failed to initialise ({init_failed}){_tail(noise)}; "
                               f"{_FIX_NO_INPUT}") from init_failed
    return pyaudio, pa, noise


def _device_dict(pa: Any, info: dict, default_in: int | None, default_out: int | None) -> dict:
    idx = int(info["index"])
    try:
        host = pa.get_host_api_info_by_index(info["hostApi"])["name"]
    except Exception:
        host = str(info.get("hostApi"))
    return {
        "index": idx,
        "name": info["name"],
        "host_api": host,
        "max_input_channels": int(info["maxInputChannels"]),
        "max_output_channels": int(info["maxOutputChannels"]),
        "default_sample_rate": int(round(info["defaultSampleRate"])),
        "is_default_input": idx == default_in,
        "is_default_output": idx == default_out,
    }


def _default_index(pa: Any, kind: str) -> int | None:
    try:
        info = pa.get_default_input_device_info() if kind == "input" else pa.get_default_output_device_info()
    except (IOError, OSError):
        return None
    return int(info["index"])


def _all_devices(pa: Any) -> list[dict]:
    d_in, d_out = _default_index(pa, "input"), _default_index(pa, "output")
    out = []
    for i in range(pa.get_device_count()):
        try:
            out.append(_device_dict(pa, pa.get_device_info_by_index(i), d_in, d_out))
        except (IOError, OSError):
            continue
    return out


def list_devices() -> list[dict]:
    """Every PortAudio device: ``index``, ``name``, ``host_api``, ``max_input_channels``,
    ``max_output_channels``, ``default_sample_rate`` (Hz, int), ``is_default_input``,
    ``is_default_output``.

    Raises:
        AudioDeviceError: pyaudio missing or PortAudio cannot initialise.
    """
    _, pa, _ = _open_pa()
    try:
        return _all_devices(pa)
    finally:
        pa.terminate()


def _resolve(pa: Any, device: int | str | None, kind: str) -> dict:
    """Device spec (None = system default, int = PortAudio index, str = exact or substring of the
    name, case-insensitive) → PortAudio device info for an input (``kind="input"``) or output."""
    chan_key = "maxInputChannels" if kind == "input" else "maxOutputChannels"
    fix = _FIX_NO_INPUT if kind == "input" else _FIX_NO_OUTPUT
    noun = "capture" if kind == "input" else "playback"
    devices = _all_devices(pa)
    listing = ", ".join(f"{d['index']}: {d['name']!r}" for d in devices) or "none"
    if device is None:
        idx = _default_index(pa, kind)
        if idx is None:
            raise AudioDeviceError(f"no {noun} device found (PortAudio has no default {kind} device; "
                                   f"devices: {listing}); {fix}")
        info = pa.get_device_info_by_index(idx)
    elif isinstance(device, int) or (isinstance(device, str) and device.strip().isdigit()):
        idx = int(device)
        try:
            info = pa.get_device_info_by_index(idx)
        except (IOError, OSError, ValueError) as e:
            raise AudioDeviceError(f"{noun} device index {idx} does not exist (devices: {listing}); "
                                   "run `python -m drivers.audio.device` to list them and pick one") from e
    else:
        want = device.strip().lower()
        cands = [d for d in devices if d[f"max_{kind}_channels"] > 0]
        hit = ([d for d in cands if d["name"].lower() == want]
               or [d for d in cands if want in d["name"].lower()])
        if not hit:
            raise AudioDeviceError(f"no {noun} device named {device!r} (devices: {listing}); "
                                   f"pick one of these names or indexes; {fix}")
        info = pa.get_device_info_by_index(hit[0]["index"])
    if int(info[chan_key]) < 1:
        raise AudioDeviceError(f"device {info['index']} {info['name']!r} has no {kind} channels; "
                               f"pick a {noun} device (devices: {listing})")
    return info


def _describe(info: dict) -> str:
    return f"device {info['index']} {info['name']!r}"


# --------------------------------------------------------------------------------------------------
# Capture

_END = object()  # queue sentinel: the stream was closed


def native_format(info: dict) -> tuple[int, int]:
    """PortAudio device info → ``(rate Hz, channels)`` to open the device with: its default
    (native) sample rate, and its input channels capped at :data:`MAX_CAPTURE_CHANNELS`.

    Raises:
        AudioDeviceError: the device reports no usable sample rate (missing, not a number, NaN,
            <= 0) or no input channel; the message names the device and the fix (case C01).
    """
    raw = info.get("defaultSampleRate")
    try:
        rate = float(raw)
    except (TypeError, ValueError):
        rate = float("nan")
    if not math.isfinite(rate) or round(rate) <= 0:
        raise AudioDeviceError(
            f"capture {_describe(info)} reports no usable sample rate (defaultSampleRate={raw!r}), so its "
            "native format cannot be known; pick another device (`python -m drivers.audio.device` lists them, "
            "set audio.input_device) or give the card a fixed rate in its ALSA configuration")
    try:
        channels = int(info.get("maxInputChannels") or 0)
    except (TypeError, ValueError):
        channels = 0
    if channels < 1:
        raise AudioDeviceError(f"{_describe(info)} has no input channels; pick a capture device "
                               "(`python -m drivers.audio.device` lists them)")
    return int(round(rate)), min(channels, MAX_CAPTURE_CHANNELS)


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
    the ``drivers.audio.device`` logger, when the consumer takes the next chunk (case C04); the
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
        self._pyaudio, self._pa, noise = _open_pa()
        try:
            info = _resolve(self._pa, device, "input")
            self.device_index = int(info["index"])
            self.device_name = str(info["name"])
            self.rate, self.channels = native_format(info)
            self.frames_per_buffer = int(frames_per_buffer)
            if ring_ms is not None:
                self._queue = queue.Queue(maxsize=chunks_for(ring_ms, self.rate, self.frames_per_buffer))
            self.max_queued = self._queue.maxsize
            self._converter = FrameConverter(self.rate, self.channels)
            with _stderr_captured() as err:
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
                    f"cannot open capture {_describe(info)} at {self.rate} Hz x {self.channels} ch int16 "
                    f"({open_error}){_tail(noise + ''.join(err))}; is another program holding it? "
                    f"{_FIX_NO_INPUT}") from open_error
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


class ResilientCapture:
    """:class:`Capture` that reopens the device when it goes away, and says so once (case C05).

    :meth:`frames` yields pipeline frames (``(1280,)`` int16, 16 kHz mono) for as long as the object
    is open. When the device is lost (its PortAudio stream stops running, or no chunk comes for
    ``stall_timeout_s`` s: :class:`DeviceLostError`), it:

    1. logs ``microphone lost: ...`` ONCE per outage (warning, ``drivers.audio.device`` logger),
       sets :attr:`state` to ``"lost"`` and counts :attr:`lost_events`;
    2. retries opening after ``retry_initial_s`` s, doubling up to ``retry_max_s`` s between attempts
       (sleeps, never a busy loop; :attr:`open_attempts` counts them), each attempt a fresh PortAudio
       instance, so a device that re-appears (at another index or another native rate) is found;
    3. on success builds a NEW :class:`~drivers.audio.convert.FrameConverter` for the device's
       (possibly different) native rate and channels (what the old one still held is dropped: it
       is audio from before the gap), and when the first chunk arrives logs ``microphone back: ...``,
       counts :attr:`reopens` and sets :attr:`state` back to ``"ok"``.

    A device that opens but then delivers nothing stays in the same outage (one ``lost`` report).
    :attr:`state` is ``"waiting"`` until a device has been opened for the first time (only with
    ``wait_for_device=True``, e.g. a sound card that appears after the service started).

    Args:
        device: as for :class:`Capture`.
        frames_per_buffer, max_queued, ring_ms: passed to every :class:`Capture` opened.
        stall_timeout_s: s without a chunk before the open device counts as lost (> 0).
        retry_initial_s, retry_max_s: the reopen back-off in s (> 0; max >= initial).
        wait_for_device: False: the first open happens in the constructor and its
            :class:`AudioDeviceError` is raised (a wrong device name or a device without a
            readable rate fails at start, naming the device). True: the constructor returns at
            once and :meth:`frames` tries at once, then waits for the device with the back-off
            (``waiting for a microphone`` logged once).
        opener: a callable returning an opened :class:`Capture` (or an object with its
            ``rate``/``channels``/``device_name``/``chunks()``/``close()``/``drain()``/
            ``overflows``/``xruns`` interface, e.g. a stand-in device in tests); default: a
            :class:`Capture` with the arguments above.
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
                 retry_max_s: float = RETRY_MAX_S, wait_for_device: bool = False, opener=None):
        if not stall_timeout_s > 0 or not retry_initial_s > 0 or not retry_max_s > 0:
            raise ValueError(f"stall_timeout_s ({stall_timeout_s}), retry_initial_s ({retry_initial_s}) and "
                             f"retry_max_s ({retry_max_s}) must be > 0 s")
        self.device = device
        self.stall_timeout_s = float(stall_timeout_s)
        self.retry_initial_s = float(retry_initial_s)
        self.retry_max_s = max(float(retry_max_s), self.retry_initial_s)
        self._opener = opener or (lambda: Capture(device, frames_per_buffer=frames_per_buffer,
                                                  max_queued=max_queued, ring_ms=ring_ms))
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
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._delay = self.retry_initial_s
        self._lost_at = 0.0
        self._attempts_in_outage = 0
        if not wait_for_device:
            self.open_attempts += 1
            self._adopt(self._opener())
            self.state = "ok"

    # -- counters over every capture --------------------------------------------------------------
    def _sum(self, name: str) -> int:
        return self._totals.get(name)

    @property
    def overflows(self) -> int:
        return self._sum("overflows")

    @property
    def xruns(self) -> int:
        return self._sum("xruns")

    @property
    def overflow_stalls(self) -> int:
        return self._sum("overflow_stalls")

    def status(self) -> dict:
        """The counters and state as one dict (``edge status`` / metrics): ``state``, ``device``,
        ``rate`` (Hz), ``channels``, ``overflows``, ``overflow_stalls``, ``xruns``, ``lost_events``,
        ``reopens``, ``open_attempts``, ``last_error``."""
        return {"state": self.state, "device": self.device_name, "rate": self.rate, "channels": self.channels,
                "overflows": self.overflows, "overflow_stalls": self.overflow_stalls, "xruns": self.xruns,
                "lost_events": self.lost_events, "reopens": self.reopens, "open_attempts": self.open_attempts,
                "last_error": self.last_error}

    # -- the loop -----------------------------------------------------------------------------------
    def frames(self) -> Iterator[np.ndarray]:
        """Pipeline frames, ``(1280,)`` int16 at 16 kHz, across device losses, until :meth:`close`."""
        while not self._closing.is_set():
            cap = self._cap
            if cap is None:
                cap = self._reopen()
                if cap is None:  # closed while waiting
                    return
            try:
                for chunk in cap.chunks(timeout=self.stall_timeout_s):
                    if self.state != "ok":
                        self._back()
                    yield from self.converter.push(chunk)
                return  # the capture was closed: by close()
            except AudioDeviceError as e:
                if self._closing.is_set():
                    return
                self._lose(cap, e)

    def _adopt(self, cap) -> None:
        with self._lock:
            self._cap = cap
            self._totals.adopt(cap)
            self.rate, self.channels, self.device_name = int(cap.rate), int(cap.channels), str(cap.device_name)
            self.converter = FrameConverter(self.rate, self.channels)  # rebuilt for this device's rate

    def _retire(self, cap) -> None:
        """Close ``cap`` and add its counters to the totals (once, whichever thread comes first)."""
        with self._lock:
            if not self._totals.retire(cap):
                return  # already retired
            self._cap = None
        with contextlib.suppress(Exception):
            cap.close()

    def _lose(self, cap, err: Exception) -> None:
        self.last_error = str(err)
        self._retire(cap)
        if self.state == "ok":  # the first sign of this outage: report it once
            self.state = "lost"
            self.lost_events += 1
            self._lost_at = time.monotonic()
            self._attempts_in_outage = 0
            log.warning("microphone lost: %s; retrying in %.2f s, then doubling up to %.2f s between attempts",
                        err, self.retry_initial_s, self.retry_max_s)

    def _reopen(self):
        """Open attempts with the back-off until one succeeds (→ the capture) or close() (→ None)."""
        while True:
            if self.open_attempts:  # the very first open (wait_for_device) is tried at once
                delay = self._delay
                self._delay = min(self._delay * 2, self.retry_max_s)
                if self._closing.wait(delay):
                    return None
            elif self._closing.is_set():
                return None
            self.open_attempts += 1
            self._attempts_in_outage += 1
            try:
                cap = self._opener()
            except AudioDeviceError as e:
                self.last_error = str(e)
                if self.state == "waiting" and self.open_attempts == 1:  # said once, like "lost"
                    log.warning("waiting for a microphone: %s; retrying after %.2f s, then doubling up to %.2f s",
                                e, self.retry_initial_s, self.retry_max_s)
                log.debug("capture device: attempt %d failed (%s); next in %.2f s", self._attempts_in_outage, e,
                          self._delay)
                continue
            if self._closing.is_set():
                with contextlib.suppress(Exception):
                    cap.close()
                return None
            self._adopt(cap)
            return cap

    def _back(self) -> None:
        """First chunk from a (re)opened device."""
        if self.state == "lost":
            self.reopens += 1
            log.warning("microphone back: %s at %d Hz x %d ch after %.1f s and %d attempts; frame converter "
                        "rebuilt for %d Hz", self.device_name, self.rate, self.channels,
                        time.monotonic() - self._lost_at, self._attempts_in_outage, self.rate)
        else:
            log.info("microphone found: %s at %d Hz x %d ch", self.device_name, self.rate, self.channels)
        self.state = "ok"
        self._delay = self.retry_initial_s  # the next outage starts the back-off over

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
        """Stop: a running :meth:`frames` loop (also one waiting for the device) ends. Idempotent."""
        self._closing.set()
        cap = self._cap
        if cap is not None:
            self._retire(cap)

    def __enter__(self) -> "ResilientCapture":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# --------------------------------------------------------------------------------------------------
# Playback

class Playback:
    """Blocking playback on the default (or a named/indexed) output device.

    Samples are written as int16 at their own rate; if the device refuses that rate they are
    resampled (soxr) to the device's default rate. More channels than the device has are averaged
    to mono.

    Raises:
        AudioDeviceError: no output device, or it refuses to open.
    """

    def __init__(self, device: int | str | None = None):
        self._pyaudio, self._pa, self._noise = _open_pa()
        try:
            self._info = _resolve(self._pa, device, "output")
        except BaseException:
            self._pa.terminate()
            raise
        self.device_index = int(self._info["index"])
        self.device_name = str(self._info["name"])
        self._closed = False

    def play_wav(self, path: str | Path, stop: threading.Event | None = None) -> bool:
        """Play a WAV (any PCM format that :func:`~drivers.audio.wavfile.read_wav` reads) to the end
        or until ``stop`` is set; False when stopped early."""
        from drivers.audio.wavfile import read_wav  # noqa: PLC0415 - keeps soundfile optional here
        samples, rate = read_wav(path)
        return self.play(samples, rate, stop)

    def play(self, samples: np.ndarray, rate: int, stop: threading.Event | None = None) -> bool:
        """Play ``(n,)`` or ``(n, channels)`` PCM (int or float) at ``rate`` Hz; returns when the
        device has played it (the stream is drained before it is closed), or as soon as ``stop``
        is set (what is still buffered is discarded: Pa_CloseStream on an active stream aborts it).
        Returns False when stopped early."""
        if self._closed:
            raise AudioDeviceError("Playback is closed")
        x = to_float32(np.asarray(samples))
        if x.ndim == 1:
            x = x[:, None]
        max_out = int(self._info["maxOutputChannels"])
        if x.shape[1] > max_out:
            x = x.mean(axis=1, keepdims=True)
        rate = int(rate)
        pcm_rate = rate
        if not self._rate_ok(rate, x.shape[1]):
            import soxr  # noqa: PLC0415
            pcm_rate = int(round(self._info["defaultSampleRate"]))
            x = soxr.resample(x, rate, pcm_rate, quality="HQ")
            x = x[:, None] if x.ndim == 1 else x
        pcm = np.clip(np.round(x * 32767.0), -32768, 32767).astype(np.int16)
        with _stderr_captured() as err:
            try:
                stream = self._pa.open(format=self._pyaudio.paInt16, channels=pcm.shape[1], rate=pcm_rate,
                                       output=True, output_device_index=self.device_index,
                                       frames_per_buffer=FRAMES_PER_BUFFER)
                open_error = None
            except Exception as e:
                open_error = e
        if open_error is not None:
            raise AudioDeviceError(
                f"cannot open playback {_describe(self._info)} at {pcm_rate} Hz x {pcm.shape[1]} ch "
                f"({open_error}){_tail(self._noise + ''.join(err))}; {_FIX_NO_OUTPUT}") from open_error
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

    def _rate_ok(self, rate: int, channels: int) -> bool:
        try:
            return bool(self._pa.is_format_supported(
                rate, output_device=self.device_index, output_channels=channels,
                output_format=self._pyaudio.paInt16))
        except ValueError:
            return False

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            with contextlib.suppress(Exception):
                self._pa.terminate()

    def __enter__(self) -> "Playback":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def play_wav(path: str | Path, device: int | str | None = None) -> None:
    """One-shot: play a WAV file on the default (or given) output device, blocking."""
    with Playback(device) as p:
        p.play_wav(path)


if __name__ == "__main__":  # python -m drivers.audio.device → the device table
    for d in list_devices():
        flags = ("in " if d["is_default_input"] else "") + ("out" if d["is_default_output"] else "")
        print(f"{d['index']:3d}  {d['name'][:40]:40s}  {d['host_api']:10s}  in={d['max_input_channels']:<3d}"
              f" out={d['max_output_channels']:<3d} {d['default_sample_rate']:6d} Hz  {flags.strip()}")
