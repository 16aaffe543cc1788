"""Board signals from procfs/sysfs/debugfs, read from configured paths; a missing, unreadable or
garbled file makes that signal unknown (``None`` / empty) and adds a reason naming the file.
Nothing here raises for a bad file, and nothing here decides anything (that is ``edge.governor``).

- :mod:`~drivers.sensors.meminfo`: MemTotal / MemAvailable (bytes) from ``/proc/meminfo``.
- :mod:`~drivers.sensors.cpu`: cpufreq policies (clusters, kHz) and CPU load from ``/proc/stat``.
- :mod:`~drivers.sensors.thermal`: thermal zones (°C) and trip points under ``/sys/class/thermal``.
- :mod:`~drivers.sensors.npu`: rknpu debugfs load (both line forms) and NPU devfreq (Hz).
- :mod:`~drivers.sensors.hwmon`: ``power*_input`` (µW → W) where a power monitor exists.
- :mod:`~drivers.sensors.snapshot`: :class:`SensorPaths` + :class:`SensorReader` → :class:`Snapshot`.

Tests and ``edge doctor`` lay out a fake tree with ``tests/fakesys.py`` and point ``root`` at it.
"""
from drivers.sensors.cpu import CpuPolicy, CpuTimes, cpu_load, parse_stat, read_policies, read_stat
from drivers.sensors.hwmon import PowerReading, read_power
from drivers.sensors.meminfo import MemInfo, parse_meminfo, read_meminfo
from drivers.sensors.npu import Devfreq, NpuLoad, parse_npu_load, read_devfreq, read_npu_load
from drivers.sensors.snapshot import SensorPaths, SensorReader, Snapshot
from drivers.sensors.thermal import ThermalZone, TripPoint, read_zone, read_zones

__all__ = [
    "CpuPolicy", "CpuTimes", "cpu_load", "parse_stat", "read_policies", "read_stat",
    "PowerReading", "read_power",
    "MemInfo", "parse_meminfo", "read_meminfo",
    "Devfreq", "NpuLoad", "parse_npu_load", "read_devfreq", "read_npu_load",
    "SensorPaths", "SensorReader", "Snapshot",
    "ThermalZone", "TripPoint", "read_zone", "read_zones",
]
