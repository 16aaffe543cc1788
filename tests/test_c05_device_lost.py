"""Case C05 (shared/cases/README.md): the input device disappears mid-capture and comes back later,
possibly at another native rate.

Right behaviour: "microphone lost" reported once, no busy loop (the reopen attempts over the outage
stay within what the back-off schedule allows), capture reopened and the frame converter rebuilt
for the new rate (:class:`drivers.audio.capture.ResilientCapture`).

Two kinds of device:

* a stand-in sound card (tests/fakemic.py: a clock thread delivering a real recording at its
  native rate) that is unplugged and plugged back at another rate: exact, in-process checks of
  the state, the counters, the log and the frames after the gap;
* the real stack, PortAudio -> ALSA pulse plugin -> a private PulseAudio server, which is killed
  mid-capture and started again later (at another sink rate) at the same address: the child
  process capturing from it reports the loss once, retries with the back-off, reopens, and then
  hears the wake word of a session played into the new server. The outage is 4 s here instead
  of the case's 10 s (the retry schedule is configured shorter to match).
"""
from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import soxr

from drivers.audio.capture import CaptureObserver, ResilientCapture
from drivers.audio.convert import FrameConverter
from drivers.audio.devices import AudioDeviceError
from tests.fakemic import Jack
from tests.helpers import REPO, SESSIONS
from tests.pulse import pulse_server

WAV = SESSIONS / "query_m8_bolts.wav"
LOGGER = "drivers.audio.capture"

pytestmark = pytest.mark.skipif(not WAV.exists(), reason=f"test recording {WAV} is missing")


def session_at(rate: int, channels: int) -> np.ndarray:
    """The 16 kHz session resampled to ``rate`` Hz, ``(n, channels)`` int16 (like a card at that rate)."""
    x, sr = sf.read(str(WAV), dtype="float32")
    y = soxr.resample(x, sr, rate, quality="HQ")
    y = np.clip(np.round(y * 32767), -32768, 32767).astype(np.int16)
    return np.repeat(y[:, None], channels, axis=1)


def max_attempts(outage_s: float, initial: float, maximum: float) -> int:
    """Most open attempts the back-off allows during an outage of ``outage_s`` s: attempt k comes
    after the delays initial, 2·initial, ... (capped at ``maximum``) have passed; +1 for the attempt
    that succeeds after it."""
    t, n = 0.0, 0
    for k in itertools.count():
        t += min(initial * 2 ** k, maximum)
        if t > outage_s:
            return n + 1
        n += 1


def next_delays(messages: list[str]) -> list[float]:
    return [float(m.group(1)) for msg in messages if (m := re.search(r"next try in ([\d.]+) s", msg))]


class Consumer:
    """Pulls ``cap.frames()`` on its own thread; keeps (reopens-at-that-time, frame) pairs."""

    def __init__(self, cap: ResilientCapture):
        self.cap = cap
        self.frames: list[tuple[int, np.ndarray]] = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        for f in self.cap.frames():
            self.frames.append((self.cap.reopens, f))

    def wait(self, pred, timeout: float = 30.0) -> None:
        """Hang guard: wait until ``pred()`` holds."""
        deadline = time.monotonic() + timeout
        while not pred():
            assert time.monotonic() < deadline, f"timed out; state {self.cap.status()}"
            time.sleep(0.02)


class Notes(CaptureObserver):
    """Keeps what the capture told its observer, in order; counts the idle calls."""

    def __init__(self):
        self.events: list[tuple] = []
        self.idles = 0

    def open_failed(self, err, attempt, next_try_s):
        self.events.append(("open_failed", attempt, next_try_s, str(err)))

    def found(self, cap):
        self.events.append(("found", cap.rate))

    def lost(self, cap, err):
        self.events.append(("lost", type(err).__name__))

    def closed(self, cap):
        self.events.append(("closed",))

    def idle(self):
        self.idles += 1

    def kinds(self, start: int = 0) -> list[str]:
        return [e[0] for e in self.events[start:]]


# ------------------------------------------------------------------------------------------------
# the stand-in device: unplugged, plugged back at another native rate

INITIAL_S, MAX_S, STALL_S = 0.1, 0.8, 0.5


def test_lost_once_backoff_and_converter_rebuilt_for_the_new_rate(caplog):
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    at48, at44 = session_at(48000, 2), session_at(44100, 1)
    jack = Jack(48000, 2, at48, speed=4.0)
    cap = ResilientCapture(opener=lambda: jack.open(), stall_timeout_s=STALL_S, retry_initial_s=INITIAL_S,
                           retry_max_s=MAX_S)
    assert (cap.state, cap.rate, cap.channels, cap.converter.in_rate) == ("ok", 48000, 2, 48000)
    first_converter = cap.converter
    c = Consumer(cap)
    try:
        c.wait(lambda: len(c.frames) >= 20)
        jack.unplug()
        t_lost = time.monotonic()
        c.wait(lambda: cap.state == "lost")
        opens_at_loss = jack.opens
        time.sleep(3.0)                       # the outage
        outage = time.monotonic() - t_lost
        jack.plug(44100, 1, at44)
        c.wait(lambda: cap.state == "ok")
        c.wait(lambda: sum(r for r, _ in c.frames) >= 40)
    finally:
        cap.close()
        c.thread.join(timeout=10)
    assert not c.thread.is_alive(), "frames() did not end on close()"

    # reported once, back once
    msgs = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert sum(m.startswith("microphone lost") for m in msgs) == 1, msgs
    assert sum(m.startswith("microphone back") for m in msgs) == 1, msgs
    assert (cap.lost_events, cap.reopens) == (1, 1)
    # no busy loop: attempts within the back-off schedule, delays doubling and capped
    attempts = jack.opens - opens_at_loss
    assert 2 <= attempts <= max_attempts(outage + 0.5, INITIAL_S, MAX_S), (attempts, outage)
    delays = next_delays(msgs)
    assert delays[:3] == [0.2, 0.4, 0.8] and set(delays[3:]) <= {MAX_S}, delays
    # reopened at the new native rate, with a converter built for it
    assert (cap.rate, cap.channels) == (44100, 1)
    assert cap.converter is not first_converter
    assert (cap.converter.in_rate, cap.converter.channels) == (44100, 1)
    # the frames after the gap are exactly the 44.1 kHz device's audio through a fresh converter
    # (nothing carried over from the 48 kHz stream)
    after = [f for r, f in c.frames if r == 1]
    ref = FrameConverter(44100, 1).push(np.tile(at44, (3, 1))[: 1024 * 200])
    assert len(after) >= 40
    n = min(len(after), len(ref))
    assert np.array_equal(np.stack(after[:n]), np.stack(ref[:n]))
    assert np.abs(np.concatenate(after[:n]).astype(np.int32)).max() > 1000  # real audio, not silence


def test_a_device_that_comes_back_deaf_stays_one_outage(caplog):
    """It reopens but sends nothing: the stall timeout makes it lost again, still ONE report, the
    back-off goes on, and the next open works."""
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    jack = Jack(16000, 1, session_at(16000, 1), speed=4.0)
    notes = Notes()
    cap = ResilientCapture(opener=lambda: jack.open(), stall_timeout_s=STALL_S, retry_initial_s=INITIAL_S,
                           retry_max_s=MAX_S, observer=notes)
    c = Consumer(cap)
    try:
        c.wait(lambda: len(c.frames) >= 5)
        jack.unplug()
        c.wait(lambda: cap.state == "lost")
        time.sleep(0.5)
        opens = jack.opens
        jack.plug(16000, 1, session_at(16000, 1), deaf_s=5.0)  # the next open delivers nothing
        c.wait(lambda: jack.opens >= opens + 2)                # opened deaf, then again
        c.wait(lambda: cap.state == "ok")
        c.wait(lambda: any(r == 1 for r, _ in c.frames))
    finally:
        cap.close()
        c.thread.join(timeout=10)
    msgs = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert sum(m.startswith("microphone lost") for m in msgs) == 1, msgs
    assert sum(m.startswith("microphone back") for m in msgs) == 1, msgs
    assert (cap.lost_events, cap.reopens, cap.state) == (1, 1, "ok")
    assert "delivered no audio for 0.5 s" in cap.last_error, cap.last_error  # the deaf open was noticed
    # the observer (the live service's state file) heard the same: one loss, the deaf open as a failed
    # attempt of that outage, found twice (at start and after the outage)
    assert notes.kinds().count("lost") == 1 and notes.kinds().count("found") == 2, notes.events
    assert any(e[0] == "open_failed" and "delivered no audio" in e[3] for e in notes.events), notes.events
    assert notes.kinds()[-1] == "closed"


def test_close_ends_a_loop_that_waits_for_the_device(caplog):
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    jack = Jack(16000, 1)
    jack.unplug()
    cap = ResilientCapture(opener=lambda: jack.open(), retry_initial_s=0.05, retry_max_s=5.0,
                           wait_for_device=True)
    assert cap.state == "waiting" and cap.rate is None and jack.opens == 0
    c = Consumer(cap)
    c.wait(lambda: jack.opens >= 4)  # at once, then after 0.05, 0.1, 0.2 s
    cap.close()                      # while it sleeps up to 0.4 s before the next attempt
    c.thread.join(timeout=10)
    assert not c.thread.is_alive()
    assert cap.state == "waiting" and cap.lost_events == 0 and c.frames == []
    msgs = [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno >= logging.WARNING]
    assert len(msgs) == 1 and msgs[0].startswith("waiting for a microphone"), msgs
    assert next_delays([r.getMessage() for r in caplog.records])[:3] == [0.05, 0.1, 0.2]


def test_a_late_device_is_used_when_it_appears(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    jack = Jack(22050, 2, session_at(22050, 2), speed=4.0)
    jack.unplug()
    cap = ResilientCapture(opener=lambda: jack.open(), retry_initial_s=0.05, retry_max_s=0.2,
                           wait_for_device=True)
    c = Consumer(cap)
    try:
        c.wait(lambda: jack.opens >= 2)
        jack.plug(22050, 2, session_at(22050, 2))
        c.wait(lambda: len(c.frames) >= 10)
    finally:
        cap.close()
        c.thread.join(timeout=10)
    assert (cap.state, cap.rate, cap.channels, cap.converter.in_rate) == ("ok", 22050, 2, 22050)
    assert (cap.lost_events, cap.reopens) == (0, 0)  # found, not lost and back
    msgs = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert sum(m.startswith("microphone found") for m in msgs) == 1, msgs


def test_open_and_device_frames_take_one_device_at_a_time_and_the_observer_hears_each_step():
    """What the live service uses: open() waits for a device (the observer's idle() called meanwhile),
    device_frames() ends when that device is lost; each failed attempt is told with its number within
    its wait and the next delay, then the device found, the loss (once) and the close."""
    jack = Jack(16000, 1, session_at(16000, 1), speed=4.0)
    jack.unplug()
    notes = Notes()
    cap = ResilientCapture(opener=lambda: jack.open(), stall_timeout_s=STALL_S, retry_initial_s=INITIAL_S,
                           retry_max_s=MAX_S, wait_for_device=True, observer=notes)

    def plug_after_failures(n: int, rate: int) -> threading.Thread:
        start = len(notes.events)

        def run():
            deadline = time.monotonic() + 30
            while notes.kinds(start).count("open_failed") < n and time.monotonic() < deadline:
                time.sleep(0.01)
            jack.plug(rate, 1, session_at(rate, 1))
        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t

    try:
        plug_after_failures(3, 16000)
        assert cap.open()  # returns once the device is there
        waits = [e for e in notes.events if e[0] == "open_failed"]
        assert len(waits) >= 3 and [e[1] for e in waits] == list(range(1, len(waits) + 1)), notes.events
        assert [e[2] for e in waits][:3] == [INITIAL_S, 2 * INITIAL_S, 4 * INITIAL_S], notes.events
        assert notes.idles >= 3  # at least once per wait between attempts
        assert cap.state == "waiting" and "found" not in notes.kinds()  # open, but no chunk yet
        first = []
        for f in cap.device_frames():
            first.append(f)
            if len(first) == 10:
                jack.unplug()
        assert len(first) >= 10 and cap.state == "lost" and cap.lost_events == 1  # ended at the loss
        assert notes.kinds(len(waits)) == ["found", "lost"] and notes.events[len(waits)] == ("found", 16000)
        mark = len(notes.events)
        plug_after_failures(2, 22050)
        assert cap.open()
        second = list(itertools.islice(cap.device_frames(), 10))
    finally:
        cap.close()
    assert len(second) == 10 and (cap.state, cap.reopens, cap.rate) == ("ok", 1, 22050)
    after = notes.events[mark:]
    fails = [e for e in after if e[0] == "open_failed"]
    assert len(fails) >= 2 and [e[1] for e in fails] == list(range(1, len(fails) + 1)), after  # counted anew
    assert [e[0] for e in after[len(fails):]] == ["found", "closed"] and after[len(fails)] == ("found", 22050)


def test_without_waiting_a_missing_device_fails_at_start():
    jack = Jack(16000, 1)
    jack.unplug()
    with pytest.raises(AudioDeviceError, match="fake-mic"):
        ResilientCapture(opener=lambda: jack.open())


@pytest.mark.parametrize("kw", [{"stall_timeout_s": 0}, {"retry_initial_s": -1}, {"retry_max_s": 0}])
def test_timeouts_must_be_positive(kw):
    with pytest.raises(ValueError, match="must be > 0"):
        ResilientCapture(opener=lambda: None, **kw)


# ------------------------------------------------------------------------------------------------
# the real stack: the PulseAudio server dies mid-capture and comes back 4 s later at another rate

LIVE_INITIAL_S, LIVE_MAX_S, LIVE_STALL_S, OUTAGE_S = 0.25, 1.0, 1.0, 4.0

CHILD = """
    import json, logging, sys, threading, time
    from drivers.audio.capture import CaptureObserver, ResilientCapture
    from drivers.audio.devices import list_devices
    from edge.stages.wake import WakeWord

    msgs = []
    class Keep(logging.Handler):
        def emit(self, r):
            msgs.append(r.getMessage())
    lg = logging.getLogger("drivers.audio.capture")
    lg.addHandler(Keep())
    lg.setLevel(logging.DEBUG)

    def say(**kw):
        print(json.dumps(kw), flush=True)

    initial, maximum, stall = (float(a) for a in sys.argv[1:4])
    wake = WakeWord([("hey_mycroft", 0.5)], 2000)
    cap = ResilientCapture(retry_initial_s=initial, retry_max_s=maximum, stall_timeout_s=stall)
    before = {"rate": cap.rate, "channels": cap.channels, "converter_id": id(cap.converter),
              "converter_rate": cap.converter.in_rate}
    states = [cap.state]

    def watch():
        while True:
            if cap.state != states[-1]:
                states.append(cap.state)
                say(state=cap.state, attempts=cap.open_attempts)
            time.sleep(0.02)
    threading.Thread(target=watch, daemon=True).start()

    detected = None
    for i, frame in enumerate(cap.frames()):
        if i == 0:
            say(ready=True, **before)
        d = wake.process(frame)
        if d is not None and cap.reopens == 1:
            detected = d.wake_word
            say(wake=detected)
            break
    after = {"rate": cap.rate, "channels": cap.channels, "converter_id": id(cap.converter),
             "converter_rate": cap.converter.in_rate, "converter_channels": cap.converter.channels}
    cap.close()
    default = next(d for d in list_devices() if d["is_default_input"])
    say(done=True, before=before, after=after, states=states, status=cap.status(), messages=msgs,
        device_default_rate=default["default_sample_rate"], wake=detected)
"""


def _pump(stream, q: queue.Queue) -> None:
    for line in iter(stream.readline, ""):
        q.put(line)
    q.put(None)


def _until(q: queue.Queue, pred, timeout: float, seen: list) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        line = q.get(timeout=max(0.1, deadline - time.monotonic()))
        assert line is not None, "the capture process ended early:\n" + "".join(seen)
        seen.append(line)
        if line.startswith("{"):
            msg = json.loads(line)
            if pred(msg):
                return msg


def live_outage(tmp_path, initial: float, maximum: float, outage_s: float) -> tuple[dict, float]:
    """A child capturing from a private PulseAudio (back-off ``initial``..``maximum`` s) while the
    server is stopped for ``outage_s`` s and started again at another rate, then a session with the
    wake word played into it: ``(the child's final report, the outage in s)``."""
    if shutil.which("pulseaudio") is None:
        pytest.skip("the 'pulseaudio' binary is not installed (apt-get install pulseaudio)")
    stable = Path(tempfile.mkdtemp(prefix="edge-mic-", dir="/tmp"))  # the address the child is given
    home, run = tmp_path / "home", tmp_path / "run"
    home.mkdir()
    run.mkdir(mode=0o700)
    (home / ".asoundrc").write_text("pcm.!default {\n    type pulse\n}\nctl.!default {\n    type pulse\n}\n")
    (tmp_path / "client.conf").write_text("autospawn = no\n")  # libpulse must not start a server itself
    env = {k: v for k, v in os.environ.items() if not k.startswith("PULSE_")}
    env.update(HOME=str(home), XDG_RUNTIME_DIR=str(run), PULSE_SERVER=f"unix:{stable}/native",
               PULSE_CLIENTCONFIG=str(tmp_path / "client.conf"), JACK_NO_START_SERVER="1", PYTHONUNBUFFERED="1",
               PYTHONPATH=str(REPO))
    link = stable / "native"
    out_q, seen = queue.Queue(), []
    proc = None
    try:
        with contextlib.ExitStack() as first:
            penv1 = first.enter_context(pulse_server(tmp_path / "pulse1", rate=48000))
            os.symlink(penv1["PULSE_SERVER"].removeprefix("unix:"), link)
            proc = subprocess.Popen(
                [sys.executable, "-c", textwrap.dedent(CHILD), str(initial), str(maximum), str(LIVE_STALL_S)],
                cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            threading.Thread(target=_pump, args=(proc.stdout, out_q), daemon=True).start()
            _until(out_q, lambda m: m.get("ready"), 90, seen)
        # the server is gone (its context ended: SIGTERM to pulseaudio and its keep-alive stream)
        t_lost = time.monotonic()
        link.unlink()
        _until(out_q, lambda m: m.get("state") == "lost", 15, seen)
        time.sleep(max(0.0, outage_s - (time.monotonic() - t_lost)))
        with pulse_server(tmp_path / "pulse2", rate=44100) as penv2:
            outage = time.monotonic() - t_lost
            os.symlink(penv2["PULSE_SERVER"].removeprefix("unix:"), link)
            _until(out_q, lambda m: m.get("state") == "ok", 30, seen)
            subprocess.run(["paplay", str(WAV)], env=penv2, check=True, timeout=60)
            _until(out_q, lambda m: "wake" in m, 30, seen)
            done = _until(out_q, lambda m: m.get("done"), 30, seen)
            proc.wait(timeout=30)
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        link.unlink(missing_ok=True)
        shutil.rmtree(stable, ignore_errors=True)
    assert proc.returncode == 0, proc.stderr.read()[-3000:]
    return done, outage



def test_pulseaudio_killed_and_restarted_at_another_rate(tmp_path):
    done, outage = live_outage(tmp_path, LIVE_INITIAL_S, LIVE_MAX_S, OUTAGE_S)
    st, msgs = done["status"], done["messages"]
    # reported once, came back once, the wake word was heard on the new server
    assert done["states"] == ["ok", "lost", "ok"], done["states"]
    assert sum(m.startswith("microphone lost") for m in msgs) == 1, msgs
    assert sum(m.startswith("microphone back") for m in msgs) == 1, msgs
    assert (st["lost_events"], st["reopens"]) == (1, 1), st
    assert done["wake"] == "hey_mycroft"
    # no busy loop: the attempts fit the back-off schedule over the outage
    attempts = st["open_attempts"] - 1
    assert 2 <= attempts <= max_attempts(outage + 1.0, LIVE_INITIAL_S, LIVE_MAX_S) + 1, (attempts, outage, msgs)
    delays = next_delays(msgs)
    assert delays == sorted(delays) and max(delays) <= LIVE_MAX_S and delays[0] == 2 * LIVE_INITIAL_S, delays
    # reopened at the device's native rate as PortAudio reports it now, with a new converter for it
    before, after = done["before"], done["after"]
    assert after["converter_id"] != before["converter_id"]
    assert after["rate"] == done["device_default_rate"] == after["converter_rate"], done
    assert after["converter_channels"] == after["channels"] == 2


def test_capture_is_back_when_the_sound_server_is_back_not_when_the_back_off_says(tmp_path):
    # a long back-off (1 s doubling to 60 s): after a 4.5 s outage its attempts come at 1, 3, 7, 15 s,
    # so by the schedule alone the microphone would be back 2.5 s after the server; the server's
    # socket appearing makes the next attempt at once
    done, outage = live_outage(tmp_path, 1.0, 60.0, 4.5)
    st, msgs = done["status"], done["messages"]
    assert done["states"] == ["ok", "lost", "ok"] and done["wake"] == "hey_mycroft", done["states"]
    assert st["server_wakeups"] == 1, st
    back = [m for m in msgs if m.startswith("microphone back")]
    assert len(back) == 1 and "(1 on the sound server's return)" in back[0], msgs
    # the attempt that succeeded was the one on the server's return, not the schedule's next: the
    # schedule's attempts before it all fell inside the outage (no busy loop either)
    scheduled = st["open_attempts"] - 1 - st["server_wakeups"]
    assert 1 <= scheduled <= max_attempts(outage, 1.0, 60.0), (scheduled, outage, msgs)
    woke = next(i for i, m in enumerate(msgs) if m.startswith("sound server socket back"))
    assert woke < msgs.index(back[0]) and not any("attempt" in m and "failed" in m for m in msgs[woke:]), msgs
