"""What the console pages show, read from the store (:class:`edge.stock.store.Store`)."""
from __future__ import annotations

import csv
import io
import tempfile
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from edge.localtime import local
from edge.stock.periods import Unresolved, between, typed
from edge.stock.places import IMPORT_TURN_PREFIX
from edge.stock.questions import Question, answer, series
from edge.stock.store import Item, Record, Store

#: Rows on one page of records or inventory: a 100,000-record history was 43 MB of HTML on one page.
PAGE_ROWS = 200


@dataclass(frozen=True)
class Paged:
    """One page of ``total`` rows: ``rows`` (at most :data:`PAGE_ROWS`), the page number ``page``
    (1-based, clamped to 1..``pages``), ``pages``, and ``first``/``last``, the 1-based positions of
    its first and last row (0 and 0 when there are none)."""

    rows: list
    page: int
    pages: int
    total: int
    first: int
    last: int


def paged(rows: list, page: int, size: int = PAGE_ROWS) -> Paged:
    """Page ``page`` of ``rows``, ``size`` rows a page (a page past the end shows the last one)."""
    pages = max(1, -(-len(rows) // size))
    page = min(max(1, page), pages)
    chunk = rows[(page - 1) * size:page * size]
    first = (page - 1) * size + 1 if chunk else 0
    return Paged(chunk, page, pages, len(rows), first, first + len(chunk) - 1 if chunk else 0)


def local_time(iso_utc: str) -> str:
    """A record's UTC ISO 8601 time in the box's time zone, ``YYYY-MM-DD HH:MM:SS``."""
    try:
        return local(datetime.fromisoformat(iso_utc)).strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return iso_utc


def undoable(records: list[Record]) -> set[int]:
    """The ids of the records the console offers to undo (:meth:`Store.undo_record`): every record
    that is neither an undo nor undone (another box's is refused when asked, naming the box)."""
    undone = {r.undoes for r in records if r.undoes is not None}
    return {r.id for r in records if r.undoes is None and r.id not in undone}


def signed(value: int | float) -> str:
    """A change with its sign: ``+20``, ``-3``, ``-2.5``."""
    return f"{value:+g}" if isinstance(value, float) else f"{value:+d}"


def counted(n: int | float, noun: str) -> str:
    """``n`` and the noun, plural unless one: ``1 record``, ``3 records``, ``0 samples``."""
    return f"{n:g} {noun}" if n == 1 else f"{n:g} {noun}s"


def filter_records(records: list[Record], items: dict[str, Item], q: str = "", kind: str = "all") -> list[Record]:
    """Newest first; ``q``: words that must all appear in the SKU, item name, utterance or turn id
    (case-insensitive); ``kind``: ``all``, ``in`` (received), ``out`` (used), ``undo``, ``count``
    (an import's or a voice stock count), ``transfer``."""
    words = q.lower().split()
    out = []
    for r in reversed(records):
        name = items[r.sku].item if r.sku in items else ""
        hay = f"{r.sku} {name} {r.utterance} {r.turn_id}".lower()
        if not all(w in hay for w in words):
            continue
        count = r.kind == "count" or r.turn_id.startswith(IMPORT_TURN_PREFIX)
        if kind == "undo" and r.undoes is None or kind == "count" and not count or kind == "transfer" and r.kind != "transfer":
            continue
        if kind in ("in", "out") and (r.undoes is not None or count or (r.delta > 0) != (kind == "in")):
            continue
        out.append(r)
    return out


@dataclass(frozen=True)
class Change:
    """One row of an import preview: ``kind`` ``new`` or ``changed``; ``before`` None for a new item."""

    kind: str
    after: Item
    before: Item | None

    @property
    def fields(self) -> list[str]:
        """The fields that change (``quantity``, ``item``, ``location``, ``unit``, ``aliases``)."""
        if self.before is None:
            return ["new"]
        return [f for f in ("quantity", "item", "location", "unit", "aliases")
                if getattr(self.before, f) != getattr(self.after, f)]


@dataclass(frozen=True)
class Preview:
    """An inventory CSV against the store: the changes, how many rows leave an item as it is, the
    SKUs the store holds that the file does not list (``missing``: an import keeps them) and the
    names that sound alike (``sound_alike``: ``(sku, name, other sku, other name)``)."""

    changes: list[Change]
    unchanged: int
    rows: int
    missing: tuple[str, ...] = ()
    sound_alike: tuple[tuple[str, str, str, str], ...] = ()


def preview_import(store: Store, csv_text: str) -> Preview:
    """What importing ``csv_text`` would change, found by importing it into a scratch store (the
    same parsing and checks as the real import); the store is not touched.

    Raises:
        edge.stock.store.StoreError: the CSV would be refused by the import (the message names line and column).
    """
    with tempfile.TemporaryDirectory(prefix="edge-preview-") as d:
        path = Path(d) / "inventory.csv"
        path.write_text(csv_text, encoding="utf-8")
        with Store(Path(d) / "preview.db") as scratch:
            report = scratch.import_csv(path)
            after = scratch.items()
    n = report.rows
    before = {i.sku: i for i in store.items()}
    changes = [Change("new" if a.sku not in before else "changed", a, before.get(a.sku))
               for a in after if before.get(a.sku) != a]
    missing = tuple(sorted(set(before) - {a.sku for a in after}))
    return Preview(changes, n - len(changes), n, missing, report.sound_alike)


def import_text(store: Store, csv_text: str, name: str = "console-import.csv") -> int:
    """Import ``csv_text`` into ``store`` (:meth:`Store.import_csv`); returns the rows imported.

    Raises:
        edge.stock.store.StoreError: as :meth:`Store.import_csv`.
    """
    with tempfile.TemporaryDirectory(prefix="edge-import-") as d:
        path = Path(d) / name
        path.write_text(csv_text, encoding="utf-8")
        return store.import_csv(path).rows


#: The longest period the History chart shows by day unless asked (longer ones by week).
DAYS_CHARTED = 62


@dataclass(frozen=True)
class History:
    """The History page: ``summary`` (the ``total`` answer for the item, None for all items),
    ``entries`` (the period's records, at most 200), ``chart`` (:func:`edge.stock.questions.series`)
    and ``problem`` (what was wrong with the input; the rest None)."""

    summary: object = None
    entries: object = None
    chart: dict | None = None
    problem: str | None = None


def places(store: Store) -> list[str]:
    """Every place the store keeps stock at (as stored), sorted case-insensitively."""
    return sorted({p for i in store.items() for p, _q in i.places()}, key=str.lower)


def history(store: Store, sku: str, period: str, since: str, until: str, by: str = "", with_entries: bool = True,
            place: str = "") -> History:
    """The :class:`History` of ``sku`` (empty: every item, or every item at ``place``) over
    ``period`` words or the days ``since``–``until``, charted ``by`` day or week (empty: days up to
    :data:`DAYS_CHARTED`, else weeks)."""
    if sku and store.get(sku) is None:
        return History(problem=f"There is no item with SKU {sku}.")
    if sku and place:
        return History(problem="Choose an item or a place, not both.")
    location = None
    if place:
        location = next((p for p in places(store) if p.lower() == place.lower()), None)
        if location is None:
            return History(problem=f"No item is kept at a place called {place!r}.")
    if since:
        try:
            first = date.fromisoformat(since)
            last = date.fromisoformat(until) if until else store.calendar.now().date()
        except ValueError:
            return History(problem=f"since/until: {since!r} or {until!r} is not a date; fix: YYYY-MM-DD, e.g. 2026-11-30")
        try:
            fixed = between(first, last, store.calendar.tz, ("since", "until"))
        except ValueError as e:
            return History(problem=f"{e}.")
    else:
        cal = store.calendar
        fixed = typed(period or "this week", cal.clock(), cal.tz, cal.week_start)
        if isinstance(fixed, Unresolved):
            return History(problem=fixed.ask)
    if by not in ("", "day", "week"):
        return History(problem=f"Chart by: {by!r} is not day or week.")
    by = by or ("day" if fixed.days() <= DAYS_CHARTED else "week")
    try:
        chart = series(store, sku or None, fixed, by, location)
    except ValueError as e:
        return History(problem=f"Chart: {e}.")
    summary = answer(store, Question("total", "any", sku, period_fixed=fixed)) if sku else None
    entries = answer(store, Question("entries", "any", sku or None, limit=200, period_fixed=fixed, location=location)) \
        if with_entries else None
    return History(summary, entries, chart, None)


def chart_csv(chart: dict) -> str:
    """The chart's buckets as CSV: ``start,end,used,received,stock`` (an item, in its ``unit``) or
    ``start,end,records`` (every item); times local ISO 8601."""
    buf = io.StringIO()
    cols = ["used", "received", "stock"] if "sku" in chart else ["records"]
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["start", "end", *cols] + (["unit"] if "sku" in chart else []))
    for b in chart["buckets"]:
        w.writerow([b["start"], b["end"], *(b[c] for c in cols)] + ([chart["unit"]] if "sku" in chart else []))
    return buf.getvalue()
