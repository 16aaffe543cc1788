"""What a hostile Wyoming client (and an oversize ``edge ask``) can make the box hold, before and
after the input bounds, side by side in one run.

    .venv/bin/python bench/server_bounds.py [--before a0c0437] [--out bench/results/server_bounds.json]
    .venv/bin/python bench/server_bounds.py --plot-only     # redraw the PNG from the JSON

"before" is the commit ``--before`` unpacked by ``git archive`` into a temporary folder, "after" this
tree; each runs as ``edge wyoming`` (a child process, ``llm.engine: none``, the shared inventory,
``wyoming.max_clients`` 32) on loopback, one after the other, driven by the same scenarios:

* **slowloris**: 32 connections each send half a header line (``{"type": "desc``) and stall; a
  polite client then sends a ``ping`` every 0.5 s for ``--window`` s (each on a new connection).
  Figures: pings answered, s until the first answer, refusals (``busy``).
* **oversize transcript**: one ``transcript`` of ~100 kB; right after it, on another connection, a
  one-line stock question. Figures: s until each is answered (the second waits while the first
  holds the turn's stage locks: the lock hold time), and the server's peak resident memory growth
  (``VmHWM`` from /proc/PID/status, MiB).
* **oversize synthesize**: one ``synthesize`` of 20,000 characters. Figures: s until its last
  event, audio bytes sent back, peak memory growth.
* **chunk stream**: ``synthesize-start`` and 2,000 ``synthesize-chunk`` of 14 characters without a
  sentence end, then a ``ping`` (no ``synthesize-stop``: the old server would then speak it all).
  Figure: s until the pong (the old splitter rescans its whole buffer at every chunk).
* **nested JSON**: a header whose data nests 5,000 arrays deep. Figure: whether an ``error``
  event came back before the connection closed.
* **edge ask**: ``edge ask`` with a 104 kB utterance (a child process). Figures: s, exit status,
  bytes on stdout.

A scenario's own wait is bounded (``--timeout`` s); a figure that hit the bound is reported as the
bound with ``"timed_out": true``. Each server is started fresh for the scenarios that measure
memory, so one does not carry over into the next. Wall-clock figures on a shared 2-core machine are
noisy; the differences here are of orders of magnitude.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from wyoming.event import Event, async_read_event, async_write_event

REPO = Path(__file__).resolve().parents[1]
INVENTORY = REPO / "examples" / "inventory.csv"
HALF_HEADER = b'{"type": "desc'


def status_kib(pid: int, key: str) -> int:
    """``key`` (VmRSS, VmHWM) of /proc/PID/status in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


class Server:
    """``edge wyoming`` of the tree ``root`` with its own store, on an ephemeral loopback port."""

    def __init__(self, root: Path, work: Path):
        self.root, self.work = root, work
        work.mkdir(parents=True, exist_ok=True)
        self.cfg = work / "edge.yaml"
        self.cfg.write_text(f"board: x86-dev\nstore: {{path: {work / 'edge.db'}}}\noutput_dir: {work / 'out'}\n"
                            f"llm: {{engine: none}}\nwyoming: {{max_clients: 32}}\n")
        self.env = {**os.environ, "PYTHONPATH": str(root)}
        subprocess.run([sys.executable, "-m", "edge.cli", "inventory", "import", str(INVENTORY), "--config",
                        str(self.cfg)], cwd=root, env=self.env, check=True, capture_output=True)
        self.proc: subprocess.Popen | None = None
        self.port = 0

    def __enter__(self) -> Server:
        self.proc = subprocess.Popen([sys.executable, "-m", "edge.cli", "wyoming", "--config", str(self.cfg),
                                      "--uri", "tcp://127.0.0.1:0"], cwd=self.root, env=self.env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        found = threading.Event()

        def read():
            for line in self.proc.stderr:
                m = re.search(r"Wyoming services .* on tcp://127\.0\.0\.1:(\d+)", line)
                if m:
                    self.port = int(m.group(1))
                    found.set()

        threading.Thread(target=read, daemon=True).start()
        if not found.wait(600):
            raise RuntimeError("edge wyoming did not start")
        return self

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)

    def kib(self, key: str) -> int:
        return status_kib(self.proc.pid, key)


async def connect(port: int):
    return await asyncio.open_connection("127.0.0.1", port, limit=2**24)


async def one(port: int, events: list[Event], until, timeout_s: float) -> tuple[list[Event], float, bool]:
    """Send ``events``; read until ``until(event)``, the connection closes or ``timeout_s``.
    Returns ``(events read, s, timed out)``."""
    t0 = time.perf_counter()
    r, w = await connect(port)
    got: list[Event] = []
    timed_out = False
    try:
        for e in events:
            await async_write_event(e, w)

        async def read():
            while (e := await async_read_event(r)) is not None:
                got.append(Event(e.type, e.data, None) if e.payload is None else e)
                if until(e):
                    return

        await asyncio.wait_for(read(), timeout_s)
    except asyncio.TimeoutError:
        timed_out = True
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        w.close()
    return got, time.perf_counter() - t0, timed_out


async def slowloris(port: int, window_s: float) -> dict:
    stalled = []
    for _ in range(32):
        r, w = await connect(port)
        w.write(HALF_HEADER)
        await w.drain()
        stalled.append(w)
    await asyncio.sleep(0.5)
    t0 = time.perf_counter()
    served, refused, first = 0, 0, None
    while (now := time.perf_counter() - t0) < window_s:
        got, _s, _to = await one(port, [Event("ping", {"text": "x"})], lambda e: True, 2.0)
        if got and got[0].type == "pong":
            served += 1
            first = now if first is None else first
        elif got and got[0].data.get("code") == "busy":
            refused += 1
        await asyncio.sleep(0.5)
    for w in stalled:
        w.close()
    return {"window_s": window_s, "pings_answered": served, "refused_busy": refused,
            "s_to_first_answer": None if first is None else round(first, 2)}


async def oversize_transcript(srv: Server, timeout_s: float) -> dict:
    text = "how many M8 bolts are in bin twelve " * 2800
    hwm0 = srv.kib("VmHWM")

    async def small():
        await asyncio.sleep(0.3)  # after the big one has taken the turn
        return await one(srv.port, [Event("transcript", {"text": "how many M8 bolts are in bin twelve"})],
                         lambda e: e.type in ("handled", "not-handled"), timeout_s)

    big, second = await asyncio.gather(
        one(srv.port, [Event("transcript", {"text": text})], lambda e: e.type in ("handled", "not-handled"),
            timeout_s), small())
    return {"chars": len(text), "answer": big[0][0].type if big[0] else None, "s": round(big[1], 2),
            "timed_out": big[2], "small_question_s": round(second[1], 2), "small_timed_out": second[2],
            "peak_rss_growth_mib": round((srv.kib("VmHWM") - hwm0) / 1024, 1),
            "reply_chars": len(big[0][0].data.get("text") or "") if big[0] else None}


async def oversize_synthesize(srv: Server, timeout_s: float) -> dict:
    hwm0 = srv.kib("VmHWM")
    got, s, to = await one(srv.port, [Event("synthesize", {"text": "The bolts are in bin twelve. " * 690})],
                           lambda e: e.type in ("audio-stop", "error"), timeout_s)
    audio = sum(len(e.payload or b"") for e in got if e.type == "audio-chunk")
    return {"chars": 29 * 690, "last_event": got[-1].type if got else None, "s": round(s, 2), "timed_out": to,
            "audio_bytes": audio, "peak_rss_growth_mib": round((srv.kib("VmHWM") - hwm0) / 1024, 1)}


async def chunk_stream(port: int, timeout_s: float) -> dict:
    events = [Event("synthesize-start", {})] + [Event("synthesize-chunk", {"text": "and the bolts "})] * 2000
    got, s, to = await one(port, events + [Event("ping", {"text": "after"})], lambda e: e.type == "pong", timeout_s)
    return {"chunks": 2000, "s_to_pong": round(s, 2), "timed_out": to, "events": [e.type for e in got]}


async def nested(port: int) -> dict:
    line = b'{"type": "ping", "data": {"deep": ' + b"[" * 5000 + b"]" * 5000 + b"}}\n"
    r, w = await connect(port)
    w.write(line)
    await w.drain()
    got = []
    try:
        while (e := await asyncio.wait_for(async_read_event(r), 30)) is not None:
            got.append(e.type)
    except (ConnectionError, asyncio.TimeoutError, asyncio.IncompleteReadError):
        pass
    w.close()
    return {"events": got, "error_event": got == ["error"]}


def edge_ask(root: Path, cfg: Path, timeout_s: float) -> dict:
    text = "how many M8 bolts are in bin twelve " * 2900
    t0 = time.perf_counter()
    try:
        r = subprocess.run([sys.executable, "-m", "edge.cli", "ask", text, "--config", str(cfg)], cwd=root,
                           env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, timeout=timeout_s)
        return {"chars": len(text), "s": round(time.perf_counter() - t0, 2), "exit": r.returncode,
                "stdout_bytes": len(r.stdout), "timed_out": False}
    except subprocess.TimeoutExpired:
        return {"chars": len(text), "s": timeout_s, "exit": None, "timed_out": True}


def measure(root: Path, work: Path, window_s: float, timeout_s: float) -> dict:
    out: dict = {}
    srv = Server(root, work)
    with srv:
        out["slowloris"] = asyncio.run(slowloris(srv.port, window_s))
        print("  slowloris", out["slowloris"], flush=True)
        out["nested_json"] = asyncio.run(nested(srv.port))
        print("  nested", out["nested_json"], flush=True)
        out["chunk_stream"] = asyncio.run(chunk_stream(srv.port, timeout_s))
        out["chunk_stream"].pop("events")
        print("  chunks", out["chunk_stream"], flush=True)
    with srv:
        out["oversize_transcript"] = asyncio.run(oversize_transcript(srv, timeout_s))
        print("  transcript", out["oversize_transcript"], flush=True)
    with srv:
        out["oversize_synthesize"] = asyncio.run(oversize_synthesize(srv, timeout_s))
        print("  synthesize", out["oversize_synthesize"], flush=True)
    out["edge_ask"] = edge_ask(root, srv.cfg, timeout_s)
    print("  edge ask", out["edge_ask"], flush=True)
    return out


def plot(results: dict, path: Path) -> None:
    """Draw ``results`` (this script's JSON) as a PNG: before and after side by side per scenario."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sides = ("before", "after")
    colours = {"before": "tab:red", "after": "tab:green"}
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))

    ax = axes[0]
    rows = [("polite pings answered", "pings_answered"), ("refused busy", "refused_busy")]
    for j, side in enumerate(sides):
        s = results[side]["slowloris"]
        ax.bar([i + (j - 0.5) * 0.38 for i in range(len(rows))], [s[k] for _, k in rows], 0.38,
               color=colours[side], label=f"{side} ({results[side]['commit']})")
    ax.set_xticks(range(len(rows)), [r for r, _ in rows])
    ax.set_title(f"slowloris: 32 half headers, pings for {results['after']['slowloris']['window_s']:.0f} s")
    ax.legend()

    ax = axes[1]
    rows = [("100 kB\ntranscript", "oversize_transcript", "s"), ("stock question\nright after", "oversize_transcript",
            "small_question_s"), ("20k-char\nsynthesize", "oversize_synthesize", "s"),
            ("2,000 chunks\nthen ping", "chunk_stream", "s_to_pong"), ("edge ask\n104 kB", "edge_ask", "s")]
    for j, side in enumerate(sides):
        xs = [i + (j - 0.5) * 0.38 for i in range(len(rows))]
        ys = [max(results[side][sc][k], 0.01) for _, sc, k in rows]
        bars = ax.bar(xs, ys, 0.38, color=colours[side])
        for b, (_, sc, k) in zip(bars, rows, strict=True):
            timed_out = results[side][sc].get("timed_out") if k != "small_question_s" else \
                results[side][sc].get("small_timed_out")
            if timed_out:
                b.set_hatch("//")
                ax.annotate("gave up", (b.get_x() + b.get_width() / 2, b.get_height()), ha="center", va="bottom",
                            fontsize=7)
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)), [r for r, _, _ in rows], fontsize=8)
    ax.set_ylabel("s until answered or refused (log)")
    ax.set_title("oversize inputs: time held")

    ax = axes[2]
    rows = [("100 kB transcript", "oversize_transcript"), ("20k-char synthesize", "oversize_synthesize")]
    for j, side in enumerate(sides):
        ax.bar([i + (j - 0.5) * 0.38 for i in range(len(rows))],
               [results[side][sc]["peak_rss_growth_mib"] for _, sc in rows], 0.38, color=colours[side])
    ax.set_xticks(range(len(rows)), [r for r, _ in rows])
    ax.set_ylabel("server peak RSS growth (MiB, VmHWM)")
    ax.set_title("memory")
    fig.suptitle(f"edge wyoming under hostile clients, one run ({results.get('cpus')} CPUs); hatched = gave up at "
                 "the scenario's bound")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", default="a0c0437", help="the commit to compare with (git archive)")
    ap.add_argument("--window", type=float, default=20.0, help="s of polite pings during the slowloris")
    ap.add_argument("--timeout", type=float, default=300.0, help="s one scenario may wait")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "server_bounds.json")
    ap.add_argument("--plot-only", action="store_true", help="redraw the PNG from --out without measuring")
    args = ap.parse_args()
    if args.plot_only:
        plot(json.loads(args.out.read_text()), args.out.with_suffix(".png"))
        print(f"written {args.out.with_suffix('.png')}")
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="edge-bounds-"))
    try:
        old = tmp / "before"
        old.mkdir()
        archive = subprocess.run(["git", "-C", str(REPO), "archive", args.before], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
        results = {"before": {"commit": args.before}, "after": {"commit": subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()}}
        for name, root in (("before", old), ("after", REPO)):
            print(name, flush=True)
            results[name].update(measure(root, tmp / name / "work", args.window, args.timeout))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"machine": os.uname().machine, "cpus": os.cpu_count(), **results},
                                       indent=2) + "\n")
        plot(json.loads(args.out.read_text()), args.out.with_suffix(".png"))
        print(f"written {args.out} and {args.out.with_suffix('.png')}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
