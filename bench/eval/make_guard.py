"""Writes the adversarial "every word accounted for" sets: ``guard.jsonl`` over the 10-item session
inventory (``guard_inventory.csv``, a copy of ``../shared/audio/sessions/inventory.csv``),
``guard_big.jsonl`` over the 2,065-item ``inventory.csv`` and ``guard_zh.jsonl`` (Mandarin, ``language``
``zh``) over ``guard_inventory_zh.csv`` (the session inventory with Chinese names as aliases).

    python bench/eval/make_guard.py

Each case is one utterance (``before`` turns first when given) with ``expect``:

- ``records``: the records a right answer writes (SKU, signed delta, place, kind); ``[]`` for none;
- ``write``: ``must`` (a correct command: logged in one turn, without a question), ``never`` (a
  sentence whose parse leaves a word unexplained: nothing may be written) or ``may`` (writing the
  expected records or asking are both right);
- ``asks``: when given, whether the box must ask back (a count in another unit, a size said as the
  count);
- ``intent`` is ``log_record`` throughout (for :func:`bench.eval_nlu.judge`; the guard scorer does not
  check it).

``class`` names the issue class (question, direction, size, frequency, unit, other_item, same_item,
negation, but, correction; round 5 in ``guard_round5.py``: lot_piece, state, present, present_heard,
answer; round 6 in ``guard_round6.py``: equipment, count_what, not_done, undo, not_count, question; round 7
in ``guard_round7.py``: aside, part_name, place, not_ours, amend; Mandarin round 7 in ``guard_round7_zh.py``:
qualifier, except, other_thing, someone, etc, moved; round 8 in ``guard_round8.py``: would_have, qualified,
undo_unsaid, got_out, decimal, incoming, moved, hedge, tag, alias_head; Mandarin round 8 in ``guard_round8_zh.py``:
negated, time, each, question, still, theirs, no_direction, unit, kind, hearsay) or ``neighbour`` for the correct
commands beside them.
Deterministic.
"""
from __future__ import annotations

import itertools
import json
from pathlib import Path

import guard_round5
import guard_round6
import guard_round7
import guard_round7_zh
import guard_round8
import guard_round8_zh

HERE = Path(__file__).resolve().parent

#: spoken name → (SKU, place, stock) of the session inventory's items counted in pcs with stock to spare
SMALL = {"fuses": ("FUS-5A", "bin 30", 60), "washers": ("WSH-M8", "bin 2023", 500),
         "drill bits": ("DRL-BIT-6", "drawer 4", 25), "cable ties": ("TIE-CBL-200", "drawer 7", 300),
         "M8 bolts": ("BLT-M8-30", "bin 12", 140), "safety goggles": ("GOG-SAF", "shelf B", 8)}
NUMS = ["two", "3", "four", "5", "2", "three"]


def rec(sku: str, delta: float, place: str) -> dict:
    return {"sku": sku, "delta": delta, "place": place, "kind": "log"}


class Cases:
    def __init__(self, prefix: str):
        self.prefix, self.rows, self.n = prefix, [], itertools.count(1)

    def add(self, cls: str, text: str, write: str, records=(), asks=None, before=(), answers=()):
        exp = {"intent": "log_record", "records": list(records), "write": write}
        if asks is not None:
            exp["asks"] = asks
        case = {"id": f"{self.prefix}-{cls}-{next(self.n):03d}", "text": text, "kind": cls, "class": cls,
                "paraphrase": False, "expect": exp}
        if before:
            case["before"] = list(before)
        if answers:
            case["answers"] = list(answers)
        self.rows.append(case)

    def add_sets(self, never: dict, must: list) -> None:
        """``never``: class → (asks, texts) that write nothing; ``must``: (text, records) neighbours that log."""
        for cls, (asks, texts) in never.items():
            for t in texts:
                self.add(cls, t, "never", asks=asks)
        for t, r in must:
            self.add("neighbour", t, "must", r)


def value(n: str) -> int:
    return {"two": 2, "three": 3, "four": 4, "five": 5}.get(n, None) or int(n)


ITEMS = list(SMALL)
PAIRS = [(a, b) for a in ITEMS for b in ITEMS if a != b][::3]


def small() -> list[dict]:
    c = Cases("g")
    _questions_and_directions(c, ITEMS, PAIRS)
    _sizes_counts_and_units(c, ITEMS, PAIRS)
    _compounds(c, ITEMS, PAIRS)
    _neighbours(c, ITEMS)
    _second_round(c)
    _third_round(c)
    _fourth_round(c)
    guard_round5.small(c)
    guard_round6.small(c)
    guard_round7.small(c)
    guard_round8.small(c)
    return c.rows


def _fourth_round(c: Cases) -> None:
    """A fourth reviewer's wrong records (cancel words after a completed log keep it, and say so)."""
    for before, t in [("we used 3 fuses", "forget it"), ("we used 3 fuses", "never mind"), ("we used 3 fuses", "cancel"),
                      ("we received 2 drill bits", "forget about it")]:
        r = rec("FUS-5A", -3, "bin 30") if "fuses" in before else rec("DRL-BIT-6", 2, "drawer 4")
        c.add("trailing", t, "must", [r], before=[before])
    for t in ["we received 2 drill bits, scratch that", "we used 4 washers, only joking"]:
        c.add("trailing", t, "never")
    c.add("same_item", "we used 3 fuses and 3 fuses", "may", [rec("FUS-5A", -6, "bin 30")])
    for t in ["we used three fuses three fuses", "we used 3 fuses, 3 fuses", "we received 2 drill bits 2 drill bits"]:
        c.add("same_item", t, "never", asks=True)
    c.add("same_item", "we used 3 fuses and 3 more fuses", "must", [rec("FUS-5A", -6, "bin 30")])
    for t in ["we returned 3 fuses to the supplier", "we sent back 2 drill bits to the manufacturer",
              "the delivery of 10 fuses is late", "the shipment of 10 washers hasn't arrived"]:
        c.add("direction", t, "never")
    for t in ["we used to use 3 fuses", "we usually use 3 fuses", "we normally use 2 washers", "I always use 3 fuses",
              "I wish we had used 3 fuses", "I doubt we used 3 fuses", "tell me whether we used 3 fuses", "let's use 3 fuses"]:
        c.add("modal", t, "never")
    c.add("neighbour", "the delivery of 10 fuses arrived", "must", [rec("FUS-5A", 10, "bin 30")])
    for t, a in [("we used 3 fuses from bin 12", "yes from bin 12"), ("we used 2 fuses from bin 12", "yeah, bin 12")]:
        c.add("correction", t, "never", answers=[a])
    c.add("neighbour", "we used 4 fuses from bin 12", "may", [rec("FUS-5A", -4, "bin 30")], answers=["yes, from bin 30"])
    for t in ["we moved 3 fuses and 2 drill bits to shelf A", "moved 5 fuses from bin 30 to drawer 4 and used 2"]:
        c.add("other_item", t, "never", answers=["yes"])
    for cls, t in [("other_item", "we used 3 fuses instead of drill bits"), ("other_item", "we used fuses and drill bits, 3 each"),
                   ("not_count", "we used a third of the washers"), ("not_count", "we used two thirds of the fuses"),
                   ("qualifier", "we used almost 3 fuses"), ("qualifier", "we used nearly 3 fuses"),
                   ("qualifier", "we used at least 3 fuses"), ("not_count", "we used the last 3 fuses"),
                   ("time", "we used 3 fuses today in total"), ("time", "we used 3 fuses so far")]:
        c.add(cls, t, "never")
    for t in ["we used 2 M6 washers", "we received 4 M10 washers"]:
        c.add("size", t, "never")
    c.add("size", "we used 2 M8 washers", "must", [rec("WSH-M8", -2, "bin 2023")])
    for t in ["we used 3 M8 x 40 bolts", "we used small gloves, 2 boxes", "we used 2 boxes of medium gloves"]:
        c.add("size", t, "never")
    c.add("size", "we used 3 M8 x 30 bolts", "must", [rec("BLT-M8-30", -3, "bin 12")])


def _questions_and_directions(c: Cases, items: list[str], pairs: list[tuple[str, str]]) -> None:
    # 1. a question about a change is never the change
    questions = ["why did we use {n} {i}", "who used {n} {i}", "who took {n} {i} out", "how come we used {n} {i}",
                 "did anyone use {n} {i}", "why were {n} {i} received", "when did we receive {n} {i}",
                 "who received {n} {i}", "did somebody take {n} {i}", "so why did we take {n} {i}",
                 "we used {n} {i}?", "how come {n} {i} were taken", "whose {n} {i} did we use"]
    for k, (t, i) in enumerate(itertools.product(questions, items)):
        if k % 2 == 0 or t.startswith(("why did", "who used", "how come we")):
            c.add("question", t.format(n=NUMS[k % len(NUMS)], i=i), "never")
    # 2. a second direction: each part its own, or nothing
    for k, (a, b) in enumerate(pairs):
        n, m = NUMS[k % 6], NUMS[(k + 1) % 6]
        (sa, pa, _), (sb, pb, _) = SMALL[a], SMALL[b]
        c.add("neighbour", f"we used {n} {a} and received {m} {b}", "must",
              [rec(sa, -value(n), pa), rec(sb, value(m), pb)])
        c.add("neighbour", f"we received {n} {a} and used {m} {b}", "must",
              [rec(sa, value(n), pa), rec(sb, -value(m), pb)])
        c.add("direction", f"we used and received {n} {a}", "never")
        c.add("direction", f"we used {n} {a} and {m} {b} came back", "may", [rec(sa, -value(n), pa), rec(sb, value(m), pb)])
        c.add("neighbour", f"we took {n} {a} and then we received {m} {b}", "must",
              [rec(sa, -value(n), pa), rec(sb, value(m), pb)])


def _sizes_counts_and_units(c: Cases, items: list[str], pairs: list[tuple[str, str]]) -> None:
    # 3. a size is no count
    for t in ["we used 6 mm drill bits", "we took 5 amp fuses", "we received 8 mm washers", "we used 10 mm spanners",
              "we used 200 mm cable ties", "we took some 6 mm drill bits", "log 5 amp fuses used",
              "we received 6 millimetre drill bits"]:
        c.add("size", t, "never")
    # 4. how often is no count
    freq = ["we used {i} three times", "we used {n} {i} twice", "we took {i} {n} times", "we use {n} {i} every day",
            "we used {n} {i} each time", "twice we used {n} {i}", "we received {i} {n} times this week",
            "we used {n} {i} a day", "{n} times we took {i}", "we used {n} {i} once a week"]
    for k, (t, i) in enumerate(itertools.product(freq, items)):
        c.add("frequency", t.format(n=NUMS[k % len(NUMS)], i=i), "never")
    # 5. a count in a unit the item is not counted in is asked, never converted
    for t in ["we used 3 sheets of paper", "we received 50 sheets of paper", "we used 50 ml of paint",
              "we received 2 litres of paint", "we used 2 kilos of washers", "we received 3 boxes of fuses",
              "we used a bag of cable ties", "we received 2 packs of drill bits", "we used 2 boxes of washers",
              "we took a box of fuses", "we received 3 kg of M8 bolts", "we received 4 rolls of cable ties",
              "we used 3 pairs of safety goggles", "we received 10 metres of cable ties", "we used 2 tubs of washers",
              "we received a litre of paint", "we used 2 sets of drill bits", "we took 2 bottles of paint",
              "we received 3 cartons of fuses", "we used 500 grams of washers"]:
        c.add("unit", t, "never", asks=True)
    for t, r in [("we received 2 boxes of gloves", rec("GLV-NIT-L", 2, "shelf A")),
                 ("we received a box of gloves", rec("GLV-NIT-L", 1, "shelf A")),
                 ("we used 1 box of gloves", rec("GLV-NIT-L", -1, "shelf A")),
                 ("we received 1 pallet of paper", rec("PPR-A4", 1, "shelf D")),
                 ("we used 2 pallets of paper", rec("PPR-A4", -2, "shelf D")),
                 ("we received 2 cans of paint", rec("PNT-WHT", 2, "shelf C")),
                 ("we received 3 cans of white paint", rec("PNT-WHT", 3, "shelf C"))]:
        c.add("neighbour", t, "must", [r])
    # 6. a count that may belong to another item
    for k, (a, b) in enumerate(pairs):
        c.add("other_item", f"we used {NUMS[k % 6]} {a} and {b}", "never")
    for t in ["we used 3 nuts and washers", "we used 3 nuts and washers 8 mm", "we took 5 bolts and nuts",
              "we received 4 goggles and gloves", "we used 2 screws and washers", "we took 3 fuses and holders"]:
        c.add("other_item", t, "never")
    for k, (a, b) in enumerate(pairs):
        n, m = NUMS[k % 6], NUMS[(k + 2) % 6]
        (sa, pa, _), (sb, pb, _) = SMALL[a], SMALL[b]
        c.add("neighbour", f"we used {n} {a} and {m} {b}", "must", [rec(sa, -value(n), pa), rec(sb, -value(m), pb)])


def _compounds(c: Cases, items: list[str], pairs: list[tuple[str, str]]) -> None:
    # 7. one item said twice: one summed record (said so), never one record said as two
    for k, i in enumerate(items):
        n, m = NUMS[k % 6], NUMS[(k + 3) % 6]
        s, p, _ = SMALL[i]
        c.add("same_item", f"we used {n} {i} and {m} more {i}", "must", [rec(s, -(value(n) + value(m)), p)])
        c.add("same_item", f"we received {n} {i} and {m} more {i}", "must", [rec(s, value(n) + value(m), p)])
        c.add("same_item", f"we took {n} {i} and then another {m} {i}", "may", [rec(s, -(value(n) + value(m)), p)])
        c.add("same_item", f"we used {n} {i} and received {m} {i}", "never")
    # 8. a negation or correction across a compound sentence
    for k, (a, b) in enumerate(pairs):
        n = NUMS[k % 6]
        c.add("negation", f"we used {n} {a}. also we did not use the {b}", "never")
        c.add("negation", f"we used {n} {a}, we didn't use any {b}", "never")
        c.add("negation", f"we didn't use the {b}, but we used {n} {a}", "never")
        c.add("but", f"we used {n} {a} but not the {b}", "never")
    for k, i in enumerate(items):
        n, m = NUMS[k % 6], NUMS[(k + 1) % 6]
        s, p, _ = SMALL[i]
        c.add("but", f"we used {n} {i} but {m} came back", "never")
        c.add("but", f"we received {n} {i} but {m} were broken", "never")
        c.add("correction", f"we used not {n} but {m} {i}", "must" if value(n) != value(m) else "may",
              [rec(s, -value(m), p)])
        c.add("correction", f"we received not {n} but {m} {i}", "must" if value(n) != value(m) else "may",
              [rec(s, value(m), p)])


def _neighbours(c: Cases, items: list[str]) -> None:
    # neighbours: plain commands, and a command after a question or a remark
    plain = ["we used {n} {i}", "log {n} {i} used", "we received {n} {i}", "took {n} {i}", "{n} {i} used",
             "just used {n} {i}"]
    for k, (t, i) in enumerate(itertools.product(plain, items)):
        n = NUMS[k % 6]
        s, p, _ = SMALL[i]
        sign = 1 if "received" in t else -1
        c.add("neighbour", t.format(n=n, i=i), "must", [rec(s, sign * value(n), p)])
    for k, i in enumerate(items):
        n = NUMS[k % 6]
        s, p, _ = SMALL[i]
        c.add("neighbour", f"why did we use {n} {i}? we needed them. log {n} {i} used", "must", [rec(s, -value(n), p)])
        c.add("neighbour", f"did we use {n} {i}? log {n} {i} used", "must", [rec(s, -value(n), p)])
        c.add("neighbour", f"who took the {i}? anyway we used {n} {i}", "must", [rec(s, -value(n), p)])
        c.add("question", f"we used {n} {i}. did we?", "never")


def _second_round(c: Cases) -> None:
    """Sentences written after the first fixes, to look for the classes' other faces."""
    fus, wsh, drl, tie, blt, spn = (("FUS-5A", "bin 30"), ("WSH-M8", "bin 2023"), ("DRL-BIT-6", "drawer 4"),
                                    ("TIE-CBL-200", "drawer 7"), ("BLT-M8-30", "bin 12"), ("SPN-10", "shelf E"))
    for cls, t in [("question", "why on earth did we take 4 washers"), ("question", "who the hell used 5 cable ties"),
                   ("question", "whoever took 3 fuses should log them"),
                   ("question", "remind me why we received 2 drill bits"),
                   ("question", "any idea why 3 fuses got used"), ("question", "did we use 3 fuses"),
                   ("question", "have we used 3 fuses"), ("direction", "we took 4 fuses out and put 2 back"),
                   ("direction", "we took 3 fuses, then returned 1"), ("frequency", "we used cable ties like 4 times"),
                   ("frequency", "we grabbed 2 fuses on three occasions"), ("frequency", "we go through 3 fuses weekly"),
                   ("frequency", "we used 3 fuses per shift"), ("other_item", "we used 2 M8 bolts and nuts"),
                   ("other_item", "we took 3 fuses with holders"), ("other_item", "we used 3 washers plus bolts"),
                   ("other_item", "we used 4 fuses, oh and some washers"), ("other_item", "we used 3 fuses and no washers"),
                   ("negation", "we used 3 fuses, not the washers"), ("negation", "we didn't use washers, we used 3 fuses"),
                   ("negation", "we used 3 fuses, the washers we didn't touch"),
                   ("but", "we used 3 fuses except one came back"), ("but", "we used 3 fuses although 1 was returned"),
                   ("correction", "we used 4 fuses, well 3 really"), ("size", "we used 6 mm spanner")]:
        c.add(cls, t, "never")
    for t in ["we used 3 cartons of cable ties", "we received 2 crates of M8 bolts"]:
        c.add("unit", t, "never", asks=True)
    c.add("direction", "3 fuses went out and 2 washers came in", "may", [rec(*fus[:1], -3, fus[1]), rec(wsh[0], 2, wsh[1])])
    for write, t, r in [
            ("must", "we gave out 3 fuses and got 2 washers back", [rec(fus[0], -3, fus[1]), rec(wsh[0], 2, wsh[1])]),
            ("must", "we received 5 dozen washers", [rec(wsh[0], 60, wsh[1])]),
            ("must", "we used 3 fuses, actually no, 4", [rec(fus[0], -4, fus[1])]),
            ("must", "we used 2 fuses and another 2 fuses", [rec(fus[0], -4, fus[1])]),
            # one count said twice with "and": two lots or the same said again; asked (or -4)
            ("may", "we used two fuses and two fuses", [rec(fus[0], -4, fus[1])]),
            ("may", "we used 3 fuses yesterday and 2 fuses today", [rec(fus[0], -5, fus[1])]),
            ("may", "log 3 fuses used and 3 fuses used", [rec(fus[0], -6, fus[1])]),
            ("may", "we took 3 fuses from bin 30 and 3 fuses from bin 30", [rec(fus[0], -6, fus[1])]),
            ("must", "we used 3 fuses. we also used 2 washers.", [rec(fus[0], -3, fus[1]), rec(wsh[0], -2, wsh[1])]),
            ("must", "we used 3 fuses. and we received 2 washers.", [rec(fus[0], -3, fus[1]), rec(wsh[0], 2, wsh[1])]),
            ("must", "we used 3 fuses and received 2 drill bits and 1 washer",
             [rec(fus[0], -3, fus[1]), rec(drl[0], 2, drl[1]), rec(wsh[0], 1, wsh[1])]),
            ("must", "we used 3 fuses, 2 drill bits and received 1 washer",
             [rec(fus[0], -3, fus[1]), rec(drl[0], -2, drl[1]), rec(wsh[0], 1, wsh[1])]),
            ("must", "we used a 10 mm spanner", [rec(spn[0], -1, spn[1])]),
            ("must", "we used 2 10 mm spanners", [rec(spn[0], -2, spn[1])]),
            ("must", "we received 4 cable ties and 2 M8 bolts", [rec(tie[0], 4, tie[1]), rec(blt[0], 2, blt[1])])]:
        c.add("neighbour" if write == "must" else "same_item", t, write, r)


#: singular spoken names of the small inventory's items (a label or an ordinal is said with one)
SINGULAR = {"fuses": "fuse", "washers": "washer", "drill bits": "drill bit", "cable ties": "cable tie",
            "M8 bolts": "M8 bolt"}


def _third_round(c: Cases) -> None:
    """The classes a second reviewer found after the first fixes (round 2), each with variants, and
    the correct commands beside them that must still be logged in one turn."""
    for k, i in enumerate(ITEMS):
        n = NUMS[k % 6]
        s, p, _ = SMALL[i]
        # a past time: the record would carry the wrong time
        for t in ["we used {n} {i} yesterday", "we used {n} {i} last week", "yesterday we took {n} {i}",
                  "we received {n} {i} 2 days ago", "last night we used {n} {i}", "we used {n} {i} on monday"]:
            c.add("time", t.format(n=n, i=i), "never")
        for t in ["we used {n} {i} today", "we used {n} {i} this morning", "we just used {n} {i}"]:
            c.add("neighbour", t.format(n=n, i=i), "must", [rec(s, -value(n), p)])
        # said as what should or will be done, not done
        for t in ["we should use {n} {i}", "we have to take {n} {i}", "we must use {n} {i}", "we ought to use {n} {i}",
                  "we must have used {n} {i}", "I want to take {n} {i}"]:
            c.add("modal", t.format(n=n, i=i), "never")
        # a count qualified, not said
        for t in ["we hardly used {n} {i}", "we used {n} {i} too many", "we used more than {n} {i}",
                  "we used at least {n} {i}", "we barely used {n} {i}", "we used up to {n} {i}"]:
            c.add("qualifier", t.format(n=n, i=i), "never")
        # trailing words that change nothing, and a correction said with "actually"
        for t in ["we used {n} {i} right", "we used {n} {i} ok", "we used {n} {i} please", "we used {n} {i} thanks"]:
            c.add("trailing", t.format(n=n, i=i), "must", [rec(s, -value(n), p)])
        for t in ["we used {n} {i} scratch that", "we used {n} {i}, just kidding", "we used {n} {i} never mind",
                  "we received {n} {i}, only joking"]:
            c.add("trailing", t.format(n=n, i=i), "never", asks=False)
        m = NUMS[(k + 1) % 6]
        if value(m) != value(n):
            c.add("correction", f"we used {n} {i}, actually {m}", "must", [rec(s, -value(m), p)])
            c.add("correction", f"we used {n} {i}, well {m}", "may", [rec(s, -value(m), p)])
        c.add("same_item", f"we used {n} {i}, then {m} more {i}", "must", [rec(s, -(value(n) + value(m)), p)])
        c.add("same_item", f"we received {n} {i} then {m} more {i}", "must", [rec(s, value(n) + value(m), p)])
    for i, one in SINGULAR.items():
        for t in ["we used 30 percent of the {i}", "we used 30% of the {i}", "we used half of the {i}",
                  "we used the 3rd {one}", "we used the third {one}", "we used {one} number 3", "we used {one} 3",
                  "we took {one} #2", "we took the fourth {one}"]:
            c.add("not_count", t.format(i=i, one=one), "never")
    for k, (a, b) in enumerate(PAIRS):
        n, m = NUMS[k % 6], NUMS[(k + 2) % 6]
        c.add("other_item", f"we used {a} and {n} {b}", "never")
        c.add("someone", f"I used {n} {a} and he used {m} {b}", "never")
        c.add("someone", f"we took {n} {a}, John took {m} {b}", "never")
    for k, i in enumerate(ITEMS):
        n = NUMS[k % 6]
        c.add("someone", f"log the {n} {i} that John took", "never")
        c.add("someone", f"log the {n} {i} that they used", "never")
    for t in ["we used 3 10A fuses", "we used 3 10 amp fuses", "we took 2 20 amp fuses", "we used 4 12 mm drill bits",
              "we used 2 20 mm spanners", "we received 5 13A fuses"]:
        c.add("size", t, "never")
    _probes(c)


def _probes(c: Cases) -> None:
    """Found by trying the round-2 fixes with new sentences before they were added here."""
    for cls, t in [("time", "we used 3 fuses the day before yesterday"), ("time", "a week ago we used 3 fuses"),
                   ("time", "we used 3 fuses over the weekend"), ("time", "we used 3 fuses on friday"),
                   ("modal", "we're supposed to use 3 fuses"), ("modal", "we would use 3 fuses"),
                   ("modal", "we gotta use 3 fuses"), ("modal", "we should have used 3 fuses"),
                   ("hedge", "I think we used 3 fuses"), ("hedge", "I guess we used 2 washers"),
                   ("hedge", "we may have used 3 fuses"), ("hedge", "not sure but we used 3 fuses"),
                   ("not_count", "we used fifty percent of the washers"), ("frequency", "we used 3 fuses per machine"),
                   ("other_item", "we used 3 fuses and the washers"), ("other_item", "we used fuses plus 3 washers"),
                   ("other_item", "we used 2 drill bits and some cable ties"),
                   ("someone", "we used 3 fuses, he took 2 washers"), ("someone", "we used the fuses Bob took, 3 of them"),
                   ("someone", "we used 3 fuses plus 2 washers that she took"),
                   ("someone", "I used 3 fuses and the apprentice used 2 washers"),
                   ("someone", "I used 3 fuses and you used 2 washers"), ("size", "we used 3 15A fuses"),
                   ("size", "we used three twenty amp fuses"), ("size", "we used 2 washers 10 mm"),
                   ("qualifier", "we used a little over 3 fuses"), ("qualifier", "we used no more than 3 fuses"),
                   ("trailing", "we used 3 fuses, nah forget it"), ("trailing", "we used 3 fuses, no scratch that")]:
        c.add(cls, t, "never")
    for t, r in [("we used three fuses, well, four", rec("FUS-5A", -4, "bin 30")),
                 ("we used 3 fuses alright", rec("FUS-5A", -3, "bin 30")),
                 ("we used 3 fuses because the pump broke", rec("FUS-5A", -3, "bin 30")),
                 ("we used 3 fuses earlier today", rec("FUS-5A", -3, "bin 30")),
                 ("Sarah and I used 3 fuses", rec("FUS-5A", -3, "bin 30"))]:
        c.add("neighbour", t, "must", [r])


#: the big inventory's items with one place each
BIG = {"m8 nuts": ("NUT-M8", "bin 60"), "m8 washers": ("WSH-M8", "bin 204"), "o-rings 10 mm": ("OR-10", "bin 2"),
       "cutting discs 115 mm": ("CD-115", "shelf D"), "fuses 10 amp": ("FUS-10A", "bin 77"),
       "drill bits 5 mm": ("DB-5", "bin 299"), "m10 nuts": ("NUT-M10", "bin 61")}


def big() -> list[dict]:
    c = Cases("gb")
    for t in ["we used 6 mm drill bits", "we received 8 mm o-rings", "we used 125 mm cutting discs",
              "we took 10 amp fuses", "we used 380 mm cable ties", "we received 3 amp fuses", "we used 5 mm drill bits",
              "log 10 mm o-rings used", "we took 115 mm cutting discs", "we used 12 mm drill bits"]:
        c.add("size", t, "never")
    for t, r in [("we used three 5 mm drill bits", [rec("DB-5", -3, "bin 299")]),
                 ("we used 2 drill bits 5 mm", [rec("DB-5", -2, "bin 299")]),
                 ("we received 4 o-rings 10 mm", [rec("OR-10", 4, "bin 2")]),
                 ("we used 2 cutting discs 115 mm", [rec("CD-115", -2, "shelf D")]),
                 ("we used 3 fuses 10 amp", [rec("FUS-10A", -3, "bin 77")]),
                 ("we used 3 m8 nuts and 2 m8 washers", [rec("NUT-M8", -3, "bin 60"), rec("WSH-M8", -2, "bin 204")]),
                 ("we used 2 litres of acetone", [rec("ACE", -2, "bin 295")]),
                 ("we used 3 sheets of p80 sandpaper", [rec("SAND-P80", -3, "shelf G")]),
                 ("we used 3 m8 nuts and received 2 m8 washers",
                  [rec("NUT-M8", -3, "bin 60"), rec("WSH-M8", 2, "bin 204")]),
                 ("we used 2 m8 nuts and 2 more m8 nuts", [rec("NUT-M8", -4, "bin 60")]),
                 ("why did we use 3 m8 nuts? log 3 m8 nuts used", [rec("NUT-M8", -3, "bin 60")])]:
        c.add("neighbour" if "more" not in t else "same_item", t, "must", r)
    for t in ["we used 3 nuts and washers 8 mm", "we used 3 m8 nuts and washers", "we took 5 bolts and nuts m10",
              "we used 4 washers and nuts m8", "we received 2 m8 nuts and washers"]:
        c.add("other_item", t, "never")
    for t in ["we used 50 ml of acetone", "we used 3 boxes of m8 washers", "we used 2 kilos of m8 nuts",
              "we received a bag of m8 nuts", "we used 2 packs of fuses 10 amp"]:
        c.add("unit", t, "never", asks=True)
    for name in BIG:
        c.add("question", f"why did we use 3 {name}", "never")
        c.add("question", f"who took 2 {name}", "never")
        c.add("frequency", f"we used {name} 3 times", "never")
        c.add("frequency", f"we used 2 {name} twice", "never")
        c.add("same_item", f"we used 2 {name} and received 3 {name}", "never")
        c.add("but", f"we used 4 {name} but 1 came back", "never")
        sku, place = BIG[name]
        c.add("correction", f"we used not 2 but 4 {name}", "must", [rec(sku, -4, place)])
        c.add("neighbour", f"we used 2 {name}", "must", [rec(sku, -2, place)])
    # round 2: a size no item of the name has, a count that is no count, and exact conversions
    for t in ["we used 3 7 amp fuses", "we used 3 7A fuses", "we used 2 115 mm m8 nuts", "we received 4 17.5 mm drill bits",
              "we used 30 percent of the m8 nuts", "we used the 3rd fuse 10 amp", "we used fuse 10 amp number 2",
              "we used 3 m8 nuts yesterday", "we should use 3 m8 nuts", "we used m8 nuts and 3 m8 washers"]:
        c.add("size" if "amp" in t or "mm" in t and "number" not in t else "round2", t, "never")
    for t, r in [("we used 3 x 8 mm drill bits", [rec("DB-8", -3, "drawer 4")]),
                 ("we used 2 x 5 mm drill bits", [rec("DB-5", -2, "bin 299")]),
                 ("we used 200 cm of flex cable 1.5 mm", [rec("CBL-FLX-1.5", -2, "shelf E")]),
                 ("we used 150 cm of flex cable 1 mm", [rec("CBL-FLX-1", -1.5, "bin 261")]),
                 ("we used 2000 mm of flex cable 1.5 mm", [rec("CBL-FLX-1.5", -2, "shelf E")]),
                 ("we used 3 metres of flex cable 1.5 mm", [rec("CBL-FLX-1.5", -3, "shelf E")]),
                 ("we used 3 fuses 10 amp", [rec("FUS-10A", -3, "bin 77")]),
                 ("we used 3 10 amp fuses", [rec("FUS-10A", -3, "bin 77")])]:
        # a count converted from a smaller unit of the same dimension is read back: written after a yes
        conv = " cm " in t or " mm of" in t
        c.add("conversion" if conv else "neighbour", t, "may" if conv else "must", r,
              answers=["yes"] if conv else ())
    guard_round5.big(c)
    guard_round7.big(c)
    guard_round8.big(c)
    return c.rows


#: the session inventory's Chinese names (the Mandarin tests' aliases: tests/nlu_helpers.py ZH_ALIASES)
ZH_ALIASES = {"BLT-M8-30": ("M8螺栓", "M8螺丝"), "GLV-NIT-L": ("丁腈手套", "手套"), "DRL-BIT-6": ("钻头",),
              "GOG-SAF": ("护目镜", "安全眼镜"), "WSH-M8": ("垫圈",), "TIE-CBL-200": ("扎带",), "FUS-5A": ("保险丝",)}
ZH = {"保险丝": ("FUS-5A", "bin 30"), "垫圈": ("WSH-M8", "bin 2023"), "钻头": ("DRL-BIT-6", "drawer 4"),
      "扎带": ("TIE-CBL-200", "drawer 7"), "M8螺栓": ("BLT-M8-30", "bin 12")}
ZH_NUMS = [("三", 3), ("两", 2), ("五", 5), ("四", 4), ("六", 6)]


def zh() -> list[dict]:
    """The Mandarin set (``language: zh``, the session inventory with its Chinese names)."""
    c = Cases("gz")
    names = list(ZH)
    for k, i in enumerate(names):
        (w, n), (w2, n2) = ZH_NUMS[k % 5], ZH_NUMS[(k + 1) % 5]
        s, p = ZH[i]
        j = names[(k + 1) % len(names)]
        for t in [f"用了{w}个{i}", f"收到{w}个{i}", f"拿了{w}个{i}"]:
            c.add("neighbour", t, "must", [rec(s, n if t.startswith("收") else -n, p)])
        c.add("neighbour", f"用了{w}个{i}和{w2}个{j}", "must", [rec(s, -n, p), rec(ZH[j][0], -n2, ZH[j][1])])
        c.add("correction", f"用了{w}个{i}，不对，{w2}个", "must", [rec(s, -n2, p)])
        c.add("other_item", f"用了{w}个{i}和{j}", "never")
        c.add("other_item", f"拿了{w}个{i}跟{j}", "never")
        c.add("correction", f"用了{w}个{i}，不是，是{j}", "never")
        c.add("correction", f"用了{w}个{i}，不对，是{j}", "never")
        c.add("hedge", f"可能用了{w}个{i}", "never")
        c.add("hedge", f"好像用了{w}个{i}", "never")
        c.add("hedge", f"大概收到{w}个{i}", "never")
        c.add("not_count", f"用了第{w}个{i}", "never")
        c.add("not_count", f"拿了第{w2}个{i}", "never")
        c.add("unit", f"用了{w}盒{i}", "never", asks=True)
        c.add("unit", f"收到{w}箱{i}", "never", asks=True)
        c.add("unit", f"用了{w}包{i}", "never", asks=True)
        c.add("frequency", f"每天用{w}个{i}", "never")
        c.add("frequency", f"我们经常用{w}个{i}", "never")
        c.add("future", f"明天要用{w}个{i}", "never")
        c.add("future", f"下周会用{w}个{i}", "never")
        c.add("time", f"昨天用了{w}个{i}", "never")
        c.add("time", f"上周收到{w}个{i}", "never")
    for t in ["用了六毫米钻头", "用了八毫米垫圈", "拿了十安保险丝", "用了五毫米钻头"]:
        c.add("size", t, "never")
    for cls, t in [("size", "用了三个十毫米钻头"), ("hedge", "大约用了三个保险丝"), ("time", "前天用了三个保险丝"),
                   ("future", "打算用三个保险丝"), ("future", "要用三个保险丝"), ("correction", "用了三个保险丝，不对，是两个垫圈"),
                   ("not_count", "用了百分之三十的保险丝"), ("not_count", "用了三号保险丝"), ("unit", "用了三卷扎带")]:
        c.add(cls, t, "never", asks=True if cls == "unit" else None)
    c.add("neighbour", "刚才用了三个保险丝", "must", [rec("FUS-5A", -3, "bin 30")])
    _zh_fourth_round(c)
    for t, r in [("收到两盒手套", [rec("GLV-NIT-L", 2, "shelf A")]), ("用了一盒手套", [rec("GLV-NIT-L", -1, "shelf A")])]:
        c.add("neighbour", t, "must", r)
    guard_round5.zh(c)
    guard_round6.zh(c)
    guard_round7_zh.zh(c)
    guard_round8_zh.zh(c)
    for row in c.rows:
        row["language"] = "zh"
    return c.rows


def _zh_fourth_round(c: Cases) -> None:
    """A fourth reviewer's wrong records in Mandarin (words taking the change back; cancel after a log)."""
    for t in ["用了三个保险丝，算了", "用了三个保险丝，开玩笑的", "收到五个钻头，当我没说", "拿了两个垫圈 算了吧", "用了三个保险丝。骗你的"]:
        c.add("trailing", t, "never")
    c.add("trailing", "算了", "must", [rec("FUS-5A", -3, "bin 30")], before=["用了三个保险丝"])
    for t in ["用了三三个保险丝", "用了两两个钻头", "用了三个保险丝和三个保险丝", "收到五五个垫圈"]:
        c.add("correction", t, "never", asks=True)
    c.add("neighbour", "用了三十三个保险丝", "must", [rec("FUS-5A", -33, "bin 30")])
    for t in ["退回三个保险丝给供应商", "退还两个钻头给厂家", "从小王那拿了三个保险丝", "从老李那里领了两个垫圈"]:
        c.add("other_item", t, "never")
    for t, a in [("用了三四个保险丝", "三个钻头"), ("用了四五个保险丝", "大概四个"), ("用了两三个保险丝", "十几个"),
                 ("用了五六个保险丝", "四盒"), ("从十二号箱拿了三个保险丝", "是，四个"), ("用了三双手套", "一盒半")]:
        c.add("correction", t, "never", answers=[a])
    c.add("correction", "用了三四个钻头", "may", [rec("DRL-BIT-6", -4, "drawer 4")], answers=["四个"])
    for cls, t in [("not_count", "用了三分之一的垫圈"), ("not_count", "我们三个人用了三个保险丝"), ("not_count", "每人用了三个保险丝"),
                   ("hedge", "用了二十来个保险丝"), ("time", "今天总共用了三个保险丝"), ("other_item", "保险丝和钻头各用了三个"),
                   ("hedge", "用了十几个保险丝")]:
        c.add(cls, t, "never")
    for t in ["用了三个M10螺栓", "收到两个M6螺丝"]:
        c.add("size", t, "never")
    c.add("neighbour", "用了三个M8螺栓", "must", [rec("BLT-M8-30", -3, "bin 12")])


def zh_inventory() -> str:
    """The session inventory with the Chinese names as aliases (CSV text)."""
    lines = (HERE / "guard_inventory.csv").read_text(encoding="utf-8").splitlines()
    out = [lines[0]]
    for line in lines[1:]:
        sku = line.split(",", 1)[0]
        out.append(line + "".join(";" + a for a in ZH_ALIASES.get(sku, ())))
    return "\n".join(out) + "\n"


def main() -> None:
    (HERE / "guard_inventory_zh.csv").write_text(zh_inventory(), encoding="utf-8")
    for name, rows in (("guard.jsonl", small()), ("guard_big.jsonl", big()), ("guard_zh.jsonl", zh())):
        (HERE / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        print(f"{name}: {len(rows)} cases")


if __name__ == "__main__":
    main()
