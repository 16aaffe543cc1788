"""The stock room by voice, through the whole loop: each recording of tests/data/sessions_site (the
real "hey mycroft" clip, then a command in piper's joe voice, a voice the product does not use)
goes through ``edge run --input`` from a fresh store loaded from that folder's inventory.csv (60
items, some in two places); afterwards the store holds exactly the records expected.json names
(SKU, delta, place, kind) and each item's stock changed by their sum."""
from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from edge.stock.store import Store
from tests.helpers import REPO, SESSION_WAKE

SITE = REPO / "tests" / "data" / "sessions_site"
EXPECTED = json.loads((SITE / "expected.json").read_text(encoding="utf-8"))
NAMES = sorted(k for k in EXPECTED if not k.startswith("_"))
KINDS = {"transfer_out": "transfer", "transfer_in": "transfer", "stock_count": "count", "stocktake": "count"}


def initial_stock() -> dict[str, float]:
    out: dict[str, float] = defaultdict(float)
    with (SITE / "inventory.csv").open(newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            out[r["sku"]] += int(r["quantity"])
    return out


def record_view(r, store: Store) -> dict:
    """A record as expected.json writes it: its own place and kind; where the store's records have
    no place field at all (one place per item), the item's place, and no kind field: ``undo`` for
    a compensating record, else ``log``."""
    kind = getattr(r, "kind", None) or ("undo" if r.undoes is not None else "log")
    place = getattr(r, "place", None) or getattr(r, "location", None)
    if not hasattr(r, "place") and not hasattr(r, "location"):
        item = store.get(r.sku)
        place = item.location if item else None
    return {"sku": r.sku, "delta": float(r.delta), "place": " ".join(str(place).split()).casefold() if place else None,
            "kind": KINDS.get(kind, kind)}


def expected_view(r: dict) -> dict:
    return {"sku": r["sku"], "delta": float(r["delta"]), "place": r["place"].casefold(), "kind": r["kind"]}


def sort_key(r: dict):
    return (r["sku"], r["kind"], r["place"] or "", r["delta"])


def run_edge(wav: Path, tmp_path: Path) -> tuple[subprocess.CompletedProcess, list[dict]]:
    cfg = tmp_path / "site.yaml"
    cfg.write_text(f"board: x86-dev\n{SESSION_WAKE}store:\n  path: {tmp_path / 'edge.db'}\n", encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "edge.cli", "run", "--input", str(wav), "--config", str(cfg),
                        "--inventory", str(SITE / "inventory.csv"), "--output-dir", str(tmp_path / "out"), "--json"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600)
    events = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    return r, events


@pytest.mark.parametrize("name", NAMES)
def test_site_session_leaves_the_store_as_expected(name, tmp_path):
    exp = EXPECTED[name]
    r, events = run_edge(SITE / f"{name}.wav", tmp_path)
    heard = [e["text"] for e in events if e["type"] == "transcript"]
    assert r.returncode == 0, (r.stderr[-2000:], heard)
    assert not [e for e in events if e["type"] == "error"], events
    assert [e["wake_word"] for e in events if e["type"] == "wake"] == [exp["wake"]] * (1 + len(exp.get("then", [])))
    intents = [e["intent"] for e in events if e["type"] == "intent" and e.get("source") != "follow_up"]
    replies = " ".join(e["text"] for e in events if e["type"] == "reply")
    assert intents == exp["intents"], (intents, heard, replies)
    if exp.get("asks"):
        assert any(e["type"] == "state" and e["state"] == "follow_up" for e in events), (heard, replies)
    flat = re.sub(r"(?<=\d),(?=\d{3}\b)", "", replies).casefold()
    for word in exp.get("reply_contains", []):
        assert re.search(rf"(?<![0-9a-z]){re.escape(word.casefold())}(?![0-9a-z])", flat), (word, replies)
    if exp.get("reply_any"):
        assert any(w.casefold() in flat for w in exp["reply_any"]), (exp["reply_any"], replies)

    with Store(tmp_path / "edge.db") as store:
        got = sorted((record_view(x, store) for x in store.records()), key=sort_key)
        stock: dict[str, float] = defaultdict(float)
        for item in store.items():
            stock[item.sku] += item.quantity
    want = sorted((expected_view(x) for x in exp["records"]), key=sort_key)
    assert got == want, (heard, replies)
    before = initial_stock()
    change: dict[str, float] = defaultdict(float)
    for x in exp["records"]:
        change[x["sku"]] += x["delta"]
    for sku, total in before.items():
        assert stock[sku] == pytest.approx(total + change[sku]), (sku, heard)
