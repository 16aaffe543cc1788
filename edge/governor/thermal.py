"""Thermal levels (:class:`ThermalLevels`): ``normal`` → ``warm`` (half the LLM threads, token
pacing, shorter answers) → ``hot`` (grammar path only, a spoken "cooling down" notice). A level
is entered as soon as any watched zone reaches its threshold (:func:`zone_thresholds`: the zone's
passive trips, or ``governor.warm_c`` / ``hot_c``); it is left one step at a time, only after
every zone stayed below ``threshold − hysteresis_c`` for ``dwell_s`` seconds. :class:`Limits`
is what the LLM may do at a level."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from drivers.sensors import ThermalZone
from edge.config import GovernorSettings
from edge.governor.modes import LEVELS, POWER_MODES


@dataclass(frozen=True)
class ZoneThresholds:
    """A zone's ``warm_c`` and ``hot_c`` thresholds (°C, after the power-mode offset) and their ``source``."""

    zone: str
    warm_c: float
    hot_c: float
    source: str

    def of(self, level: int) -> float:
        """The threshold that enters ``level`` (1 = warm, 2 = hot)."""
        return self.warm_c if level == 1 else self.hot_c

    def to_dict(self) -> dict:
        return {"zone": self.zone, "warm_c": self.warm_c, "hot_c": self.hot_c, "source": self.source}


def zone_thresholds(zone: ThermalZone, gs: GovernorSettings, power_mode: str | None = None,
                    label: str | None = None) -> ZoneThresholds:
    """warm = the zone's lowest passive trip, hot = its second passive trip (RK3588 soc-thermal:
    75 / 85 °C); missing ones come from ``governor.warm_c`` / ``hot_c``; hot is kept above warm
    and at most the zone's critical trip. Both are lowered by the power mode's ``trip_offset_c``."""
    mode = POWER_MODES[power_mode or gs.power_mode]
    passive = zone.passive_trips()
    warm = passive[0].temp_c if passive else gs.warm_c
    hot = passive[1].temp_c if len(passive) > 1 else gs.hot_c
    src = ["warm from " + (f"passive trip {passive[0].index}" if passive else "governor.warm_c"),
           "hot from " + (f"passive trip {passive[1].index}" if len(passive) > 1 else "governor.hot_c")]
    if hot <= warm:
        hot = warm + (gs.hot_c - gs.warm_c)
        src.append(f"hot = warm + {gs.hot_c - gs.warm_c:g} °C")
    crit = [t.temp_c for t in zone.trips if t.type in ("critical", "hot")]
    if crit and hot > min(crit):
        hot = min(crit)
        src.append("hot capped at the critical trip")
    if mode.trip_offset_c:
        src.append(f"− {mode.trip_offset_c:g} °C ({power_mode or gs.power_mode})")
    return ZoneThresholds(label or zone.label, warm - mode.trip_offset_c, hot - mode.trip_offset_c, ", ".join(src))


def zone_labels(zones: Iterable[ThermalZone]) -> list[str]:
    """A unique label per zone: its type, or ``type/thermal_zoneN`` when several zones share a type."""
    zones = list(zones)
    counts: dict[str, int] = {}
    for z in zones:
        counts[z.label] = counts.get(z.label, 0) + 1
    return [z.label if counts[z.label] == 1 else f"{z.label}/{z.name}" for z in zones]


class ThermalLevels:
    """The level state machine (0 normal, 1 warm, 2 hot) with hysteresis and dwell.

    :meth:`update` with ``(zone, temp_c, thresholds)`` per watched zone and the time ``now`` (s,
    from an injected clock). Up: immediately, to the highest level any zone reached. Down: one
    level, once every known zone has stayed below ``threshold(level) − hysteresis_c`` for
    ``dwell_s`` s; each further step needs its own dwell. A sample at or above that lower
    threshold restarts the dwell, so a temperature hovering around a threshold changes the level
    once, not at every sample. Zones with an unknown temperature are ignored; with none known the
    level is held.
    """

    def __init__(self, hysteresis_c: float, dwell_s: float):
        self.hysteresis_c = hysteresis_c
        self.dwell_s = dwell_s
        self.level = 0
        self.reason = "normal: no temperature read yet"
        self.changes = 0
        self._below_since: float | None = None

    def _all_below(self, known, level: int) -> tuple[bool, tuple | None]:
        """Whether every zone is below threshold(level) − hysteresis; else the first blocking zone."""
        for z, t, th in known:
            lim = th.of(level) - self.hysteresis_c
            if t >= lim:
                return False, (z, t, lim)
        return True, None

    def update(self, readings: Iterable[tuple[str, float | None, ZoneThresholds]], now: float) -> str | None:
        """Feed one sample; returns the change's reason if the level changed, else ``None``."""
        known = [(z, t, th) for z, t, th in readings if t is not None]
        name = LEVELS[self.level]
        if not known:
            self.reason = f"{name}: no zone temperature known; level held"
            return None

        def lvl(t, th):
            return 2 if t >= th.hot_c else 1 if t >= th.warm_c else 0

        z, t, th = max(known, key=lambda r: (lvl(r[1], r[2]), r[1] - r[2].warm_c))
        target = lvl(t, th)
        if target > self.level:
            old, self.level = self.level, target
            self._below_since = None
            self.changes += 1
            self.reason = (f"{LEVELS[old]} → {LEVELS[target]}: {z} {t:.1f} °C ≥ {LEVELS[target]} threshold "
                           f"{th.of(target):.1f} °C")
            return self.reason
        if self.level == 0:
            self._below_since = None
            self.reason = f"normal: hottest {z} {t:.1f} °C < warm threshold {th.warm_c:.1f} °C"
            return None
        ok, block = self._all_below(known, self.level)
        if not ok:
            bz, bt, lim = block
            self._below_since = None
            self.reason = (f"{name}: {bz} {bt:.1f} °C not below {lim:.1f} °C ({name} threshold − "
                           f"{self.hysteresis_c:g} °C hysteresis)")
            return None
        if self._below_since is None:
            self._below_since = now
        waited = now - self._below_since
        if waited < self.dwell_s:
            self.reason = (f"{name}: all zones below {name} threshold − {self.hysteresis_c:g} °C for "
                           f"{waited:.0f} s of {self.dwell_s:g} s dwell")
            return None
        old = self.level
        self.level -= 1
        self.changes += 1
        self.reason = (f"{LEVELS[old]} → {LEVELS[self.level]}: every zone below its {LEVELS[old]} threshold − "
                       f"{self.hysteresis_c:g} °C for {waited:.0f} s ≥ dwell {self.dwell_s:g} s "
                       f"(hottest {z} {t:.1f} °C)")
        still = self.level > 0 and self._all_below(known, self.level)[0]
        self._below_since = now if still else None
        return self.reason


@dataclass(frozen=True)
class Limits:
    """What the pipeline may do now: ``llm_allowed`` (False = grammar path only), ``llm_threads``
    on ``llm_cpus``, ``audio_cpus``, ``max_tokens`` (answer budget), ``token_pacing_ms`` (pause
    between tokens), ``notice`` (text to speak when the LLM is withheld), ``reason``,
    ``partial_cpu_fraction`` (share of the audio time partial re-decoding may take, 0..1; 0: none)."""

    level: str
    llm_allowed: bool
    llm_threads: int
    llm_cpus: tuple[int, ...]
    audio_cpus: tuple[int, ...]
    max_tokens: int
    token_pacing_ms: int
    notice: str | None
    reason: str
    partial_cpu_fraction: float = 0.0

    def to_dict(self) -> dict:
        return {"level": self.level, "llm_allowed": self.llm_allowed, "llm_threads": self.llm_threads,
                "llm_cpus": list(self.llm_cpus), "audio_cpus": list(self.audio_cpus),
                "max_tokens": self.max_tokens, "token_pacing_ms": self.token_pacing_ms, "notice": self.notice,
                "reason": self.reason, "partial_cpu_fraction": self.partial_cpu_fraction}
