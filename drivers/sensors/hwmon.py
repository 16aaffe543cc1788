"""Power readings from hwmon (``/sys/class/hwmon/hwmonN``), where a board has a power monitor.

Documentation/hwmon/sysfs-interface.rst: ``power[1-*]_input`` is the instantaneous power in
microwatts (µW); ``power[1-*]_label`` names the channel; ``name`` names the chip. Boards without
a power monitor simply have no ``power*_input`` files; that is not a problem.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from drivers.sensors._read import read_int, read_line

MICRO = 1_000_000.0  # µW per W
_POWER_RE = re.compile(r"^power(\d+)_input$")
_HWMON_RE = re.compile(r"^hwmon(\d+)$")


@dataclass(frozen=True)
class PowerReading:
    """``hwmon`` (``hwmon0``), chip ``name``, ``channel`` (``power1``), ``label`` and ``watts`` (W)."""

    hwmon: str
    name: str | None
    channel: str
    label: str | None
    watts: float

    @property
    def key(self) -> str:
        """A stable id: ``name/label`` or ``hwmonN/powerK``."""
        return f"{self.name or self.hwmon}/{self.label or self.channel}"

    def to_dict(self) -> dict:
        return {"hwmon": self.hwmon, "name": self.name, "channel": self.channel, "label": self.label,
                "watts": self.watts}


def read_power(hwmon_dir: Path) -> tuple[list[PowerReading], list[str]]:
    """Every ``power*_input`` of every ``hwmonN`` under ``hwmon_dir``; never raises."""
    try:
        devs = sorted((int(m.group(1)), p) for p in hwmon_dir.iterdir() if (m := _HWMON_RE.match(p.name)))
    except FileNotFoundError:
        return [], [f"{hwmon_dir}: missing (no hwmon: power unknown)"]
    except OSError as e:
        return [], [f"{hwmon_dir}: cannot list ({e.strerror or e})"]
    out: list[PowerReading] = []
    problems: list[str] = []
    for _, d in devs:
        try:
            chans = sorted(int(m.group(1)) for p in d.iterdir() if (m := _POWER_RE.match(p.name)))
        except OSError as e:
            problems.append(f"{d}: cannot list ({e.strerror or e})")
            continue
        if not chans:
            continue
        name, _ = read_line(d / "name")
        for k in chans:
            uw, why = read_int(d / f"power{k}_input")
            if uw is None or uw < 0:
                problems.append(why or f"{d / f'power{k}_input'}: negative power {uw} µW")
                continue
            label = read_line(d / f"power{k}_label")[0]  # optional file: None when absent
            out.append(PowerReading(d.name, name, f"power{k}", label, uw / MICRO))
    return out, problems
