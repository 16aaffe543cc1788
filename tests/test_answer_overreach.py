"""Answers to the box's questions that say more than the answer: nothing is written from them (a
number other than the command's and the offered ones, two counts where one is asked, the unit the
question turned down), while plain answers still complete the command. Each turn goes as the voice
loop takes it: the grammar, the dialog on a real SQLite store, and a command of its own said as the
answer (:func:`edge.loop.speculation.is_new_command`) taken as a new command."""
from __future__ import annotations

import pytest

from edge.loop.speculation import is_new_command
from edge.stages import dialog
from edge.stages.nlu.understand import Understanding
from tests.helpers import csv_store

CSV = """sku,item,location,quantity,unit,aliases
FUS-5A,fuse 5 A,bin 30,60,pcs,fuses
FUS-5A,fuse 5 A,bin 31,10,pcs,fuses
GOG-SAF,safety goggles,shelf B,8,pcs,goggles
WSH-M8,washer M8,bin 3,200,pcs,washers
BLT-M8-30,hex bolt M8 x 30 mm,bin 12,240,pcs,M8 bolts
BLT-M8-40,hex bolt M8 x 40 mm,bin 13,120,pcs,M8 bolts
DRL-BIT-6,drill bit 6 mm,drawer 4,25,pcs,drill bits
ORG-10,o-ring 10 mm,bin 7,80,pcs,o-rings
"""


@pytest.fixture
def box(tmp_path):
    with csv_store(tmp_path, CSV) as store:
        yield store, Understanding(store.items(), None)


def turn(box, command: str, answer: str) -> tuple[str, dialog.Outcome, list]:
    """``command``, the box's question, then ``answer``: (the question, the last outcome, the records)."""
    store, u = box
    first = dialog.act(u.understand(command), store, command, "t1")
    assert first.pending is not None, first.text  # the box asked
    if is_new_command(answer, u):
        last = dialog.act(u.understand(answer), store, answer, "t2")
    else:
        last = dialog.follow_up(first.pending, answer, store, "t2")
    return first.text, last, [(r.sku, r.delta, r.location) for r in store.records() if r.turn_id in ("t1", "t2")]


@pytest.mark.parametrize("command,answer", [
    ("move 5 drill bits to bin 90", "yes move them to bin 91"),
    ("move 5 drill bits to bin 90", "yes but bin 91"),
    ("move 5 drill bits to bin 90", "yes move 3 drill bits to bin 90"),
    ("we used 30 goggles", "yes we used 3 goggles"),
    ("we used 30 goggles", "yes 3"),
    ("we used a couple of washers", "yes three"),
    ("we used 2 boxes of washers", "sixteen M8 bolts"),
    ("we used 2 boxes of washers", "16 16"),
    ("we used 2 boxes of washers", "twenty boxes"),
    ("we used 2 boxes of washers", "2 boxes of washers"),
    ("log 3 drill bits", "received five"),
    ("log 3 drill bits", "used five"),
    ("we used 5 fuses", "6 from bin 31"),
    ("we used 5 M8 bolts", "6 of the 30 mm"),
])
def test_an_answer_that_says_more_than_the_answer_writes_nothing(box, command, answer):
    question, last, records = turn(box, command, answer)
    assert records == [], (question, last.text)
    assert last.pending is None and "nothing was logged" in last.text, last.text


@pytest.mark.parametrize("command,answer,expected", [
    ("move 5 drill bits to bin 90", "yes", [("DRL-BIT-6", -5, "drawer 4"), ("DRL-BIT-6", 5, "bin 90")]),
    ("move 5 drill bits to bin 90", "yes move them", [("DRL-BIT-6", -5, "drawer 4"), ("DRL-BIT-6", 5, "bin 90")]),
    ("we used 30 goggles", "yes", [("GOG-SAF", -30, "shelf B")]),
    ("we used a couple of washers", "yes", [("WSH-M8", -2, "bin 3")]),
    ("we used 2 boxes of washers", "sixteen", [("WSH-M8", -16, "bin 3")]),
    ("we used 2 boxes of washers", "we used 16", [("WSH-M8", -16, "bin 3")]),
    ("we used 2 boxes of washers", "16 washers please", [("WSH-M8", -16, "bin 3")]),
    ("we used 2 boxes of washers", "sixteen pieces", [("WSH-M8", -16, "bin 3")]),
    ("we used 2 boxes of o-rings", "about 40 o-rings", [("ORG-10", -40, "bin 7")]),
    ("log 3 drill bits", "received", [("DRL-BIT-6", 3, "drawer 4")]),
    ("log 3 drill bits", "we used them", [("DRL-BIT-6", -3, "drawer 4")]),
    ("we used 5 fuses", "bin 31", [("FUS-5A", -5, "bin 31")]),
    ("we used 5 fuses", "the second one", [("FUS-5A", -5, "bin 31")]),
    ("we used 5 fuses", "take them from bin thirty one", [("FUS-5A", -5, "bin 31")]),
    ("we used 5 M8 bolts", "the 30 mm ones", [("BLT-M8-30", -5, "bin 12")]),
    ("we used 5 M8 bolts", "forty", [("BLT-M8-40", -5, "bin 13")]),
    ("we used 2 boxes of washers", "we used sixteen M8 bolts", None),  # a command of its own: asks its size
])
def test_a_plain_answer_still_completes_the_command(box, command, answer, expected):
    question, last, records = turn(box, command, answer)
    if expected is None:
        assert records == [] and last.pending is not None, last.text
    else:
        assert records == expected, (question, last.text)
