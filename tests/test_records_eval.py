"""The records evaluation set (bench/eval/records.jsonl) holds what the issue asks of it, its answers
are the ones a plain pass over the generated history gives, and the box answers it with no wrong
answer (the full score is bench/eval_records.py; this runs the same scorer). About 40 s here."""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from tests.helpers import REPO

sys.path.insert(0, str(REPO / "bench"))

SET = REPO / "bench" / "eval" / "records.jsonl"


def test_the_set_is_big_mixed_and_not_only_template_phrasings():
    cases = [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(cases) >= 150
    assert sum(not c["listed"] for c in cases) / len(cases) >= 0.30
    assert {c["language"] for c in cases} == {"en", "zh"}
    assert {c["kind"] for c in cases} == {"total", "last", "entries", "top", "who", "change", "rate"}


def test_the_answers_are_the_plain_passes_and_the_box_gives_none_wrong():
    import eval_records
    from records_site import Truth, make_site

    cases = [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as d:
        store = make_site(Path(d) / "site")
        truth = Truth(store.path)
        store.close()
    from datetime import datetime
    for c in cases[::7]:  # the stored answers are what the generated history says
        period = tuple(datetime.fromisoformat(x) for x in c["period"]) if c["period"] else None
        assert eval_records._expected(truth, c["kind"], c["what"], c["sku"], period) == c["answer"], c["text"]
    out = Path(tempfile.mkdtemp()) / "records_eval.json"
    eval_records.score(SET, out)
    got = json.loads(out.read_text(encoding="utf-8"))
    assert got["wrong"] == 0, got["wrong_answers"][:3]
    assert got["right"] / got["questions"] >= 0.97
