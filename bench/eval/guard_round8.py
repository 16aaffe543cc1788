"""Round 8 of the "every word accounted for" sets (called by ``make_guard.py``), English, found by a
hostile review with new sentences: what would have been said contracted ("we'd have used", "could've",
"we'd use": ``would_have``), a count qualified by a word the guards did not know ("like 3", "a good 3",
"3 tops": ``qualified``), an undo read from a near exemplar with no undo word ("log it" after a log:
``undo_unsaid``), "got" read as stock in when its words take stock out ("got rid of", "got 3 fuses out
of bin 30": ``got_out``), a decimal said without its leading zero (".5 litres" read as 5: ``decimal``),
stock on its way ("20 fuses incoming": ``incoming``), a move read as a use ("move 5 fuses out of bin
30": ``moved``), what only seems so ("looks like we used …":
``hedge``), a question tag ("we used 3 fuses, did we": ``tag``) and a word that heads one item's name
and other items' aliases ("tape": duct tape, blue insulating tape, PTFE tape: ``alias_head``) — each
with the correct neighbours that must still be logged in one turn.
"""
from __future__ import annotations

from guard_round5 import FUS, WSH, rec

NEVER = {
    "would_have": ["we'd have used 3 fuses", "we'd've used 3 fuses", "we would've used 3 fuses", "we could've used 3 fuses",
                   "I'd have taken 3 fuses", "we'd use 3 fuses", "we'd take 3 fuses", "we might've used 3 fuses",
                   "we'd have received 20 fuses by now", "they'd have used 2 washers"],
    "qualified": ["we used like 3 fuses", "we used, like, 3 fuses", "we used like three fuses", "we used a good 3 fuses",
                  "we used easily 3 fuses", "we used a solid 3 fuses", "we used a max of 3 fuses",
                  "we used 3 fuses at a guess", "we used 3 fuses tops", "we used a good dozen washers",
                  "we received like 20 fuses", "we used 3 fuses and a bit", "we used a dozen or so washers"],
    "got_out": ["we got out 3 fuses", "I got 3 fuses out of bin 30", "we got 3 fuses out of stock", "we got rid of 2 washers",
                "we got shot of 3 fuses", "I got 3 fuses from the drawer", "got 3 fuses from bin 30",
                "we got 3 fuses off the shelf", "I got 3 fuses out", "we got 3 drill bits out of drawer 4",
                "we got 3 fuses from the stockroom"],
    "decimal": ["we used .5 fuses", "we used .25 fuses"],
    "incoming": ["20 fuses incoming", "incoming 20 fuses", "20 fuses to be received", "20 fuses for delivery",
                 "20 fuses in transit", "20 fuses pending", "20 fuses still to come"],
    "hedge": ["looks like we used 3 fuses", "seems like we used 3 fuses", "seems we used 3 fuses",
              "it looks like 3 fuses were used", "I'm fairly sure we used 3 fuses", "unless I'm wrong we used 3 fuses",
              "as far as I know we used 3 fuses"],
    "moved": ["move 5 fuses out of bin 30", "moved 5 fuses out of bin 30", "shifted 5 fuses out of bin 30",
              "transfer 5 fuses out of bin 30", "moved 5 washers out of bin 2023", "we moved 5 fuses"],
    "tag": ["we used 3 fuses did we", "we used 3 fuses, did we", "we used 3 fuses is that right", "we used 3 fuses have we",
            "we used 3 fuses am I right"],
}
#: said the turn after a log: no undo word, so nothing may be undone
UNDO_UNSAID = ["log it", "log them", "just log it", "log it please", "log it again", "the last one"]
#: said the turn after a log: an undo, said another way (the paraphrase path still takes them)
UNDO_SAID = ["take that back", "that last entry was a mistake", "remove the record I just made", "scratch the last one"]
NEIGHBOURS = [("we'd used 3 fuses", [rec(FUS[0], -3, FUS[1])]), ("I'd log 3 fuses used", [rec(FUS[0], -3, FUS[1])]),
              ("we'd received 20 fuses", [rec(FUS[0], 20, FUS[1])]),
              ("we used only 3 fuses", [rec(FUS[0], -3, FUS[1])]), ("we used exactly 3 fuses", [rec(FUS[0], -3, FUS[1])]),
              ("we used a dozen washers", [rec(WSH[0], -12, WSH[1])]),
              ("we got 3 fuses", [rec(FUS[0], 3, FUS[1])]), ("we got 3 fuses from the supplier", [rec(FUS[0], 3, FUS[1])]),
              ("we got 3 fuses delivered", [rec(FUS[0], 3, FUS[1])]),
              ("we got through 3 fuses", [rec(FUS[0], -3, FUS[1])]),
              ("I grabbed 3 fuses from bin 30", [rec(FUS[0], -3, FUS[1])]),
              ("20 fuses came in", [rec(FUS[0], 20, FUS[1])]), ("20 fuses arrived", [rec(FUS[0], 20, FUS[1])]),
              ("20 fuses were delivered", [rec(FUS[0], 20, FUS[1])]),
              ("honestly we used 3 fuses", [rec(FUS[0], -3, FUS[1])]), ("basically we used 3 fuses", [rec(FUS[0], -3, FUS[1])]),
              ("we used 3 fuses, that is it", [rec(FUS[0], -3, FUS[1])]),
              ("we used 3 fuses that's it", [rec(FUS[0], -3, FUS[1])]),
              ("the night shift used 3 fuses", [rec(FUS[0], -3, FUS[1])]),
              ("we used two dozen washers", [rec(WSH[0], -24, WSH[1])])]
DEGR, CUT = ("DEGR", "shelf F"), ("OIL-CUT", "shelf F")


def small(c) -> None:
    """The session inventory: every class above, and the neighbours that still log."""
    for cls, texts in NEVER.items():
        for t in texts:
            c.add(cls, t, "never")
    c.add("decimal", "we received .5 boxes of gloves", "never", asks=True)
    for t in UNDO_UNSAID:
        c.add("undo_unsaid", t, "may", [rec(FUS[0], -3, FUS[1])], before=["we used 3 fuses"])
    for t in UNDO_SAID:
        c.add("undo_unsaid", t, "must", [rec(FUS[0], -3, FUS[1]), rec(FUS[0], 3, FUS[1], "undo")],
              before=["we used 3 fuses"])
    for t, r in NEIGHBOURS:
        c.add("neighbour", t, "must", r)


def big(c) -> None:
    """The 2,065-item inventory: decimals in litres, and the heads several items' names and aliases share."""
    for t, r in [("we used .5 litres of degreaser", rec(DEGR[0], -0.5, DEGR[1])),
                 ("we used .5 l of degreaser", rec(DEGR[0], -0.5, DEGR[1])),
                 ("we used point 5 litres of degreaser", rec(DEGR[0], -0.5, DEGR[1])),
                 ("we used .75 litres of cutting oil", rec(CUT[0], -0.75, CUT[1])),
                 ("we received ,5 litres of degreaser", rec(DEGR[0], 0.5, DEGR[1]))]:
        c.add("decimal", t, "must", [r])
    for t in ["we used 2 and a bit litres of degreaser", "we used 2 litres odd of degreaser",
              "we used 2 point something litres of degreaser"]:
        c.add("qualified", t, "never")
    for t, r in [("we used 0.5 litres of degreaser", rec(DEGR[0], -0.5, DEGR[1])),
                 ("we used a litre and a half of degreaser", rec(DEGR[0], -1.5, DEGR[1])),
                 ("we used 3 litres and a half of degreaser", rec(DEGR[0], -3.5, DEGR[1])),
                 ("we used 1.5 litres of degreaser", rec(DEGR[0], -1.5, DEGR[1])),
                 ("we used 1 point 5 litres of degreaser", rec(DEGR[0], -1.5, DEGR[1])),
                 ("we used 3 rolls of blue tape", rec("TAPE-ISO-RU", -3, "drawer 38")),
                 ("we used 3 rolls of duct tape", rec("TAPE-DUCT", -3, "shelf G")),
                 ("we used 3 rolls of gaffer tape", rec("TAPE-DUCT", -3, "shelf G")),
                 ("we used 3 rolls of PTFE tape", rec("PTFE-ZH", -3, "drawer 39")),
                 ("we used 3 rolls of insulating tape", rec("TAPE-ISO-RU", -3, "drawer 38")),
                 ("we used 2 litres of hydraulic fluid", rec("OIL-HYD-46", -2, "shelf F")),
                 ("we used 2 litres of brake fluid", rec("BRK", -2, "bin 239"))]:
        c.add("neighbour", t, "must", [r])
    for t in ["we used 3 rolls of tape", "we used a roll of tape", "received 5 rolls of tape", "we used 2 litres of fluid",
              "we used 3 tapes"]:
        c.add("alias_head", t, "never", asks=True)
    for cls, t in [("would_have", "we'd have used 3 m8 nuts"), ("qualified", "we used like 3 m8 nuts"),
                   ("got_out", "we got rid of 3 m8 nuts"), ("incoming", "200 m8 nuts incoming"),
                   ("hedge", "looks like we used 3 m8 nuts"), ("tag", "we used 3 m8 nuts, did we")]:
        c.add(cls, t, "never")
