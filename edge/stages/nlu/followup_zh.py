"""Whether a Mandarin answer to the box's question says more than its answer (the Mandarin side of
:func:`edge.stages.nlu.followup.answer_overreaches`): then nothing is written from it.

* a hedge, a loose count or a bound: ``大概四个``, ``四个左右``, ``十几个``, ``几个``, ``至少四个``,
  ``不到四个``, ``四个以上``, ``一两个``;
* half a unit (``一盒半``, ``半盒``) where the answer is taken as a whole count;
* a measure word the item is not counted in (``四盒`` to "how many fuses?", counted in pcs);
* another item's name (``三个钻头`` to "how many fuses?");
* a number beside a yes or no that is neither the command's count nor a number of its places
  (``是，四个`` to "30号料箱吗？" about 3).
"""
from __future__ import annotations

import re

from edge.stages.nlu.guards_zh import bound_zh, guard_zh
from edge.stages.nlu.leftovers import hedge_zh
from edge.stages.nlu.numbers_zh import normalize_numbers_zh
from edge.stages.nlu.said_counts import other_unit_zh

_LOOSE = re.compile(r"几|来[个盒箱包只]|多[个盒箱包只]|上下|左右|出头|半")


def overreaches_zh(pending, text: str, store=None) -> bool:
    """See the module doc. ``pending``: :class:`edge.stages.dialog.Pending`; ``store``: where items
    are looked up (``get``, ``items``), or None. Raises nothing."""
    norm = normalize_numbers_zh(re.sub(r"\s+", "", text or ""))
    if hedge_zh(norm) or _LOOSE.search(norm) or bound_zh(text) or guard_zh(text).range is not None:
        return True
    intent = pending.intent
    item = store.get(intent.sku) if store is not None and intent.sku else None
    numbers = [float(n) for n in re.findall(r"\d+(?:\.\d+)?", norm)]
    if item is not None and any(other_unit_zh(norm, n, item.unit) for n in numbers):
        return True
    if store is not None and item is not None and _names_another_item(norm, item, store):
        return True
    if pending.kind == "confirm" and numbers:
        held = {float(intent.quantity)} if intent.quantity is not None else set()
        for words in (intent.text or "", intent.location or "", intent.to_location or "", *pending.places):
            held |= {float(n) for n in re.findall(r"\d+(?:\.\d+)?", normalize_numbers_zh(words))}
        return any(n not in held for n in numbers)
    return False


def _names_another_item(norm: str, item, store) -> bool:
    mine = [n for n in (item.item, *item.aliases) if n]
    for other in store.items():
        if other.sku == item.sku:
            continue
        for name in (other.item, *other.aliases):
            if name and re.search(r"[\u4e00-\u9fff]", name) and name in norm and not any(name in m for m in mine):
                return True
    return False
