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
import os
import queue
import tempfile
import threading
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from drivers.audio.convert import FrameConverter, to_float32

FRAMES_PER_BUFFER = 1024   # device samples per PortAudio callback (~21 ms at 48 kHz)
MAX_QUEUED_CHUNKS = 256    # ~5 s at 48 kHz / 1024; beyond this the oldest chunk is dropped
MAX_CAPTURE_CHANNELS = 2   # more channels are averaged away anyway

_FIX_NO_INPUT = ("check `arecord -l`, that the service user is in the 'audio' group, and PULSE_SERVER "
                 "(and that PulseAudio is running) if capture goes through PulseAudio")
_FIX_NO_OUTPUT = ("check `aplay -l`, that the service user is in the 'audio' group, and PULSE_SERVER "
                  "(and that PulseAudio is running) if playback goes through PulseAudio")


class AudioDeviceError(RuntimeError):
    """A sound device that cannot be found or opened; the message names the device and the fix."""


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


class Capture:
    """Live input: the device at its native rate/channels, delivered as 16 kHz mono int16 frames.

    PortAudio's callback thread puts each raw int16 chunk into a bounded queue; it never blocks.
    When the queue is full (the consumer fell behind by ``max_queued`` chunks) the OLDEST chunk is
    dropped and ``overflows`` is incremented, so latency stays bounded; ``xruns`` counts the
    overflows PortAudio itself reports (the driver lost samples before we saw them).

    Args:
        device: ``None`` = system default input (ALSA ``default``, i.e. PulseAudio when it runs),
            an ``int`` PortAudio index, or a ``str`` (exact name, else case-insensitive substring).
        frames_per_buffer: device samples per callback.
        max_queued: chunks held before the oldest is dropped.
    Attributes:
        rate, channels: what the device was opened with. device_name, device_index.
        overflows: chunks dropped because the consumer was too slow.
        xruns: callbacks flagged with ``paInputOverflow`` by PortAudio.
    Raises:
        AudioDeviceError: no such device, no input device, or the device refuses to open.

    Use::

        with Capture() as cap:
            for frame in cap.frames(timeout=2.0):   # (1280,) int16 at 16 kHz
                ...
    """

    def __init__(self, device: int | str | None = None, *, frames_per_buffer: int = FRAMES_PER_BUFFER,
                 max_queued: int = MAX_QUEUED_CHUNKS):
        self.overflows = 0
        self.xruns = 0
        self._queue: queue.Queue = queue.Queue(maxsize=max(1, int(max_queued)))
        self._lock = threading.Lock()
        self._closed = False
        self._stream = None
        self._pyaudio, self._pa, noise = _open_pa()
        try:
            info = _resolve(self._pa, device, "input")
            self.device_index = int(info["index"])
            self.device_name = str(info["name"])
            self.rate = int(round(info["defaultSampleRate"]))
            self.channels = max(1, min(int(info["maxInputChannels"]), MAX_CAPTURE_CHANNELS))
            self.frames_per_buffer = int(frames_per_buffer)
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

        Raises:
            AudioDeviceError: no chunk arrived within ``timeout`` seconds (the device stalled).
        """
        while True:
            try:
                item = self._queue.get(timeout=timeout)
            except queue.Empty:
                raise AudioDeviceError(
                    f"capture device {self.device_index} {self.device_name!r} delivered no audio for "
                    f"{timeout} s; check that it is not suspended or muted (PulseAudio: "
                    "`pactl list sources short`), and PULSE_SERVER") from None
            if item is _END:
                return
            yield np.frombuffer(item, dtype=np.int16).reshape(-1, self.channels)

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
            if self._stream is not None:
                with contextlib.suppress(Exception):
                    self._stream.stop_stream()
                with contextlib.suppress(Exception):
                    self._stream.close()
        finally:
            self._stream = None
            with contextlib.suppress(Exception):
                self._pa.terminate()
            self._put(_END)

    def __enter__(self) -> "Capture":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):  # pragma: no cover - best effort
        with contextlib.suppress(Exception):
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

    def play_wav(self, path: str | Path) -> None:
        """Play a WAV (any PCM format that :func:`~drivers.audio.wavfile.read_wav` reads) to the end."""
        from drivers.audio.wavfile import read_wav  # noqa: PLC0415 - keeps soundfile optional here
        samples, rate = read_wav(path)
        self.play(samples, rate)

    def play(self, samples: np.ndarray, rate: int) -> None:
        """Play ``(n,)`` or ``(n, channels)`` PCM (int or float) at ``rate`` Hz; returns when the
        device has played it (the stream is drained before it is closed)."""
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
            stream.write(pcm.tobytes(), num_frames=len(pcm), exception_on_underflow=False)
            stream.stop_stream()  # Pa_StopStream plays out what is still buffered
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
