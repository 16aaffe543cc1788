"""Every word accounted for: a command writes only when its parse explains every word that would
change the record (edge/stages/nlu/accounting.py), and the reply is built from what the store wrote.

Each test runs the real understanding (templates; the paraphrase matcher where that path is the
class) and the real dialog on a real SQLite store with the shared session inventory."""
from __future__ import annotations

import pytest
from helpers import INVENTORY
from nlu_helpers import ZH_ALIASES, sample_items

from edge.models.embed import Encoder
from edge.stages import dialog
from edge.stages.nlu.accounting import Utterance, set_aside, unexplained
from edge.stages.nlu.paraphrase import Paraphraser
from edge.stages.nlu.types import Intent
from edge.stages.nlu.understand import Understanding
from edge.stock.store import Store


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "edge.db") as s:
        s.import_csv(INVENTORY)
        yield s


def said(store, text, nlu=None, turn="t1"):
    """``text`` through the understanding and the dialog: ``(reply, [(sku, delta)] written)``."""
    nlu = nlu or Understanding(store.items())
    n0 = len(store.records())
    out = dialog.act(nlu.understand(text), store, text, turn)
    return out, [(r.sku, r.delta) for r in store.records()[n0:]]


@pytest.fixture(scope="module")
def paraphrasing(tmp_path_factory):
    """An understanding with the real paraphrase matcher (the path that took "why did we use 3 fuses")."""
    with Store(tmp_path_factory.mktemp("para") / "edge.db") as s:
        s.import_csv(INVENTORY)
        items = s.items()
    return Understanding(items, paraphraser=Paraphraser(Encoder.load(), items))


# -- 1. a question about a change is never the change --------------------------------------------

@pytest.mark.parametrize("text", ["why did we use 3 fuses", "who used 3 fuses", "how come we used 3 fuses",
                                  "who took 2 washers out"])
def test_a_question_about_a_use_writes_nothing_on_the_paraphrase_path(store, paraphrasing, text):
    out, written = said(store, text, paraphrasing)
    # set aside as a question, or answered from the records (none yet in this store); never a write
    assert written == [] and out.text.startswith(("Nothing logged: that sounded like a question",
                                                  "Nothing has been recorded for", "I can't answer that one from the records")), out.text


@pytest.mark.parametrize("text", ["how come 3 fuses were taken", "how come 2 washers were used"])
def test_a_question_about_a_change_writes_nothing_on_the_template_path(store, text):
    out, written = said(store, text)
    assert written == [] and "(\u201chow come\u201d)" in out.text, out.text


def test_a_command_after_a_question_and_a_remark_logs_once_and_says_what_was_set_aside(store, paraphrasing):
    out, written = said(store, "why did we use 3 fuses? we needed them. log 3 fuses used", paraphrasing)
    assert written == [("FUS-5A", -3)]
    assert out.text.startswith("Logged 3 fuses used.") and "we needed them" in out.text


def test_a_question_after_a_command_doubts_it():
    assert set_aside(Utterance.of("we used 3 fuses. did we?")) is None


# -- 2. each part its own direction ----------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("we used 3 bolts and received 2 fuses", [("BLT-M8-30", -3), ("FUS-5A", 2)]),
    ("we received 5 washers and used 2 fuses", [("WSH-M8", 5), ("FUS-5A", -2)]),
    ("we took 3 fuses and then we received 4 washers", [("FUS-5A", -3), ("WSH-M8", 4)]),
])
def test_a_second_direction_is_the_second_parts(store, text, expected):
    out, written = said(store, text)
    assert written == expected, out.text
    assert "received" in out.text and "used" in out.text


@pytest.mark.parametrize("text", ["we used 3 fuses and 2 washers came back", "we used and received 3 fuses"])
def test_a_direction_no_part_carries_writes_nothing(store, text):
    out, written = said(store, text)
    assert written == [] and out.text.startswith("Nothing logged"), out.text


# -- 3. a size is no count -------------------------------------------------------------------------

def test_a_size_the_model_took_as_the_count_is_asked_never_written(tmp_path):
    """The model path: "we used 6 mm drill bits" came back as 6 drill bits used and was written at once."""
    from helpers import csv_store
    from nlu_helpers import ReplayEngine

    csv = ("sku,item,location,quantity,unit,aliases\nDB-6,drill bit 6 mm,drawer 4,25,pcs,HSS drill bit\n"
           "DB-8,drill bit 8 mm,drawer 5,18,pcs,HSS drill bit\n")
    model = '{"intent": "log_record", "sku": "DB-6", "quantity": 6, "direction": "out", "location": null, "answer": null}'
    with csv_store(tmp_path, csv) as s:
        nlu = Understanding(s.items(), ReplayEngine([model]))
        intent = nlu.understand("we used 6 mm drill bits")
        assert intent.source == "llm" and "quantity" in intent.extra["llm_guessed"]
        out = dialog.act(intent, s, "we used 6 mm drill bits", "t1")
        assert [r for r in s.records() if r.turn_id == "t1"] == []
        assert out.pending is not None and out.pending.kind == "quantity", out.text


def test_size_not_count_drops_the_count_of_any_path():
    from edge.stages.nlu.understand import accounted

    intent = Intent("log_record", sku="DB-6", quantity=6, direction="out", source="llm")
    got = accounted(intent, Utterance.of("we used 6 mm drill bits"))
    assert got.quantity is None and got.extra["size_not_count"]


# -- 4. how often is no count ----------------------------------------------------------------------

@pytest.mark.parametrize("text", ["we used fuses three times", "we took fuses 3 times", "we used 3 fuses a day"])
def test_a_frequency_is_no_count(store, text):
    out, written = said(store, text)
    assert written == [], out.text
    assert "how often" in out.text or not out.text.startswith("Logged"), out.text


# -- 5. a count in another unit is asked, never converted -----------------------------------------

@pytest.mark.parametrize("text, unit", [("we used 3 sheets of paper", "pallets"), ("we received 1 litre of paint", "cans"),
                                        ("we received 2 kilos of washers", "pcs"), ("we used 50 ml of paint", "cans")])
def test_a_count_in_a_unit_the_item_is_not_counted_in_is_asked(store, text, unit):
    out, written = said(store, text)
    assert written == [] and out.pending is not None and out.pending.kind == "quantity"
    assert out.text.endswith(f"how many {unit}?"), out.text


def test_a_unit_in_one_part_of_several_is_asked_before_anything_is_written(store):
    out, written = said(store, "we used 3 sheets of paper and 2 fuses")
    assert written == [] and out.pending is not None and "pallets" in out.text


def test_the_items_own_unit_and_name_words_are_no_other_unit(store):
    _, written = said(store, "we received 2 boxes of gloves")
    assert written == [("GLV-NIT-L", 2)]


# -- 6. a count that may belong to another item -----------------------------------------------------

@pytest.mark.parametrize("text", ["we used 3 nuts and washers 8 mm", "we used 3 fuses and M8 bolts",
                                  "we took 5 bolts and nuts"])
def test_one_count_before_two_items_writes_nothing(store, text):
    out, written = said(store, text)
    assert written == [] and "with one count" in out.text, out.text


# -- 7. one item said twice: one summed record, said so ---------------------------------------------

def test_one_item_said_twice_is_one_summed_record_said_as_such(store):
    out, written = said(store, "we used 2 drill bits and 2 more drill bits")
    assert written == [("DRL-BIT-6", -4)]
    assert out.text == "Logged 4 drill bits used (2 and 2)."


def test_one_item_said_twice_beside_another_is_summed_and_the_other_kept(store):
    out, written = said(store, "we used 2 fuses and 3 fuses and 1 washer")
    assert sorted(written) == [("FUS-5A", -5), ("WSH-M8", -1)]
    assert out.text == "Logged 5 fuses used (2 and 3) and 1 washer used."


def test_one_item_used_and_received_in_one_sentence_writes_nothing_and_raises_nothing(store):
    out, written = said(store, "we used 3 fuses and received 2 fuses")
    assert written == [] and "both used and received" in out.text


def test_the_parts_reply_says_each_record_once():
    from edge.stages import reply
    from edge.stock.store import Item

    class R:
        id, sku, delta = 7, "FUS-5A", -2

    item = Item("FUS-5A", "fuse", "bin 30", 58, "pcs", ())
    assert reply.parts_reply([(R, item), (R, item)]) == "Logged 2 fuses used."


# -- 8. a negation or correction across a compound sentence -----------------------------------------

@pytest.mark.parametrize("text", ["we used 3 drill bits. also we did not use the fuses",
                                  "we used 3 drill bits, we didn't use any fuses"])
def test_a_negation_beside_a_change_writes_nothing_and_says_so_truly(store, text):
    out, written = said(store, text)
    assert written == [] and "were not used" not in out.text and out.text.startswith("Nothing logged"), out.text


@pytest.mark.parametrize("text", ["we took 3 fuses but they were the wrong ones", "we used 3 drill bits but not the fuses"])
def test_but_left_unexplained_writes_nothing_and_says_so(store, text):
    out, written = said(store, text)
    assert written == [] and "\u201cbut\u201d" in out.text, out.text


@pytest.mark.parametrize("text, expected", [("we used not 3 but 5 fuses", [("FUS-5A", -5)]),
                                            ("we received not 2 but 4 boxes of gloves", [("GLV-NIT-L", 4)])])
def test_not_one_count_but_another_is_the_other(store, text, expected):
    _, written = said(store, text)
    assert written == expected


# -- neighbours that must still be logged in one turn -----------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("we used 3 fuses and received 2 drill bits", [("FUS-5A", -3), ("DRL-BIT-6", 2)]),
    ("we used 3 fuses and 2 washers", [("FUS-5A", -3), ("WSH-M8", -2)]),
    ("we used 3 fuses for the pump", [("FUS-5A", -3)]),
    ("we used... let me see... four fuses", [("FUS-5A", -4)]),
])
def test_correct_commands_are_still_logged_in_one_turn(store, text, expected):
    out, written = said(store, text)
    assert written == expected and out.pending is None, out.text


# -- garbled replies ---------------------------------------------------------------------------------

def test_dont_undo_undoes_nothing_and_says_so_plainly(store):
    said(store, "we used 3 fuses")
    out, written = said(store, "don't undo that", turn="t2")
    assert written == [] and out.text == "OK, nothing was undone."


def test_a_size_heard_with_its_unit_is_said_once(tmp_path):
    from helpers import csv_store

    csv = ("sku,item,location,quantity,unit,aliases\nCD-115,cutting disc 115 mm,shelf D,30,pcs,\n"
           "CD-125,cutting disc 125 mm,shelf D,45,pcs,\nCD-230,cutting disc 230 mm,shelf D,8,pcs,\n")
    with csv_store(tmp_path, csv) as s:
        out, _ = said(s, "how many 100 mm cutting discs do we have")
    assert "millimetre millimetre" not in out.text and "100 millimetre;" in out.text, out.text


# -- the pieces, and Mandarin ----------------------------------------------------------------------------

def test_set_aside_keeps_a_sentence_that_could_change_the_command():
    assert set_aside(Utterance.of("we used 3 fuses. no wait.")) is None
    assert set_aside(Utterance.of("why did we use 3 fuses? log 3 fuses used")) == (
        "log 3 fuses used", ("why did we use 3 fuses?",))


@pytest.mark.parametrize("text, kind", [("为什么用了3个保险丝", "question"), ("谁用了3个保险丝", "question"),
                                        ("保险丝用了三次", "frequency")])
def test_mandarin_question_and_frequency_words_are_unexplained(text, kind):
    intent = Intent("log_record", sku="FUS-5A", quantity=3, direction="out")
    got = unexplained(intent, Utterance.of(text))
    assert got is not None and got.kind == kind


def test_mandarin_question_writes_nothing(store):
    nlu = Understanding(sample_items(ZH_ALIASES), language="zh")
    n0 = len(store.records())
    out = dialog.act(nlu.understand("为什么用了3个保险丝"), store, "为什么用了3个保险丝", "t1", language="zh")
    assert store.records()[n0:] == [] and out.text.startswith("没有记录"), out.text


@pytest.mark.parametrize("text", ["用了2个钻头，又用了2个钻头", "用了3个保险丝，收到2个保险丝", "用了3个保险丝，收到2个钻头",
                                  "用了3个钻头，没有用保险丝"])
def test_mandarin_compound_sentences_write_nothing_rather_than_half(store, text):
    """Read as one change, these wrote −2 of 4 drill bits, −3 of a −3/+2 pair, or said the real use was not."""
    nlu = Understanding(sample_items(ZH_ALIASES), language="zh")
    n0 = len(store.records())
    out = dialog.act(nlu.understand(text), store, text, "t1", language="zh")
    assert store.records()[n0:] == [] and out.text.startswith("没有记录") and "你说没有用" not in out.text, out.text


def test_mandarin_two_items_one_direction_still_logs_both(store):
    nlu = Understanding(sample_items(ZH_ALIASES), language="zh")
    n0 = len(store.records())
    dialog.act(nlu.understand("用了3个保险丝和2个钻头"), store, "用了3个保险丝和2个钻头", "t1", language="zh")
    assert [(r.sku, r.delta) for r in store.records()[n0:]] == [("FUS-5A", -3), ("DRL-BIT-6", -2)]
