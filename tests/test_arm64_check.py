"""scripts/arm64_check.py without emulation: the committed result of the arm64 rehearsal holds what the
README says it shows, the verdict catches a run that ends after one turn, and the demo's settings are
grammar-only and load. The emulated run itself is the documented check (scripts/arm64-check.sh)."""
from __future__ import annotations

import copy
import json
import sys

import pytest

from edge.config import load_settings
from tests.helpers import REPO

sys.path.insert(0, str(REPO / "scripts"))
import arm64_check  # noqa: E402

RESULT = json.loads((REPO / "bench/results/arm64-check.json").read_text())


def test_the_last_result_passed_with_both_turns_the_store_and_the_doctor():
    assert RESULT["failures"] == [] and arm64_check.verdict(RESULT) == []
    demo = RESULT["demo"]
    assert demo["intents"] == ["log_record", "undo"] and demo["transcripts"] == RESULT["host"]["transcripts"]
    assert [e["type"] for e in demo["events"]].count("turn_end") == 2 and demo["stock_GLV-NIT-L"] == 12
    assert RESULT["doctor"]["board"] == "rk3588-rock5b" and {c["name"] for c in RESULT["doctor"]["checks"]} >= {"image"}
    for image in RESULT["dependencies"]["images"].values():  # every resolved package with its wheel's tags
        assert image["resolved"] and all(v["tags"].count("-") == 2 for v in image["resolved"].values())
    assert set(RESULT["seconds"]) >= {"rootfs", "dependencies", "install", "demo", "doctor", "total"}


def test_a_run_that_ends_after_the_first_turn_fails_the_verdict():
    res = copy.deepcopy(RESULT)
    res["demo"].update(exit_status="timed out after 3600 s", intents=["log_record"], replies=res["demo"]["replies"][:1],
                       records=res["demo"]["records"][:1], **{"stock_GLV-NIT-L": 32})
    bad = " | ".join(arm64_check.verdict(res))
    assert "timed out" in bad and "expected ['log_record', 'undo']" in bad and "expected 12" in bad, bad


@pytest.mark.parametrize("check", ["image", None])
def test_a_doctor_without_its_image_check_or_board_fails_the_verdict(check):
    res = copy.deepcopy(RESULT)
    if check:
        res["doctor"]["checks"] = [dict(c, status="fail") if c["name"] == check else c for c in res["doctor"]["checks"]]
    else:
        res["doctor"] = {"error": "Traceback ..."}
    assert any(f.startswith("doctor") for f in arm64_check.verdict(res))


def test_the_demo_settings_are_grammar_only_with_the_session_wake_word(tmp_path):
    s = load_settings(arm64_check.demo_config(tmp_path))
    assert s.llm.engine == "none" and s.llm.chain == [] and s.governor.smaller_models == []
    assert [m.name for m in s.wake.models] == ["hey_mycroft"] and s.tts.start_timeout_s == 600
