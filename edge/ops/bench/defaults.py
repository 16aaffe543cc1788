"""What one ``edge bench`` run asks for unless told otherwise.

A leaf with no heavy imports: the ``edge`` argument parser reads these for its help texts without
loading the measuring modules (numpy and the voice-loop stages).
"""
from __future__ import annotations

from edge.errors import UserError
from edge.paths import CHECKOUT

#: Issue 8: "at least 10 runs, the second half reported".
MIN_RUNS = 10
#: Answer budget of the LLM runs, in tokens: long enough for a steady decode rate.
DEFAULT_MAX_TOKENS = 128
#: Extra LLM-path turns from text for the voice-loop figures (the sessions have one LLM turn).
DEFAULT_LLM_TURNS = 3
#: Questions for the extra LLM-path turns (the grammar path does not take them).
LLM_TURN_TEXTS = (
    "tell me a fun fact about screwdrivers",
    "what is a torque wrench used for",
    "why do we wear safety goggles in the workshop",
    "tell me a short joke about spanners",
    "what is the difference between a nut and a bolt",
)

DEFAULT_SESSIONS = CHECKOUT.parent / "shared" / "audio" / "sessions"
#: the wake word the shared sessions say (a real "hey mycroft" recording); the bench configures it for them
SHARED_SESSIONS_WAKE = {"name": "hey_mycroft", "engine": "micro", "threshold": 0.95}
DEFAULT_OUT = CHECKOUT / "bench" / "results"


class BenchArgumentError(UserError, ValueError):
    """A bench option out of its range, or a folder without what the bench needs; the message names
    the option and the fix (the CLI prints it as one line, exit 2)."""


def check_llm_turns(llm_turns: int) -> None:
    """Raises BenchArgumentError unless ``0 <= llm_turns <= len(LLM_TURN_TEXTS)``."""
    if not 0 <= llm_turns <= len(LLM_TURN_TEXTS):
        raise BenchArgumentError(f"--llm-turns must be 0..{len(LLM_TURN_TEXTS)}, got {llm_turns}")


def check_runs(runs: int) -> None:
    """Raises BenchArgumentError for ``runs`` < 2 (the second half of the runs is reported)."""
    if runs < 2:
        raise BenchArgumentError(f"--runs must be at least 2 (the second half is reported; issue 8 asks for {MIN_RUNS}), "
                         f"got {runs}")
