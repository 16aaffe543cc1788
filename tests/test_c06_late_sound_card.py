"""Case C06 at process level: the sound card appears after the service started.

The service starts with ``PULSE_SERVER`` naming a socket that does not exist yet, so there is no
capture device. It must stay up, say "waiting for capture device" once (stderr and STATUS=), retry
with a growing delay (no busy loop) while its watchdog pings go on, and, when the PulseAudio server
(tests/pulse.py) appears at that address, open the device and answer a spoken session.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from edge.service.runstate import read_state
from tests.helpers import SESSION_WAKE, SESSIONS
from tests.live import lines_until as _lines_until
from tests.live import start_edge_run, stop
from tests.pulse import pulse_server
from tests.test_notify import Listener, drain, notify_socket  # noqa: F401

INITIAL_S, MAX_S = 0.25, 1.0


def test_late_capture_device_is_waited_for_and_then_used(notify_socket, tmp_path):  # noqa: F811
    if shutil.which("pulseaudio") is None:
        pytest.skip("the 'pulseaudio' binary is not installed (apt-get install pulseaudio)")
    sock, npath = notify_socket
    late = Path(tempfile.mkdtemp(prefix="edge-late-", dir="/tmp"))  # the address the service is given
    home = tmp_path / "home"
    home.mkdir()
    (home / ".asoundrc").write_text("pcm.!default {\n    type pulse\n}\nctl.!default {\n    type pulse\n}\n")
    client_conf = tmp_path / "client.conf"
    client_conf.write_text("autospawn = no\n")  # libpulse must not start a server of its own
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    cfg = tmp_path / "live.yaml"
    cfg.write_text(f"board: x86-dev\n{SESSION_WAKE}store: {{path: {tmp_path / 'edge.db'}}}\n"
                   f"service: {{capture_retry_initial_s: {INITIAL_S}, capture_retry_max_s: {MAX_S}}}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PULSE_", "WATCHDOG_", "JOURNAL_"))}
    env.update(PYTHONUNBUFFERED="1", HOME=str(home), XDG_RUNTIME_DIR=str(run_dir), PULSE_SERVER=f"unix:{late}/native",
               PULSE_CLIENTCONFIG=str(client_conf), JACK_NO_START_SERVER="1", NOTIFY_SOCKET=npath,
               WATCHDOG_USEC="1000000", EDGE_LOG_LEVEL="DEBUG")
    proc, out_q, err_q = start_edge_run(cfg, env, tmp_path / "out")
    listener = Listener(sock)
    err: list[str] = []
    waiting = "STATUS=waiting for capture device"
    try:
        # started, no device: it says so and keeps its watchdog fed while it waits
        listener.wait(lambda a: waiting in a and a[a.index(waiting):].count("WATCHDOG=1") >= 4, 180)
        err += _lines_until(err_q, lambda l: "next try in" in l and "attempt 4 " in l, 30)
        assert proc.poll() is None, "the service exited instead of waiting"

        # the sound server appears at the address the service was given
        with pulse_server(tmp_path / "pulse") as penv:
            os.symlink(penv["PULSE_SERVER"].removeprefix("unix:"), late / "native")
            err += _lines_until(err_q, lambda l: l.startswith("listening on"), 60)
            subprocess.run(["paplay", str(SESSIONS / "query_m8_bolts.wav")], env=penv, check=True, timeout=60)
            lines = _lines_until(out_q, lambda l: '"turn_end"' in l, 90)
    finally:
        stop(proc)
        (late / "native").unlink(missing_ok=True)
        late.rmdir()
    time.sleep(0.2)
    msgs = listener.stop() + drain(sock)
    while not err_q.empty():
        line = err_q.get()
        if line is not None:
            err.append(line)

    # said once, on stderr and in STATUS=, however many retries it took
    assert sum(l.startswith("waiting for capture device") for l in err) == 1, "".join(err)
    assert msgs.count("STATUS=waiting for capture device") == 1
    # READY came before the wait (models loaded, smoke passed): systemd does not time the start out
    assert msgs.index(next(m for m in msgs if m.startswith("READY=1"))) < msgs.index("STATUS=waiting for capture device")
    # retries back off: 0.25 s, doubling, capped at 1 s, never a tight loop
    delays = [float(m.group(1)) for l in err if (m := re.search(r"next try in ([\d.]+) s", l))]
    assert len(delays) >= 4
    assert delays[:3] == [INITIAL_S, 2 * INITIAL_S, MAX_S]
    assert all(d == 1.0 for d in delays[2:]) and delays == sorted(delays)
    # then it listened on the device that appeared and answered
    assert any("STATUS=listening on default" == m for m in msgs)
    events = [json.loads(l) for l in lines]
    reply = next(e for e in events if e["type"] == "reply")
    assert "140" in reply["text"]
    assert proc.returncode == 0
    # the service state file (edge status, /metrics) kept the count of failed opens and the device
    st = read_state(tmp_path / "service-state.json")
    assert st["running"] is False and st["turn"] == "stopped" and st["turns"] == 1
    assert st["capture"]["open_attempts"] == len(delays) + 1  # every failed try (each logs its next delay), then the one that worked
    assert st["capture"]["state"] == "closed" and st["capture"]["device"] == "default"  # closed at the stop
