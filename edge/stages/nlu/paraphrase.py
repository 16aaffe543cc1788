"""The paraphrase path: an utterance the templates did not take → the nearest intent by sentence
embedding, its slots filled by the deterministic resolvers.

The templates cannot list every phrasing; the small LLM gets most paraphrases wrong. This path
scores the utterance against exemplar sentences of every intent (``exemplars/<language>.yaml``,
encoded once with :class:`edge.models.embed.Encoder`) and keeps the LLM for free questions:

1. :class:`Masker` replaces the spans that are slot values — places (``bin 12``), numbers, and the
   words of the inventory's item names and aliases — with fixed neutral words, in the utterance and
   in the exemplars alike (``{place}``, ``{n}``, ``{item}``), so the item words do not decide the
   intent ("how many *fuses*" and "what's in *bin 30*" differ by their command words only).
2. :meth:`Paraphraser.match`: cosine similarity to every exemplar; an intent's score is its best
   exemplar's. The best intent wins when its score is at least ``threshold`` and ahead of the next
   intent by at least ``margin``; otherwise, or when the nearest exemplars are free questions
   (the ``other`` group), None: the LLM path (or "not understood") decides.
3. :func:`understand_paraphrase`: the resolver (``fill_slots(intent_name, text) -> Intent | None``,
   the template path's) fills the slots; the result is ``source="paraphrase"`` with
   ``explain = {"path": "paraphrase", "score", "margin", "exemplar"}``. The dialog still checks it
   like any other intent before anything is written.

Cost here: one encoder pass, ~15 ms per short utterance (``bench/paraphrase.py``).
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import yaml

from edge.stages.nlu.lexicon import is_name_word, location_at, normalize_text, singular
from edge.stages.nlu.types import INTENTS, Intent

if TYPE_CHECKING:
    from edge.models.embed import Encoder

__all__ = ["EXEMPLAR_DIR", "FILLERS", "MATCHABLE", "Masker", "Paraphraser", "load_exemplars",
           "understand_paraphrase"]

EXEMPLAR_DIR = Path(__file__).with_name("exemplars")
#: the words a slot span becomes, in exemplars and utterances alike (chosen in bench/paraphrase.py)
FILLERS = {"item": "parts", "n": "five", "place": "bin three", "place2": "bin three"}
#: intents the matcher may return (``other`` exemplars only pull free questions away from them;
#: a records question is read by the grammar alone, :mod:`edge.stages.nlu.records`)
MATCHABLE = tuple(i for i in INTENTS if i not in ("other", "ask_records"))
#: defaults measured on the dev half of bench/paraphrase/en.jsonl (see bench/paraphrase.py)
THRESHOLD = 0.45
MARGIN = 0.0  # a margin gained nothing on dev; kept as a knob

_SLOT = re.compile(r"\{(item|n|place2?)\}")


def load_exemplars(language: str = "en", path: str | Path | None = None) -> dict[str, list[str]]:
    """Exemplar sentences per intent, placeholders kept (``{item}``, ``{n}``, ``{place}``, ``{place2}``).

    ``path`` defaults to ``exemplars/<language>.yaml`` beside this module. Raises
    ``FileNotFoundError`` (no file for the language) or ``ValueError`` (an intent not in
    :data:`edge.stages.nlu.types.INTENTS`, or an empty list)."""
    p = Path(path) if path is not None else EXEMPLAR_DIR / f"{language}.yaml"
    data = yaml.safe_load(p.read_text(encoding="utf-8"))
    groups = data.get("intents") or {}
    for name, sentences in groups.items():
        if name not in INTENTS:
            raise ValueError(f"{p}: intent {name!r} is not one of {INTENTS}")
        if not sentences:
            raise ValueError(f"{p}: intent {name!r} has no exemplars")
    return {k: [str(s) for s in v] for k, v in groups.items()}


class Masker:
    """Replaces slot spans with :data:`FILLERS` words: places (``bin 12`` → ``bin three``), whole
    numbers (→ ``five``) and runs of item-name words (→ ``parts``).

    ``items``: inventory items (``item`` name and ``aliases``); their name words (normalized,
    singular, not command words, numbers or units) are the item vocabulary, and the last word of
    each name its head. A run of name words is an item only when it holds a head ("square" of
    "1.5 square flex cable" alone is not: "the square root of 81" stays as said). Raises nothing."""

    def __init__(self, items: Iterable = (), fillers: dict[str, str] | None = None):
        self.fillers = dict(FILLERS if fillers is None else fillers)
        vocab: set[str] = set()
        heads: set[str] = set()
        for it in items:
            for name in (it.item, *getattr(it, "aliases", ())):
                words = [singular(w) for w in normalize_text(name).split()]
                words = [w for w in words if is_name_word(w) and not w.isdigit()]
                vocab.update(words)
                if words:
                    heads.add(words[-1])
                    plain = [w for w in words if w.isalpha()]  # "bearing" of "bearing 6204 2RS"
                    if plain:
                        heads.add(plain[-1])
        self.vocab = frozenset(vocab)
        self.heads = frozenset(heads)

    def spans(self, text: str) -> list[tuple[str, str]]:
        """The utterance as ``(kind, word)`` pieces: kind ``place``, ``n``, ``item`` or ``word``."""
        pieces = self._pieces(text)
        out: list[tuple[str, str]] = []
        for kind, w in pieces:  # a run of name words without a head word is not an item
            if kind == "item" and not any(singular(t) in self.heads for t in w.split()):
                out.extend(("word", t) for t in w.split())
            else:
                out.append((kind, w))
        return out

    def _pieces(self, text: str) -> list[tuple[str, str]]:
        toks = normalize_text(text).split()
        out: list[tuple[str, str]] = []
        k = 0
        while k < len(toks):
            loc = location_at(toks, k)
            if loc is not None:
                out.append(("place", loc[0]))
                k = loc[1]
                continue
            t = toks[k]
            kind = "n" if t.replace(".", "", 1).isdigit() else "item" if singular(t) in self.vocab else "word"
            if kind == "n" and out and out[-1][0] == "item":  # "bearings 6204 2RS": a number in a name
                kind = "item"
            if kind == "item" and out and out[-1][0] == "item":
                out[-1] = ("item", out[-1][1] + " " + t)  # a run of name words is one item
            else:
                out.append((kind, t))
            k += 1
        return out

    def mask(self, text: str) -> str:
        """``text`` with every slot span replaced by its filler word(s)."""
        return " ".join(w if kind == "word" else self.fillers[kind] for kind, w in self.spans(text))

    def fill(self, exemplar: str) -> str:
        """An exemplar with its placeholders replaced by the filler words."""
        return _SLOT.sub(lambda m: self.fillers[m.group(1)], exemplar)


class Paraphraser:
    """Nearest-exemplar intent matcher (see the module doc).

    Args:
        encoder: an :class:`edge.models.embed.Encoder`.
        items: inventory items for the :class:`Masker` (may be empty: then only places and numbers
            are masked).
        language: picks ``exemplars/<language>.yaml``; ``exemplars`` (intent → sentences) replaces it.
        threshold: least cosine similarity of the best exemplar, 0..1.
        margin: least lead of the best intent's score over the next intent's.
        mask: False encodes utterances and exemplars as written (the fillers still fill placeholders).
    Raises:
        FileNotFoundError, ValueError: from :func:`load_exemplars`.
    """

    def __init__(self, encoder: Encoder, items: Iterable = (), language: str = "en",
                 exemplars: dict[str, list[str]] | None = None, threshold: float = THRESHOLD,
                 margin: float = MARGIN, mask: bool = True, fillers: dict[str, str] | None = None):
        self.encoder = encoder
        self.threshold = threshold
        self.margin = margin
        self.masker = Masker(items, fillers)
        self.use_mask = mask
        groups = exemplars if exemplars is not None else load_exemplars(language)
        self.sentences: list[str] = []
        self.labels: list[str] = []
        for name, sentences in groups.items():
            for s in sentences:
                self.sentences.append(s)
                self.labels.append(name)
        self.intents = sorted(set(self.labels))
        self._rows = {name: np.array([i for i, lab in enumerate(self.labels) if lab == name]) for name in self.intents}
        self.vectors = encoder.encode([self.masker.fill(s) for s in self.sentences])  # (m, 384)

    def set_items(self, items: Iterable) -> None:
        """A new inventory: only the masker's item vocabulary changes (the exemplars' vectors do not
        depend on the items)."""
        self.masker = Masker(items, self.masker.fillers)

    def prepare(self, text: str) -> str:
        """What is encoded for ``text`` (masked unless ``mask=False``)."""
        return self.masker.mask(text) if self.use_mask else text

    def scores(self, text: str) -> tuple[dict[str, float], dict[str, int]]:
        """Per intent: the best exemplar's cosine similarity, and that exemplar's index."""
        sims = self.vectors @ self.encoder.encode([self.prepare(text)])[0]
        best, where = {}, {}
        for name, rows in self._rows.items():
            j = int(rows[np.argmax(sims[rows])])
            best[name], where[name] = float(sims[j]), j
        return best, where

    def match(self, text: str) -> tuple[str, float, float] | None:
        """``(intent_name, score, margin)`` of the nearest intent, or None (below the threshold or
        the margin, nearest to a free question, or no words). Raises nothing."""
        result = self.explain(text)
        return None if result is None else (result["intent"], result["score"], result["margin"])

    def explain(self, text: str) -> dict | None:
        """:meth:`match` with the winning exemplar: ``{"intent", "score", "margin", "exemplar"}`` or None."""
        if not normalize_text(text):
            return None
        best, where = self.scores(text)
        ranked = sorted(best, key=best.get, reverse=True)
        top = ranked[0]
        lead = best[top] - best[ranked[1]] if len(ranked) > 1 else best[top]
        if top not in MATCHABLE or best[top] < self.threshold or lead < self.margin:
            return None
        return {"intent": top, "score": round(best[top], 4), "margin": round(lead, 4),
                "exemplar": self.sentences[where[top]]}


def understand_paraphrase(text: str, fill_slots: Callable[[str, str], Intent | None],
                          paraphraser: Paraphraser) -> Intent | None:
    """``text`` → :class:`Intent` through the paraphrase path, or None (no confident match, or the
    resolver gave nothing).

    ``fill_slots(intent_name, text)``: the deterministic slot resolver; its intent must be the
    matched one (anything else is None), or the stock question a what-if command is
    (:func:`edge.stages.nlu.grammar.what_if`: ``explain["what_if"]``). The result has ``source="paraphrase"`` and
    ``explain={"path": "paraphrase", "score", "margin", "exemplar", "slots"}``. Raises what
    ``fill_slots`` raises."""
    found = paraphraser.explain(text)
    if found is None:
        return None
    intent = fill_slots(found["intent"], text)
    if intent is None or (intent.intent != found["intent"] and not intent.explain.get("what_if")):
        return None
    explain = {"path": "paraphrase", "score": found["score"], "margin": found["margin"],
               "exemplar": found["exemplar"], "slots": intent.slots()}
    return dataclasses.replace(intent, source="paraphrase", text=text, explain=explain)
