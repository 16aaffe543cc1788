"""Writes bench/eval/grounding.jsonl: questions for grounded answers (bench/eval_grounding.py).

The world is bench/eval/grounding_inventory.csv plus the records :data:`SEED` logs today. Every true
answer is computed here from those two, in plain Python (never through edge.stock): the stock after
the seeded logs, what a place holds, what is low (at or below the reorder level, or none left), the
totals used today, and the arithmetic of the what-if questions.

Rows: ``{"text", "kind": answerable|unanswerable|small_talk, "topic", "expect": [numbers],
"words": [lower-case words the reply must say]}``; an unanswerable row's reply must decline.

    python bench/eval/make_grounding.py
"""
from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
INVENTORY = HERE / "grounding_inventory.csv"
OUT = HERE / "grounding.jsonl"
#: (sku, place or None, signed change) logged today before the questions are asked
SEED = [("FUS-5A", None, -12), ("FUS-5A", None, -3), ("GLV-NIT-L", None, -2), ("WSH-M8", None, 200),
        ("TIE-CBL-200", None, -50), ("DRL-BIT-6", None, -5)]


def world() -> tuple[dict, dict, dict]:
    """``(stock {sku: {place: qty}}, names {sku: name}, reorder {sku: level})`` after :data:`SEED`."""
    stock: dict = defaultdict(dict)
    names, reorder = {}, {}
    with INVENTORY.open(newline="") as f:
        for r in csv.DictReader(f):
            stock[r["sku"]][r["location"]] = int(r["quantity"])
            names[r["sku"]] = r["item"]
            reorder[r["sku"]] = int(r["reorder_level"]) if r["reorder_level"] else None
    for sku, place, delta in SEED:
        place = place or next(iter(stock[sku]))
        stock[sku][place] += delta
    return dict(stock), names, reorder


def rows() -> list[dict]:
    stock, names, reorder = world()
    total = {s: sum(p.values()) for s, p in stock.items()}
    used = defaultdict(int)
    for sku, _p, d in SEED:
        if d < 0:
            used[sku] -= d
    low = sorted(s for s in stock if total[s] <= 0 or (reorder[s] is not None and total[s] <= reorder[s]))
    top = max(used, key=used.get)
    out: list[dict] = []

    def ans(text, topic, expect=(), words=()):
        out.append({"text": text, "kind": "answerable", "topic": topic, "expect": list(expect), "words": list(words)})

    # stock of an item (per place)
    t = total
    ans("could you give me a rundown on the M8 bolt situation", "stock", [t["BLT-M8-30"]])
    ans("what does our supply of fuses look like at the moment", "stock", [t["FUS-5A"]])
    ans("are there still some cable ties around", "stock", [t["TIE-CBL-200"]])
    ans("is the drill bit drawer looking healthy", "stock", [t["DRL-BIT-6"]])
    ans("tell me the washer count please", "stock", [t["WSH-M8"]])
    ans("how are we doing for nitrile gloves", "stock", [t["GLV-NIT-L"]])
    ans("whats the story with the safety goggles", "stock", [t["GOG-SAF"]])
    ans("any idea how much duct tape there is", "stock", [t["TAP-DCT"]])
    ans("are we all right for hydraulic oil", "stock", [t["OIL-HYD"]])
    ans("do we happen to have any dust masks", "stock", [t["MSK-FFP2"]])
    ans("what is the M8 bolt count in bin 47 specifically", "stock", [stock["BLT-M8-30"]["bin 47"]])
    ans("how many M8 bolts sit in bin 12 right now", "stock", [stock["BLT-M8-30"]["bin 12"]])
    ans("is there still copy paper on shelf D", "stock", [t["PPR-A4"]])
    ans("I need to know the number of ten millimetre spanners", "stock", [t["SPN-10"]])
    ans("quick check on the AA batteries please", "stock", [t["BAT-AA"]])
    ans("do we have more gloves or more goggles", "compare", [t["GLV-NIT-L"], t["GOG-SAF"]])
    ans("are there more fuses than drill bits", "compare", [t["FUS-5A"], t["DRL-BIT-6"]])
    ans("which do we have more of, washers or cable ties", "compare", [t["WSH-M8"], t["TIE-CBL-200"]])
    ans("compare the dust masks with the gloves for me", "compare", [t["MSK-FFP2"], t["GLV-NIT-L"]])
    ans("what about the duct tape and the hydraulic oil, how much of each", "compare", [t["TAP-DCT"], t["OIL-HYD"]])
    # place contents
    for place, text in (("bin 30", "what have we got sitting in bin 30"), ("shelf B", "tell me what lives on shelf B"),
                        ("drawer 4", "what's kept in drawer 4 these days"), ("shelf E", "anything on shelf E"),
                        ("drawer 9", "remind me what goes in drawer 9"), ("shelf F", "what's stored over on shelf F")):
        ans(text, "place", [q for s, p in stock.items() for pl, q in p.items() if pl == place])
    ans("what's in drawer 7 at the moment", "place", [stock["TIE-CBL-200"]["drawer 7"], stock["TAP-DCT"]["drawer 7"]])
    ans("give me the contents of shelf A", "place", [stock["GLV-NIT-L"]["shelf A"], stock["MSK-FFP2"]["shelf A"]])
    # low stock
    low_words = [names[s].split()[-1].lower()[:6] for s in low]
    ans("what should we think about restocking soon", "low", words=low_words)
    ans("is anything getting dangerously low", "low", words=low_words)
    ans("which things are we short on", "low", words=low_words)
    ans("are the goggles running short", "low", [t["GOG-SAF"]])
    ans("are we at risk of running out of AA batteries", "low", [t["BAT-AA"]])
    ans("anything running low in drawer 9", "low", [t["BAT-AA"]])
    ans("do we need more white paint", "low", words=["paint"])
    # records
    ans("how many fuses did we get through today", "records", [used["FUS-5A"]])
    ans("what did we go through the most of today", "records", words=[names[top].split()[-1].lower()])
    ans("how many cable ties got used up today", "records", [used["TIE-CBL-200"]])
    ans("did anybody take drill bits today, how many", "records", [used["DRL-BIT-6"]])
    ans("how many washers came in today", "records", [200])
    ans("how many boxes of gloves were used today", "records", [used["GLV-NIT-L"]])
    ans("when did the washers last come in", "records", [200], words=["today"])
    ans("when were fuses last taken out", "records", [3], words=["today"])
    # what-ifs (a calculation over what the tools return)
    ans("if we use 5 fuses a day how many days will they last", "what_if", [t["FUS-5A"] // 5])
    ans("if we used 20 cable ties what would be left", "what_if", [t["TIE-CBL-200"] - 20])
    ans("suppose we take 30 washers, how many remain", "what_if", [t["WSH-M8"] - 30])
    ans("what would the M8 bolt total be if we received 100 more", "what_if", [t["BLT-M8-30"] + 100])
    ans("if each job needs 4 drill bits how many jobs can we do", "what_if", [t["DRL-BIT-6"] // 4])
    ans("what's the fuses and drill bits combined", "what_if", [t["FUS-5A"] + t["DRL-BIT-6"]])
    # boxes of gloves and single masks are not summed: the answer says both counts (and why no total)
    ans("how many gloves and masks do we have in total", "what_if", [t["GLV-NIT-L"], t["MSK-FFP2"]])
    ans("if we double the duct tape how much would we have", "what_if", [t["TAP-DCT"] * 2])
    out += declined_and_small_talk()
    return out


def _row(text: str, kind: str, topic: str) -> dict:
    return {"text": text, "kind": kind, "topic": topic, "expect": [], "words": []}


def declined_and_small_talk() -> list[dict]:
    """What the box must decline (weather, news, people, schedules, timers, machines, orders, facts
    nobody keeps) and small talk."""
    out: list[dict] = []
    # unanswerable: weather, news, people, schedules, timers, machines, orders, facts nobody keeps
    for text in ("what's the weather like tomorrow", "is it going to rain this afternoon", "do I need an umbrella today",
                 "what's the temperature outside"):
        out.append(_row(text, "unanswerable", "weather"))
    for text in ("what's in the news today", "who won the football last night", "how is the stock market doing",
                 "any headlines this morning"):
        out.append(_row(text, "unanswerable", "news"))
    for text in ("where is Bob today", "who is the manager on site", "what's Sarah's phone number",
                 "is Dave in today", "who is the president"):
        out.append(_row(text, "unanswerable", "people"))
    for text in ("when does my shift start tomorrow", "what time is lunch break", "when is the next safety meeting",
                 "is the warehouse open on Sunday", "what's on the schedule for Friday"):
        out.append(_row(text, "unanswerable", "schedule"))
    for text in ("set a timer for ten minutes", "remind me to check the oil at three", "wake me up at six",
                 "start a countdown for the glue"):
        out.append(_row(text, "unanswerable", "timer"))
    for text in ("turn off the air compressor", "switch on the lights in bay two", "shut down the conveyor",
                 "open the roller door", "start the forklift charger", "turn the heater up a bit"):
        out.append(_row(text, "unanswerable", "machines"))
    for text in ("order 50 more fuses from the supplier", "buy a new pallet of copy paper", "place an order for gloves",
                 "email the supplier about the white paint"):
        out.append(_row(text, "unanswerable", "order"))
    for text in ("how do I reset the air compressor after an overload", "what torque do the forklift wheel nuts need",
                 "what is the capital of France", "how far is the moon", "what's the best way to sharpen a drill bit",
                 "what year was this building built", "how much does a new lathe cost"):
        out.append(_row(text, "unanswerable", "no_source"))
    # small talk
    for text in ("hello there", "good morning", "thanks a lot", "thank you", "how are you doing today",
                 "who are you", "what can you do", "tell me a joke", "you're doing great", "bye for now",
                 "cheers mate", "are you a robot", "what's your name", "have a nice day", "nice one"):
        out.append(_row(text, "small_talk", "small_talk"))
    return out


if __name__ == "__main__":
    got = rows()
    OUT.write_text("".join(json.dumps(r) + "\n" for r in got))
    kinds = defaultdict(int)
    for r in got:
        kinds[r["kind"]] += 1
    print(f"{OUT}: {len(got)} questions {dict(kinds)}")
