"""Reply text from an intent and the store: what the box says back, in the configured language.

English: quantities in the item's unit ("12 boxes of nitrile gloves", "140 M8 bolts"); places take
"in" (bin, drawer, box) or "on" (shelf, rack). Mandarin (``language: zh``): the item's first Chinese
alias (else its name), a measure word for the unit (个, 盒, 罐, 托, 箱) and the place with its
number before the word ("12号料箱", "B号货架"): "12号料箱有140个M8螺栓。".
"""
from __future__ import annotations

import re
from datetime import datetime

from edge.stages.store import Item, Record

_PLURAL_UNITS = {"box": "boxes", "pcs": "pcs", "pc": "pcs"}
_COUNT_UNITS = {"pcs", "pc", "piece", "pieces", "each", "ea", ""}


def plural(word: str) -> str:
    """English plural of a noun phrase's last word ("M8 bolt" → "M8 bolts", "box" → "boxes")."""
    head, _, last = word.rpartition(" ")
    if last.endswith(("s", "x", "ch", "sh")):
        last = last if last.endswith("s") else last + "es"
    elif last.endswith("y") and last[-2:-1] not in "aeiou":
        last = last[:-1] + "ies"
    else:
        last = last + "s"
    return f"{head} {last}".strip()


def amount(item: Item, quantity: int) -> str:
    """``quantity`` of ``item`` in words: "140 M8 bolts", "1 box of nitrile gloves", "no white paint"."""
    if item.unit.lower() in _COUNT_UNITS:
        return f"{quantity} {item.item if quantity == 1 or item.item.endswith('s') else plural(item.item)}"
    unit = item.unit if quantity == 1 else _PLURAL_UNITS.get(item.unit, plural(item.unit))
    return f"{quantity} {unit} of {item.item}"


def place(location: str) -> str:
    """"in bin 12", "on shelf B"."""
    return f"{'on' if location.split(' ')[0].lower() in ('shelf', 'rack', 'table') else 'in'} {location}"


def query_reply(item: Item, asked_location: str | None = None, language: str = "en") -> str:
    if language == "zh":
        return _zh_query(item, asked_location)
    if asked_location and asked_location.lower() != item.location.lower():
        return f"I have no {item.item} {place(asked_location)}; there are {amount(item, item.quantity)} {place(item.location)}."
    if item.quantity < 0:
        return negative_reply(item)
    if item.quantity <= 0:
        return f"We are out of {item.item}; none left {place(item.location)}."
    verb = "is" if item.quantity == 1 else "are"
    return f"There {verb} {amount(item, item.quantity)} {place(item.location)}."


def log_reply(record: Record, item: Item, language: str = "en") -> str:
    q = abs(record.delta)
    if language == "zh":
        did = "收到" if record.delta > 0 else "用了"
        return f"已记录：{did}{zh_amount(item, q)}。{zh_place(item.location)}现在有{zh_amount(item, item.quantity)}。"
    did = "received" if record.delta > 0 else "used"
    if item.quantity < 0:
        return f"Logged {amount(item, q)} {did}. {negative_reply(item)}"
    return f"Logged {amount(item, q)} {did}. Now {item.quantity} {place(item.location)}."


def clock_time(iso: str | None) -> str:
    """``HH:MM`` in the box's local time zone for an ISO 8601 time; ``"?"`` for none."""
    try:
        return datetime.fromisoformat(iso).astimezone().strftime("%H:%M") if iso else "?"
    except ValueError:
        return "?"


def offline_note(since: str, waiting: int, language: str = "en") -> str:
    """Said after an answer while the site is unreachable: the answer is this box's view only.
    ``since``: ISO 8601 time the site went offline; ``waiting``: this box's unsent records."""
    if language == "zh":
        return f"（站点自{clock_time(since)}起离线，{waiting}条记录待同步。）"
    return (f"(Site offline since {clock_time(since)}, {waiting} record{'' if waiting == 1 else 's'} waiting; "
            "other boxes' latest records may be missing.)")


def negative_reply(item: Item, language: str = "en") -> str:
    """The honest answer for stock below zero (more was taken than the records had, e.g. two boxes
    of a site took the last ones at once): the number as recorded and a request to count."""
    if language == "zh":
        return f"记录显示{zh_place(item.location)}有{item.quantity}{ZH_MEASURE.get(item.unit.lower(), item.unit)}{zh_name(item)}；请清点一下。"
    return f"The records say {amount(item, item.quantity)} {place(item.location)}; please count them."


def undo_reply(result: tuple[Record, Item] | None, language: str = "en") -> str:
    if result is None:
        return "没有可以撤销的记录。" if language == "zh" else "There is nothing to undo."
    record, item = result
    if language == "zh":
        return f"已撤销：{zh_amount(item, abs(record.delta))}。{zh_place(item.location)}现在有{zh_amount(item, item.quantity)}。"
    return f"Undone: {amount(item, abs(record.delta))}. Now {item.quantity} {place(item.location)}."


UNKNOWN_ITEM = "I don't know that item. Please say its name as it is on the shelf label."
NO_QUANTITY = "How many? Please say the number with the item."
NOT_UNDERSTOOD = "Sorry, I didn't understand that."

#: Fixed sentences by language (``text(key, language)``).
TEXTS = {
    "en": {"not_understood": NOT_UNDERSTOOD, "no_quantity": NO_QUANTITY, "unknown_item": UNKNOWN_ITEM,
           "declined": "OK, nothing was logged.", "no_yes": "I didn't hear a yes, so nothing was logged.",
           "no_choice": "Sorry, I still don't know which item, so nothing was done.",
           "too_many": "{q} is more than I can log at once; nothing was logged."},
    "zh": {"not_understood": "对不起，我没听懂。", "no_quantity": "多少？请把数量和物品一起说。",
           "unknown_item": "我不认识这个物品。请按货架标签上的名字说。",
           "declined": "好的，没有记录。", "no_yes": "没有听到“是”，所以没有记录。",
           "no_choice": "对不起，我还是不知道是哪个物品，所以什么也没做。",
           "too_many": "{q}太多了，一次记录不了；没有记录。"},
}


#: Why a store write failed, as said in "nothing was saved" (keys: edge.stages.storefaults.REASONS).
NOT_SAVED_WHY = {
    "en": {"disk full": "the store's disk is full", "read-only": "the store is read-only",
           "I/O error": "the store's card or disk has an I/O error", "corrupt": "the store file is damaged",
           "locked": "the store is locked by another program", None: "the store could not be written"},
    "zh": {"disk full": "存储空间已满", "read-only": "数据库是只读的", "I/O error": "存储卡读写出错",
           "corrupt": "数据库文件已损坏", "locked": "数据库被另一个程序占用", None: "数据库无法写入"},
}


def not_saved(reason: str | None, language: str = "en") -> str:
    """What the box says when the store failed during a turn: nothing was saved, and why (``reason``:
    one of :data:`edge.stages.storefaults.REASONS` or None)."""
    why = NOT_SAVED_WHY.get(language, NOT_SAVED_WHY["en"])
    why = why.get(reason, why[None])
    if language == "zh":
        return f"对不起，什么也没有保存：{why}。请告诉管理员。"
    return f"Sorry, nothing was saved: {why}. Please tell whoever looks after this box."


def text(key: str, language: str = "en", **values) -> str:
    """The fixed sentence ``key`` of :data:`TEXTS` in ``language`` (English when not translated)."""
    return TEXTS.get(language, TEXTS["en"]).get(key, TEXTS["en"][key]).format(**values)


# -- Mandarin ---------------------------------------------------------------------------------------

#: Measure words (量词) for inventory units; a unit not listed keeps its own word after the number.
ZH_MEASURE = {"pcs": "个", "pc": "个", "piece": "个", "pieces": "个", "each": "个", "ea": "个", "": "个",
              "box": "盒", "boxes": "盒", "can": "罐", "cans": "罐", "pallet": "托", "pallets": "托",
              "case": "箱", "cases": "箱", "roll": "卷", "rolls": "卷", "pair": "双", "pairs": "双",
              "bag": "袋", "bags": "袋", "set": "套", "sets": "套", "m": "米", "metre": "米", "meter": "米",
              "kg": "公斤", "bottle": "瓶", "bottles": "瓶", "ream": "令", "reams": "令", "l": "升",
              "litre": "升", "liter": "升", "litres": "升", "liters": "升", "tube": "支", "tubes": "支",
              "sheet": "张", "sheets": "张", "pack": "包", "packs": "包", "drum": "桶", "drums": "桶",
              "coil": "卷", "spool": "卷", "carton": "箱", "cartons": "箱", "kit": "套"}
#: Place words: "bin 12" → "12号料箱".
ZH_PLACE = {"bin": "料箱", "shelf": "货架", "drawer": "抽屉", "rack": "架子", "box": "箱", "cabinet": "柜子",
            "table": "桌子", "room": "房间"}


def zh_name(item: Item) -> str:
    """The item's first alias with Chinese characters, else its name."""
    return next((a for a in item.aliases if re.search(r"[\u4e00-\u9fff]", a)), item.item)


def zh_amount(item: Item, quantity: int) -> str:
    """"140个M8螺栓", "12盒nitrile gloves"."""
    return f"{quantity}{ZH_MEASURE.get(item.unit.lower(), item.unit)}{zh_name(item)}"


def zh_place(location: str) -> str:
    """"bin 12" → "12号料箱", "shelf B" → "B号货架"; other places as written."""
    m = re.fullmatch(r"\s*([A-Za-z]+)\s+([0-9A-Za-z]+)\s*", location)
    if m and m.group(1).lower() in ZH_PLACE:
        return f"{m.group(2).upper() if m.group(2).isalpha() else m.group(2)}号{ZH_PLACE[m.group(1).lower()]}"
    return location


def _zh_query(item: Item, asked_location: str | None) -> str:
    here = zh_place(item.location)
    if asked_location and asked_location.lower() != item.location.lower():
        return f"{zh_place(asked_location)}没有{zh_name(item)}；{here}有{zh_amount(item, item.quantity)}。"
    if item.quantity < 0:
        return negative_reply(item, "zh")
    if item.quantity <= 0:
        return f"{zh_name(item)}用完了，{here}一{ZH_MEASURE.get(item.unit.lower(), '个')}也没有了。"
    return f"{here}有{zh_amount(item, item.quantity)}。"
