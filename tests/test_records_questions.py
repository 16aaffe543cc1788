"""Questions about what happened are answered from the records, never with the current stock: a real
SQLite store in a temp dir, records written at chosen times through an injected clock, the box in
Europe/Berlin with weeks from Monday, and the questions said as a person says them."""
from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from edge.stock.periods import Calendar
from edge.stock.store import Store
from tests.helpers import say_to_store

BERLIN = ZoneInfo("Europe/Berlin")
CSV = """sku,item,location,quantity,unit,aliases,reorder_level
DRL-6,drill bit,drawer 4,20,pcs,drill bits;钻头,
GLV-L,nitrile gloves,shelf B,10,box,gloves;手套,5
FUS-5A,fuse,bin 3,60,pcs,fuses,
PNT-WHT,white paint,shelf F,2,can,paint,
"""


class Clock:
    """A settable clock (timezone-aware)."""

    def __init__(self, at: datetime):
        self.at = at

    def __call__(self) -> datetime:
        return self.at


@pytest.fixture
def box(tmp_path):
    clock = Clock(datetime(2026, 11, 1, 8, 0, tzinfo=BERLIN))
    csv = tmp_path / "inv.csv"
    csv.write_text(CSV)
    store = Store(tmp_path / "edge.db", clock=clock, calendar=Calendar(BERLIN, 0, clock))
    store.import_csv(csv)
    yield store, clock
    store.close()


def at(clock: Clock, y, mo, d, h, mi=0, s=0):
    clock.at = datetime(y, mo, d, h, mi, s, tzinfo=BERLIN)


def ask(store, text):
    return say_to_store(store, text).text


def test_the_issue_questions_are_answered_from_the_records(box):
    store, clock = box
    at(clock, 2026, 11, 23, 10)  # Monday of last week
    store.log("DRL-6", -2, "used 2 drill bits", "a1")
    at(clock, 2026, 11, 30, 9)  # Monday this week
    store.log("DRL-6", -3, "used 3 drill bits", "b1")
    store.log("GLV-L", 20, "20 boxes of gloves came in", "b2")
    at(clock, 2026, 12, 2, 11)  # Wednesday
    store.log("DRL-6", -5, "used 5 drill bits", "c1")
    store.log("DRL-6", -7, "used 7 drill bits", "c2")
    store.undo("undo that", "c3")  # the 7 never count; the undo is no use either
    at(clock, 2026, 12, 4, 9)  # Friday (today)
    store.log("DRL-6", -1, "used 1 drill bit", "d1")
    at(clock, 2026, 12, 4, 15)
    assert ask(store, "How many drill bits did we use today?") == "Today you used 1 drill bit, at 09:00."
    assert ask(store, "how many drill bits did we use this week") == (
        "This week: 9 drill bits used, on Monday, Wednesday and today.")
    assert ask(store, "how many drill bits did we use last week") == "Last week you used 2 drill bits, on Monday 23 November at 10:00."
    assert ask(store, "how many fuses did we use yesterday") == "No fuses used yesterday."
    assert ask(store, "When did we last receive gloves?") == "Nitrile gloves last came in on Monday at 09:00: 20 boxes of nitrile gloves."
    assert ask(store, "how many drill bits did we use in November") == "In November: 5 drill bits used, on Monday 23 November and Monday."
    # the current stock (20 − 11 = 9 drill bits) is never the answer
    for q in ("how many drill bits did we use today", "how many drill bits did we use this week"):
        assert "in drawer 4" not in ask(store, q)


def test_a_period_it_cannot_resolve_is_asked_back_and_none_is_guessed(box):
    store, clock = box
    at(clock, 2026, 12, 4, 15)  # a Friday
    assert ask(store, "how many gloves did we use that week") == "Which week? Say this week, last week or the week before last."
    assert ask(store, "how many gloves did we use on Friday") == "Today or last Friday?"
    assert ask(store, "how many gloves did we use").startswith("Over which period?")


def test_a_records_question_no_template_reads_is_not_answered_with_the_stock(box):
    store, clock = box
    at(clock, 2026, 12, 4, 15)
    said = ask(store, "why did we use so many gloves last week")
    assert said == "I can't answer that one from the records."


def test_counts_are_said_as_counts_never_as_use(box):
    store, clock = box
    at(clock, 2026, 11, 30, 8)
    store.count("GLV-L", 18, "counted 18 gloves", "k1")  # 10 recorded: 8 more
    at(clock, 2026, 12, 4, 15)
    assert ask(store, "how many gloves did we use this week") == "No nitrile gloves used this week."
    assert ask(store, "when was the last count of gloves") == "Nitrile gloves last counted on Monday at 08:00: 18, 8 more than recorded."


def test_which_box_logged_the_latest_movement_and_the_last_entries(box):
    store, clock = box
    at(clock, 2026, 12, 4, 8)
    store.log("FUS-5A", -4, "4 fuses", "e1")
    store.log("GLV-L", -1, "a box of gloves", "e2")
    at(clock, 2026, 12, 4, 15)
    assert ask(store, "which box logged the fuses") == (
        "The latest movement of fuses was logged by box local (this box), today at 08:00: 4 fuses used.")
    said = ask(store, "what did we log today")
    assert said.startswith("Today: 2 entries.") and "4 fuses used today at 08:00" in said


def test_run_out_is_an_estimate_said_as_one(box):
    store, clock = box
    for day in range(1, 29):  # 28 days of 1 box a day
        at(clock, 2026, 11, 6, 9)
        clock.at += timedelta(days=day - 1)
        store.log("GLV-L", 1, "a box in", f"in{day}")
        store.log("GLV-L", -1, "a box out", f"out{day}")
    at(clock, 2026, 12, 3, 15)
    said = ask(store, "when will we run out of gloves")
    assert said == ("Over the last 28 days you used 28 boxes of nitrile gloves, about 1 a day (7 a week). At that "
                    "rate the 10 left last about 10 days. That is an estimate.")


def test_low_stock_names_what_is_out_even_without_a_reorder_level(box):
    store, clock = box
    store.log("PNT-WHT", -2, "used the paint", "p1")
    said = ask(store, "what are we running low on?")
    assert said == "Low on stock: 0 cans of white paint (out of stock)."
    store.log("GLV-L", -5, "5 gloves", "p2")
    assert ask(store, "what are we running low on?") == (
        "Low on stock: 0 cans of white paint (out of stock) and 5 boxes of nitrile gloves (reorder at 5).")


def test_mandarin_questions_get_the_same_figures(box):
    store, clock = box
    at(clock, 2026, 11, 30, 9)
    store.log("DRL-6", -3, "用了3个钻头", "z1")
    store.log("GLV-L", 20, "进了20盒手套", "z2")
    at(clock, 2026, 12, 2, 11)
    store.log("DRL-6", -6, "用了6个钻头", "z3")
    at(clock, 2026, 12, 4, 15)

    def zh(text):
        return say_to_store(store, text, language="zh").text

    assert zh("这周用了多少钻头") == "这周用了9个钻头，在周一、周三。"
    assert zh("上周用了多少钻头") == "上周没有用钻头。"
    assert zh("手套上次是什么时候到货的") == "手套上次到货是11月30日（周一）09:00：20盒手套。"
    assert zh("今天用了多少钻头") == "今天没有用钻头。"


def test_the_speculative_preview_prepares_the_same_records_reply(box):
    """During the endpointing silence the reply is prepared on a read-only view of the store: a records
    question's is the one the turn then says."""
    from edge.loop.speculation import PreviewInventory
    from edge.stages import dialog
    from edge.stages.nlu.understand import Understanding

    store, clock = box
    at(clock, 2026, 12, 4, 9)
    store.log("DRL-6", -2, "2 drill bits", "s1")
    at(clock, 2026, 12, 4, 15)
    intent = Understanding(store.items()).understand("how many drill bits did we use today")
    preview = dialog.act(intent, PreviewInventory(store), intent.text, "s2").text
    assert preview == dialog.act(intent, store, intent.text, "s2").text == "Today you used 2 drill bits, at 09:00."
    assert len(store.records()) == 1


@pytest.mark.parametrize("text", ["how many drill bits did we have last week", "drill bits used last week",
                                  "how many gloves were there in november"])
def test_a_stock_question_over_a_time_is_never_answered_with_the_stock(box, text):
    store, clock = box
    at(clock, 2026, 12, 4, 15)
    said = ask(store, text)
    assert "drawer 4" not in said and "shelf B" not in said and "There are" not in said, said


def test_which_week_is_answered_by_the_next_words(box):
    """"how many drill bits did we use" → "Over which period? …" → "last week": the question is
    answered over the period said; a reply that names none answers nothing."""
    from edge.stages import dialog

    store, clock = box
    at(clock, 2026, 11, 24, 10)
    store.log("DRL-6", -4, "4 drill bits", "w1")
    at(clock, 2026, 12, 4, 15)
    asked = say_to_store(store, "how many drill bits did we use")
    assert asked.text.startswith("Over which period?") and asked.pending.kind == "period"
    got = dialog.follow_up(asked.pending, "last week", store, "w2")
    assert got.text == "Last week you used 4 drill bits, on Tuesday 24 November at 10:00."
    vague = say_to_store(store, "how many drill bits did we use that week")
    assert vague.text.startswith("Which week?")
    assert dialog.follow_up(vague.pending, "the blue one", store, "w3").text == "I didn't catch a period, so I haven't answered."
    assert len(store.records()) == 1


@pytest.mark.parametrize("text, verdict", [
    ("how many drill bits did we use", "incomplete"),  # "… last week" may follow
    ("how many drill bits did we use last week", "complete"),
    ("when did we last receive gloves", "complete"),
    ("what did we log today", "complete"),
])
def test_endpointing_waits_for_the_period_of_a_records_question(box, text, verdict):
    from edge.stages.nlu.grammar import Grammar

    store, _clock = box
    assert Grammar(store.items()).completeness(text)[0] == verdict
