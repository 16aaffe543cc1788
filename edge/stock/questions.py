"""A records question and its answer as plain facts: the one path the voice, ``edge ask``, Wyoming,
the console and ``edge records`` all take (the wording is :mod:`edge.stages.records_reply`'s).

:func:`answer` resolves the period said in the store's :class:`edge.stock.periods.Calendar`, reads
the records once (:mod:`edge.stock.history`) and returns an :class:`Answer` whose ``facts`` are
JSON-ready (times in the local zone, ISO 8601). A period it cannot resolve, or a question that needs
one and has none, comes back with ``ask`` set (the question to put back) and no facts: never guessed.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime

from edge.stock import history
from edge.stock.periods import Period, Unresolved, bucket_count, buckets, utc_iso
from edge.stock.places import clean

__all__ = ["Question", "Answer", "answer", "series", "KINDS", "RATE_DAYS", "needs_period", "MAX_BUCKETS"]

#: The questions: ``total`` (how many used / received / moved / counted over a period), ``last``
#: (when last, and how many), ``entries`` (what was logged over a period, or the last N), ``top``
#: (the items used or received most over a period), ``who`` (which box logged the latest movement),
#: ``change`` (how much the stock changed over a period), ``rate`` (average use per day and week,
#: and the days of stock left at that rate).
KINDS = ("total", "last", "entries", "top", "who", "change", "rate")
#: Days of records an estimate of use reads when no period is said (four whole weeks).
RATE_DAYS = 28
#: The most days or weeks one :func:`series` reads (two years of weeks).
MAX_BUCKETS = 106


@dataclass(frozen=True)
class Question:
    """``kind``: one of :data:`KINDS`. ``what``: ``used``, ``received``, ``moved``, ``counted`` or
    ``any``. ``sku``: the item (None for ``entries`` and ``top``). ``period``: the period words as
    said (:func:`edge.stock.periods.find_period`), or None. ``period_fixed``: an already resolved
    period (the CLI's ``--since``/``--until``). ``mine``: this box's records only. ``limit``: how
    many entries or top items. ``location``: the totals or entries of one place (as stored) only.
    ``listed``: a ``top`` question asked as "what came in" (every item said, not "the most")."""

    kind: str
    what: str = "used"
    sku: str | None = None
    period: str | None = None
    mine: bool = False
    limit: int = 3
    period_fixed: Period | None = field(default=None, compare=False)
    location: str | None = None
    listed: bool = False


@dataclass(frozen=True)
class Answer:
    """``question``; ``period`` resolved (None when none was needed); ``ask``/``ask_zh``: the
    question to put back instead of an answer; ``facts``: what the records say (JSON-ready)."""

    question: Question
    period: Period | None = None
    ask: str | None = None
    ask_zh: str | None = None
    facts: dict = field(default_factory=dict)

    def as_json(self) -> dict:
        """The answer as plain data (``edge records … --json``, the console)."""
        q = {k: v for k, v in asdict(self.question).items() if k != "period_fixed"}
        p = None if self.period is None else {"start": self.period.start.isoformat(), "end": self.period.end.isoformat(),
                                             "words": self.period.words}
        return {"question": q, "period": p, "ask": self.ask, "facts": self.facts}


def needs_period(q: Question) -> bool:
    """Whether ``q`` is about a period (a total, top items, a change, or entries not "the last N")."""
    return q.kind in ("total", "top", "change") or (q.kind == "entries" and q.period is not None)


def answer(store, q: Question) -> Answer:
    """The answer to ``q`` from ``store``'s records (:class:`edge.stock.store.Store`). Raises
    :class:`edge.stock.store.StoreError` when the store cannot be read."""
    cal = store.calendar
    period: Period | None = q.period_fixed
    if period is None and q.period is not None:
        got = cal.resolve(q.period)
        if isinstance(got, Unresolved):
            return Answer(q, ask=got.ask, ask_zh=got.ask_zh)
        period = got
    if period is None and needs_period(q):
        return Answer(q, ask="Over which period? Say today, this week, last week or this month.",
                      ask_zh="哪一段时间？请说今天、这周、上周或这个月。")
    if q.kind == "rate" and period is None:  # an estimate reads the last four weeks unless told
        period = cal.resolve(f"over the last {RATE_DAYS} days")
    with store.reading() as conn:
        facts = _facts(conn, store, q, period)
    if q.kind == "rate":
        item = store.get(q.sku)
        have = item.quantity if item is not None else 0
        facts["quantity"] = have
        facts["days_left"] = round(have / facts["per_day"], 1) if facts["per_day"] > 0 and have > 0 else None
    return Answer(q, period, facts=facts)


def _facts(conn, store, q: Question, period: Period | None) -> dict:
    cal = store.calendar
    bounds = period.utc_bounds() if period is not None else (None, None)

    def local(iso: str) -> str:
        return cal.local(iso).isoformat(timespec="seconds")

    def event(e: history.Event | None) -> dict | None:
        return None if e is None else {"time": local(e.time), "sku": e.sku, "quantity": e.quantity, "delta": e.delta,
                                       "kind": e.kind, "box": e.box, "location": e.location, "counted": e.counted,
                                       "from": e.from_location}

    if q.kind == "total":
        t = history.totals(conn, q.sku, *bounds, q.location)
        return {"location": q.location, "used": t.used, "received": t.received, "net": t.net, "moved": t.moved, "counted": t.counted,
                "counts": t.counts, "logs": t.logs, "use_times": [local(x) for x in t.use_times],
                "receive_times": [local(x) for x in t.receive_times],
                "counts_at": [{"time": local(x), "counted": c, "difference": d} for x, c, d in t.counts_at]}
    if q.kind == "last":
        return {"event": event(history.last(conn, q.sku, q.what))}
    if q.kind == "who":
        return {"event": event(history.latest_movement(conn, q.sku)), "box": store.box}
    if q.kind == "entries":
        rows, total = history.entries(conn, *bounds, box=store.box if q.mine else None, sku=q.sku, limit=q.limit,
                                      location=q.location)
        return {"entries": [event(e) for e in rows], "total": total, "box": store.box if q.mine else None}
    if q.kind == "top":
        return {"top": history.top(conn, *bounds, what=q.what if q.what in ("used", "received") else "used")}
    if q.kind == "change":
        return {"change": history.change(conn, q.sku, *bounds)}
    if q.kind == "rate":
        used = history.totals(conn, q.sku, *bounds).used
        per_day = used / period.days()
        return {"used": used, "days": period.days(), "per_day": round(per_day, 3), "per_week": round(per_day * 7, 1)}
    raise ValueError(f"question kind {q.kind!r} is not one of {', '.join(KINDS)}")


def series(store, sku: str | None, period: Period, by: str = "day", location: str | None = None) -> dict:
    """Use over time for a chart: ``period`` cut into local days or weeks (``by``,
    :func:`edge.stock.periods.buckets`) and, for each, the figures of the ``total`` question
    (:func:`edge.stock.history.sums`, the same reads), JSON-ready.

    For an item (``sku``): ``{"sku", "unit", "by", "buckets": [{"start", "end", "label", "used",
    "received", "stock"}]}``, ``stock`` being the quantity at the bucket's end (the quantity now
    minus every record's delta since). For every item (``sku`` None): ``{"by", "buckets": [{"start",
    "end", "label", "records"}]}``, how many records stand (the ``entries`` question's total), at
    ``location`` only when given (a place as stored; ``"location"`` is then in the result).
    Raises ``ValueError`` for over :data:`MAX_BUCKETS` buckets (choose weeks or a shorter period),
    :class:`edge.stock.store.StoreError` when the store cannot be read."""
    n = bucket_count(period, by, store.calendar.week_start) if by in ("day", "week") else 0
    if n > MAX_BUCKETS:  # counted before any bucket is built: a period of centuries is refused at once
        fix = "choose weeks or a shorter period" if by == "day" and n <= MAX_BUCKETS * 7 else "choose a shorter period"
        raise ValueError(f"{n} {by}s are too many for one chart (at most {MAX_BUCKETS}); fix: {fix}")
    parts = buckets(period, by, store.calendar.week_start)
    cal = store.calendar
    rows = []
    item = store.get(sku) if sku else None
    now = utc_iso(cal.clock())
    with store.reading() as conn:
        first = conn.execute("SELECT MIN(time) FROM records WHERE sku = ?", (sku,)).fetchone()[0] if sku else None
        for b in parts:
            start, end = b.utc_bounds()
            row = {"start": b.start.isoformat(), "end": b.end.isoformat(), "label": b.words}
            if start >= now:  # a day still to come: blank, never a projected figure
                row.update({"used": None, "received": None, "change": 0} if sku else {"records": None})
                row["future"] = True
            elif sku:
                used, received, *_ = history.sums(conn, sku, start, end)
                row.update(used=used, received=received, change=history.change(conn, sku, start, end))
            elif location is not None:  # one place: no sums per place, the records themselves
                row["records"] = history.entries(conn, start, end, location=location, limit=0)[1]
            else:  # the entries question's count (a transfer's two rows are one entry)
                row["records"] = history.entries(conn, start, end, limit=0)[1]
            rows.append(row)
        if sku and rows:
            after = history.change(conn, sku, parts[-1].utc_bounds()[1], "9999")
    if sku:
        stock = (item.quantity if item is not None else 0) - after if rows else 0
        for row in reversed(rows):  # the quantity at each bucket's end, walking back from now
            # blank for a day to come and before the item's first record (it was not stocked then)
            before = first is None or utc_iso(datetime.fromisoformat(row["end"])) <= first
            row["stock"] = None if row.get("future") or before else clean(stock)
            stock -= row.pop("change")
    for row in rows:
        row.pop("future", None)
    out = {"by": by, "zone": str(cal.tz), "buckets": rows}
    if sku:
        out.update(sku=sku, unit=item.unit if item is not None else "")
    elif location is not None:
        out["location"] = location
    return out
