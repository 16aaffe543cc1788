"""Mandarin next to English: true end of speech → reply audio ready, side by side in one run, with
the same replayed-real-time loop and figures as bench/endpointing.py (its ``semantic`` defaults).

    .venv/bin/python bench/endpointing_zh.py [--out bench/results/endpointing_zh.json]

English: the shared sessions with one command (bench/endpointing.py's ``SHARED_NAMES``) on the
x86-dev board's stages (whisper tiny.en, espeak-ng). Mandarin: the one-command sessions of
tests/recordings/zh/ (the same real "hey mycroft", then a Kokoro-spoken Mandarin command) on the
stages of ``language: zh`` (the multilingual Whisper base with the Mandarin prompt, the Mandarin
grammar, the Mandarin reply voice ``tts.engine`` picks: Kokoro when installed). Both on the grammar
path (``llm.engine: none``); the true end of speech of every recording is the last 10 ms block above
−40 dBFS. The stages' split is bench/endpointing.py's (``spec_tts`` is the reply voice's synthesis).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.endpointing import SESSIONS, measure, replay, shared_recordings, summary, to16k  # noqa: E402
from drivers.audio import SAMPLE_RATE, read_wav  # noqa: E402
from edge.config import load_settings  # noqa: E402
from edge.loop.build import build_stages  # noqa: E402
from edge.stages.nlu.grammar import Grammar  # noqa: E402
from edge.stock.store import Store  # noqa: E402

ZH = REPO / "tests" / "recordings" / "zh"
OUT = REPO / "bench" / "results" / "endpointing_zh.json"


def zh_recordings() -> list[dict]:
    """The one-command Mandarin sessions (noise-only and two-turn ones left out)."""
    expected = json.loads((ZH / "expected.json").read_text(encoding="utf-8"))
    rows = []
    for name, want in sorted(expected.items()):
        if len(want["said"]) != 1 or want["said"][0] is None:
            continue
        path = ZH / f"{name}.wav"
        data, rate = read_wav(path)
        x = to16k(data, rate).astype(np.float64)
        block = SAMPLE_RATE // 100
        rms = np.sqrt(np.mean(x[: len(x) // block * block].reshape(-1, block) ** 2, axis=1))
        loud = np.flatnonzero(rms > 32768 * 10 ** (-40 / 20))
        rows.append({"name": name, "path": str(path), "kind": "zh", "text": want["said"][0],
                     "speech_start_ms": None, "true_end_ms": float(10.0 * (loud[-1] + 1))})
    return rows


def run(language: str, recs: list[dict], inventory: Path, work: Path) -> tuple[list[dict], dict]:
    over = {"store": {"path": str(work / f"boot-{language}.db")}, "output_dir": str(work), "llm": {"engine": "none"},
            "language": language, "wake": {"models": [{"name": "hey_mycroft", "engine": "micro", "threshold": 0.95}]}}
    settings = load_settings(board="x86-dev", overrides=over)
    boot = Store(work / f"boot-{language}.db")
    boot.import_csv(inventory)
    grammar = Grammar(boot.items(), language=language)
    stages = build_stages(settings, boot)
    rows = []
    try:
        for rec in recs:
            d = work / f"{language}-{rec['name']}"
            d.mkdir()
            stages.store = Store(d / "edge.db")
            stages.store.import_csv(inventory)
            try:
                rows.append(measure(rec, replay(stages, settings, "semantic", rec["path"], d), grammar))
            finally:
                stages.store.close()
    finally:
        stages.tts.close()
    from edge.stages.tts.engine import engine_for
    return rows, {"asr": settings.asr.whisper.model_dump(), "tts": engine_for(settings.tts, language)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="endpointing-zh-"))
    load_start = [round(x, 2) for x in os.getloadavg()]
    t0 = time.perf_counter()
    en_rows, en_cfg = run("en", shared_recordings(), SESSIONS / "inventory.csv", work)
    zh_rows, zh_cfg = run("zh", zh_recordings(), ZH / "inventory.csv", work)
    keys = ("median_perceived_latency_ms", "p90_perceived_latency_ms", "commands_cut", "intent_as_expected", "rechecks")
    result = {
        "bench": "endpointing_zh", "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "loadavg_1_5_15_at_start": load_start,
                    "loadavg_1_5_15_at_end": [round(x, 2) for x in os.getloadavg()]},
        "wall_s": round(time.perf_counter() - t0, 1),
        "method": __doc__.split("\n\n", 2)[2].strip(),
        "config": {"en": en_cfg, "zh": zh_cfg},
        "summary": {"en": summary(en_rows), "zh": summary(zh_rows)},
        "rows": {"en": en_rows, "zh": zh_rows},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    brief = {lang: {k: sm.get(k) for k in keys} | {"stages_median_ms": sm["stages"]["median_ms"]}
             for lang, sm in result["summary"].items()}
    print(json.dumps({"summary": brief, "config": result["config"], "load": [load_start, result["machine"]["loadavg_1_5_15_at_end"]],
                      "wall_s": result["wall_s"]}, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
