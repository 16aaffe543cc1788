"""The understanding evaluation set (bench/eval/utterances.jsonl) is well formed, and the grammar
path gets the intent right on at least 90 % of the phrasings it is built for."""
import json
from collections import Counter

import pytest

from edge.stages.nlu.grammar import Grammar
from edge.stages.nlu.lexicon import normalize_location
from edge.stages.nlu.schema import INTENT_VALUES
from tests.nlu_helpers import EVAL, REPO, sample_items

ITEMS = sample_items()
SKUS = {i.sku for i in ITEMS}
ROWS = [json.loads(line) for line in EVAL.read_text(encoding="utf-8").splitlines() if line.strip()]
#: the grammar path must get the intent right on at least this share of its in-grammar subset
GRAMMAR_MIN_INTENT_ACCURACY = 0.90


def test_eval_set_is_well_formed():
    assert len(ROWS) >= 150
    assert len({r["text"] for r in ROWS}) == len(ROWS), "duplicate utterances"
    counts = Counter(r["intent"] for r in ROWS)
    assert set(counts) == set(INTENT_VALUES) and min(counts.values()) >= 15, counts
    assert Counter(r["kind"] for r in ROWS)["paraphrase"] >= 30
    for r in ROWS:
        assert set(r) == {"text", "intent", "sku", "quantity", "direction", "location", "kind"}, r
        assert r["intent"] in INTENT_VALUES and r["kind"] in ("grammar", "paraphrase") and r["text"].strip()
        if r["intent"] == "log_record":
            assert r["sku"] in SKUS and isinstance(r["quantity"], int) and r["quantity"] > 0, r
            # "log 2 washers" says no direction: None (the dialog asks used or received)
            assert r["direction"] in ("in", "out") or (r["direction"] is None and r["text"].split()[0] == "log"), r
        elif r["intent"] == "query_stock":
            assert r["sku"] in SKUS and r["quantity"] is None and r["direction"] is None, r
        else:
            assert (r["sku"], r["quantity"], r["direction"], r["location"]) == (None, None, None, None), r
        if r["location"] is not None:
            assert normalize_location(r["location"]) == r["location"], r  # normalized form: "bin 12"


def test_grammar_path_on_its_own_subset():
    grammar = Grammar(ITEMS)
    subset = [r for r in ROWS if r["kind"] == "grammar"]
    got = [grammar.parse(r["text"]) for r in subset]
    right = [(g.intent if g else "other") == r["intent"] for g, r in zip(got, subset, strict=True)]
    accuracy = sum(right) / len(subset)
    wrong = [r["text"] for r, ok in zip(subset, right, strict=True) if not ok]
    assert accuracy >= GRAMMAR_MIN_INTENT_ACCURACY, (accuracy, wrong)
    # and it never logs a record the utterance did not ask for
    for g, r in zip(got, subset, strict=True):
        if g is not None and g.intent == "log_record" and g.sku:
            assert (r["intent"], r["sku"], r["quantity"], r["direction"]) == ("log_record", g.sku, g.quantity, g.direction), r


def test_results_file_has_the_figures():
    path = REPO / "bench" / "results" / "nlu_eval.json"
    if not path.exists():
        pytest.skip("bench/eval_nlu_sample.py has not been run here")
    res = json.loads(path.read_text())
    assert res["utterances"] >= 150 and res["machine"]["cores"]
    models = {run["model"]: run for run in res["runs"]}
    assert "grammar" in models["none"]["paths"]
    for run in res["runs"]:
        assert run["date"] and "commit" in run
        for figures in run["paths"].values():
            assert 0.0 <= figures["intent_accuracy"] <= 1.0 and "ms_per_utterance" in figures
