"""The words and text forms the grammars share (a leaf: it imports only the number normalizer).

English command words (:data:`IN_WORDS`, :data:`OUT_WORDS`, :data:`LOG_WORDS`, :data:`STOP_WORDS`,
:data:`NOT_ITEM`), the text normal form both grammars compare item names in (:func:`clean_text`,
:func:`normalize_text`, :func:`singular`, :func:`is_name_word`, :func:`fold`, :func:`head_words`) and locations (:func:`find_location`,
:func:`normalize_location`: ``"bin twelve"`` → ``"bin 12"``, ``"shelf bee"`` → ``"shelf B"``).
Used by :mod:`edge.stages.nlu.grammar`, :mod:`edge.stages.nlu.zh` and :mod:`edge.stages.nlu.llm_intent`.
"""
from __future__ import annotations

import re
import unicodedata

from edge.stages.names import name_key
from edge.stages.nlu.numbers import hyphen_hundreds, normalize_numbers

LOCATION_WORDS = frozenset({"bin", "drawer", "shelf", "rack", "box", "cabinet", "cupboard", "locker"})
#: spoken letter names → the letter (``"bee"`` → ``b``), for locations such as ``shelf B``
LETTER_NAMES = {"bee": "b", "be": "b", "see": "c", "sea": "c", "dee": "d", "ee": "e", "ef": "f", "eff": "f",
                "gee": "g", "aitch": "h", "eye": "i", "jay": "j", "kay": "k", "el": "l", "em": "m", "en": "n",
                "oh": "o", "pee": "p", "cue": "q", "queue": "q", "ar": "r", "are": "r", "es": "s", "tee": "t",
                "tea": "t", "you": "u", "vee": "v", "ex": "x", "why": "y", "zed": "z", "zee": "z"}
#: letter names that are also common words: a location letter only at the end of the command
AMBIGUOUS_LETTERS = frozenset({"a", "i", "o", "be", "see", "are", "you", "why", "tea", "oh", "eye"})
IN_WORDS = frozenset("add added adding receive received receiving got get put putting restock restocked "
                     "restocking delivered delivery arrived return returned returning inward inwards incoming".split())
OUT_WORDS = frozenset("use used using took take taking remove removed removing consume consumed "
                      "issue issued pulled grabbed subtract subtracted cut snipped fitted replaced installed swapped "
                      "topped outward outwards outgoing".split())
LOG_WORDS = frozenset({"log", "record", "enter", "book"})
STOP_WORDS = frozenset("a an the of to in on from at for we i you it is are do does did have has had any some "
                       "how many much what whats and please there this that my our me".split())
#: words that never name an item: command words, units, small talk (singular forms, see :func:`singular`)
NOT_ITEM = STOP_WORDS | IN_WORDS | OUT_WORDS | LOG_WORDS | LOCATION_WORDS | frozenset(
    "doe wa was were be been being with just now today still left remaining stock level check count "
    "hand out give gave giving handed handing us them they those these one ones more few lot lots all "
    "piece pc pcs no nos nr nrs ea unit item thing stuff box boxe pack packet pair can cannot pallet roll set bag tin "
    "where wheres whats there theres here how about tell know need want get got go can could would "
    "will should shall may might must let lets like okay ok yes no not number no num so um uh oh hey "
    "also too again then than thank thanks sorry quick quickly total altogether back off up down".split())
_DECIMAL = re.compile(r"(?<=\d)\.(?=\d)")
#: a decimal said without its leading zero (".5", ",5"): a point or comma after no word or number
_BARE_DECIMAL = re.compile(r"(?<![\w.,])[.,](?=\d)")
_ORING = re.compile(r"\bo(?:h)?[\s-]?ring(s?)\b", re.IGNORECASE)

#: length units: part of a name ("10 mm"), never the word that names the item
UNITS = frozenset({"mm", "cm", "m"})


def clean_text(text: str) -> str:
    """:func:`edge.stages.names.name_key` of ``text`` (NFKC, case-folded, apostrophes dropped, thousands
    commas joined, other punctuation → spaces; letters of every script kept), with decimal points
    kept (``2.5``; ``.5`` is ``0.5``) and ``o-ring`` as one word (``oring``), so "four o-rings" is never "four o"."""
    # ".5 litres" is 0.5 litres: the point alone would be dropped as punctuation, leaving 5
    text = _DECIMAL.sub("DECIMALPOINT", _BARE_DECIMAL.sub("0DECIMALPOINT", text or ""))
    text = _ORING.sub(lambda m: "oring" + (m.group(1) or ""), text)
    return name_key(text).replace("decimalpoint", ".")


_VULGAR = {"\u00bd": 0.5, "\u00bc": 0.25, "\u00be": 0.75, "\u2153": 1 / 3, "\u2154": 2 / 3, "\u215b": 0.125}
_MIXED = re.compile(r"(?<![\w./])(\d+)(?:\s+|-)(\d+)\s*[/\u2044]\s*(\d+)(?![\w/])")
_SLASH = re.compile(r"(?<![\w./])(\d+)\s*[/\u2044]\s*(\d+)(?![\w/])")
_GLYPH = re.compile(rf"(?<![\w.])(\d+)?\s?([{''.join(_VULGAR)}])")


def _decimal(v: float) -> str:
    return f"{round(v, 4):g}"


def written_fractions(text: str) -> str:
    """Fractions written with a slash or a glyph as decimals, before punctuation is dropped:
    ``"1/2 box"`` → ``"0.5 box"``, ``"2 1/2"`` → ``"2.5"``, ``"3/4 m"`` → ``"0.75 m"``, ``"2½"`` →
    ``"2.5"`` (never the numerator, never "21"). A slash whose top is not below its bottom ("24/7",
    "3/2") is left as written. Raises nothing."""
    def proper(num: str, den: str) -> float | None:
        n, d = int(num), int(den)
        return n / d if 0 < n < d else None

    def mixed(m: re.Match) -> str:
        f = proper(m.group(2), m.group(3))
        return m.group(0) if f is None else _decimal(int(m.group(1)) + f)

    def slash(m: re.Match) -> str:
        f = proper(m.group(1), m.group(2))
        return m.group(0) if f is None else _decimal(f)

    text = _GLYPH.sub(lambda m: _decimal(int(m.group(1) or 0) + _VULGAR[m.group(2)]), text)
    return _SLASH.sub(slash, _MIXED.sub(mixed, text))


def normalize_text(text: str) -> str:
    """:func:`clean_text`, numbers as digits, ``m 8`` → ``m8``, millimetres/``mil`` → ``mm``,
    centimetres → ``cm``, ``10mm`` → ``10 mm``."""
    text = normalize_numbers(clean_text(hyphen_hundreds(written_fractions(text or ""))))
    text = re.sub(r"\bmillimet(?:re|er)s?\b", "mm", text)
    text = re.sub(r"\bcentimet(?:re|er)s?\b", "cm", text)
    text = re.sub(r"(?<=\d) mils?\b", " mm", text)
    text = re.sub(r"\b(\d+(?:\.\d+)?)(mm|cm)\b", r"\1 \2", text)
    return re.sub(r"\bm (\d{1,2})\b", r"m\1", text)


def singular(word: str) -> str:
    """Crude singular, the same on both sides of a comparison: ``ties``→``tie``, ``boxes``→``box``."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if re.fullmatch(r"[a-z]+\d+s", word):  # "m8s" → "m8"
        return word[:-1]
    if word.endswith(("xes", "ches", "shes", "sses")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def fold(word: str) -> str:
    """``word`` without diacritics ("älva" → "alva")."""
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


#: words of a lot or a form that end a name after what it holds ("hex key *set*", "WD-40 *spray*")
_LOT_WORDS = frozenset("set kit box pack packet roll pair can tin bag case carton tube bottle spray".split())


def head_words(toks: tuple[str, ...]) -> set[str]:
    """The words that say what a name is (``toks``: its normalized, singular tokens): its last word
    and, past a lot word, the one before ("hex key set": set and key); "cable" of "cable tie" only
    says which tie. Numbers and units are no head ("o-ring 10 mm": oring)."""
    words = [t for t in toks if t.isalpha() and t not in UNITS]
    heads = set(words[-1:])
    if len(words) > 1 and words[-1] in _LOT_WORDS:
        heads.add(words[-2])
    return heads


def proper_words(name: str, start: int = 0) -> set[str]:
    """The normalized words of ``name`` written capitalized (from its word ``start`` on): a brand or a
    proper name ("Müller" of "Müller clamp"), which singles the item out even said alone."""
    return {singular(normalize_text(w)) for w in name.split()[start:] if w[:1].isupper() and w.isalpha()}


def common_words(name: str, toks: tuple[str, ...]) -> tuple[str, ...]:
    """``toks`` (the normalized, singular words of ``name``) without the proper names written after its
    first word ("hyllclips Älva": the head is "hyllclips", Älva says which one), unless nothing is left."""
    proper = proper_words(name, 1)
    return tuple(t for t in toks if t not in proper) or toks


def is_name_word(word: str) -> bool:
    """True when ``word`` (singular, normalized) can single out an item: not a command word, a
    number or a unit."""
    return word not in NOT_ITEM and not word.isdigit() and word not in UNITS


def location_at(toks: list[str], k: int) -> tuple[str, int] | None:
    """A location starting at ``toks[k]`` (normalized tokens): (``"bin 12"``/``"shelf B"``, end
    index) or None."""
    if toks[k] not in LOCATION_WORDS:
        return None
    j = k + 1 + (k + 1 < len(toks) and toks[k + 1] in ("number", "no", "num"))
    if j >= len(toks):
        return None
    ident = toks[j]
    if ident.isdigit():
        return f"{toks[k]} {int(ident)}", j + 1
    at_end = j + 1 == len(toks) or toks[j + 1] == "please"
    if (len(ident) == 1 or ident in LETTER_NAMES) and (ident not in AMBIGUOUS_LETTERS or at_end):
        return f"{toks[k]} {LETTER_NAMES.get(ident, ident).upper()}", j + 1
    return None


def find_location(toks: list[str]) -> tuple[str | None, set[int]]:
    """The first location in ``toks`` (normalized tokens) and the token indices it covers."""
    for k in range(len(toks)):
        loc = location_at(toks, k)
        if loc:
            return loc[0], set(range(k, loc[1]))
    return None, set()


def normalize_location(text: str) -> str | None:
    """``"bin twelve"``/``"Bin 12"`` → ``"bin 12"``, ``"shelf bee"`` → ``"shelf B"``; None if not one.

    ``text``: a location alone, as written in the inventory or spoken. Raises nothing.
    """
    toks = normalize_text(text).split()
    loc = location_at(toks, 0) if toks else None
    return loc[0] if loc and loc[1] == len(toks) else None
