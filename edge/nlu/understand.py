"""Understanding: the grammar path for the common commands, the LLM for everything else.

``understand(text) -> Intent``. The grammar (built from the inventory's names, aliases and
locations) answers in well under a millisecond; anything it does not recognise goes to the
language model, which answers in at most two short sentences (intent ``other``).
"""
from __future__ import annotations

import re

from edge.nlu.grammar import Grammar
from edge.nlu.types import Intent

SYSTEM_PROMPT = (
    "You are the voice assistant of a workshop stock room. Answer in at most two short, plain "
    "sentences that are easy to speak aloud. No lists, no markdown.")

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def two_sentences(text: str, limit: int = 2) -> str:
    """The first ``limit`` sentences of ``text``, whitespace folded, markdown stripped."""
    text = re.sub(r"[*_#`]+", "", " ".join(text.split()))
    parts = [p for p in _SENTENCE_END.split(text) if p.strip()]
    out = " ".join(parts[:limit]).strip()
    if out and out[-1] not in ".!?":
        out = out.rsplit(" ", 1)[0] + "." if " " in out and len(parts) > limit else out + "."
    return out


class Understanding:
    """Grammar first, then the LLM.

    Args:
        items: inventory items (:class:`edge.store.Item`) the grammar is built from.
        llm: an engine with ``chat(messages, max_tokens, temperature) -> Generation``, or None for
            the grammar path only.
        max_tokens: answer budget for the LLM, in tokens.
    """

    def __init__(self, items, llm=None, max_tokens: int = 48, temperature: float = 0.2):
        self.grammar = Grammar(items)
        self.llm = llm
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.last_generation = None

    def rebuild(self, items) -> None:
        """Rebuild the grammar after the inventory changed."""
        self.grammar = Grammar(items)

    def understand(self, text: str) -> Intent:
        intent = self.grammar.parse(text)
        if intent is not None:
            return intent
        if self.llm is None:
            return Intent("other", source="grammar", text=text, answer=None)
        gen = self.llm.chat([{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": text}],
                            max_tokens=self.max_tokens, temperature=self.temperature)
        self.last_generation = gen
        return Intent("other", source="llm", text=text, answer=two_sentences(gen.text) or None)
