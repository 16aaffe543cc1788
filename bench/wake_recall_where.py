"""Where the default wake word's recall is lost in noise: the first stage (microWakeWord okay_nabu's
score) or the second (Whisper's check of the phrase), on the same mixes in one run.

    .venv/bin/python bench/wake_recall_where.py [--seconds 240] [--out bench/results/wake_recall_where.json]

Inputs: every okay_nabu clip of bench/make_wake_clips.py (bench/cache/wake_clips/: piper's joe voice
and espeak-ng, 104 clips; the 80 newer ones split into ``tune`` and ``test`` halves, choices are made
on ``tune``), each mixed into a 6 s stretch of ``--seconds`` of TV and of workshop noise (tests/tvmix;
short excerpts, not the benchmark's hours) at 20, 10 and 5 dB as bench/wake_words.py mixes them.

- first stage: the highest okay_nabu score from the clip's start to 1.5 s after its end, as is, with
  the whole mix at other levels (x0.1, x0.3, x3: a level normaliser's possible gains) and through
  :class:`edge.stages.vad.LevelNormalizer` (the gain the VAD gets);
- second stage: Whisper's check (:class:`edge.stages.wake_check.WhisperCheck`, the phrase as prompt)
  on the 2 s ending at the frame of that highest score, for tiny.en and multilingual base, for every
  clip the first stage scores >= 0.05; the same check on the clean clips and the clean confusable
  phrases ("okay now", "okay, no boo", ...) at their highest score;
- a configuration's recall: first-stage score >= threshold and (Whisper wrote the phrase, or the
  window is noisy and the score >= alone_above 0.7), as edge.stages.wake_check decides.
Whisper's verdicts are kept in bench/cache/wake_where_checks.json (a window whose score changed is
checked again).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.wake_words import CACHE, CLIPS, CONFUSABLE, ESPEAK, FRAME, espeak, snippets, to16k  # noqa: E402
from tests.tvmix import RATE, tv, workshop  # noqa: E402

THRESHOLDS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7)
SNRS = (20, 10, 5)
GAINS = (0.1, 0.3, 3.0)
CHECK_MODELS = ("whisper-tiny-en", "whisper-base")
ALONE_ABOVE, QUIET_DB = 0.7, 40.0


def positives() -> list[dict]:
    idx = json.loads((CLIPS / "index.json").read_text())
    return [{"name": c["file"], "voice": c["voice"], "split": c.get("split", "older"), "audio": to16k(CLIPS / c["file"])}
            for c in idx if c["word"] == "okay_nabu"]


def clean_negatives() -> list[dict]:
    idx = json.loads((CLIPS / "index.json").read_text())
    out = [{"name": c["file"], "audio": to16k(CLIPS / c["file"])} for c in idx if c["word"] is None]
    return out + [{"name": f"espeak {v} {s}: {t}", "audio": espeak(t, v, s)} for t in CONFUSABLE for v, s in ESPEAK]


class Scores:
    def __init__(self):
        from edge.stages.wake import WakeWord

        self.ww = WakeWord([("okay_nabu", "micro", 0.5)], 2000)

    def __call__(self, audio: np.ndarray, normalise: bool = False) -> np.ndarray:
        from edge.stages.vad import LevelNormalizer

        norm = LevelNormalizer() if normalise else None
        self.ww.flush()
        n = len(audio) // FRAME
        frames = (audio[i * FRAME:(i + 1) * FRAME] for i in range(n))
        return np.array([self.ww.score(norm(f) if norm else f)["okay_nabu"] for f in frames], np.float32)


def peaks(s: np.ndarray, where: list[tuple]) -> list[tuple[float, int]]:
    """``(highest score, its frame)`` from each clip's start to 1.5 s after its end."""
    out = []
    for _, st, en in where:
        a, b = st // FRAME, min(len(s), (en + int(1.5 * RATE)) // FRAME + 1)
        out.append((float(s[a:b].max()), int(a + s[a:b].argmax())))
    return out


def window(audio: np.ndarray, frame: int) -> np.ndarray:
    end = (frame + 1) * FRAME
    return audio[max(0, end - 2 * RATE):end]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=240.0, help="s of each noise the stretches are cut from")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "wake_recall_where.json"))
    a = ap.parse_args(argv)
    score = Scores()
    pos = positives()
    splits = [c["split"] for c in pos]
    noises = {"tv": tv(a.seconds, seed=5, level_db=-10.0) * 0.18, "workshop": workshop(a.seconds, seed=3, level_db=-20.0)}
    first: dict[str, dict] = {}  # "tv_10" -> {"as is": [(peak, frame)], "x0.1": [...], ...}
    windows: list[dict] = []  # what Whisper checks
    for key, base in noises.items():
        for snr in SNRS:
            audio, where = snippets(base, [{"audio": c["audio"], "word": "okay_nabu"} for c in pos], snr, seed=100 + snr)
            mix = f"{key}_{snr}"
            first[mix] = {"as is": peaks(score(audio), where),
                          "level normaliser": [p for p, _ in peaks(score(audio, normalise=True), where)]}
            if snr == 10:
                for g in GAINS:
                    louder = np.clip(audio.astype(np.float64) * g, -32768, 32767).astype(np.int16)
                    first[mix][f"x{g:g}"] = [p for p, _ in peaks(score(louder), where)]
            windows += [{"set": mix, "i": i, "max": p, "audio": window(audio, f)}
                        for i, (p, f) in enumerate(first[mix]["as is"]) if p >= 0.05]
    for kind, clips in (("clean_pos", pos), ("clean_neg", clean_negatives())):
        for c in clips:
            s = score(c["audio"])
            windows.append({"set": kind, "i": c["name"], "max": float(s.max()), "audio": window(c["audio"], int(s.argmax()))})
    cpu = check_windows(windows)
    result = summarise(first, windows, splits, pos) | {"seconds_of_each_noise": a.seconds, "check_cpu_ms": cpu}
    out = Path(a.out)
    out.write_text(json.dumps(result, indent=1) + "\n")
    plot(first, result, out.with_suffix(".png"))
    print(json.dumps(result["configurations"], indent=1))
    return 0


def check_windows(windows: list[dict]) -> dict[str, float]:
    """Adds ``{model: heard, model_match}`` and ``snr_db`` to each window (cached); CPU ms per check."""
    from faster_whisper import WhisperModel

    from edge.stages.asr.base import model_dir
    from edge.stages.wake_check import WhisperCheck

    f = CACHE / "wake_where_checks.json"
    cache = {(w["set"], str(w["i"])): w for w in json.loads(f.read_text())} if f.exists() else {}
    cpu = {}
    for m in CHECK_MODELS:
        chk = WhisperCheck(WhisperModel(str(model_dir(m)), device="cpu", compute_type="int8", cpu_threads=1),
                           {"okay_nabu": "okay nabu"})
        t0, n = time.process_time(), 0
        for w in windows:
            old = cache.get((w["set"], str(w["i"])))
            if old is not None and m in old and abs(old["max"] - w["max"]) < 1e-4:
                w[m], w[m + "_match"], w["snr_db"] = old[m], old[m + "_match"], old.get("snr_db", old.get("snr_est"))
                continue
            v = chk.hear("okay_nabu", w["audio"])
            w[m], w[m + "_match"], w["snr_db"] = v.heard, v.match, v.snr_db
            n += 1
        cpu[m] = round(1000 * (time.process_time() - t0) / max(1, n), 1) if n else None
    CACHE.mkdir(parents=True, exist_ok=True)
    f.write_text(json.dumps([{k: v for k, v in w.items() if k != "audio"} for w in windows]))
    return cpu


def fires(w: dict | None, model: str, t: float) -> bool:
    if w is None or w["max"] < t:
        return False
    return bool(w[model + "_match"]) or (w["max"] >= ALONE_ABOVE and w["snr_db"] < QUIET_DB)


def summarise(first: dict, windows: list[dict], splits: list[str], pos: list[dict]) -> dict:
    def rate(hits):
        return round(float(np.mean(hits)), 3) if hits else None

    stage1 = {}
    for mix, variants in first.items():
        stage1[mix] = {v: {f"{t:g}": rate([(p[0] if isinstance(p, tuple) else p) >= t for p in ps]) for t in THRESHOLDS}
                       for v, ps in variants.items()}
    by = {(w["set"], w["i"]): w for w in windows}
    confs = {}
    for model in (None, *CHECK_MODELS):
        for t in THRESHOLDS:
            row = {}
            for snr in SNRS:
                for part in ("tune", "test", "all"):
                    hits = []
                    for key in ("tv", "workshop"):
                        mix = f"{key}_{snr}"
                        for i, (p, _) in enumerate(first[mix]["as is"]):
                            if part != "all" and splits[i] != part:
                                continue
                            hits.append(p >= t if model is None else fires(by.get((mix, i)), model, t))
                    row[f"recall_{snr}db_{part}"] = rate(hits)
            for kind in ("clean_pos", "clean_neg"):
                ws = [w for w in windows if w["set"] == kind]
                n = sum((w["max"] >= t) if model is None else fires(w, model, t) for w in ws)
                row["recall_clean" if kind == "clean_pos" else "fires_on_clean_confusables"] = f"{n}/{len(ws)}"
            confs[f"okay_nabu @{t:g}" + ("" if model is None else f" + {model} check")] = row
    heard = {m: [w[m] for w in windows if w["set"] == "tv_10" and not w[m + "_match"]][:12] for m in CHECK_MODELS}
    return {"clips": len(pos), "clips_by_split": {s: splits.count(s) for s in sorted(set(splits))},
            "first_stage_recall": stage1, "configurations": confs, "alone_above": ALONE_ABOVE, "quiet_db": QUIET_DB,
            "heard_on_missed_tv_10db": heard}


def plot(first: dict, result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.6))
    for k, mix in enumerate(m for m in first if m.endswith("_10") or m.endswith("_20")):
        p = np.sort([x[0] for x in first[mix]["as is"]])
        ax1.plot(p, 1 - np.arange(len(p)) / len(p), color=f"C{k}", label=mix.replace("_", " ") + " dB")
    for t in (0.1, 0.7):
        ax1.axvline(t, color="grey", lw=0.8, ls=":")
    ax1.set(xlabel="okay_nabu's highest score on the word", ylabel="share of wake words reaching it",
            title="first stage: score of true wake words in noise", xscale="log", xlim=(0.005, 1))
    labels = [c for c in result["configurations"] if "@0.1" in c or "@0.7" in c]
    x = np.arange(len(labels))
    for k, snr in enumerate(SNRS):
        ax2.bar(x + (k - 1) * 0.27, [100 * (result["configurations"][c][f"recall_{snr}db_test"] or 0) for c in labels],
                0.27, label=f"{snr} dB (held-out clips)")
    ax2.axhline(95, color="r", lw=0.8)
    ax2.set_xticks(x, [c.replace("okay_nabu ", "").replace(" check", "") for c in labels], rotation=20, fontsize=7)
    ax2.set(ylabel="recall %", ylim=(0, 105), title="first stage alone and with Whisper's check")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
