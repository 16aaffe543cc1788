"""``edge ask`` on a sentence the templates take, with the default LLM (Qwen2.5-Coder-1.5B): wall and CPU
seconds of the whole command, this checkout against another one (``--old``: an earlier commit),
alternating in one run, so the machine's load hits both alike.

    .venv/bin/python bench/ask_template_hit.py --old /path/to/older/checkout [--runs 5]
        [--out bench/results/ask_template_hit.json]     (a PNG is written next to the JSON)

Both use the same settings file (x86-dev, the sample inventory, ``llm.model`` = the joined Qwen file) and
the same store. Python's bytecode cache is on (``PYTHONDONTWRITEBYTECODE`` unset, as for an installed
service), and each checkout's first run, which writes that cache, is not counted. CPU seconds are the
child's user + system time: less dependent on the machine's load than the wall time.
Also kept: whether the command started the LLM chain (it must not: the model loads lazily).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
INVENTORY = REPO.parent / "shared" / "audio" / "sessions" / "inventory.csv"
SENTENCE = "how many M8 bolts are in bin 12"
TARGET_S = 2.0  # the bound for a template hit of `edge ask` on this machine


def _commit(checkout: Path) -> str:
    """The checkout's short commit, with ``+changes`` when its files differ from it."""
    r = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(checkout), "status", "--porcelain", "--untracked-files=no", "--", ".",
                            ":!bench/results"],
                           capture_output=True, text=True).stdout.strip()
    return (r.stdout.strip() or "?") + ("+changes" if dirty else "")


def ask(checkout: Path, cfg: Path) -> dict:
    """One ``edge ask --json`` of :data:`SENTENCE` with ``checkout`` first on the path: ``wall_s``, the
    reply, whether the LLM chain started. Raises SystemExit when the command fails."""
    env = {k: v for k, v in os.environ.items() if k not in ("EDGE_SETTINGS_LAYER", "PYTHONDONTWRITEBYTECODE")}
    env["PYTHONPATH"] = str(checkout)
    load = [round(x, 2) for x in os.getloadavg()]
    t = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "edge.cli", "ask", SENTENCE, "--config", str(cfg), "--json"],
                         cwd=checkout, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=1800)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"{checkout}: edge ask failed: {err[-2000:]}")
    events = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    reply = next(e["text"] for e in events if e["type"] == "reply")
    return {"wall_s": round(wall, 2), "reply": reply, "llm_chain_started": "llm chain:" in err, "load_average": load}


def ask_measured(checkout: Path, cfg: Path) -> dict:
    """:func:`ask` with ``cpu_s``: the child's user + system seconds (``RUSAGE_CHILDREN`` before and after)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    row = ask(checkout, cfg)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    row["cpu_s"] = round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 2)
    return row


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(result["runs"])
    fig, axes = plt.subplots(1, 2, figsize=(8, 4))
    for ax, key, title in ((axes[0], "wall_s", "wall (s)"), (axes[1], "cpu_s", "CPU user+sys (s)")):
        for i, lab in enumerate(labels):
            xs = [r[key] for r in result["runs"][lab]]
            ax.scatter([i] * len(xs), xs, alpha=0.6)
            ax.hlines([statistics.median(xs)], i - 0.3, i + 0.3, colors="k")
        ax.axhline(TARGET_S, color="r", linewidth=0.8, label=f"{TARGET_S} s target")
        ax.set_xticks(range(len(labels)), [lab.replace(" (", "\n(") for lab in labels])
        ax.set_title(title)
        ax.set_ylim(bottom=0)
    axes[0].legend()
    fig.suptitle(f"edge ask, template hit: '{SENTENCE}' (median —)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True, help="another checkout (an earlier commit) to run side by side")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", default=str(REPO / "bench/results/ask_template_hit.json"))
    args = ap.parse_args()
    from edge.models.joined import target_path
    from edge.models.manifest import load_manifest

    model = target_path(load_manifest().get("qwen2.5-coder-1.5b-instruct-q4_k_m"))
    tmp = Path(tempfile.mkdtemp(prefix="ask-bench-"))
    cfg = tmp / "edge.yaml"
    cfg.write_text(f"board: x86-dev\nstore: {{path: {tmp / 'edge.db'}}}\nllm: {{model: {model}}}\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-m", "edge.cli", "inventory", "import", str(INVENTORY), "--config", str(cfg)],
                   cwd=REPO, env=env, check=True, capture_output=True)
    old, new = Path(args.old).resolve(), REPO
    sides = ((f"this checkout ({_commit(new)})", new), (f"--old ({_commit(old)})", old))
    runs: dict[str, list] = {lab: [] for lab, _ in sides}
    for _lab, checkout in sides:  # writes the bytecode cache; not counted
        ask_measured(checkout, cfg)
    for i in range(args.runs):
        for lab, checkout in sides:
            runs[lab].append(ask_measured(checkout, cfg))
            print(f"run {i + 1} {lab}: {runs[lab][-1]['wall_s']} s wall, {runs[lab][-1]['cpu_s']} s CPU",
                  file=sys.stderr, flush=True)
    summary = {k: {"median_wall_s": statistics.median(r["wall_s"] for r in v),
                   "median_cpu_s": statistics.median(r["cpu_s"] for r in v),
                   "model_loaded_in": sum(r["llm_chain_started"] for r in v)} for k, v in runs.items()}
    (a, sa), (b, sb) = summary.items()
    ratios = {"wall_this_vs_old": round(sa["median_wall_s"] / sb["median_wall_s"], 3),
              "cpu_this_vs_old": round(sa["median_cpu_s"] / sb["median_cpu_s"], 3)}
    result = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "sentence": SENTENCE,
              "model": str(model), "old_checkout": str(old), "cores": os.cpu_count(), "summary": summary,
              "ratios": ratios, "target_s": TARGET_S, "runs": runs}
    out = Path(args.out)
    out.write_text(json.dumps(result, indent=1) + "\n")
    plot(result, out.with_suffix(".png"))
    print(json.dumps({"summary": summary, "ratios": ratios}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
