"""Periods on an injected clock, in a zone with summer time (Europe/Berlin): midnight, a week
boundary, a month boundary, the night the clocks go back, a record at 23:59:59; and the periods that
must be asked back. Records are written through a real store at those times and counted back."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from edge.stock.periods import Calendar, Unresolved, find_period, resolve
from edge.stock.questions import Question, answer
from edge.stock.store import Store

BERLIN = ZoneInfo("Europe/Berlin")


def berlin(*a) -> datetime:
    return datetime(*a, tzinfo=BERLIN)


@pytest.fixture
def store(tmp_path):
    at = {"t": berlin(2026, 10, 1, 8)}
    clock = lambda: at["t"]  # noqa: E731
    csv = tmp_path / "inv.csv"
    csv.write_text("sku,item,location,quantity,unit,aliases\nDRL-6,drill bit,drawer 4,500,pcs,drill bits\n")
    s = Store(tmp_path / "edge.db", clock=clock, calendar=Calendar(BERLIN, 0, clock))
    s.import_csv(csv)
    s.at = at
    yield s
    s.close()


def used(store, words: str) -> int:
    got = answer(store, Question("total", "used", "DRL-6", words))
    assert got.ask is None, got.ask
    return got.facts["used"]


def log_at(store, when: datetime, n: int, turn: str) -> None:
    store.at["t"] = when
    store.log("DRL-6", -n, f"used {n}", turn)


def test_across_midnight_a_record_at_23_59_59_is_yesterdays(store):
    log_at(store, berlin(2026, 11, 3, 23, 59, 59), 2, "a")  # Tuesday's last second
    log_at(store, berlin(2026, 11, 4, 0, 0, 0), 5, "b")  # Wednesday's first
    store.at["t"] = berlin(2026, 11, 4, 0, 0, 1)
    assert used(store, "today") == 5 and used(store, "yesterday") == 2
    store.at["t"] = berlin(2026, 11, 3, 23, 59, 59, 999000)  # asked just before midnight: Tuesday is today
    assert used(store, "today") == 2 and used(store, "yesterday") == 0


def test_a_week_boundary_and_this_week_on_a_monday(store):
    log_at(store, berlin(2026, 11, 29, 23, 59, 59), 3, "sun")  # Sunday night: last week
    log_at(store, berlin(2026, 11, 30, 0, 0, 0), 4, "mon")  # Monday 00:00: this week
    store.at["t"] = berlin(2026, 11, 30, 0, 0, 30)  # on Monday, "this week" is Monday so far
    assert used(store, "this week") == 4 and used(store, "last week") == 3
    p = resolve("this week", store.at["t"], BERLIN)
    assert p.start == berlin(2026, 11, 30) and p.end == berlin(2026, 12, 7)
    sunday_weeks = resolve("this week", store.at["t"], BERLIN, week_start=6)  # a site whose weeks start on Sunday
    assert sunday_weeks.start == berlin(2026, 11, 29)


def test_a_month_boundary(store):
    log_at(store, berlin(2026, 10, 31, 23, 59, 59), 6, "oct")
    log_at(store, berlin(2026, 11, 1, 0, 0, 0), 7, "nov")
    store.at["t"] = berlin(2026, 11, 1, 9)
    assert used(store, "this month") == 7 and used(store, "last month") == 6
    assert used(store, "in october") == 6 and used(store, "in november") == 7


def test_the_night_the_clocks_go_back_is_a_25_hour_day(store):
    # 25 October 2026, 03:00 CEST → 02:00 CET: 02:30 happens twice
    first = datetime(2026, 10, 25, 0, 30, tzinfo=timezone.utc)  # 02:30 CEST
    second = datetime(2026, 10, 25, 1, 30, tzinfo=timezone.utc)  # 02:30 CET
    log_at(store, first, 1, "x")
    log_at(store, second, 2, "y")
    log_at(store, berlin(2026, 10, 25, 23, 59, 59), 4, "z")
    log_at(store, berlin(2026, 10, 24, 23, 59, 59), 8, "w")  # the day before
    store.at["t"] = berlin(2026, 10, 26, 10)
    p = resolve("yesterday", store.at["t"], BERLIN)
    assert p.end.astimezone(timezone.utc) - p.start.astimezone(timezone.utc) == timedelta(hours=25)
    assert p.utc_bounds() == ("2026-10-24T22:00:00.000+00:00", "2026-10-25T23:00:00.000+00:00")
    assert used(store, "yesterday") == 7 and used(store, "the day before yesterday") == 8


def test_undone_records_and_undos_never_count(store):
    log_at(store, berlin(2026, 11, 2, 9), 3, "a")
    log_at(store, berlin(2026, 11, 2, 10), 9, "b")
    store.undo("undo that", "c")
    store.at["t"] = berlin(2026, 11, 2, 12)
    assert used(store, "today") == 3
    got = answer(store, Question("entries", "any", None, "today"))
    assert got.facts["total"] == 1  # the 9 and its undo are not entries that stand


@pytest.mark.parametrize("words, ask", [
    ("that week", "Which week?"), ("the other day", "Over which days?"), ("which month", "Which month?"),
])
def test_a_period_that_names_no_one_period_is_asked_back(words, ask):
    got = resolve(words, berlin(2026, 12, 4, 10), BERLIN)
    assert isinstance(got, Unresolved) and got.ask.startswith(ask)


def test_number_words_in_a_period():
    p = resolve("over the last three days", berlin(2026, 12, 4, 10), BERLIN)
    assert p.start == berlin(2026, 12, 2) and p.end == berlin(2026, 12, 5)


def test_on_a_weekday_said_on_that_weekday_is_asked_and_last_is_a_week_ago():
    friday = berlin(2026, 12, 4, 10)
    assert isinstance(resolve("on friday", friday, BERLIN), Unresolved)
    last = resolve("last friday", friday, BERLIN)
    assert last.start == berlin(2026, 11, 27) and last.end == berlin(2026, 11, 28)
    assert resolve("on tuesday", friday, BERLIN).start == berlin(2026, 12, 1)


@pytest.mark.parametrize("text, words", [
    ("how many did we use over the last three days", "over the last three days"), ("how many did we use over the last 3 days", "over the last 3 days"),
    ("上周用了多少钻头", "上周"), ("周一以来进了多少", "周一以来"), ("what did we log this morning", "this morning"),
    ("when were gloves most recently delivered", None),
])
def test_period_words_are_found_in_a_sentence(text, words):
    assert find_period(text) == words
