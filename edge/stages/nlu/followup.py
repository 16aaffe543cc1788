"""Follow-up turns: asking back which item was meant, taking the answer, and yes/no.

The pipeline calls these after an :class:`Intent` came back with ``extra["candidates"]`` (ask
"M8 bolts or M8 washers?", then :func:`resolve_choice` on the answer, heard without a new wake
word) or when a record must be read back and confirmed (:func:`yes_no`).
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from edge.stages.nlu.filler import has_cjk
from edge.stages.nlu.grammar import Grammar

LANGUAGES = ("en", "zh")

_YES_EN = re.compile(
    r"\b(?:yes|yeah|yep|yup|yea|ya|aye|correct|right|sure|ok|okay|confirm|confirmed|affirmative|absolutely|"
    r"definitely|exactly|go ahead|do it|sounds good|of course|uh huh|please do|thats it)\b")
_NO_EN = re.compile(r"\b(?:no|nope|nah|cancel|wrong|incorrect|negative|dont|stop|abort|never ?mind|not)\b")
_NEGATED_YES_EN = re.compile(r"\b(?:not|isnt|dont|no)\s+(?:right|correct|it|that|sure|okay|ok)\b")
_YES_ZH_SURE = re.compile(r"没错|没问题|对对|是的|好的")
_NO_ZH = re.compile(r"不|取消|算了|错了|别|否")
_YES_ZH = re.compile(r"是|对|好|行|可以|确认|确定|ok|yes")  # not 嗯: a hesitation as often as an "mm-hm"

# ordinal answers: "the first one", "number two", "the last one"; index into the candidates
_ORDINALS_EN = {"first": 0, "1st": 0, "former": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2,
                "fourth": 3, "4th": 3, "fifth": 4, "5th": 4, "last": -1, "latter": -1}
_NUMBER_EN = {"one": 0, "two": 1, "three": 2, "four": 3, "five": 4, "1": 0, "2": 1, "3": 2, "4": 3, "5": 4}
_ORDINAL_ZH = re.compile(r"第([一二三四五12345])个?|(最后|后面|后一)|(前面|前一|头一)")
_ZH_DIGIT = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "1": 0, "2": 1, "3": 2, "4": 3, "5": 4}
#: nouns that have no plural in a question ("white paint or copy paper?")
UNCOUNTABLE = frozenset("paint paper tape oil glue grease sand cement wire cable water fuel sealant "
                        "lubricant solder".split())


def _words(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text or "").lower().replace("'", "").replace("\u2019", "")
    return re.sub(r"[^a-z0-9]+", " ", text).split()


def yes_no(text: str, language: str = "en") -> bool | None:
    """A spoken answer to a yes/no question → True (yes), False (no), or None (neither, or both).

    English yes: "yes", "yeah", "yep", "correct", "that's right", "sure", "okay", "go ahead" …;
    no: "no", "nope", "cancel", "wrong", "stop", "not right" …. Chinese (``language="zh"``, or any
    text with ideographs) yes: 是 / 对 / 好的 / 行 / 可以 / 确认 / 没错; no: 不是 / 不 / 不对 /
    取消 / 算了 / 错了. A negation wins over the word it negates ("that's not right" → False,
    "不对" → False). Raises ``ValueError`` for an unknown ``language``.
    """
    if language not in LANGUAGES:
        raise ValueError(f"language {language!r} is not supported; use one of {', '.join(LANGUAGES)}")
    if has_cjk(text or ""):
        t = re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text).lower())
        if _YES_ZH_SURE.search(t) and not re.search(r"不是|不对|不好|不行", t):
            return True
        if _NO_ZH.search(t):
            return False
        return True if _YES_ZH.search(t) else None
    s = " ".join(_words(text))
    if not s:
        return None
    if _NEGATED_YES_EN.search(s):
        return False
    yes, no = bool(_YES_EN.search(s)), bool(_NO_EN.search(s))
    if yes == no:
        return None
    return yes


def _ordinal(text: str, n: int) -> int | None:
    """The candidate index an ordinal answer points at, or None."""
    if has_cjk(text or ""):
        m = _ORDINAL_ZH.search(text)
        if not m:
            return None
        if m.group(1):
            return _ZH_DIGIT[m.group(1)]
        return n - 1 if m.group(2) else 0
    ws = _words(text)
    for k, w in enumerate(ws):
        if w in _ORDINALS_EN:
            return _ORDINALS_EN[w] % n if _ORDINALS_EN[w] < 0 else _ORDINALS_EN[w]
        if w == "number" and k + 1 < len(ws) and ws[k + 1] in _NUMBER_EN:
            return _NUMBER_EN[ws[k + 1]]
    if ws and ws[-1] in ("one", "1") and len(ws) <= 2 and ws[0] in ("the", "one", "1"):
        return 0  # "the one" is not an answer, but "one" / "the 1" is: the first
    return None


def resolve_choice(text: str, candidates: Sequence) -> str | None:
    """The SKU of the candidate an answer to :func:`ask_back_text` picks, or None.

    ``text``: the answer as transcribed ("the bolts", "washers", "M8 washer please", "the first
    one", "number two", "the last one", "the one in bin twelve", "螺栓", "第二个").
    ``candidates``: the items asked about, in the order they were read out (objects with ``sku``,
    ``item``, ``location``, ``aliases``, e.g. :class:`edge.stages.store.Item`). Names are matched as in
    the grammar path, but only against these items, so a word they do not share ("bolts") decides.
    None when the answer fits none or several of them. Raises nothing.
    """
    cands = list(candidates)
    if not cands:
        return None
    lang = "zh" if has_cjk(text or "") else "en"
    m = Grammar(cands, language=lang).resolve_item(text or "")
    if m.sku is not None:
        return m.sku
    k = _ordinal(text, len(cands))
    if k is not None and -len(cands) <= k < len(cands):
        return cands[k].sku
    return None


def _plural(name: str) -> str:
    last = name.rsplit(" ", 1)[-1].lower()
    if last in UNCOUNTABLE or last.endswith("s") or not last.isalpha():
        return name
    if re.search(r"[^aeiou]y$", last):
        return name[:-1] + "ies"
    if re.search(r"(?:x|ch|sh|ss|z)$", last):
        return name + "es"
    return name + "s"


def _zh_name(item) -> str:
    return next((a for a in getattr(item, "aliases", ()) if has_cjk(a)), item.item)


def ask_back_text(candidates: Sequence, language: str = "en") -> str:
    """The question that asks which of ``candidates`` was meant, short enough to speak.

    ``candidates``: items (``item``, ``aliases``) in the order to read them. English: plural names,
    ``"M8 bolts or M8 washers?"``, ``"M8 bolts, M8 washers or M8 nuts?"``; Chinese: the first
    Chinese alias (else the name), ``"M8螺栓还是M8垫圈？"``. No candidates: ``"Which item?"`` /
    ``"哪一个？"``. Raises ``ValueError`` for an unknown ``language``.
    """
    if language not in LANGUAGES:
        raise ValueError(f"language {language!r} is not supported; use one of {', '.join(LANGUAGES)}")
    cands = list(candidates)
    if language == "zh":
        names = [_zh_name(c) for c in cands]
        if not names:
            return "哪一个？"
        return ("、".join(names[:-1]) + "还是" + names[-1] if len(names) > 1 else names[0]) + "？"
    names = [_plural(c.item) for c in cands]
    if not names:
        return "Which item?"
    return (", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]) + "?"
