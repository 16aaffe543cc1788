"""What ``edge status`` and ``/metrics`` show of the governor: :func:`format_status` (the readable
lines of :meth:`edge.governor.governor.Governor.status`) and the Prometheus-style figures of
:meth:`~edge.governor.governor.Governor.metrics` (:func:`thermal_metrics`, :func:`signal_metrics`,
:func:`llm_metrics`): ``{"name{label=\\"v\\"}": value}``, units in the name, ratios 0..1, unknown
values left out rather than reported as 0."""
from __future__ import annotations

from drivers.sensors import Snapshot
from edge.governor.admission import Decision, mib
from edge.governor.modes import POWER_MODES
from edge.governor.thermal import Limits, ThermalLevels, ZoneThresholds


def label(v: str) -> str:
    """``v`` escaped for a Prometheus label value (backslash, double quote; newlines become spaces)."""
    return str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def thermal_metrics(thermal: ThermalLevels, power_mode: str) -> dict[str, float]:
    """``edge_thermal_level`` (0 normal, 1 warm, 2 hot), ``edge_thermal_level_changes_total``,
    ``edge_power_mode{mode}`` (1 for the current mode, 0 for the others)."""
    m = {"edge_thermal_level": float(thermal.level), "edge_thermal_level_changes_total": float(thermal.changes)}
    for mode in POWER_MODES:
        m[f'edge_power_mode{{mode="{mode}"}}'] = 1.0 if mode == power_mode else 0.0
    return m


def signal_metrics(snap: Snapshot, thresholds: list[ZoneThresholds]) -> dict[str, float]:
    """The sensor readings of ``snap``: ``edge_temperature_celsius{zone}``,
    ``edge_thermal_threshold_celsius{zone,level}`` (``thresholds``: one per zone of ``snap``, in its
    order), ``edge_mem_total_bytes``, ``edge_mem_available_bytes``, ``edge_cpu_load_ratio{cpu}``,
    ``edge_cpu_freq_hertz{policy}``, ``edge_npu_load_ratio{core}``, ``edge_npu_freq_hertz``,
    ``edge_npu_max_freq_hertz``, ``edge_power_watts{sensor}``, ``edge_signal_problems``."""
    m = _thermal_signals(snap, thresholds)
    m.update(_cpu_mem_signals(snap))
    m.update(_npu_power_signals(snap))
    m["edge_signal_problems"] = float(len(snap.problems))
    return m


def _thermal_signals(snap: Snapshot, thresholds: list[ZoneThresholds]) -> dict[str, float]:
    m: dict[str, float] = {}
    for z, th in zip(snap.zones, thresholds, strict=True):
        if z.temp_c is not None:
            m[f'edge_temperature_celsius{{zone="{label(th.zone)}"}}'] = z.temp_c
    for th in thresholds:
        m[f'edge_thermal_threshold_celsius{{zone="{label(th.zone)}",level="warm"}}'] = th.warm_c
        m[f'edge_thermal_threshold_celsius{{zone="{label(th.zone)}",level="hot"}}'] = th.hot_c
    return m


def _cpu_mem_signals(snap: Snapshot) -> dict[str, float]:
    m: dict[str, float] = {}
    if snap.mem.total_bytes is not None:
        m["edge_mem_total_bytes"] = float(snap.mem.total_bytes)
    if snap.mem.available_bytes is not None:
        m["edge_mem_available_bytes"] = float(snap.mem.available_bytes)
    for cpu, r in snap.cpu_load.items():
        m[f'edge_cpu_load_ratio{{cpu="{label(cpu)}"}}'] = r
    for pol in snap.policies:
        if pol.cur_khz is not None:
            m[f'edge_cpu_freq_hertz{{policy="{label(pol.name)}"}}'] = pol.cur_khz * 1000.0
    return m


def _npu_power_signals(snap: Snapshot) -> dict[str, float]:
    m: dict[str, float] = {}
    if snap.npu_load is not None:
        for core, r in snap.npu_load.cores.items():
            m[f'edge_npu_load_ratio{{core="{label(core)}"}}'] = r
    if snap.npu_devfreq is not None:
        if snap.npu_devfreq.cur_hz is not None:
            m["edge_npu_freq_hertz"] = float(snap.npu_devfreq.cur_hz)
        if snap.npu_devfreq.max_hz is not None:
            m["edge_npu_max_freq_hertz"] = float(snap.npu_devfreq.max_hz)
    for pw in snap.power:
        m[f'edge_power_watts{{sensor="{label(pw.key)}"}}'] = pw.watts
    return m


def llm_metrics(limits: Limits, loaded: bool, last_reload_ms: float | None,
                decision: Decision | None) -> dict[str, float]:
    """``edge_llm_threads``, ``edge_llm_allowed``, ``edge_llm_max_tokens``,
    ``edge_llm_token_pacing_ms`` (from ``limits``), ``edge_llm_loaded``, ``edge_llm_reload_ms``
    (ms, when one happened), and from the last admission ``decision``: ``edge_llm_admitted``,
    ``edge_llm_n_ctx``, ``edge_llm_estimate_bytes``, ``edge_mem_budget_bytes``."""
    m = {"edge_llm_threads": float(limits.llm_threads), "edge_llm_allowed": 1.0 if limits.llm_allowed else 0.0,
         "edge_llm_max_tokens": float(limits.max_tokens), "edge_llm_token_pacing_ms": float(limits.token_pacing_ms),
         "edge_llm_loaded": 1.0 if loaded else 0.0}
    if last_reload_ms is not None:
        m["edge_llm_reload_ms"] = float(last_reload_ms)
    d = decision
    if d is not None:
        m["edge_llm_admitted"] = 1.0 if d.admitted else 0.0
        if d.n_ctx is not None:
            m["edge_llm_n_ctx"] = float(d.n_ctx)
        if d.estimate is not None:
            m["edge_llm_estimate_bytes"] = float(d.estimate.total_bytes)
        if d.budget_bytes is not None:
            m["edge_mem_budget_bytes"] = float(d.budget_bytes)
    return m


def format_status(st: dict) -> str:
    """:meth:`edge.governor.governor.Governor.status` as readable lines (``edge status`` without ``--json``)."""
    lines = [f"board {st['board']}, power mode {st['power_mode']}: level {st['level'].upper()}"]
    sig = st.get("signals") or {}
    mem = sig.get("mem") or {}
    lines.append(f"memory: MemTotal {mib(mem.get('total_bytes'))}, MemAvailable {mib(mem.get('available_bytes'))}")
    load = (sig.get("cpu") or {}).get("load") or {}
    if load:
        lines.append("cpu load: " + ", ".join(f"{k} {v * 100:.0f} %" for k, v in load.items()))
    for pol in (sig.get("cpu") or {}).get("policies") or []:
        cur = pol.get("cur_khz")
        lines.append(f"cpufreq {pol['name']} (CPUs {pol['cpus']}): "
                     f"{'unknown' if cur is None else f'{cur / 1000:.0f} MHz'}, {pol.get('governor') or '?'}")
    ths = st.get("thresholds") or []
    for i, z in enumerate(sig.get("thermal") or []):
        t = z.get("temp_c")
        th = ths[i] if i < len(ths) else None  # same order: both come from the same reading
        extra = f" (warm {th['warm_c']:.1f}, hot {th['hot_c']:.1f} °C)" if th else ""
        name = th["zone"] if th else (z.get("type") or z["name"])
        lines.append(f"thermal {name}: {'unknown' if t is None else f'{t:.1f} °C'}{extra}")
    npu = sig.get("npu") or {}
    if npu.get("load"):
        lines.append("npu load: " + ", ".join(f"{k} {v * 100:.0f} %" for k, v in npu["load"].items()))
    df = npu.get("devfreq")
    if df and df.get("cur_hz"):
        lines.append(f"npu clock: {df['cur_hz'] / 1e6:.0f} MHz of {(df.get('max_hz') or 0) / 1e6:.0f} MHz, "
                     f"{df.get('governor') or '?'}")
    for p in sig.get("power") or []:
        lines.append(f"power {p.get('name') or p['hwmon']}/{p.get('label') or p['channel']}: {p['watts']:.2f} W")
    llm = st["engines"]["llm"]
    chosen = ""
    if "admitted" in llm:
        chosen = (f"; admitted {llm['chosen_model']} n_ctx {llm['chosen_n_ctx']}" if llm["admitted"]
                  else "; NOT admitted")
    lines.append(f"engines: asr {st['engines']['asr'].get('engine')} {st['engines']['asr'].get('model', '')}, "
                 f"llm {llm['engine']} {llm['model']} n_ctx {llm['n_ctx']}{chosen}, tts {st['engines']['tts']['engine']}")
    tp = st["thread_plan"]
    lines.append(f"threads: {tp['llm_threads']} LLM on CPUs {tp['llm_cpus']}, audio on CPUs {tp['audio_cpus']}")
    lim = st["limits"]
    lines.append(f"limits: llm {'allowed' if lim['llm_allowed'] else 'OFF (grammar only)'}, max_tokens "
                 f"{lim['max_tokens']}, pacing {lim['token_pacing_ms']} ms" +
                 (f", notice {lim['notice']!r}" if lim.get("notice") else ""))
    lines.append("reasons:")
    lines += [f"  - {r}" for r in st["reasons"]]
    return "\n".join(lines)
