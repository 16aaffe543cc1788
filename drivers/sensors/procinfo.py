"""What procfs says about the CPU and about one process's memory: the CPU model
(``/proc/cpuinfo``), the board model (``/proc/device-tree/model``) and a process's resident memory
(``/proc/<pid>/status`` ``VmRSS``/``VmHWM``). Nothing here raises for a missing or garbled file:
the value is ``None``.

Formats, with their sources:

- ``/proc/cpuinfo`` (proc(5)): on x86 one ``model name : AMD EPYC 7B13`` line per CPU; on arm64
  kernels there is no model name, only ``CPU implementer : 0x41`` / ``CPU part : 0xd0b`` per CPU.
  The Arm part numbers below are the MIDR_EL1 PartNum values of the Cortex-A Technical Reference
  Manuals (also in Linux ``arch/arm64/include/asm/cputype.h``: ``ARM_CPU_PART_CORTEX_A55 0xD05``,
  ``..._A76 0xD0B`` ...). An RK3588 reads "4x Cortex-A55 + 4x Cortex-A76".
- ``/proc/device-tree/model``: the device tree's ``model`` string, NUL-terminated
  (``Radxa ROCK 5B``); absent on x86.
- ``/proc/<pid>/status`` (proc(5)): ``VmHWM:  123456 kB`` is the peak resident set size,
  ``VmRSS`` the current one, both in KiB.
"""
from __future__ import annotations

import resource
import sys
from collections import Counter
from pathlib import Path

from drivers.sensors._read import read_text

KIB = 1024  # bytes per "kB" in /proc/<pid>/status (proc(5): kibibytes)

#: Arm Ltd. (implementer 0x41) MIDR part numbers → core names (Linux arch/arm64/include/asm/cputype.h).
ARM_PARTS = {
    0xD03: "Cortex-A53", 0xD04: "Cortex-A35", 0xD05: "Cortex-A55", 0xD07: "Cortex-A57",
    0xD08: "Cortex-A72", 0xD09: "Cortex-A73", 0xD0A: "Cortex-A75", 0xD0B: "Cortex-A76",
    0xD0D: "Cortex-A77", 0xD41: "Cortex-A78", 0xD46: "Cortex-A510", 0xD47: "Cortex-A710",
}


def parse_cpu_model(text: str) -> str | None:
    """``/proc/cpuinfo`` text → the CPU model: x86 ``model name`` (one value, or ``"2x A + 4x B"``
    when they differ), else the Arm cores by part number (``"4x Cortex-A55 + 4x Cortex-A76"``),
    else a ``Hardware``/``Model`` line; ``None`` when nothing is recognised."""
    names: list[str] = []
    parts: list[str] = []
    other: str | None = None
    implementer = None
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip().lower(), value.strip()
        if key == "model name" and value:
            names.append(value)
        elif key == "cpu implementer":
            implementer = value
        elif key == "cpu part":
            try:
                num = int(value, 16)
            except ValueError:
                continue
            name = ARM_PARTS.get(num) if implementer in (None, "0x41") else None
            parts.append(name or f"part {value} (implementer {implementer})")
        elif key in ("hardware", "model") and value and other is None:
            other = value
    for found in (names, parts):
        if found:
            counts = Counter(found)
            if len(counts) == 1:
                return found[0]
            return " + ".join(f"{n}x {name}" for name, n in sorted(counts.items(), key=lambda kv: kv[0]))
    return other


def cpu_model(path: Path = Path("/proc/cpuinfo")) -> str | None:
    """:func:`parse_cpu_model` of ``path``; ``None`` when unreadable."""
    text, _ = read_text(path)
    return parse_cpu_model(text) if text is not None else None


def board_model(path: Path = Path("/proc/device-tree/model")) -> str | None:
    """The device tree's model string (``Radxa ROCK 5B``); ``None`` on machines without one (x86)."""
    text, _ = read_text(path)
    if text is None:
        return None
    text = text.replace("\x00", "").strip()
    return text or None


def parse_status_kib(text: str) -> dict[str, int]:
    """``/proc/<pid>/status`` text → ``{"VmHWM": bytes, "VmRSS": bytes, ...}`` for every ``kB`` line."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        key, sep, rest = line.partition(":")
        fields = rest.split()
        if sep and len(fields) == 2 and fields[1] == "kB" and fields[0].isdigit():
            out[key.strip()] = int(fields[0]) * KIB
    return out


def status_kib(pid: int, proc: Path = Path("/proc")) -> dict[str, int]:
    """:func:`parse_status_kib` of process ``pid``'s ``<proc>/<pid>/status`` (bytes); ``{}`` when it
    cannot be read (the process is gone, no procfs)."""
    text, _ = read_text(proc / str(pid) / "status")
    return parse_status_kib(text) if text is not None else {}


def peak_rss_bytes(status: Path = Path("/proc/self/status")) -> int | None:
    """Peak resident set size (``VmHWM``) in bytes of the process whose ``status`` file this is.

    Without procfs (not Linux) and for ``/proc/self/status`` only, falls back to
    ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` (KiB on Linux, bytes on macOS; getrusage(2)).
    ``None`` when neither is available.
    """
    text, _ = read_text(status)
    if text is not None:
        v = parse_status_kib(text).get("VmHWM")
        if v is not None:
            return v
    if status != Path("/proc/self/status"):
        return None
    try:
        r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(r) if sys.platform == "darwin" else int(r) * KIB
    except (ImportError, OSError):
        return None
