"""The one way item names, aliases and places are compared: Unicode-aware, every script kept.

``name_key("Schrauben Ä")`` ≠ ``name_key("Schrauben Ö")``; ``name_key("ＭＳ８ Bolt")`` =
``name_key("ms8 bolt")`` (NFKC folds full-width forms); ``name_key("Straße")`` = ``name_key("STRASSE")``
(case folding). A leaf: the store refuses imports whose keys collide, and the understanding looks
names up by the same key.

:func:`spoken_key` is how a name sounds to a speech recognizer: the accents of Latin letters
dropped ("Müller" and "Muller" are two names in writing, one when spoken). The store warns at import
about two items whose names differ only so, and the understanding asks which of them was meant.
"""
from __future__ import annotations

import re
import unicodedata

_APOSTROPHES = re.compile(r"['\u2019\u02bc]")
# anything that is neither a letter/digit of any script nor a combining mark separates words
_SEPARATORS = re.compile(r"[^\w\u0300-\u036f]+|_")
#: Latin letters that are no base letter with a mark in Unicode, as they are heard
_LATIN_SPOKEN = str.maketrans({"ø": "o", "æ": "ae", "œ": "oe", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i"})
#: the end of the Latin blocks (Basic Latin to Latin Extended-B): marks on these letters are accents
_LATIN_END = "\u0250"


def name_key(text: str) -> str:
    """``text`` in compare form: NFKC, case-folded, apostrophes dropped, thousands commas joined,
    other punctuation and runs of spaces → one space, stripped. Letters of every script are kept
    (no reduction to ASCII). Raises nothing; an empty or all-punctuation text gives ``""``."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _APOSTROPHES.sub("", text)
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = unicodedata.normalize("NFC", " ".join(_SEPARATORS.sub(" ", text).split()))
    return text


def spoken_key(text: str) -> str:
    """:func:`name_key` of ``text`` with the accents of Latin letters dropped (``"Müller"`` →
    ``"muller"``, ``"Café"`` → ``"cafe"``, ``"Søren"`` → ``"soren"``): names with the same spoken key
    sound the same to a speech recognizer. Marks on letters of other scripts stay (``"й"`` ≠ ``"и"``,
    ``"が"`` ≠ ``"か"``). Raises nothing."""
    out: list[str] = []
    for ch in unicodedata.normalize("NFD", name_key(text).translate(_LATIN_SPOKEN)):
        if unicodedata.combining(ch) and out and out[-1] < _LATIN_END:
            continue  # an accent on a Latin letter: not heard
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))
