"""The size said in a command's words (:func:`spoken_size`): a thread ("M10", "ten by eighty"), a length
("six mil" = 6 mm, "5 centimetre" = 50 mm), a garment size ("large", "double extra large"), a current
("13 amp"), a bearing's designation and seal ("6304 2RS"), bare numbers that may be a size, "long" or
"short"; and whether an item's :class:`edge.stages.sizes.Size` has or fits such an attribute. Used by
:class:`edge.stages.nlu.resolve.ItemIndex` to narrow a family to its variants.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from edge.stages.nlu.lexicon import NOT_ITEM
from edge.stages.sizes import GARMENT_WORDS, SEALS, Size

_THREAD = re.compile(r"^m(\d+(?:\.\d+)?)$")
NUMBER = re.compile(r"^\d+(?:\.\d+)?$")
_UNIT_MM = {"mm": 1.0, "cm": 10.0}
#: spoken current units after a number ("thirteen amp", "13 amps"); "13a" is one token. A bare "a"
#: after a number is no unit ("0.75 a litre", "two a day")
_AMP_WORDS = frozenset({"amp", "amps", "ampere", "amperes"})
_AMP_TOKEN = re.compile(r"^(\d+(?:\.\d+)?)a(?:mps?)?$")
GARMENT_SPOKEN = {"small": "S", "medium": "M", "large": "L", "xs": "XS", "xl": "XL", "xxl": "XXL", "xxxl": "XXXL",
                  "2xl": "XXL", "3xl": "XXXL", "xxs": "XXS"}
#: "double extra large" is XXL, "triple extra large" XXXL (a size no glove may have: then it is asked)
TIMES_X = {"double": "X", "triple": "XX"}
#: a bearing's seal as said: one token ("2rs", "zz") or two ("2 rs", "z z", "double z")
_SEAL_SAID = {s.lower(): s for s in SEALS}
_SEAL_PAIRS = {("2", "rs"): "2RS", ("2", "z"): "2Z", ("z", "z"): "ZZ", ("double", "z"): "ZZ", ("2", "rz"): "2RZ"}
_BEARING_CODE = re.compile(r"^\d{3,5}$")
_CODE_AND_SEAL = re.compile(rf"^(\d{{3,5}})({'|'.join(s.lower() for s in SEALS)})$")  # "6304zz"
#: words that say the longer or the shorter of two sizes ("the long cable ties", "the short ones");
#: "large" and "small" are garment sizes
_EXTREME = {"long": 1, "longer": 1, "longest": 1, "big": 1, "bigger": 1, "biggest": 1, "larger": 1, "largest": 1,
            "short": -1, "shorter": -1, "shortest": -1, "smaller": -1, "smallest": -1}
#: what a variant attribute is called, in the order variants are checked and asked (a bearing's seal
#: before its designation: "6213 2RS", not stocked, is asked among the 2RS ones)
ATTRIBUTES = ("thread", "millimetre", "size", "amp", "seal", "bearing")


@dataclass(frozen=True)
class SpokenSize:
    """The size words of an utterance: ``thread`` (``"M10"``), ``mm`` (millimetres), ``garment``
    (``"L"``), ``amp`` (amperes), ``bearing`` (a designation, ``"6205"``) and its ``seal``
    (``"2RS"``), with their token indices and how each was said (for ``heard_variant``)."""

    thread: str | None = None
    mm: float | None = None
    garment: str | None = None
    amp: float | None = None
    tokens: frozenset[int] = frozenset()
    said: tuple[tuple[str, str], ...] = ()  # (attribute, words) in the order checked
    #: bare numbers that may be a size in millimetres ("the 380 cable ties", "two 125 cutting discs"):
    #: (token index, value), used only when exactly such a variant exists
    soft: tuple[tuple[int, float], ...] = ()
    #: words with digits and letters that are no thread, length or current ("p240", "2rs", "10w"):
    #: (token index, word), a grade or code that may single out an item of a family
    codes: tuple[tuple[int, str], ...] = ()
    bearing: str | None = None
    seal: str | None = None
    #: bare numbers beside "bearing" that may be its designation ("2 6305 bearings"): (token index,
    #: digits), used only when such a bearing exists
    soft_bearing: tuple[tuple[int, str], ...] = ()
    #: +1 / −1 when "long" / "short" (…) is said, with its token index: picks between two lengths only
    extreme: tuple[int, int] | None = None

    def checks(self):
        values = {"thread": self.thread, "millimetre": self.mm, "size": self.garment, "amp": self.amp,
                  "bearing": self.bearing, "seal": self.seal}
        for attr, words in self.said:
            yield attr, values[attr], words


def fmt(v: float) -> str:
    """A size value as said back: ``6.0`` → ``"6"``, ``2.5`` → ``"2.5"``."""
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def spoken_size(toks: list[str], skip: set[int], question: bool = False) -> SpokenSize:
    """The size said in ``toks`` (normalized, singular tokens), outside ``skip``. ``question``: no
    count is said, so any bare number beside a name word may be a size ("how many metres of 2.5
    earth cable")."""
    thread = mm = garment = None
    used: set[int] = set()
    said: dict[str, str] = {}
    amp = _spoken_amp(toks, skip, used, said)
    for i, t in enumerate(toks):
        if i in skip or i in used:
            continue
        m = _THREAD.match(t)
        if m and thread is None:
            thread = f"M{fmt(float(m.group(1)))}"
            used.add(i)
            said["thread"] = thread
            by = toks[i + 1:i + 3]  # "M10 x 80", "M8 by 30": the length after the thread
            if (mm is None and len(by) == 2 and by[0] in ("x", "by") and NUMBER.match(by[1])
                    and not skip.intersection((i + 1, i + 2))):
                mm = float(by[1]) * _UNIT_MM.get(toks[i + 3] if i + 3 < len(toks) else "", 1.0)
                used.update((i + 1, i + 2) if i + 3 >= len(toks) or toks[i + 3] not in _UNIT_MM
                            else (i + 1, i + 2, i + 3))
                said["millimetre"] = f"{fmt(mm)} millimetre"
        elif (NUMBER.match(t) and i + 1 < len(toks) and toks[i + 1] in _UNIT_MM and mm is None
              and i + 1 not in skip):
            mm = float(t) * _UNIT_MM[toks[i + 1]]
            used.update((i, i + 1))
            said["millimetre"] = f"{fmt(mm)} millimetre"
        elif (thread is None and NUMBER.match(t) and i + 2 < len(toks) and toks[i + 1] in ("by", "x")
              and NUMBER.match(toks[i + 2]) and not skip.intersection((i + 1, i + 2))
              and float(t).is_integer() and 2 <= float(t) <= 64):
            # "ten by eighty hex bolts": thread M10, 80 mm long
            thread, mm = f"M{fmt(float(t))}", float(toks[i + 2])
            used.update((i, i + 1, i + 2))
            if i + 3 < len(toks) and toks[i + 3] in _UNIT_MM:
                mm *= _UNIT_MM[toks[i + 3]]
                used.add(i + 3)
            said["thread"], said["millimetre"] = thread, f"{fmt(mm)} millimetre"
        elif garment is None and t in GARMENT_SPOKEN:
            extra = i > 0 and toks[i - 1] == "extra" and i - 1 not in skip
            garment = ("X" + GARMENT_SPOKEN[t]) if extra and t in ("small", "large") else GARMENT_SPOKEN[t]
            used.update((i - 1, i) if extra else (i,))
            times = toks[i - 2] if extra and i > 1 and i - 2 not in skip else ""
            if times in TIMES_X:
                garment = TIMES_X[times] + garment
                used.add(i - 2)
            said["size"] = GARMENT_WORDS.get(garment, garment)
    bearing, seal, soft_bearing = _spoken_bearing(toks, skip, used, said)
    order = [a for a in ATTRIBUTES if a in said]
    soft = () if mm is not None else _soft_sizes(toks, skip | used, question)
    codes = tuple((i, t) for i, t in enumerate(toks) if i not in skip and i not in used
                  and any(c.isdigit() for c in t) and any(c.isalpha() for c in t))
    extreme = next(((i, _EXTREME[t]) for i, t in enumerate(toks) if t in _EXTREME and i not in skip), None)
    return SpokenSize(thread, mm, garment, amp, frozenset(used), tuple((a, said[a]) for a in order), soft, codes,
                      bearing=bearing, seal=seal, soft_bearing=soft_bearing, extreme=extreme)


def _seal_at(toks: list[str], i: int, skip: set[int]) -> tuple[str, int] | None:
    """The seal said at ``toks[i]`` and how many tokens it takes, or None."""
    if i >= len(toks) or i in skip:
        return None
    pair = tuple(toks[i:i + 2])
    if pair in _SEAL_PAIRS and i + 1 not in skip:
        return _SEAL_PAIRS[pair], 2
    return (_SEAL_SAID[toks[i]], 1) if toks[i] in _SEAL_SAID else None


def _spoken_bearing(toks: list[str], skip: set[int], used: set[int], said: dict[str, str]):
    """A bearing designation said ("6205 2rs", "6304zz"): ``(designation, seal, soft)``; a seal
    alone ("the zz ones") of two letters or more; a bare number beside "bearing" is only ``soft``.
    The tokens taken are added to ``used``, the words to ``said``."""
    bearing = seal = None
    soft = []
    for i, t in enumerate(toks):
        if i in skip or i in used:
            continue
        m = _CODE_AND_SEAL.match(t)
        if m and bearing is None:
            bearing, seal = m.group(1), _SEAL_SAID[m.group(2)]
            used.add(i)
        elif _BEARING_CODE.match(t) and bearing is None:
            after = _seal_at(toks, i + 1, skip | used)
            if after is not None:
                bearing, seal = t, after[0]
                used.update(range(i, i + 1 + after[1]))
            elif "bearing" in toks[max(0, i - 1):i + 2]:
                soft.append((i, t))
        elif seal is None and not t.isdigit():
            alone = _seal_at(toks, i, skip | used)
            if alone is not None and len(alone[0]) >= 2 and alone[0] != "RS":  # a lone "z" or "rs" says little
                seal = alone[0]
                used.update(range(i, i + alone[1]))
    if bearing:
        said["bearing"] = bearing
    if seal:
        said["seal"] = seal
    return bearing, seal, tuple(soft)


def _spoken_amp(toks: list[str], skip: set[int], used: set[int], said: dict[str, str]) -> float | None:
    """A current rating said ("13 amp fuses", "a 10a breaker"): the amperes, its tokens added to
    ``used`` and its words to ``said["amp"]``; None when no number + amp unit is said."""
    for i, t in enumerate(toks):
        if i in skip:
            continue
        m = _AMP_TOKEN.match(t)
        if m:
            used.add(i)
        elif NUMBER.match(t) and i + 1 < len(toks) and toks[i + 1] in _AMP_WORDS and i + 1 not in skip:
            used.update((i, i + 1))
        else:
            continue
        value = float(m.group(1) if m else t)
        said["amp"] = f"{fmt(value)} amp"
        return value
    return None


def _soft_sizes(toks: list[str], skip: set[int], question: bool = False) -> tuple[tuple[int, float], ...]:
    """Bare numbers beside a name word that are no count: after "the"/"those" ("the 380 cable ties",
    "the 115 ones") or after another number, which is the count ("two 125 cutting discs", "50 cable
    ties 380", "3 cutting discs, the 115s"), or any in a ``question``."""
    nums = [i for i, t in enumerate(toks) if i not in skip and NUMBER.match(t)]
    out = []
    for k, i in enumerate(nums):
        before = toks[i - 1] if i > 0 else ""
        nxt = toks[i + 1] if i + 1 < len(toks) else ""
        beside = (nxt.isalpha() and nxt not in NOT_ITEM) or (before.isalpha() and before not in NOT_ITEM)
        the = before in ("the", "those", "these")
        if (beside and (k > 0 or the or question)) or (the and (k > 0 or nxt in ("one", "ones"))):
            out.append((i, float(toks[i])))
    return tuple(out)


def has_attr(size: Size, attr: str) -> bool:
    """Whether an item's ``size`` has the attribute ``attr`` (one of :data:`ATTRIBUTES`)."""
    return bool({"thread": size.thread, "millimetre": size.mm, "size": size.garment, "amp": size.amp,
                 "bearing": size.bearing, "seal": size.seal}[attr])


def fits(size: Size, attr: str, value) -> bool:
    """Whether an item's ``size`` has ``value`` for ``attr`` (millimetres and amperes within 1e-6)."""
    if attr == "thread":
        return size.thread == value
    if attr == "millimetre":
        return any(abs(v - value) < 1e-6 for v in size.mm)
    if attr == "amp":
        return size.amp is not None and abs(size.amp - value) < 1e-6
    if attr == "bearing":
        return size.bearing == value
    if attr == "seal":
        return size.seal == value
    return size.garment == value
