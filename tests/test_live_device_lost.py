"""Case C05 at process level: the microphone goes away while the live service runs, and comes back.

A real ``edge run`` (live mode) captures from a private PulseAudio server (tests/pulse.py) reached
through a stable socket address (a symlink the test points at the server). The server is killed
mid-capture (the sound server going away, as when a USB microphone's card disappears) and another
one is started at the same address. The service must stay up, say ``capture device lost`` once
(stderr) and ``waiting for capture device`` in STATUS= while its watchdog pings go on, reopen the
device with the back-off, and answer a spoken session on the new server; ``edge status --json``
(another process) shows the loss and the reopen in the state file.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.helpers import REPO, SESSION_WAKE, SESSIONS
from tests.live import lines_until, start_edge_run, stop
from tests.pulse import pulse_server
from tests.test_notify import Listener, drain, notify_socket  # noqa: F401

INITIAL_S, MAX_S, TIMEOUT_S = 0.25, 1.0, 2.0
WAITING = "STATUS=waiting for capture device"


def _pings_after(msgs: list[str], marker: str) -> int:
    """WATCHDOG=1 messages after the last ``marker``."""
    if marker not in msgs:
        return 0
    last = len(msgs) - 1 - msgs[::-1].index(marker)
    return msgs[last:].count("WATCHDOG=1")


def test_service_reports_a_lost_microphone_reopens_it_and_answers_after(notify_socket, tmp_path):  # noqa: F811
    if shutil.which("pulseaudio") is None:
        pytest.skip("the 'pulseaudio' binary is not installed (apt-get install pulseaudio)")
    sock, npath = notify_socket
    stable = Path(tempfile.mkdtemp(prefix="edge-mic-", dir="/tmp"))  # the address the service is given
    link = stable / "native"
    home, run_dir = tmp_path / "home", tmp_path / "run"
    home.mkdir()
    run_dir.mkdir(mode=0o700)
    (home / ".asoundrc").write_text("pcm.!default {\n    type pulse\n}\nctl.!default {\n    type pulse\n}\n")
    (tmp_path / "client.conf").write_text("autospawn = no\n")  # libpulse must not start a server itself
    cfg = tmp_path / "live.yaml"
    cfg.write_text(f"board: x86-dev\n{SESSION_WAKE}store: {{path: {tmp_path / 'edge.db'}}}\n"
                   f"service: {{capture_retry_initial_s: {INITIAL_S}, capture_retry_max_s: {MAX_S}, "
                   f"capture_timeout_s: {TIMEOUT_S}}}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PULSE_", "WATCHDOG_", "JOURNAL_"))}
    env.update(PYTHONUNBUFFERED="1", HOME=str(home), XDG_RUNTIME_DIR=str(run_dir), PULSE_SERVER=f"unix:{link}",
               PULSE_CLIENTCONFIG=str(tmp_path / "client.conf"), JACK_NO_START_SERVER="1", NOTIFY_SOCKET=npath,
               WATCHDOG_USEC="1000000")
    err: list[str] = []
    proc = None
    listener = Listener(sock)
    try:
        with pulse_server(tmp_path / "pulse1") as penv1:
            os.symlink(penv1["PULSE_SERVER"].removeprefix("unix:"), link)
            proc, out_q, err_q = start_edge_run(cfg, env, tmp_path / "out")
            err += lines_until(err_q, lambda l: l.startswith("listening on"), 180)
        # the server is gone (its context ended: SIGTERM to pulseaudio and its keep-alive stream)
        link.unlink()
        err += lines_until(err_q, lambda l: l.startswith("capture device lost"), 30)
        # waiting for it: STATUS= says so and the watchdog stays fed
        listener.wait(lambda a: _pings_after(a, WAITING) >= 2, 30)
        assert proc.poll() is None, "the service exited instead of waiting for the device"
        with pulse_server(tmp_path / "pulse2", rate=44100) as penv2:
            os.symlink(penv2["PULSE_SERVER"].removeprefix("unix:"), link)
            err += lines_until(err_q, lambda l: l.startswith("listening on"), 60)
            subprocess.run(["paplay", str(SESSIONS / "query_m8_bolts.wav")], env=penv2, check=True, timeout=60)
            lines = lines_until(out_q, lambda l: '"turn_end"' in l, 90)
            status = subprocess.run([sys.executable, "-m", "edge.cli", "status", "--json", "--interval", "0",
                                     "--config", str(cfg)], cwd=REPO, env=env, capture_output=True, text=True,
                                    timeout=120)
            stop(proc)
    finally:
        if proc is not None and proc.poll() is None:
            stop(proc)
        link.unlink(missing_ok=True)
        shutil.rmtree(stable, ignore_errors=True)
    time.sleep(0.2)  # let the reader thread take the last datagram (STOPPING=1)
    msgs = listener.stop() + drain(sock)
    while not err_q.empty():
        line = err_q.get()
        if line is not None:
            err.append(line)

    # the loss said once on stderr, the device listened on twice (before and after)
    assert sum(l.startswith("capture device lost") for l in err) == 1, "".join(err)
    assert sum(l.startswith("listening on default") for l in err) == 2, "".join(err)
    # STATUS=: listening, waiting for the device, listening again, and it stopped cleanly
    waiting_at = msgs.index(WAITING)
    assert "STATUS=listening on default" in msgs[:waiting_at] and "STATUS=listening on default" in msgs[waiting_at:]
    assert msgs[-1].startswith("STOPPING=1") and proc.returncode == 0
    # a turn after the reopen works
    reply = next(json.loads(l) for l in lines if '"reply"' in l)
    assert "140" in reply["text"]
    # the state file, read by another process while the service ran: the loss and the reopen
    assert status.returncode == 0, status.stderr
    svc = json.loads(status.stdout)["service"]
    cap = svc["capture"]
    assert svc["running"] is True and svc["turns"] == 1
    assert (cap["state"], cap["device"], cap["lost_events"], cap["reopens"]) == ("ok", "default", 1, 1), cap
    assert cap["open_attempts"] >= 2 and cap["last_error"], cap
