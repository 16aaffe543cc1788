"""Writes ``bench/eval/nlu_holdout.jsonl``: a held-out evaluation set over the same inventory as
``nlu.jsonl``, written by hand by someone who had not read the understanding's templates,
exemplars or the development cases, so its figure is not one anybody tuned against.

    .venv/bin/python bench/eval/make_holdout.py [--check]

Case shape: ``casekit.py``; ids are ``h-<kind>-<n>``. No text is shared with ``nlu.jsonl``
(tests/test_eval_set.py checks it). The expectations are what a careful shop assistant would do:
when the amount, size or place is not clear the box asks, and nothing is ever written on a guess.
Whole units (pcs, box, pair, roll, can, set) cannot be split, so a fraction of one asks; metres
and litres take decimals. The inventory has no item kept by the kilogram, so no case says kg.
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from casekit import case as c  # noqa: E402
from casekit import numbered, write_or_check  # noqa: E402

OUT = HERE / "nlu_holdout.jsonl"
Q, LG, U, CN, PC, TR, SC, LS, OT = ("query_stock", "log_record", "undo", "cancel", "place_contents", "transfer",
                                    "stock_count", "low_stock", "other")
NOTHING: tuple = ()


def queries() -> list[dict]:
    """Stock questions: per place, in total (naming every place), sizes said several ways."""
    return [
        c("place", Q, "how many M6 nuts have we got in bin two twenty two", reply=("19",), asks=False, p=True),
        c("place", Q, "M6 nuts, what's the total across both bins", reply=("36", "bin 41", "bin 222"), p=True),
        c("place", Q, "where can I find the seventeen mil sockets", reply=("bin 300", "bin 37"), p=True),
        c("place", Q, "how many 17 mm sockets are in bin 37", reply=("103",), asks=False),
        c("place", Q, "how many thirteen mil drill bits do we have altogether",
          reply=("191", "bin 241", "bin 170", "drawer 36"), p=True),
        c("place", Q, "what's left of the long zip ties in drawer eight", reply=("100",), p=True),
        c("place", Q, "nineteen mil spanners, where are they and how many", reply=("21", "drawer 32", "bin 57"), p=True),
        c("place", Q, "how many M12 washers in bin one twenty", reply=("33",), p=True),
        c("place", Q, "how many M12 x 100 bolts in bin 31", reply=("12",), asks=False),
        c("paraphrase", Q, "any large latex gloves about", reply=("19",), p=True),
        c("paraphrase", Q, "how much brake fluid is there", reply=("158",), p=True),
        c("paraphrase", Q, "is there still some acetone", reply=("12",), p=True),
        c("paraphrase", Q, "how many metres of 2.5 earth cable are on the reel", reply=("55",), p=True),
        c("paraphrase", Q, "have we got thirteen amp fuses in stock", reply=("67",), p=True),
        c("paraphrase", Q, "how much of the 6.4 heat shrink is left", reply=("106",), p=True),
        c("paraphrase", Q, "what's our coolant level looking like", reply=("127",), p=True),
        c("paraphrase", Q, "how many litres of engine oil do we have", reply=("104",), p=True),
        c("paraphrase", Q, "do we have any P240 sandpaper", reply=("45",), p=True),
        c("paraphrase", Q, "M10 threaded bar, how many lengths", reply=("307",), p=True),
        c("paraphrase", Q, "how many extra large nitrile gloves boxes are left", reply=("2",), p=True),
        c("template-like", Q, "how many spanners 17 mm do we have", reply=("156",), asks=False),
        c("template-like", Q, "how many sockets 13 mm are there", reply=("64",), asks=False),
        c("variant", Q, "how many 6004 bearings are there", reply=("ZZ",), p=True),
        c("variant", Q, "how many spanners 20 mm have we got", NOTHING, reply=("19", "21")),
        c("variant", Q, "what sizes of socket do we carry", reply=("13", "17"), p=True),
    ]


def logs_and_sizes() -> list[dict]:
    """Logs of sized items with the size, without it (the box asks and is answered), per place."""
    return [
        c("variant", LG, "just used three M6 by forty bolts", [("HB-M6-40", -3, "bin 241")], asks=False, p=True),
        c("variant", LG, "one six mil masonry bit gone", [("MDB-6", -1, "bin 146")], asks=False, p=True),
        c("variant", LG, "I've taken two seventeen mil spanners for the gearbox job", [("SPN-17", -2, "drawer 26")],
          asks=False, p=True),
        c("variant", LG, "a box of medium latex gloves went out", [("GLV-LTX-M", -1, "bin 92")], asks=False, p=True),
        c("variant", LG, "we used two boxes of latex gloves", [("GLV-LTX-S", -2, "drawer 2")], asks=True,
          answers=("small",), reply=("medium", "large"), p=True),
        c("variant", LG, "grabbed three sockets for the press", [("SKT-14", -3, "bin 147")], asks=True,
          answers=("fourteen",), p=True),
        c("variant", LG, "I took four M6 bolts", [("HB-M6-40", -4, "bin 241")], asks=True,
          answers=("the forty mil ones",), reply=("12", "60"), p=True),
        c("variant", LG, "cut two metres off the earth cable", [("CBL-ERT-2.5", -2, "bin 167")], asks=True,
          answers=("the 2.5",), p=True),
        c("variant", LG, "topped up the press with three litres of hydraulic oil", [("OIL-HYD-68", -3, "bin 188")],
          asks=True, answers=("sixty eight",), reply=("32", "68"), p=True),
        c("variant", LG, "swapped out a circuit breaker on line two", [("MCB-10A", -1, "bin 244")], asks=True,
          answers=("ten amp",), p=True),
        c("variant", LG, "we used two M6 x 35 bolts", NOTHING, reply=("30", "40")),
        c("variant", LG, "took one 26 mil socket", NOTHING, reply=("24", "27"), p=True),
        c("variant", LG, "one viton o-ring 30 mm used from bin 4", [("VOR-30", -1, "bin 4")], asks=False),
        c("variant", LG, "used five plain o-rings, the 30 mm ones", [("OR-30", -5, "bin 221")], p=True),
        c("place", LG, "took five M6 nuts", [("NUT-M6", -5, "bin 222")], asks=True, answers=("bin two two two",),
          reply=("bin 41", "bin 222"), p=True),
        c("place", LG, "used two seventeen mil sockets on the tractor", [("SKT-17", -2, "bin 37")], asks=True,
          answers=("bin thirty seven",), p=True),
        c("place", LG, "pulled six M6 nuts out of bin forty one", [("NUT-M6", -6, "bin 41")], asks=False, p=True),
        c("place", LG, "two 19 mil spanners out of drawer 32", [("SPN-19", -2, "drawer 32")], asks=False, p=True),
        c("place", LG, "we received 40 M12 washers", [("WSH-M12", 40, "bin 128")], asks=True,
          answers=("one twenty eight",), p=True),
        c("place", LG, "put twenty cut-off wheels 125 in drawer 12", [("CD-125", 20, "drawer 12")], asks=False, p=True),
        c("template-like", LG, "we used 6 spanners 17 mm", [("SPN-17", -6, "drawer 26")], asks=False),
        c("template-like", LG, "add 30 fuses 13 A", [("FUS-13A", 30, "drawer 2")], asks=False),
        c("template-like", LG, "we used 4 nyloc nuts M10 from bin 78", [("NYL-M10", -4, "bin 78")], asks=False),
        c("paraphrase", LG, "knocked off a litre of brake fluid for the forklift", [("BRK", -1, "bin 239")], p=True),
        c("paraphrase", LG, "new delivery: twenty litres of coolant", [("COOL", 20, "bin 197")], p=True),
        c("paraphrase", LG, "Kev's had two M10 lock nuts", [("NYL-M10", -2, "bin 78")], p=True),
        c("paraphrase", LG, "two P240 sheets for the bodywork", [("SAND-P240", -2, "drawer 18")], p=True),
        c("paraphrase", LG, "stuck a new 13 mil socket in the kit, so one out", [("SKT-13", -1, "bin 263")], p=True),
        c("paraphrase", LG, "booking out one set of allen keys", [("HEXK-SET", -1, "drawer 31")], p=True),
        c("paraphrase", LG, "a tube of silicone sealant went on the window", [("SEAL-RU", -1, "shelf G")], p=True),
    ]


def places_transfers_counts() -> list[dict]:
    """What a place holds; moves between places; counts (delta = counted − held)."""
    return [
        c("paraphrase", PC, "what's kept in drawer thirty one", reply=("hex key set",), p=True),
        c("paraphrase", PC, "run me through shelf G", reply=("duct tape", "sanding sheet"), p=True),
        c("template-like", PC, "what is on shelf H", reply=("air hose",)),
        c("paraphrase", PC, "which parts live in drawer twenty one", reply=("o-ring",), p=True),
        c("template-like", PC, "what's in drawer 12", reply=("cutting disc",)),
        c("paraphrase", PC, "shelf C, what have we got on it", reply=("white paint",), p=True),
        c("template-like", PC, "what is in bin 61", reply=("M10",)),
        c("paraphrase", PC, "remind me what's in drawer five", reply=("drill bit",), p=True),
        c("paraphrase", PC, "what sits on shelf B", reply=("goggles",), p=True),
        c("template-like", PC, "list what's in bin 263", reply=("socket",)),
        c("paraphrase", TR, "shift ten M6 nuts from bin 41 over to bin 222",
          [("NUT-M6", -10, "bin 41", "transfer"), ("NUT-M6", 10, "bin 222", "transfer")], p=True),
        c("template-like", TR, "move 20 metres of earth cable 2.5 mm from bin 167 to shelf E",
          [("CBL-ERT-2.5", -20, "bin 167", "transfer"), ("CBL-ERT-2.5", 20, "shelf E", "transfer")]),
        c("paraphrase", TR, "I've taken 15 of the 125 discs off shelf D and put them in drawer 12",
          [("CD-125", -15, "shelf D", "transfer"), ("CD-125", 15, "drawer 12", "transfer")], p=True),
        c("paraphrase", TR, "the two leather gloves XL have gone from shelf B to shelf A",
          [("GLV-LTH-XL", -2, "shelf B", "transfer"), ("GLV-LTH-XL", 2, "shelf A", "transfer")], p=True),
        c("paraphrase", TR, "swap 30 sockets 17 mm out of bin 37 into bin 300",
          [("SKT-17", -30, "bin 37", "transfer"), ("SKT-17", 30, "bin 300", "transfer")], p=True),
        c("template-like", TR, "transfer 5 spanners 19 mm from drawer 32 to bin 57",
          [("SPN-19", -5, "drawer 32", "transfer"), ("SPN-19", 5, "bin 57", "transfer")]),
        c("paraphrase", TR, "move four M6 nuts to bin 41", [("NUT-M6", -4, "bin 222", "transfer"),
                                                             ("NUT-M6", 4, "bin 41", "transfer")],
          answers=("from bin two twenty two",), p=True),
        c("paraphrase", TR, "shift fifty safety goggles from shelf B to shelf A", NOTHING, answers=("no",), p=True),
        c("paraphrase", SC, "I counted the nyloc M10s in bin 78, there's a hundred",
          [("NYL-M10", 33, "bin 78", "count")], p=True),
        c("paraphrase", SC, "stock take on shelf G: 45 sheets of P80", [("SAND-P80", 5, "shelf G", "count")], p=True),
        c("paraphrase", SC, "there's only 7 cans of WD-40 on shelf F", [("WD-40", -2, "shelf F", "count")], p=True),
        c("paraphrase", SC, "just measured the degreaser, 22 litres", [("DEGR", -3, "shelf F", "count")], p=True),
        c("template-like", SC, "I counted 60 sockets 13 mm in bin 263", [("SKT-13", -4, "bin 263", "count")]),
        c("paraphrase", SC, "I count 15 M6 nuts", [("NUT-M6", -2, "bin 41", "count")], asks=True,
          answers=("bin forty one",), p=True),
        c("paraphrase", SC, "did a recount of bin 60, we've actually got 810 M8 nuts",
          [("NUT-M8", 10, "bin 60", "count")], p=True),
        c("template-like", SC, "count 20 boxes of latex gloves L in bin 78", [("GLV-LTX-L", 1, "bin 78", "count")]),
    ]


def low_and_undo_and_cancel() -> list[dict]:
    d = ("we used four M6 x 40 bolts",)
    log_d = [("HB-M6-40", -4, "bin 241"), ("HB-M6-40", 4, "bin 241", "undo")]
    return [
        c("paraphrase", LS, "what's under its reorder point right now", reply=("cutting oil",), p=True),
        c("paraphrase", LS, "anything I need to get ordered this week", reply=("white paint",), p=True),
        c("paraphrase", LS, "are we short of o-rings", reply=("25",), p=True),
        c("paraphrase", LS, "are any of the nitrile gloves running out", reply=("XL",), p=True),
        c("paraphrase", LS, "which cutting discs need ordering", reply=("230",), p=True),
        c("paraphrase", LS, "is drawer five running low on anything", reply=("drill bit",), p=True),
        c("paraphrase", LS, "do we need to order more M12 nuts", reply=("150",), p=True),
        c("paraphrase", LS, "what needs restocking on shelf A", reply=("nitrile",), p=True),
        c("template-like", LS, "show me the low stock items"),
        c("template-like", LS, "what is below the reorder level"),
        c("undo", U, "no hang on, undo that", log_d, before=d, p=True),
        c("undo", U, "that's wrong, take it off again", log_d, before=d, p=True),
        c("undo", U, "scrap that last one", [("FUS-13A", -2, "drawer 2"), ("WD-40", -1, "shelf F"),
                                             ("WD-40", 1, "shelf F", "undo")],
          before=("we used two fuses 13 A", "we used one can of WD-40"), p=True),
        c("undo", U, "reverse that move", [("NUT-M6", -10, "bin 41", "transfer"), ("NUT-M6", 10, "bin 222", "transfer"),
                                           ("NUT-M6", 10, "bin 41", "undo"), ("NUT-M6", -10, "bin 222", "undo")],
          before=("move 10 M6 nuts from bin 41 to bin 222",), p=True),
        c("undo", U, "undo the count", [("SKT-13", -4, "bin 263", "count"), ("SKT-13", 4, "bin 263", "undo")],
          before=("I counted 60 sockets 13 mm in bin 263",)),
        c("undo", U, "I said that wrong, back it out", [("COOL", 5, "bin 197"), ("COOL", -5, "bin 197", "undo")],
          before=("received 5 litres of coolant",), p=True),
        c("undo", U, "undo what I just did", NOTHING, asks=False),
        c("cancel", CN, "ah, forget I said anything", asks=False, p=True),
        c("cancel", CN, "sorry, I was talking to Steve", asks=False, p=True),
        c("cancel", CN, "no, all good, ignore that", asks=False, p=True),
        c("cancel", CN, "never mind mate", asks=False, p=True),
        c("cancel", CN, "cancel that", asks=False),
        c("cancel", LG, "we took some 13 amp fuses", NOTHING, asks=True, answers=("doesn't matter, forget it",), p=True),
        c("cancel", LG, "we used some latex gloves", NOTHING, asks=True, answers=("never mind",), p=True),
        c("cancel", LG, "took two sockets", NOTHING, asks=True, answers=("forget it",), p=True),
    ]


def refusals() -> list[dict]:
    """Negation, already done, ranges and vague amounts: nothing on a guess."""
    return [
        c("negation", LG, "we didn't end up using the four M6 x 40 bolts", NOTHING, p=True),
        c("negation", LG, "don't book out those two sockets 17 mm", NOTHING, p=True),
        c("negation", LG, "no, I did not take any acetone", NOTHING, p=True),
        c("negation", LG, "hold off logging the cable ties for now", NOTHING, p=True),
        c("negation", LG, "we haven't touched the brake fluid", NOTHING, p=True),
        c("negation", LG, "don't put the 20 metres of earth cable in yet", NOTHING, p=True),
        c("negation", LG, "the latex gloves delivery never turned up", NOTHING, p=True),
        c("negation", LG, "do not log 5 13 amp fuses", NOTHING),
        c("already_done", LG, "the 5 litres of coolant are already on the system", NOTHING, p=True),
        c("already_done", LG, "I booked those M10 nuts out this morning already", NOTHING, p=True),
        c("already_done", LG, "Sam's already logged the three 17 mil spanners", NOTHING, p=True),
        c("already_done", LG, "those sockets were entered earlier, no need", NOTHING, p=True),
        c("already_done", LG, "the acetone's already been taken off", NOTHING, p=True),
        c("already_done", LG, "already done: 2 rolls of duct tape used", NOTHING),
        c("range", LG, "we used two or three 13 amp fuses", [("FUS-13A", -3, "drawer 2")], asks=True,
          answers=("three",), p=True),
        c("range", LG, "somewhere around a dozen zip ties 200 went", NOTHING, asks=True, p=True),
        c("range", LG, "four to five litres of coolant used", [("COOL", -5, "bin 197")], asks=True,
          answers=("five",), p=True),
        c("range", LG, "took a handful of M10 washers", NOTHING, asks=True, p=True),
        c("range", LG, "a couple of boxes of FFP2 masks went out", [("MASK-FFP2", -2, "shelf A")], asks=True,
          answers=("two",), p=True),
        c("range", LG, "10 to 12 cable ties 380 from drawer 7", [("CT-380", -12, "drawer 7")], asks=True,
          answers=("twelve",), p=True),
        c("range", LG, "used several brass tees 28 mm", NOTHING, asks=True, p=True),
    ]


def numbers_and_corrections() -> list[dict]:
    """Self-corrections, fractions (whole units ask, m and l take decimals), "oh" words, hesitations."""
    return [
        c("correction", LG, "we used five, sorry, four 13 amp fuses", [("FUS-13A", -4, "drawer 2")], p=True),
        c("correction", LG, "received 30, no, 40 metres of earth cable 2.5 mm", [("CBL-ERT-2.5", 40, "bin 167")]),
        c("correction", LG, "used two sockets 17, I mean 19 mm", [("SKT-19", -2, "bin 262")], p=True),
        c("correction", LG, "we took three M6 nuts out of bin 41, sorry, bin 222", [("NUT-M6", -3, "bin 222")], p=True),
        c("correction", LG, "add twelve boxes of medium latex gloves, no wait, large",
          [("GLV-LTX-L", 12, "bin 78")], p=True),
        c("correction", LG, "we used six litres of coolant, scratch that, four", [("COOL", -4, "bin 197")], p=True),
        c("correction", LG, "log 3, no 4, no 5 M10 lock nuts used", [("NYL-M10", -5, "bin 78")], p=True),
        # "no, 12" may correct the count or the bin just said (bin 12 exists): the box must ask
        c("correction", TR, "move 10 sockets 17 mm from bin 37 to bin 300, no, 12", NOTHING, asks=True, p=True),
        c("fraction", LG, "we used one and a half sockets 13 mm", NOTHING, asks=True, p=True),
        c("fraction", LG, "two and a half boxes of FFP2 masks used", [("MASK-FFP2", -3, "shelf A")], asks=True,
          answers=("three",), p=True),
        c("fraction", LG, "half a roll of duct tape went on the crate", NOTHING, asks=True, p=True),
        c("fraction", LG, "used 1.5 litres of brake fluid", [("BRK", -1.5, "bin 239")], asks=False),
        c("fraction", LG, "two and a half metres of earth cable 2.5 mm used", [("CBL-ERT-2.5", -2.5, "bin 167")],
          asks=False),
        c("fraction", LG, "a quarter litre of acetone for cleaning the parts", [("ACE", -0.25, "bin 295")], p=True),
        c("fraction", LG, "cut 0.75 metres of heat shrink 6.4 mm", [("HS-6.4", -0.75, "bin 238")], p=True),
        c("fraction", LG, "three and a half metres of air hose 8 mm came in", [("HOSE-AIR-8", 3.5, "bin 286")], p=True),
        c("fraction", LG, "half a can of WD-40 used", NOTHING, asks=True, p=True),
        c("fraction", LG, "one point two five litres of gear oil from bin 9", [("OIL-GEAR", -1.25, "bin 9")], p=True),
        c("oh", Q, "how many lock nuts M12 in bin one oh seven", reply=("31",), p=True),
        c("oh", Q, "how many sockets are in bin three oh oh", reply=("84",), p=True),
        c("oh", LG, "we used two bearings six oh oh four 2RS", [("BRG-6004", -2, "bin 56")], p=True),
        c("oh", LG, "oh and we used two M10 nuts as well", [("NUT-M10", -2, "bin 61")], p=True),
        c("oh", LG, "took three o-rings 30 mm", [("OR-30", -3, "bin 221")]),
        c("oh", LG, "five M8 nuts from bin six oh", [("NUT-M8", -5, "bin 60")], p=True),
        c("oh", Q, "oh what's the count on o-rings forty mil", reply=("9",), p=True),
        c("oh", LG, "oh-rings 25 mm, we used two of them", [("OR-25", -2, "drawer 21")], p=True),
        c("oh", LG, "add one oh five M10 washers", [("WSH-M10", 105, "bin 205")], p=True),
        c("hesitation", LG, "um, we, uh, took three, er, 13 amp fuses", [("FUS-13A", -3, "drawer 2")], p=True),
        c("hesitation", Q, "erm, how much, um, acetone is there", reply=("12",), p=True),
        c("hesitation", LG, "right, so, uh, one box of medium latex gloves gone", [("GLV-LTX-M", -1, "bin 92")], p=True),
    ]


def multis_unknowns_misc() -> list[dict]:
    return [
        c("multi", LG, "we used two 13 amp fuses and a 10 amp breaker",
          [("FUS-13A", -2, "drawer 2"), ("MCB-10A", -1, "bin 244")], p=True),
        c("multi", LG, "took a can of WD-40, two litres of degreaser and a roll of duct tape",
          [("WD-40", -1, "shelf F"), ("DEGR", -2, "shelf F"), ("TAPE-DUCT", -1, "shelf G")], p=True),
        c("multi", LG, "received 50 M10 nuts and 50 M10 washers",
          [("NUT-M10", 50, "bin 61"), ("WSH-M10", 50, "bin 205")]),
        c("multi", LG, "two P80 sheets and two P120 sheets used",
          [("SAND-P80", -2, "shelf G"), ("SAND-P120", -2, "shelf G")], p=True),
        c("multi", LG, "used 4 M8 nuts and 2 M6 nuts", [("NUT-M8", -4, "bin 60"), ("NUT-M6", -2, "bin 41")],
          asks=True, answers=("bin 41",)),
        c("multi", LG, "a litre of acetone and three whatsits", NOTHING, p=True),
        c("multi", LG, "one 17 mil spanner, plus one 17 mil socket out of bin 300",
          [("SPN-17", -1, "drawer 26"), ("SKT-17", -1, "bin 300")], p=True),
        c("unknown", Q, "do we stock any hacksaw blades", NOTHING, reply=("hacksaw blade",), p=True),
        c("unknown", LG, "we used 3 M9 bolts", NOTHING, reply=("M9",)),
        c("unknown", LG, "log 2 litres of diesel used", NOTHING, reply=("diesel",)),
        c("unknown", LG, "took a tub of grease for the bearings", NOTHING, p=True),
        c("unknown", Q, "how much epoxy have we got", NOTHING, reply=("epoxy",), p=True),
        c("unknown", LG, "put four pipe wrenches in drawer 3", NOTHING, reply=("pipe wrench",)),
        c("unknown", Q, "where do the angle grinders live", NOTHING, reply=("angle grinder",), p=True),
        c("unknown", LG, "we got ten bearings 6213 2RS in", NOTHING, p=True),
        c("unicode", Q, "how many of the Ölva clips are left", reply=("22",), p=True),
        c("unicode", LG, "used a roll of the blue insulating tape", [("TAPE-ISO-RU", -1, "drawer 38")], p=True),
        c("unicode", LG, "two Drahtbürsten used on the rust", [("BRUSH-DE", -2, "shelf H")], p=True),
        c("readback", LG, "we used 25 M10 nuts", [("NUT-M10", -25, "bin 61")], confidence=0.4, asks=True,
          answers=("yep",)),
        c("readback", LG, "we used 14 sockets 13 mm", NOTHING, confidence=0.3, asks=True, answers=("no, wrong",)),
        c("other", OT, "who's on the late shift tonight", p=True),
        c("other", OT, "play some music", p=True),
        c("other", OT, "cheers, that's me done", p=True),
    ]


def build() -> list[dict]:
    cases: list[dict] = []
    for section in (queries, logs_and_sizes, places_transfers_counts, low_and_undo_and_cancel, refusals,
                    numbers_and_corrections, multis_unknowns_misc):
        cases.extend(section())
    return numbered(cases, "h-")


def main() -> int:
    return write_or_check(build(), OUT, __doc__.split("\n\n")[0])


if __name__ == "__main__":
    raise SystemExit(main())
