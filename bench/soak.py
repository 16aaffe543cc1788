"""Soak: 500 turns from the shared sessions in ONE process; does memory, thread count or the
number of open files grow? (issue 7, item 5)

    .venv/bin/python bench/soak.py [--turns 500] [--warmup 50] [--every 10] [--out bench/results/soak.json]
                                   [--tracemalloc]

What runs: the real pipeline of the ``x86-dev`` board (4 openWakeWord models, Silero VAD, whisper
tiny.en, the grammar path + SmolLM2-135M through llama-cpp-python, SQLite, the speech engine),
built ONCE with :func:`edge.loop.build.build_stages`; each turn is one recording of
``../shared/audio/sessions/*.wav`` (sorted, cycling: 10 recordings, so 500 turns = 50 cycles)
fed through :func:`edge.loop.build.run_frames` in 4000-sample chunks, as ``edge run --input`` does.
One recording is one "turn" here; ``two_turns_log_then_undo`` holds two pipeline turns and
``no_wake_command`` none, so the count of wake-started pipeline turns is reported as well.

Store: ONE SQLite file for the whole soak, as a service has. Its records table grows (the logs
and undos of a cycle, ~6 rows per cycle); the inventory CSV is imported again at the start of every
cycle so stock levels, and therefore replies and read-backs, repeat identically each cycle (a
log below zero would otherwise start asking for confirmation after a few cycles). Reply WAVs
are deleted after each turn so the disk does not fill.

Measured at every checkpoint (each ``--every`` turns from the end of warm-up, between turns, so
the loop is idle): ``VmRSS`` and ``Threads`` from /proc/self/status, ``threading.active_count()``,
the entries of /proc/self/fd, the number of Python objects the GC tracks, and the RSS of child
processes (the speech engine runs in its own process: edge.stages.tts.engine.WatchdogTts).

Pass criteria (from the end of warm-up, ``--warmup`` turns, to the last checkpoint):

* resident memory grows by less than 5 % (``RSS_GROWTH_LIMIT``);
* thread count (both counts) and open files at the last checkpoint are not above the warm-up
  values.

Also reported, not a criterion: the least-squares slope of RSS over the checkpoints after warm-up
(MiB per 100 turns; a leak shows as a steady positive slope, allocator noise as none) and the
spread of those checkpoints. The default checkpoint every 10 turns falls after the same recording
of each cycle of the 10 recordings, so checkpoints compare like with like.

``--tracemalloc`` also records the 10 source lines whose Python allocations grew most since
warm-up (slower; for finding a leak, not for the figures). Results go to ``--out`` (JSON,
rewritten at every checkpoint, so a stopped run keeps its figures) and a summary to stdout.
Exit status 0 when every verdict passes, 1 otherwise.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from drivers.audio import wav_frames  # noqa: E402
from edge.config import load_settings  # noqa: E402
from edge.loop.build import build_stages, run_frames  # noqa: E402
from edge.stock.store import Store  # noqa: E402

SESSIONS = REPO.parent / "shared" / "audio" / "sessions"
RSS_GROWTH_LIMIT = 0.05  # issue 7: "after warm-up the resident memory grows by less than 5 %"


def proc_status(pid: int | str = "self") -> dict[str, int]:
    """``VmRSS``/``VmHWM`` (KiB) and ``Threads`` from /proc/<pid>/status; {} when the process is gone."""
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                key, _, val = line.partition(":")
                if key in ("VmRSS", "VmHWM", "Threads"):
                    out[key] = int(val.split()[0])
    except OSError:
        pass
    return out


def children(pid: int) -> list[int]:
    """Direct child processes of ``pid`` (from /proc/<pid>/task/*/children)."""
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids += [int(x) for x in (task / "children").read_text().split()]
        except OSError:
            continue
    return sorted(set(kids))


def sample(turn: int, wall_s: float) -> dict:
    st = proc_status()
    kids = {pid: proc_status(pid).get("VmRSS", 0) for pid in children(os.getpid())}
    return {
        "turn": turn,
        "wall_s": round(wall_s, 1),
        "rss_mib": round(st.get("VmRSS", 0) / 1024, 2),
        "hwm_mib": round(st.get("VmHWM", 0) / 1024, 2),
        "threads_proc": st.get("Threads", 0),
        "threads_py": threading.active_count(),
        "open_fds": len(os.listdir("/proc/self/fd")),
        "gc_objects": len(gc.get_objects()),
        "children": len(kids),
        "children_rss_mib": round(sum(kids.values()) / 1024, 2),
    }


def rss_slope(points: list[dict]) -> float:
    """Least-squares slope of ``rss_mib`` over ``turn``, in MiB per 100 turns (0 for < 2 points)."""
    if len(points) < 2:
        return 0.0
    xs, ys = [p["turn"] for p in points], [p["rss_mib"] for p in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return 100 * sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx if sxx else 0.0


def verdicts(base: dict, last: dict, checkpoints: list[dict]) -> dict:
    growth = (last["rss_mib"] - base["rss_mib"]) / base["rss_mib"]
    after = [c for c in checkpoints if c["turn"] >= base["turn"]]
    return {
        "rss_growth_pct": round(100 * growth, 2),
        "rss_ok": growth < RSS_GROWTH_LIMIT,
        "rss_min_max_after_warmup_mib": [min(c["rss_mib"] for c in after), max(c["rss_mib"] for c in after)],
        "rss_slope_mib_per_100_turns": round(rss_slope(after), 2),
        "threads_ok": last["threads_proc"] <= base["threads_proc"] and last["threads_py"] <= base["threads_py"],
        "threads_max_after_warmup": max(c["threads_proc"] for c in after),
        "open_fds_ok": last["open_fds"] <= base["open_fds"],
        "open_fds_max_after_warmup": max(c["open_fds"] for c in after),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, default=500)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--every", type=int, default=10, help="turns between checkpoints (10 = once per cycle)")
    ap.add_argument("--out", default=str(REPO / "bench/results/soak.json"))
    ap.add_argument("--tracemalloc", action="store_true", help="record the lines whose allocations grew most")
    args = ap.parse_args()
    if not 0 < args.warmup < args.turns:
        ap.error("--warmup must be between 0 and --turns")

    wavs = sorted(SESSIONS.glob("*.wav"))
    if not wavs:
        print(f"no recordings in {SESSIONS}", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="edge-soak-"))
    out_dir = tmp / "replies"
    settings = load_settings(board="x86-dev", overrides={"store": {"path": str(tmp / "edge.db")},
                                                        "output_dir": str(out_dir)})
    store = Store(settings.store.path)
    store.import_csv(SESSIONS / "inventory.csv")
    t0 = time.perf_counter()
    stages = build_stages(settings, store)
    load_s = time.perf_counter() - t0

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                                capture_output=True, text=True).stdout.strip())
    result: dict = {
        "what": "soak: recordings of the shared sessions through one process's pipeline; memory, threads, open files",
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": {"arch": platform.machine(), "cores": os.cpu_count(), "python": platform.python_version(),
                    "kernel": platform.release()},
        "commit": commit + ("+uncommitted changes" if dirty else ""),
        "settings": {"board": "x86-dev", "asr": settings.asr.engine, "llm": settings.llm.model,
                     "store": "one file for the whole soak, inventory re-imported every cycle"},
        "sessions": [w.stem for w in wavs],
        "turns_planned": args.turns, "warmup_turns": args.warmup, "checkpoint_every": args.every,
        "model_load_s": round(load_s, 2),
        "rss_growth_limit_pct": 100 * RSS_GROWTH_LIMIT,
        "checkpoints": [],
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)

    events: Counter = Counter()
    per_session_wall: dict[str, list[float]] = {}

    def emit(e) -> None:
        events[e.type] += 1

    snap0 = None
    start = time.perf_counter()
    base = None
    for turn in range(1, args.turns + 1):
        wav = wavs[(turn - 1) % len(wavs)]
        if (turn - 1) % len(wavs) == 0 and turn > 1:
            store.import_csv(SESSIONS / "inventory.csv")  # same stock every cycle (see module doc)
        stages.wake.flush()  # a new stream, as tests/helpers.run_session does
        w = time.perf_counter()
        run_frames(wav_frames(wav, chunk=4000), stages, settings, out_dir, emit)
        per_session_wall.setdefault(wav.stem, []).append(time.perf_counter() - w)
        shutil.rmtree(out_dir, ignore_errors=True)

        if turn == args.warmup or (turn > args.warmup and (turn - args.warmup) % args.every == 0) \
                or turn == args.turns:
            gc.collect()
            cp = sample(turn, time.perf_counter() - start)
            result["checkpoints"].append(cp)
            if turn == args.warmup:
                base = cp
                if args.tracemalloc:
                    import tracemalloc

                    tracemalloc.start(12)
                    snap0 = tracemalloc.take_snapshot()
            result["turns_done"] = turn
            result["events"] = dict(events)
            result["wall_s"] = round(time.perf_counter() - start, 1)
            if base is not None:
                result["verdicts"] = verdicts(base, cp, result["checkpoints"])
            if snap0 is not None and turn > args.warmup:
                import tracemalloc

                stats = tracemalloc.take_snapshot().compare_to(snap0, "lineno")[:10]
                result["tracemalloc_top_growth"] = [
                    {"where": str(s.traceback[0]), "size_diff_kib": round(s.size_diff / 1024, 1),
                     "count_diff": s.count_diff} for s in stats]
            result["per_session_wall_s"] = {k: {"mean": round(sum(v) / len(v), 3), "max": round(max(v), 3),
                                                "n": len(v)} for k, v in per_session_wall.items()}
            out.write_text(json.dumps(result, indent=1) + "\n")
            print(f"turn {turn:4d}  {cp['wall_s']:7.1f} s  RSS {cp['rss_mib']:7.1f} MiB  threads "
                  f"{cp['threads_proc']}/{cp['threads_py']}  fds {cp['open_fds']}  gc objects {cp['gc_objects']}"
                  f"  children RSS {cp['children_rss_mib']} MiB", flush=True)

    v = result["verdicts"]
    ok = v["rss_ok"] and v["threads_ok"] and v["open_fds_ok"]
    result["pass"] = ok
    result["pipeline_turns"] = events.get("wake", 0)
    result["errors"] = events.get("error", 0)
    out.write_text(json.dumps(result, indent=1) + "\n")
    first, last = base, result["checkpoints"][-1]
    print(f"{result['turns_done']} turns ({result['pipeline_turns']} wake-started, {result['errors']} errors) in "
          f"{result['wall_s']:.0f} s; after warm-up ({first['turn']} turns): RSS {first['rss_mib']} -> "
          f"{last['rss_mib']} MiB ({v['rss_growth_pct']:+.2f} %, limit < {100 * RSS_GROWTH_LIMIT:.0f} %: "
          f"{'ok' if v['rss_ok'] else 'FAIL'}), threads {first['threads_proc']} -> {last['threads_proc']} "
          f"({'ok' if v['threads_ok'] else 'FAIL'}), open files {first['open_fds']} -> {last['open_fds']} "
          f"({'ok' if v['open_fds_ok'] else 'FAIL'}); {out}")
    store.close()
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
