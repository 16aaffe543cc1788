"""CPU clusters from cpufreq policies, CPU load from ``/proc/stat``, and CPU pressure from
``/proc/pressure/cpu``.

cpufreq (Documentation/admin-guide/pm/cpufreq.rst): one ``policyN`` directory per group of CPUs
that share a clock (on RK3588: policy0 = CPUs 0-3 Cortex-A55, policy4 = 4-5 and policy6 = 6-7
Cortex-A76). Frequencies there are in kHz.

``/proc/stat`` (proc(5)): per CPU, cumulative time in USER_HZ ticks spent in user, nice, system,
idle, iowait, irq, softirq, steal (guest time is already counted in user). Load over an interval
= 1 − Δ(idle + iowait) / Δ(all eight), from two samples.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from drivers.sensors._read import parse_cpu_list, read_frequencies, read_line, read_text

_POLICY_RE = re.compile(r"^policy(\d+)$")
_STAT_FIELDS = 8  # user nice system idle iowait irq softirq steal (proc(5))


@dataclass(frozen=True)
class CpuPolicy:
    """One cpufreq policy: ``cpus`` it covers; ``cur_khz``/``min_khz``/``max_khz`` (scaling_*,
    kHz); ``hw_max_khz`` (cpuinfo_max_freq, kHz); ``governor``. Unknown values are ``None``."""

    name: str
    cpus: tuple[int, ...]
    cur_khz: int | None = None
    min_khz: int | None = None
    max_khz: int | None = None
    hw_max_khz: int | None = None
    governor: str | None = None

    def to_dict(self) -> dict:
        return {"name": self.name, "cpus": list(self.cpus), "cur_khz": self.cur_khz, "min_khz": self.min_khz,
                "max_khz": self.max_khz, "hw_max_khz": self.hw_max_khz, "governor": self.governor}


def read_policies(cpufreq_dir: Path) -> tuple[list[CpuPolicy], list[str]]:
    """Every ``policyN`` under ``cpufreq_dir``, sorted by N, and the problems met; never raises.

    A policy whose CPU list cannot be read is skipped (with a problem); one whose frequency or
    governor cannot be read is kept with those fields ``None``.
    """
    problems: list[str] = []
    try:
        entries = sorted((int(m.group(1)), p) for p in cpufreq_dir.iterdir()
                         if (m := _POLICY_RE.match(p.name)))
    except FileNotFoundError:
        return [], [f"{cpufreq_dir}: missing (no cpufreq driver: clusters unknown)"]
    except OSError as e:
        return [], [f"{cpufreq_dir}: cannot list ({e.strerror or e})"]
    if not entries:
        return [], [f"{cpufreq_dir}: no policy* directories (no cpufreq driver: clusters unknown)"]
    out = []
    for _, p in entries:
        cpus = None
        for name in ("related_cpus", "affected_cpus"):
            line, why = read_line(p / name)
            if line is None:
                continue
            try:
                cpus = parse_cpu_list(line)
                break
            except ValueError:
                why = f"{p / name}: not a CPU list: {line[:40]!r}"
        if cpus is None:
            problems.append(why or f"{p}: no CPU list")
            continue
        vals = read_frequencies(p, {"cur_khz": "scaling_cur_freq", "min_khz": "scaling_min_freq",
                                    "max_khz": "scaling_max_freq", "hw_max_khz": "cpuinfo_max_freq"}, problems)
        gov, why = read_line(p / "scaling_governor")
        if why:
            problems.append(why)
        out.append(CpuPolicy(p.name, cpus, governor=gov, **vals))
    return out, problems


@dataclass(frozen=True)
class CpuTimes:
    """One ``/proc/stat`` sample: ``{"cpu": (busy, total), "cpu0": ..., ...}`` in USER_HZ ticks."""

    ticks: dict[str, tuple[int, int]] = field(default_factory=dict)


def parse_stat(text: str) -> CpuTimes:
    """``/proc/stat`` text → :class:`CpuTimes`. Lines with fewer than 4 numeric fields are skipped."""
    ticks: dict[str, tuple[int, int]] = {}
    for line in text.splitlines():
        if not line.startswith("cpu"):
            continue
        parts = line.split()
        name = parts[0]
        try:
            nums = [int(x) for x in parts[1:1 + _STAT_FIELDS]]
        except ValueError:
            continue
        if len(nums) < 4 or any(n < 0 for n in nums):
            continue
        idle = nums[3] + (nums[4] if len(nums) > 4 else 0)
        total = sum(nums)
        ticks[name] = (total - idle, total)
    return CpuTimes(ticks)


def read_stat(path: Path) -> tuple[CpuTimes | None, str | None]:
    """Read ``/proc/stat``; ``(None, reason)`` when missing or without ``cpu`` lines."""
    text, why = read_text(path)
    if text is None:
        return None, why
    times = parse_stat(text)
    if not times.ticks:
        return None, f"{path}: no cpu lines"
    return times, None


def cpu_load(prev: CpuTimes, cur: CpuTimes) -> dict[str, float]:
    """Busy ratio 0..1 per CPU name (``cpu`` = all CPUs) between two samples.

    A CPU whose counters did not advance (or went backwards: hotplug, counter reset) is left out.
    """
    out = {}
    for name, (busy, total) in cur.ticks.items():
        if name not in prev.ticks:
            continue
        pb, pt = prev.ticks[name]
        dt, db = total - pt, busy - pb
        if dt <= 0 or db < 0:
            continue
        out[name] = min(1.0, db / dt)
    return out


def parse_pressure(text: str) -> float | None:
    """The ``some avg10`` of a PSI file (``/proc/pressure/cpu``, kernel docs
    ``accounting/psi.rst``): the share of the last 10 s, in %, in which at least one runnable task
    waited for a CPU. ``None`` when the line is missing or malformed."""
    for line in text.splitlines():
        if line.startswith("some "):
            for field_ in line.split()[1:]:
                key, _, value = field_.partition("=")
                if key == "avg10":
                    try:
                        v = float(value)
                    except ValueError:
                        return None
                    return v if 0.0 <= v <= 100.0 else None
    return None


def read_pressure(path: Path) -> tuple[float | None, str | None]:
    """Read a PSI file (:func:`parse_pressure`); ``(None, reason)`` when missing (a kernel without
    ``CONFIG_PSI``, or ``psi=0`` on its command line) or unreadable."""
    text, why = read_text(path)
    if text is None:
        return None, why
    v = parse_pressure(text)
    if v is None:
        return None, f"{path}: no 'some avg10=' line"
    return v, None
