"""Spoken English numbers → integers, for the grammar path.

Rules (all matching is case-insensitive, on whole word tokens):

* **Cardinals** are read by place: units/teens/tens fill a group below a thousand, ``hundred``
  multiplies the group, ``thousand``/``million``/``billion`` close it (each scale smaller than the
  previous one). ``and`` is skipped only after ``hundred`` or a scale and before more number words
  (``one hundred and five`` → 105). Anything that would fill a slot twice ends the number, so
  ``three four`` is two numbers, 3 and 4. ``zero`` is a number only on its own.
* ``a`` counts as one before ``hundred``/``thousand``/``million``/``dozen``
  (``a thousand two hundred`` → 1200). ``dozen`` multiplies by 12 and ends the number
  (``two dozen`` → 24, ``half a dozen`` / ``a half dozen`` / ``half dozen`` → 6). ``a couple of`` / ``a pair of`` (``of``
  optional; ``a`` optional before ``couple``) → 2, except ``a pair of`` gloves, goggles and other
  :data:`PAIRED` things → 1 (one pair).
* **Digits** already written as digits: ``12``, ``2,023`` (thousands commas), ``12th``; a digit
  token may be followed by a scale word (``5 hundred`` → 500).
* **Ordinals** count as their cardinal and end the number (``twelfth`` → 12,
  ``twenty first`` → 21). :func:`normalize_numbers` leaves a lone ``first``/``second`` alone.
* **Codes** read digit by digit: a run of single-digit words (``zero``–``nine``, ``oh``/``o`` as 0,
  or single digits ``0``–``9``; ``oh``/``o`` only inside the run, never at its end, so ``four
  o-rings`` stays 4) of length ≥ 2 is concatenated when it follows a location word
  (bin, drawer, shelf, rack, box; see :data:`CODE_CONTEXT`) or when it starts with a real digit and
  contains ``oh``/``o``/``zero`` (``two oh two three`` → 2023); a trailing ``oh`` counts
  (``one oh oh`` → 100) unless an interjection follows. Otherwise cardinal arithmetic applies.
* ``six and a half`` → 6.5, ``three and a quarter`` → 3.25; ``one-twenty-five`` (hyphens) → 125
  (:func:`hyphen_hundreds`, before punctuation is dropped).
"""
from __future__ import annotations

import re

_SMALL_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                "fourteen fifteen sixteen seventeen eighteen nineteen").split()
SMALL = {w: n for n, w in enumerate(_SMALL_WORDS)}
TENS = {w: 10 * n for n, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)}
SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9}
#: ordinal word → the cardinal word it stands for
ORDINALS = {"first": "one", "second": "two", "third": "three", "fourth": "four", "fifth": "five",
            "sixth": "six", "seventh": "seven", "eighth": "eight", "ninth": "nine", "tenth": "ten",
            "eleventh": "eleven", "twelfth": "twelve",
            **{w + "th": w for w in _SMALL_WORDS[13:]}, **{w[:-1] + "ieth": w for w in TENS},
            **{w + "th": w for w in ("hundred", *SCALES)}}
#: words after which a run of single digits is read as a code (``bin two three`` → bin 23)
CODE_CONTEXT = frozenset({"bin", "drawer", "shelf", "rack", "box", "number", "no"})
_ZERO_WORDS = {"oh": 0, "o": 0}
_INTERJECTIONS = frozenset("wait no sorry i yeah yes well right hang hmm um uh actually my dear god shoot damn "
                           "and dear okay ok ring rings".split())
#: things that come as a pair: "a pair of" them is one (of gloves, goggles …), of anything else two
PAIRED = frozenset("glove gloves goggle goggles glasses spectacles boot boots shoe shoes earmuffs earmuff defenders "
                   "overalls trousers socks gauntlets overshoes pliers scissors snips tongs".split())
_DIGIT_RE = re.compile(r"^(\d{1,3}(?:,\d{3})+|\d+)(st|nd|rd|th)?$")
_TOKEN_RE = re.compile(r"\d{1,3}(?:,\d{3})+(?!\d)|[A-Za-z0-9]+(?:'[A-Za-z]+)?")


def _digit_value(tok: str) -> tuple[int, bool] | None:
    """``"2,023"`` → (2023, False); ``"12th"`` → (12, True, i.e. ordinal); non-digit → None."""
    m = _DIGIT_RE.match(tok)
    return (int(m.group(1).replace(",", "")), bool(m.group(2))) if m else None


def _single_digit(tok: str) -> str | None:
    """The digit a token stands for in a code (``"two"``/``"2"`` → ``"2"``, ``"oh"`` → ``"0"``)."""
    if tok in _ZERO_WORDS:
        return "0"
    if tok in SMALL and SMALL[tok] < 10:
        return str(SMALL[tok])
    return tok if len(tok) == 1 and tok.isdigit() else None


def _place_hundreds(ws: list[str]) -> tuple[str, int] | None:
    """A place number said the short way after a place word: ``bin one eighteen`` → 118, ``bin
    two fifty`` → 250, ``bin one twenty five`` → 125 (a unit, then a teen or a ten)."""
    if len(ws) < 2 or SMALL.get(ws[0], 0) not in range(1, 10):
        return None
    hundreds = SMALL[ws[0]] * 100
    if SMALL.get(ws[1], 0) >= 10:
        return str(hundreds + SMALL[ws[1]]), 2
    if ws[1] not in TENS:
        return None
    if len(ws) > 2 and SMALL.get(ws[2], 0) in range(1, 10):
        return str(hundreds + TENS[ws[1]] + SMALL[ws[2]]), 3
    return str(hundreds + TENS[ws[1]]), 2


def _code(ws: list[str], i: int, context: bool) -> tuple[str, int] | None:
    """A digit-by-digit code starting at ``ws[i]``: (digit string, end index) or None."""
    j = i
    while j < len(ws) and _single_digit(ws[j]) is not None:
        j += 1
    # "o" ends no digit string ("four o rings" is 4 o-rings); a trailing "oh" does ("one oh oh" is 100,
    # "bin two nine oh" bin 290) unless an interjection follows ("four oh wait five")
    end = j
    while j > i and ws[j - 1] in _ZERO_WORDS:
        j -= 1
    if j < end and all(w == "oh" for w in ws[j:end]) and (end == len(ws) or ws[end] not in _INTERJECTIONS):
        j = end
    run = ws[i:j]
    if len(run) < 2 or all(w in _ZERO_WORDS for w in run):
        return None
    if not context and (run[0] in _ZERO_WORDS or not any(w in _ZERO_WORDS or w == "zero" for w in run)):
        return None
    return "".join(_single_digit(w) for w in run), j


def _fixed_count(ws: list[str], i: int) -> tuple[int, int] | None:
    """The counts said as phrases at ``ws[i]`` (``half a dozen``, ``a couple of``, ``a pair``, a lone
    ``zero``): (value, end index) or None."""
    n = len(ws)
    if ws[i:i + 3] in (["half", "a", "dozen"], ["a", "half", "dozen"]):
        return 6, i + 3
    if ws[i:i + 2] == ["half", "dozen"]:
        return 6, i + 2
    j = i + (ws[i] == "a")
    if j < n and (ws[j] == "couple" or (ws[j] == "pair" and j > i)):
        end = j + 1 + (j + 1 < n and ws[j + 1] == "of")
        # "a pair of gloves" is one pair (gloves are counted in pairs); "a pair of fuses" is two
        one = ws[j] == "pair" and any(w in PAIRED for w in ws[end:end + 5])
        return (1 if one else 2), end
    if ws[i] == "zero":
        return 0, i + 1
    return None


class _Places:
    """The place slots of a cardinal being read: ``total`` (closed by a scale word) and the open
    ``group`` below a thousand, with which of its hundreds/tens/units slots are filled."""

    def __init__(self) -> None:
        self.total = self.group = 0
        self.hund = self.tens = self.units = False
        self.last_scale: int | None = None

    def take(self, w: str) -> bool:
        """Add the number word ``w`` (unit, teen, ten, ``hundred`` or a scale); False when ``w`` is
        no such word or would fill a slot twice (the number ends before it)."""
        if w in SMALL and w != "zero":
            v = SMALL[w]
            if self.units or (v >= 10 and self.tens):
                return False
            self.group += v
            self.units, self.tens = True, self.tens or v >= 10
        elif w in TENS:
            if self.tens or self.units:
                return False
            self.group += TENS[w]
            self.tens = True
        elif w == "hundred":
            if self.hund or self.group >= 100:
                return False
            self.group = (self.group or 1) * 100
            self.hund, self.tens, self.units = True, False, False
        elif w in SCALES:
            if self.last_scale is not None and SCALES[w] >= self.last_scale:
                return False
            self.total += (self.group or 1) * SCALES[w]
            self.group, self.hund, self.tens, self.units, self.last_scale = 0, False, False, False, SCALES[w]
        else:
            return False
        return True

    def and_joins(self, nxt: str) -> bool:
        """``and`` before the word ``nxt`` continues the number: it follows ``hundred`` or a scale
        and a unit, teen or ten comes next (``one hundred and five``)."""
        nxt = ORDINALS.get(nxt, nxt)
        return bool((self.hund or self.last_scale) and not (self.tens or self.units)
                    and (nxt in TENS or SMALL.get(nxt, 0) > 0))


def _cardinal(ws: list[str], i: int) -> tuple[int, int] | None:
    """A cardinal (or ordinal) starting at ``ws[i]``: (value, end index) or None."""
    fixed = _fixed_count(ws, i)
    if fixed is not None:
        return fixed
    n = len(ws)
    places = _Places()
    j = i
    if ws[i] == "a":
        j = i + 1
        if j >= n or (ws[j] not in SCALES and ws[j] not in ("hundred", "dozen")):
            return None
        places.group, places.units = 1, True
    end = None
    while j < n:
        w, ordinal = ws[j], False
        if w in ORDINALS:
            w, ordinal = ORDINALS[w], True
        if w == "dozen":
            return (places.total + places.group or 1) * 12, j + 1
        if w == "and":
            if not places.and_joins(ws[j + 1] if j + 1 < n else ""):
                break
            j += 1
            continue
        if not places.take(w):
            digit = _digit_value(w)
            if digit is None or end is not None or places.group or places.total:
                break
            places.group, ordinal = digit  # digits start a number only ("5 hundred", "12th")
            places.hund, places.tens, places.units = places.group >= 100, True, True
        j += 1
        end = j
        if ordinal:
            break
    return (places.total + places.group, end) if end is not None else None


def words_to_number(tokens: list[str], code: bool = False) -> tuple[int, int] | None:
    """Read the number that starts at ``tokens[0]``.

    ``tokens``: words as split from a transcript (case-insensitive, no surrounding punctuation),
    e.g. ``["one", "hundred", "and", "five", "washers"]``. ``code``: True when the tokens follow a
    location word, so a run of single digits is a code (``["one", "two"]`` → 12). Returns
    ``(value, n_tokens_consumed)`` — e.g. ``(105, 4)`` — or None when ``tokens`` does not start with a
    number. A code's leading zeros are lost in the int (use :func:`normalize_numbers` to keep them).
    Raises nothing.
    """
    ws = [t.lower() for t in tokens]
    if not ws:
        return None
    c = _code(ws, 0, code)
    if c:
        return int(c[0]), c[1]
    return _cardinal(ws, 0)


_UNIT_RE = "|".join(_SMALL_WORDS[1:10])
_HYPHEN_HUNDREDS = re.compile(rf"\b({_UNIT_RE})-({'|'.join(TENS)})(?:-({_UNIT_RE}))?\b", re.IGNORECASE)


def hyphen_hundreds(text: str) -> str:
    """``one-twenty-five`` → ``125``, ``three-eighty`` → ``380`` in raw text: a unit joined by a
    hyphen to a ten, the way three-digit sizes are said (only with the hyphen: "two twenty" stays 2
    and 20). Run before punctuation is dropped. Raises nothing."""
    def value(m: re.Match) -> str:
        v = SMALL[m.group(1).lower()] * 100 + TENS[m.group(2).lower()]
        return str(v + (SMALL[m.group(3).lower()] if m.group(3) else 0))
    return _HYPHEN_HUNDREDS.sub(value, text)


#: "six and a half" → 6.5, so every reader of a number (a count, a size, an answer) sees the same
_AND_A_HALF = re.compile(r"\b(\d+) and (?:a|one) (half|quarter)\b", re.IGNORECASE)
_PART = {"half": 0.5, "quarter": 0.25}


def normalize_numbers(text: str) -> str:
    """Rewrite every spoken number in ``text`` as digits, keeping everything else as it was.

    ``"add one hundred and five washers to bin two oh two three"`` →
    ``"add 105 washers to bin 2023"``; ``"2,023"`` → ``"2023"``; a code keeps its leading zeros
    (``"bin oh seven"`` → ``"bin 07"``). A number never spans punctuation (only spaces or a hyphen,
    ``twenty-five`` → 25). A lone ``first``/``second`` is left as a word. Raises nothing.
    """
    toks = list(_TOKEN_RE.finditer(text))
    ws = [m.group(0).lower() for m in toks]
    # gap_ok[k]: tokens k and k+1 are separated only by whitespace or a hyphen
    gap_ok = [text[toks[k].end():toks[k + 1].start()].strip() in ("", "-") for k in range(len(toks) - 1)]
    out, pos, i = [], 0, 0
    while i < len(toks):
        # the tokens that may join a number starting at i: up to the first punctuation gap
        lim = i + 1
        while lim < len(toks) and gap_ok[lim - 1]:
            lim += 1
        context = i > 0 and gap_ok[i - 1] and ws[i - 1] in CODE_CONTEXT
        sub = ws[i:lim]
        hit = _code(sub, 0, context) or (_place_hundreds(sub) if context else None)
        if hit is None:
            card = _cardinal(sub, 0)
            if card and not (card[1] == 1 and sub[0] in ("first", "second")):
                hit = str(card[0]), card[1]
        if hit is None:
            i += 1
            continue
        value, n = hit
        out += [text[pos:toks[i].start()], value]
        pos, i = toks[i + n - 1].end(), i + n
    out.append(text[pos:])
    return _AND_A_HALF.sub(lambda m: f"{int(m.group(1)) + _PART[m.group(2).lower()]:g}", "".join(out))
