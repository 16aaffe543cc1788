"""CPU affinity: which CPUs this process may use, and pinning a thread (and the threads it starts)
to a set of CPUs, with ``os.sched_getaffinity`` / ``os.sched_setaffinity`` (Linux).

Nothing here decides which CPUs a stage gets (that is ``edge.governor``'s thread plan); nothing
raises: a refused call is logged and leaves the mask as it was.
"""
from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path
from typing import Iterable, Iterator

log = logging.getLogger(__name__)


def allowed_cpus() -> set[int] | None:
    """The CPUs this process may run on (its cpuset, ``taskset``, systemd ``CPUAffinity=``), or
    ``None`` where the platform cannot say (no ``os.sched_getaffinity``, or the call fails)."""
    try:
        return set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


def online_cpus() -> list[int]:
    """:func:`allowed_cpus` sorted; where unknown, ``0 .. os.cpu_count() - 1`` (at least ``[0]``)."""
    allowed = allowed_cpus()
    if allowed is None:
        allowed = set(range(os.cpu_count() or 1))
    return sorted(allowed) or [0]


@contextlib.contextmanager
def pinned(cpus: Iterable[int] | None) -> Iterator[set[int] | None]:
    """Run the block with the calling thread pinned to ``cpus`` (:func:`apply_affinity`); threads it
    starts meanwhile (onnxruntime, CTranslate2 and llama.cpp worker pools) keep that mask. The
    thread's previous mask is restored after. ``None`` or empty: nothing is changed. Yields the
    set applied, or ``None``."""
    before = allowed_cpus() if cpus else None
    applied = apply_affinity(cpus) if cpus and before is not None else None
    try:
        yield applied
    finally:
        if applied is not None:
            with contextlib.suppress(OSError):
                os.sched_setaffinity(0, before)


def apply_affinity(cpus: Iterable[int], pid: int = 0) -> set[int] | None:
    """Pin ``pid`` (0 = the calling *thread*; threads it starts afterwards inherit the mask) to
    ``cpus`` with ``os.sched_setaffinity``; the kernel keeps only CPUs the process's cpuset allows
    (the thread's current mask does not limit it, so a pinned thread can be moved). Returns the
    set applied, or ``None`` (logged) when none of ``cpus`` is allowed or the call is refused;
    never raises."""
    want = set(cpus)
    try:
        os.sched_setaffinity(pid, want)
        use = set(os.sched_getaffinity(pid))
    except (AttributeError, OSError, ValueError, OverflowError) as e:  # EINVAL: no CPU of the mask is in the cpuset
        log.warning("affinity: cannot pin to %s: %s; left unchanged", sorted(want), e)
        return None
    log.debug("affinity: pinned %s to CPUs %s", "this thread" if pid == 0 else f"pid {pid}", sorted(use))
    return use


def cgroup_cpu_limit(root: str | os.PathLike[str] = "/") -> tuple[float | None, str]:
    """CPUs' worth of time this process's cgroup (v2) may use: the smallest ``quota / period`` of
    ``cpu.max`` from its cgroup (``<root>/proc/self/cgroup``, line ``0::PATH``) up to the hierarchy's
    root, e.g. ``150000 100000`` → 1.5; ``(None, why)`` when nothing limits it (``max``) or it
    cannot be read. ``root``: read everything under this folder (tests use a fake tree)."""
    base = Path(root)
    try:
        lines = (base / "proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None, "no cgroup information"
    rel = next((ln[3:] for ln in lines if ln.startswith("0::")), None)
    if rel is None:
        return None, "not in a cgroup v2 hierarchy"
    top = base / "sys/fs/cgroup"
    d, best, where = top / rel.lstrip("/"), None, ""
    while True:
        try:
            quota, period = (d / "cpu.max").read_text().split()[:2]
            if quota != "max" and int(period) > 0 and (best is None or int(quota) / int(period) < best):
                best, where = int(quota) / int(period), f"{d / 'cpu.max'}: {quota} {period}"
        except (OSError, ValueError):
            pass
        if d == top or top not in d.parents:
            break
        d = d.parent
    return best, where or "cpu.max: max"
