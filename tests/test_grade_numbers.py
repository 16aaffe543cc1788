"""A grade written without a unit ("hydraulic oil 46", "bearing 6204 ZZ") is a variant: the name
without it is a family the box asks about, and a bare number answers the question. Real SQLite,
the real template path and dialog."""
from __future__ import annotations

import pytest

from edge.stages import dialog
from edge.stages.nlu.grammar import Grammar
from tests.helpers import csv_store

CSV = """sku,item,location,quantity,unit,aliases
OIL-HYD-32,hydraulic oil 32,bin 157,15,l,
OIL-HYD-46,hydraulic oil 46,shelf F,60,l,hydraulic fluid
OIL-HYD-68,hydraulic oil 68,bin 188,17,l,
OIL-GEAR,gear oil,bin 3,9,l,
OIL-CUT,cutting oil,bin 4,5,l,
"""


@pytest.fixture
def room(tmp_path):
    with csv_store(tmp_path, CSV) as s:
        yield s, Grammar(s.items())


def test_the_name_without_its_grade_is_the_family(room):
    _, g = room
    i = g.parse("we used 2 litres of hydraulic oil")
    assert (i.intent, i.sku, set(i.candidates)) == ("log_record", None, {"OIL-HYD-32", "OIL-HYD-46", "OIL-HYD-68"})
    assert g.parse("how much gear oil do we have").sku == "OIL-GEAR"  # a name without a grade is itself
    assert g.parse("we used 2 litres of hydraulic oil 68").sku == "OIL-HYD-68"


@pytest.mark.parametrize("answer, sku", [("forty six", "OIL-HYD-46"), ("46 please", "OIL-HYD-46"),
                                         ("sixty eight", "OIL-HYD-68"), ("the first one", "OIL-HYD-32")])
def test_a_bare_number_answers_which_grade(room, answer, sku):
    store, g = room
    asked = dialog.act(g.parse("we used 2 litres of hydraulic oil"), store, "we used 2 litres of hydraulic oil", "t1")
    assert asked.pending is not None and not store.records()
    done = dialog.follow_up(asked.pending, answer, store, "t1")
    (rec,) = store.records()
    assert (rec.sku, rec.delta) == (sku, -2), done.text


@pytest.mark.parametrize("answer", ["thirty", "forty six or sixty eight"])
def test_a_number_no_grade_has_or_two_numbers_write_nothing(room, answer):
    store, g = room
    asked = dialog.act(g.parse("we used 2 litres of hydraulic oil"), store, "we used 2 litres of hydraulic oil", "t1")
    dialog.follow_up(asked.pending, answer, store, "t1")
    assert store.records() == []
