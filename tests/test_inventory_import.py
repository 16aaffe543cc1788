"""Importing an inventory CSV again: the items the file leaves out are kept and named, ``--prune``
removes those no record names, and names that differ only by accents are warned about. Real
SQLite store, ``edge inventory import`` run as a child process."""
from __future__ import annotations

import subprocess
import sys

import pytest

from edge.stock.store import Store
from tests.helpers import INVENTORY, REPO

HEADER = "sku,item,location,quantity,unit,aliases\n"


def edge(*args) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "edge.cli", *map(str, args)], cwd=REPO, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r


@pytest.fixture
def cfg(tmp_path):
    p = tmp_path / "edge.yaml"
    p.write_text(f"board: x86-dev\nstore: {{path: {tmp_path / 'edge.db'}}}\nllm: {{engine: none}}\n")
    return p


def without(tmp_path, *skus: str):
    """The shared inventory with the rows of ``skus`` left out."""
    lines = [line for line in INVENTORY.read_text().splitlines(keepends=True) if line.split(",", 1)[0] not in skus]
    path = tmp_path / "short.csv"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_items_left_out_of_a_new_import_are_kept_and_named(cfg, tmp_path):
    assert edge("inventory", "import", INVENTORY, "--config", cfg).stdout.splitlines() == [
        f"imported 10 items from {INVENTORY} into {tmp_path / 'edge.db'}"]  # nothing left out, nothing sounds alike
    out = edge("inventory", "import", without(tmp_path, "FUS-5A", "GOG-SAF"), "--config", cfg).stdout.splitlines()
    assert out[0].startswith("imported 8 items from")
    assert out[1:] == ["2 items in the store are not in this file: kept (--prune removes those with no stock "
                       "records): FUS-5A, GOG-SAF"]
    with Store(tmp_path / "edge.db") as s:
        assert s.get("FUS-5A").quantity == 60 and s.get("GOG-SAF").quantity == 8 and len(s.items()) == 10


def test_prune_removes_only_the_left_out_items_no_record_names(cfg, tmp_path):
    edge("inventory", "import", INVENTORY, "--config", cfg)
    edge("ask", "we used two fuses", "--config", cfg)  # FUS-5A now has a record in the history
    with Store(tmp_path / "edge.db") as s:
        version = s.items_version()
    out = edge("inventory", "import", without(tmp_path, "FUS-5A", "GOG-SAF", "PNT-WHT"), "--prune",
               "--config", cfg).stdout.splitlines()
    assert out[1:] == [
        "removed 2 items in the store that are not in this file and never moved: GOG-SAF, PNT-WHT",
        "1 item in the store is not in this file but has stock records: kept: FUS-5A"]
    with Store(tmp_path / "edge.db") as s:
        assert s.get("GOG-SAF") is None and s.get("PNT-WHT") is None
        assert s.place_contents("shelf B", 5) == ([], 0)  # its place went with it
        assert s.get("FUS-5A").quantity == 58 and [(r.sku, r.delta) for r in s.records()] == [("FUS-5A", -2)]
        assert len(s.items()) == 8 and s.items_version() != version  # the voice loop rebuilds its grammar


def test_names_that_differ_only_by_accents_are_imported_with_a_warning(cfg, tmp_path):
    first = tmp_path / "a.csv"
    first.write_text(HEADER + "MUL-1,Muller clamp,bin 3,10,pcs,\nCAF-1,café sign,shelf A,2,pcs,\n", encoding="utf-8")
    edge("inventory", "import", first, "--config", cfg)
    second = tmp_path / "b.csv"  # Müller now, with Muller (kept in the store) and a sign without its accent
    second.write_text(HEADER + "MUL-2,Müller clamp,bin 4,20,pcs,\nCAF-2,Cafe sign,shelf B,1,pcs,\n"
                      "SCR-A,Schrauben Ä,bin 5,1,pcs,\nSCR-O,Schrauben Ö,bin 6,1,pcs,\n", encoding="utf-8")
    out = edge("inventory", "import", second, "--config", cfg).stdout.splitlines()
    assert out[2:] == [
        "warning: MUL-1 'Muller clamp' and MUL-2 'Müller clamp' sound the same when spoken; the box will ask "
        "which one by place or SKU",
        "warning: CAF-1 'café sign' and CAF-2 'Cafe sign' sound the same when spoken; the box will ask which one "
        "by place or SKU"]  # Ä and Ö are two sounds: no warning
    with Store(tmp_path / "edge.db") as s:
        assert {i.sku for i in s.items()} == {"MUL-1", "MUL-2", "CAF-1", "CAF-2", "SCR-A", "SCR-O"}
