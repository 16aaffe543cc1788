"""How the box has been doing: a sample of its signals every minute, kept in a small bounded ring.

:func:`take` reads one :class:`Sample` (the governor's signals: zone temperatures, memory in use,
CPU and NPU load, thermal level; and the live service's turn counter from its state file).
:class:`Ring` keeps the latest :data:`MAX_SAMPLES` of them in an SQLite file in the state folder
(next to the live service's state file: ``/run/edge``, a tmpfs, on an installed box), so the
Status page draws the last hour and the last day; :class:`Sampler` takes one every
:data:`INTERVAL_S` seconds on a thread while the console is served.
"""
from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from edge.service.runstate import read_state

log = logging.getLogger("edge.service.console")

#: s between samples.
INTERVAL_S = 60.0
#: Samples kept: a day and a bit at one a minute (about 300 KiB).
MAX_SAMPLES = 1500
#: The ring's file name, in the state folder.
RING_FILE = "console-samples.db"


@dataclass(frozen=True)
class Sample:
    """One reading. ``t``: s since the epoch; ``level``: thermal level (0 normal, 1 warm, 2 hot);
    ``zones``: °C by zone name; ``mem_used`` / ``mem_total``: bytes (MemTotal − MemAvailable, and
    MemTotal); ``cpu`` / ``npu``: mean load over the CPUs / NPU cores, 0..1; ``turns``: the live
    service's turns since it started. A value this machine cannot read is None (a zone left out)."""

    t: float
    level: int | None = None
    zones: dict[str, float] = field(default_factory=dict)
    mem_used: int | None = None
    mem_total: int | None = None
    cpu: float | None = None
    npu: float | None = None
    turns: int | None = None


def _mean(values) -> float | None:
    vals = [float(v) for v in values if isinstance(v, (int, float))]
    return round(sum(vals) / len(vals), 4) if vals else None


def take(governor, state_file: Path | None, clock=time.time) -> Sample:
    """A :class:`Sample` now from ``governor`` (an :class:`edge.governor.governor.Governor`, or
    None) and the live service's ``state_file`` (or None). Never raises: what cannot be read is None."""
    level = cpu = npu = mem_used = mem_total = turns = None
    zones: dict[str, float] = {}
    if governor is not None:
        try:
            governor.sample()
            st = governor.status()
            sig = st.get("signals") or {}
            level = st.get("level_value")
            zones = {z.get("type") or z["name"]: z["temp_c"] for z in sig.get("thermal") or [] if z.get("temp_c") is not None}
            mem = sig.get("mem") or {}
            if mem.get("total_bytes") is not None and mem.get("available_bytes") is not None:
                mem_total, mem_used = mem["total_bytes"], mem["total_bytes"] - mem["available_bytes"]
            cpu = _mean(((sig.get("cpu") or {}).get("load") or {}).values())
            npu = _mean((((sig.get("npu") or {}).get("load")) or {}).values())
        except Exception as e:  # a sample is never worth a crash: the gap shows on the chart
            log.warning("console sample: governor unreadable: %s", e)
    if state_file is not None:
        try:
            st = read_state(state_file)
            turns = int(st["turns"]) if st.get("running") and isinstance(st.get("turns"), int) else None
        except Exception as e:
            log.warning("console sample: state file unreadable: %s", e)
    return Sample(clock(), level if isinstance(level, int) else None, zones, mem_used, mem_total, cpu, npu, turns)


class Ring:
    """The latest ``size`` samples in the SQLite file ``path`` (created on first use). Thread-safe."""

    def __init__(self, path: Path, size: int = MAX_SAMPLES):
        self.path, self.size = Path(path), int(size)
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS samples (t REAL PRIMARY KEY, data TEXT NOT NULL)")

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=5.0)

    def add(self, s: Sample) -> None:
        """Keep ``s``; the oldest beyond ``size`` are dropped in the same transaction."""
        with self._lock, self._connect() as conn:
            conn.execute("INSERT OR REPLACE INTO samples (t, data) VALUES (?, ?)", (s.t, json.dumps(asdict(s))))
            conn.execute("DELETE FROM samples WHERE t < (SELECT t FROM samples ORDER BY t DESC LIMIT 1 OFFSET ?)",
                         (self.size - 1,))

    def since(self, t0: float) -> list[Sample]:
        """The samples taken at or after ``t0`` (s since the epoch), oldest first."""
        with self._lock, self._connect() as conn:
            rows = conn.execute("SELECT data FROM samples WHERE t >= ? ORDER BY t", (t0,)).fetchall()
        return [Sample(**json.loads(d)) for (d,) in rows]

    def latest(self) -> Sample | None:
        with self._lock, self._connect() as conn:
            row = conn.execute("SELECT data FROM samples ORDER BY t DESC LIMIT 1").fetchone()
        return None if row is None else Sample(**json.loads(row[0]))

    def __len__(self) -> int:
        with self._lock, self._connect() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0])


class Sampler:
    """Takes a sample into ``ring`` now and every ``interval_s`` s on a daemon thread until :meth:`stop`."""

    def __init__(self, ring: Ring, governor, state_file: Path | None, interval_s: float = INTERVAL_S):
        self.ring, self.governor, self.state_file, self.interval_s = ring, governor, state_file, float(interval_s)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="console-sampler")

    def start(self) -> Sampler:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.ring.add(take(self.governor, self.state_file))
            except Exception as e:  # a full disk or a removed folder: try again next time
                log.warning("console sample not kept: %s", e)
            self._stop.wait(self.interval_s)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5.0)
