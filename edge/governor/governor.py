"""The governor (:class:`Governor`): reads the board's signals, keeps the thermal level, plans
threads, admits models, and reports it all for ``edge status`` and ``/metrics``.

Every signal comes from :mod:`drivers.sensors`, read from the paths in the board config
(``board.sensors``, :func:`sensor_paths`); a missing, unreadable or garbled file makes that signal
unknown and is listed in :meth:`Governor.reasons`, it never stops the service. Every decision is
logged with its reason on the ``edge.governor`` logger.
"""
from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any, Callable

from drivers import cpu
from drivers.sensors import SensorPaths, SensorReader, Snapshot, read_meminfo
from edge.config import BoardSettings, GovernorSettings, Settings
from edge.governor.admission import Decision, admit
from edge.governor.idle import IdleUnloader
from edge.governor.modes import LEVELS, POWER_MODES
from edge.governor.status import llm_metrics, signal_metrics, thermal_metrics
from edge.governor.thermal import Limits, ThermalLevels, ZoneThresholds, zone_labels, zone_thresholds
from edge.governor.threads import ThreadPlan, thread_plan

log = logging.getLogger("edge.governor")

#: The spoken notice at the hot level under ``language: zh`` when ``governor.cooling_notice`` is the default.
COOLING_NOTICE_ZH = "我正在降温，现在只能处理库存指令。"


def sensor_paths(board: BoardSettings | None) -> SensorPaths:
    """:class:`drivers.sensors.SensorPaths` from a board config's ``sensors:`` block."""
    s = (board or BoardSettings()).sensors
    return SensorPaths(root=Path(s.root), meminfo=s.meminfo, stat=s.stat, cpu_pressure=s.cpu_pressure, cpufreq=s.cpufreq, thermal=s.thermal,
                       thermal_zones=tuple(s.thermal_zones), npu_load=s.npu_load, npu_devfreq=s.npu_devfreq,
                       hwmon=s.hwmon)


#: A big cluster whose frequency ceiling is below this share of its hardware maximum is throttled.
THROTTLED_BELOW = 0.75


def throttle_level(policies, big_cores: set[int]) -> tuple[int, str]:
    """``(1, why)`` when a cpufreq policy of the big cores is capped below :data:`THROTTLED_BELOW`
    of its ``cpuinfo_max_freq`` (``scaling_max_freq`` lowered, or the ``powersave`` governor, which
    holds ``scaling_min_freq``), else ``(0, "")``: a throttled board runs at ``warm`` (fewer threads,
    shorter answers), never with more threads to make up for the lost speed."""
    for p in policies:
        if not big_cores & set(p.cpus) or not p.hw_max_khz:
            continue
        ceiling, what = (p.min_khz, "powersave governor") if p.governor == "powersave" else (p.max_khz, "scaling_max_freq")
        if ceiling and ceiling < THROTTLED_BELOW * p.hw_max_khz:
            return 1, (f"cpufreq: big cores {list(p.cpus)} capped at {ceiling / 1e6:.2f} of {p.hw_max_khz / 1e6:.2f} GHz "
                       f"({ceiling / p.hw_max_khz:.0%}, {what}): warm")
    return 0, ""


class Governor:
    """Reads the board's signals, keeps the thermal level, plans threads, admits models.

    Args:
        settings: validated :class:`edge.config.Settings` (``board``, ``governor``, ``llm``).
        clock: seconds, monotonic; injected in tests to step time without sleeping.
        manifest_path: model manifest for :meth:`admit` (default: ``$EDGE_MANIFEST`` or the repo's).

    Call :meth:`sample` periodically (e.g. every few seconds and before a turn), read
    :meth:`limits` before using the LLM, :meth:`admit` before loading it.
    """

    def __init__(self, settings: Settings, *, clock: Callable[[], float] = time.monotonic,
                 manifest_path: str | os.PathLike[str] | None = None):
        self.settings = settings
        self.board = settings.board or BoardSettings()
        self._pin_warned = False
        self.gs = settings.governor
        self.power_mode = self.gs.power_mode
        self.clock = clock
        self.manifest_path = manifest_path
        self.paths = sensor_paths(self.board)
        self.reader = SensorReader(self.paths)
        self.thermal = ThermalLevels(self.gs.hysteresis_c, self.gs.dwell_s)
        self.snapshot: Snapshot | None = None
        self.thresholds: list[ZoneThresholds] = []
        self.decision: Decision | None = None
        self.llm_loaded = False
        self.last_reload_ms: float | None = None
        self._problems_logged: frozenset[str] = frozenset()
        self._plan_logged: ThreadPlan | None = None
        self.throttle, self.throttle_reason = 0, ""  # cpufreq throttling of the big cores (a level floor)
        self.cpu_limit: float | None = None  # the cgroup's cpu.max in CPUs

    # -- signals, level -----------------------------------------------------------------------
    @property
    def level_value(self) -> int:
        """0 normal, 1 warm, 2 hot: the thermal level, at least ``warm`` while the big cores are throttled."""
        return max(self.thermal.level, self.throttle)

    @property
    def level(self) -> str:
        return LEVELS[self.level_value]

    def sample(self) -> Snapshot:
        """Read every signal and update the thermal level; logs level changes and new problems."""
        snap = self.reader.read()
        self.snapshot = snap
        labels = zone_labels(snap.zones)
        self.thresholds = [zone_thresholds(z, self.gs, self.power_mode, lb) for z, lb in zip(snap.zones, labels, strict=True)]
        before = self.thermal.level
        change = self.thermal.update([(th.zone, z.temp_c, th) for z, th in zip(snap.zones, self.thresholds, strict=True)],
                                     self.clock())
        if change:
            (log.warning if self.thermal.level > before else log.info)("thermal: %s", change)
        big = {c for cl in (self.board.cpu_clusters or []) if cl.kind == "big" for c in cl.cores}
        throttle, why = throttle_level(snap.policies, big)
        if (throttle, why) != (self.throttle, self.throttle_reason):
            (log.warning if throttle else log.info)("%s", why or "cpufreq: big cores no longer throttled")
        self.throttle, self.throttle_reason = throttle, why
        self.cpu_limit, _ = cpu.cgroup_cpu_limit(self.paths.root)
        probs = frozenset(snap.problems)
        if probs != self._problems_logged:
            for p in sorted(probs - self._problems_logged):
                log.warning("signal unknown: %s", p)
            for p in sorted(self._problems_logged - probs):
                log.info("signal back: %s", p)
            self._problems_logged = probs
        return snap

    # -- plan, limits -------------------------------------------------------------------------
    def plan(self) -> ThreadPlan:
        """:func:`thread_plan` for this board at the current level and power mode (logged on change)."""
        pressure = self.snapshot.cpu_pressure if self.snapshot is not None else None
        p = thread_plan(self.board, self.level_value, self.power_mode, self.gs.cpu_fraction, cpu_limit=self.cpu_limit,
                        cpu_pressure=pressure, pressure_limit_pct=self.gs.cpu_pressure_pct)
        if p != self._plan_logged:
            log.info("threads: %d LLM threads on CPUs %s, audio on CPUs %s: %s", p.llm_threads,
                     list(p.llm_cpus), list(p.audio_cpus), p.reason)
            self._plan_logged = p
        return p

    def cpu_sets(self) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """``(audio_cpus, llm_cpus)`` to pin to, on a board whose config declares big and little
        clusters (audio, wake word and VAD on a little core; recognition and the LLM on the big
        cores); ``None`` elsewhere (a uniform machine is left to the kernel's scheduler)."""
        clusters = list(getattr(self.board, "cpu_clusters", None) or [])
        kinds = {c.kind for c in clusters}
        if not {"big", "little"} <= kinds:
            return None
        p = self.plan()
        allowed = cpu.allowed_cpus()  # the CPUs this process may use (cpuset, taskset, CPUAffinity=)
        if allowed is None:
            return None
        audio = tuple(c for c in p.audio_cpus if c in allowed)
        llm = tuple(c for c in p.llm_cpus if c in allowed)
        if not audio or not llm:
            if not self._pin_warned:
                log.warning("affinity: the board config's CPUs (audio %s, LLM %s) are not all among this process's "
                            "CPUs %s; not pinning (check board.cpu_clusters for this board)",
                            list(p.audio_cpus), list(p.llm_cpus), sorted(allowed))
                self._pin_warned = True
            return None
        return audio, llm

    def _cooling_notice(self) -> str:
        """``governor.cooling_notice``; in Chinese when ``language: zh`` and it was left at its default."""
        notice = self.gs.cooling_notice
        if getattr(self.settings, "language", "en") == "zh" and notice == GovernorSettings.model_fields["cooling_notice"].default:
            return COOLING_NOTICE_ZH
        return notice

    def limits(self) -> Limits:
        """What the LLM may do at the current level (see :class:`Limits`). Threads are the plan's,
        capped by ``llm.threads``. Partial re-decoding gets ``endpoint.partial_cpu_fraction``,
        half of it when warm, none when hot."""
        p = self.plan()
        lvl = self.level_value
        mode = POWER_MODES[self.power_mode]
        max_tokens = self.settings.llm.max_tokens * mode.max_tokens_scale
        pacing = 0
        if lvl >= 1:
            max_tokens *= self.gs.warm_max_tokens_scale
            pacing = self.gs.warm_token_pacing_ms
        threads = min(p.llm_threads, self.settings.llm.threads)
        llm_ok = lvl < 2 and self.settings.llm.engine != "none"
        partials = self.settings.endpoint.partial_cpu_fraction * (1.0, 0.5, 0.0)[lvl]
        return Limits(self.level, llm_ok, threads if llm_ok else 0, p.llm_cpus, p.audio_cpus,
                      max(1, int(max_tokens)), pacing, self._cooling_notice() if lvl >= 2 else None,
                      "; ".join(r for r in (self.thermal.reason, self.throttle_reason) if r),
                      partial_cpu_fraction=partials)

    # -- memory -------------------------------------------------------------------------------
    def candidates(self, model: str | None = None) -> list[str]:
        """The configured model (or ``model``), then ``governor.smaller_models``, without repeats."""
        out: list[str] = []
        for m in [model or self.settings.llm.model, *self.gs.smaller_models]:
            if m and m not in out:
                out.append(m)
        return out

    def admit(self, model: str | None = None, n_ctx: int | None = None) -> Decision:
        """:func:`admit` with the current MemTotal/MemAvailable (read now) and the config."""
        mem = read_meminfo(self.paths.path(self.paths.meminfo))
        ram = getattr(self.board, "ram_mib", None)
        d = admit(self.candidates(model), n_ctx or self.settings.llm.n_ctx, mem,
                  cache_type=self.gs.kv_cache_type, overhead_mib=self.gs.pipeline_overhead_mib,
                  mem_fraction=self.gs.mem_fraction, min_n_ctx=self.gs.min_n_ctx,
                  ram_mib=ram if isinstance(ram, (int, float)) else None, manifest_path=self.manifest_path,
                  models_dir=getattr(getattr(self.settings, "models", None), "dir", None))
        self.decision = d
        return d

    # -- LLM loading ----------------------------------------------------------------------------
    def idle_unloader(self, load: Callable[[], Any]) -> IdleUnloader:
        """An :class:`IdleUnloader` of ``load()`` (e.g. :func:`edge.llm.loader.step_loader`, which
        admits the model first) with ``governor.idle_unload_s``, this governor's clock, and callbacks
        that keep :meth:`status` / :meth:`metrics` current (loaded, last reload ms)."""
        return IdleUnloader(load, self.gs.idle_unload_s, clock=self.clock,
                            on_load=self._on_load, on_unload=self._on_unload)

    def _on_load(self, ms: float) -> None:
        self.llm_loaded = True
        self.last_reload_ms = ms

    def _on_unload(self, idle_s: float) -> None:
        self.llm_loaded = False

    # -- reporting ------------------------------------------------------------------------------
    def reasons(self) -> list[str]:
        """Why things are as they are: the thermal level, the admission, unknown signals."""
        out = [f"thermal: {self.thermal.reason}"] + ([self.throttle_reason] if self.throttle_reason else [])
        if self.decision is not None:
            out.append(f"memory: {self.decision.reason}")
        if self.snapshot is not None:
            out += [f"signal unknown: {p}" for p in self.snapshot.problems]
        return out

    def engines(self) -> dict:
        """The configured engines and what admission chose."""
        s = self.settings
        llm: dict[str, Any] = {"engine": s.llm.engine, "model": s.llm.model, "n_ctx": s.llm.n_ctx}
        chain = getattr(s.llm, "chain", None)
        if chain:
            llm["chain"] = [c.model_dump(mode="json") for c in chain]
        if self.decision is not None:
            llm["admitted"] = self.decision.admitted
            llm["chosen_model"] = self.decision.model
            llm["chosen_n_ctx"] = self.decision.n_ctx
            llm["admission"] = self.decision.to_dict()
        asr = {"engine": s.asr.engine}
        sub = getattr(s.asr, s.asr.engine, None)
        if sub is not None and hasattr(sub, "model"):
            asr["model"] = sub.model
        from edge.stages.tts.engine import engine_for  # what tts.engine null picks for this language

        try:
            tts = engine_for(s.tts, getattr(s, "language", "en"))
        except Exception:  # a TtsError (kokoro named, not installed) is the TTS stage's to report
            tts = s.tts.engine
        return {"asr": asr, "llm": llm, "tts": {"engine": tts}}

    def status(self) -> dict:
        """Everything for ``edge status --json``: level, reasons, signals, thresholds, engines,
        thread plan, limits, power mode, LLM load state. JSON-ready."""
        snap = self.snapshot
        return {
            "board": self.board.name,
            "power_mode": self.power_mode,
            "level": self.level,
            "level_value": self.level_value,
            "reasons": self.reasons(),
            "signals": snap.to_dict() if snap else None,
            "thresholds": [t.to_dict() for t in self.thresholds],
            "engines": self.engines(),
            "thread_plan": self.plan().to_dict(),
            "limits": self.limits().to_dict(),
            "llm": {"loaded": self.llm_loaded, "last_reload_ms": self.last_reload_ms,
                    "idle_unload_s": self.gs.idle_unload_s},
        }

    def metrics(self) -> dict[str, float]:
        """The same figures as :meth:`status`, Prometheus-style: ``{"name{label=\\"v\\"}": value}``.

        Names (units in the name, ratios 0..1): ``edge_thermal_level`` (0 normal, 1 warm, 2 hot),
        ``edge_thermal_level_changes_total``, ``edge_temperature_celsius{zone}``,
        ``edge_thermal_threshold_celsius{zone,level}``, ``edge_mem_total_bytes``,
        ``edge_mem_available_bytes``, ``edge_cpu_load_ratio{cpu}``, ``edge_cpu_freq_hertz{policy}``,
        ``edge_npu_load_ratio{core}``, ``edge_npu_freq_hertz``, ``edge_npu_max_freq_hertz``,
        ``edge_power_watts{sensor}``, ``edge_llm_threads``, ``edge_llm_allowed``,
        ``edge_llm_max_tokens``, ``edge_llm_token_pacing_ms``, ``edge_llm_loaded``,
        ``edge_llm_reload_ms``, ``edge_llm_admitted``, ``edge_llm_n_ctx``,
        ``edge_llm_estimate_bytes``, ``edge_mem_budget_bytes``, ``edge_power_mode{mode}``,
        ``edge_signal_problems``. Unknown values are left out, not reported as 0
        (see :mod:`edge.governor.status`).
        """
        m = thermal_metrics(self.thermal, self.power_mode)
        if self.snapshot is not None:
            m.update(signal_metrics(self.snapshot, self.thresholds))
        m.update(llm_metrics(self.limits(), self.llm_loaded, self.last_reload_ms, self.decision))
        return m
