"""Paraphrase matcher: intent accuracy, false matches of free questions, ms per utterance.

Data: ``bench/paraphrase/en.jsonl`` (written for this bench, none copied from the exemplars; each
line ``text``, ``intent``, ``split``: ``dev`` picks the threshold and margin, ``test`` is reported),
inventory ``examples/inventory.csv`` (and the generated 2,000-item one, for the masking's item
words). Variants: slot masking on/off and filler words. For each
variant the (threshold, margin) pair that maximises ``correct − 2 × false matches`` on dev is kept
and applied to test (ties go to the stricter pair). A command counts as correct when the matcher returns its intent; a miss (None)
is not wrong (the LLM path follows); a free question (``other``) must give None.

    python bench/paraphrase.py [--out bench/results/paraphrase.json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from edge.models.embed import Encoder  # noqa: E402
from edge.stages.nlu.paraphrase import FILLERS, Paraphraser, load_exemplars  # noqa: E402
from edge.stock.store import Store  # noqa: E402
from tests.big_inventory import big_inventory  # noqa: E402

DATA = ROOT / "bench" / "paraphrase" / "en.jsonl"
VARIANTS = {
    "raw": {"mask": False, "fillers": FILLERS},
    "masked": {"mask": True, "fillers": FILLERS},
    "masked_mask_token": {"mask": True, "fillers": {"item": "[MASK]", "n": "[MASK]", "place": "[MASK]",
                                                    "place2": "[MASK]"}},
    "masked_words": {"mask": True, "fillers": {"item": "item", "n": "number", "place": "place", "place2": "place"}},
    # the same as "masked", the item vocabulary from the 2,000-item inventory (which holds the 10 items)
    "masked_inv2000": {"mask": True, "fillers": FILLERS, "inventory": 2000},
}
THRESHOLDS = [round(0.30 + 0.025 * i, 3) for i in range(17)]
MARGINS = [0.0, 0.02, 0.04, 0.06, 0.08, 0.10]


def load_rows() -> list[dict]:
    return [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]


def tally(rows: list[dict], found: list[tuple[str, float, float] | None], threshold: float, margin: float) -> dict:
    cmd = [r for r in rows if r["intent"] != "other"]
    free = [r for r in rows if r["intent"] == "other"]
    ok = wrong = missed = false_free = 0
    per: dict[str, list[int]] = {}
    for r, f in zip(rows, found, strict=True):
        got = f[0] if f is not None and f[1] >= threshold and f[2] >= margin and f[0] != "other" else None
        if r["intent"] == "other":
            false_free += got is not None
            continue
        hit = got == r["intent"]
        ok += hit
        wrong += got is not None and not hit
        missed += got is None
        per.setdefault(r["intent"], [0, 0])
        per[r["intent"]][0] += hit
        per[r["intent"]][1] += 1
    return {"commands": len(cmd), "correct": ok, "wrong_intent": wrong, "missed": missed,
            "accuracy": round(ok / max(len(cmd), 1), 3), "free_questions": len(free),
            "free_false_matches": false_free, "per_intent": {k: f"{a}/{n}" for k, (a, n) in sorted(per.items())}}


def objective(s: dict) -> int:
    """What the dev grid maximises (ties: the stricter threshold and margin)."""
    return s["correct"] - 2 * s["free_false_matches"] - s["wrong_intent"]


def raw_matches(p: Paraphraser, rows: list[dict]) -> tuple[list, list[float]]:
    """(intent, score, margin) with no threshold, for every row, and ms per utterance."""
    out, ms = [], []
    for r in rows:
        t0 = time.perf_counter()
        best, _ = p.scores(r["text"])
        ms.append((time.perf_counter() - t0) * 1000)
        ranked = sorted(best, key=best.get, reverse=True)
        out.append((ranked[0], best[ranked[0]], best[ranked[0]] - best[ranked[1]]))
    return out, ms


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "paraphrase.json"))
    args = ap.parse_args()
    rows = load_rows()
    exemplars = {s.lower() for group in load_exemplars("en").values() for s in group}
    copied = [r["text"] for r in rows if r["text"].lower() in exemplars]
    assert not copied, f"bench sentences copied from the exemplars: {copied}"
    with tempfile.TemporaryDirectory() as d:  # the inventory as the service reads it
        s = Store(Path(d) / "inv.db")
        s.import_csv(ROOT / "examples" / "inventory.csv")
        items = s.items()
        s.close()
    t0 = time.perf_counter()
    enc = Encoder.load()
    load_s = time.perf_counter() - t0
    dev = [r for r in rows if r["split"] == "dev"]
    test = [r for r in rows if r["split"] == "test"]
    result = {"data": str(DATA.relative_to(ROOT)), "rows": len(rows), "dev": len(dev), "test": len(test),
              "exemplars": sum(len(v) for v in load_exemplars("en").values()), "encoder_load_s": round(load_s, 2),
              "variants": {}}
    for name, v in VARIANTS.items():
        p = Paraphraser(enc, big_inventory(2000) if v.get("inventory") else items, mask=v["mask"],
                        fillers=v["fillers"])
        dev_found, _ = raw_matches(p, dev)
        best = max(((t, m) for t in THRESHOLDS for m in MARGINS), key=lambda tm: (objective(tally(dev, dev_found, *tm)), tm))
        test_found, ms = raw_matches(p, test)
        result["variants"][name] = {
            "mask": v["mask"], "fillers": v["fillers"], "inventory_items": 2000 if v.get("inventory") else len(items), "threshold": best[0], "margin": best[1],
            "dev": tally(dev, dev_found, *best), "test": tally(test, test_found, *best),
            "test_at_defaults": tally(test, test_found, p.threshold, p.margin),
            "ms_median": round(statistics.median(ms), 1), "ms_p90": round(sorted(ms)[int(0.9 * len(ms))], 1),
        }
        print(name, json.dumps(result["variants"][name]["test"]), "ms", result["variants"][name]["ms_median"],
              "t/m", best, flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print("wrote", args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
