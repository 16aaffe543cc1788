"""The NPU path against Rockchip's real runtime under emulation: scripts/arm64-rootfs.sh builds an arm64
Debian 12 root (cached in ~/.cache/edge-arm64, ~1.5 min the first time, instant after) with the real
RKNNLite (rknn-toolkit-lite2 2.5.0) and librknnrt 1.5.2 (wheel rknpu==1.5.2); tests/arm64_rknn_probe.py
runs drivers.npu.rknn.NpuRunner there with qemu-aarch64-static. Without an NPU: a missing NPU, a file
that is not an RKNN model, a model for another chip, and a runtime whose version is not the one the
board config names each end on the CPU with a message naming the cause, and the CPU answers (never
``None`` used as data). Skipped only when qemu-aarch64-static is absent (scripts/setup.sh installs it).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from edge.boards import load_board
from edge.stages.wake import openwakeword_models_dir
from tests.helpers import REPO

BOARD = "rk3588-rock5b"
QEMU = shutil.which("qemu-aarch64-static")
pytestmark = pytest.mark.skipif(QEMU is None, reason="qemu-aarch64-static is not installed (scripts/setup.sh "
                                "installs qemu-user-static): the real arm64 RKNN runtime cannot run here")


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    r = subprocess.run(["bash", str(REPO / "scripts/arm64-rootfs.sh")], capture_output=True, text=True,
                       timeout=1200, env={**os.environ, "PYTHON": sys.executable})
    assert r.returncode == 0, r.stderr[-3000:]
    rootfs = r.stdout.strip().splitlines()[-1]
    spec = load_board(BOARD)
    version = next(rt.model_version for rt in spec.npu.runtimes if rt.name == "librknnrt")
    work = tmp_path_factory.mktemp("rknn-qemu")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{REPO}:/opt/rknn", "HOME": str(work),
           "PYTHONDONTWRITEBYTECODE": "1"}
    r = subprocess.run([QEMU, "-L", rootfs, f"{rootfs}/usr/bin/python3.11", str(REPO / "tests/arm64_rknn_probe.py"),
                        str(openwakeword_models_dir() / "melspectrogram.onnx"), str(work), spec.soc, version],
                       capture_output=True, text=True, timeout=900, cwd=work, env=env)
    line = next((x for x in r.stdout.splitlines() if x.startswith("PROBE-JSON ")), None)
    assert r.returncode == 0 and line, (r.stdout + r.stderr)[-4000:]
    out = json.loads(line.split(" ", 1)[1])
    out["log"] = r.stdout + r.stderr
    out["board_version"] = version
    return out


def test_it_ran_on_arm64_against_the_real_runtime(probe):
    assert probe["machine"] == "aarch64" and probe["runtime"] == "1.5.2"


def test_the_real_runtime_does_not_check_the_file_and_gives_none(probe):
    """Why the product checks the file itself: RKNNLite takes an ONNX file as a model and, after the
    failed init, answers None instead of raising."""
    assert probe["rknnlite_on_a_non_model"] == {"load_rknn": 0, "init_runtime": -1, "inference_is_none": True}


def test_a_missing_npu_ends_on_the_cpu_through_the_real_runtime(probe):
    c = probe["cases"]["missing_npu"]
    assert c["backend"] == "cpu" and "init_runtime(core_mask=NPU_CORE_0_1_2) returned -1: no usable NPU" in c["reason"]
    assert "failed to open rknpu module" in probe["log"]  # librknnrt's own rknn_init ran and said why


@pytest.mark.parametrize("case, words", [
    ("not_rknn", ["not-a-model.rknn: not an RKNN model: first bytes"]),
    ("other_chip", ["melspectrogram-rk3566.rknn: converted for rk3566, this board is rk3588",
                    "target_platform='rk3588'"]),
    ("runtime_version", ["/usr/lib/librknnrt.so: librknnrt 1.5.2, but the board config names 2.3.2"]),
])
def test_each_wrong_file_or_runtime_is_named_and_the_cpu_answers(probe, case, words):
    c = probe["cases"][case]
    assert c["backend"] == "cpu" and all(w in c["reason"] for w in words), c["reason"]


@pytest.mark.parametrize("case", ["missing_npu", "not_rknn", "other_chip", "runtime_version"])
def test_the_cpu_answer_is_data_never_none(probe, case):
    c = probe["cases"][case]
    assert c["outputs"] == ["ndarray"] and c["max_abs_diff"] < 1e-3
