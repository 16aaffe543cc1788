"""Freeing a model never pulls it from under a running call: with the real SmolLM2 GGUF, each way a
model is freed (the engine's close, the chain's close after a consumer left mid-answer, the idle
unload, a close during tokenizing) waits for the generation or tokenizing thread, which ends as
cancelled; calls after the close are refused with EngineError. Each case runs in its own process
(tests/llm_free_race.py): freeing under a decode is a segmentation fault."""
from __future__ import annotations

import os
import subprocess
import sys

from tests.helpers import REPO

SCRIPT = REPO / "tests" / "llm_free_race.py"


def run(scenario: str) -> str:
    p = subprocess.run([sys.executable, str(SCRIPT), scenario], capture_output=True, text=True, timeout=600,
                       cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert p.returncode == 0, f"{scenario}: exit {p.returncode}\n{p.stderr[-3000:]}"
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("OK ")]
    assert line, p.stdout
    return line[-1]


def test_closing_the_engine_mid_answer_cancels_and_waits_for_the_decode():
    out = run("engine")
    assert "finish=cancelled" in out
    assert "ended_before_close_returned=True" in out  # close() returned only after the decode ended
    assert "after_close=refused" in out


def test_closing_the_chain_right_after_its_consumer_left_waits_for_the_producer():
    assert "status=unloaded" in run("chain")


def test_an_idle_unload_right_after_the_consumer_left_waits_for_the_producer():
    assert "unloaded=True" in run("idle")


def test_closing_while_another_thread_tokenizes_refuses_its_next_call():
    assert "refused=True" in run("tokens")
