"""A speech-recognizer worker that leaks: the real one (:func:`edge.stages.asr.worker.serve`) keeping
``LEAK_BYTES`` of touched memory after every call (a worker target for tests/test_c16_long_run_memory.py;
spawned, so it lives in a module the child can import)."""
from __future__ import annotations

import mmap

from edge.stages.asr.worker import serve

LEAK_BYTES = 16 * 1024
_kept: list[mmap.mmap] = []


def _leak() -> None:
    # anonymous pages, written: resident at once (a malloc'd block could fill holes the decoder freed)
    m = mmap.mmap(-1, LEAK_BYTES)
    m.write(b"\x5a" * LEAK_BYTES)
    _kept.append(m)


def leaky(conn, settings: dict, language: str) -> None:
    serve(conn, settings, language, on_call=_leak)
