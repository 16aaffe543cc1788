"""The template path (edge.stages.nlu.grammar: templates + resolvers) against the real session inventory."""
import csv
from dataclasses import dataclass
from pathlib import Path

import pytest

from edge.stages import dialog
from edge.stages.nlu.grammar import Grammar
from edge.stages.nlu.lexicon import normalize_location
from edge.stages.nlu.understand import Understanding
from tests.helpers import csv_store

INVENTORY = Path(__file__).resolve().parents[1].parent / "shared/audio/sessions/inventory.csv"


@dataclass(frozen=True)
class Row:
    sku: str
    item: str
    location: str
    quantity: int
    unit: str
    aliases: tuple[str, ...]


@pytest.fixture(scope="module")
def grammar() -> Grammar:
    with INVENTORY.open(newline="") as f:
        rows = [Row(r["sku"], r["item"], r["location"], int(r["quantity"]), r["unit"],
                    tuple(a.strip() for a in r["aliases"].split(";") if a.strip())) for r in csv.DictReader(f)]
    return Grammar(rows)


# text → (sku, location)
QUERIES = [
    ("how many M8 bolts are in bin twelve", "BLT-M8-30", "bin 12"),
    ("How many M8 bolts are in bin 12?", "BLT-M8-30", "bin 12"),
    ("how many m eight bolts are in bin twelve", "BLT-M8-30", "bin 12"),
    ("How many M-8 bolts are in bin 12?", "BLT-M8-30", "bin 12"),
    ("do we have any safety goggles on shelf B", "GOG-SAF", "shelf B"),
    ("Do we have any safety goggles on shelf B?", "GOG-SAF", "shelf B"),
    ("do we have any safety goggles on shelf bee", "GOG-SAF", "shelf B"),
    ("how many cable ties do we have", "TIE-CBL-200", None),
    ("what's the stock of fuses", "FUS-5A", None),
    ("What's the stock of fuses?", "FUS-5A", None),
    ("any fuses left", "FUS-5A", None),
    ("how many bolts are in the bin are there", "BLT-M8-30", None),
    ("how much copy paper do we have", "PPR-A4", None),
    ("how many washerz are there", "WSH-M8", None),      # fuzzy
    ("is there any paint on shelf see", "PNT-WHT", "shelf C"),
]


@pytest.mark.parametrize("text, sku, location", QUERIES)
def test_query_stock(grammar, text, sku, location):
    intent = grammar.parse(text)
    assert intent is not None
    assert (intent.intent, intent.sku, intent.location, intent.source, intent.text) == (
        "query_stock", sku, location, "template", text)


# text → (sku, quantity, direction, location)
LOGS = [
    ("log twenty boxes of nitrile gloves received", "GLV-NIT-L", 20, "in", None),
    ("Log 20 boxes of nitrile gloves received.", "GLV-NIT-L", 20, "in", None),
    ("log twenty boxes of nitrile gloves", "GLV-NIT-L", 20, None, None),  # no direction said: asked
    ("we used three drill bits from drawer four", "DRL-BIT-6", 3, "out", "drawer 4"),
    ("We used 3 drill bits from drawer 4.", "DRL-BIT-6", 3, "out", "drawer 4"),
    ("add one hundred and five washers to bin two oh two three", "WSH-M8", 105, "in", "bin 2023"),
    ("Add 105 washers to bin 2023.", "WSH-M8", 105, "in", "bin 2023"),
    ("Add 105 washers to bin 2,023.", "WSH-M8", 105, "in", "bin 2023"),
    ("took 2 fuses", "FUS-5A", 2, "out", None),
    ("took a fuse", "FUS-5A", 1, "out", None),
    ("we received 5 cans of white paint", "PNT-WHT", 5, "in", None),
    ("remove four spanners from shelf E", "SPN-10", 4, "out", "shelf E"),
    ("remove two ten millimetre spanners", "SPN-10", 2, "out", None),
    ("put 10 zip ties in drawer 7", "TIE-CBL-200", 10, "in", "drawer 7"),
    ("put half a dozen fuses in bin thirty", "FUS-5A", 6, "in", "bin 30"),
    ("log a couple of washers", "WSH-M8", 2, None, None),  # no direction said: asked
    ("gave out six pairs of safety glasses", "GOG-SAF", 6, "out", None),
    ("issued four pairs of gloves", "GLV-NIT-L", 4, "out", None),
    ("we used two drill bids", "DRL-BIT-6", 2, "out", None),          # fuzzy
    ("restocked bin twelve with fifty", "BLT-M8-30", 50, "in", "bin 12"),  # item from location
    ("add two dozen m8 screws", "BLT-M8-30", 24, "in", None),
]


@pytest.mark.parametrize("text, location", [("what's on shelf b", "shelf B"), ("what's in drawer seven", "drawer 7")])
def test_place_contents(grammar, text, location):
    """A place named without an item asks what is stored there (it was the place's only item)."""
    intent = grammar.parse(text)
    assert (intent.intent, intent.sku, intent.location, intent.source) == ("place_contents", None, location, "template")


@pytest.mark.parametrize("text, sku, quantity, direction, location", LOGS)
def test_log_record(grammar, text, sku, quantity, direction, location):
    intent = grammar.parse(text)
    assert intent is not None
    assert (intent.intent, intent.source) == ("log_record", "template")
    assert intent.slots() == {"sku": sku, "quantity": quantity, "direction": direction, "location": location}


@pytest.mark.parametrize("text", ["undo that", "Undo that.", "undo", "undo the last one", "cancel that",
                                  "scratch that", "Scratch that!", "undo the last entry"])
def test_undo(grammar, text):
    intent = grammar.parse(text)
    assert intent is not None and intent.intent == "undo" and intent.source == "template"


@pytest.mark.parametrize("text", [
    "tell me a short joke about hammers", "Tell me a short joke about hammers.", "the", "", "   ", "?",
    "thank you", "what's the time", "what time is it", "how many legs does a spider have",
    "how do I use the drill", "put the kettle on", "record a voice memo",
    "we used drill bits",            # no quantity
    "what's on shelf Q",             # nothing stocked there
    "undo the washers",
])
def test_not_a_command(grammar, text):
    assert grammar.parse(text) is None


@pytest.mark.parametrize("text, expected", [
    ("bin twelve", "bin 12"), ("Bin 12", "bin 12"), ("shelf bee", "shelf B"), ("shelf B", "shelf B"),
    ("drawer four", "drawer 4"), ("bin two oh two three", "bin 2023"), ("shelf sea", "shelf C"),
    ("shelf", None), ("twelve", None),
])
def test_normalize_location(text, expected):
    assert normalize_location(text) == expected


def test_a_couple_logged_without_a_direction_asks_it_then_reads_the_two_back(tmp_path):
    """"log a couple of washers" (in LOGS: 2, no direction): used or received is asked, then the 2
    is read back, and only a yes writes it."""
    with csv_store(tmp_path, INVENTORY.read_text(encoding="utf-8")) as store:
        text = "log a couple of washers"
        out = dialog.act(Understanding(store.items()).understand(text), store, text, "t1")
        assert out.pending.kind == "direction" and store.records() == []
        out = dialog.follow_up(out.pending, "used", store, "t1")
        assert out.text == "Log 2 washers used? Say yes or no." and store.records() == []
        done = dialog.follow_up(out.pending, "yes", store, "t1")
        assert done.record is not None and [(r.sku, r.delta) for r in store.records()] == [("WSH-M8", -2)]
