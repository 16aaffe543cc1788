"""The systemd units: ``systemd-analyze verify`` passes with no warning on the unit as shipped (with
ExecStart pointed at an existing program, which verify requires), on the unit as ``edge install``
writes it together with each board's drop-in, and the sysusers/tmpfiles snippets apply cleanly.
The restart and watchdog settings are checked against what the issue asks for."""
from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from edge import boards
from edge.ops import install
from tests.helpers import REPO

SYSTEMD = REPO / "systemd"
EXE = str(Path(sys.executable).parent / "edge")
needs_analyze = pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                                   reason="needs systemd-analyze (Debian package 'systemd')")


def verify(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["systemd-analyze", "verify", "--man=no", str(path)], capture_output=True, text=True,
                          timeout=60)


def _units():
    return sorted(SYSTEMD.glob("*.service")) + sorted(SYSTEMD.glob("*.timer")) + sorted(SYSTEMD.glob("*.socket"))


@needs_analyze
@pytest.mark.parametrize("unit", _units(), ids=lambda p: p.name)
def test_every_shipped_unit_verifies_without_warnings(tmp_path, unit):
    text = unit.read_text().replace(f"ExecStart={install.DEFAULT_EXEC}", f"ExecStart={EXE}")
    p = tmp_path / unit.name
    p.write_text(text)
    r = verify(p)
    assert r.returncode == 0 and not (r.stdout + r.stderr).strip(), r.stdout + r.stderr


@needs_analyze
@pytest.mark.parametrize("board", boards.board_names())
def test_installed_unit_plus_board_dropin_verifies(tmp_path, board):
    spec = boards.load_board(board)
    p = tmp_path / "edge.service"
    p.write_text(install.unit_text(EXE) + "\n" + install.dropin_text(spec))  # drop-in merged as systemd would
    r = verify(p)
    assert r.returncode == 0 and not (r.stdout + r.stderr).strip(), r.stdout + r.stderr


@needs_analyze
def test_verify_does_catch_mistakes(tmp_path):
    """The check above can fail: a typo'd key and a missing program are reported."""
    p = tmp_path / "edge.service"
    p.write_text(install.unit_text("/nonexistent/edge").replace("WatchdogSec=30", "WatchdogSecs=30"))
    r = verify(p)
    out = r.stdout + r.stderr
    assert "WatchdogSecs" in out and "/nonexistent/edge" in out and r.returncode != 0


def _service():
    cp = configparser.ConfigParser(strict=False, interpolation=None, delimiters=("=",))
    cp.optionxform = str
    cp.read(SYSTEMD / "edge.service")
    return cp


def test_unit_settings_the_issue_asks_for():
    cp = _service()
    s, u = cp["Service"], cp["Unit"]
    assert s["Type"] == "notify" and s["Restart"] == "on-failure"
    assert int(s["WatchdogSec"]) == 30 and "sound.target" in u["After"]
    assert s["User"] == "edge" and "audio" in s["SupplementaryGroups"].split()
    for key, val in (("NoNewPrivileges", "yes"), ("ProtectSystem", "strict"), ("ProtectHome", "yes"),
                     ("PrivateTmp", "yes"), ("ReadWritePaths", "/var/lib/edge"), ("LimitNOFILE", "65536"),
                     ("RuntimeDirectory", "edge"), ("RuntimeDirectoryMode", "0750")):
        assert s[key] == val, key
    assert "char-alsa rw" in s["DeviceAllow"]


def test_restarts_can_never_exhaust_the_start_limit():
    """StartLimitBurst starts within StartLimitIntervalSec stop a unit for good; with RestartSec between
    starts, at most ceil(interval / RestartSec) starts fit in any window, so burst must exceed that."""
    cp = _service()
    restart = float(cp["Service"]["RestartSec"])
    interval = float(cp["Unit"]["StartLimitIntervalSec"])
    burst = int(cp["Unit"]["StartLimitBurst"])
    max_starts_in_window = int(interval // restart) + 1
    assert burst > max_starts_in_window, (burst, max_starts_in_window)


@pytest.mark.skipif(shutil.which("systemd-sysusers") is None or shutil.which("systemd-tmpfiles") is None,
                    reason="needs systemd-sysusers and systemd-tmpfiles")
def test_sysusers_and_tmpfiles_snippets_apply(tmp_path):
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    for tool, conf in (("systemd-sysusers", "edge.sysusers.conf"), ("systemd-tmpfiles", "edge.tmpfiles.conf")):
        cmd = [tool, f"--root={root}"] + (["--create"] if tool == "systemd-tmpfiles" else []) + [str(SYSTEMD / conf)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
    assert "edge:x:" in (root / "etc/passwd").read_text()
    assert (root / "var/lib/edge/replies").is_dir()
