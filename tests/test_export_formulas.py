"""Exports that are safe to open: ``edge records export --csv`` writes a text cell that a spreadsheet
would run as a formula (starting with ``=``, ``+``, ``-``, ``@``, tab or carriage return) with a
leading ``'``; numbers (a negative delta) stay numbers. Real CLI, real store, real CSV reader."""
from __future__ import annotations

import csv
import io
import os
import subprocess
import sys

import pytest

from edge.stock.csvfile import FORMULA_START
from tests.helpers import REPO


def edge(*args) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "edge.cli", *map(str, args)], cwd=REPO, capture_output=True,
                       timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0, r.stderr
    return r


def export(cfg) -> list[dict]:
    """The export's rows, read as bytes (a carriage return inside a cell stays one)."""
    text = edge("records", "export", "--csv", "--config", cfg).stdout.decode("utf-8")
    return list(csv.DictReader(io.StringIO(text, newline="")))


@pytest.fixture
def cfg(tmp_path):
    inv = tmp_path / "stock.csv"
    inv.write_text("sku,item,location,quantity,unit,aliases\n@SUM(A1),hex key,drawer 2,100,pcs,hex keys\n")
    p = tmp_path / "edge.yaml"
    p.write_text(f"board: x86-dev\nstore: {{path: {tmp_path / 'edge.db'}}}\nllm: {{engine: none}}\n")
    edge("inventory", "import", inv, "--config", p)
    return p


def test_formula_cells_are_neutralised_and_numbers_kept(cfg):
    # the transcript starts with a formula character (the understanding ignores punctuation, so the
    # command is still logged and its utterance exported as heard)
    said = [f'{start}I used two hex keys' for start in FORMULA_START]
    for text in said:
        edge("ask", text, "--config", cfg)
    rows = export(cfg)
    assert len(rows) == len(said), rows
    for row, text in zip(rows, said, strict=True):
        assert row["utterance"] == "'" + text, row  # shown as text by a spreadsheet, nothing lost
        assert row["sku"] == "'@SUM(A1)", row
        assert row["delta"] == "-2", row  # a number is not a formula
    for row in rows:  # no cell of the export starts a formula any more
        assert not any(str(v).startswith(FORMULA_START) and not str(v).lstrip("-").isdigit() for v in row.values())


def test_plain_text_is_written_as_it_is(cfg):
    edge("ask", "I used two hex keys", "--config", cfg)
    row = export(cfg)[0]
    assert row["utterance"] == "I used two hex keys"
