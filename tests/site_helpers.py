"""Shared parts of the site tests: a PostgreSQL server per module, a fresh site database per test,
boxes (a store file + its ``edge site sync`` process) and the invariants of a site."""
from __future__ import annotations

import itertools
import signal
import subprocess
import sys
import threading
from pathlib import Path

import psycopg
import yaml

from edge.config import load_settings
from edge.site.server import init_schema
from edge.site.sync import waiting
from edge.stock.store import Movement, Store
from tests.helpers import INVENTORY, REPO
from tests.pgserver import PgServer

HANG_S = 120  # s, bound on every subprocess and every wait
_dbs = itertools.count()


def run_server():
    """A module fixture's body: one PostgreSQL for the module, removed after it."""
    pg = PgServer()
    pg.start()
    yield pg
    pg.destroy()


def new_site_db(server: PgServer) -> str:
    """A test fixture's body: a fresh database on the module's server, with the site schema; its DSN."""
    if not server.running():
        server.start()
    name = f"site{next(_dbs)}"
    with psycopg.connect(server.dsn, autocommit=True) as c:
        c.execute(f"CREATE DATABASE {name}")
    d = server.dsn.replace("dbname=edge", f"dbname={name}")
    with psycopg.connect(d, autocommit=True) as c:
        init_schema(c)
    return d


class Box:
    """One box: a store file, its config, and (when started) its ``edge site sync`` process."""

    def __init__(self, root: Path, name: str, dsn: str, clock=None, **site: object) -> None:
        self.name = name
        self.clock = clock
        self.db = root / name / "edge.db"
        self.config = root / name / "config.yaml"
        self.db.parent.mkdir(parents=True)
        self.site = {"box": name, "dsn": dsn, "poll_ms": 20, "pull_every_s": 3600, "retry_max_s": 0.5, **site}
        self.config.write_text(yaml.safe_dump({"store": {"path": str(self.db)}, "site": self.site}))
        self.proc: subprocess.Popen | None = None
        self.turns = itertools.count()
        with self.store() as s:
            s.import_csv(INVENTORY)

    def store(self) -> Store:
        return Store(self.db, box=self.name, **({"clock": self.clock} if self.clock else {}))

    def settings(self):
        return load_settings(self.config).site

    def start(self) -> None:
        """Start ``edge site sync``; its stderr lines (the reported failures) collect in :attr:`errors`."""
        self.proc = subprocess.Popen([sys.executable, "-m", "edge.cli", "site", "sync", "--config", str(self.config)],
                                     cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.errors: list[str] = []
        self._reader = threading.Thread(target=lambda p=self.proc: self.errors.extend(iter(p.stderr.readline, "")),
                                        daemon=True)
        self._reader.start()

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc is not None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=HANG_S)
            self._reader.join(timeout=HANG_S)
            self.proc.stderr.close()
            self.proc = None

    def log(self, n: int, undo_every: int = 0) -> list[str]:
        """``n`` turns on this box (every ``undo_every``-th an undo); the gids written."""
        skus = ["FUS-5A", "SPN-10", "BLT-M8-30", "TIE-CBL-200"]
        with self.store() as s:
            for _ in range(n):
                t = next(self.turns)
                if undo_every and t % undo_every == undo_every - 1:
                    s.undo("undo", f"{self.name}-{t}")
                else:
                    s.log(skus[t % len(skus)], (-1) ** t * (t % 5 + 1), "a turn", f"{self.name}-{t}")
            return [m.gid for m in s.movements(self.name)]

    def sync_once(self) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "edge.cli", "site", "sync", "--once", "--json", "--config",
                               str(self.config)], cwd=REPO, capture_output=True, text=True, timeout=HANG_S)


def server_history(dsn: str) -> list[Movement]:
    with psycopg.connect(dsn) as c:
        rows = c.execute("SELECT gid, box, seq, time, sku, delta, utterance, turn_id, undoes, location, kind, "
                         "counted, op FROM edge_movements ORDER BY box, seq").fetchall()
    return [Movement(*r) for r in rows]


def on_server(dsn: str) -> int:
    """Records on the server; 0 while it cannot be reached."""
    try:
        with psycopg.connect(dsn, connect_timeout=5) as c:
            return c.execute("SELECT count(*) FROM edge_movements").fetchone()[0]
    except psycopg.OperationalError:
        return 0


def converged(dsn: str, boxes: list[Box]) -> bool:
    """Every box holds exactly the server's history."""
    try:
        n = len(server_history(dsn))
    except psycopg.OperationalError:
        return False
    for b in boxes:
        with b.store() as s:
            if len(s.movements()) != n or waiting(s):
                return False
    return True


def check_site(dsn: str, boxes: list[Box], written: dict[str, list[str]], extra_items: dict | None = None) -> None:
    """The invariants; ``written``: the gids each box acknowledged to its caller; ``extra_items``:
    {sku: imported count} of items imported besides the shared inventory CSV."""
    history = server_history(dsn)
    gids = [m.gid for m in history]
    assert len(gids) == len(set(gids)), "doubled on the server"
    for box in {m.box for m in history}:
        assert [m.seq for m in history if m.box == box] == list(range(1, 1 + sum(m.box == box for m in history)))
    union, stocks = set(), []
    for b in boxes:
        with b.store() as s:
            held = s.movements()
            assert len(held) == len({m.gid for m in held}), f"doubled on box {b.name}"
            assert set(held) == set(history), f"box {b.name} differs from the server"
            union |= {m for m in held if m.box == b.name}
            stocks.append({i.sku: i.quantity for i in s.items()})
    assert union == set(history), "the server's history is not the union of the boxes'"
    assert all(st == stocks[0] for st in stocks), "boxes report different stock"
    with Store(boxes[0].db) as s:  # stock = imported counts + every box's movements
        base = {i.sku: i.quantity for i in s.items()}
    for m in history:
        base[m.sku] -= m.delta
    for box, mine in written.items():
        assert set(mine) <= set(gids), f"records of box {box} lost"
    fresh = Store(boxes[0].db.parent / "baseline.db")  # a box that only imported the CSV
    try:
        fresh.import_csv(INVENTORY)
        assert base == {**{i.sku: i.quantity for i in fresh.items()}, **(extra_items or {})}
    finally:
        fresh.close()
        for p in boxes[0].db.parent.glob("baseline.db*"):
            p.unlink()


