"""Rockchip NPU load (rknpu debugfs) and NPU clock (devfreq).

``/sys/kernel/debug/rknpu/load`` is written by ``rknpu_load_show()`` in the rknpu driver
(``drivers/rknpu/rknpu_debugger.c``): ``"NPU load: "`` then, on multi-core NPUs (RK3588: 3 cores),
``" Core%d: "`` + ``"%2.d%%,"`` per core, else ``"%2.d%%"`` once. Both forms are read here::

    NPU load:  Core0: 45%, Core1:  0%, Core2:  0%,
    NPU load:  45%

``%2.d`` has precision 0, so a load of 0 prints as blanks (``"Core1:   %,"``); a blank number is
read as 0 %. The file is in debugfs: reading it needs root (or debugfs mounted readable).

devfreq (Documentation/ABI/testing/sysfs-class-devfreq): ``cur_freq``, ``min_freq``,
``max_freq`` in Hz and ``governor``; on RK3588 the NPU's node is ``/sys/class/devfreq/fdab0000.npu``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from drivers.sensors._read import read_frequencies, read_line, read_text

_CORE_RE = re.compile(r"Core\s*(\d+)\s*:\s*(\d*)\s*%")
_SINGLE_RE = re.compile(r"^\s*(?:NPU load\s*:)?\s*(\d*)\s*%\s*,?\s*$")


def parse_npu_load(text: str) -> dict[str, float]:
    """rknpu ``load`` text → ``{"core0": 0.45, ...}`` (per-core form) or ``{"npu": 0.45}``
    (single form); ratios 0..1.

    Raises:
        ValueError: neither form, or a percentage above 100.
    """
    first = text.strip().splitlines()[0] if text.strip() else ""
    cores = _CORE_RE.findall(first)
    if cores:
        out = {}
        for idx, pct in cores:
            out[f"core{int(idx)}"] = _ratio(pct, first)
        return out
    m = _SINGLE_RE.match(first)
    if m and "%" in first and (m.group(1) or "NPU load" in first):
        return {"npu": _ratio(m.group(1), first)}
    raise ValueError(f"not an rknpu load line: {first[:60]!r}")


def _ratio(pct: str, line: str) -> float:
    v = int(pct) if pct else 0  # "%2.d" prints 0 as blanks
    if v > 100:
        raise ValueError(f"load {v}% above 100% in {line[:60]!r}")
    return v / 100.0


@dataclass(frozen=True)
class NpuLoad:
    """``cores``: ratio 0..1 per core (``core0``…, or ``npu`` for the single form); empty when
    unknown, with ``problems`` saying why."""

    cores: dict[str, float] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return dict(self.cores)


def read_npu_load(path: Path) -> NpuLoad:
    """Read the rknpu ``load`` file; never raises."""
    text, why = read_text(path)
    if text is None:
        return NpuLoad({}, (why,))
    try:
        return NpuLoad(parse_npu_load(text))
    except ValueError as e:
        return NpuLoad({}, (f"{path}: {e}",))


@dataclass(frozen=True)
class Devfreq:
    """A devfreq device: ``cur_hz``, ``min_hz``, ``max_hz`` (Hz) and ``governor``; ``None`` when unknown."""

    name: str
    cur_hz: int | None = None
    min_hz: int | None = None
    max_hz: int | None = None
    governor: str | None = None
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"name": self.name, "cur_hz": self.cur_hz, "min_hz": self.min_hz, "max_hz": self.max_hz,
                "governor": self.governor}


def read_devfreq(device_dir: Path) -> Devfreq:
    """Read ``cur_freq``/``min_freq``/``max_freq`` (Hz) and ``governor`` of one devfreq device."""
    problems = []
    vals = read_frequencies(device_dir, {"cur_hz": "cur_freq", "min_hz": "min_freq", "max_hz": "max_freq"}, problems)
    gov, why = read_line(device_dir / "governor")
    if why:
        problems.append(why)
    return Devfreq(device_dir.name, governor=gov, problems=tuple(problems), **vals)
