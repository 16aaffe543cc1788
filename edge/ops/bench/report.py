"""One ``edge bench`` run as one result dict (every figure of issue 8, see the package doc), its
files (``<stem>.json`` and a ``<stem>.png`` chart) and its summary lines and README row."""
from __future__ import annotations

import json
import platform
import re
import textwrap
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Callable

import numpy as np

from edge.ops.bench.defaults import DEFAULT_LLM_TURNS, DEFAULT_MAX_TOKENS, DEFAULT_SESSIONS, MIN_RUNS, check_llm_turns
from edge.ops.bench.llm import SIDES, measure_llm
from edge.ops.bench.loop import PATHS, check_sessions, measure_loop
from edge.ops.bench.machine import (
    BANDWIDTH_MIB,
    Telemetry,
    bandwidth_ceiling,
    git_commit,
    load_average,
    machine_info,
    machine_slug,
    memory_bandwidth,
    model_info,
)
from edge.ops.bench.stats import MIB, THROTTLE_DROP

#: The voice-loop stages of the chart, top to bottom, and their labels.
CHART_STAGES = ("endpoint_to_transcript_ms", "transcript_to_intent_ms", "intent_to_first_audio_ms", "total_ms")
CHART_STAGE_NAMES = ("endpoint→transcript", "transcript→intent", "intent→first audio", "total")
SIDE_COLORS = {"ours": "tab:blue", "plain": "tab:orange"}
SIDE_LABELS = {"ours": "ours (LlamaCppEngine)", "plain": "plain llama-cpp-python"}


def _llama_cpp_version() -> str | None:
    try:
        return version("llama_cpp_python")
    except PackageNotFoundError:
        return None


def run(settings, *, model: str | None = None, runs: int = MIN_RUNS, max_tokens: int = DEFAULT_MAX_TOKENS,
        loop: bool = True, sessions_dir: Path = DEFAULT_SESSIONS, llm_turns: int = DEFAULT_LLM_TURNS,
        bandwidth_mib: int = BANDWIDTH_MIB, log: Callable[[str], None] = lambda s: None) -> dict:
    """Every figure of issue 8 in one result dict (see the package doc); nothing written.

    Raises:
        FileNotFoundError: the model is missing.
        BenchArgumentError: the sessions are missing, ``runs`` < 2 or a bad ``llm_turns``.
        BenchError: an LLM worker failed or hung.
    """
    started = time.time()
    lc = settings.llm
    model_id = model or lc.model
    minfo = model_info(model_id, getattr(getattr(settings, "models", None), "dir", None))
    if loop:
        check_sessions(sessions_dir)  # before minutes of LLM runs
        check_llm_turns(llm_turns)
    llama_version = _llama_cpp_version()
    machine = machine_info()
    load_before = load_average()
    telemetry = Telemetry(settings.board)
    log(f"LLM: {model_id}, {runs} runs per side, {max_tokens} tokens, n_ctx {lc.n_ctx}, {lc.threads} threads")
    llm = measure_llm(minfo, lc.n_ctx, lc.threads, max_tokens, runs, lc.temperature, lc.seed, telemetry, log)
    loop_res = None
    if loop:
        s = settings if model is None else settings.model_copy(
            update={"llm": settings.llm.model_copy(update={"model": model_id})})
        loop_res = measure_loop(s, Path(sessions_dir), llm_turns, log)
    log(f"memory bandwidth: numpy copy of {bandwidth_mib} MiB")
    bw = bandwidth_ceiling(memory_bandwidth(bandwidth_mib), minfo["bytes"], llm["ours"]["decode_tokens_per_s"],
                           llm["plain"]["decode_tokens_per_s"])
    load_after = load_average() if load_before else None
    return {
        "what": "edge bench (issue 8): LLM TTFT, decode rate, peak RSS, temperature, power; ours vs plain "
                "llama-cpp-python; memory-bandwidth ceiling; voice loop per stage",
        "date": time.strftime("%Y-%m-%d", time.localtime(started)),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        "duration_s": round(time.time() - started, 1),
        "machine": machine,
        "load_average": {"before": [round(x, 2) for x in load_before] if load_before else None,
                         "after": [round(x, 2) for x in load_after] if load_after else None},
        "board": settings.board.name if settings.board else None,
        **git_commit(),
        "model": minfo,
        "software": {"llama_cpp_python": llama_version, "python": platform.python_version()},
        "settings": {"runs": runs, "max_tokens": max_tokens, "n_ctx": lc.n_ctx, "threads": lc.threads,
                     "temperature": lc.temperature, "seed": lc.seed, "loop": loop,
                     "sessions_dir": str(sessions_dir) if loop else None, "llm_turns": llm_turns if loop else 0,
                     "runs_below_issue_minimum": runs < MIN_RUNS},
        "llm": llm,
        "memory_bandwidth": bw,
        "throttled": llm["throttling"]["ours"]["throttled"],
        "loop": loop_res,
        "sensor_problems": sorted(telemetry.problems),
    }


def result_stem(result: dict) -> str:
    """``bench-<date>T<HHMM>-<machine slug>-<model id>``, safe as a file name."""
    when = result["started"][:16].replace(":", "")
    model = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(result["model"]["id"]).name)
    return f"bench-{when}-{machine_slug(result['machine'])}-{model}"


def write_results(result: dict, out_dir: Path) -> tuple[Path, Path]:
    """Write ``<stem>.json`` and ``<stem>.png`` into ``out_dir`` (created); returns both paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = result_stem(result)
    js, png = out_dir / f"{stem}.json", out_dir / f"{stem}.png"
    result = {**result, "chart": png.name}
    js.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    chart(result, png)
    return js, png


def _fmt(x, unit: str = "", nd: int = 1) -> str:
    if x is None:
        return "n/a"
    return f"{x:.{nd}f}{unit}"


def _llm_lines(r: dict) -> list[str]:
    llm, bw = r["llm"], r["memory_bandwidth"]
    o, p, q = llm["ours"], llm["plain"], llm["ratio"]
    t = llm["temperature_c"]
    th = llm["throttling"]["ours"]
    drop = th["drop_fraction"] or 0
    return [
        f"TTFT median: ours {_fmt(o['ttft_ms'], ' ms')}, plain {_fmt(p['ttft_ms'], ' ms')} (x{_fmt(q['ttft_ms'], '', 2)})",
        f"decode, 2nd half: ours {_fmt(o['decode_tokens_per_s'], ' tok/s')}, plain "
        f"{_fmt(p['decode_tokens_per_s'], ' tok/s')} (x{_fmt(q['decode_tokens_per_s'], '', 2)})",
        f"peak RSS: ours {_fmt(o['peak_rss_mib'], ' MiB')}, plain {_fmt(p['peak_rss_mib'], ' MiB')} "
        f"(x{_fmt(q['peak_rss_mib'], '', 2)})",
        f"bandwidth {_fmt(bw['gb_per_s'], ' GB/s', 2)} / {bw['model_bytes'] / MIB:.1f} MiB = ceiling "
        f"{_fmt(bw['ceiling_tokens_per_s'], ' tok/s')}; decode reaches "
        f"{_fmt(100 * (bw['decode_fraction_of_ceiling'] or 0), ' %')}",
        f"temperature: {_fmt(t['before'], ' °C')} -> {_fmt(t['after'], ' °C')}; power: "
        f"{_fmt((llm['power_w'] or {}).get('mean_w'), ' W', 2)}",
        f"throttling: {'FLAGGED' if th['throttled'] else 'no'} (2nd half {_fmt(100 * abs(drop), ' %')} "
        f"{'below' if drop >= 0 else 'above'} the 1st; flagged beyond {THROTTLE_DROP:.0%} below)",
    ]


def _loop_lines(loop: dict) -> list[str]:
    w = loop["wake_cpu_ms_per_frame"]
    lines = [f"wake word CPU: {_fmt(w['mean'], ' ms', 2)} per 80 ms frame (p95 {_fmt(w['p95'], ' ms', 2)}); "
             f"loop RTF {_fmt(loop['rtf_overall'], '', 3)}"]
    for path in PATHS:
        s = loop["paths"][path]
        lines.append(f"{path} path ({s['turns']} turns): ASR RTF {_fmt(s['asr_rtf']['median'], '', 3)}, "
                     f"transcript->intent {_fmt(s['transcript_to_intent_ms']['median'], ' ms')}, "
                     f"->audio {_fmt(s['intent_to_first_audio_ms']['median'], ' ms')}, "
                     f"total {_fmt(s['total_ms']['median'], ' ms')}")
    return lines


def summary_lines(r: dict) -> list[str]:
    """The headline figures of result ``r`` as short text lines (chart panel and the terminal)."""
    lines = _llm_lines(r)
    la = r.get("load_average") or {}
    if la.get("before"):
        lines.append(f"load average (1 min): {la['before'][0]:.2f} before, {la['after'][0]:.2f} after, on "
                     f"{r['machine'].get('cores')} cores (other load makes every figure noisy)")
    if r.get("loop"):
        lines.extend(_loop_lines(r["loop"]))
    return lines


def _decode_panel(ax, llm: dict, bw: dict, locator) -> None:
    """``locator``: matplotlib's ``MaxNLocator`` class (imported by :func:`chart`)."""
    for side in SIDES:
        runs = llm[side]["runs"]
        ax.plot([x["run"] + 1 for x in runs], [x["decode_tokens_per_s"] for x in runs], "o-", color=SIDE_COLORS[side],
                label=SIDE_LABELS[side])
        n = len(runs) // 2
        v = llm[side]["decode_tokens_per_s"]
        if v is not None:
            ax.hlines(v, n + 0.5, len(runs) + 0.5, colors=SIDE_COLORS[side], linestyles=":",
                      label=f"{side}: 2nd-half median {v:.1f}")
    ymax = max([x["decode_tokens_per_s"] for s in SIDES for x in llm[s]["runs"]] + [1])
    c = bw.get("ceiling_tokens_per_s")
    if c and c < 3 * ymax:
        ax.axhline(c, color="gray", linestyle="--", label=f"bandwidth ceiling {c:.0f}")
        ymax = max(ymax, c)
    elif c:
        ax.text(0.02, 0.04, f"bandwidth ceiling {c:.0f} tok/s (off scale)", transform=ax.transAxes, color="gray")
    ax.axvline(len(llm["ours"]["runs"]) // 2 + 0.5, color="lightgray", linewidth=1)
    ax.xaxis.set_major_locator(locator(integer=True))
    ax.set_title("decode rate per run (interleaved A B A B)")
    ax.set_xlabel("run")
    ax.set_ylabel("tokens/s")
    ax.set_ylim(bottom=0, top=ymax * 1.35)
    ax.legend(fontsize=8, loc="upper right", ncol=2)
    ax.grid(alpha=0.3)


def _ttft_panel(ax, llm: dict, locator) -> None:
    for side in SIDES:
        runs = llm[side]["runs"]
        ax.plot([x["run"] + 1 for x in runs], [x["ttft_ms"] for x in runs], "o-", color=SIDE_COLORS[side],
                label=SIDE_LABELS[side])
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(locator(integer=True))
    ax.set_title("time to first token per run (run 1 = cold prefill)")
    ax.set_xlabel("run")
    ax.set_ylabel("ms (log)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")


def _loop_panel(ax, loop: dict | None) -> None:
    if not loop:
        ax.text(0.5, 0.5, "voice loop not measured (--no-loop)", ha="center", va="center")
        ax.set_axis_off()
        return
    y = np.arange(len(CHART_STAGES))
    h = 0.38
    for k, (lane, col) in enumerate(zip(PATHS, ("tab:green", "tab:purple"), strict=True)):
        s = loop["paths"][lane]
        vals = [s[st]["median"] for st in CHART_STAGES]
        pos = y + (k - 0.5) * h
        ax.barh(pos, [v or 0 for v in vals], height=h, color=col, label=f"{lane} path ({s['turns']} turns)")
        for yy, v, st in zip(pos, vals, CHART_STAGES, strict=True):
            ax.text(max(v or 0, 0.1) * 1.1, yy, "n/a" if v is None else f"{v:.1f} ms (n={s[st]['n']})",
                    va="center", fontsize=8)
    ax.set_yticks(y, CHART_STAGE_NAMES)
    ax.set_ylim(len(CHART_STAGES) + 0.1, -0.6)  # top to bottom, with an empty band at the bottom for the legend
    ax.set_xscale("log")
    xmax = max([loop["paths"][p][st]["median"] or 0 for p in PATHS for st in CHART_STAGES] + [1])
    ax.set_xlim(0.1, xmax * 30)
    w = loop["wake_cpu_ms_per_frame"]
    ax.set_title(f"voice loop, median per stage (wake word {_fmt(w['mean'], ' ms', 2)} CPU per 80 ms frame)")
    ax.set_xlabel("ms (log)")
    ax.legend(fontsize=8, loc="lower right", ncol=2)
    ax.grid(alpha=0.3, axis="x", which="major")


def _wrap(line: str, width: int) -> str:
    return "\n  ".join(textwrap.wrap(line, width)) or line


def chart(r: dict, path: Path) -> Path:
    """A 2×2 PNG of result ``r`` at ``path``: decode rate per run, TTFT per run, voice-loop stages
    per path, the summary. Returns ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, axes = plt.subplots(2, 2, figsize=(14, 9.5))
    commit = (r.get("commit") or "?")[:10] + ("+dirty" if r.get("dirty") else "")
    m = r["machine"]
    fig.suptitle(f"edge bench {r['date']}: {r['model']['id']} on {m.get('cpu_model')} ({m.get('cores')} cores, "
                 f"{m.get('ram_mib')} MiB), commit {commit}", fontsize=11)
    _decode_panel(axes[0][0], r["llm"], r["memory_bandwidth"], MaxNLocator)
    _ttft_panel(axes[0][1], r["llm"], MaxNLocator)
    _loop_panel(axes[1][0], r.get("loop"))
    ax = axes[1][1]
    ax.set_axis_off()
    ax.set_title("summary (ratios: ours ÷ plain)")
    ax.text(0.0, 1.0, "\n".join(_wrap(line, 78) for line in summary_lines(r)), va="top", ha="left", fontsize=8.5,
            family="monospace", transform=ax.transAxes)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def readme_row(r: dict) -> str:
    """One Markdown table row of result ``r`` for the README's Benchmarks section."""
    llm, bw, loop = r["llm"], r["memory_bandwidth"], r.get("loop") or {}
    m = r["machine"]
    paths = loop.get("paths") or {}

    def tot(p):
        return _fmt(((paths.get(p) or {}).get("total_ms") or {}).get("median"), "", 0)

    return (f"| {r['date']} | {m.get('machine')}, {m.get('cpu_model')}, {m.get('cores')} cores | {r['model']['id']} | "
            f"{_fmt(llm['ours']['ttft_ms'], '', 0)} | {_fmt(llm['ours']['decode_tokens_per_s'])} | "
            f"{_fmt(llm['ratio']['decode_tokens_per_s'], '', 2)} | {_fmt(llm['ratio']['ttft_ms'], '', 2)} | "
            f"{_fmt(llm['ours']['peak_rss_mib'], '', 0)} | "
            f"{_fmt(100 * (bw['decode_fraction_of_ceiling'] or 0), ' %', 0)} of {_fmt(bw['ceiling_tokens_per_s'], '', 0)} | "
            f"{_fmt((loop.get('wake_cpu_ms_per_frame') or {}).get('mean'), '', 2)} | "
            f"{_fmt(((paths.get('grammar') or {}).get('asr_rtf') or {}).get('median'), '', 3)} | "
            f"{tot('grammar')} | {tot('llm')} | {'yes' if r.get('throttled') else 'no'} |")
