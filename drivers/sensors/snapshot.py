"""All signals at once: :class:`SensorPaths` says where they are, :class:`SensorReader` reads them.

Paths are absolute paths as on the board (``/proc/meminfo``) joined under ``root`` (``/`` on a board,
a temporary folder laid out like one in tests, see ``tests/fakesys.py``). A path set to ``None``
means "this board has no such signal" and is not reported as a problem.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from drivers.sensors.cpu import CpuPolicy, CpuTimes, cpu_load, read_policies, read_pressure, read_stat
from drivers.sensors.hwmon import PowerReading, read_power
from drivers.sensors.meminfo import MemInfo, read_meminfo
from drivers.sensors.npu import Devfreq, NpuLoad, read_devfreq, read_npu_load
from drivers.sensors.thermal import ThermalZone, read_zones


@dataclass(frozen=True)
class SensorPaths:
    """Where each signal is read from; each path is joined under ``root``.

    ``thermal_zones``: zone types to watch (empty = every zone). ``npu_load``: the rknpu debugfs
    ``load`` file. ``npu_devfreq``: the NPU's devfreq directory. ``hwmon``: the hwmon class
    directory. ``cpu_pressure``: the kernel's CPU pressure (PSI) file. ``None`` = not present on this board.
    """

    root: Path = Path("/")
    meminfo: str = "/proc/meminfo"
    stat: str = "/proc/stat"
    cpu_pressure: str | None = "/proc/pressure/cpu"
    cpufreq: str | None = "/sys/devices/system/cpu/cpufreq"
    thermal: str | None = "/sys/class/thermal"
    thermal_zones: tuple[str, ...] = ()
    npu_load: str | None = None
    npu_devfreq: str | None = None
    hwmon: str | None = "/sys/class/hwmon"

    def path(self, p: str) -> Path:
        """``p`` (absolute, as on the board) under :attr:`root`."""
        return Path(self.root) / p.lstrip("/")


@dataclass(frozen=True)
class Snapshot:
    """One reading of every signal. Unknown signals are ``None`` / empty; ``problems`` lists why,
    one line per file, each naming the file. ``monotonic_s``: ``time.monotonic()`` at the read."""

    mem: MemInfo
    policies: tuple[CpuPolicy, ...]
    cpu_load: dict[str, float]
    zones: tuple[ThermalZone, ...]
    npu_load: NpuLoad | None
    npu_devfreq: Devfreq | None
    power: tuple[PowerReading, ...]
    problems: tuple[str, ...] = field(default=())
    monotonic_s: float = 0.0
    cpu_pressure: float | None = None  # PSI "some avg10", %: runnable tasks waited for a CPU

    def to_dict(self) -> dict:
        """JSON-ready: ``mem`` (bytes), ``cpu`` (policies, load ratios), ``thermal`` (°C),
        ``npu`` (load ratios, devfreq Hz), ``power`` (W), ``problems``."""
        return {
            "mem": self.mem.to_dict(),
            "cpu": {"policies": [p.to_dict() for p in self.policies], "load": dict(self.cpu_load),
                    "pressure_pct": self.cpu_pressure},
            "thermal": [z.to_dict() for z in self.zones],
            "npu": {"load": self.npu_load.to_dict() if self.npu_load else None,
                    "devfreq": self.npu_devfreq.to_dict() if self.npu_devfreq else None},
            "power": [p.to_dict() for p in self.power],
            "problems": list(self.problems),
        }


class SensorReader:
    """Reads a :class:`Snapshot` from :class:`SensorPaths`; keeps the previous ``/proc/stat``
    sample so that CPU load (a difference of two samples) is known from the second read on.
    Never raises for a missing or bad file."""

    def __init__(self, paths: SensorPaths):
        self.paths = paths
        self._prev_stat: CpuTimes | None = None

    def read(self) -> Snapshot:
        p = self.paths
        problems: list[str] = []

        mem = read_meminfo(p.path(p.meminfo))
        problems.extend(mem.problems)

        policies: list[CpuPolicy] = []
        if p.cpufreq:
            policies, probs = read_policies(p.path(p.cpufreq))
            problems.extend(probs)

        load: dict[str, float] = {}
        times, why = read_stat(p.path(p.stat))
        if times is None:
            problems.append(why)
        elif self._prev_stat is not None:
            load = cpu_load(self._prev_stat, times)
            if not load:
                problems.append(f"{p.path(p.stat)}: no CPU ticks elapsed since the previous read: load unknown")
        if times is not None:
            self._prev_stat = times

        pressure = None
        if p.cpu_pressure:
            pressure, why = read_pressure(p.path(p.cpu_pressure))
            if why is not None and p.path(p.cpu_pressure).parent.exists():
                problems.append(why)  # no /proc/pressure at all: a kernel without PSI, not a fault

        zones: list[ThermalZone] = []
        if p.thermal:
            zones, probs = read_zones(p.path(p.thermal), p.thermal_zones)
            problems.extend(probs)

        npu_load = None
        if p.npu_load:
            npu_load = read_npu_load(p.path(p.npu_load))
            problems.extend(npu_load.problems)

        devfreq = None
        if p.npu_devfreq:
            devfreq = read_devfreq(p.path(p.npu_devfreq))
            problems.extend(devfreq.problems)

        power: list[PowerReading] = []
        if p.hwmon:
            power, probs = read_power(p.path(p.hwmon))
            problems.extend(probs)

        return Snapshot(mem, tuple(policies), load, tuple(zones), npu_load, devfreq, tuple(power),
                        tuple(problems), time.monotonic(), pressure)
