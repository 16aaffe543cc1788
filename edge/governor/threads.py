"""The compute reserve (:func:`thread_plan`): LLM threads ≤ ``floor(fraction × cores)`` (at least
1), on the big cores of a big.LITTLE board and never more than there are big cores; audio and the
wake word on one little core. Pinning itself is :mod:`drivers.cpu`."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

from drivers import cpu
from edge.config import BoardSettings
from edge.governor.modes import POWER_MODES, level_index


@dataclass(frozen=True)
class ThreadPlan:
    """``llm_threads`` (0 = no LLM at this level), the CPUs they may run on (``llm_cpus``), the
    CPUs for audio capture, wake word and VAD (``audio_cpus``), and ``reason`` (the rule, with numbers)."""

    llm_threads: int
    llm_cpus: tuple[int, ...]
    audio_cpus: tuple[int, ...]
    reason: str = ""

    def to_dict(self) -> dict:
        return {"llm_threads": self.llm_threads, "llm_cpus": list(self.llm_cpus),
                "audio_cpus": list(self.audio_cpus), "reason": self.reason}


def thread_plan(board: BoardSettings | None, level: str | int = "normal", power_mode: str = "performance",
                cpu_fraction: float = 0.70, online_cpus: Iterable[int] | None = None,
                cpu_limit: float | None = None, cpu_pressure: float | None = None,
                pressure_limit_pct: float = 50.0) -> ThreadPlan:
    """Where and how many LLM threads, from the board's CPU clusters.

    Rule: cores = the board's ``cpu_clusters`` (or ``online_cpus``, default the CPUs this process
    may use); budget = ``max(1, floor(f × cores))`` with f = min(``cpu_fraction``, the power
    mode's fraction) — the 30 % reserve at f = 0.70.

    - big.LITTLE (``big`` and ``little`` clusters): LLM on the big cores only, at most as many
      threads as big cores (a thread on a slow little core would hold every matrix step back);
      audio + wake word on the first little core. RK3588 (4 × A55 + 4 × A76), performance:
      floor(0.70 × 8) = 5 → 4, on CPUs 4-7; audio on CPU 0.
    - otherwise: audio on the first core; the LLM on the others (all if there is one core),
      ``min(budget, their number)``. x86-dev, 2 cores: floor(0.70 × 2) = 1 thread on CPU 1.
    - ``cpu_limit`` (CPUs of the cgroup's ``cpu.max``, :func:`drivers.cpu.cgroup_cpu_limit`): at most
      ``max(1, floor(cpu_limit))`` threads, however many cores there are.
    - ``cpu_pressure`` (the kernel's PSI ``some avg10`` of ``/proc/pressure/cpu``, %) at or above
      ``pressure_limit_pct``: 1 thread. Other work holds the cores; llama.cpp's threads meet at a
      barrier after every matrix step and spin there, so one descheduled thread stalls the rest
      (measured here on 2 busy cores: 2 threads decoded ~12× slower than 1).
    - ``warm``: half the threads (at least 1); ``hot``: 0 (grammar path only).

    Raises:
        ValueError: unknown ``level`` or ``power_mode``.
    """
    lvl = level_index(level)
    if power_mode not in POWER_MODES:
        raise ValueError(f"power mode {power_mode!r} not one of {sorted(POWER_MODES)}")
    clusters = list(board.cpu_clusters) if board is not None else []
    if clusters:
        cores = sorted({c for cl in clusters for c in cl.cores})
        src = f"board {board.name} cpu_clusters"
    else:
        cores = (sorted(set(online_cpus)) or [0]) if online_cpus is not None else cpu.online_cpus()
        src = "online CPUs"
    frac = min(cpu_fraction, POWER_MODES[power_mode].cpu_fraction)
    budget = max(1, math.floor(frac * len(cores) + 1e-9))
    big = sorted({c for cl in clusters if cl.kind == "big" for c in cl.cores})
    little = sorted({c for cl in clusters if cl.kind == "little" for c in cl.cores})
    head = f"{len(cores)} cores ({src}); {power_mode}: floor({frac:.2f} × {len(cores)}) = {budget}"
    if big and little:
        llm_cpus, audio = tuple(big), (little[0],)
        n = min(budget, len(big))
        why = f"{head}; big.LITTLE: LLM on the {len(big)} big cores {big} → {n}; audio on little core {little[0]}"
    else:
        audio = (cores[0],)
        llm_cpus = tuple(cores[1:]) or tuple(cores)
        n = min(budget, len(llm_cpus))
        why = f"{head}; LLM on CPUs {list(llm_cpus)} → {n}; audio on CPU {cores[0]}"
    if cpu_limit is not None and n > max(1, math.floor(cpu_limit + 1e-9)):
        n2 = max(1, math.floor(cpu_limit + 1e-9))
        why += f"; cgroup cpu.max allows {cpu_limit:.2f} CPUs: {n} → {n2}"
        n = n2
    if cpu_pressure is not None and cpu_pressure >= pressure_limit_pct and n > 1:
        why += f"; CPU pressure {cpu_pressure:.0f} % ≥ {pressure_limit_pct:.0f} % (other work holds the cores): {n} → 1"
        n = 1
    if lvl == 1:
        n2 = max(1, n // 2)
        why += f"; warm: {n} → {n2}"
        n = n2
    elif lvl == 2:
        n = 0
        why += "; hot: no LLM threads (grammar path only)"
    return ThreadPlan(n, llm_cpus, audio, why)
