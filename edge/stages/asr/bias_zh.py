"""Whisper's biasing prompt for Mandarin (``language: zh``), within the same token budget as English.

Multilingual Whisper writes Traditional characters for Mandarin unless the text it conditions on is
Simplified; a prompt that starts with a Simplified sentence (:data:`ZH_HEAD`) makes it write
Simplified (tried here with Whisper base: 撤銷 → 撤销). After the head come the stock words the
grammar of :mod:`edge.stages.nlu.zh` listens for (:data:`ZH_COMMANDS`), then the inventory's Chinese
names and aliases (``M8螺栓``) and its places as said in Mandarin (``bin 12`` → ``12号箱``, the forms
:func:`edge.stages.nlu.zh.find_location_zh` reads). English-only names are left out: they cost
tokens and a Mandarin speaker says the Chinese alias, or the Latin part inside it (``M8``).
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from rapidfuzz import fuzz

from edge.stages.nlu.filler import has_cjk

#: a Simplified-Chinese sentence first: without it Whisper base answers Mandarin in Traditional characters
ZH_HEAD = "以下是普通话的句子。"
#: the stock words of the Mandarin grammar (log out, log in, ask, undo)
ZH_COMMANDS = "用了、收到、还有多少、撤销上一条。"
#: between phrases: the enumeration comma is one token, the full-width comma three (Whisper's BPE)
ZH_SEPARATOR = "、"
#: inventory place kinds → how a Mandarin speaker says the place (``12号箱``)
ZH_PLACES = {"bin": "{n}号箱", "drawer": "{n}号抽屉", "shelf": "{n}号架"}
_PLACE = re.compile(r"^(bin|drawer|shelf)\s+(\S+)$", re.IGNORECASE)
#: least rapidfuzz partial_ratio (0..100) of a Chinese phrase against the first transcript for
#: :func:`focus_zh` to move it forward: one character in four misheard (丁晴手套 for 丁腈手套) scores 75
ZH_FOCUS_MATCH = 75

__all__ = ["ZH_COMMANDS", "ZH_HEAD", "compose_zh", "focus_zh", "zh_phrases"]


def zh_phrases(phrases: Iterable[str]) -> list[str]:
    """The phrases a Mandarin prompt lists, duplicates dropped: those with Chinese characters (names,
    aliases; the places already in Mandarin form) in their order, then the places as said in Mandarin
    (``bin 12`` → ``12号箱``, ``shelf B`` → ``B号架``): a name is harder to hear than a place. English-only
    phrases (names, the English command words) are left out. Raises nothing."""
    names: dict[str, None] = {}
    places: dict[str, None] = {}
    for p in phrases:
        p = (p or "").strip()
        m = _PLACE.match(p)
        if has_cjk(p):
            (places if p in places or re.fullmatch(r"\w{1,4}号(?:箱|抽屉|架)", p) else names).setdefault(p, None)
        elif m:
            places.setdefault(ZH_PLACES[m.group(1).lower()].format(n=m.group(2).upper()), None)
    return list(names) + [p for p in places if p not in names]


def compose_zh(phrases: list[str]) -> str:
    """The Mandarin prompt: head, stock words, then ``phrases`` (:data:`ZH_SEPARATOR` between)."""
    head = ZH_HEAD + ZH_COMMANDS
    return f"{head}{ZH_SEPARATOR.join(phrases)}。" if phrases else head


def focus_zh(phrases: list[str], heard: str, limit: int) -> list[str]:
    """``phrases`` (already :func:`zh_phrases`) with the at most ``limit`` ones the transcript
    ``heard`` comes nearest to first (rapidfuzz ``partial_ratio`` ≥ :data:`ZH_FOCUS_MATCH`, best first,
    longer first on a tie), the rest after in their order. Raises nothing."""
    if not heard or not has_cjk(heard):
        return list(phrases)
    scored = sorted((-fuzz.partial_ratio(p, heard), -len(p), i) for i, p in enumerate(phrases))
    near = [phrases[i] for s, _n, i in scored if -s >= ZH_FOCUS_MATCH][:limit]
    chosen = set(near)
    return near + [p for p in phrases if p not in chosen]
