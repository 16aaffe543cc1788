"""Round 7 of the "every word accounted for" sets (called by ``make_guard.py``), English: an item set
aside beside a change (``aside``), a unit word after the item's name (``unit``), a word of a name that
heads none (``part_name``: "cables" of cable ties), a use taken from a place the store does not keep
(``place``), another's stock, a loan or a swap (``not_ours``), a test said first (``not_done``) and a
count corrected in the turn after its log (``amend``) — each with the correct neighbours that must
still be logged in one turn.

An ``amend`` case's records are all the session's: the log of its ``before`` turn, and when the
correction is made, that log's undo and the corrected log. One that must change nothing keeps the
``before`` turn's records alone (``may``: any other record is a wrong one).
"""
from __future__ import annotations

from guard_round5 import DRL, FUS, GLV, WSH, rec

NEVER = {
    "aside": ["forget the washers, we used 3 fuses", "never mind the washers, we used 3 fuses", "not the washers, 3 fuses",
              "forget about the washers, we used 3 fuses", "we used 3 fuses, forget the washers",
              "skip the washers, log 3 fuses used", "ignore the washers, we used 3 fuses", "no washers, we used 3 fuses",
              "forget the drill bits, we received 2 fuses", "ignore what I said about the washers, we used 3 fuses"],
    "unit": ["we used 3 fuse boxes", "we used 3 bolt cases", "we used 3 washer packs", "we used 3 cable tie bags",
             "we received 2 drill bit sets", "we took 2 goggle cases", "we received 2 washer boxes"],
    "part_name": ["we used 3 cables", "we used 3 drills", "we used 3 zips", "we used 3 safeties", "we used 3 nitriles",
                  "we received 3 copies"],
    "place": ["we used 3 fuses from the van", "we used 3 fuses from the truck", "we took 3 fuses out of the back of the van",
              "we used 3 fuses from the site", "we used 3 fuses from the customer", "3 fuses from the van",
              "we used 2 washers out of the car", "we grabbed 3 fuses off the truck", "we returned 3 fuses to site B"],
    "not_ours": ["we swapped 3 fuses for washers", "we used Bob's 3 fuses", "we borrowed 3 fuses",
                 "we lent 3 fuses to site B", "we traded 3 fuses", "we used his 3 fuses", "we took the customer's 3 fuses",
                 "we loaned 3 fuses to the night shift", "we exchanged 3 fuses", "we used 3 fuses from Bob's toolbox",
                 "we swapped 2 drill bits with the other team", "we used 3 fuses belonging to Bob"],
    "not_done": ["test: we used 2 washers", "just testing, we used 3 fuses", "testing testing we used 3 fuses",
                 "Test. We used 3 fuses.", "test, undo that"],
}
#: a count corrected the turn after its log: (the turn before, the correction, the corrected count)
AMENDS = [("we used 3 fuses", "actually it was 2", 2), ("we used 3 fuses", "no, 2", 2), ("we used 3 fuses", "make that 2", 2),
          ("we used 3 fuses", "make it four", 4), ("we used 3 fuses", "sorry, 2 not 3", 2), ("we used 3 fuses", "2, not 3", 2),
          ("we used 3 fuses", "I meant 2", 2), ("we used 3 fuses", "correction, 2", 2), ("we used 3 fuses", "it should be 2", 2),
          ("we used 3 fuses", "no, we used 2 fuses", 2), ("we used 3 fuses", "actually it was 2 fuses", 2),
          ("we used 3 fuses", "scratch that, it was 2", 2), ("we received 3 fuses", "actually it was 5", 5),
          ("we used 6 washers", "no wait, 5", 5)]
#: corrections that must change nothing: (the turns before, the correction)
NOT_AMENDED = [(["we used 3 fuses and 2 washers"], "no, 2"), (["we used 3 fuses"], "actually it was 2 washers"),
               (["we used 3 fuses"], "no, we used 2 washers"), (["we used 3 fuses"], "actually we received 2"),
               (["we used 3 fuses"], "make that 2 boxes"), (["we used 3 fuses"], "sorry, 2 not 4"),
               (["we used 3 fuses", "undo that"], "no, 2"), (["we used 3 fuses"], "make that 3")]


def _amended(before: str, q: int) -> list[dict]:
    """The session's records after ``before`` was logged and its count corrected to ``q``."""
    sku, place = (WSH if "washers" in before else FUS)
    said = int(before.split()[2])
    sign = 1 if "received" in before else -1
    return [rec(sku, sign * said, place), rec(sku, -sign * said, place, "undo"), rec(sku, sign * q, place)]


def small(c) -> None:
    """The session inventory: every class above, and the neighbours that still log."""
    for cls, texts in NEVER.items():
        for t in texts:
            c.add(cls, t, "never", asks=True if cls == "unit" else None)
    for before, t, q in AMENDS:
        c.add("amend", t, "must", _amended(before, q), before=[before])
    for before, t in NOT_AMENDED:
        recs = [rec(FUS[0], -3, FUS[1])] + ([rec(WSH[0], -2, WSH[1])] if "washers" in before[0] else []) \
            + ([rec(FUS[0], 3, FUS[1], "undo")] if "undo that" in before else [])
        c.add("amend", t, "may", recs, before=before)
    for t, before in [("actually it was 2", []), ("no, 2", ["we used 3 washers from the van"]),
                      ("make that 2", ["never mind"])]:
        c.add("amend", t, "never", before=before)
    for t, r in [("we used 3 fuses", [rec(FUS[0], -3, FUS[1])]), ("we used 3 glove boxes", [rec(GLV[0], -3, GLV[1])]),
                 ("we used 3 cable ties", [rec("TIE-CBL-200", -3, "drawer 7")]),
                 ("we used 3 zip ties", [rec("TIE-CBL-200", -3, "drawer 7")]),
                 ("we used 3 bits", [rec(DRL[0], -3, DRL[1])]), ("we used 3 fuses from bin 30", [rec(FUS[0], -3, FUS[1])]),
                 ("we used 3 fuses from stock", [rec(FUS[0], -3, FUS[1])]),
                 ("we received 3 fuses from the supplier", [rec(FUS[0], 3, FUS[1])]),
                 ("we swapped out 4 fuses", [rec(FUS[0], -4, FUS[1])]),
                 ("we swapped 3 fuses for new ones", [rec(FUS[0], -3, FUS[1])]),
                 ("we used our 3 fuses", [rec(FUS[0], -3, FUS[1])]),
                 ("actually we used 2 fuses", [rec(FUS[0], -2, FUS[1])])]:
        c.add("neighbour", t, "must", r)
    c.add("neighbour", "we used 2 more fuses", "must", [rec(FUS[0], -3, FUS[1]), rec(FUS[0], -2, FUS[1])],
          before=["we used 3 fuses"])
    c.add("neighbour", "make that 2", "must", [rec(GLV[0], -3, GLV[1]), rec(GLV[0], 3, GLV[1], "undo"),
                                               rec(GLV[0], -2, GLV[1])], before=["we used 3 boxes of gloves"])


def big(c) -> None:
    """The 2,065-item inventory: the same classes over M8 nuts and washers."""
    for cls, t in [("aside", "forget the m8 washers, we used 3 m8 nuts"), ("place", "we used 3 m8 nuts from the van"),
                   ("not_ours", "we borrowed 3 m8 nuts"), ("not_ours", "we used Bob's 3 m8 nuts"),
                   ("not_done", "test: we used 3 m8 nuts"), ("unit", "we used 3 m8 nut boxes")]:
        c.add(cls, t, "never", asks=True if cls == "unit" else None)
    c.add("amend", "actually it was 2", "must", [rec("NUT-M8", -3, "bin 60"), rec("NUT-M8", 3, "bin 60", "undo"),
                                                 rec("NUT-M8", -2, "bin 60")], before=["we used 3 m8 nuts"])
    c.add("amend", "no, 2", "may", [rec("NUT-M8", -3, "bin 60"), rec("WSH-M8", -2, "bin 204")],
          before=["we used 3 m8 nuts and 2 m8 washers"])
    c.add("neighbour", "we used 3 m8 nuts from bin 60", "must", [rec("NUT-M8", -3, "bin 60")])
