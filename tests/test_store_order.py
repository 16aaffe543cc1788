"""Record order and stock never follow the wall clock backwards (edge.stock.order): a real SQLite
store with an injected clock, a second store fed the same records, Debian's faketime on a real
process, and a time-zone change in a running process."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from helpers import INVENTORY, REPO

from edge.site.status import site_status, step_back_line
from edge.stages.reply import clock_time
from edge.stock.store import Store

T0 = datetime(2026, 11, 30, 10, 0, tzinfo=timezone.utc)


class Clock:
    """A wall clock the test steps back and forth."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at

    def step(self, **kw) -> None:
        self.at += timedelta(**kw)


def test_a_step_back_after_a_count_still_counts_the_new_logs(tmp_path: Path) -> None:
    clock = Clock(T0)
    with Store(tmp_path / "a.db", clock=clock, box="goods-in") as s:
        s.import_csv(INVENTORY)
        s.count("FUS-5A", 50, "count 50 fuses", "t1")
        clock.step(minutes=1)
        assert s.log("FUS-5A", -3, "we used 3 fuses", "t2")[1].quantity == 47
        clock.step(hours=-3)  # an NTP correction
        rec, item = s.log("FUS-5A", -3, "we used 3 fuses", "t3")
        assert item.quantity == 44
        assert rec.time < s.records()[-2].time  # the label is the wall clock's...
        clock.step(days=-20000)  # a board without a battery-backed clock, booted in 1970
        assert s.log("FUS-5A", 2, "we received 2 fuses", "t4")[1].quantity == 46
        clock.at = T0 + timedelta(hours=2)  # then synced forward again
        assert s.count("FUS-5A", 40, "count 40 fuses", "t5")[1].quantity == 40
        clock.step(hours=-5)
        assert s.log("FUS-5A", -1, "we used 1 fuse", "t6")[1].quantity == 39
        moves = s.movements("goods-in")
        assert [m.gid for m in moves] == sorted(m.gid for m in moves)  # ...the order is the sequence's
        step = s.clock_step_back()
        assert step is not None and step["back_s"] == pytest.approx(5 * 3600, abs=1)
        st = site_status(s)
        assert st["clock_step_back"] == step
        assert "stepped back 5.0 h" in step_back_line(step)[0]
        # another box holding the same records holds the same stock
        with Store(tmp_path / "b.db", box="yard") as other:
            other.import_csv(INVENTORY)
            other.apply(moves)
            assert other.get("FUS-5A").quantity == 39


def test_a_record_comes_after_what_its_box_pulled(tmp_path: Path) -> None:
    """A box whose clock is an hour behind another's: its log written after it pulled the other's
    count is later than that count, on both boxes."""
    with Store(tmp_path / "a.db", clock=lambda: T0, box="yard") as a, \
            Store(tmp_path / "b.db", clock=lambda: T0 - timedelta(hours=1), box="goods-in") as b:
        a.import_csv(INVENTORY)
        b.import_csv(INVENTORY)
        a.count("FUS-5A", 50, "count 50 fuses", "t1")
        b.apply(a.movements("yard"))
        assert b.log("FUS-5A", -3, "we used 3 fuses", "t2")[1].quantity == 47
        a.apply(b.movements("goods-in"))
        assert a.get("FUS-5A").quantity == 47


def test_no_step_back_is_reported_while_the_clock_goes_forward(tmp_path: Path) -> None:
    clock = Clock(T0)
    with Store(tmp_path / "a.db", clock=clock) as s:
        s.import_csv(INVENTORY)
        for n in range(3):
            clock.step(seconds=1)
            s.log("FUS-5A", -1, "we used 1 fuse", f"t{n}")
        assert s.clock_step_back() is None


_LOG = """
import sys
from edge.stock.store import Store
with Store(sys.argv[1]) as s:
    if sys.argv[2] == "count":
        s.count("FUS-5A", 50, "count 50 fuses", sys.argv[3])
    else:
        s.log("FUS-5A", -3, "we used 3 fuses", sys.argv[3])
    print(s.get("FUS-5A").quantity, s.records()[-1].time)
"""


@pytest.mark.skipif(shutil.which("faketime") is None, reason="Debian's faketime is not installed (scripts/setup.sh)")
def test_faketime_steps_the_real_clock_back_and_forth(tmp_path: Path) -> None:
    db = tmp_path / "edge.db"
    with Store(db) as s:
        s.import_csv(INVENTORY)
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    def run(at: str, what: str, turn: str) -> tuple[str, str]:
        out = subprocess.run(["faketime", at, sys.executable, "-c", _LOG, str(db), what, turn], env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        quantity, at_label = out.stdout.split()
        return quantity, at_label

    assert run("2026-11-30 10:00:00", "count", "t1")[0] == "50"
    assert run("2026-11-30 10:01:00", "log", "t2")[0] == "47"
    quantity, label = run("2026-11-30 07:00:00", "log", "t3")  # stepped back 3 h
    assert quantity == "44" and label.startswith("2026-11-30T07:00")
    assert run("2026-11-30 12:00:00", "log", "t4")[0] == "41"
    with Store(db) as s:
        assert s.get("FUS-5A").quantity == 41
        assert s.clock_step_back()["from"].startswith("2026-11-30T10:01")


def test_spoken_times_follow_a_zone_change_in_a_running_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    assert clock_time("2026-11-30T09:00:00+00:00") == "09:00"
    monkeypatch.setenv("TZ", "Asia/Tokyo")  # the system's zone changes; nothing in the process calls tzset
    try:
        assert clock_time("2026-11-30T09:00:00+00:00") == "18:00"
        from edge.service.console.data import local_time

        assert local_time("2026-11-30T09:00:00+00:00") == "2026-11-30 18:00:00"
    finally:
        monkeypatch.undo()
        time.tzset()


def test_edge_status_shows_a_step_back(tmp_path: Path) -> None:
    clock = Clock(T0)
    db = tmp_path / "edge.db"
    with Store(db, clock=clock) as s:
        s.import_csv(INVENTORY)
        s.log("FUS-5A", -3, "we used 3 fuses", "t1")
        clock.step(hours=-2)
        s.log("FUS-5A", -3, "we used 3 fuses", "t2")
    cfg = tmp_path / "edge.yaml"
    cfg.write_text(f"board: x86-dev\nstore: {{path: {db}}}\nllm: {{engine: none}}\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    runs = [subprocess.run([sys.executable, "-m", "edge.cli", "status", "--config", str(cfg), *extra], cwd=REPO,
                           capture_output=True, text=True, timeout=120, env=env) for extra in ((), ("--json",))]
    assert "clock: the wall clock stepped back 2.0 h" in runs[0].stdout, runs[0].stderr
    assert json.loads(runs[1].stdout)["clock_step_back"]["back_s"] == 7200
