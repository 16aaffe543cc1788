"""A generated site history for the records evaluation and benchmark, and the truth computed from it
by a plain Python pass (no product query code).

:func:`make_site` writes months of history from three boxes through the real store (logs in and
out, transfers, spoken counts, undos, records at 00:00:00 and 23:59:59), each box in its own
store with an injected clock, then pulls the other boxes' records into the asked box's store
(:meth:`edge.stock.store.Store.apply`), as a site does. Seeded: the same seed gives the same history.

:class:`Truth` reads the asked store's ``records`` table once (a plain ``SELECT``) and answers every
question kind by looping over the rows in Python.
"""
from __future__ import annotations

import random
import sqlite3
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from edge.stock.periods import Calendar
from edge.stock.store import Store

TZ = ZoneInfo("Europe/Berlin")
#: "Now" for every question: Friday 4 December 2026, 15:00 in Berlin.
NOW = datetime(2026, 12, 4, 15, 0, tzinfo=TZ)
START = date(2026, 8, 3)
BOXES = ("crib", "goods-in", "line-2")
# sku, name, unit, aliases (English; Chinese), two places
ITEMS = (
    ("DRL-6", "drill bit", "pcs", "drill bits;钻头", "drawer 4", "bin 40"),
    ("GLV-L", "nitrile gloves", "box", "gloves;手套", "shelf B", "shelf C"),
    ("FUS-5A", "fuse", "pcs", "fuses;保险丝", "bin 3", "bin 30"),
    ("WSH-M8", "washer", "pcs", "washers;垫圈", "bin 7", "bin 70"),
    ("PNT-WHT", "white paint", "can", "paint;白漆", "shelf F", "shelf G"),
    ("GOG-SAF", "safety goggles", "pcs", "goggles;护目镜", "shelf A", "shelf D"),
    ("TIE-300", "cable ties", "pack", "ties;扎带", "drawer 9", "drawer 10"),
    ("TAP-DCT", "duct tape", "roll", "tape;胶带", "shelf E", "shelf H"),
)


class _Clock:
    def __init__(self) -> None:
        self.at = datetime.combine(START, time(6), tzinfo=TZ)

    def __call__(self) -> datetime:
        return self.at


def _csv(path: Path) -> None:
    rows = ["sku,item,location,quantity,unit,aliases"]
    for sku, name, unit, aliases, a, b in ITEMS:
        rows.append(f"{sku},{name},{a},400,{unit},{aliases}")
        rows.append(f"{sku},{name},{b},100,{unit},{aliases}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def _times(rng: random.Random) -> list[tuple[datetime, str]]:
    """(local time, box) of every event, in time order: working hours, plus edge times."""
    out = []
    day = START
    while day <= NOW.date():
        n = rng.randint(6, 14)
        for _ in range(n):
            minute = rng.randint(6 * 60, 19 * 60)
            out.append((datetime.combine(day, time(minute // 60, minute % 60, rng.randint(0, 59)), tzinfo=TZ),
                        rng.choice(BOXES)))
        if day.weekday() in (0, 4):  # records on the day's edges: 00:00:00 and 23:59:59
            out.append((datetime.combine(day, time(0, 0, 0), tzinfo=TZ), rng.choice(BOXES)))
            out.append((datetime.combine(day, time(23, 59, 59), tzinfo=TZ), rng.choice(BOXES)))
        day += timedelta(days=1)
    return sorted(t for t in out if t[0] < NOW)


def make_site(folder: Path, seed: int = 7) -> Store:
    """The asked box's store (``crib``) holding all three boxes' history; the caller closes it.
    ``folder``: an empty temp folder."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    _csv(folder / "inventory.csv")
    clocks = {b: _Clock() for b in BOXES}
    stores = {b: Store(folder / f"{b}.db", box=b, clock=clocks[b], calendar=Calendar(TZ, 0, clocks[b])) for b in BOXES}
    for s in stores.values():
        s.import_csv(folder / "inventory.csv")
    for n, (at, box) in enumerate(_times(rng)):
        clocks[box].at = at
        s = stores[box]
        sku, _name, _unit, _aliases, a, b = rng.choice(ITEMS)
        roll = rng.random()
        turn = f"g{n}"
        if roll < 0.62:
            s.log(sku, -rng.randint(1, 6), "used", turn, location=a)
        elif roll < 0.78:
            s.log(sku, rng.randint(5, 40), "came in", turn, location=a)
        elif roll < 0.85:
            s.transfer(sku, rng.randint(1, 5), b, a, "moved", turn)
        elif roll < 0.90:
            have = s.get(sku).at(a) or 0
            s.count(sku, max(0, have + rng.randint(-4, 4)), "counted", turn, location=a)
        else:
            s.undo("undo that", turn)
    main = stores["crib"]
    for b in BOXES[1:]:
        main.apply(stores[b].movements(box=b))
        stores[b].close()
    return main


@dataclass
class Row:
    id: int
    time: datetime  # local
    sku: str
    delta: float
    kind: str
    box: str
    undoes: int | None
    counted: float | None


def _num(x: float) -> int | float:
    return int(x) if float(x).is_integer() else round(x, 6)


class Truth:
    """Every answer computed by a plain pass over all rows of the store file at ``path``."""

    def __init__(self, path: Path):
        conn = sqlite3.connect(path)
        rows = conn.execute("SELECT id, time, sku, delta, kind, box, undoes, counted FROM records").fetchall()
        conn.close()
        self.rows = [Row(i, datetime.fromisoformat(t).astimezone(TZ), s, d, k, b, u, c) for i, t, s, d, k, b, u, c in rows]
        undone = {r.undoes for r in self.rows if r.undoes is not None}
        self.standing = [r for r in self.rows if r.kind != "undo" and r.id not in undone]

    def _in(self, start: datetime, end: datetime):
        return [r for r in self.standing if start <= r.time < end]

    def total(self, sku: str, what: str, start: datetime, end: datetime) -> dict:
        rows = [r for r in self._in(start, end) if r.sku == sku]
        if what == "used":
            return {"used": _num(sum(-r.delta for r in rows if r.kind == "log" and r.delta < 0))}
        if what == "received":
            return {"received": _num(sum(r.delta for r in rows if r.kind == "log" and r.delta > 0))}
        if what == "moved":
            return {"moved": _num(sum(r.delta for r in rows if r.kind == "transfer" and r.delta > 0))}
        counts = [r for r in rows if r.kind == "count"]
        return {"counts": len(counts), "counted": _num(sum(r.delta for r in counts))}

    def last(self, sku: str, what: str) -> dict:
        test = {"used": lambda r: r.kind == "log" and r.delta < 0, "received": lambda r: r.kind == "log" and r.delta > 0,
                "counted": lambda r: r.kind == "count", "moved": lambda r: r.kind == "transfer" and r.delta > 0,
                "any": lambda r: True}[what]
        hits = [r for r in self.standing if r.sku == sku and test(r)]
        if not hits:
            return {"event": None}
        r = max(hits, key=lambda r: (r.time, r.id))
        return {"time": r.time.isoformat(timespec="seconds"), "quantity": _num(abs(r.delta)), "box": r.box}

    def top(self, what: str, start: datetime, end: datetime) -> dict:
        sums: dict[str, float] = {}
        for r in self._in(start, end):
            if r.kind == "log" and (r.delta < 0 if what == "used" else r.delta > 0):
                sums[r.sku] = sums.get(r.sku, 0) + abs(r.delta)
        if not sums:
            return {"top_sku": None}
        sku = sorted(sums, key=lambda s: (-sums[s], s))[0]
        return {"top_sku": sku, "top_quantity": _num(sums[sku])}

    def entries(self, start: datetime, end: datetime, box: str | None = None) -> dict:
        # a transfer's two rows (out of one place, into another) are one entry
        return {"total": len([r for r in self._in(start, end) if (box is None or r.box == box)
                              and not (r.kind == "transfer" and r.delta < 0)])}

    def change(self, sku: str, start: datetime, end: datetime) -> dict:
        return {"change": _num(sum(r.delta for r in self.rows if r.sku == sku and start <= r.time < end))}
