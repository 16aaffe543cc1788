"""Live capture/playback through PortAudio → ALSA pulse plugin → a private PulseAudio null sink.

PortAudio reads ALSA's configuration and PULSE_SERVER when ``pyaudio.PyAudio()`` is created, so
the code under test runs in a child process started with the fixture's environment.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from drivers.audio.convert import SAMPLE_RATE
from drivers.audio.wavfile import read_wav, wav_frames

REPO = Path(__file__).resolve().parents[1]
WAV = Path(__file__).resolve().parents[2] / "shared/audio/sessions/query_m8_bolts.wav"

pytestmark = pytest.mark.skipif(not WAV.exists(), reason=f"test recording {WAV} is missing")


def _run_child(code: str, env: dict, *args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (PyAudio initialised with ``env``) from the repo root;
    its last stdout line must be JSON."""
    env = dict(env, PYTHONPATH=str(REPO) + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""))
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"child failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r


def _last_json(r: subprocess.CompletedProcess) -> dict:
    return json.loads(r.stdout.strip().splitlines()[-1])


def _source_16k() -> np.ndarray:
    return np.concatenate(list(wav_frames(WAV))).astype(np.float64)


def _best_correlation(captured: np.ndarray, source: np.ndarray) -> tuple[float, int]:
    """Peak normalised cross-correlation of ``captured`` against ``source`` (both 16 kHz) and the lag
    (samples of ``captured`` before the source starts; may be negative). The overlap at the peak lag
    is compared with Pearson's r, so the value is in [-1, 1] and independent of gain."""
    y = captured.astype(np.float64) - captured.mean()
    x = source - source.mean()
    n = len(x) + len(y) - 1
    nfft = 1 << (n - 1).bit_length()
    xc = np.fft.irfft(np.fft.rfft(y, nfft) * np.conj(np.fft.rfft(x, nfft)), nfft)
    lags = np.concatenate([np.arange(0, len(y)), np.arange(-(len(x) - 1), 0)])
    vals = np.concatenate([xc[:len(y)], xc[nfft - (len(x) - 1):]])
    lag = int(lags[np.argmax(vals)])  # y[k + lag] ~ x[k]
    if lag >= 0:
        a, b = y[lag:], x
    else:
        a, b = y, x[-lag:]
    m = min(len(a), len(b))
    a, b = a[:m], b[:m]
    r = float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-12))
    return r, lag


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x.astype(np.float64))))) if len(x) else 0.0


CAPTURE_CHILD = """
    import json, subprocess, sys, time
    import numpy as np
    from drivers.audio.capture import Capture
    wav, out, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    with Capture() as cap:
        frames = cap.frames(timeout=5.0)
        t0 = time.monotonic()
        got = [next(frames)]              # the device is live: now play into the sink
        first_frame_s = time.monotonic() - t0
        player = subprocess.Popen(["paplay", wav])
        want = int(seconds * 16000)
        while sum(len(f) for f in got) < want:
            got.append(next(frames))
        player.terminate(); player.wait()
        np.save(out, np.concatenate(got))
        print(json.dumps({"rate": cap.rate, "channels": cap.channels, "device": cap.device_name,
                          "overflows": cap.overflows, "xruns": cap.xruns,
                          "first_frame_s": first_frame_s, "shapes": sorted({f.shape for f in got}),
                          "dtypes": sorted({str(f.dtype) for f in got})}, default=list))
"""


def test_capture_records_what_the_sink_plays(pulse_null_sink, tmp_path):
    out = tmp_path / "captured.npy"
    t = time.monotonic()
    info = _last_json(_run_child(CAPTURE_CHILD, pulse_null_sink, str(WAV), str(out), "3.2"))
    elapsed = time.monotonic() - t
    captured = np.load(out)

    # the device was opened at its native format and converted to pipeline frames
    assert info["rate"] > 0 and 1 <= info["channels"] <= 2, info
    assert info["shapes"] == [[1280]] and info["dtypes"] == ["int16"], info
    assert info["overflows"] == 0, info
    assert info["first_frame_s"] < 1.0, info  # keep-alive stream: no 2 s idle-sink wait
    assert len(captured) >= int(3.2 * SAMPLE_RATE)
    assert elapsed < 15, f"capture of 3.2 s took {elapsed:.1f} s"

    source = _source_16k()
    rms = _rms(captured)
    assert rms > 300, f"captured audio is (near) silent: RMS {rms:.1f} of int16 full scale"
    r, lag = _best_correlation(captured, source)
    assert r > 0.5, f"captured audio does not match the played file: peak normalised xcorr {r:.3f}"
    assert abs(lag) < SAMPLE_RATE, f"implausible delay {lag / SAMPLE_RATE:.2f} s between play and capture"


PLAYBACK_CHILD = """
    import json, sys, time
    from drivers.audio.playback import Playback
    t0 = time.monotonic()
    with Playback() as p:
        p.play_wav(sys.argv[1])
        device = p.device_name
    print(json.dumps({"seconds": time.monotonic() - t0, "device": device}))
"""


def test_playback_plays_wav_to_the_end(pulse_null_sink, tmp_path):
    data, rate = read_wav(WAV)
    duration = len(data) / rate
    raw = tmp_path / "monitor.raw"
    with open(raw, "wb") as fh:  # record the sink's monitor to prove the sound reached the sink
        rec = subprocess.Popen(["parec", "--raw", "--format=s16le", "--rate=16000", "--channels=1",
                                "--latency-msec=20", "--device=edge_null.monitor"],
                               env=pulse_null_sink, stdout=fh, stderr=subprocess.PIPE)
        try:
            time.sleep(0.3)
            info = _last_json(_run_child(PLAYBACK_CHILD, pulse_null_sink, str(WAV)))
            time.sleep(0.2)
        finally:
            rec.terminate()
            rec.wait(timeout=5)
    assert info["seconds"] >= duration - 0.3, f"play_wav returned before the sound ended: {info}"
    assert info["seconds"] < duration + 5, info
    recorded = np.frombuffer(raw.read_bytes()[: (raw.stat().st_size // 2) * 2], dtype=np.int16)
    assert _rms(recorded) > 300, "nothing reached the null sink"
    r, _ = _best_correlation(recorded, _source_16k())
    assert r > 0.5, f"what reached the sink does not match the file: xcorr {r:.3f}"


LIST_CHILD = """
    import json
    from drivers.audio.capture import Capture
    from drivers.audio.devices import AudioDeviceError, list_devices
    try:
        Capture("no-such-device-xyz")
        err = None
    except AudioDeviceError as e:
        err = str(e)
    print(json.dumps({"devices": list_devices(), "error": err}))
"""


def test_list_devices_and_errors(pulse_null_sink):
    out = _last_json(_run_child(LIST_CHILD, pulse_null_sink))
    devices = out["devices"]
    inputs = [d for d in devices if d["max_input_channels"] > 0]
    assert inputs, f"no input device listed: {devices}"
    assert sum(d["is_default_input"] for d in devices) == 1, devices
    for d in devices:
        assert {"index", "name", "max_input_channels", "max_output_channels", "default_sample_rate"} <= d.keys()
        assert d["default_sample_rate"] > 0
    assert out["error"] and "no-such-device-xyz" in out["error"], out


OVERFLOW_CHILD = """
    import json, time
    from drivers.audio.capture import Capture
    with Capture(max_queued=4) as cap:
        time.sleep(1.0)                   # consumer stalls: ~43 chunks arrive, 4 fit
        stalled = cap.overflows
        frames = cap.frames(timeout=5.0)
        n = sum(len(next(frames)) for _ in range(5))
    print(json.dumps({"overflows": stalled, "after_close": cap.active, "samples": n}))
"""


def test_capture_drops_oldest_when_consumer_stalls(pulse_null_sink):
    out = _last_json(_run_child(OVERFLOW_CHILD, pulse_null_sink))
    assert out["overflows"] > 0, out
    assert out["samples"] == 5 * 1280 and out["after_close"] is False, out
