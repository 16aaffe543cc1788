"""The Status page as a dashboard: what the charts draw and the figures in words.

- :func:`turn_figures`: from the events files the voice loop and Wyoming write (:mod:`edge.events`),
  the end of speech → reply time of the last :data:`LAST_TURNS` turns as percentiles by path
  (template, paraphrase, model, documents), wake words heard and wakes dismissed with no speech.
- :func:`charts`: the ring's samples (:mod:`edge.service.console.ring`) as chart series over the
  last hour or day: zone temperatures, memory in use against the reserve, CPU and NPU load, turns
  per hour.
- :func:`governor_words`: the governor's state as words and units ("1 thread", "none"), and the
  signals this machine cannot read said once in plain words.
"""
from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

from edge.governor.modes import LEVELS
from edge.service.console.ring import Sample

#: Turns the reply-time percentiles read (the latest ones in the events files).
LAST_TURNS = 100
#: Bytes read from the end of each events file (a turn is some 2 KiB of events).
TAIL_BYTES = 4 * 1024 * 1024
#: An intent's ``source`` → the path it took, as the dashboard names it.
PATHS = {"grammar": "template", "template": "template", "paraphrase": "paraphrase", "llm": "model", "docs": "documents"}
#: Windows the charts show: name → seconds.
WINDOWS = {"hour": 3600, "day": 86400}


def _tail_events(path: Path) -> list[dict]:
    """The events in the last :data:`TAIL_BYTES` of ``path`` (a partial first line is skipped)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - TAIL_BYTES))
            chunk = f.read()
    except OSError:
        return []
    lines = chunk.split(b"\n")
    if size > TAIL_BYTES:
        lines = lines[1:]
    out = []
    for line in lines:
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if isinstance(e, dict) and isinstance(e.get("type"), str):
            out.append(e)
    return out


def percentile(values: list[float], q: float) -> float:
    """The ``q`` (0..1) percentile of ``values`` (nearest rank), in their unit."""
    v = sorted(values)
    return v[min(len(v) - 1, max(0, math.ceil(q * len(v)) - 1))]


def turn_figures(paths: tuple[Path, ...]) -> dict:
    """``{"turns": [{"path", "reply_ms"}] of the last LAST_TURNS turns, "by_path": {path: {"turns",
    "p50_ms", "p90_ms", "p95_ms", "max_ms"}}, "wakes": heard, "dismissed": wakes with no speech
    after them, "files": how many events files were found}``. ``reply_ms``: end of speech → the
    reply's first audio (``first_audio_ms`` when the reply was spoken sentence by sentence, else
    ``total_ms``)."""
    source: dict[str, str] = {}
    turns: list[tuple[str, float]] = []
    counts: Counter = Counter()
    found = 0
    for p in paths:
        if not Path(p).is_file():
            continue
        found += 1
        for e in _tail_events(Path(p)):
            kind, tid = e["type"], e.get("turn_id")
            if kind == "wake":
                counts["wakes"] += 1
            elif kind == "no_speech":
                counts["dismissed"] += 1
            elif kind == "intent":
                source[tid] = PATHS.get(str(e.get("source")), str(e.get("source")))
            elif kind == "turn_end":
                lat = e.get("latency_ms") or {}
                ms = lat.get("first_audio_ms", lat.get("total_ms"))
                if isinstance(ms, (int, float)) and tid in source:
                    turns.append((source[tid], float(ms)))
    turns = turns[-LAST_TURNS:]
    by_path = {}
    for path in ("template", "paraphrase", "model", "documents", *sorted({p for p, _ in turns} - set(PATHS.values()))):
        ms = [m for p, m in turns if p == path]
        if ms:
            by_path[path] = {"turns": len(ms), "p50_ms": round(percentile(ms, 0.5)), "p90_ms": round(percentile(ms, 0.9)),
                             "p95_ms": round(percentile(ms, 0.95)), "max_ms": round(max(ms))}
    return {"turns": [{"path": p, "reply_ms": round(m)} for p, m in turns], "by_path": by_path,
            "wakes": counts["wakes"], "dismissed": counts["dismissed"], "files": found}


def charts(samples: list[Sample], now: float, window: str, reserve_fraction: float) -> dict:
    """The series the Status page draws over ``window`` (a key of :data:`WINDOWS`) ending at ``now``
    (s since the epoch): ``t`` (s), ``zones`` {name: [°C or None]}, ``mem_used_mib``,
    ``reserve_mib`` (in use above this eats into the reserve: ``reserve_fraction`` of MemTotal),
    ``cpu_pct``, ``npu_pct`` (None where unread; the key is absent when never read), and
    ``turns_per_hour`` [{"t", "turns"}] (hours of the window with a known turn count)."""
    start = now - WINDOWS[window]
    s = [x for x in samples if x.t >= start]
    names = sorted({z for x in s for z in x.zones})
    out: dict = {"window": window, "t": [round(x.t) for x in s],
                 "zones": {n: [x.zones.get(n) for x in s] for n in names},
                 "mem_used_mib": [None if x.mem_used is None else round(x.mem_used / 2**20) for x in s],
                 "reserve_mib": [None if x.mem_total is None else round(x.mem_total * reserve_fraction / 2**20) for x in s],
                 "cpu_pct": [None if x.cpu is None else round(100 * x.cpu, 1) for x in s]}
    if any(x.npu is not None for x in s):
        out["npu_pct"] = [None if x.npu is None else round(100 * x.npu, 1) for x in s]
    out["turns_per_hour"] = turns_per_hour(s)
    return out


def turns_per_hour(samples: list[Sample]) -> list[dict]:
    """Turns in each clock hour (start ``t``, s since the epoch) from the samples' turn counter
    (a restart of the service, where the counter starts over, counts from 0 again)."""
    hours: dict[int, int] = {}
    prev = None
    for x in samples:
        if x.turns is None:
            prev = None
            continue
        if prev is not None:
            done = x.turns - prev if x.turns >= prev else x.turns
            hour = int(x.t // 3600 * 3600)
            hours[hour] = hours.get(hour, 0) + done
        prev = x.turns
    return [{"t": h, "turns": n} for h, n in sorted(hours.items())]


def _n(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _cpus(cpus) -> str:
    cpus = list(cpus or [])
    if not cpus:
        return "none"
    return ("CPU " if len(cpus) == 1 else "CPUs ") + ", ".join(str(c) for c in cpus)


#: Which signal a problem line is about (a path or a message naming the file) → its plain name.
SIGNALS = (("thermal", "temperatures"), ("npu", "NPU load"), ("devfreq", "NPU frequency"), ("cpufreq", "CPU frequency"),
           ("hwmon", "power"), ("power", "power"), ("meminfo", "memory"), ("stat", "CPU load"))


def unreadable(problems: list[str]) -> str | None:
    """One sentence for the signals this machine cannot read (None when it reads them all)."""
    names: list[str] = []
    for p in problems:
        low = p.lower()
        name = next((n for key, n in SIGNALS if key in low), "other signals")
        if name not in names:
            names.append(name)
    if not names:
        return None
    return (f"This machine does not let edge read {', '.join(names[:-1]) + ' or ' + names[-1] if len(names) > 1 else names[0]} "
            f"({_n(len(problems), 'file')} unreadable; normal on a PC or in a container): those are left out.")


def governor_words(st: dict) -> tuple[list[list[str]], str | None]:
    """``(rows, unreadable)``: the governor's :meth:`~edge.governor.governor.Governor.status` as
    [label, words] rows, and :func:`unreadable` of its signal problems."""
    lim = st.get("limits") or {}
    level = st.get("level_value")
    rows = [["Thermal level", LEVELS[level] if isinstance(level, int) and 0 <= level < len(LEVELS) else str(st.get("level"))],
            ["Power mode", str(st.get("power_mode") or "unknown")], ["Board", str(st.get("board") or "unknown")]]
    for r in st.get("reasons") or []:
        if r.startswith("thermal: "):
            rows.append(["Why (heat)", r.removeprefix("thermal: ")])
        elif r.startswith("memory: "):
            rows.append(["Why (memory)", r.removeprefix("memory: ")])
        elif not r.startswith("signal unknown: "):
            rows.append(["Why", r])
    if lim:
        rows.append(["The LLM", "may answer" if lim.get("llm_allowed") else "stock commands only for now"])
        threads = lim.get("llm_threads")
        rows.append(["LLM threads", "none" if not threads else f"{_n(int(threads), 'thread')} on {_cpus(lim.get('llm_cpus'))}"])
        rows.append(["Audio on", _cpus(lim.get("audio_cpus"))])
        mt = lim.get("max_tokens")
        rows.append(["Answer length", "no limit" if not mt else f"up to {_n(int(mt), 'token')}"])
        pace = lim.get("token_pacing_ms")
        rows.append(["Pause between tokens", "none" if not pace else f"{pace} ms"])
        rows.append(["Notice to the user", lim.get("notice") or "none"])
    llm = st.get("llm") or {}
    rows.append(["LLM in memory", "yes" if llm.get("loaded") else "no"])
    problems = ((st.get("signals") or {}).get("problems")) or [r.removeprefix("signal unknown: ") for r in
                                                              st.get("reasons") or [] if r.startswith("signal unknown: ")]
    return rows, unreadable(list(problems))


def now_words(x: Sample | None, reserve_fraction: float, npu_seen: bool) -> list[list[str]]:
    """The latest sample as [label, words] tiles ("52.3 °C (cpu-thermal)", "1,234 MiB of 7,800 MiB")."""
    if x is None:
        return []
    out = []
    if x.zones:
        name, c = max(x.zones.items(), key=lambda z: z[1])
        out.append(["Hottest zone", f"{c:.1f} °C ({name})"])
    if x.level is not None and 0 <= x.level < len(LEVELS):
        out.append(["Thermal level", LEVELS[x.level]])
    if x.mem_used is not None and x.mem_total:
        out.append(["Memory in use", f"{x.mem_used / 2**20:,.0f} MiB of {x.mem_total / 2**20:,.0f} MiB "
                                     f"(the reserve starts at {x.mem_total * reserve_fraction / 2**20:,.0f} MiB)"])
    if x.cpu is not None:
        out.append(["CPU load", f"{100 * x.cpu:.0f} %"])
    out.append(["NPU load", f"{100 * x.npu:.0f} %" if x.npu is not None else ("not read just now" if npu_seen else
                                                                             "no NPU here")])
    if x.turns is not None:
        out.append(["Turns", f"{_n(x.turns, 'turn')} since the voice service started"])
    return out
