"""A negated command writes nothing, and its reply says what was said: "don't log 3 fuses" is
answered as an instruction ("OK, I won't log 3 fuses"), never as "you said you did not use …";
"we didn't receive 5 fuses" is read back as not received, a move as not moved. Real SQLite store,
real understanding (grammar, no LLM), real dialog; and once through ``edge ask``."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from edge.stages.nlu.understand import Understanding
from tests.helpers import REPO, csv_store, say_to_store

CSV = """sku,item,location,quantity,unit,aliases
FUS-5A,fuse,bin 30,60,pcs,fuses;保险丝
DRL-BIT-6,drill bit,drawer 4,25,pcs,drill bits;钻头
GOG-SAF,safety goggles,shelf B,8,pcs,goggles
GLV-NIT-L,nitrile gloves,shelf A,12,box,gloves
PNT-WHT,white paint,shelf C,4,can,paint
BLT-M8,M8 bolt,bin 12,140,pcs,m8 bolts
WSH-M8,M8 washer,bin 13,500,pcs,m8 washers
"""


@pytest.fixture
def box(tmp_path):
    with csv_store(tmp_path, CSV) as s:
        yield s



@pytest.mark.parametrize("text, said", [
    # told not to log it: what the box will not do, never "you said you did not use"
    ("don't log 3 fuses", "OK, I won't log 3 fuses. Nothing was logged."),
    ("please do not record 3 fuses", "OK, I won't log 3 fuses. Nothing was logged."),
    ("no need to log the 3 fuses", "OK, I won't log 3 fuses. Nothing was logged."),
    ("don't add 5 fuses", "OK, I won't log 5 fuses. Nothing was logged."),
    ("don't log the goggles", "OK, I won't log safety goggles. Nothing was logged."),
    ("don't log 3 drill bits and 2 fuses", "OK, I won't log 3 drill bits and 2 fuses. Nothing was logged."),
    # said not to have happened: read back in the direction said
    ("we did not use 3 fuses", "Nothing logged: you said 3 fuses were not used."),
    ("nobody took the 2 drill bits", "Nothing logged: you said 2 drill bits were not used."),
    ("we didn't receive 5 fuses", "Nothing logged: you said 5 fuses were not received."),
    ("we never got 10 fuses", "Nothing logged: you said 10 fuses were not received."),
    ("we haven't received the 5 fuses yet", "Nothing logged: you said 5 fuses were not received."),
    ("we still haven't received 4 fuses", "Nothing logged: you said 4 fuses were not received."),
    ("we didn't use 1 box of gloves", "Nothing logged: you said 1 box of nitrile gloves was not used."),
    ("we didn't use any fuses", "Nothing logged: you said no fuses were used."),
    ("we didnt use any paint", "Nothing logged: you said no white paint was used."),
    ("we didn't use 3 drill bits and 2 fuses", "Nothing logged: you said 3 drill bits and 2 fuses were not used."),
    # a move and a count
    ("don't move 3 fuses from bin 30 to bin 31", "OK, I won't move 3 fuses. Nothing was moved."),
    ("we didn't move 3 fuses from bin 30 to bin 31", "Nothing moved: you said 3 fuses were not moved."),
    ("do not count 5 fuses in bin 30", "OK, I won't record a count of fuses. Nothing was logged."),
])
def test_a_negated_command_writes_nothing_and_says_what_was_said(box, text, said):
    before = {i.sku: i.quantity for i in box.items()}
    out = say_to_store(box, text)
    assert out.text == said and out.pending is None
    assert box.records() == [] and {i.sku: i.quantity for i in box.items()} == before


def test_a_negated_command_of_an_unclear_item_is_not_asked_about(box):
    # nothing would be written whichever item was meant: no "fuses or drill bits?" question
    plain = Understanding(box.items()).understand("we used 3 m8")
    assert plain.candidates == ("BLT-M8", "WSH-M8")  # said plainly, it is asked
    out = say_to_store(box, "we didn't use 3 m8")
    assert out.text == "Nothing logged: you said that was not used."
    assert out.pending is None and box.records() == []


@pytest.mark.parametrize("text, said", [
    ("别记三个保险丝", "好的，不记录3个保险丝。"),
    ("我们没有收到三个保险丝", "没有记录：你说没有收到3个保险丝。"),
    ("我们没有用三个钻头", "没有记录：你说没有用3个钻头。"),
])
def test_a_mandarin_negation_is_read_back_as_said(box, text, said):
    out = say_to_store(box, text, "zh")
    assert out.text == said and box.records() == []


def test_edge_ask_dont_log_says_nothing_was_logged(tmp_path):
    cfg = tmp_path / "edge.yaml"
    cfg.write_text(f"board: x86-dev\nstore: {{path: {tmp_path / 'edge.db'}}}\nllm: {{engine: none}}\n")
    inv = tmp_path / "inv.csv"
    inv.write_text(CSV, encoding="utf-8")

    def edge(*args):
        r = subprocess.run([sys.executable, "-m", "edge.cli", *map(str, args)], cwd=REPO, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        return r

    edge("inventory", "import", inv, "--config", cfg)
    r = edge("ask", "don't log 3 fuses", "--config", cfg, "--json")
    (reply,) = [json.loads(line)["text"] for line in r.stdout.splitlines() if '"reply"' in line]
    assert reply == "OK, I won't log 3 fuses. Nothing was logged."
    assert edge("records", "export", "--csv", "--config", cfg).stdout.strip().count("\n") == 0  # the header only
