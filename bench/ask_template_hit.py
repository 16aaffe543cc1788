"""``edge ask`` on a sentence the templates take, with the default LLM (Qwen2.5-Coder-1.5B): wall time of
the whole command, this checkout (the LLM loads lazily: not at all here) against another checkout whose
``edge ask`` builds the LLM first (``--old``, e.g. the commit before lazy loading), alternating, one run.

    .venv/bin/python bench/ask_template_hit.py --old /path/to/older/checkout [--runs 3]
        [--out bench/results/ask_template_hit.json]

Both use the same settings file (x86-dev, the sample inventory, ``llm.model`` = the joined Qwen file, so
the older checkout, whose default is SmolLM2, loads the same model) and the same store. Also kept: the
``turn_end`` latency of each run (``llm_reload_ms`` appears only when the command loaded the model).
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


def ask(checkout: Path, cfg: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "EDGE_SETTINGS_LAYER"}
    env["PYTHONPATH"] = str(checkout)
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "edge.cli", "ask", SENTENCE, "--config", str(cfg), "--json"],
                       cwd=checkout, env=env, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit(f"{checkout}: edge ask failed: {r.stderr[-2000:]}")
    events = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    end = next(e for e in events if e["type"] == "turn_end")
    reply = next(e["text"] for e in events if e["type"] == "reply")
    return {"wall_s": round(wall, 2), "latency_ms": end["latency_ms"], "reply": reply,
            "llm_chain_started": "llm chain:" in r.stderr, "load_average": [round(x, 2) for x in os.getloadavg()]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True, help="a checkout whose edge ask loads the LLM before the turn")
    ap.add_argument("--runs", type=int, default=3)
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
    runs = {"lazy (this checkout)": [], "eager (--old)": []}
    for i in range(args.runs):
        for label, checkout in (("lazy (this checkout)", new), ("eager (--old)", old)):
            runs[label].append(ask(checkout, cfg))
            print(f"run {i + 1} {label}: {runs[label][-1]['wall_s']} s", file=sys.stderr, flush=True)
    summary = {k: {"median_wall_s": statistics.median(r["wall_s"] for r in v),
                   "model_loaded_in": sum(r["llm_chain_started"] for r in v)} for k, v in runs.items()}
    out = Path(args.out)
    out.write_text(json.dumps({"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "sentence": SENTENCE,
                               "model": str(model), "old_checkout": str(old), "summary": summary, "runs": runs},
                              indent=1) + "\n")
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
