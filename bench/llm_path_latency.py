"""End of speech → first answer audio on the model path, through ``edge run --input``: the default
model against SmolLM2 and against the template path, medians and p90 side by side in one run.

    .venv/bin/python bench/llm_path_latency.py [--configs default,smollm2,template] [--out bench/results/llm_path_latency.json]

Quick look: ``--model-questions 3 --template-questions 2 --out /tmp/l.json``.

Sessions (generated here, as bench/endpointing.py makes its own): per question 0.5 s silence, the
real "hey mycroft" clip (../shared/audio/real; the box is set to listen for it as ``edge bench`` does),
0.4 s, the question spoken by espeak-ng (gmw/en,
150 wpm, its own silence trimmed, so its true end of speech is known to the sample), then 6 s of
silence (longer than ``dialog.follow_up_window_ms``, so every question opens a turn of its own).
One session holds every question of a group, after a warm-up question that is not counted (the
model is loaded lazily at the first turn that needs it; that load is reported apart as
``llm_reload_ms`` of the warm-up turn).

Configurations, each one ``edge run --input SESSION.wav --json`` process (under the caller's
``nice``) over a fresh store loaded from bench/eval/grounding_inventory.csv:

``default``   the model-path questions with the default model (Qwen2.5-Coder-1.5B Q4_K_M);
``smollm2``   the same session with ``llm.model: smollm2-135m-instruct-q4_1``;
``all-cores`` the default model with ``governor.cpu_fraction: 1.0`` (every core for the model, no
              compute reserve: on 2 cores 2 LLM threads instead of 1), to show what the reserve costs;
``template``  the template-path questions with the default settings (the model never loads).

Latency of a turn = (the endpoint event's audio time − the question's true end of speech) + the
turn's ``first_audio_ms`` (the first sentence's WAV written, from the endpoint; ``total_ms`` when the
reply was synthesized whole). ``edge run --input`` reads the file faster than real time, so the
part before the endpoint is counted in audio time (the silence the endpointer waits for) and the
part after in wall-clock time (recognition, understanding, the model, the first sentence's speech).
Also ``edge ask`` on a template hit ("how many M8 bolts are in bin 12") with the default settings:
the whole command's wall time (start-up, store, templates, reply; the model must not load: its
chain is never started), ``--ask-runs`` times, in the same run.

A turn counts for its group only when it took that group's path (``llm`` for the model path,
``template``/``grammar``/``paraphrase`` for the template path); the others are listed. The machine is shared: the
load average is recorded before and after each configuration, and ratios are taken within this run.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.endpointing import WAKE_CLIP, speak, to16k  # noqa: E402
from drivers.audio import SAMPLE_RATE, read_wav, write_wav  # noqa: E402
from edge.ops.bench.defaults import SHARED_SESSIONS_WAKE  # noqa: E402

INVENTORY = REPO / "bench" / "eval" / "grounding_inventory.csv"
WARM_UP = "tell me about the M8 bolt situation"
#: questions the templates do not take: the grounded answers (tools, a comparison, small talk)
MODEL_QUESTIONS = [
    "could you give me a rundown on the M8 bolt situation",
    "is the drill bit drawer looking healthy",
    "what's the story with the safety goggles",
    "do we have more gloves or more goggles",
    "are there more fuses than drill bits",
    "which do we have more of, washers or cable ties",
    "compare the dust masks with the gloves for me",
    "give me the lowdown on the hydraulic oil",
    "hello there",
    "tell me a joke",
    "who are you",
    "good morning",
]
TEMPLATE_QUESTIONS = [
    "how many M8 bolts are in bin twelve",
    "how are we doing for nitrile gloves",
    "any idea how much duct tape there is",
    "is there still copy paper on shelf D",
    "how many fuses do we have",
    "do we have any safety goggles on shelf B",
    "how many washers do we have",
    "are there still some cable ties around",
]
SMOLLM2 = "smollm2-135m-instruct-q4_1"
ASK_SENTENCE = "how many M8 bolts are in bin 12"
CONFIGS = {"default": ("model", {}), "smollm2": ("model", {"llm": {"model": SMOLLM2}}),
           "all-cores": ("model", {"governor": {"cpu_fraction": 1.0}}),
           "template": ("template", {})}
PATHS = {"model": {"llm"}, "template": {"template", "grammar", "paraphrase"}}


def build_session(out: Path, questions: list[str]) -> tuple[Path, list[dict]]:
    """One WAV with every question as its own turn; ``[{"text", "true_end_ms"}]`` in order."""
    wake = to16k(*read_wav(WAKE_CLIP))

    def sil(s: float) -> np.ndarray:
        return np.zeros(int(s * SAMPLE_RATE), np.int16)

    parts, turns, n = [], [], 0
    for q in questions:
        speech = speak(q)
        for p in (sil(0.5), wake, sil(0.4), speech):
            parts.append(p)
            n += len(p)
        turns.append({"text": q, "true_end_ms": 1000 * n / SAMPLE_RATE})
        tail = sil(6.0)
        parts.append(tail)
        n += len(tail)
    return write_wav(out, np.concatenate(parts), SAMPLE_RATE), turns


def run_config(name: str, session: Path, turns: list[dict], work: Path) -> dict:
    """``edge run --input`` over ``session`` in configuration ``name``; the turns it produced."""
    group, layer = CONFIGS[name]
    d = work / name
    d.mkdir()
    # the sessions say "hey mycroft" (the real clip), so the box listens for it at its own cutoff
    cfg = {"store": {"path": str(d / "edge.db")}, "wake": {"models": [SHARED_SESSIONS_WAKE]}, **layer}
    (d / "config.yaml").write_text(json.dumps(cfg))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("EDGE_SETTINGS_LAYER", None)  # the defaults this benchmark is about, not the tests' small model
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "edge.cli", "run", "--input", str(session), "--json",
                           "--config", str(d / "config.yaml"), "--output-dir", str(d / "out"),
                           "--inventory", str(INVENTORY)],
                          capture_output=True, text=True, timeout=3600, env=env, cwd=d)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{name}: edge run failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if not any(e["type"] == "wake" for e in events):
        raise SystemExit(f"{name}: no wake word heard in {session}:\n{proc.stderr[-2000:]}")
    rows = _turns(events, turns)
    for r in rows:
        r["counted"] = r["source"] in PATHS[group] and not r["warm_up"]
    kept = [r["latency_ms"] for r in rows if r["counted"]]
    return {"group": group, "layer": layer, "wall_s": round(wall, 1),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
            "n": len(kept), "median_ms": _q(kept, 0.5), "p90_ms": _q(kept, 0.9),
            "parts_median_ms": _parts(rows), "turns": rows}


def measure_ask(work: Path, runs: int) -> dict:
    """``edge ask`` on a template hit with the default settings: wall seconds per run, and whether
    the model was loaded (the chain's start is logged on stderr)."""
    d = work / "ask"
    d.mkdir()
    cfg = d / "config.yaml"
    cfg.write_text(json.dumps({"store": {"path": str(d / "edge.db")}}))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("EDGE_SETTINGS_LAYER", None)
    subprocess.run([sys.executable, "-m", "edge.cli", "inventory", "import", str(INVENTORY), "--config", str(cfg)],
                   check=True, capture_output=True, env=env, cwd=d)
    rows = []
    for _ in range(runs):
        load = os.getloadavg()
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "edge.cli", "ask", ASK_SENTENCE, "--config", str(cfg), "--json"],
                              capture_output=True, text=True, env=env, cwd=d, timeout=600)
        rows.append({"wall_s": round(time.perf_counter() - t0, 2), "loadavg": [round(x, 2) for x in load],
                     "model_loaded": "llm chain" in proc.stderr or "llm_reload_ms" in proc.stdout,
                     "reply": next((json.loads(ln)["text"] for ln in proc.stdout.splitlines()
                                    if ln.startswith("{") and json.loads(ln).get("type") == "reply"), None)})
    return {"sentence": ASK_SENTENCE, "median_wall_s": round(statistics.median(r["wall_s"] for r in rows), 2),
            "model_loaded_in": sum(r["model_loaded"] for r in rows), "runs": rows}


def _turns(events: list[dict], turns: list[dict]) -> list[dict]:
    """Each spoken question matched to the turn that endpointed after it (in order)."""
    by_turn: dict[str, dict] = {}
    order: list[str] = []
    for e in events:
        t = e.get("turn_id")
        if not t:
            continue
        if t not in by_turn:
            by_turn[t] = {}
            order.append(t)
        by_turn[t].setdefault(e["type"], e)
    rows = []
    for i, q in enumerate(turns):
        nxt = turns[i + 1]["true_end_ms"] if i + 1 < len(turns) else float("inf")
        tid = next((t for t in order if "endpoint" in by_turn[t] and "turn_end" in by_turn[t]
                    and q["true_end_ms"] - 2000 <= by_turn[t]["endpoint"]["t_ms"] < nxt), None)
        row = {"text": q["text"], "warm_up": i == 0, "source": None, "latency_ms": None}
        if tid is None:
            rows.append(row)
            continue
        ev = by_turn[tid]
        lat = ev["turn_end"]["latency_ms"]
        wait = ev["endpoint"]["t_ms"] - q["true_end_ms"]
        after = lat.get("first_audio_ms", lat.get("total_ms"))
        row.update({
            "transcript": ev.get("transcript", {}).get("text"), "source": ev.get("intent", {}).get("source"),
            "reply": ev.get("reply", {}).get("text"), "endpoint_reason": ev["endpoint"]["reason"],
            "endpoint_wait_ms": round(wait), "after_endpoint_ms": after, "streamed": "first_audio_ms" in lat,
            "latency_ms": None if after is None else round(wait + after), "turn_end": lat})
        rows.append(row)
    return rows


def _q(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    if len(xs) == 1:
        return round(xs[0])
    return round(statistics.quantiles(xs, n=100, method="inclusive")[int(q * 100) - 1])


def _parts(rows: list[dict]) -> dict:
    """Medians of where the time goes over the counted turns."""
    kept = [r for r in rows if r["counted"]]
    out = {"endpoint_wait": _q([r["endpoint_wait_ms"] for r in kept], 0.5)}
    for k in ("endpoint_to_transcript_ms", "transcript_to_intent_ms", "first_audio_ms", "total_ms"):
        xs = [r["turn_end"][k] for r in kept if k in r["turn_end"]]
        out[k] = _q(xs, 0.5)
    return out


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(result["configs"])
    fig, ax = plt.subplots(figsize=(7, 4))
    for i, n in enumerate(names):
        xs = [r["latency_ms"] / 1000 for r in result["configs"][n]["turns"] if r["counted"]]
        ax.scatter([i] * len(xs), xs, alpha=0.5)
        c = result["configs"][n]
        if c["median_ms"] is not None:
            ax.hlines([c["median_ms"] / 1000], i - 0.3, i + 0.3, colors="k")
            ax.hlines([c["p90_ms"] / 1000], i - 0.2, i + 0.2, colors="k", linestyles="dotted")
    ax.axhline(1.5, color="r", linewidth=0.8, label="1.5 s target")
    ax.set_xticks(range(len(names)), [f"{n}\nload {result['configs'][n]['loadavg_before'][0]:.1f}" for n in names])
    ax.set_ylabel("end of speech → first answer audio (s)")
    ax.set_title("model path vs template path (median —, p90 ··)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", default="default,smollm2,template")
    ap.add_argument("--model-questions", type=int, default=len(MODEL_QUESTIONS))
    ap.add_argument("--template-questions", type=int, default=len(TEMPLATE_QUESTIONS))
    ap.add_argument("--ask-runs", type=int, default=3, help="edge ask runs on a template hit (0: none)")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "llm_path_latency.json"))
    args = ap.parse_args(argv)
    names = args.configs.split(",")
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        ap.error(f"unknown configuration(s) {unknown}; choose from {list(CONFIGS)}")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO).stdout.strip()
    result = {"what": "end of speech → first answer audio, model path vs template path, edge run --input",
              "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "commit": commit,
              "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "machine": platform.machine()},
              "configs": {}}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sessions = {
            "model": build_session(work / "model.wav", [WARM_UP] + MODEL_QUESTIONS[:args.model_questions]),
            "template": build_session(work / "template.wav", [TEMPLATE_QUESTIONS[-1]]
                                      + TEMPLATE_QUESTIONS[:args.template_questions]),
        }
        for name in names:
            wav, turns = sessions[CONFIGS[name][0]]
            c = run_config(name, wav, turns, work)
            result["configs"][name] = c
            print(f"{name}: n={c['n']} median {c['median_ms']} ms, p90 {c['p90_ms']} ms "
                  f"(load {c['loadavg_before'][0]:.2f}; parts {c['parts_median_ms']})", flush=True)
        if args.ask_runs:
            result["edge_ask_template_hit"] = measure_ask(work, args.ask_runs)
            print(f"edge ask: {result['edge_ask_template_hit']['median_wall_s']} s", flush=True)
    tmpl = result["configs"].get("template", {}).get("median_ms")
    result["ratio_median_vs_template"] = {n: round(c["median_ms"] / tmpl, 2) for n, c in result["configs"].items()
                                          if tmpl and c["median_ms"]}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    plot(result, out.with_suffix(".png"))
    print(json.dumps({n: {k: c[k] for k in ("n", "median_ms", "p90_ms", "loadavg_before")}
                      for n, c in result["configs"].items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
