"""Any locale: under an ASCII-only runtime (``LANG=C``, ``PYTHONUTF8=0``, ``PYTHONCOERCECLOCALE=0``)
nothing fails with a UnicodeError: the events on stdout, the messages on stderr (with a non-ASCII
file name) and ``records export --csv`` are written as UTF-8; and the systemd unit gives the service
a UTF-8 locale whatever the system's default environment is. Real CLI processes."""
from __future__ import annotations

import configparser
import csv
import io
import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.helpers import REPO, SESSION_WAKE, SESSIONS

ASCII_ONLY = {"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}


def edge(env: dict, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "edge.cli", *map(str, args)], cwd=REPO, capture_output=True,
                          timeout=300, env={**env, "PYTHONPATH": str(REPO)})


def ascii_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONIO", "PYTHONUTF8"))}
    return {**env, **ASCII_ONLY}


def unit_env() -> dict:
    """The service's environment: systemd's default (PATH only, no LANG) plus the unit's Environment=."""
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str
    text = (REPO / "systemd" / "edge.service").read_text()
    envs = [line.split("=", 1)[1] for line in text.splitlines() if line.startswith("Environment=")]
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin"}
    for assignment in " ".join(envs).split():
        k, v = assignment.split("=", 1)
        env[k] = v
    return env


@pytest.fixture
def store_cfg(tmp_path):
    inv = tmp_path / "stock.csv"
    inv.write_text("sku,item,location,quantity,unit,aliases\nCAF-1,café sign,shelf B,30,pcs,cafe signs\n",
                   encoding="utf-8")
    cfg = tmp_path / "edge.yaml"
    cfg.write_text(f"board: x86-dev\n{SESSION_WAKE}store: {{path: {tmp_path / 'edge.db'}}}\nllm: {{engine: none}}\n")
    r = edge(ascii_env(), "inventory", "import", inv, "--config", cfg)
    assert r.returncode == 0, r.stderr
    return cfg


@pytest.mark.parametrize("where", ["ascii-only shell", "systemd unit"])
def test_events_errors_and_exports_are_utf8(store_cfg, tmp_path, where):
    env = ascii_env() if where == "ascii-only shell" else unit_env()
    r = edge(env, "ask", "I used two cafe signs — for the café", "--config", store_cfg, "--json")
    assert r.returncode == 0 and b"UnicodeEncodeError" not in r.stderr, r.stderr.decode("utf-8", "replace")
    reply = next(e for e in map(json.loads, r.stdout.decode("utf-8").splitlines()) if e["type"] == "reply")
    assert "café sign" in reply["text"], reply
    r = edge(env, "records", "export", "--csv", "--config", store_cfg)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout.decode("utf-8"), newline="")))
    assert rows[-1]["utterance"] == "I used two cafe signs — for the café"
    missing = tmp_path / "stöck-ñ.csv"  # a user error naming a non-ASCII file
    r = edge(env, "inventory", "import", missing, "--config", store_cfg)
    assert r.returncode == 2 and b"Traceback" not in r.stderr, r.stderr
    assert r.stderr.decode("utf-8").startswith(f"edge: {missing}: cannot read inventory CSV")


def test_a_recording_with_a_non_ascii_name_is_read_under_an_ascii_locale(store_cfg, tmp_path):
    wav = tmp_path / "zählung-café.wav"
    shutil.copyfile(SESSIONS / "log_drill_bits_used.wav", wav)
    r = edge(ascii_env(), "run", "--input", wav, "--config", store_cfg, "--output-dir", tmp_path / "out", "--json")
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 0 and "not a readable audio file" not in err, err[-2000:]
    events = [json.loads(line) for line in r.stdout.decode("utf-8").splitlines() if line.startswith("{")]
    assert any(e["type"] == "wake" for e in events), err[-2000:]  # the recording was heard


def test_the_unit_sets_a_utf8_locale():
    env = unit_env()
    assert env.get("LANG") == "C.UTF-8" and env.get("PYTHONUTF8") == "1", env
