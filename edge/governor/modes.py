"""The governor's vocabulary shared by its rooms: the thermal :data:`LEVELS` and the power modes
(:class:`PowerMode`, :data:`POWER_MODES`), which change thresholds (:mod:`edge.governor.thermal`),
LLM threads (:mod:`edge.governor.threads`) and answer length (:class:`edge.governor.governor.Governor`)."""
from __future__ import annotations

from dataclasses import dataclass

#: Thermal levels, by index: 0 normal, 1 warm, 2 hot.
LEVELS = ("normal", "warm", "hot")


def level_index(level: str | int) -> int:
    """The index (0..2) of a level given by name or index.

    Raises:
        ValueError: not one of :data:`LEVELS`.
    """
    if isinstance(level, int):
        if not 0 <= level < len(LEVELS):
            raise ValueError(f"thermal level {level} not in 0..{len(LEVELS) - 1}")
        return level
    if level not in LEVELS:
        raise ValueError(f"thermal level {level!r} not one of {LEVELS}")
    return LEVELS.index(level)


@dataclass(frozen=True)
class PowerMode:
    """What a ``governor.power_mode`` changes: thresholds are lowered by ``trip_offset_c`` °C
    (degrade earlier, before the kernel throttles at its passive trips), LLM threads ≤
    ``cpu_fraction`` of the cores (never above ``governor.cpu_fraction``), answer budget ×
    ``max_tokens_scale``."""

    trip_offset_c: float
    cpu_fraction: float
    max_tokens_scale: float


#: Chosen here (no external source): performance uses the board's trip points as they are and the
#: full 70 % of the cores; balanced degrades 5 °C before the kernel's passive trip, half the cores;
#: powersave 10 °C before, a quarter of the cores and half-length answers.
POWER_MODES = {
    "performance": PowerMode(trip_offset_c=0.0, cpu_fraction=0.70, max_tokens_scale=1.0),
    "balanced": PowerMode(trip_offset_c=5.0, cpu_fraction=0.50, max_tokens_scale=1.0),
    "powersave": PowerMode(trip_offset_c=10.0, cpu_fraction=0.25, max_tokens_scale=0.5),
}
