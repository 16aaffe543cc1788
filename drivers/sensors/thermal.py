"""Thermal zones and their trip points under ``/sys/class/thermal``.

Kernel ABI (Documentation/ABI/testing/sysfs-class-thermal): ``thermal_zoneN/type`` is the zone's
name (on RK3588 from the device tree: ``soc-thermal``, ``bigcore0-thermal``, ``bigcore1-thermal``,
``littlecore-thermal``, ``center-thermal``, ``gpu-thermal``, ``npu-thermal``); ``temp`` is in
milli-°C; ``trip_point_K_temp`` (milli-°C), ``trip_point_K_type`` (``active`` | ``passive`` |
``hot`` | ``critical``) and ``trip_point_K_hyst`` (milli-°C, optional) describe the trips.

RK3588 (Rockchip BSP ``arch/arm64/boot/dts/rockchip/rk3588s.dtsi``): soc-thermal has
trip-point-0 75 °C passive, trip-point-1 85 °C passive, soc-crit 115 °C critical, each with
2 °C hysteresis; the TSADC shuts the chip down in hardware at 120 °C (``rockchip,hw-tshut-temp``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from drivers.sensors._read import read_int, read_line

MILLI = 1000.0  # sysfs thermal values are milli-°C
#: A reading outside this range (°C) is treated as a sensor fault, not a temperature. It is wider
#: than any real SoC reading: RK3588 hardware shutdown is at 120 °C (rk3588s.dtsi hw-tshut-temp).
TEMP_RANGE_C = (-55.0, 150.0)
TRIP_TYPES = ("active", "passive", "hot", "critical")

_ZONE_RE = re.compile(r"^thermal_zone(\d+)$")
_TRIP_RE = re.compile(r"^trip_point_(\d+)_temp$")


@dataclass(frozen=True)
class TripPoint:
    """Trip ``index`` of a zone: ``temp_c`` (°C), ``type`` (one of :data:`TRIP_TYPES`),
    ``hyst_c`` (°C or ``None`` when the kernel gives none)."""

    index: int
    temp_c: float
    type: str
    hyst_c: float | None = None

    def to_dict(self) -> dict:
        return {"index": self.index, "temp_c": self.temp_c, "type": self.type, "hyst_c": self.hyst_c}


@dataclass(frozen=True)
class ThermalZone:
    """``name`` (``thermal_zoneN``), ``type`` (the zone name from the device tree), ``temp_c``
    (°C, ``None`` when unreadable) and its valid ``trips`` sorted by temperature."""

    name: str
    type: str | None
    temp_c: float | None
    trips: tuple[TripPoint, ...] = field(default=())

    @property
    def label(self) -> str:
        """The zone type if known, else the directory name."""
        return self.type or self.name

    def passive_trips(self) -> list[TripPoint]:
        return [t for t in self.trips if t.type == "passive"]

    def to_dict(self) -> dict:
        return {"name": self.name, "type": self.type, "temp_c": self.temp_c,
                "trips": [t.to_dict() for t in self.trips]}


def _temp_c(path: Path) -> tuple[float | None, str | None]:
    v, why = read_int(path)
    if v is None:
        return None, why
    c = v / MILLI
    lo, hi = TEMP_RANGE_C
    if not lo <= c <= hi:
        return None, f"{path}: {v} m°C = {c:g} °C is outside {lo:g}..{hi:g} °C (sensor fault)"
    return c, None


def read_zone(zone_dir: Path) -> tuple[ThermalZone, list[str]]:
    """One ``thermal_zoneN`` directory → the zone and the problems met; never raises."""
    problems: list[str] = []
    ztype, why = read_line(zone_dir / "type")
    if why:
        problems.append(why)
    temp, why = _temp_c(zone_dir / "temp")
    if why:
        problems.append(why)
    trips = []
    try:
        names = [p.name for p in zone_dir.iterdir()]
    except OSError:
        names = []
    for idx in sorted(int(m.group(1)) for n in names if (m := _TRIP_RE.match(n))):
        t, why = _temp_c(zone_dir / f"trip_point_{idx}_temp")
        ttype, why2 = read_line(zone_dir / f"trip_point_{idx}_type")
        if why or why2:
            problems.append(why or why2)
            continue
        if ttype not in TRIP_TYPES:
            problems.append(f"{zone_dir / f'trip_point_{idx}_type'}: unknown trip type {ttype[:20]!r}")
            continue
        hyst = None
        if f"trip_point_{idx}_hyst" in names:
            h, why = read_int(zone_dir / f"trip_point_{idx}_hyst")
            if why:
                problems.append(why)
            elif h >= 0:
                hyst = h / MILLI
        trips.append(TripPoint(idx, t, ttype, hyst))
    trips.sort(key=lambda t: (t.temp_c, t.index))
    return ThermalZone(zone_dir.name, ztype, temp, tuple(trips)), problems


def read_zones(thermal_dir: Path, types: Iterable[str] | None = None) -> tuple[list[ThermalZone], list[str]]:
    """The zones under ``thermal_dir`` (``/sys/class/thermal``), sorted by N; never raises.

    ``types``: zone types to keep (e.g. ``["soc-thermal", "npu-thermal"]``); a listed type that
    is not present is reported as a problem. ``None`` or empty keeps every zone.
    """
    want = list(types or [])
    try:
        dirs = sorted((int(m.group(1)), p) for p in thermal_dir.iterdir() if (m := _ZONE_RE.match(p.name)))
    except FileNotFoundError:
        return [], [f"{thermal_dir}: missing (no thermal zones: temperature unknown)"]
    except OSError as e:
        return [], [f"{thermal_dir}: cannot list ({e.strerror or e})"]
    zones: list[ThermalZone] = []
    problems: list[str] = []
    for _, d in dirs:
        zone, probs = read_zone(d)
        if want and zone.type not in want:
            continue
        zones.append(zone)
        problems.extend(probs)
    for t in want:
        if not any(z.type == t for z in zones):
            problems.append(f"{thermal_dir}: no thermal zone of type {t!r} (configured in board sensors.thermal_zones)")
    if not dirs:
        problems.append(f"{thermal_dir}: no thermal_zone* directories")
    return zones, problems
