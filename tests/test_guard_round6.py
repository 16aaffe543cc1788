"""Round 6 of "never a wrong record": stock put into a machine or a vehicle is no receipt; a count of
something else (counted out, broken, used) is no stock count; a try, a test, a dream or a doubt is no
change; an undo said beside a write is never dropped silently; a count of machines or holes is no
count of the item; a Mandarin question ending in 没有 is no command. Each with the correct neighbours
that still log in one turn. Real SQLite store, real understanding (grammar, no LLM), real dialog."""
from __future__ import annotations

import pytest

from tests.helpers import csv_store
from tests.test_guard_round5 import CSV, ZH_CSV, run


def _said(tmp_path, text):
    zh = any(ord(ch) > 0x2E80 for ch in text)
    with csv_store(tmp_path, ZH_CSV if zh else CSV) as store:
        return run(store, text, language="zh" if zh else "en")


# -- E. put into a machine, a vehicle or a kit ----------------------------------------------------------

@pytest.mark.parametrize("text", [
    "we put 3 fuses in the compressor", "we put 3 fuses in the van", "we put 3 fuses into the fuse box",
    "we put in 3 fuses", "we added 3 fuses to the machine", "we put 3 washers on the bolts",
    "we added 3 drill bits to the kit", "放了三个保险丝到车上", "给机器加了三个保险丝", "加了三个保险丝"])
def test_stock_put_into_a_machine_or_vehicle_is_no_receipt(tmp_path, text):
    said, written, out = _said(tmp_path, text)
    assert written == [] and out.pending is None, said
    assert said[0].startswith(("Nothing logged", "没有记录")) and ("machine" in said[0] or "设备" in said[0]), said


@pytest.mark.parametrize("text, record", [
    ("we put 3 fuses in bin 30", ("FUS-5A", 3)), ("we put 3 fuses back in bin 30", ("FUS-5A", 3)),
    ("add 30 fuses", ("FUS-5A", 30)), ("we received 3 fuses", ("FUS-5A", 3)),
    ("收到三个保险丝", ("FUS-5A", 3)), ("补了三个保险丝", ("FUS-5A", 3))])
def test_stock_put_into_a_stock_place_or_received_still_logs(tmp_path, text, record):
    said, written, out = _said(tmp_path, text)
    assert written == [record] and out.pending is None, said


def test_stock_put_into_another_bin_is_asked_as_before(tmp_path):
    said, written, out = _said(tmp_path, "we put 3 fuses in drawer 4")
    assert written == [] and out.pending is not None, said


# -- F. a count of something else ---------------------------------------------------------------------

@pytest.mark.parametrize("text", ["counted out 3 fuses", "we counted 3 fuses out", "we counted 3 broken fuses",
                                  "we counted 3 fuses used", "数了三个用掉的保险丝"])
def test_a_count_of_something_else_is_no_stock_count(tmp_path, text):
    said, written, _ = _said(tmp_path, text)
    assert written == [] and said[0].startswith(("Nothing counted", "没有记录")), said


def test_a_plain_count_still_sets_the_stock(tmp_path):
    said, written, _ = _said(tmp_path, "we counted 3 fuses")
    assert written == [("FUS-5A", -57)], said


# -- G and K. a try, a test, a dream or a doubt -------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "we tried to use 3 fuses", "we attempted to use 3 fuses", "we failed to use 3 fuses", "we forgot to use 3 fuses",
    "we tried to receive 20 boxes of gloves", "试着用了三个保险丝",
    "we used 3 fuses in my dream", "we used 3 fuses in the simulation", "we used 3 fuses in the demo",
    "we used 3 fuses, or did we", "用了三个保险丝，假的", "用了三个保险丝，等一下", "就当用了三个保险丝",
    "测试一下，用了三个保险丝", "做梦用了三个保险丝", "模拟用了三个保险丝", "用了三个保险丝，不过是错的"])
def test_a_try_a_test_or_a_doubt_writes_nothing_and_says_why(tmp_path, text):
    said, written, out = _said(tmp_path, text)
    assert written == [] and out.pending is None, said
    assert said[0].startswith(("Nothing logged", "没有记录")), said


@pytest.mark.parametrize("text", ["test: we used 3 fuses", "this is a test, we used 3 fuses"])
def test_a_test_said_first_writes_nothing(tmp_path, text):
    said, written, _ = _said(tmp_path, text)
    assert written == [], said


def test_forgot_to_log_is_still_the_log(tmp_path):
    said, written, _ = _said(tmp_path, "I forgot to log 3 fuses used")
    assert written == [("FUS-5A", -3)], said


# -- M. an undo beside a write ------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["undo that and log 3 fuses used", "cancel that and log 3 fuses used",
                                  "log 3 fuses used and undo the washers"])
def test_an_undo_beside_a_write_is_never_dropped_silently(tmp_path, text):
    with csv_store(tmp_path, CSV) as store:
        run(store, "we used 5 washers")
        said, written, _ = run(store, text)
        assert written == [("WSH-M8", -5)], said  # the earlier record stands, nothing new written
        assert "undo" in said[0] and said[0].startswith("Nothing logged or undone"), said


def test_undo_on_its_own_still_undoes(tmp_path):
    with csv_store(tmp_path, CSV) as store:
        run(store, "we used 5 washers")
        said, _, _ = run(store, "undo that")
        assert store.get("WSH-M8").quantity == 500, said


# -- D. a count of something else than the item -------------------------------------------------------------

@pytest.mark.parametrize("text", ["we used fuses on 3 machines", "we used drill bits for 4 holes",
                                  "we used washers on 6 bolts", "在三台机器上用了保险丝"])
def test_a_count_of_machines_or_holes_is_no_count_of_the_item(tmp_path, text):
    said, written, _ = _said(tmp_path, text)
    assert written == [], said


@pytest.mark.parametrize("text, record", [("we used 3 fuses on the compressor", ("FUS-5A", -3)),
                                          ("we used 3 fuses for the compressor", ("FUS-5A", -3)),
                                          ("用了三个保险丝", ("FUS-5A", -3))])
def test_a_count_said_before_the_item_still_logs(tmp_path, text, record):
    said, written, out = _said(tmp_path, text)
    assert written == [record] and out.pending is None, said


# -- I. a Mandarin yes/no question ending in 没有 ------------------------------------------------------------

@pytest.mark.parametrize("text", ["用了三个保险丝了没有", "用了三个保险丝没", "收到三个保险丝了没有"])
def test_a_mandarin_question_ending_in_meiyou_writes_nothing(tmp_path, text):
    said, written, _ = _said(tmp_path, text)
    assert written == [] and "提问" in said[0], said
