"""The adversarial guard set (bench/eval/guard*.jsonl, bench/eval/make_guard.py) is well formed, and
the template path writes no wrong record on it (the whole scorer, with the paraphrase matcher, is
bench/eval_guard.py)."""
from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from collections import Counter

import pytest

from edge.stages import dialog
from edge.stages.nlu.understand import Understanding
from edge.stock.store import Store
from tests.nlu_helpers import REPO

EVAL = REPO / "bench" / "eval"
SETS = {"guard.jsonl": EVAL / "guard_inventory.csv", "guard_big.jsonl": EVAL / "inventory.csv",
        "guard_zh.jsonl": EVAL / "guard_inventory_zh.csv"}
CLASSES = {"question", "direction", "size", "frequency", "unit", "other_item", "same_item", "negation", "but",
           "correction", "neighbour", "time", "modal", "qualifier", "trailing", "not_count", "someone", "hedge",
           "lot_piece", "state", "present", "present_heard", "answer", "back", "equipment", "count_what", "not_done",
           "undo"}
CLASSES |= {"aside", "part_name", "place", "not_ours", "amend"}  # round 7 (English)
CLASSES |= {"would_have", "qualified", "undo_unsaid", "got_out", "decimal", "incoming", "moved", "tag"}  # round 8
ZH_CLASSES = {"neighbour", "correction", "other_item", "hedge", "not_count", "unit", "frequency", "future", "time", "size",
              "trailing", "lot_piece", "state", "answer", "back", "equipment", "count_what", "not_done", "question",
              "qualifier", "except", "other_thing", "someone", "etc", "moved"}
ZH_CLASSES |= {"negated", "each", "still", "theirs", "no_direction", "kind", "hearsay"}  # round 8 (Mandarin)


def turns_of(r: dict) -> tuple:
    """What makes a case: its turns, the answers to the box's questions, and whether it was heard."""
    return tuple(r.get("before", ())), r["text"], tuple(r.get("answers", ())), r.get("confidence")


def rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (EVAL / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_sets_are_big_enough_and_cover_every_class():
    small, big = rows("guard.jsonl"), rows("guard_big.jsonl")
    assert len(small) + len(big) >= 300 and len({turns_of(r) for r in small}) == len(small)
    assert {r["class"] for r in small} == CLASSES
    writes = Counter(r["expect"]["write"] for r in small + big)
    assert writes["must"] >= 100 and writes["never"] >= 150, writes
    zh = rows("guard_zh.jsonl")
    assert len(zh) >= 100 and {r["class"] for r in zh} == ZH_CLASSES and all(r["language"] == "zh" for r in zh)


@pytest.mark.parametrize("name", sorted(SETS))
def test_every_expected_record_is_of_the_inventory(name):
    with SETS[name].open(newline="", encoding="utf-8") as f:
        places = {(r["sku"], r["location"]) for r in csv.DictReader(f)}
    for r in rows(name):
        assert r["expect"]["write"] in ("must", "never", "may"), r
        assert (r["expect"]["write"] == "never") == (not r["expect"]["records"]), r
        for rec in r["expect"]["records"]:
            assert (rec["sku"], rec["place"]) in places and rec["delta"] != 0, r


def test_the_generator_reproduces_the_files(tmp_path):
    for name in SETS:
        shutil.copy(EVAL / name, tmp_path / name)
    subprocess.run([sys.executable, str(EVAL / "make_guard.py")], check=True, capture_output=True)
    for name in SETS:
        assert (EVAL / name).read_text() == (tmp_path / name).read_text(), f"{name}: run bench/eval/make_guard.py"


@pytest.mark.parametrize("name, language", [("guard.jsonl", "en"), ("guard_zh.jsonl", "zh")])
def test_the_template_path_writes_no_wrong_record_on_the_small_sets(tmp_path, name, language):
    base = tmp_path / "base.db"
    with Store(base) as s:
        s.import_csv(SETS[name])
        nlu = Understanding(s.items(), language=language)
    wrong = []
    for k, case in enumerate(rows(name)):
        db = tmp_path / f"c{k % 2}.db"
        for p in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
            p.unlink(missing_ok=True)
        shutil.copyfile(base, db)
        with Store(db) as store:
            n0 = len(store.records())
            for j, text in enumerate([*case.get("before", []), case["text"]]):
                intent = nlu.understand(text)
                if intent is not None:
                    dialog.act(intent, store, text, f"t{j}", language=language)
            got = [(r.sku, r.delta) for r in store.records()[n0:]]
        allowed = [] if case["expect"]["write"] == "never" else [(r["sku"], r["delta"]) for r in case["expect"]["records"]]
        if any(g not in allowed for g in got):
            wrong.append((case["text"], got))
    assert wrong == []
