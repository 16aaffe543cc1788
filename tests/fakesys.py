"""Fake procfs/sysfs/debugfs trees in a folder, laid out like a board, for tests and ``edge doctor``.

A :class:`FakeSys` writes the same files the kernel exposes, with the same units, under a root
folder; point the board config's ``sensors.root`` (or :class:`drivers.sensors.SensorPaths.root`)
at it. Tests then change values over time (temperatures, load, memory) and delete or garble files
to check that unknown signals are tolerated.

Builders:

- :func:`rk3588` — an RK3588 board: 8 CPUs in cpufreq policies 0 (CPUs 0-3, Cortex-A55),
  4 (4-5) and 6 (6-7) (Cortex-A76); seven thermal zones named as in the Rockchip device tree
  (``soc-thermal``, ``bigcore0-thermal``, ``bigcore1-thermal``, ``littlecore-thermal``,
  ``center-thermal``, ``gpu-thermal``, ``npu-thermal``); soc-thermal trips 75 °C passive,
  85 °C passive, 115 °C critical (2 °C hysteresis), the others one 115 °C critical trip;
  rknpu debugfs ``load`` (3 cores), NPU devfreq ``fdab0000.npu``; one hwmon power channel.
- :func:`x86_dev` — a small x86 machine: N CPUs each in its own policy, an ``acpitz`` zone with a
  critical trip and an ``x86_pkg_temp`` zone without trips, no NPU, no power monitor.

Units written, as the kernel writes them: ``/proc/meminfo`` kB (KiB); cpufreq kHz; thermal
milli-°C; devfreq Hz; hwmon ``power*_input`` µW; ``/proc/stat`` USER_HZ ticks.

Usage::

    fs = rk3588(tmp_path)                 # the tree
    fs.set_temp("soc-thermal", 80.0)      # °C
    fs.set_meminfo(total_mib=4096, available_mib=3000)
    fs.advance_cpu(load=0.5)              # the next CPU-load reading is 50 %
    fs.set_npu_load({0: 45, 1: 0, 2: 0})  # "NPU load:  Core0: 45%, Core1:   %, Core2:   %,"
    fs.remove("sys/class/thermal/thermal_zone0/temp")
    settings = load_settings(board="rk3588-rock5b", overrides={"board": {"sensors": fs.sensors_settings()}})
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

MIB_KB = 1024  # kB (KiB) per MiB in /proc/meminfo

#: RK3588 thermal zone types in sysfs order (Rockchip BSP rk3588s.dtsi, tsadc channels 0..6).
RK3588_ZONES = ("soc-thermal", "bigcore0-thermal", "bigcore1-thermal", "littlecore-thermal",
                "center-thermal", "gpu-thermal", "npu-thermal")
#: soc-thermal trips from rk3588s.dtsi: (°C, type). Hysteresis 2 °C each.
RK3588_SOC_TRIPS = ((75.0, "passive"), (85.0, "passive"), (115.0, "critical"))
RK3588_OTHER_TRIPS = ((115.0, "critical"),)
RK3588_NPU_DEVFREQ = "sys/class/devfreq/fdab0000.npu"
RKNPU_LOAD = "sys/kernel/debug/rknpu/load"


def npu_load_text(loads: dict[int, int] | int) -> str:
    """The rknpu ``load`` line for per-core percentages ``{0: 45, 1: 0}`` or one percentage.

    Formatted as the driver does (``"%2.d%%"``: width 2, precision 0, so 0 prints as blanks).
    """
    def pct(v: int) -> str:
        return f"{v:2d}%" if v else "  %"

    if isinstance(loads, dict):
        return "NPU load: " + "".join(f" Core{i}: {pct(v)}," for i, v in sorted(loads.items())) + "\n"
    return f"NPU load: {pct(int(loads))}\n"


@dataclass
class FakeSys:
    """A fake kernel file tree under ``root``. Paths passed to methods are relative to ``root``
    and written as on a board (``sys/class/thermal/...``)."""

    root: Path
    zones: list[str] = field(default_factory=list)  # zone types by index
    cpus: int = 0
    npu_load_path: str | None = None
    npu_devfreq_path: str | None = None
    hwmon_path: str | None = "sys/class/hwmon"
    _ticks: dict[str, list[int]] = field(default_factory=dict)

    # -- generic -------------------------------------------------------------------------------
    def path(self, rel: str) -> Path:
        return self.root / rel.lstrip("/")

    def write(self, rel: str, text: str | bytes) -> Path:
        """Write a file (creating folders); a ``str`` gets no newline added."""
        p = self.path(rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text)
        return p

    def remove(self, rel: str) -> None:
        """Delete a file or a whole folder (a sensor that went away)."""
        p = self.path(rel)
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()

    # -- memory --------------------------------------------------------------------------------
    def set_meminfo(self, total_mib: float, available_mib: float, free_mib: float | None = None) -> None:
        """``/proc/meminfo`` with MemTotal/MemFree/MemAvailable given in MiB (written in kB)."""
        free = available_mib * 0.8 if free_mib is None else free_mib
        kb = lambda mib: int(round(mib * MIB_KB))  # noqa: E731
        self.write("proc/meminfo",
                   f"MemTotal:       {kb(total_mib):>8} kB\n"
                   f"MemFree:        {kb(free):>8} kB\n"
                   f"MemAvailable:   {kb(available_mib):>8} kB\n"
                   f"Buffers:           12345 kB\n"
                   f"Cached:           456789 kB\n"
                   f"SwapTotal:             0 kB\n")

    # -- CPUs ----------------------------------------------------------------------------------
    def add_policy(self, n: int, cpus: list[int], max_khz: int, cur_khz: int | None = None,
                   min_khz: int = 408000, governor: str = "schedutil") -> None:
        """``sys/devices/system/cpu/cpufreq/policyN`` covering ``cpus`` (frequencies in kHz)."""
        d = f"sys/devices/system/cpu/cpufreq/policy{n}"
        cpulist = " ".join(str(c) for c in cpus) + "\n"
        self.write(f"{d}/related_cpus", cpulist)
        self.write(f"{d}/affected_cpus", cpulist)
        self.write(f"{d}/cpuinfo_max_freq", f"{max_khz}\n")
        self.write(f"{d}/scaling_max_freq", f"{max_khz}\n")
        self.write(f"{d}/scaling_min_freq", f"{min_khz}\n")
        self.write(f"{d}/scaling_cur_freq", f"{cur_khz or max_khz}\n")
        self.write(f"{d}/scaling_governor", f"{governor}\n")

    def _write_stat(self) -> None:
        lines = []
        names = ["cpu"] + [f"cpu{i}" for i in range(self.cpus)]
        agg = [sum(self._ticks[f"cpu{i}"][k] for i in range(self.cpus)) for k in range(10)]
        for name in names:
            v = agg if name == "cpu" else self._ticks[name]
            lines.append(name + ("  " if name == "cpu" else " ") + " ".join(str(x) for x in v))
        lines += ["intr 0", "ctxt 12345", "btime 1700000000", "processes 100", "procs_running 1",
                  "procs_blocked 0"]
        self.write("proc/stat", "\n".join(lines) + "\n")

    def advance_cpu(self, load: float | dict[int, float] = 0.0, ticks: int = 100) -> None:
        """Add ``ticks`` USER_HZ ticks per CPU to ``/proc/stat`` of which ``load`` (0..1, one
        value or per CPU) are busy (user time): the next CPU-load reading shows that load."""
        for i in range(self.cpus):
            r = load.get(i, 0.0) if isinstance(load, dict) else load
            busy = int(round(r * ticks))
            t = self._ticks[f"cpu{i}"]
            t[0] += busy          # user
            t[3] += ticks - busy  # idle
        self._write_stat()

    # -- thermal -------------------------------------------------------------------------------
    def add_zone(self, ztype: str, temp_c: float, trips=(), hyst_c: float = 2.0) -> int:
        """Add ``thermal_zoneN`` of ``ztype`` at ``temp_c`` °C with ``trips`` ((°C, type), ...);
        returns N. Values are written in milli-°C."""
        n = len(self.zones)
        self.zones.append(ztype)
        d = f"sys/class/thermal/thermal_zone{n}"
        self.write(f"{d}/type", f"{ztype}\n")
        self.write(f"{d}/temp", f"{int(round(temp_c * 1000))}\n")
        self.write(f"{d}/mode", "enabled\n")
        for k, (t, kind) in enumerate(trips):
            self.write(f"{d}/trip_point_{k}_temp", f"{int(round(t * 1000))}\n")
            self.write(f"{d}/trip_point_{k}_type", f"{kind}\n")
            self.write(f"{d}/trip_point_{k}_hyst", f"{int(round(hyst_c * 1000))}\n")
        return n

    def zone_dir(self, zone: str | int) -> str:
        """``sys/class/thermal/thermal_zoneN`` of a zone type or index."""
        n = zone if isinstance(zone, int) else self.zones.index(zone)
        return f"sys/class/thermal/thermal_zone{n}"

    def set_temp(self, zone: str | int, celsius: float) -> None:
        """Set a zone's temperature (°C; written as milli-°C)."""
        self.write(f"{self.zone_dir(zone)}/temp", f"{int(round(celsius * 1000))}\n")

    def set_all_temps(self, celsius: float) -> None:
        for z in range(len(self.zones)):
            self.set_temp(z, celsius)

    # -- NPU, power ----------------------------------------------------------------------------
    def set_npu_load(self, loads: dict[int, int] | int | str) -> None:
        """Per-core percentages ``{0: 45, ...}``, one percentage, or the raw file text."""
        text = loads if isinstance(loads, str) else npu_load_text(loads)
        self.write(self.npu_load_path or RKNPU_LOAD, text)

    def set_npu_devfreq(self, cur_hz: int, max_hz: int = 1_000_000_000, min_hz: int = 300_000_000,
                        governor: str = "simple_ondemand") -> None:
        d = self.npu_devfreq_path or RK3588_NPU_DEVFREQ
        self.write(f"{d}/cur_freq", f"{cur_hz}\n")
        self.write(f"{d}/max_freq", f"{max_hz}\n")
        self.write(f"{d}/min_freq", f"{min_hz}\n")
        self.write(f"{d}/governor", f"{governor}\n")

    def set_power(self, watts: float, hwmon: int = 0, channel: int = 1, name: str = "ina226",
                  label: str | None = None) -> None:
        """``sys/class/hwmon/hwmonN/powerK_input`` = ``watts`` (written in µW)."""
        d = f"sys/class/hwmon/hwmon{hwmon}"
        self.write(f"{d}/name", f"{name}\n")
        self.write(f"{d}/power{channel}_input", f"{int(round(watts * 1_000_000))}\n")
        if label:
            self.write(f"{d}/power{channel}_label", f"{label}\n")

    # -- config --------------------------------------------------------------------------------
    def sensors_settings(self, **extra) -> dict:
        """The board config ``sensors:`` block that reads this tree (``root`` = this folder)."""
        out = {"root": str(self.root), "npu_load": None, "npu_devfreq": None}
        if self.npu_load_path:
            out["npu_load"] = "/" + self.npu_load_path
        if self.npu_devfreq_path:
            out["npu_devfreq"] = "/" + self.npu_devfreq_path
        out.update(extra)
        return out


def _base(root: Path, cpus: int) -> FakeSys:
    root.mkdir(parents=True, exist_ok=True)
    fs = FakeSys(Path(root), cpus=cpus)
    fs._ticks = {f"cpu{i}": [1000, 0, 500, 10000, 50, 0, 10, 0, 0, 0] for i in range(cpus)}
    fs._write_stat()
    return fs


def rk3588(root: Path, *, total_mib: float = 16384, available_mib: float = 12000, temp_c: float = 45.0,
           npu_load: dict[int, int] | int | None = None, power_w: float | None = 4.2) -> FakeSys:
    """An RK3588 tree (see the module doc) under ``root``; all zones at ``temp_c`` °C.

    ``npu_load`` defaults to ``{0: 0, 1: 0, 2: 0}``; ``power_w=None`` leaves out the hwmon power
    channel (most RK3588 boards have none).
    """
    fs = _base(Path(root), 8)
    fs.set_meminfo(total_mib, available_mib)
    fs.add_policy(0, [0, 1, 2, 3], max_khz=1_800_000)  # Cortex-A55 (rk3588s.dtsi cluster0 OPP max)
    fs.add_policy(4, [4, 5], max_khz=2_400_000)        # Cortex-A76 (cluster1)
    fs.add_policy(6, [6, 7], max_khz=2_400_000)        # Cortex-A76 (cluster2)
    for z in RK3588_ZONES:
        fs.add_zone(z, temp_c, RK3588_SOC_TRIPS if z == "soc-thermal" else RK3588_OTHER_TRIPS)
    fs.npu_load_path = RKNPU_LOAD
    fs.npu_devfreq_path = RK3588_NPU_DEVFREQ
    fs.set_npu_load(npu_load if npu_load is not None else {0: 0, 1: 0, 2: 0})
    fs.set_npu_devfreq(1_000_000_000)
    fs.write("sys/class/hwmon/.keep", "")
    if power_w is not None:
        fs.set_power(power_w)
    return fs


def x86_dev(root: Path, *, cpus: int = 2, total_mib: float = 24576, available_mib: float = 20000,
            temp_c: float = 40.0) -> FakeSys:
    """A small x86_64 tree under ``root``: ``cpus`` CPUs, one policy each, zones ``acpitz``
    (critical trip 105 °C) and ``x86_pkg_temp`` (no trips), no NPU, no power monitor."""
    fs = _base(Path(root), cpus)
    fs.set_meminfo(total_mib, available_mib)
    for i in range(cpus):
        fs.add_policy(i, [i], max_khz=3_000_000, min_khz=800_000, governor="powersave")
    fs.add_zone("acpitz", temp_c, ((105.0, "critical"),), hyst_c=0.0)
    fs.add_zone("x86_pkg_temp", temp_c)
    fs.write("sys/class/hwmon/.keep", "")
    return fs


def sampled_governor(fs: FakeSys, board: str, **overrides):
    """A :class:`edge.governor.governor.Governor` of ``board`` reading ``fs`` (its ``sensors:`` block),
    with settings ``overrides`` merged, sampled once."""
    from edge.config import load_settings
    from edge.governor.governor import Governor

    settings = load_settings(board=board, overrides={"store": {"path": str(fs.root / "x.db")},
                                                     "board": {"sensors": fs.sensors_settings()}, **overrides})
    gov = Governor(settings)
    gov.sample()
    return gov
