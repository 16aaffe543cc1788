"""Writes ``bench/eval/nlu.jsonl``: the cases written one by one (``cases_hand.py``) and, for volume,
cases from a few templates over items of the generated inventory that no hand case names.

    .venv/bin/python bench/eval/make_cases.py [--check]

Deterministic (a fixed seed): ``--check`` exits 1 when the file on disk differs. Case shape:
``casekit.py``. The templated cases say every place a query must name and only take out what
the place holds (no read-back below zero).
"""
from __future__ import annotations

import csv
import random
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

from casekit import case as c  # noqa: E402
from casekit import numbered, write_or_check  # noqa: E402
from cases_hand import hand_cases  # noqa: E402

from edge.stages.sizes import split_size  # noqa: E402

OUT = HERE / "nlu.jsonl"
INVENTORY = HERE / "inventory.csv"
SEED = 4417
ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen").split()
TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")


def words(n: int) -> str:
    """1..999 in English words ("one hundred and five")."""
    if n < 20:
        return ONES[n]
    if n < 100:
        return TENS[n // 10] + ("" if n % 10 == 0 else "-" + ONES[n % 10])
    rest = n % 100
    return f"{ONES[n // 100]} hundred" + (f" and {words(rest)}" if rest else "")


def spoken_place(place: str, rng: random.Random) -> str:
    kind, label = place.split(" ", 1)
    return f"{kind} {words(int(label))}" if label.isdigit() and rng.random() < 0.5 else place


def plural(name: str) -> str:
    family, size = split_size(name)
    # a bearing's designation reads as part of its name here ("bearing 6007 ZZ"), as when the set was made
    if not size or size.bearing or f"{family} {size.text}" != name or any(ch.isdigit() for ch in family) \
            or not family.split()[-1].isalpha() or family.split()[-1] == "x":
        return name
    return f"{family if family.endswith('s') else family + 's'} {size.text}"


def load(path: Path = INVENTORY) -> dict[str, dict]:
    """sku → {item, unit, places: {place: qty}}."""
    items: dict[str, dict] = {}
    with path.open(newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            it = items.setdefault(r["sku"], {"item": r["item"], "unit": r["unit"], "places": {}})
            it["places"][r["location"]] = int(r["quantity"])
    return items


def _eligible(items: dict[str, dict], used: set[str]) -> list[str]:
    names = defaultdict(int)
    for it in items.values():
        names[it["item"].casefold()] += 1
    # whole-unit items only, not named by a hand case, whose name no other item's name contains
    # (so "o-ring 15 mm" is not picked while "viton o-ring 15 mm" exists: the hand cases probe that)
    all_names = [it["item"].casefold() for it in items.values()]
    out = []
    for sku, it in items.items():
        n = it["item"].casefold()
        if sku in used or it["unit"] not in ("pcs", "box", "pair", "roll", "set"):
            continue
        if sum(1 for other in all_names if n in other) > 1:
            continue
        out.append(sku)
    return sorted(out)


def templated(items: dict[str, dict], used: set[str]) -> list[dict]:
    rng = random.Random(SEED)
    pool = _eligible(items, used)
    rng.shuffle(pool)
    out: list[dict] = []
    it = iter(pool)

    def take():
        sku = next(it)
        return sku, items[sku], plural(items[sku]["item"])

    for k in range(30):  # per place
        sku, item, name = take()
        place, qty = rng.choice(sorted(item["places"].items()))
        text = (f"how many {name} are in {spoken_place(place, rng)}" if k % 2 else
                f"how many {name} do we have in {spoken_place(place, rng)}")
        out.append(c("template-like", "query_stock", text, reply=(str(qty),), asks=False))
    for k in range(30):  # in total, naming every place
        sku, item, name = take()
        total = sum(item["places"].values())
        text = f"how many {name} do we have" if k % 2 else f"how many {name} are there"
        out.append(c("template-like", "query_stock", text, reply=(str(total), *sorted(item["places"])), asks=False))
    for k in range(40):  # out of a named place
        sku, item, name = take()
        place, qty = rng.choice(sorted(item["places"].items()))
        n = rng.randint(1, min(qty, 30))
        said = words(n) if k % 3 else str(n)
        text = (f"we used {said} {name} from {spoken_place(place, rng)}" if k % 2 else
                f"take {said} {name} out of {spoken_place(place, rng)}")
        out.append(c("template-like", "log_record", text, [(sku, -n, place)], asks=False))
    for k in range(30):  # in, to a named place or the only one
        sku, item, name = take()
        place = rng.choice(sorted(item["places"]))
        n = rng.randint(1, 60)
        said = words(n) if k % 2 else str(n)
        if len(item["places"]) == 1 and k % 3 == 0:
            text = f"log {said} {name} received"
        else:
            text = f"add {said} {name} to {spoken_place(place, rng)}"
        out.append(c("template-like", "log_record", text, [(sku, n, place)], asks=False))
    para_logs = ("{place}, {name}, we took {n}", "pulled {n} {name} out of {place} for the job",
                 "just grabbed {n} of the {name} from {place}", "{n} {name} gone from {place}",
                 "we just had {n} {name} delivered to {place}", "chuck {n} {name} into {place}, new delivery")
    for k in range(30):
        sku, item, name = take()
        place, qty = rng.choice(sorted(item["places"].items()))
        tmpl = para_logs[k % len(para_logs)]
        incoming = "delivered" in tmpl or "delivery" in tmpl
        n = rng.randint(1, 40 if incoming else min(qty, 20))
        text = tmpl.format(place=spoken_place(place, rng), name=name, n=words(n) if k % 2 else n)
        out.append(c("paraphrase", "log_record", text, [(sku, n if incoming else -n, place)], p=True))
    para_queries = ("any {name} left in {place}?", "got any {name} in {place}",
                    "what's the count on {name} in {place}", "are there still {name} in {place}")
    for k in range(12):
        sku, item, name = take()
        place, qty = rng.choice(sorted(item["places"].items()))
        text = para_queries[k % len(para_queries)].format(name=name, place=spoken_place(place, rng))
        out.append(c("paraphrase", "query_stock", text, reply=(str(qty),), p=True))
    return out


def named_skus(cases: list[dict]) -> set[str]:
    return {r["sku"] for x in cases for r in x["expect"]["records"]}


def build() -> list[dict]:
    hand = hand_cases()
    items = load()
    from make_inventory import PINNED  # the pinned items stay for the hand cases

    cases = hand + templated(items, named_skus(hand) | set(PINNED))
    return numbered(cases, "")


def main() -> int:
    return write_or_check(build(), OUT, __doc__.split("\n\n")[0])


if __name__ == "__main__":
    raise SystemExit(main())
