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
from dataclasses import replace

from edge.stages.nlu.types import Intent, ItemMatch
from edge.stages.nlu.zh import find_location_zh
from edge.stock.periods import FUTURE, find_period

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
    ("who", re.compile(r"哪(?:个|台)(?:终端|盒子|箱子|设备|工位|机器)?(?:记录|记|登记)|哪个(?:终端|盒子|设备|工位|机器)|谁记")),
    ("last", re.compile(r"上次|最后一次|最近一次")),
    ("top", re.compile(r"最多")),
    ("change", re.compile(r"变化|变了多少|增减")),
    ("entries", re.compile(r"记录了|记了|哪些记录|什么记录|登记了|条记录")),
    ("total", re.compile(r"多少|几")),
)
_CUE = re.compile(r"上次|最后一次|最近一次|最多|用完|用光|还能用多久|记录了|记了|哪个终端|平均|条记录")
#: "the last N entries" (最后三条记录, 最近3条记录): its N
_LAST_N = re.compile(r"(?:最后|最近|最新)的?([一二两三四五六七八九十\d]+)条(?:记录)?")
#: read or list, said as a request ("读一下最后三条记录")
_READ = re.compile(r"^(?:请|麻烦)?(?:读|念|列出|显示|说)(?:一下|一遍)?")
#: what is running low, with no item ("什么快用完了", "我们缺什么"): the low-stock list, not a records question
_LOW = re.compile(r"(?:什么|哪些|啥)(?:东西|物品|物料|零件)?(?:快|要|就要)(?:用完|用光|没)|缺(?:什么|哪些|啥)|"
                  r"(?:什么|哪些|啥)(?:东西|物品|物料|零件)?(?:不够|不足)")


def parse_zh(text: str, resolve_item: Callable[[str], ItemMatch], places: tuple[str, ...] = ()) -> Intent | None:
    """The ``ask_records`` Intent of the Mandarin ``text``, or None when it is no records question
    (see the module doc). ``resolve_item``: the Mandarin item resolver; ``places``: the stored places
    (a place said, 31号料箱, filters the totals; one not stored is said so). Raises nothing."""
    t = re.sub(r"\s+", "", text or "")
    last_n = _LAST_N.search(t)
    if last_n is not None and (_ASKED.search(t) or _READ.match(t) or t.rstrip("。.").endswith(("记录", "条"))):
        n = _zh_count(last_n.group(1))
        q = {"kind": "entries", "what": "any", "period": None, "mine": bool(re.search(r"我记|本机|这台", t)),
             "limit": max(1, min(20, n))}
        return Intent("ask_records", source="grammar", text=text, extra={"records": q},
                      explain={"path": "records zh", "period": None, "template": "(the last N entries)"})
    if not _ASKED.search(t) or _LOW.search(t):
        return None
    if FUTURE.search(t) and not _KINDS[0][1].search(t):  # 明天用多少: the records cannot say (用完 is an estimate)
        hit = resolve_item(FUTURE.sub("", t))
        return Intent("ask_records", sku=hit.sku, source="grammar", text=text, extra={"records": None, "future": True},
                      explain={"path": "records zh", "period": FUTURE.search(t).group(0), "template": "(the future)"})
    period = find_period(t)
    if period is None and not _CUE.search(t):
        return None
    rest = t.replace(period, "", 1) if period else t
    second = None
    if period:
        m2 = re.search(r"(?:和|跟|与|、|还有|或者?)", rest)
        second = find_period(rest[m2.end():]) if m2 else None
        if second is not None and rest[m2.end():].startswith(second):
            rest = rest[:m2.start()] + rest[m2.end() + len(second):]
        else:
            second = None
    said_place, span = find_location_zh(rest.lower())
    location = next((p for p in places if p.casefold() == said_place.casefold()), None) if said_place else None
    if span is not None:
        rest = rest[:span[0]] + rest[span[1]:]
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
    if said_place and location is None:
        return Intent("ask_records", source="grammar", text=text, extra={"records": None, "place_unknown": said_place},
                      explain=explain)
    q = {"kind": kind, "what": what, "period": period, "mine": bool(re.search(r"我记|本机|这台", rest)), "limit": 3,
         "location": location}
    base = Intent("ask_records", source="grammar", text=text, extra={"records": q},
                  explain={**explain, "template": f"(cues: {kind}, {what})"})
    if second is not None:  # 周二和周五: each period answered
        base = replace(base, extra={**base.extra, "also": [{"records": {**q, "period": second}}]})
    if kind in ("entries", "top"):
        return base
    parts = [p for p in re.split(r"和|跟|与|、|还有", rest) if p]
    skus = [resolve_item(p).sku for p in parts] if len(parts) > 1 else []
    if len(skus) > 1 and all(skus) and len(set(skus)) == len(skus):  # 保险丝和钻头: each item answered
        also = [{"sku": sku, "records": a["records"]} for sku in skus for a in [{"records": q}, *base.extra.get("also", [])]]
        return replace(base, sku=skus[0], extra={**base.extra, "also": also[1:]})
    hit = resolve_item(rest)
    return Intent("ask_records", sku=hit.sku, candidates=tuple(hit.candidates), unknown=hit.unknown, source="grammar",
                  text=text, extra=base.extra, explain={**base.explain, "item_via": hit.via})


def _zh_count(text: str) -> int:
    """The N of 最后N条 (digits or 一 … 二十), 3 when unreadable."""
    if text.isdigit():
        return int(text)
    digits = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
    if text in digits:
        return digits[text]
    if text.startswith("十"):
        return 10 + digits.get(text[1:], 0)
    if len(text) >= 2 and text[1] == "十":
        return digits.get(text[0], 1) * 10 + digits.get(text[2:], 0)
    return 3
