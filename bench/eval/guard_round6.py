"""Round 6 of the "every word accounted for" sets (called by ``make_guard.py``): stock put into a
machine or a vehicle (``equipment``), a count of something else (``count_what``), a try, a test or a
doubt (``not_done``), an undo beside a write (``undo``), a count of something else than the item
(``not_count``) and Mandarin yes/no questions ending in 没有 (``question``) — each with the correct
neighbours that must still be logged in one turn.
"""
from __future__ import annotations

from guard_round5 import FUS, WSH, rec

ENGLISH_NEVER = {
    "equipment": ["we put 3 fuses in the compressor", "we put 3 fuses in the van", "we put 3 fuses into the fuse box",
                  "we put in 3 fuses", "we added 3 fuses to the machine", "we put 3 washers on the bolts",
                  "we added 3 drill bits to the kit", "we loaded 20 washers onto the truck"],
    "count_what": ["counted out 3 fuses", "we counted 3 fuses out", "we counted 3 broken fuses",
                   "we counted 3 fuses used", "I counted 2 damaged drill bits"],
    "not_done": ["we tried to use 3 fuses", "we attempted to use 3 fuses", "we failed to use 3 fuses",
                 "we forgot to use 3 fuses", "we tried to receive 20 washers", "test: we used 3 fuses",
                 "this is a test, we used 3 fuses", "we used 3 fuses in my dream", "we used 3 fuses in the simulation",
                 "we used 3 fuses in the demo", "we used 3 fuses, or did we"],
    "undo": ["undo that and log 3 fuses used", "cancel that and log 3 fuses used",
             "log 3 fuses used and undo the washers", "scratch that and log 5 washers received"],
    "not_count": ["we used fuses on 3 machines", "we used drill bits for 4 holes", "we used washers on 6 bolts"],
}
ZH_NEVER = {
    "equipment": ["放了三个保险丝到车上", "给机器加了三个保险丝", "加了三个保险丝", "往机器里装了三个保险丝"],
    "count_what": ["数了三个用掉的保险丝"],
    "not_done": ["试着用了三个保险丝", "用了三个保险丝，假的", "用了三个保险丝，等一下", "就当用了三个保险丝",
                 "测试一下，用了三个保险丝", "做梦用了三个保险丝", "模拟用了三个保险丝", "用了三个保险丝，不过是错的"],
    "not_count": ["在三台机器上用了保险丝"],
    "question": ["用了三个保险丝了没有", "用了三个保险丝没", "收到三个保险丝了没有"],
}


def small(c) -> None:
    """The session inventory: every class above, and the neighbours that still log."""
    for cls, texts in ENGLISH_NEVER.items():
        for t in texts:
            c.add(cls, t, "never")
    for t, r in [("we put 3 fuses in bin 30", [rec(FUS[0], 3, FUS[1])]),
                 ("add 30 fuses", [rec(FUS[0], 30, FUS[1])]), ("we received 3 fuses", [rec(FUS[0], 3, FUS[1])]),
                 ("we counted 3 fuses", [rec(FUS[0], -57, FUS[1], "count")]),
                 ("we used 3 fuses on the compressor", [rec(FUS[0], -3, FUS[1])]),
                 ("we used 3 fuses for the compressor", [rec(FUS[0], -3, FUS[1])]),
                 ("we used 6 washers", [rec(WSH[0], -6, WSH[1])]),
                 ("I forgot to log 3 fuses used", [rec(FUS[0], -3, FUS[1])]),
                 # fitted into a panel is a use: logged as one
                 ("I fitted 3 fuses into the panel", [rec(FUS[0], -3, FUS[1])])]:
        c.add("neighbour", t, "must", r)


def zh(c) -> None:
    """Mandarin: the same classes, and the neighbours that still log."""
    for cls, texts in ZH_NEVER.items():
        for t in texts:
            c.add(cls, t, "never")
    for t, r in [("收到三个保险丝", [rec(FUS[0], 3, FUS[1])]), ("补了三个保险丝", [rec(FUS[0], 3, FUS[1])]),
                 ("在三十号料箱放了三个保险丝", [rec(FUS[0], 3, FUS[1])]), ("用了三个保险丝", [rec(FUS[0], -3, FUS[1])])]:
        c.add("neighbour", t, "must", r)
