"""Run RKLLM jobs on the stand-in (tests/rkllm_stub) from a process of its own, as ``edge serve``,
``edge ask`` and the voice loop each do on a board:

    python tests/rkllm_jobs.py LIB MODEL NPU_LOCK JOBS PRIORITY

The stand-in's behaviour comes from the environment (RKLLM_STUB_*). Prints ``OK <answers>``."""
from __future__ import annotations

import sys
from pathlib import Path


def main(lib: str, model: str, lock: str, jobs: int, priority: int) -> str:
    from edge.llm.base import GenerationRequest, generate
    from edge.llm.rkllm import RkllmEngine

    eng = RkllmEngine(model, 1024, library=lib, soc="rk3588", npu_lock=lock, timeout_s=120.0)
    try:
        req = GenerationRequest([{"role": "user", "content": "hi"}], max_tokens=256, priority=priority)
        return " ".join(generate(eng, req)[0] for _ in range(jobs))
    finally:
        eng.close()


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    a = sys.argv[1:]
    print("OK", main(a[0], a[1], a[2], int(a[3]), int(a[4])), flush=True)
