"""The one way item names, aliases and places are compared: Unicode-aware, every script kept.

``name_key("Schrauben Ä")`` ≠ ``name_key("Schrauben Ö")``; ``name_key("ＭＳ８ Bolt")`` =
``name_key("ms8 bolt")`` (NFKC folds full-width forms); ``name_key("Straße")`` = ``name_key("STRASSE")``
(case folding). A leaf: the store refuses imports whose keys collide, and the understanding looks
names up by the same key.
"""
from __future__ import annotations

import re
import unicodedata

_APOSTROPHES = re.compile(r"['\u2019\u02bc]")
# anything that is neither a letter/digit of any script nor a combining mark separates words
_SEPARATORS = re.compile(r"[^\w\u0300-\u036f]+|_")


def name_key(text: str) -> str:
    """``text`` in compare form: NFKC, case-folded, apostrophes dropped, thousands commas joined,
    other punctuation and runs of spaces → one space, stripped. Letters of every script are kept
    (no reduction to ASCII). Raises nothing; an empty or all-punctuation text gives ``""``."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _APOSTROPHES.sub("", text)
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = unicodedata.normalize("NFC", " ".join(_SEPARATORS.sub(" ", text).split()))
    return text
