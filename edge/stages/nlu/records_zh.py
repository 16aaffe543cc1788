"""Mandarin questions about what happened (上周用了多少钻头, 手套上次是什么时候到货的, 手套什么时候会用完):
a cue reader, like :mod:`edge.stages.nlu.records` for English, giving the same ``ask_records`` Intent.

A sentence is a records question when it is asked (多少, 几, 什么时候, 哪, 什么, 多久, 吗, ？) and names a
period (:func:`edge.stock.periods.find_period`: 今天, 上周, 十一月, 周一以来 …) or a history cue (上次,
最后一次, 最多, 用完, 记录了). Exactly one kind of question and one kind of movement must be said;
otherwise the box says it cannot answer (never the stock, never a guess). A statement with a period
("今天用了3个钻头") stays a log.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from edge.stages.nlu.types import Intent, ItemMatch
from edge.stock.periods import find_period

__all__ = ["parse_zh"]

_ASKED = re.compile(r"多少|几|什么时候|哪|什么|多久|吗|？|\?|啥|何时")
_WHAT = {
    "received": re.compile(r"进了|进货|收到|到货|到了|送到|入库|进来"),
    "counted": re.compile(r"盘点|清点|点数"),
    "moved": re.compile(r"移动|转移|挪"),
    "used": re.compile(r"用|消耗|领了|领用|出库"),
}
_KINDS = (
    ("rate", re.compile(r"用完|用光|还能用多久|还够用多久|能用多久|每天用|每周用|平均")),
    ("who", re.compile(r"哪个(?:终端|盒子|设备|工位|机器)|谁记")),
    ("last", re.compile(r"上次|最后一次|最近一次")),
    ("top", re.compile(r"最多")),
    ("change", re.compile(r"变化|变了多少|增减")),
    ("entries", re.compile(r"记录了|记了|哪些记录|什么记录|登记了")),
    ("total", re.compile(r"多少|几")),
)
_CUE = re.compile(r"上次|最后一次|最近一次|最多|用完|用光|还能用多久|记录了|记了|哪个终端|平均")


def parse_zh(text: str, resolve_item: Callable[[str], ItemMatch]) -> Intent | None:
    """The ``ask_records`` Intent of the Mandarin ``text``, or None when it is no records question
    (see the module doc). ``resolve_item``: the Mandarin item resolver. Raises nothing."""
    t = re.sub(r"\s+", "", text or "")
    if not _ASKED.search(t):
        return None
    period = find_period(t)
    if period is None and not _CUE.search(t):
        return None
    rest = t.replace(period, "") if period else t
    kinds = [k for k, rx in _KINDS if rx.search(rest)]
    whats = [w for w, rx in _WHAT.items() if rx.search(rest)]
    if "used" in whats and len(whats) > 1 and not re.search(r"用了|使用|用的|用得", rest):
        whats.remove("used")
    explain = {"path": "records zh", "period": period}
    if not kinds:
        return Intent("ask_records", source="grammar", text=text, extra={"records": None}, explain=explain)
    kind = kinds[0]
    what = "any" if kind in ("who", "entries", "change") else (whats[0] if len(whats) == 1 else None)
    if what is None:
        return Intent("ask_records", source="grammar", text=text, extra={"records": None}, explain=explain)
    q = {"kind": kind, "what": what, "period": period, "mine": bool(re.search(r"我记|本机|这台", rest)), "limit": 3}
    base = Intent("ask_records", source="grammar", text=text, extra={"records": q},
                  explain={**explain, "template": f"(cues: {kind}, {what})"})
    if kind in ("entries", "top"):
        return base
    hit = resolve_item(rest)
    return Intent("ask_records", sku=hit.sku, candidates=tuple(hit.candidates), unknown=hit.unknown, source="grammar",
                  text=text, extra={"records": q}, explain={**base.explain, "item_via": hit.via})
