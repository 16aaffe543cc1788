"""How fast the template path understands one utterance with thousands of items.

For a generated stock room (``tests/stockroom.py``) of 2,000 and 20,000 items: the build time of
:class:`edge.stages.nlu.grammar.Grammar` (templates, resolver tables, FTS5 shortlist) and the time of
:meth:`Grammar.parse` per utterance (median, p90, max over every utterance of :data:`UTTERANCES`,
each parsed :data:`REPEATS` times after one warm-up pass). Also the alternative the template path
does not take: item names as a hassil slot list instead of the ``{item}`` wildcard (build and match
time for a few utterances), to show why the wildcard plus bounded lookup is used.

Run: ``.venv/bin/python bench/nlu_speed.py`` (about half a minute here); writes
``bench/results/nlu_speed.json``.
"""
from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hassil import Intents, recognize_best  # noqa: E402
from hassil.intents import TextSlotList  # noqa: E402

from edge.stages.nlu.grammar import Grammar  # noqa: E402
from tests.stockroom import stockroom  # noqa: E402

UTTERANCES = [
    "how many M8 bolts are in bin twelve", "we used three drill bits from drawer four",
    "we used 5 M10 bolts eighty millimetre", "how many M10 bolts do we have", "we used two drill bids",
    "log twenty boxes of nitrile gloves received", "we did not use 3 drill bits", "we used 3, no wait, 4 fuses",
    "we used 3 drill bits and 2 fuses", "move 5 drill bits from drawer 4 to shelf B",
    "counted forty washers in bin three", "which items need reordering", "what's in bin 12", "undo that",
    "never mind", "have we got any brass hinge gamma 0", "we used two and a half metres of copper cable",
    "how many sprockets do we have", "took 2 boxes of extra large nitrile work gloves", "tell me a joke about hammers",
]
REPEATS = 5
SIZES = (2000, 20000)
LIST_UTTERANCES = ["how many hex bolt m10 x 80 mm do we have", "we used 3 drill bit", "how many widgets do we have",
                   "how many brass hinge gamma 0 do we have"]


def _commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def parse_times(n: int) -> dict:
    items = stockroom(n)
    t0 = time.perf_counter()
    g = Grammar(items)
    build = time.perf_counter() - t0
    for u in UTTERANCES:  # warm-up: hassil compiles its matchers lazily
        g.parse(u)
    times = []
    for _ in range(REPEATS):
        for u in UTTERANCES:
            t = time.perf_counter()
            g.parse(u)
            times.append((time.perf_counter() - t) * 1000)
    times.sort()
    return {"items": n, "build_s": round(build, 3), "utterances": len(UTTERANCES), "repeats": REPEATS,
            "median_ms": round(statistics.median(times), 3), "p90_ms": round(times[int(0.9 * len(times))], 3),
            "max_ms": round(times[-1], 3)}


def list_times(n: int) -> dict:
    """Item names as a hassil list (the alternative to the wildcard)."""
    names = [it.item.lower() for it in stockroom(n)]
    t0 = time.perf_counter()
    intents = Intents.from_dict({"language": "en", "intents": {"query_stock": {"data": [
        {"sentences": ["how many {item} [do we have]", "[we] used {count} {item}"]}]}},
        "lists": {"count": {"range": {"from": 1, "to": 1000}}}})
    lists = {"item": TextSlotList.from_strings(names)}
    build = time.perf_counter() - t0
    cold, warm, matched = [], [], []
    for u in LIST_UTTERANCES:
        for times in (cold, warm):  # the first match builds hassil's matchers for the list
            t = time.perf_counter()
            r = recognize_best(u, intents, slot_lists=lists)
            times.append((time.perf_counter() - t) * 1000)
        matched.append(r.entities["item"].value if r is not None and "item" in r.entities else None)
    return {"items": n, "build_s": round(build, 3), "first_match_ms": [round(x, 1) for x in cold],
            "again_ms": [round(x, 1) for x in warm], "item_matched": matched}


def main() -> int:
    res = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "commit": _commit(),
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                    "load_avg": [round(x, 2) for x in os.getloadavg()]},
        "template_path": [parse_times(n) for n in SIZES],
        "hassil_item_list": [list_times(n) for n in SIZES],
    }
    out = REPO / "bench" / "results" / "nlu_speed.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2) + "\n")
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
