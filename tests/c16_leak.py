"""Speech-recognizer workers that leak: the real one (:func:`edge.stages.asr.worker.serve`) keeping
``LEAK_BYTES`` of touched memory after every call (worker targets for tests/test_c16_long_run_memory.py
and tests/test_wyoming_asr_worker.py; spawned, so they live in a module the child can import).

:func:`leaky_under_pressure` also makes its file-backed resident memory fall as the page cache does
on a box short of memory: a file mapping of ``SWING_BYTES`` read in, then one sixth more of it
dropped (``MADV_DONTNEED``) at each call, read in again every sixth call. VmRSS then falls by 2 MiB
a call and jumps back, while the leak grows underneath (2 MiB steps: page-cache folios are up to
2 MiB, and a partly unmapped one stays resident)."""
from __future__ import annotations

import mmap
import os
import tempfile

from edge.stages.asr.worker import serve

LEAK_BYTES = 16 * 1024
SWING_BYTES = 12 << 20
_kept: list[mmap.mmap] = []
_file: list[mmap.mmap] = []
_calls = [0]


def _leak() -> None:
    # anonymous pages, written: resident at once (a malloc'd block could fill holes the decoder freed)
    m = mmap.mmap(-1, LEAK_BYTES)
    m.write(b"\x5a" * LEAK_BYTES)
    _kept.append(m)


def _swing() -> None:
    if not _file:
        fd, path = tempfile.mkstemp(prefix="edge-c16-")
        os.write(fd, b"\xa5" * SWING_BYTES)
        os.unlink(path)
        _file.append(mmap.mmap(fd, SWING_BYTES, prot=mmap.PROT_READ))
        os.close(fd)
    m, phase = _file[0], _calls[0] % 6
    _calls[0] += 1
    if phase == 0:  # the pages faulted back in (resident)
        sum(m[i] for i in range(0, SWING_BYTES, mmap.PAGESIZE))
    else:  # evicted, one sixth more each call
        m.madvise(mmap.MADV_DONTNEED, 0, SWING_BYTES * phase // 6)


def _leak_and_swing() -> None:
    _leak()
    _swing()


def leaky(conn, settings: dict, language: str) -> None:
    serve(conn, settings, language, on_call=_leak)


def leaky_under_pressure(conn, settings: dict, language: str) -> None:
    serve(conn, settings, language, on_call=_leak_and_swing)
