"""``edge records summary|list`` and ``edge status``'s low stock, run as a user runs them (a child
process) on a store whose records were written at chosen times (an injected clock)."""
from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from edge.stock.periods import Calendar
from edge.stock.store import Store
from tests.helpers import REPO

BERLIN = ZoneInfo("Europe/Berlin")


def edge(*args, check=True) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "edge.cli", *map(str, args)], cwd=REPO, capture_output=True,
                       text=True, timeout=300)
    if check:
        assert r.returncode == 0, r.stderr
    return r


@pytest.fixture
def cfg(tmp_path):
    at = {"t": datetime(2026, 11, 30, 9, 0, tzinfo=BERLIN)}
    csv = tmp_path / "inv.csv"
    csv.write_text("sku,item,location,quantity,unit,aliases\nDRL-6,drill bit,drawer 4,20,pcs,drill bits\n"
                   "PNT-WHT,white paint,shelf F,1,can,paint\n")
    with Store(tmp_path / "edge.db", clock=lambda: at["t"], calendar=Calendar(BERLIN, 0, lambda: at["t"])) as s:
        s.import_csv(csv)
        s.log("DRL-6", -3, "3 drill bits", "a")
        at["t"] = datetime(2026, 11, 30, 23, 59, 59, tzinfo=BERLIN)  # the last second of Monday
        s.log("DRL-6", 10, "10 drill bits in", "b")
        at["t"] = datetime(2026, 12, 1, 0, 0, 0, tzinfo=BERLIN)  # the first of Tuesday
        s.log("DRL-6", -2, "2 drill bits", "c")
        s.log("DRL-6", -4, "4 drill bits", "d")
        s.undo("undo that", "e")  # the 4 never count
        s.log("PNT-WHT", -1, "the last can", "f")
    p = tmp_path / "edge.yaml"
    p.write_text(f"board: x86-dev\nstore: {{path: {tmp_path / 'edge.db'}, timezone: Europe/Berlin}}\n")
    return p


def test_summary_json_gives_the_same_figures_as_a_plain_reading(cfg):
    monday = json.loads(edge("records", "summary", "--config", cfg, "--item", "DRL-6", "--since", "2026-11-30",
                             "--until", "2026-11-30", "--json").stdout)
    assert monday["facts"]["used"] == 3 and monday["facts"]["received"] == 10 and monday["facts"]["net"] == 7
    assert monday["period"]["start"] == "2026-11-30T00:00:00+01:00" and monday["period"]["end"] == "2026-12-01T00:00:00+01:00"
    assert monday["facts"]["receive_times"] == ["2026-11-30T23:59:59+01:00"]
    both = json.loads(edge("records", "summary", "--config", cfg, "--item", "DRL-6", "--since", "2026-11-30",
                           "--until", "2026-12-01", "--json").stdout)
    assert both["facts"]["used"] == 5 and both["facts"]["logs"] == 3  # the undone 4 and the undo are not there
    text = edge("records", "summary", "--config", cfg, "--item", "DRL-6", "--since", "2026-12-01",
                "--until", "2026-12-01").stdout
    assert "used      2 pcs" in text and "received  0 pcs" in text


def test_list_and_bad_input_name_the_flag(cfg):
    out = json.loads(edge("records", "list", "--config", cfg, "--since", "2026-11-30", "--until", "2026-12-01",
                          "--json").stdout)
    assert out["facts"]["total"] == 4 and [e["delta"] for e in out["facts"]["entries"]] == [-1, -2, 10, -3]
    bad = edge("records", "summary", "--config", cfg, "--item", "DRL-6", "--since", "30/11/2026", check=False)
    assert bad.returncode == 2 and "--since '30/11/2026' is not a date" in bad.stderr
    unknown = edge("records", "summary", "--config", cfg, "--item", "NOPE", "--since", "2026-11-30", check=False)
    assert unknown.returncode == 2 and "--item 'NOPE'" in unknown.stderr


def test_status_lists_what_is_out_of_stock_without_a_reorder_level(cfg):
    st = json.loads(edge("status", "--config", cfg, "--interval", "0", "--json").stdout)
    assert st["low_stock"] == {"total": 1, "items": [{"sku": "PNT-WHT", "quantity": 0, "unit": "can", "why": "out of stock"}]}


def test_far_dates_are_refused_naming_the_flag_and_the_range(cfg):
    for cmd, flag, day in (("summary", "--until", "9999-12-31"), ("list", "--since", "0001-01-01")):
        args = ["records", cmd, "--config", cfg, "--since", "2026-01-01", "--until", "2026-12-31"]
        args[args.index(flag) + 1] = day
        if cmd == "summary":
            args += ["--item", "DRL-6"]
        r = edge(*args, check=False)
        assert r.returncode == 2, r.stderr
        assert f"{flag} {day} is outside the dates the records can hold; fix: a date from 1970-01-01 to 2199-12-31" \
            in r.stderr and "Traceback" not in r.stderr
