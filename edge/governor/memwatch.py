"""Watching a worker's memory call by call: over its budget, or growing steadily (a leak).

:class:`MemoryWatch` is fed the worker's resident memory after each call (:meth:`MemoryWatch.observe`;
the worker gives the anonymous part, :func:`anon_rss_of`) and answers with a reason to recycle it,
or None. Two rules, after ``warmup`` calls (model caches and
allocator arenas settle first):

- budget: RSS above ``budget_bytes`` (set so that the 30 % reserve of MemTotal is never reached),
  or more than ``growth_bytes`` above the RSS of the first call after warm-up (a budget that fits
  whatever model the worker holds);
- slope: the last ``window`` calls in three parts: the lowest RSS of each part rises from part to
  part, by more than ``slope_bytes_per_call`` per call from the first part to the last, and the
  lowest RSS of the last part is ``min_growth_bytes`` over the lowest of the first ``window`` calls
  after warm-up. Lowest values, because a decoder's working memory swings by megabytes from call to
  call; three rising parts, because a leak grows all the time while an allocator arena that grows
  once is one step; the total growth, because a worker under CPU contention can grow its arenas by
  half a MiB in a few steps after warm-up and then stay flat (whisper tiny.en here: 227.5 → 228.0 MiB
  over 45 calls, then flat), and recycling it for that costs a model load for nothing.
"""
from __future__ import annotations

from collections import deque
from pathlib import Path

from drivers.sensors.procinfo import status_kib

__all__ = ["MemoryWatch", "anon_rss_of", "slope_per_call", "rss_of"]

MIB = 1 << 20


def slope_per_call(samples) -> float:
    """Least-squares slope of ``samples`` (bytes) against the call number, bytes per call."""
    n = len(samples)
    if n < 2:
        return 0.0
    mx, my = (n - 1) / 2, sum(samples) / n
    num = sum((i - mx) * (y - my) for i, y in enumerate(samples))
    den = sum((i - mx) ** 2 for i in range(n))
    return num / den


def rss_of(pid: int, proc: Path = Path("/proc")) -> int | None:
    """Resident set size of process ``pid`` in bytes (``VmRSS`` of ``/proc/<pid>/status``), or None."""
    return status_kib(pid, proc).get("VmRSS")


def anon_rss_of(pid: int, proc: Path = Path("/proc")) -> int | None:
    """The part of process ``pid``'s resident set it cannot give back, bytes: ``RssAnon`` +
    ``RssShmem`` of ``/proc/<pid>/status`` (Linux >= 4.5; ``VmRSS`` on older kernels), or None.

    What the watch reads: a leak is anonymous memory, while the file-backed part (the shared
    libraries, here 56 MiB of the whisper worker's 210 MiB) is dropped and read back with the page
    cache, so under memory pressure VmRSS falls by megabytes from one call to the next and hides a
    steady leak."""
    st = status_kib(pid, proc)
    if "RssAnon" in st:
        return st["RssAnon"] + st.get("RssShmem", 0)
    return st.get("VmRSS")


class MemoryWatch:
    """See the module docstring. ``budget_bytes``, ``growth_bytes``: None = no such rule; ``window``
    >= 3 calls; ``min_growth_bytes``: growth since the first window after warm-up before the slope
    rule fires. ``peak``: the highest RSS seen (bytes), over every worker watched."""

    def __init__(self, budget_bytes: int | None = None, slope_bytes_per_call: float = 1024.0,
                 window: int = 45, warmup: int = 10, growth_bytes: int | None = None,
                 min_growth_bytes: int = 2 * MIB):
        self.budget_bytes = budget_bytes
        self.growth_bytes = growth_bytes
        self.slope_bytes_per_call = slope_bytes_per_call
        self.window = window
        self.warmup = warmup
        self.min_growth_bytes = min_growth_bytes
        self.calls = 0
        self.samples: deque[int] = deque(maxlen=window)
        self.peak = 0
        self.baseline: int | None = None  # RSS of the first call after warm-up, bytes
        self.floor: int | None = None  # lowest RSS of the first window after warm-up, bytes

    def reset(self) -> None:
        """Start over (a recycled worker has a new memory history)."""
        self.calls = 0
        self.samples.clear()
        self.baseline = None
        self.floor = None

    def limit(self) -> int | None:
        """The budget in force now, bytes: the lower of ``budget_bytes`` and baseline + ``growth_bytes``
        (None: neither applies yet)."""
        grown = None if self.growth_bytes is None or self.baseline is None else self.baseline + self.growth_bytes
        limits = [b for b in (self.budget_bytes, grown) if b is not None]
        return min(limits) if limits else None

    def observe(self, rss: int | None) -> str | None:
        """Record the RSS (bytes) after one call; the reason to recycle, or None."""
        self.calls += 1
        if rss is None:
            return None
        self.peak = max(self.peak, rss)
        if self.calls <= self.warmup:
            return None
        if self.baseline is None:
            self.baseline = rss
        limit = self.limit()
        if limit is not None and rss > limit:
            return f"RSS {rss / MIB:.1f} MiB is over its budget of {limit / MIB:.1f} MiB"
        self.samples.append(rss)
        if len(self.samples) < self.window:
            return None
        s = list(self.samples)
        if self.floor is None:
            self.floor = min(s)
        k = len(s) // 3
        m1, m2, m3 = min(s[:k]), min(s[k:2 * k]), min(s[2 * k:])
        slope = (m3 - m1) / (2 * k)
        if m1 < m2 < m3 and slope > self.slope_bytes_per_call and m3 - self.floor >= self.min_growth_bytes:
            return (f"RSS grew {slope / 1024:.1f} KiB per call over the last {self.window} calls "
                    f"(lowest {m1 / MIB:.1f} → {m3 / MIB:.1f} MiB): a leak")
        return None
