"""Sound devices through PortAudio (the ``pyaudio`` package): opening PortAudio quietly, listing the
devices, resolving a device spec to one, and its native capture format. The errors of live audio
(:class:`AudioDeviceError`, :class:`DeviceLostError`) are defined here, under
:mod:`drivers.audio.capture` and :mod:`drivers.audio.playback`.

PortAudio reads its device list when ``pyaudio.PyAudio()`` is created, and ALSA reads its
configuration (``~/.asoundrc``, ``PULSE_SERVER`` for the pulse plugin) at the same time, so the
environment must be final before a capture, a playback or :func:`list_devices` call.
On a machine where PulseAudio runs, ALSA's ``default`` device goes to PulseAudio through the
libasound2-plugins hook ``/etc/alsa/conf.d/99-pulse.conf`` (it is only used when the server
answers); otherwise ``default`` is the first sound card.

``pyaudio`` is imported inside :func:`open_portaudio`, so the rest of :mod:`drivers.audio` works
without it. ALSA's and JACK's probe messages on stderr ("Unknown PCM cards.pcm.rear", "jack server
is not running") are silenced unless ``EDGE_AUDIO_DEBUG=1``; when opening fails, the silenced text
is put into the :class:`AudioDeviceError` message instead.

``python -m drivers.audio.devices`` prints the device table.
"""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import math
import os
import tempfile
from typing import Any, Iterator

from edge.errors import UserError

FRAMES_PER_BUFFER = 1024   # device samples per PortAudio callback or write (~21 ms at 48 kHz)
MAX_CAPTURE_CHANNELS = 2   # more channels are averaged away anyway

FIX_NO_INPUT = ("check `arecord -l`, that the service user is in the 'audio' group, and PULSE_SERVER "
                "(and that PulseAudio is running) if capture goes through PulseAudio")
FIX_NO_OUTPUT = ("check `aplay -l`, that the service user is in the 'audio' group, and PULSE_SERVER "
                 "(and that PulseAudio is running) if playback goes through PulseAudio")
LIST_HINT = "`python -m drivers.audio.devices` lists them"


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
def stderr_captured() -> Iterator[list[str]]:
    """Redirect file descriptor 2 (C libraries write there directly) into a temp file for the block;
    yields a list that receives the captured text when the block ends. With ``EDGE_AUDIO_DEBUG=1``
    nothing is redirected (the list stays empty)."""
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


def library_messages(text: str, lines: int = 6) -> str:
    """The last ``lines`` non-empty lines of silenced library output, as a ``"; library messages:
    ..."`` suffix for an error message ("" when there were none)."""
    rows = [r for r in text.strip().splitlines() if r.strip()]
    return ("; library messages: " + " | ".join(rows[-lines:])) if rows else ""


def _pyaudio() -> Any:
    try:
        import pyaudio  # lazy on purpose: drivers.audio works without it
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise AudioDeviceError(
            f"live audio needs the 'pyaudio' package ({e}); install it with "
            "`pip install pyaudio` (build dependency: apt-get install portaudio19-dev)") from e
    return pyaudio


def open_portaudio() -> tuple[Any, Any, str]:
    """A fresh PortAudio instance (it reads the device list now) → ``(pyaudio module, PyAudio
    instance, silenced init messages)``; the caller terminates the instance.

    Raises:
        AudioDeviceError: pyaudio missing or PortAudio cannot initialise.
    """
    pyaudio = _pyaudio()
    os.environ.setdefault("JACK_NO_START_SERVER", "1")  # never spawn jackd while probing
    _quiet_alsa()
    with stderr_captured() as err:
        try:
            pa = pyaudio.PyAudio()
        except Exception as e:  # PortAudio could not initialise at all
            init_failed = e
        else:
            init_failed = None
    noise = "".join(err)
    if init_failed is not None:
        raise AudioDeviceError(f"PortAudio failed to initialise ({init_failed}){library_messages(noise)}; "
                               f"{FIX_NO_INPUT}") from init_failed
    return pyaudio, pa, noise


# --------------------------------------------------------------------------------------------------
# Listing and resolving devices

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
    _, pa, _ = open_portaudio()
    try:
        return _all_devices(pa)
    finally:
        pa.terminate()


def resolve_device(pa: Any, device: int | str | None, kind: str) -> dict:
    """Device spec (None = system default, int = PortAudio index, str = exact or substring of the
    name, case-insensitive) → PortAudio device info for an input (``kind="input"``) or output.

    Raises:
        AudioDeviceError: no such device, no default one, or one without channels of that kind;
            the message lists the devices there are.
    """
    chan_key = "maxInputChannels" if kind == "input" else "maxOutputChannels"
    fix = FIX_NO_INPUT if kind == "input" else FIX_NO_OUTPUT
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
                                   "run `python -m drivers.audio.devices` to list them and pick one") from e
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


def describe(info: dict) -> str:
    """``device <index> '<name>'`` for messages."""
    return f"device {info['index']} {info['name']!r}"


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
            f"capture {describe(info)} reports no usable sample rate (defaultSampleRate={raw!r}), so its "
            f"native format cannot be known; pick another device ({LIST_HINT}, set audio.input_device) "
            "or give the card a fixed rate in its ALSA configuration")
    try:
        channels = int(info.get("maxInputChannels") or 0)
    except (TypeError, ValueError):
        channels = 0
    if channels < 1:
        raise AudioDeviceError(f"{describe(info)} has no input channels; pick a capture device ({LIST_HINT})")
    return int(round(rate)), min(channels, MAX_CAPTURE_CHANNELS)


if __name__ == "__main__":  # python -m drivers.audio.devices → the device table
    for d in list_devices():
        flags = ("in " if d["is_default_input"] else "") + ("out" if d["is_default_output"] else "")
        print(f"{d['index']:3d}  {d['name'][:40]:40s}  {d['host_api']:10s}  in={d['max_input_channels']:<3d}"
              f" out={d['max_output_channels']:<3d} {d['default_sample_rate']:6d} Hz  {flags.strip()}")


def sound_server_sockets(env: dict[str, str] | None = None) -> list[str]:
    """The local sockets a sound server listens on for this process: the ``unix:`` addresses in
    ``PULSE_SERVER``, else PulseAudio's ``native`` socket (``$PULSE_RUNTIME_PATH`` or
    ``$XDG_RUNTIME_DIR/pulse``); and PipeWire's ``$XDG_RUNTIME_DIR/pipewire-0``."""
    env = os.environ if env is None else env
    paths = [a.removeprefix("unix:") for a in env.get("PULSE_SERVER", "").split()
             if a.startswith(("unix:", "/"))]
    runtime = env.get("XDG_RUNTIME_DIR")
    if not paths:
        pulse_dir = env.get("PULSE_RUNTIME_PATH") or (os.path.join(runtime, "pulse") if runtime else None)
        if pulse_dir:
            paths.append(os.path.join(pulse_dir, "native"))
    if runtime:
        paths.append(os.path.join(runtime, "pipewire-0"))
    return paths


def sound_server_signature(paths: list[str]) -> tuple:
    """Which of ``paths`` exist now, as ``(device, inode, ctime ns)`` each (None: absent); a
    server that starts creates its socket anew, so the signature changes when one comes back.
    A few ``stat`` calls: cheap enough to poll several times a second."""
    sig = []
    for p in paths:
        try:
            st = os.stat(p)  # through a symbolic link: the socket it names now
            sig.append((st.st_dev, st.st_ino, st.st_ctime_ns))
        except OSError:
            sig.append(None)
    return tuple(sig)
