"""Whisper's biasing prompt within its token budget, for any inventory size.

Whisper conditions on previous text of at most half its 448-token text context; faster-whisper
keeps the *last* ``448 // 2 - 1`` = :data:`PROMPT_TOKENS` tokens of ``" " + initial_prompt`` and
drops the rest silently — with a 2,000-item inventory that is the command words and all but the
last few dozen names. So the prompt is built to fit, counted with Whisper's own tokenizer:

1. :func:`build_prompt`: ``"Stock room commands. Undo that. <command words>. Items and places: "``
   and then the phrases in the order given (item names, aliases, places) as many as fit.
   :func:`edge.stages.asr.base.vocabulary` puts the items this box used most or most recently
   first (``first=`` SKUs, e.g. :func:`used_first` of the store's records), then the rest.
2. When the phrases do not all fit, :func:`focus` re-orders them for a second pass: the phrases
   most of whose words the first pass's transcript has (``rapidfuzz`` per word) go first. :class:`edge.stages.asr.whisper.WhisperRecognizer` then decodes the final utterance a
   second time with that prompt (one more decode, ~0.3 s here; partial transcripts keep one pass).

Mandarin (``language="zh"``): the same budget and steps with the prompt of
:mod:`edge.stages.asr.bias_zh` (a Simplified-Chinese head, the Chinese names, the places as said).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path

import numpy as np
from rapidfuzz import fuzz, process
from tokenizers import Tokenizer

from edge.stages.asr.base import COMMAND_WORDS, UNIT_WORDS, model_dir
from edge.stages.asr.bias_zh import compose_zh, focus_zh, zh_phrases

#: tokens of ``" " + prompt`` faster-whisper keeps (``max_length // 2 - 1`` with Whisper's 448)
PROMPT_TOKENS = 223
HEAD = "Stock room commands. Undo that."
UNITS_SAID = frozenset(UNIT_WORDS.values())
#: phrases :func:`focus` moves to the front
FOCUS_PHRASES = 24
#: least rapidfuzz ratio (0..100) of a transcript word to count as a phrase's word
WORD_MATCH = 85
#: least share of a phrase's words the transcript must have for :func:`focus` to move it forward
FOCUS_SHARE = 0.5
#: words that tell no item apart (places are "bin 12": their number decides)
_GENERIC = frozenset({"bin", "drawer", "shelf", "x", "by", "mm", "millimetre", "the", "a", "of", "and"})

__all__ = ["FOCUS_PHRASES", "HEAD", "PROMPT_TOKENS", "WORD_MATCH", "build_prompt", "focus", "prompt_token_count",
           "used_first", "whisper_tokenizer"]


def whisper_tokenizer(model: str | Path) -> Tokenizer:
    """The tokenizer of a CTranslate2 Whisper model (a manifest id or a directory holding
    ``tokenizer.json``), as faster-whisper loads it. Raises ``FileNotFoundError``."""
    path = model_dir(str(model)) / "tokenizer.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing; the Whisper model folder must hold tokenizer.json")
    return Tokenizer.from_file(str(path))


def prompt_token_count(tokenizer: Tokenizer, prompt: str) -> int:
    """Tokens faster-whisper feeds for ``initial_prompt=prompt`` (it encodes ``" " + prompt.strip()``)."""
    return len(tokenizer.encode(" " + prompt.strip(), add_special_tokens=False).ids)


def _compose(commands: list[str], phrases: list[str]) -> str:
    head = f"{HEAD} {', '.join(commands).capitalize()}." if commands else HEAD
    return f"{head} Items and places: {', '.join(phrases)}." if phrases else head


def build_prompt(phrases: Iterable[str], count: Callable[[str], int], budget: int = PROMPT_TOKENS,
                 language: str = "en") -> tuple[str | None, int, int]:
    """``(prompt, n, total)``: the prompt holding the command words among ``phrases`` and the first
    ``n`` of the ``total`` other phrases (names, aliases, places; duplicates dropped), the most that
    keep ``count(prompt)`` within ``budget`` tokens. ``(None, 0, 0)`` for no phrases. ``count``:
    e.g. ``lambda p: prompt_token_count(tokenizer, p)``. ``language`` ``zh``: the Mandarin prompt
    (:mod:`edge.stages.asr.bias_zh`: Chinese names and aliases, places as said in Mandarin, never
    None: its Simplified-Chinese head is needed even without phrases). Raises nothing."""
    phrases = list(dict.fromkeys(p.strip() for p in phrases if p and p.strip()))
    if language == "zh":
        commands, rest = [], zh_phrases(phrases)
        compose = lambda _c, ps: compose_zh(ps)  # noqa: E731 - the one difference between the languages
    else:
        if not phrases:
            return None, 0, 0
        commands = [p for p in phrases if p in COMMAND_WORDS and p != "undo that"]
        rest = [p for p in phrases if p not in COMMAND_WORDS]
        compose = _compose
    if count(compose(commands, rest)) <= budget:
        return compose(commands, rest), len(rest), len(rest)
    lo, hi = 0, len(rest)  # the largest n that fits: count grows with n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(compose(commands, rest[:mid])) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return compose(commands, rest[:lo]), lo, len(rest)


def used_first(records: Iterable, limit: int = 20, window: int = 200) -> list[str]:
    """SKUs of the items this box used most in its last ``window`` records (most often first, the
    more recent first on a tie), at most ``limit``: the ``first=`` of
    :func:`edge.stages.asr.base.vocabulary`. ``records``: :class:`edge.stock.store.Record` objects,
    oldest first (``Store.records()``); compensating (undo) records and the records they undid do
    not count. Raises nothing."""
    recent = list(records)[-window:]
    undone = {r.undoes for r in recent if r.undoes is not None}
    count: dict[str, int] = {}
    last: dict[str, int] = {}
    for k, r in enumerate(recent):
        if r.undoes is None and r.id not in undone:
            count[r.sku] = count.get(r.sku, 0) + 1
            last[r.sku] = k
    return sorted(count, key=lambda sku: (-count[sku], -last[sku]))[:limit]


def _words(text: str) -> list[str]:
    return re.sub(r"[^\w.]+", " ", text.lower()).replace(". ", " ").strip(" .").split()


@lru_cache(maxsize=4)
def _index(phrases: tuple[str, ...]) -> tuple[list[str], dict[str, list[str]], list[str]]:
    """The name phrases, each one's telling words, and all those words (cached: the same phrase
    list comes with every utterance)."""
    names = [p for p in phrases if p not in COMMAND_WORDS]
    words_of = {p: [w for w in _words(p) if w not in _GENERIC] for p in names}
    return names, words_of, sorted({w for ws in words_of.values() for w in ws})


def _spelling(word: str) -> str:
    """A unit's word with its spelling and number left out ("meters", "metre" → "metre")."""
    return re.sub(r"er$", "re", word.lower().removesuffix("s"))


def focus(phrases: list[str], heard: str, limit: int = FOCUS_PHRASES, language: str = "en") -> list[str]:
    """``phrases`` with the (at most ``limit``) ones nearest to the transcript ``heard`` first, the
    rest after in their order; command words keep their place, a unit of measure heard ("meters" for
    "metres") comes before the names. A phrase's nearness is the share of its words (place words, ``x``, ``mm`` left out) that the transcript has, each word compared with
    ``rapidfuzz`` ratio ≥ :data:`WORD_MATCH` (so ``bolts`` matches ``bolt``, ``M6`` not ``M8``); at
    least :data:`FOCUS_SHARE`; ties go to the phrase with more words. ``language`` ``zh``:
    :func:`edge.stages.asr.bias_zh.focus_zh` on the Mandarin phrases. Raises nothing."""
    if language == "zh":
        return focus_zh(zh_phrases(phrases), heard, limit)
    heard_words = _words(heard)
    names, words_of, vocab = _index(tuple(phrases))
    if not heard_words or not names or not vocab:
        return list(phrases)
    best = process.cdist(vocab, heard_words, scorer=fuzz.ratio, dtype=np.uint8).max(axis=1)
    hit = {w for w, b in zip(vocab, best, strict=True) if b >= WORD_MATCH}
    scored = []
    for p, ws in words_of.items():
        share = sum(w in hit for w in ws) / len(ws) if ws else 0.0
        if share >= FOCUS_SHARE:
            scored.append((-share, -len(ws), p))
    said = {_spelling(w) for w in heard_words}
    units = [p for p in names if p in UNITS_SAID and _spelling(p) in said]  # a unit heard goes in front
    near = [p for *_k, p in sorted(scored) if p not in UNITS_SAID][:limit]
    chosen = set(near) | set(units)
    return [p for p in phrases if p in COMMAND_WORDS] + units + near + [p for p in names if p not in chosen]
