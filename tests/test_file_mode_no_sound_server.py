"""File mode touches no sound server: ``edge run --input`` (wake word, VAD, recognition, the speech
engine's worker writing the reply WAV) opens no audio device, loads no PortAudio, connects to no
PulseAudio server, spawns none and leaves no ``pulse`` folder in the temporary or runtime folder.

Watched with strace (every process of the run: the CLI and the speech engine's worker), once with
a real private PulseAudio server answering on ``PULSE_SERVER`` and once with none."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.helpers import INVENTORY, REPO, SESSION_WAKE, SESSIONS

pytestmark = pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")


def traced_run(tmp_path, env: dict) -> tuple[subprocess.CompletedProcess, list[str]]:
    cfg = tmp_path / "edge.yaml"
    cfg.write_text(f"board: x86-dev\n{SESSION_WAKE}store: {{path: {tmp_path / 'edge.db'}}}\nllm: {{engine: none}}\n")
    trace = tmp_path / "strace.txt"
    r = subprocess.run(["strace", "-f", "-qq", "-e", "trace=openat,connect,execve", "-o", str(trace),
                        sys.executable, "-m", "edge.cli", "run", "--input", str(SESSIONS / "query_m8_bolts.wav"),
                        "--config", str(cfg), "--inventory", str(INVENTORY), "--output-dir", str(tmp_path / "out"),
                        "--json"], cwd=REPO, capture_output=True, text=True, timeout=600,
                       env={**env, "PYTHONPATH": str(REPO)})
    return r, trace.read_text().splitlines()


def assert_no_sound_server(r, calls: list[str], server_socket: str | None) -> None:
    assert r.returncode == 0, r.stderr[-3000:]
    replies = [json.loads(x) for x in r.stdout.splitlines() if '"type": "reply"' in x]
    assert replies and os.path.getsize(replies[0]["audio"]) > 10_000  # the reply was still synthesized
    opened = [c for c in calls if "openat(" in c and not re.search(r"= -1 E", c)]
    assert not [c for c in opened if re.search(r'"/dev/(snd/|dsp|audio|mixer)', c)], "an audio device was opened"
    assert not [c for c in opened if "libportaudio" in c], "PortAudio was loaded"
    assert not [c for c in opened if re.search(r'/(asound|alsa)\.conf"', c)], "ALSA was configured"
    connected = [c for c in calls if "connect(" in c and "sa_family=AF_UNIX" in c and c.rstrip().endswith("= 0")]
    assert not [c for c in connected if "pulse" in c or (server_socket and server_socket in c)], connected
    if server_socket:
        assert not [c for c in calls if "connect(" in c and server_socket in c], "the sound server was contacted"
    assert not [c for c in calls if "execve(" in c and "pulseaudio" in c], "a sound server was spawned"


def private_env(tmp_path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PULSE_", "XDG_RUNTIME"))}
    for name in ("tmp", "run"):
        (tmp_path / name).mkdir()
    return {**env, "TMPDIR": str(tmp_path / "tmp"), "XDG_RUNTIME_DIR": str(tmp_path / "run")}


def test_a_file_run_leaves_no_pulse_folder_and_opens_no_device(tmp_path):
    env = private_env(tmp_path)
    r, calls = traced_run(tmp_path, env)
    assert_no_sound_server(r, calls, None)
    for folder in (env["TMPDIR"], env["XDG_RUNTIME_DIR"]):
        assert not [p for p in os.listdir(folder) if p.startswith("pulse")], os.listdir(folder)


def test_a_file_run_does_not_contact_a_running_sound_server(tmp_path, pulse_null_sink):
    tmp = tmp_path / "tmp"  # tmp_path itself holds the server's folders
    tmp.mkdir()
    env = {**pulse_null_sink, "TMPDIR": str(tmp)}
    server_socket = env["PULSE_SERVER"].removeprefix("unix:")
    r, calls = traced_run(tmp_path, env)
    assert_no_sound_server(r, calls, server_socket)
    assert not [p for p in os.listdir(tmp) if p.startswith("pulse")], os.listdir(tmp)
