"""``/proc/meminfo``: MemTotal and MemAvailable in bytes.

The kernel writes sizes in kibibytes (``MemTotal:  16288756 kB``; proc(5)). MemAvailable (Linux ≥ 3.14)
is the kernel's estimate of memory available to start new applications without swapping.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from drivers.sensors._read import read_text

KIB = 1024  # bytes per "kB" in /proc/meminfo (proc(5): the unit is kibibytes)


@dataclass(frozen=True)
class MemInfo:
    """``total_bytes`` (MemTotal) and ``available_bytes`` (MemAvailable), each ``None`` when unknown;
    ``problems`` says why."""

    total_bytes: int | None
    available_bytes: int | None
    problems: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict:
        return {"total_bytes": self.total_bytes, "available_bytes": self.available_bytes}


def parse_meminfo(text: str) -> dict[str, int]:
    """``/proc/meminfo`` text → ``{"MemTotal": bytes, ...}``; lines that do not parse are skipped."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        key, sep, rest = line.partition(":")
        if not sep:
            continue
        parts = rest.split()
        if not parts:
            continue
        try:
            value = int(parts[0])
        except ValueError:
            continue
        if value < 0:
            continue
        unit = parts[1] if len(parts) > 1 else ""
        out[key.strip()] = value * KIB if unit == "kB" else value
    return out


def read_meminfo(path: Path) -> MemInfo:
    """Read ``path`` (a ``/proc/meminfo``); never raises. A missing key is ``None`` with a reason."""
    text, why = read_text(path)
    if text is None:
        return MemInfo(None, None, (why,))
    values = parse_meminfo(text)
    problems = []
    total = values.get("MemTotal")
    avail = values.get("MemAvailable")
    if total is None or total == 0:
        total = None
        problems.append(f"{path}: no usable MemTotal line")
    if avail is None:
        problems.append(f"{path}: no MemAvailable line (kernel older than 3.14, or not a meminfo file)")
    return MemInfo(total, avail, tuple(problems))
