"""Every word accounted for, round 2: what else an utterance says beside the change
(edge/stages/nlu/leftovers.py, accounting.py, the guards) never becomes a wrong record, and the
trailing words, corrections and units that change nothing (or convert exactly) still log in one turn.

Each test runs the real understanding (templates; the real paraphrase matcher where that path took
the sentence) and the real dialog on a real SQLite store: the shared session inventory, the
2,065-item evaluation inventory, or the session inventory with its Chinese names (``language: zh``)."""
from __future__ import annotations

from pathlib import Path

import pytest
from helpers import INVENTORY
from nlu_helpers import ZH_ALIASES, sample_items, write_inventory

from edge.models.embed import Encoder
from edge.stages import dialog
from edge.stages.nlu.accounting import Utterance, taken_back, trailing
from edge.stages.nlu.leftovers import not_count, past_time, size_not_had, someone_else
from edge.stages.nlu.paraphrase import Paraphraser
from edge.stages.nlu.understand import Understanding
from edge.stock.store import Store

BIG = Path(__file__).resolve().parents[1] / "bench" / "eval" / "inventory.csv"


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "edge.db") as s:
        s.import_csv(INVENTORY)
        yield s


@pytest.fixture(scope="module")
def small_nlu(tmp_path_factory):
    with Store(tmp_path_factory.mktemp("small") / "edge.db") as s:
        s.import_csv(INVENTORY)
        return Understanding(s.items())


@pytest.fixture(scope="module")
def paraphrasing(tmp_path_factory):
    """With the real paraphrase matcher: the path that took "we should use 3 fuses" as a use."""
    with Store(tmp_path_factory.mktemp("para") / "edge.db") as s:
        s.import_csv(INVENTORY)
        items = s.items()
    return Understanding(items, paraphraser=Paraphraser(Encoder.load(), items))


@pytest.fixture(scope="module")
def big_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("big") / "edge.db"
    with Store(db) as s:
        s.import_csv(BIG)
        return db, Understanding(s.items())


@pytest.fixture
def zh_store(tmp_path):
    with Store(tmp_path / "zh.db") as s:
        s.import_csv(write_inventory(tmp_path / "zh.csv", sample_items(ZH_ALIASES)))
        yield s


@pytest.fixture(scope="module")
def zh_nlu():
    return Understanding(sample_items(ZH_ALIASES), language="zh")


def said(store, text, nlu, language="en"):
    """``text`` through the understanding and the dialog: ``(outcome, [(sku, delta)] written)``."""
    n0 = len(store.records())
    intent = nlu.understand(text)
    out = dialog.act(intent, store, text, "t1", language=language) if intent is not None else None
    return out, [(r.sku, r.delta) for r in store.records()[n0:]]


# -- Mandarin ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, starts", [
    ("用了六毫米钻头", "多少"),              # the 6 is the size: how many is asked
    ("用了八毫米垫圈", "多少"),
    ("用了三个保险丝和垫圈", "没有记录"),     # the second item has no count
    ("拿了两个钻头跟扎带", "没有记录"),
    ("用了三个保险丝，不是，是垫圈", "没有记录"),  # the item was corrected
    ("用了三个保险丝，不对，是钻头", "没有记录"),
    ("用了三盒保险丝", "没有记录"),           # boxes of an item counted in pcs: asked in its unit
    ("收到两箱垫圈", "没有记录"),
    ("可能用了三个保险丝", "没有记录"),       # a hedge
    ("好像用了两个垫圈", "没有记录"),
    ("用了第三个保险丝", "没有记录"),         # an ordinal
    ("拿了第二个钻头", "没有记录"),
    ("每天用三个保险丝", "没有记录"),         # how often
    ("我们经常用两个垫圈", "没有记录"),
    ("明天要用三个保险丝", "没有记录"),       # still to come
    ("昨天用了三个保险丝", "没有记录"),       # a past day
])
def test_mandarin_leftovers_write_nothing_and_say_so(zh_store, zh_nlu, text, starts):
    out, written = said(zh_store, text, zh_nlu, "zh")
    assert written == [] and out.text.startswith(starts), out.text


def test_mandarin_unit_question_names_the_unit_in_mandarin(zh_store, zh_nlu):
    out, _ = said(zh_store, "用了三盒保险丝", zh_nlu, "zh")
    assert "pcs" not in out.text and out.pending is not None, out.text


@pytest.mark.parametrize("text, expected", [
    ("用了三个保险丝", [("FUS-5A", -3)]),
    ("用了三个钻头和两个保险丝", [("DRL-BIT-6", -3), ("FUS-5A", -2)]),
    ("用了三个保险丝，不对，四个", [("FUS-5A", -4)]),
    ("收到两盒手套", [("GLV-NIT-L", 2)]),
])
def test_mandarin_correct_commands_still_log_in_one_turn(zh_store, zh_nlu, text, expected):
    out, written = said(zh_store, text, zh_nlu, "zh")
    assert written == expected and out.pending is None, out.text


# -- English: wrong records that are now refused or asked ----------------------------------------------

@pytest.mark.parametrize("text, kind_words", [
    ("we used fuses and 3 goggles", "fuses and 3 goggles"),
    ("we used washers and 2 drill bits", "washers and 2"),
    ("we used 3 10A fuses", "10a"),
    ("we used 3 10 amp fuses", "10 amp"),
    ("we used 4 12 mm drill bits", "12 mm"),
    ("we used 30 percent of the fuses", "30 percent"),
    ("we used 30% of the washers", "30%"),
    ("we used the 3rd fuse", "3rd"),
    ("we used the third fuse", "third"),
    ("we used fuse number 3", "fuse number 3"),
    ("we used fuse 3", "fuse 3"),
    ("we took washer #2", "#2"),
    ("I used 3 fuses and he used 2 washers", "he used"),
    ("we took 3 fuses, John took 2 washers", "John took"),
    ("log the 3 fuses that John took", "that john took"),
    ("we used 3 fuses last week", "last week"),
    ("we took 2 washers yesterday", "yesterday"),
    ("we received 4 fuses 2 days ago", "2 days ago"),
    ("we used 3 fuses because 2 blew", "because 2 blew"),
])
def test_a_word_beside_the_change_writes_nothing_and_is_said_back(store, small_nlu, text, kind_words):
    out, written = said(store, text, small_nlu)
    assert written == [] and out.text.startswith("Nothing logged") and kind_words in out.text, out.text


@pytest.mark.parametrize("text, words", [
    ("I think we used 3 fuses", "i think"), ("we may have used 3 fuses", "may have"),
    ("we used 3 fuses and the washers", "fuses and the washers"), ("we used 3 fuses per machine", "per machine"),
    ("a week ago we used 3 fuses", "a week ago"),
])
def test_hedges_pointed_items_rates_and_times_are_said_back(store, paraphrasing, text, words):
    out, written = said(store, text, paraphrasing)
    assert written == [] and out.text.startswith("Nothing logged") and words in out.text, out.text


@pytest.mark.parametrize("text", ["用了三个保险丝，不对，是两个垫圈", "用了百分之三十的保险丝", "用了三号保险丝"])
def test_mandarin_item_corrections_shares_and_labels_write_nothing(zh_store, zh_nlu, text):
    out, written = said(zh_store, text, zh_nlu, "zh")
    assert written == [] and out.text.startswith("没有记录"), out.text


@pytest.mark.parametrize("text", ["we used 3 fuses too many", "we used more than 3 fuses", "we used at least 2 washers",
                                  "we used up to 4 drill bits"])
def test_a_qualified_count_is_asked_never_written(store, small_nlu, text):
    out, written = said(store, text, small_nlu)
    assert written == [] and out.pending is not None, out.text


@pytest.mark.parametrize("text", ["we should use 3 fuses", "we ought to use 3 fuses", "we have to take 2 washers",
                                  "we're supposed to use 3 fuses", "we would use 3 fuses",
                                  "we hardly used 3 fuses", "we barely used 2 washers", "we must have used 3 fuses"])
def test_modal_and_hedged_uses_on_the_paraphrase_path_write_nothing(store, paraphrasing, text):
    out, written = said(store, text, paraphrasing)
    assert written == [], out.text


def test_a_past_time_is_said_with_what_to_do(store, small_nlu):
    out, _ = said(store, "we used 3 fuses yesterday", small_nlu)
    assert "wrong time" in out.text and "without the time" in out.text


# -- English: needless refusals that now log in one turn -------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("we used 5 fuses, actually 4", [("FUS-5A", -4)]),
    ("we used 5 fuses, well 4", [("FUS-5A", -4)]),
    ("we used 3 fuses, then 2 more fuses", [("FUS-5A", -5)]),
    ("we received 2 washers then 3 more washers", [("WSH-M8", 5)]),
    ("we used 3 fuses right", [("FUS-5A", -3)]),
    ("we used 3 fuses ok thanks", [("FUS-5A", -3)]),
    ("we used 2 washers please", [("WSH-M8", -2)]),
    ("we used 3 fuses because they blew", [("FUS-5A", -3)]),
    ("we used 3 fuses today", [("FUS-5A", -3)]),
])
def test_corrections_sums_and_trailing_words_log_in_one_turn(store, small_nlu, text, expected):
    out, written = said(store, text, small_nlu)
    assert written == expected and out.pending is None, out.text


def test_a_reason_set_aside_is_said_back(store, small_nlu):
    out, _ = said(store, "we used 3 fuses because they blew", small_nlu)
    assert "because they blew" in out.text and out.text.startswith("Logged 3 fuses used")


@pytest.mark.parametrize("text", ["we used 3 fuses scratch that", "we used 3 fuses, just kidding",
                                  "we received 2 washers, only joking", "we used 3 fuses never mind"])
def test_a_change_taken_back_as_it_is_said_writes_nothing(store, small_nlu, text):
    out, written = said(store, text, small_nlu)
    assert written == [] and "Nothing was logged" in out.text, out.text


@pytest.mark.parametrize("text, expected", [
    ("we used 3 x 8 mm drill bits", [("DB-8", -3)]),
    ("we used 2 x 5 mm drill bits", [("DB-5", -2)]),
    ("we used 3 fuses 10 amp", [("FUS-10A", -3)]),
    ("we used 3 10 amp fuses", [("FUS-10A", -3)]),
])
def test_sizes_the_item_has_log_in_one_turn(tmp_path, big_db, text, expected):
    db, nlu = big_db
    case = tmp_path / "case.db"
    case.write_bytes(db.read_bytes())
    with Store(case) as s:
        out, written = said(s, text, nlu)
    assert written == expected and out.pending is None, out.text


@pytest.mark.parametrize("text, heard, expected", [
    ("we used 200 cm of flex cable 1.5 mm", "200 cm is 2 m.", [("CBL-FLX-1.5", -2)]),
    ("we used 150 cm of flex cable 1 mm", "150 cm is 1.5 m.", [("CBL-FLX-1", -1.5)]),
    ("we used 2000 mm of flex cable 1.5 mm", "2000 mm is 2 m.", [("CBL-FLX-1.5", -2)]),
])
def test_an_exact_conversion_is_read_back_and_written_after_a_yes(tmp_path, big_db, text, heard, expected):
    db, nlu = big_db
    case = tmp_path / "case.db"
    case.write_bytes(db.read_bytes())
    with Store(case) as s:
        out, written = said(s, text, nlu)
        assert written == [] and out.pending is not None and out.text.startswith(heard), out.text
        dialog.follow_up(out.pending, "yes", s, "t1")
        assert [(r.sku, r.delta) for r in s.records()] == expected


def test_a_size_no_item_of_the_name_has_is_never_written(tmp_path, big_db):
    db, nlu = big_db
    case = tmp_path / "case.db"
    case.write_bytes(db.read_bytes())
    with Store(case) as s:
        _, written = said(s, "we used 3 7 amp fuses", nlu)
    assert written == []


# -- the pieces -------------------------------------------------------------------------------------------

def test_the_pieces_read_the_one_utterance():
    u = Utterance.of("we used the third fuse")
    assert not_count(u.raw, u.norm, u.tokens, {3.0}, ["fuse"]) == "third"
    assert not_count(u.raw, u.norm, u.tokens, {1.0}, ["fuse"]) is None  # "third" is not the count 1
    assert past_time(Utterance.of("we used 3 fuses this morning").norm) is None
    assert someone_else("we used the 3 fuses that we took", "we used the 3 fuses that we took") is None
    assert size_not_had(Utterance.of("3 fuses 10 amp").tokens, [("fuse", "10", "a")]) is None
    assert taken_back(Utterance.of("scratch that last one")) is None  # an undo, not a change taken back
    assert trailing(Utterance.of("we used 3 fuses right?")) is None  # a question doubts the change
