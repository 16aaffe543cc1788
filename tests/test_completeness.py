"""edge.stages.nlu.grammar.Grammar.completeness: whether a partial transcript is a whole command,
on the shared inventory (what semantic endpointing asks after a short silence)."""
from __future__ import annotations

import pytest

from edge.stages.nlu.grammar import COMPLETE, INCOMPLETE, UNCLEAR, Grammar
from edge.stock.store import Store
from tests.helpers import INVENTORY


@pytest.fixture(scope="module")
def grammar(tmp_path_factory):
    store = Store(tmp_path_factory.mktemp("g") / "edge.db")
    store.import_csv(INVENTORY)
    yield Grammar(store.items())
    store.close()


@pytest.mark.parametrize("text,verdict,sku", [
    ("How many M8 bolts are in bin twelve?", COMPLETE, "BLT-M8-30"),
    ("log twenty boxes of nitrile gloves received", COMPLETE, "GLV-NIT-L"),
    ("we used three drill bits from drawer four", COMPLETE, "DRL-BIT-6"),
    ("add one hundred and five washers to bin two oh two three", COMPLETE, "WSH-M8"),
    ("we used three drill bits from drawer four please", COMPLETE, "DRL-BIT-6"),
    ("Undo that.", COMPLETE, None),
    ("we took twelve boxes of", INCOMPLETE, None),
    ("we took twelve boxes", INCOMPLETE, None),
    ("how many cable ties and", INCOMPLETE, "TIE-CBL-200"),
    ("we used three drill bits from", INCOMPLETE, "DRL-BIT-6"),
    ("we used three drill bits from drawer", INCOMPLETE, "DRL-BIT-6"),
    ("add one hundred and five", INCOMPLETE, None),
    ("how many, um", INCOMPLETE, None),
    ("um", INCOMPLETE, None),
    ("we took twelve sprockets", INCOMPLETE, None),
    ("how many", INCOMPLETE, None),
    ("tell me a short joke about hammers", UNCLEAR, None),
    ("what is the capital of", INCOMPLETE, None),  # any sentence ending on "of" goes on
    ("what is the capital of France?", UNCLEAR, None),
    ("what time is it", UNCLEAR, None),
    ("never mind", COMPLETE, None),
    ("which items need reordering", COMPLETE, None),
    ("what's in bin twelve", COMPLETE, None),
    ("move 5 drill bits from drawer 4 to shelf B", COMPLETE, "DRL-BIT-6"),
    ("move 5 drill bits from drawer 4 to", INCOMPLETE, None),
    ("counted forty washers in bin three", COMPLETE, "WSH-M8"),
    ("we used 3 drill bits and 2 fuses", COMPLETE, None),
    ("we used 3 drill bits and", INCOMPLETE, None),
])
def test_completeness(grammar, text, verdict, sku):
    got, intent = grammar.completeness(text)
    assert got == verdict, (text, got, intent)
    if sku is not None:
        assert intent is not None and intent.sku == sku
