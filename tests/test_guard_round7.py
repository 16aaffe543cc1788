"""Round 7 of "never a wrong record" (English): an item set aside beside a change never gets its count;
a unit word after the item's name is asked, never read as pieces; a word of a name that heads none
("cables" of cable ties) is no item; a use from a place the store does not keep, another's stock, a
loan or a swap writes nothing and says why; a test said first says why nothing was logged; a count
corrected the turn after its log corrects that record (undone and written again, read back) only
when it is unambiguous and recent, else changes nothing and says why. Each with the correct
neighbours that still log in one turn. Real SQLite store, real understanding (grammar, no LLM), real
dialog."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from edge.stages import dialog
from edge.stages.nlu.understand import Understanding
from edge.stock.periods import Calendar
from edge.stock.store import Store
from tests.helpers import csv_store
from tests.test_guard_round5 import CSV, run

#: round 5's inventory with cable ties and bolts (a name whose first word is another thing's)
TIES = CSV + "TIE-CBL-200,cable ties,drawer 7,300,pcs,cable tie;zip ties\nBLT-M8-30,M8 bolt,bin 12,140,pcs,m8 bolts\n"


def _said(tmp_path, text, inventory=CSV):
    with csv_store(tmp_path, inventory) as store:
        return run(store, text)


def session(store: Store, *turns: str, start: int = 0):
    """Turns said one after another, each its own turn as the voice loop gives them (ids from ``start``):
    the replies, every record of the store as ``(sku, delta, kind)``, and the last outcome."""
    und = Understanding(store.items())
    said, out = [], None
    for k, text in enumerate(turns, start):
        out = dialog.act(und.understand(text), store, text, f"turn-{k}")
        said.append(out.text)
    return said, [(r.sku, r.delta, r.kind) for r in store.records()], out


# -- 1. an item set aside beside the change ---------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "forget the washers, we used 3 fuses", "forget about the washers, we used 3 fuses", "we used 3 fuses, forget the washers",
    "skip the washers, log 3 fuses used", "ignore the washers, we used 3 fuses", "no washers, we used 3 fuses",
    "never mind the washers, we used 3 fuses", "not the washers, 3 fuses", "forget the drill bits, we received 2 fuses"])
def test_an_item_set_aside_never_gets_the_count(tmp_path, text):
    said, written, out = _said(tmp_path, text)
    assert written == [] and out.pending is None and said[0].startswith("Nothing logged"), said


def test_the_change_said_alone_still_logs(tmp_path):
    assert _said(tmp_path, "we used 3 fuses")[1] == [("FUS-5A", -3)]


# -- 2. a unit word after the item's name ---------------------------------------------------------------------

@pytest.mark.parametrize("text", ["we used 3 fuse boxes", "we used 3 washer packs", "we received 2 drill bit sets",
                                  "we took 2 goggle cases", "we used 3 bolt cases", "we used 3 cable tie bags"])
def test_a_unit_after_the_name_is_asked_never_pieces(tmp_path, text):
    said, written, out = _said(tmp_path, text, TIES)
    assert written == [] and out.pending is not None and "counted in pcs" in said[0], said


@pytest.mark.parametrize("text, record", [("we used 3 glove boxes", ("GLV-NIT-L", -3)),
                                          ("we used 1 glove box", ("GLV-NIT-L", -1)),
                                          ("we used 2 boxes of gloves", ("GLV-NIT-L", -2))])
def test_the_items_own_unit_after_the_name_still_logs(tmp_path, text, record):
    said, written, out = _said(tmp_path, text)
    assert written == [record] and out.pending is None, said


# -- 3. a word of a name that heads none ------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["we used 3 cables", "we used 3 zips", "we used 3 drills", "we used 3 nitriles",
                                  "we used 3 safeties", "we used one cable"])
def test_a_word_of_a_name_that_heads_none_is_no_item(tmp_path, text):
    said, written, out = _said(tmp_path, text, TIES)
    assert written == [] and out.pending is None and said[0].startswith("I don't have"), said


@pytest.mark.parametrize("text", ["we used 3 cable ties", "we used 3 zip ties", "we used 3 ties"])
def test_the_whole_name_or_its_head_still_logs(tmp_path, text):
    said, written, out = _said(tmp_path, text, TIES)
    assert written == [("TIE-CBL-200", -3)] and out.pending is None, said


def test_a_code_word_of_names_is_still_asked(tmp_path):
    said, written, out = _said(tmp_path, "we used 3 m8", TIES + "WSH-M8-B,M8 washer,bin 3,50,pcs,\n")
    assert written == [] and out.pending is not None, said


# -- 4. a use taken from a place the store does not keep ------------------------------------------------------------

@pytest.mark.parametrize("text, place", [
    ("we used 3 fuses from the van", "from the van"), ("we used 3 fuses from the truck", "from the truck"),
    ("we took 3 fuses out of the back of the van", "out of the back of the van"),
    ("we used 3 fuses from the customer", "from the customer"), ("3 fuses from the van", "from the van"),
    ("we grabbed 3 fuses off the truck", "off the truck"), ("we returned 3 fuses to site B", "to site b")])
def test_a_use_from_a_place_the_store_does_not_keep_writes_nothing(tmp_path, text, place):
    said, written, out = _said(tmp_path, text)
    assert written == [] and out.pending is None and f"\u201c{place}\u201d is not a place of the stock" in said[0], said


@pytest.mark.parametrize("text, record", [
    ("we used 3 fuses from bin 30", ("FUS-5A", -3)), ("we used 3 fuses from stock", ("FUS-5A", -3)),
    ("we took 3 fuses out of the back of bin 30", ("FUS-5A", -3)), ("we received 3 fuses from the supplier", ("FUS-5A", 3)),
    ("we returned 3 fuses to bin 30", ("FUS-5A", 3))])
def test_a_use_from_the_stock_or_a_receipt_from_outside_still_logs(tmp_path, text, record):
    said, written, out = _said(tmp_path, text)
    assert written == [record] and out.pending is None, said


# -- 5. another's stock, a loan, a swap --------------------------------------------------------------------------------

@pytest.mark.parametrize("text, why", [
    ("we used Bob's 3 fuses", "someone else's stock"), ("we used his 3 fuses", "someone else's stock"),
    ("we took the customer's 3 fuses", "someone else's stock"), ("we used 3 fuses from Bob's toolbox", "someone else's"),
    ("we borrowed 3 fuses", "is a loan"), ("we lent 3 fuses to site B", "is a loan"), ("we loaned 3 fuses", "is a loan"),
    ("we swapped 3 fuses for washers", "is a swap"), ("we traded 3 fuses", "is a swap"), ("we exchanged 3 fuses", "is a swap"),
    ("we swapped 2 drill bits with the other team", "is a swap"), ("we used 3 fuses belonging to Bob", "someone else's")])
def test_stock_that_is_not_ours_writes_nothing_and_says_why(tmp_path, text, why):
    said, written, out = _said(tmp_path, text)
    assert written == [] and out.pending is None and said[0].startswith("Nothing logged") and why in said[0], said


@pytest.mark.parametrize("text, record", [("we swapped out 4 fuses", ("FUS-5A", -4)),
                                          ("we swapped 3 fuses for new ones", ("FUS-5A", -3)),
                                          ("we used our 3 fuses", ("FUS-5A", -3))])
def test_a_replacement_or_our_stock_still_logs(tmp_path, text, record):
    said, written, out = _said(tmp_path, text)
    assert written == [record] and out.pending is None, said


# -- 6. a test said first --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["test: we used 3 fuses", "this is a test, we used 3 fuses", "just testing, we used 3 fuses",
                                  "testing testing we used 3 fuses", "Test. We used 3 fuses.", "test, undo that"])
def test_a_test_said_first_says_why_nothing_was_logged(tmp_path, text):
    with csv_store(tmp_path, CSV) as store:
        store.log("FUS-5A", -5, "we used 5 fuses", "before")
        said, written, out = run(store, text)
        assert written == [("FUS-5A", -5)] and out.pending is None, said
        assert said[0].startswith("Nothing logged: that sounded like a test"), said


def test_a_question_after_test_is_answered(tmp_path):
    said, written, _ = _said(tmp_path, "testing, how many fuses do we have")
    assert written == [] and "60 fuses" in said[0], said


# -- 7. a count corrected the turn after its log -------------------------------------------------------------------------

@pytest.mark.parametrize("correction, q", [("actually it was 2", 2), ("no, 2", 2), ("make that 2", 2), ("make it four", 4),
                                           ("sorry, 2 not 3", 2), ("2, not 3", 2), ("I meant 2", 2), ("it should be 2", 2),
                                           ("no, we used 2 fuses", 2), ("actually it was 2 fuses", 2),
                                           ("scratch that, it was 2", 2)])
def test_a_count_corrected_next_turn_corrects_that_record(tmp_path, correction, q):
    with csv_store(tmp_path, CSV) as store:
        said, written, out = session(store, "we used 3 fuses", correction)
        assert written == [("FUS-5A", -3, "log"), ("FUS-5A", 3, "undo"), ("FUS-5A", -q, "log")], said
        assert said[1] == f"Corrected the last record from 3 to {q}. Logged {q} fuses used. Now {60 - q} in bin 30.", said
        assert out.pending is None and store.get("FUS-5A").quantity == 60 - q


def test_a_receipt_and_a_lot_unit_are_corrected_in_their_direction_and_unit(tmp_path):
    with csv_store(tmp_path, CSV) as store:
        said, written, _ = session(store, "we received 3 fuses", "actually it was 5", "we used 3 boxes of gloves",
                                   "make that 2 boxes")
        assert written[:3] == [("FUS-5A", 3, "log"), ("FUS-5A", -3, "undo"), ("FUS-5A", 5, "log")], said
        assert written[3:] == [("GLV-NIT-L", -3, "log"), ("GLV-NIT-L", 3, "undo"), ("GLV-NIT-L", -2, "log")], said


def test_a_correction_may_be_corrected_again_and_undone(tmp_path):
    with csv_store(tmp_path, CSV) as store:
        said, _, _ = session(store, "we used 3 fuses", "no, 2", "make that 4", "undo that")
        assert store.get("FUS-5A").quantity == 60 and said[2].startswith("Corrected the last record from 2 to 4."), said


@pytest.mark.parametrize("turns, why", [
    (("actually it was 2",), "the turn before wrote no record"),
    (("we used 3 washers from the van", "no, 2"), "the turn before wrote no record"),
    (("we used 3 fuses", "never mind", "make that 2"), "the turn before wrote no record"),
    (("we used 3 fuses", "undo that", "no, 2"), "the turn before undid a record"),
    (("we used 3 fuses and 2 washers", "no, 2"), "the turn before wrote 2 records"),
    (("we used 3 fuses", "actually it was 2 washers"), "A correction of it, or another change?"),
    (("we used 3 fuses", "no, we used 2 washers"), "A correction of it, or another change?"),
    (("we used 3 fuses", "actually we received 2"), "you said it the other way"),
    (("we used 3 fuses", "make that 2 boxes"), "counted in pcs"),
    (("we used 3 fuses", "sorry, 2 not 4"), "not 4"),
    (("we used 3 fuses", "make that 3"), "That is what was logged"),
    (("we used 3 fuses", "make that 0"), "say 'undo that'")])
def test_a_correction_that_is_not_unambiguous_changes_nothing_and_says_why(tmp_path, turns, why):
    with csv_store(tmp_path, CSV) as store:
        session(store, *turns[:-1])
        n = len(store.records())
        said, _, out = session(store, turns[-1], start=len(turns) - 1)
        assert len(store.records()) == n and out.pending is None and why in said[-1], said


def test_an_old_record_is_not_corrected(tmp_path):
    now = {"t": datetime(2026, 12, 7, 9, 0, tzinfo=timezone.utc)}
    (tmp_path / "inv.csv").write_text(CSV, encoding="utf-8")
    with Store(tmp_path / "edge.db", clock=lambda: now["t"], calendar=Calendar(timezone.utc, 0, lambda: now["t"])) as store:
        store.import_csv(tmp_path / "inv.csv")
        und = Understanding(store.items())
        dialog.act(und.understand("we used 3 fuses"), store, "we used 3 fuses", "turn-0")
        now["t"] += timedelta(minutes=10)
        out = dialog.act(und.understand("actually it was 2"), store, "actually it was 2", "turn-1")
        assert [r.delta for r in store.records()] == [-3] and "too old" in out.text, out.text


def test_a_whole_command_after_a_turn_that_wrote_nothing_is_that_command(tmp_path):
    with csv_store(tmp_path, CSV) as store:
        said, written, _ = session(store, "actually we used 2 fuses")
        assert written == [("FUS-5A", -2, "log")], said


def test_another_lot_said_next_turn_is_a_new_log(tmp_path):
    with csv_store(tmp_path, CSV) as store:
        said, written, _ = session(store, "we used 3 fuses", "we used 2 more fuses")
        assert written == [("FUS-5A", -3, "log"), ("FUS-5A", -2, "log")], said


def test_the_store_corrects_only_a_log_not_yet_undone_and_writes_nothing_else(tmp_path):
    from edge.stock.store import StoreError

    with csv_store(tmp_path, CSV) as store:
        first, _ = store.log("FUS-5A", -3, "we used 3 fuses", "a")
        undo, new, item = store.amend(first.id, -2, "no, 2", "b")
        assert (undo.undoes, undo.delta, new.delta, item.quantity) == (first.id, 3, -2, 58)
        for record_id, delta in [(first.id, -4), (undo.id, -4), (new.id, 0)]:  # undone, an undo, no change
            with pytest.raises(StoreError):
                store.amend(record_id, delta, "make that 4", "c")
        assert [r.delta for r in store.records()] == [-3, 3, -2] and store.get("FUS-5A").quantity == 58
