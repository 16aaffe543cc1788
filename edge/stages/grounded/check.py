"""The grounding guard: an answer the model composed is said only when every number in it is one the
tools returned or the question said, and it claims no action; otherwise the tools' own sentences are
said instead (:func:`grounded_or_plain`)."""
from __future__ import annotations

import re

from edge.stages.grounded.tools import ToolResult, numbers_in
from edge.stages.nlu.numbers import normalize_numbers

#: an answer that says the box did something: it never does anything but read (the model never writes)
CLAIMED_ACTION = re.compile(
    r"\b(?:i(?:'ve| have| will|'ll)?|we(?:'ve| have)?|it(?:'s| is| has been)?) *(?:just )?(?:turned|switched|shut|"
    r"set|started|stopped|reset|restarted|ordered|placed|booked|sent|emailed|called|logged|recorded|added|removed|"
    r"updated|changed|written|scheduled|reminded|opened|closed|locked|unlocked)\b|"
    r"\b(?:is|are) now (?:on|off|open|closed|running|stopped|set|ordered|reset)\b|"
    r"\btimer (?:is )?(?:set|started|running)\b|\border (?:has been |was )?(?:placed|sent)\b|"
    r"\b(?:done|all set)[.!]", re.IGNORECASE)


def claims_action(text: str) -> bool:
    """Whether ``text`` says an action was (or will be) taken ("I've turned off …", "timer set",
    "the compressor is now off", "I'll order …"). Raises nothing."""
    return bool(CLAIMED_ACTION.search(text or ""))


_ONE = re.compile(r"\bone\b", re.IGNORECASE)


def said_numbers(text: str) -> set[float]:
    """The numbers ``text`` says as digits or number words; the word "one" is left out (mostly a
    pronoun: "that one", "one of them")."""
    return numbers_in(normalize_numbers(_ONE.sub(" ", text or "")))


def ungrounded_numbers(answer: str, results: list[ToolResult], question: str) -> list[float]:
    """The numbers of ``answer`` (digits or number words) that no tool result and not the question
    says, in order. Raises nothing."""
    known = said_numbers(question) | numbers_in(normalize_numbers(question))
    for r in results:
        known |= r.numbers
    said = said_numbers(answer)
    return sorted(n for n in said if n not in known)


def plain(results: list[ToolResult]) -> str:
    """The tools' own sentences, joined: what is said when the composed answer is not grounded."""
    seen: list[str] = []
    for r in results:
        if r.text not in seen and not r.failed:
            seen.append(r.text)
    return " ".join(seen)


def grounded_or_plain(answer: str | None, results: list[ToolResult], question: str) -> tuple[str, dict]:
    """``answer`` when it is grounded in ``results`` (every number returned by a tool or said in
    ``question``, no claimed action, not empty), else :func:`plain`; and what was found
    (``{"ungrounded": [numbers], "claimed_action": bool, "replaced": bool}``). Raises nothing."""
    answer = (answer or "").strip()
    bad = ungrounded_numbers(answer, results, question)
    action = claims_action(answer)
    replaced = bool(bad or action or not answer)
    return (plain(results) if replaced else answer), {"ungrounded": bad, "claimed_action": action, "replaced": replaced}
