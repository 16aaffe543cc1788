"""C18 speaker lost mid-reply: the sound server (the player process) disappears in the middle of a
reply and a new one comes back 5 s later.

Right behaviour: the failed playback is noticed at once (long before the reply would have ended), the
speaker stops being busy, so the pipeline goes back to listening (it asks ``busy()`` every frame;
playback runs on its own thread, so frames never wait for it); the reply is retried once on a reopened
output, else logged as not spoken; the next reply plays on the new server without a restart.

Real parts: a private PulseAudio server (tests/pulse.py) SIGKILLed mid-reply, PortAudio through
ALSA's pulse plugin in a child process running :class:`DeviceSpeaker` over :class:`Playback`; the
child reaches the server through a symlinked socket path that the test points at the new server.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from drivers.audio import write_wav
from tests.helpers import REPO
from tests.pulse import MONITOR, pulse_server

pytestmark = pytest.mark.skipif(shutil.which("pulseaudio") is None, reason="needs pulseaudio")

REPLY_S = 6.0
CHILD = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
from drivers.audio.playback import Playback
from edge.stages.tts.speaker import DeviceSpeaker
from pathlib import Path
sp = DeviceSpeaker(Playback())
def say(**kw):
    print(json.dumps(kw), flush=True)
sp.queue(Path(sys.argv[2]), 0)
say(event="playing", t=time.monotonic())
while sp.busy(0):
    time.sleep(0.005)
say(event="idle", t=time.monotonic(), lost=sp.lost, lost_events=sp.lost_events, not_spoken=[str(p) for p in sp.not_spoken])
sys.stdin.readline()  # the new server is up
sp.queue(Path(sys.argv[3]), 0)
while sp.busy(0):
    time.sleep(0.005)
say(event="done", lost=sp.lost, lost_events=sp.lost_events, not_spoken=[str(p) for p in sp.not_spoken])
'''


def tone(path: Path, seconds: float, hz: float) -> Path:
    t = np.arange(int(seconds * 16000)) / 16000
    return write_wav(path, (np.sin(2 * np.pi * hz * t) * 8000).astype(np.int16), 16000)


def daemon_pid(env: dict) -> int:
    """The pulseaudio daemon that tests/pulse.py started for ``env`` (its runtime path is unique)."""
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if not (d / "cmdline").read_bytes().split(b"\0")[0].endswith(b"pulseaudio"):
                continue
            if f"PULSE_RUNTIME_PATH={env['PULSE_RUNTIME_PATH']}".encode() in (d / "environ").read_bytes():
                return int(d.name)
        except OSError:
            continue
    raise AssertionError("the test's pulseaudio daemon was not found")


def socket_of(env: dict) -> str:
    return env["PULSE_SERVER"].removeprefix("unix:")


def test_the_speaker_lost_mid_reply_is_noticed_and_the_next_reply_plays(tmp_path):
    long_reply, next_reply = tone(tmp_path / "reply-1.wav", REPLY_S, 440), tone(tmp_path / "reply-2.wav", 1.5, 660)
    link_dir = Path(tempfile.mkdtemp(prefix="edge-c18-", dir="/tmp"))
    link = link_dir / "native"
    child = None
    try:
        with pulse_server(tmp_path / "pa1") as env1:
            os.symlink(socket_of(env1), link)
            env = {**env1, "PULSE_SERVER": f"unix:{link}", "PYTHONPATH": str(REPO)}
            child = subprocess.Popen([sys.executable, "-c", CHILD, str(REPO), str(long_reply), str(next_reply)],
                                     env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
            started = json.loads(child.stdout.readline())
            assert started["event"] == "playing", started
            time.sleep(1.0)  # one second into the reply
            killed_at = time.monotonic()
            os.kill(daemon_pid(env1), signal.SIGKILL)
            idle = json.loads(child.stdout.readline())
        assert idle["event"] == "idle" and idle["lost"] and idle["lost_events"] == 1, idle
        noticed_s = idle["t"] - killed_at
        print(f"\nplayback failure noticed {noticed_s:.3f} s after the sound server died")
        # noticed long before the reply would have ended (it had ~5 s left): the loop was not held
        assert idle["t"] < started["t"] + REPLY_S - 2.0, (idle, started)
        assert idle["not_spoken"] == [str(long_reply)]  # the retry failed too: logged as not spoken
        time.sleep(max(0.0, 5.0 - (time.monotonic() - killed_at)))  # the new server comes 5 s later
        with pulse_server(tmp_path / "pa2") as env2:
            os.unlink(link)
            os.symlink(socket_of(env2), link)
            rec = subprocess.Popen(["parec", "-d", MONITOR, "--raw", "--format=s16le", "--channels=1", "--rate=16000"],
                                   env=env2, stdout=subprocess.PIPE)
            try:
                time.sleep(0.3)
                child.stdin.write("go\n")
                child.stdin.flush()
                done = json.loads(child.stdout.readline())
                time.sleep(0.3)
            finally:
                rec.send_signal(signal.SIGINT)
                heard = np.frombuffer(rec.communicate(timeout=30)[0], dtype=np.int16)
        assert done["event"] == "done" and not done["lost"] and done["not_spoken"] == [str(long_reply)], done
        loud = np.sqrt(np.mean(heard.astype(np.float64) ** 2)) if len(heard) else 0.0
        assert loud > 1000, f"the next reply was not heard on the new server (RMS {loud:.0f})"
        assert child.wait(timeout=30) == 0, child.stderr.read()
    finally:
        if child is not None and child.poll() is None:
            child.kill()
        shutil.rmtree(link_dir, ignore_errors=True)
