"""Runner for the small non-LLM networks (wake-word feature models, VAD): RKNNLite on the NPU when
the package and a ``.rknn`` file are there, onnxruntime on the CPU otherwise.

``rknnlite.api.RKNNLite`` is rknn-toolkit-lite2's Python API (airockchip/rknn-toolkit2,
``rknn-toolkit-lite2/examples/resnet18/test.py``): ``load_rknn(path)`` and
``init_runtime(core_mask=...)`` return 0 on success, ``inference(inputs=[...])`` returns the list
of output arrays, ``release()`` frees the NPU context. ``core_mask`` takes the class constants
``NPU_CORE_AUTO``, ``NPU_CORE_0``, ``NPU_CORE_1``, ``NPU_CORE_2``, ``NPU_CORE_0_1``,
``NPU_CORE_0_1_2`` (lite2 1.4.0) and ``NPU_CORE_ALL`` (lite2 2.0.0b0; CHANGELOG.txt); RK3588 has
three NPU cores, RK3576 two, RK3566/RK3568 one (only ``auto`` is meaningful there).

Before RKNNLite sees the file, :func:`drivers.npu.rknn_file.check_rknn_file` checks it (magic, the
manifest's size and SHA-256, the board's SoC among its target platforms, the converting toolkit's
version) and :func:`~drivers.npu.rknn_file.check_runtime` checks ``/usr/lib/librknnrt.so``'s version
against the board config's: the real RKNNLite 2.5.0 returns 0 from ``load_rknn`` for any file, and
after a failed ``init_runtime`` its ``inference()`` returns ``None`` instead of raising.

This is the "degrade to CPU when operators are unsupported" path: any failure of those checks, at
load, init or inference, or outputs that differ from the onnxruntime reference by more than ``tolerance`` on a
first check input, moves that network to the CPU for the rest of the process and logs why
(``runner.backend == "cpu"``, ``runner.fallback_reason``).
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from drivers.npu.rknn_file import RUNTIME_PATH, RknnFileError, check_rknn_file, check_runtime

log = logging.getLogger(__name__)

CORE_MASKS = {
    "auto": "NPU_CORE_AUTO",
    "0": "NPU_CORE_0",
    "1": "NPU_CORE_1",
    "2": "NPU_CORE_2",
    "0_1": "NPU_CORE_0_1",
    "0_1_2": "NPU_CORE_0_1_2",
    "all": "NPU_CORE_ALL",
}
"""Board-config ``core_mask`` value → ``RKNNLite`` constant name."""

DEFAULT_TOLERANCE = 0.05
"""Largest allowed ``max|npu - cpu| / max|cpu|`` per output: 5 % of the reference's peak. An
engineering bound, not a vendor figure: int8 quantisation alone costs ~0.4 % of the range per
tensor (1/255), and a few layers of accumulation stay well inside 5 %, while an unsupported
operator or a wrong layout is off by far more."""


def normalized_error(npu: np.ndarray, cpu: np.ndarray) -> float:
    """``max|npu - cpu| / max|cpu|`` (absolute difference when the reference is all zeros);
    ``inf`` for NaN/inf in either."""
    a = np.asarray(npu, dtype=np.float64)
    b = np.asarray(cpu, dtype=np.float64)
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return float("inf")
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    diff = float(np.max(np.abs(a - b))) if a.size else 0.0
    return diff / scale if scale > 0 else diff


class NpuRunner:
    """One network, on the NPU if it can run there correctly, else on the CPU.

    Args:
        onnx_path: the network as ONNX: the CPU backend and the reference for the NPU check.
        rknn_path: the same network converted with rknn-toolkit2 for this SoC; ``None`` = CPU only.
        core_mask: ``auto`` | ``0`` | ``1`` | ``2`` | ``0_1`` | ``0_1_2`` | ``all`` (board config).
        tolerance: see :data:`DEFAULT_TOLERANCE`.
        check_inputs: the first check's inputs, one array per ONNX input in order. Default: seeded
            random normal arrays, possible only when every input is a float tensor of fixed shape.
        cpu_threads: onnxruntime intra-op threads.
        name: for log messages (default the ONNX file's stem).
        soc: the board's SoC (board config ``board.soc``); the file must be converted for it.
        rknn_size, rknn_sha256: the ``.rknn`` file's size (bytes) and SHA-256 from the model manifest.
        model_version: the toolkit version the board's models were converted with (board config
            ``board.npu.runtimes[librknnrt].model_version``): the runtime library and the file must
            be of its major.minor.
        runtime_path: the librknnrt RKNNLite loads (:data:`~drivers.npu.rknn_file.RUNTIME_PATH`).
    Attributes:
        backend: ``"npu"`` or ``"cpu"``.
        fallback_reason: why the network is on the CPU (``None`` on the NPU).
        check_error: the normalized error of the first check (``None`` if not run).
    Raises:
        ValueError: an unknown ``core_mask``, or no ``check_inputs`` for a model that needs them.
        FileNotFoundError: ``onnx_path`` is missing (no backend at all).
    """

    def __init__(self, onnx_path: str | os.PathLike[str], rknn_path: str | os.PathLike[str] | None = None,
                 core_mask: str = "auto", tolerance: float = DEFAULT_TOLERANCE,
                 check_inputs: Sequence[np.ndarray] | None = None, cpu_threads: int = 1, name: str | None = None,
                 soc: str | None = None, rknn_size: int | None = None, rknn_sha256: str | None = None,
                 model_version: str | None = None, runtime_path: str | os.PathLike[str] = RUNTIME_PATH):
        if core_mask not in CORE_MASKS:
            raise ValueError(f"core_mask '{core_mask}' is not one of {', '.join(CORE_MASKS)} (board config npu core_mask)")
        self.onnx_path = Path(onnx_path)
        if not self.onnx_path.is_file():
            raise FileNotFoundError(f"{self.onnx_path}: ONNX model not found")
        self.rknn_path = Path(rknn_path) if rknn_path is not None else None
        self.core_mask = core_mask
        self.tolerance = float(tolerance)
        self.name = name or self.onnx_path.stem
        self.backend = "cpu"
        self.fallback_reason: str | None = None
        self.check_error: float | None = None
        self._rknn = None
        self._expect = dict(soc=soc, size=rknn_size, sha256=rknn_sha256, model_version=model_version)
        self.runtime_path = Path(runtime_path)

        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = cpu_threads
        opts.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(self.onnx_path), opts, providers=["CPUExecutionProvider"])
        self.input_names = [i.name for i in self._session.get_inputs()]
        self._check_inputs = list(check_inputs) if check_inputs is not None else None
        self._try_npu()

    # ------------------------------------------------------------ NPU set-up

    def _try_npu(self) -> None:
        if self.rknn_path is None:
            self._to_cpu("no .rknn file configured", warn=False)
            return
        if not self.rknn_path.is_file():
            self._to_cpu(f"{self.rknn_path}: no such .rknn file")
            return
        try:  # the runtime does not check the file, so a wrong one is caught here, by name
            check_rknn_file(self.rknn_path, **self._expect)
            if self._expect["model_version"] is not None:
                check_runtime(self.runtime_path, self._expect["model_version"])
        except RknnFileError as e:
            self._to_cpu(str(e))
            return
        try:
            from rknnlite.api import RKNNLite
        except ImportError as e:
            self._to_cpu(f"rknnlite is not importable ({e}); install rknn-toolkit-lite2 on the board "
                         f"(pip install 'edge[rk]')")
            return
        try:
            const = getattr(RKNNLite, CORE_MASKS[self.core_mask])
        except AttributeError:
            self._to_cpu(f"this rknn-toolkit-lite2 has no RKNNLite.{CORE_MASKS[self.core_mask]} (core_mask "
                         f"'{self.core_mask}'); upgrade it or pick another core_mask")
            return
        inputs = self._reference_inputs()
        try:
            self._rknn = RKNNLite()
            ret = self._rknn.load_rknn(str(self.rknn_path))
            if ret != 0:
                self._to_cpu(f"RKNNLite.load_rknn({self.rknn_path}) returned {ret}")
                return
            ret = self._rknn.init_runtime(core_mask=const)
            if ret != 0:
                self._to_cpu(f"RKNNLite.init_runtime(core_mask={CORE_MASKS[self.core_mask]}) returned {ret}: no "
                             f"usable NPU (the rknpu driver is not loaded or its node is missing: `dmesg | grep -i "
                             f"rknpu`, edge doctor), or a core this SoC does not have")
                return
            npu = self._rknn.inference(inputs=inputs)
        except Exception as e:  # noqa: BLE001 - any vendor failure means: run on the CPU
            self._to_cpu(f"RKNNLite failed: {type(e).__name__}: {e}")
            return
        cpu = self._run_cpu(inputs)
        problem = self._compare(npu, cpu)
        if problem:
            self._to_cpu(problem)
            return
        self.backend = "npu"
        log.info("%s: on the NPU (core_mask %s, check error %.4f)", self.name, self.core_mask, self.check_error)

    def _reference_inputs(self) -> list[np.ndarray]:
        if self._check_inputs is not None:
            if len(self._check_inputs) != len(self.input_names):
                raise ValueError(f"{self.name}: check_inputs has {len(self._check_inputs)} arrays, the model takes "
                                 f"{len(self.input_names)} ({', '.join(self.input_names)})")
            return self._check_inputs
        rng = np.random.default_rng(0)
        out = []
        for i in self._session.get_inputs():
            if i.type != "tensor(float)" or not all(isinstance(d, int) for d in i.shape):
                raise ValueError(f"{self.name}: input '{i.name}' ({i.type}, shape {i.shape}) is not a fixed-shape "
                                 f"float tensor; pass check_inputs with a realistic example")
            out.append(rng.standard_normal(i.shape).astype(np.float32))
        return out

    def _compare(self, npu, cpu: list[np.ndarray]) -> str | None:
        if npu is None:
            return "RKNNLite.inference returned None"
        npu = list(npu)
        if len(npu) != len(cpu):
            return f"RKNNLite gave {len(npu)} outputs, the ONNX model {len(cpu)}"
        worst = 0.0
        for k, (a, b) in enumerate(zip(npu, cpu, strict=True)):
            a = np.asarray(a)
            if a.size != b.size:
                return f"output {k}: RKNNLite shape {a.shape} vs ONNX {b.shape}"
            worst = max(worst, normalized_error(a.reshape(b.shape), b))
        self.check_error = worst
        if worst > self.tolerance:
            return (f"NPU outputs differ from the CPU reference: normalized error {worst:.4f} > tolerance "
                    f"{self.tolerance:g} (unsupported operator or bad quantisation)")
        return None

    def _to_cpu(self, reason: str, warn: bool = True) -> None:
        self.backend = "cpu"
        self.fallback_reason = reason
        self._release()
        (log.warning if warn else log.info)("%s: running on the CPU: %s", self.name, reason)

    def _release(self) -> None:
        rknn, self._rknn = self._rknn, None
        if rknn is not None:
            try:
                rknn.release()
            except Exception as e:  # noqa: BLE001
                log.warning("%s: RKNNLite.release failed: %s", self.name, e)

    # ------------------------------------------------------------ inference

    def _run_cpu(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        return self._session.run(None, dict(zip(self.input_names, inputs, strict=True)))

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Outputs for ``inputs`` (one array per ONNX input, in order). An NPU failure here moves the
        network to the CPU for good and this call is answered there."""
        if self.backend == "npu":
            try:
                out = self._rknn.inference(inputs=list(inputs))
                if out is None:
                    raise RuntimeError("RKNNLite.inference returned None")
                return list(out)
            except Exception as e:  # noqa: BLE001
                self._to_cpu(f"RKNNLite inference failed at run time: {type(e).__name__}: {e}")
        return self._run_cpu(inputs)

    def close(self) -> None:
        """Release the NPU context (the CPU session is freed with the object)."""
        self._release()
