"""Run by tests/test_rknn_qemu.py with the arm64 Python of scripts/arm64-rootfs.sh under qemu-aarch64-static:
drivers.npu.rknn.NpuRunner against the real RKNNLite 2.5.0 and librknnrt 1.5.2, one case per way a board
goes wrong, and RKNNLite called directly on a file that is not a model. Prints one JSON object.

    python3.11 arm64_rknn_probe.py ONNX WORKDIR BOARD_SOC BOARD_MODEL_VERSION
"""
from __future__ import annotations

import json
import logging
import platform
import sys
from pathlib import Path

import numpy as np

from drivers.npu.rknn import NpuRunner
from drivers.npu.rknn_file import check_runtime
from tests.rknnfile import write_rknn


def main(onnx: str, work: str, soc: str, board_model_version: str) -> dict:
    logging.basicConfig(level=logging.WARNING)
    w = Path(work)
    t = np.arange(1280) / 16000
    audio = [(0.3 * 32767 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)[None, :]]
    import onnxruntime as ort

    ref = ort.InferenceSession(onnx, providers=["CPUExecutionProvider"])
    want = ref.run(None, {ref.get_inputs()[0].name: audio[0]})[0]
    runtime = check_runtime()  # the real library's version, read from its bytes
    good = write_rknn(w / "melspectrogram-rk3588.rknn", targets=[soc], toolkit=runtime)
    not_rknn = w / "not-a-model.rknn"
    not_rknn.write_bytes(Path(onnx).read_bytes())
    for_board = write_rknn(w / "melspectrogram-rk3588-board.rknn", targets=[soc], toolkit=board_model_version)
    other_chip = write_rknn(w / "melspectrogram-rk3566.rknn", targets=["rk3566"], toolkit=runtime)
    cases = {
        # file and runtime as the board expects: the real runtime is reached and finds no NPU
        "missing_npu": dict(rknn=good, model_version=runtime),
        "not_rknn": dict(rknn=not_rknn, model_version=runtime),
        "other_chip": dict(rknn=other_chip, model_version=runtime),
        # a model converted as the board config says, but another runtime installed
        "runtime_version": dict(rknn=for_board, model_version=board_model_version),
    }
    out: dict = {"machine": platform.machine(), "runtime": runtime, "cases": {}}
    for name, c in cases.items():
        r = NpuRunner(onnx, c["rknn"], core_mask="0_1_2", check_inputs=audio, soc=soc,
                      model_version=c["model_version"])
        got = r.run(audio)
        out["cases"][name] = {"backend": r.backend, "reason": r.fallback_reason,
                              "outputs": [type(o).__name__ for o in got],
                              "max_abs_diff": float(np.max(np.abs(np.asarray(got[0]) - want)))}
        r.close()
    from rknnlite.api import RKNNLite  # what the runtime itself does with a file that is not a model

    lite = RKNNLite()
    raw = {"load_rknn": lite.load_rknn(str(not_rknn)), "init_runtime": lite.init_runtime(core_mask=RKNNLite.NPU_CORE_0_1_2)}
    raw["inference_is_none"] = lite.inference(inputs=audio) is None
    lite.release()
    out["rknnlite_on_a_non_model"] = raw
    return out


if __name__ == "__main__":
    print("PROBE-JSON " + json.dumps(main(*sys.argv[1:5])), flush=True)
