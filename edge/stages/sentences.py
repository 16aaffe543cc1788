"""Sentences of an answer text: cutting them out of a token stream, and keeping an answer short.

:class:`SentenceSplitter` cuts after ``.``, ``!``, ``?``, ``…`` (plus closing quotes/brackets)
followed by white space and a word that does not start in lower case, and right after the CJK
full stops ``。！？``; also at a blank line. It does not cut decimals (``2.5``: no space after the
dot), common abbreviations (``e.g.``, ``i.e.``, ``Mr.``, ``Dr.``, ``vs.``, ``No.``…) or single-letter
initials (``J. Smith``). To decide, it waits for the first letter after the space, one token later.

:func:`answer_sentences` and :func:`two_sentences` shape an LLM answer the way it is spoken
(cleaned of markdown, at most two sentences). Shared by the understanding stage
(:mod:`edge.stages.nlu.understand`, :mod:`edge.stages.nlu.llm_intent`) and streaming speech
(:mod:`edge.stages.tts.stream`), so what is spoken early and the final reply are the same sentences.
A leaf: it imports only :func:`edge.stages.nlu.filler.has_cjk`.
"""
from __future__ import annotations

import re

from edge.stages.nlu.filler import has_cjk

LATIN_END = ".!?…"
CJK_END = "。！？"
CLOSERS = "\"')]}”’»」』）】"
#: Words that end in a dot without ending a sentence (compared lower case, without the final dot).
ABBREVIATIONS = frozenset({
    "e.g", "i.e", "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "no", "nos", "approx",
    "fig", "cf", "al", "dept", "u.s", "u.k", "a.m", "p.m", "ca", "ft", "lb", "oz",
})
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")


def _is_abbreviation(text: str, dot: int) -> bool:
    # the word before the dot: looked for in the 40 characters before it (no abbreviation is
    # longer), so a long text is not searched from its start at every dot
    m = _WORD_BEFORE.search(text, max(0, dot - 40), dot)
    if not m:
        return False
    word = m.group(1)
    w = word.lower().rstrip(".")
    if w in ABBREVIATIONS:
        return True
    return len(word) == 1 and word.isupper() and word != "I"  # an initial: "J. Smith"


def _scan(text: str, start: int = 0) -> tuple[int | None, int]:
    """``(cut, resume)``: the index just after the first complete sentence of ``text`` from
    ``start`` (None when none is complete yet), and where a later scan of ``text`` plus more may
    start (nothing before it can end a sentence any more)."""
    n = len(text)
    lead = n - len(text.lstrip())  # a blank line cuts only after some text
    i = start
    while i < n:
        c = text[i]
        if c in CJK_END:
            j = i + 1
            while j < n and text[j] in CLOSERS:
                j += 1
            return j, j
        if c in LATIN_END:
            j = i + 1
            while j < n and text[j] in LATIN_END:  # "?!", "..."
                j += 1
            while j < n and text[j] in CLOSERS:
                j += 1
            if j == n:
                return None, i  # what follows decides
            if not text[j].isspace():
                i = j  # "2.5", "e.g.x", "a.m."
                continue
            k = j
            while k < n and text[k].isspace():
                k += 1
            if k == n:
                return None, i  # wait for the next word
            if (c == "." and text[j - 1] not in CLOSERS and _is_abbreviation(text, i)) or text[k].islower():
                i = k
                continue
            return j, j
        if c == "\n" and i + 1 < n and text[i + 1] == "\n" and i > lead:
            return i + 2, i + 2
        if c == "\n" and i + 1 == n:
            return None, i  # a blank line may follow
        i += 1
    return None, n


def find_cut(text: str) -> int | None:
    """Index just after the first complete sentence of ``text``, or None when none is complete yet
    (including when the character after a sentence end has not arrived)."""
    return _scan(text)[0]


class SentenceSplitter:
    """Feed text pieces; get back the sentences they complete (stripped, in order). Each character
    is scanned about once however the text is cut into pieces."""

    def __init__(self):
        self.buffer = ""
        self._resume = 0  # where the next scan of buffer starts

    def feed(self, text: str) -> list[str]:
        """Add ``text``; the sentences now complete."""
        self.buffer += text
        out = []
        while True:
            cut, resume = _scan(self.buffer, self._resume)
            if cut is None:
                self._resume = resume
                return out
            sentence, self.buffer, self._resume = self.buffer[:cut].strip(), self.buffer[cut:], 0
            if sentence:
                out.append(sentence)

    def flush(self) -> list[str]:
        """The rest of the text as the last sentence (end of the answer)."""
        rest, self.buffer, self._resume = self.buffer.strip(), "", 0
        return [rest] if rest else []


def split_sentences(text: str) -> list[str]:
    """All sentences of a finished text."""
    s = SentenceSplitter()
    return s.feed(text) + s.flush()


#: characters that close a sentence (a final piece ending in one is a complete sentence)
ENDS = ".!?…。！？\"'”’)）」』"


def clean_answer(text: str) -> str:
    """Whitespace folded, markdown marks (``*_#```) removed."""
    return re.sub(r"[*_#`]+", "", " ".join(text.split())).strip()


def answer_sentences(text: str) -> tuple[list[str], str]:
    """``(complete sentences, unfinished rest)`` of an answer, each cleaned (:func:`clean_answer`),
    cut where :class:`SentenceSplitter` cuts (also Chinese 。！？), so what the loop speaks early
    and the final reply are the same sentences."""
    sp = SentenceSplitter()
    sentences = [c for c in (clean_answer(x) for x in sp.feed(text)) if c]
    tail = clean_answer(" ".join(sp.flush()))
    if tail and tail[-1] in ENDS:
        sentences.append(tail)
        tail = ""
    return sentences, tail


def join_sentences(sentences: list[str]) -> str:
    """Sentences as one text: a space between Latin ones, none after a Chinese full stop."""
    out = ""
    for s in sentences:
        out += s if not out or out[-1] in "。！？" else " " + s
    return out


def two_sentences(text: str, limit: int = 2) -> str:
    """At most ``limit`` complete sentences of ``text`` (:func:`answer_sentences`).

    An answer cut off by the token budget ends mid-sentence: the unfinished sentence is dropped
    when a complete one comes before it; a lone unfinished sentence is cut at its last clause
    boundary (comma, semicolon) when there is one, and closed with a full stop (``。`` in Chinese).
    """
    sentences, tail = answer_sentences(text)
    if sentences:
        return join_sentences(sentences[:limit])
    if not tail:
        return ""
    first = tail.rstrip(",;:，；： ")
    if re.search(r"[,;，；]", first):
        first = re.split(r"[,;，；]\s*(?=[^,;，；]*$)", first)[0]
    first = first.rstrip(",;:，；： ")
    return first + ("。" if has_cjk(first) else ".")
