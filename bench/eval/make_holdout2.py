"""Writes ``bench/eval/nlu_holdout2.jsonl``: a second held-out evaluation set (200 cases) over the same
inventory as ``nlu.jsonl``.

    .venv/bin/python bench/eval/make_holdout2.py [--check]

Written on 2026-12-01 by helper h19, an independent writer, blind to the code: without reading the
understanding's templates, exemplars, grammar or resolvers (``edge/stages/nlu/``), the development
set or the first held-out set's sentences. The phrasings are how shop staff talk (UK, US and Indian
English: "tin", "packet", "nos", "pcs", "a dozen", "a couple of", "issued", "booked out"), as a
speech recogniser writes them (sentence case, punctuation, numbers as digits or words), with fillers,
restarts, politeness wrappers and question forms; the items, places and quantities are the
inventory's (``make_inventory.py``). Case shape: ``casekit.py``; ids are ``h2-<kind>-<n>``.

Expectations are what a careful storeman would do: when the amount, size or place is not clear the
box asks (``asks=True``, then the ``answers``); when a case allows either a question or a direct
record (a tin for a can, a read-back) ``asks`` is left open and the answer given is what the user
would say if asked. About 15 % of the cases must write nothing: negations, hypotheticals, reported
speech, "don't log", "already logged", questions about logging, items or sizes not stocked,
fractions of whole units, a cancel in the middle of a question. The inventory has no imperial sizes
and no racks, cabinets or totes, so no case depends on them (one asks what is in a cabinet that
does not exist).
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from casekit import case as c  # noqa: E402
from casekit import numbered, write_or_check  # noqa: E402

OUT = HERE / "nlu_holdout2.jsonl"
Q, LG, U, CN, PC, TR, SC, LS, OT = ("query_stock", "log_record", "undo", "cancel", "place_contents", "transfer",
                                    "stock_count", "low_stock", "other")


def queries() -> list[dict]:
    """Stock questions: plain, regional, per place and in total, sizes said several ways, unknown items."""
    return [
        c("template-like", Q, "How many M10 nuts do we have?", reply=("450",), asks=False),
        c("template-like", Q, "How many safety goggles are there?", reply=("8",), asks=False),
        c("template-like", Q, "How much hydraulic oil 46 is left?", reply=("60",)),
        c("paraphrase", Q, "Got any M14 nuts?", reply=("301",), p=True),
        c("paraphrase", Q, "Are we out of white paint?", p=True),
        c("paraphrase", Q, "What's left of the P80 sandpaper?", reply=("40",), p=True),
        c("paraphrase", Q, "Any 6205 2RS bearings in stock, mate?", reply=("9",), p=True),
        c("paraphrase", Q, "What is the balance quantity of M12 washers?", reply=("33", "39"), p=True),
        c("paraphrase", Q, "Kindly tell me how many nos of 17 mil spanner are available.", reply=("156",), p=True),
        c("paraphrase", Q, "Do we still have duct tape, or did someone nick the lot?", reply=("14",), p=True),
        c("paraphrase", Q, "How many tins of WD-40 are on the shelf?", reply=("9",), p=True),
        c("paraphrase", Q, "So, like, how many zip ties are there, the short ones?", reply=("300",), p=True),
        c("paraphrase", Q, "How many pairs of leather gloves in large?", reply=("9",), p=True),
        c("paraphrase", Q, "How much acetone we have?", reply=("12",), p=True),
        c("paraphrase", Q, "What's our stock of the 6 mil masonry bits?", reply=("7",), p=True),
        c("paraphrase", Q, "Tell me the count of M20 dome nuts please.", reply=("38",), p=True),
        c("paraphrase", Q, "Could you check how many packs of FFP2 masks we've got?", reply=("25",), p=True),
        c("paraphrase", Q, "How many metres of the 8 mm airline is there?", reply=("307",), p=True),
        c("paraphrase", Q, "How many M eight nyloc nuts are there?", reply=("44",), p=True),
        c("paraphrase", Q, "How many ten millimetre drill bits are left?", reply=("3",), p=True),
        c("place", Q, "How many M8 by 30 bolts are in bin 47?", reply=("60",), asks=False),
        c("place", Q, "How many 125 cutting discs in total?", reply=("65",), p=True),
        c("place", Q, "Where do we keep the gear oil?", reply=("bin 121", "bin 225", "bin 9"), p=True),
        c("place", Q, "How many large nitrile gloves on shelf B?", reply=("4",), asks=False, p=True),
        c("place", Q, "How many 6 mm drill bits are left in bin 118?", reply=("10",), asks=False),
        c("place", Q, "Where are the M16 nyloc nuts and how many in each?",
          reply=("28", "11", "26", "drawer 36", "bin 194", "bin 128"), p=True),
        c("place", Q, "How many long cable ties altogether across both drawers?", reply=("220",), p=True),
        c("oh", Q, "How many flat washers are in bin two oh four?", reply=("500",), p=True),
        c("oh", Q, "How many 22 mil copper elbows in bin one oh six?", reply=("38",), p=True),
        c("hesitation", Q, "Uh, how many, um, M5 nuts are there?", reply=("309",), p=True),
        c("hesitation", Q, "So how many of the, uh, the twenty two mil sockets have we got?", reply=("15",), p=True),
        c("hesitation", Q, "How many, sorry, how many 6304 ZZ bearings?", reply=("18",), p=True),
        c("unicode", Q, "How much blue insulating tape do we have?", reply=("20",), p=True),
        c("unicode", Q, "How many Älva hyllclips are there?", reply=("30",), p=True),
        c("variant", Q, "How many hose clamps have we got?"),
        c("unknown", Q, "Have we got any angle grinders?", p=True),
        c("unknown", Q, "How many M7 nuts are there?"),
        c("unknown", Q, "Do we stock 24 volt relays?", p=True),
    ]


def logs() -> list[dict]:
    """Logs that write: plain, regional, fillers, corrections, fractions, "oh", several items, places."""
    return [
        c("template-like", LG, "We used 4 M10 nuts.", [("NUT-M10", -4, "bin 61")]),
        c("template-like", LG, "Received 50 M8 washers.", [("WSH-M8", 50, "bin 204")]),
        c("template-like", LG, "Used two safety goggles.", [("GOG-SAF", -2, "shelf B")]),
        c("template-like", LG, "We received 10 litres of coolant.", [("COOL", 10, "bin 197")]),
        c("paraphrase", LG, "I've just taken 3 of the 6204 ZZ bearings.", [("BRG-6204-ZZ", -3, "bin 57")], p=True),
        c("paraphrase", LG, "Booking out six M12 nyloc nuts.", [("NYL-M12", -6, "bin 107")], p=True),
        c("paraphrase", LG, "Pulled 2 boxes of medium nitrile gloves off the shelf.",
          [("GLV-NIT-M", -2, "shelf A")], p=True),
        c("paraphrase", LG, "Kindly make entry, 10 nos M10 spring washers consumed.",
          [("SWS-M10", -10, "drawer 14")], p=True),
        c("paraphrase", LG, "Issued 5 pcs gasket GSK047 to maintenance.", [("GSK-047", -5, "bin 4")], p=True),
        c("paraphrase", LG, "A dozen P240 sanding sheets came in this morning.", [("SAND-P240", 12, "drawer 18")],
          p=True),
        c("paraphrase", LG, "Got a delivery of 20 M16 hex nuts.", [("NUT-M16", 20, "bin 90")], p=True),
        c("paraphrase", LG, "Took a couple of 13 mil sockets for the line.", [("SKT-13", -2, "bin 263")], p=True),
        c("paraphrase", LG, "We've used up 3 tins of WD-40.", [("WD-40", -3, "shelf F")], answers=("three",),
          p=True),
        c("paraphrase", LG, "Signed out one hex key set.", [("HEXK-SET", -1, "drawer 31")], p=True),
        c("paraphrase", LG, "Just restocked the 10 amp fuses, 25 more.", [("FUS-10A", 25, "bin 77")], p=True),
        c("paraphrase", LG, "Please do inward entry for 40 nos M6 taps.", [("TAP-M6", 40, "bin 119")], p=True),
        c("paraphrase", LG, "Half a dozen o-rings, 20 mil, used on the pump.", [("OR-20", -6, "drawer 20")], p=True),
        c("paraphrase", LG, "Received eighteen metres of 10 mil air hose.", [("HOSE-AIR-10", 18, "shelf H")], p=True),
        c("paraphrase", LG, "Used 2 M twelve by a hundred bolts from bin 31.", [("HB-M12-100", -2, "bin 31")],
          p=True),
        c("paraphrase", LG, "Got a packet of M8 washers in.", [("WSH-M8", 100, "bin 204")], asks=True,
          answers=("a hundred",), p=True),
        c("unicode", LG, "Used one roll of thread seal tape.", [("PTFE-ZH", -1, "drawer 39")], p=True),
        c("unicode", LG, "We got 5 tubes of silicone sealant in.", [("SEAL-RU", 5, "shelf G")], p=True),
        c("unicode", LG, "Mark 2 wire brushes as used.", [("BRUSH-DE", -2, "shelf H")], p=True),
        c("hesitation", LG, "Uh, we used, um, four of the M10 by 80 bolts.", [("HB-M10-80", -4, "bin 22")], p=True),
        c("hesitation", LG, "So like, I took, er, three cutting discs, the 115 ones.", [("CD-115", -3, "shelf D")],
          p=True),
        c("hesitation", LG, "We used, we used 2 of the, uh, 6.5 drill bits.", [("DB-6.5", -2, "drawer 4")], p=True),
        c("hesitation", LG, "Um, received, uh, 30 pop rivets.", [("RIV-4", 30, "bin 290")], p=True),
        c("hesitation", LG, "Right so, uh, used 5 metres of 4 mil earth cable.", [("CBL-ERT-4", -5, "bin 168")],
          p=True),
        c("correction", LG, "We used five, no, six M10 washers.", [("WSH-M10", -6, "bin 205")], p=True),
        c("correction", LG, "Received 20, sorry, 24 boxes of XS nitrile gloves into bin 236.",
          [("GLV-NIT-XS", 24, "bin 236")], p=True),
        c("correction", LG, "Took 3 M8 by 30 bolts from bin 12, no wait, bin 47.", [("HB-M8-30", -3, "bin 47")],
          p=True),
        c("correction", LG, "Used 2 M8 taps, I mean M6 taps.", [("TAP-M6", -2, "bin 119")], p=True),
        c("correction", LG, "Logged out 4 of the 40 mil hose clamps, correction, the 20 mil ones.",
          [("HC-20", -4, "drawer 9")], p=True),
        c("correction", LG, "We used 10 metres, actually make that 12 metres, of 2.5 mil earth cable.",
          [("CBL-ERT-2.5", -12, "bin 167")], p=True),
        c("correction", LG, "Used three cans of degreaser, sorry, three litres of degreaser.",
          [("DEGR", -3, "shelf F")], p=True),
        c("fraction", LG, "Used half a litre of acetone.", [("ACE", -0.5, "bin 295")], p=True),
        c("fraction", LG, "We used two and a half metres of 1.5 mil flex.", [("CBL-FLX-1.5", -2.5, "shelf E")],
          p=True),
        c("fraction", LG, "Took 1.5 litres of hydraulic oil 68.", [("OIL-HYD-68", -1.5, "bin 188")]),
        c("fraction", LG, "Used three quarters of a litre of IPA.", [("IPA", -0.75, "bin 286")], p=True),
        c("fraction", LG, "Received 7 and a half metres of 6 mil armoured cable.", [("CBL-SWA-6", 7.5, "drawer 15")],
          p=True),
        c("fraction", LG, "0.25 litres of brake fluid used.", [("BRK", -0.25, "bin 239")], p=True),
        c("fraction", LG, "We used half a box of medium latex gloves.", asks=True, p=True),
        c("fraction", LG, "Used half a roll of duct tape.", asks=True, p=True),
        c("oh", LG, "Used 5 M6 flat washers from bin two nine four.", [("WSH-M6", -5, "bin 294")], p=True),
        c("oh", LG, "Received 30 M10 washers into bin two oh five.", [("WSH-M10", 30, "bin 205")], p=True),
        c("oh", LG, "Took 2 o-rings 26 mil out of bin one nine two.", [("OR-26", -2, "bin 192")], p=True),
        c("multi", LG, "Used 2 M10 nuts and 2 M10 washers.", [("NUT-M10", -2, "bin 61"), ("WSH-M10", -2, "bin 205")]),
        c("multi", LG, "Received 10 boxes of FFP2 masks and 5 boxes of ear plugs.",
          [("MASK-FFP2", 10, "shelf A"), ("EAR-PLG", 5, "shelf A")]),
        c("multi", LG, "Used 3 nyloc M8 nuts and 3 M8 spring washers.",
          [("NYL-M8", -3, "bin 6"), ("SWS-M8", -3, "bin 206")], p=True),
        c("multi", LG, "Took a tin of WD-40 and a roll of gaffer tape.",
          [("WD-40", -1, "shelf F"), ("TAPE-DUCT", -1, "shelf G")], p=True),
        c("multi", LG, "Used 4 M12 by 30 bolts and 4 M12 nuts.",
          [("HB-M12-30", -4, "bin 6"), ("NUT-M12", -4, "bin 62")]),
        c("place", LG, "Used 6 of the 6 mil drill bits from drawer 4.", [("DB-6", -6, "drawer 4")], p=True),
        c("place", LG, "We used 3 boxes of large nitrile gloves.", [("GLV-NIT-L", -3, "shelf A")], asks=True,
          answers=("shelf A",)),
        c("place", LG, "Used 8 metres of 2.5 flex.", [("CBL-FLX-2.5", -8, "shelf E")], asks=True,
          answers=("shelf E",), p=True),
        c("place", LG, "Received 20 of the 125 cutting discs.", [("CD-125", 20, "drawer 12")], asks=True,
          answers=("drawer twelve",), p=True),
        c("place", LG, "Took 5 M16 nyloc nuts out of bin 128.", [("NYL-M16", -5, "bin 128")]),
        c("place", LG, "Chucked out 2 worn grinding discs, the 230s, log them as used.",
          [("GD-230", -2, "drawer 14")], asks=True, answers=("drawer 14",), p=True),
        c("readback", LG, "Put another 10 in bin 30.", [("FUS-5A", 10, "bin 30")], answers=("yes",), p=True),
        c("readback", LG, "Took 2 out of drawer 31.", [("HEXK-SET", -2, "drawer 31")], answers=("yes",), p=True),
        c("readback", LG, "Used 3 M10 nuts from bin 61.", [("NUT-M10", -3, "bin 61")], answers=("yes",),
          confidence=0.35),
    ]


def variants() -> list[dict]:
    """A sized family said without its size (or seal, or length): the box asks, the answer decides."""
    return [
        c("variant", LG, "We used 4 M8 bolts.", [("HB-M8-40", -4, "bin 13")], asks=True, answers=("forty",)),
        c("variant", LG, "Used 2 boxes of nitrile gloves.", [("GLV-NIT-S", -2, "shelf A")], asks=True,
          answers=("small",)),
        c("variant", LG, "Received 100 cable ties.", [("CT-200", 100, "drawer 7")], asks=True,
          answers=("the 200 mil ones",)),
        c("variant", LG, "Used a couple of hose clamps.", [("HC-40", -2, "drawer 9")], asks=True,
          answers=("the big ones",), p=True),
        c("variant", LG, "Took 3 drill bits.", [("DB-8", -3, "drawer 4")], asks=True, answers=("eight mil",)),
        c("variant", LG, "Used 2 6305 bearings.", [("BRG-6305-ZZ", -2, "bin 299")], asks=True, answers=("ZZ",)),
        c("variant", LG, "We used 5 M10 hex bolts.", [("HB-M10-50", -5, "bin 20")], asks=True,
          answers=("fifty mil",)),
        c("variant", LG, "Got 6 pairs of leather gloves in.", [("GLV-LTH-XL", 6, "shelf B")], asks=True,
          answers=("extra large",), p=True),
        c("variant", LG, "We used a v-belt, SPA.", [("VB-SPA-1100", -1, "bin 283")], asks=True,
          answers=("eleven hundred",), p=True),
        c("variant", LG, "Used 4 copper elbows.", [("PF-CO-ELBO-15", -4, "bin 291")], asks=True,
          answers=("fifteen mil",)),
        c("variant", LG, "Used one spanner.", [("SPN-19", -1, "drawer 32")], asks=True,
          answers=("nineteen", "drawer 32")),
    ]


def no_writes() -> list[dict]:
    """What must write nothing: items not stocked, negations, hypotheticals, reported speech, already done."""
    return [
        c("unknown", LG, "We used 2 claw hammers.", p=True),
        c("unknown", LG, "Received 10 M8 by 35 bolts."),
        c("unknown", LG, "Used 2 M8 torx screws.", p=True),
        c("unknown", LG, "Used one 40 amp fuse."),
        c("unknown", LG, "Received a pallet of printer paper.", p=True),
        c("unknown", LG, "We used 2 bearings 6214.", p=True),
        c("negation", LG, "We didn't use any of the M8 nuts in the end.", p=True),
        c("negation", LG, "Don't log this, but I borrowed a 13 mil spanner.", p=True),
        c("negation", Q, "If we used 20 of the M10 by 50 bolts, how many would be left?", p=True),
        c("negation", LG, "Dave said he used five 5 amp fuses last night.", p=True),
        c("negation", LG, "We were going to use the M12 washers but we didn't.", p=True),
        c("negation", LG, "Never used any acetone today, nothing to log.", p=True),
        c("negation", LG, "Don't record it yet, we might need 6 drill bits 4 mil tomorrow.", p=True),
        c("negation", LG, "Should I log the 2 goggles I gave to the contractor?", p=True),
        c("negation", LG, "The supplier says they'll send 200 M8 nuts next week.", p=True),
        c("negation", LG, "Not using the 6 mil bits after all, put nothing down.", p=True),
        c("negation", Q, "If we receive 50 M10 nuts tomorrow, what will we have?", p=True),
        c("negation", LG, "The night shift reckons they went through 4 tins of WD-40.", p=True),
        c("negation", Q, "Pretend I used 5 M8 washers, what would the balance be?", p=True),
        c("negation", LG, "No need to enter the 3 cutting discs, they went back in the box.", p=True),
        c("already_done", LG, "The 4 M10 nuts, I already logged those.", p=True),
        c("already_done", LG, "Those 3 cutting discs 115 were logged already by Sam.", p=True),
        c("already_done", LG, "I've already put the 10 litres of coolant in the system.", p=True),
        c("already_done", LG, "Already booked out the two goggles earlier, ignore.", p=True),
        c("already_done", LG, "Somebody already entered the 12 P240 sheets.", p=True),
    ]


def ranges() -> list[dict]:
    """An amount that is not one number: the box asks how many."""
    return [
        c("range", LG, "Used three or four M10 nuts.", [("NUT-M10", -4, "bin 61")], asks=True, answers=("four",)),
        c("range", LG, "We took maybe 5 or 6 M8 washers.", [("WSH-M8", -6, "bin 204")], asks=True,
          answers=("six",), p=True),
        c("range", LG, "Used about 10 to 12 metres of 1.5 flex.", [("CBL-FLX-1.5", -12, "shelf E")], asks=True,
          answers=("12",), p=True),
        c("range", LG, "Took two or three safety goggles.", [("GOG-SAF", -2, "shelf B")], asks=True,
          answers=("two",)),
        c("range", LG, "Used a few of the 20 mil o-rings.", [("OR-20", -3, "drawer 20")], asks=True,
          answers=("three",), p=True),
    ]


def undos() -> list[dict]:
    """Undo in everyday words, after logs and a transfer of the same session (and with nothing to undo)."""
    return [
        c("undo", U, "Scratch that last one.", [("NUT-M10", -6, "bin 61"), ("NUT-M10", 6, "bin 61", "undo")],
          before=("Used 6 M10 nuts.",), p=True),
        c("undo", U, "Oops, take that back.",
          [("GLV-NIT-XXL", 20, "bin 72"), ("GLV-NIT-XXL", -20, "bin 72", "undo")],
          before=("Received 20 boxes of XXL nitrile gloves.",), p=True),
        c("undo", U, "No, that was wrong, undo it please.",
          [("HB-M16-40", -3, "bin 86"), ("HB-M16-40", 3, "bin 86", "undo")],
          before=("We used 3 M16 by 40 bolts.",), p=True),
        c("undo", U, "Undo the coolant.",
          [("COOL", -2, "bin 197"), ("NUT-M10", -4, "bin 61"), ("COOL", 2, "bin 197", "undo")],
          before=("Used 2 litres of coolant.", "Used 4 M10 nuts from bin 61.")),
        c("undo", U, "Undo the last two.",
          [("TAP-M6", -2, "bin 119"), ("DIE-M6", -1, "bin 17"), ("TAP-M6", 2, "bin 119", "undo"),
           ("DIE-M6", 1, "bin 17", "undo")],
          before=("Used 2 M6 taps.", "Used 1 M6 die.")),
        c("undo", U, "Undo that move.",
          [("HB-M8-30", -10, "bin 12", "transfer"), ("HB-M8-30", 10, "bin 47", "transfer"),
           ("HB-M8-30", 10, "bin 12", "undo"), ("HB-M8-30", -10, "bin 47", "undo")],
          before=("Move 10 M8 by 30 bolts from bin 12 to bin 47.",)),
        c("undo", U, "Undo my last entry."),
        c("undo", U, "Hang on, reverse that, wrong item.",
          [("HS-9.5", 15, "bin 109"), ("HS-9.5", -15, "bin 109", "undo")],
          before=("Received 15 metres of 9.5 heat shrink.",), p=True),
        c("undo", U, "Can you cancel that last entry?",
          [("GLV-CUT-M", -2, "bin 79"), ("GLV-CUT-M", 2, "bin 79", "undo")],
          before=("Booked out 2 pairs of cut-resistant gloves, medium.",), p=True),
        c("undo", U, "Delete the washers entry.",
          [("WSH-M10", -5, "bin 205"), ("WSH-M10", 5, "bin 205", "undo")],
          before=("We used 5 M10 washers.",), p=True),
    ]


def cancels() -> list[dict]:
    """Cancel alone, and in the middle of the box's question (nothing written)."""
    return [
        c("cancel", CN, "Ah, forget it, nothing.", p=True),
        c("cancel", CN, "Sorry, wrong button, carry on.", p=True),
        c("cancel", CN, "Cancel, cancel."),
        c("cancel", CN, "Uh, no, ignore me.", p=True),
        c("cancel", CN, "Stop, don't do anything.", p=True),
        c("cancel", LG, "We used some cable ties.", asks=True, answers=("actually never mind",), p=True),
        c("cancel", LG, "Received a load of nitrile gloves.", asks=True, answers=("forget it, I'll do it later",),
          p=True),
        c("cancel", LG, "Take 5 M8 bolts.", asks=True, answers=("scrap that",)),
    ]


def moves_and_counts() -> list[dict]:
    """Transfers (two rows, out and in) and stock counts (delta = counted − held)."""
    t = "transfer"
    return [
        c("template-like", TR, "Move 20 M8 by 30 bolts from bin 12 to bin 47.",
          [("HB-M8-30", -20, "bin 12", t), ("HB-M8-30", 20, "bin 47", t)]),
        c("paraphrase", TR, "Shift 5 boxes of large nitrile gloves from shelf A over to shelf B.",
          [("GLV-NIT-L", -5, "shelf A", t), ("GLV-NIT-L", 5, "shelf B", t)], p=True),
        c("paraphrase", TR, "I've put 10 of the 125 cutting discs from drawer 12 back on shelf D.",
          [("CD-125", -10, "drawer 12", t), ("CD-125", 10, "shelf D", t)], p=True),
        c("template-like", TR, "Transfer 50 long cable ties from drawer 7 to drawer 8.",
          [("CT-380", -50, "drawer 7", t), ("CT-380", 50, "drawer 8", t)]),
        c("paraphrase", TR, "Relocate 4 litres of gear oil from bin 121 to bin 9.",
          [("OIL-GEAR", -4, "bin 121", t), ("OIL-GEAR", 4, "bin 9", t)], p=True),
        c("paraphrase", TR, "Move all 10 of the 6 mil drill bits in bin 118 into drawer 4.",
          [("DB-6", -10, "bin 118", t), ("DB-6", 10, "drawer 4", t)], p=True),
        c("place", TR, "Move 5 M10 nuts to bin 62.", [("NUT-M10", -5, "bin 61", t), ("NUT-M10", 5, "bin 62", t)],
          asks=True, answers=("yes",)),
        c("paraphrase", TR, "Can you move 20 metres of 2.5 flex from bin 250 to shelf E, please?",
          [("CBL-FLX-2.5", -20, "bin 250", t), ("CBL-FLX-2.5", 20, "shelf E", t)], p=True),
        c("correction", TR, "Move 3, sorry, 4 M12 by 100 bolts from shelf C to bin 31.",
          [("HB-M12-100", -4, "shelf C", t), ("HB-M12-100", 4, "bin 31", t)], p=True),
        c("paraphrase", TR, "Please shift 10 nos M6 nuts from bin 41 to bin 222.",
          [("NUT-M6", -10, "bin 41", t), ("NUT-M6", 10, "bin 222", t)], p=True),
        c("template-like", SC, "Stock count: M10 nuts, 440.", [("NUT-M10", -10, "bin 61", "count")]),
        c("paraphrase", SC, "I counted 58 in bin 47, the M8 by 30 bolts.", [("HB-M8-30", -2, "bin 47", "count")],
          p=True),
        c("paraphrase", SC, "Did a stocktake on the goggles, there's 7.", [("GOG-SAF", -1, "shelf B", "count")],
          p=True),
        c("paraphrase", SC, "Physical count of 6204 2RS bearings is 15 nos.",
          [("BRG-6204", -1, "drawer 35", "count")], p=True),
        c("paraphrase", SC, "Counted the white paint, we've actually got 3 cans.",
          [("PNT-WHT", 3, "shelf C", "count")], p=True),
        c("paraphrase", SC, "Just counted the 20 mil o-rings, 50 exactly.", [("OR-20", 5, "drawer 20", "count")],
          p=True),
        c("paraphrase", SC, "Recount on medium nitrile gloves, 9 boxes.", [("GLV-NIT-M", -1, "shelf A", "count")],
          p=True),
        c("readback", SC, "Count for bin 60 is 790.", [("NUT-M8", -10, "bin 60", "count")], answers=("yes",),
          p=True),
        c("place", SC, "Shelf B large nitrile gloves, I count 6.", [("GLV-NIT-L", 2, "shelf B", "count")], p=True),
        c("paraphrase", SC, "Counted the cutting oil, 11 litres left.", [("OIL-CUT", -1, "shelf F", "count")],
          p=True),
    ]


def lists_and_free() -> list[dict]:
    """Low stock, place contents, and free questions that are no stock command (the LLM's, or none)."""
    return [
        c("paraphrase", LS, "What's running low?", p=True),
        c("paraphrase", LS, "Anything need reordering?", p=True),
        c("template-like", LS, "Which items are below the reorder level?"),
        c("paraphrase", LS, "What do we need to order this week?", p=True),
        c("paraphrase", LS, "What are we short of?", p=True),
        c("paraphrase", LS, "Kindly share the list of items below minimum level.", p=True),
        c("paraphrase", LS, "Is there anything we're about to run out of?", p=True),
        c("template-like", PC, "What's in drawer 35?", reply=("6204", "6205")),
        c("paraphrase", PC, "What have we got on shelf F?", p=True),
        c("paraphrase", PC, "What's kept in drawer 9?", reply=("hose clamp",), p=True),
        c("template-like", PC, "Tell me what's in bin 60.", reply=("M8",)),
        c("paraphrase", PC, "What lives in drawer 30?", reply=("spanner",), p=True),
        c("paraphrase", PC, "Can you list what's in drawer four?", reply=("drill bit",), p=True),
        c("oh", PC, "What's sitting in bin two oh four?", reply=("washer",), p=True),
        c("unknown", PC, "What's in cabinet 3?", p=True),
        c("other", OT, "What time does the store close on Friday?", p=True),
        c("other", OT, "How do I log a return on this thing?", p=True),
        c("other", OT, "Can you log stuff by voice or do I need the tablet?", p=True),
        c("other", OT, "What's the torque for an M10 bolt?", p=True),
        c("other", OT, "Tell me a joke.", p=True),
        c("other", OT, "Who was on shift this morning?", p=True),
        c("other", OT, "What's the difference between 2RS and ZZ bearings?", p=True),
        c("other", OT, "Did I already log the coolant?", p=True),
    ]


def cases() -> list[dict]:
    return numbered(queries() + logs() + variants() + no_writes() + ranges() + undos() + cancels()
                    + moves_and_counts() + lists_and_free(), prefix="h2-")


if __name__ == "__main__":
    raise SystemExit(write_or_check(cases(), OUT, __doc__.split("\n\n")[0]))
