"""bench/fleet.py on a small fleet: it runs end to end against a real PostgreSQL, writes its JSON and
PNG, and its invariants (nothing lost, nothing doubled, one stock) hold."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests import pgserver
from tests.helpers import INVENTORY, REPO

pytestmark = [
    pytest.mark.skipif(not pgserver.available(), reason="PostgreSQL 15 not installed (apt-get install postgresql)"),
    pytest.mark.skipif(not INVENTORY.is_file(), reason=f"missing {INVENTORY}"),
]


def test_a_small_fleet_benchmark(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "bench/fleet.py", "--boxes", "2", "--records", "30", "--offline", "200",
                        "--out", str(tmp_path)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    result = json.loads((tmp_path / "fleet.json").read_text())
    assert result["invariants"] == {"records_lost": 0, "records_duplicated": 0, "site_records": 2 * 30 + 200,
                                    "same_stock_on_every_box": True}
    assert result["visibility_ms"]["samples"] == 2 * 30 and result["catch_up"]["offline_records"] == 200
    assert (tmp_path / "fleet.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
