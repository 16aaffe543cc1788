"""scripts/check_glibc.sh, which scripts/setup.sh runs before any pip: pymicro-wakeword 2.5.0 (the
default wake-word engine) has manylinux_2_35 wheels only, so an older glibc must stop the install
with what to do, never fall back to pymicro-wakeword 1.0.0 (TensorFlow). A fake ``getconf`` on PATH
plays the system's C library."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "check_glibc.sh"


def run_with_glibc(tmp_path: Path, answer: str) -> subprocess.CompletedProcess:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "getconf"
    fake.write_text(f"#!/bin/sh\n[ \"$1\" = GNU_LIBC_VERSION ] && {answer}\n")
    fake.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    return subprocess.run(["bash", str(SCRIPT), sys.executable], env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("version", ["2.31", "2.34", "2.28"])
def test_an_older_glibc_stops_the_setup_and_says_what_to_do(tmp_path, version):
    r = run_with_glibc(tmp_path, f"echo 'glibc {version}'")
    assert r.returncode == 1
    assert f"glibc {version} is older than 2.35" in r.stderr
    assert "pymicro-wakeword==2.5.0" in r.stderr and "TensorFlow" in r.stderr and "Debian 12" in r.stderr


def test_a_libc_that_is_not_glibc_stops_it_too(tmp_path):
    r = run_with_glibc(tmp_path, "exit 1")  # musl's getconf knows no GNU_LIBC_VERSION
    assert r.returncode == 1 and "not glibc" in r.stderr


@pytest.mark.parametrize("version", ["2.35", "2.36", "2.40"])
def test_glibc_2_35_or_newer_passes(tmp_path, version):
    r = run_with_glibc(tmp_path, f"echo 'glibc {version}'")
    assert r.returncode == 0, r.stderr


def test_setup_runs_the_check_before_any_pip():
    text = (REPO / "scripts" / "setup.sh").read_text()
    assert text.index("scripts/check_glibc.sh") < text.index("pipq install")
