"""Reply text from an intent and the store: what the box says back, in the configured language.

English: quantities in the item's unit ("12 boxes of nitrile gloves", "140 M8 bolts"); places take
"in" (bin, drawer, box) or "on" (shelf, rack). Mandarin (``language: zh``): the item's first Chinese
alias (else its name), a measure word for the unit (个, 盒, 罐, 托, 箱) and the place with its
number before the word ("12号料箱", "B号货架"): "12号料箱有140个M8螺栓。".
"""
from __future__ import annotations

import re
from datetime import datetime

from edge.localtime import local, now_local
from edge.stages.names import name_key, spoken_key
from edge.stages.sizes import split_size, spoken_size
from edge.stock import low
from edge.stock.places import clean
from edge.stock.store import Covered, Item, Record

#: The most items or places one reply lists before "and N more" (a reply must stay short to speak).
MAX_LISTED = 3

_PLURAL_UNITS = {"box": "boxes", "pcs": "pcs", "pc": "pcs"}
_COUNT_UNITS = {"pcs", "pc", "piece", "pieces", "each", "ea", ""}


def plural(word: str) -> str:
    """English plural of a noun phrase's head, its last lower-case word ("M8 bolt" → "M8 bolts",
    "box" → "boxes"; a code or name after it stays: "fuse 5 A" → "fuses 5 A", "hyllclips Älva" as is)."""
    words = word.split(" ")
    k = next((i for i in range(len(words) - 1, -1, -1) if words[i].isalpha() and words[i].islower()), len(words) - 1)
    last = words[k]
    if last.endswith(("s", "x", "ch", "sh")):
        last = last if last.endswith("s") else last + "es"
    elif last.endswith("y") and last[-2:-1] not in "aeiou":
        last = last[:-1] + "ies"
    else:
        last = last + "s"
    return " ".join([*words[:k], last, *words[k + 1:]]).strip()


def sized(item: Item) -> tuple[str, str]:
    """``(family, spoken size)`` when the item's name is a family followed by a size ("hex bolt
    M12 x 80 mm" → "hex bolt", "M12, 80 millimetre"); else ``(name, "")`` ("M8 bolt" reads as it is)."""
    family, size = split_size(item.item)
    if size and family != item.item and name_key(item.item).startswith(name_key(family)):
        return family, spoken_size(size)
    return item.item, ""


def name_and_size(item: Item) -> str:
    """The item's plural family and its spoken size: "hex bolts, M10, 80 millimetre", "duct tape"."""
    family, size = sized(item)
    return f"{plural(family) if item.unit.lower() in _COUNT_UNITS and not family.endswith('s') else family}" \
           f"{', ' + size if size else ''}"


def label(item: Item) -> str:
    """The item as its shelf label reads, a sized name as family and size: "drill bit 6 millimetre",
    "hex bolt M8 30 millimetre", "nitrile gloves large", "duct tape"."""
    family, size = sized(item)
    return f"{family} {size.replace(', ', ' ')}" if size else item.item


def amount(item: Item, quantity: int | float, more: bool = False) -> str:
    """``quantity`` of ``item`` in words: "140 M8 bolts", "1 box of nitrile gloves", "241 hex
    bolts, M12, 80 millimetre", "12.5 m of copper cable". ``more``: the sentence goes on after it,
    so a size closes with a comma ("241 hex bolts, M12, 80 millimetre, in bin 12")."""
    name, size = sized(item)
    tail = f", {size}{',' if more else ''}" if size else ""
    last = name.split()[-1].lower() if name.split() else ""
    if item.unit.lower() in _COUNT_UNITS or item.unit.lower() in (last, last.rstrip("s")):  # "2 hex key sets"
        return f"{quantity} {name if quantity == 1 or name.endswith('s') else plural(name)}{tail}"
    unit = item.unit if quantity == 1 or len(item.unit) <= 2 else _PLURAL_UNITS.get(item.unit, plural(item.unit))
    return f"{quantity} {unit} of {name}{tail}"


def unit_question(item: Item, language: str = "en") -> str:
    """A count said in another unit than the item's: "Copy paper is counted in pallets: how many
    pallets?" (never converted: the inventory declares no pack size)."""
    if language == "zh":
        unit = ZH_MEASURE.get(item.unit.lower(), item.unit)
        return f"没有记录：{zh_name(item)}按“{unit}”计数。是多少{unit}？"
    u = item.unit.lower()
    units = u if u in _COUNT_UNITS or len(u) <= 2 else _PLURAL_UNITS.get(u, plural(u))
    name = name_and_size(item)
    verb = "are" if name.split(",")[0].endswith("s") else "is"  # "Leather gloves, small are …"
    return f"{name[0].upper()}{name[1:]} {verb} counted in {units}: how many {units}?"


def shown(rows: list, total: int) -> list:
    """The rows a list says by name: all of them when at most one more than :data:`MAX_LISTED`
    (naming the last one is as short as "and 1 more item"), else the first :data:`MAX_LISTED`.
    ``rows``: the first rows of ``total`` (callers fetch ``MAX_LISTED + 1``)."""
    return list(rows) if total <= MAX_LISTED + 1 and len(rows) >= total else list(rows)[:MAX_LISTED]


def _more(n: int, what: str = "item") -> str:
    return f"{n} more {what}{'' if n == 1 else 's'}"


def join_and(parts: list[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def place(location: str) -> str:
    """"in bin 12", "on shelf B"."""
    return f"{'on' if location.split(' ')[0].lower() in ('shelf', 'rack', 'table') else 'in'} {location}"


def where(item: Item, language: str = "en") -> str:
    """Every place of ``item`` with its quantity. One place: "241 hex bolts, M12, 80 millimetre, in
    bin 12"; several: the total first, then each place: "200 hex bolts, M8, 30 millimetre: 140 in
    bin 12 and 60 in bin 47" (at most :data:`MAX_LISTED` places, then how many more)."""
    stock = item.places()
    said = shown(stock, len(stock))
    if language == "zh":
        listed = [f"{zh_place(p)}有{zh_amount(item, q)}" for p, q in said]
        rest = f"，另有{len(stock) - len(said)}处" if len(stock) > len(said) else ""
        total = f"，共{_zh_q(item, item.quantity)}" if len(stock) > 1 else ""
        return "，".join(listed) + rest + total
    if len(stock) == 1:
        return f"{amount(item, stock[0][1], True)} {place(stock[0][0])}"
    each = [f"{q} {place(p)}" for p, q in said]
    if len(stock) > len(said):
        each.append(_more(len(stock) - len(said), "place"))
    return f"{amount(item, item.quantity)}: {join_and(each)}"


def query_reply(item: Item, asked_location: str | None = None, language: str = "en") -> str:
    """The answer to "how many": at the asked place, or at every place (see :func:`where`)."""
    if language == "zh":
        return _zh_query(item, asked_location)
    here = item.place(asked_location)
    if asked_location and here is None:
        verb = "are" if item.quantity != 1 else "is"
        name = sized(item)[0]
        name = plural(name) if item.unit.lower() in _COUNT_UNITS and not name.endswith("s") else name
        return f"I have no {name} {place(asked_location)}; there {verb} {where(item)}."
    if here is not None and len(item.places()) > 1:
        q = item.at(here)
        return f"There {'is' if q == 1 else 'are'} {amount(item, q, True)} {place(here)}."
    if len(item.places()) > 1:
        return f"There {'is' if item.quantity == 1 else 'are'} {where(item)}."
    if item.quantity < 0:
        return negative_reply(item)
    if item.quantity <= 0:
        return f"We are out of {name_and_size(item)}; none left {place(item.location)}."
    verb = "is" if item.quantity == 1 else "are"
    return f"There {verb} {amount(item, item.quantity, True)} {place(item.location)}."


def log_reply(record: Record, item: Item, language: str = "en") -> str:
    """What a log says: the amount, and what is left (at the record's place for an item in
    several places: "Logged 3 hex bolts, M12, 80 millimetre, out of bin 12; 238 left there.")."""
    q = abs(record.delta)
    if len(item.places()) > 1 and record.location:
        left = item.at(record.location)
        if language == "zh":
            did = "放入" if record.delta > 0 else "取出"
            return f"已记录：从{zh_place(record.location)}{did}{zh_amount(item, q)}；那里现在有{_zh_q(item, left)}。" \
                if record.delta < 0 else f"已记录：{did}{zh_place(record.location)}{zh_amount(item, q)}；那里现在有{_zh_q(item, left)}。"
        if record.delta < 0:
            return f"Logged {amount(item, q, True)} out of {record.location}; {left} left there."
        return f"Logged {amount(item, q, True)} into {record.location}; {left} there now."
    if language == "zh":
        did = "收到" if record.delta > 0 else "用了"
        return f"已记录：{did}{zh_amount(item, q)}。{zh_place(item.location)}现在有{zh_amount(item, item.quantity)}。"
    did = "received" if record.delta > 0 else "used"
    if item.quantity < 0:
        return f"Logged {amount(item, q, True)} {did}. {negative_reply(item)}"
    return f"Logged {amount(item, q, True)} {did}. Now {item.quantity} {place(item.location)}."


def clock_time(iso: str | None) -> str:
    """``HH:MM`` in the box's local time zone for an ISO 8601 time; ``"?"`` for none."""
    try:
        return local(datetime.fromisoformat(iso)).strftime("%H:%M") if iso else "?"
    except ValueError:
        return "?"


def offline_note(since: str, waiting: int, stopped: str = "", language: str = "en") -> str:
    """Said after an answer while the site is unreachable: the answer is this box's view only.
    ``since``: ISO 8601 time the site went offline; ``waiting``: this box's unsent records;
    ``stopped``: why the sync stopped for good ("site sync stopped: another box uses the id …"), or ""."""
    if stopped:
        if language == "zh":
            return f"（站点同步已停止：另一台设备使用了同一个编号，{waiting}条记录未同步。）"
        return f"({stopped[:1].upper()}{stopped[1:]}; {waiting} record{'' if waiting == 1 else 's'} waiting.)"
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
           "too_many": "{q} is more than I can log at once; nothing was logged.",
           "cancelled": "OK, cancelled. Nothing was logged.", "no_docs": "No documents are indexed on this box.",
           "no_place": "Which place? Please say it with the item.", "where_to": "Move them where?",
           "no_place_choice": "Sorry, I still don't know which place, so nothing was done.",
           "no_number": "I didn't hear one number, so nothing was logged.",
           "no_direction": "I didn't hear used or received, so nothing was logged.",
           "overreach": "That answer says more than my question asked, so nothing was logged. "
                        "Please say the whole command again.",
           "hold": "OK, I'll wait. Nothing is logged yet: answer my question when you are ready, or say never mind.",
           "grudging": "I need a clear yes to log it. Nothing is logged yet: say yes or no.",
           "missed_audio": "Sorry, I missed part of that, so nothing was done. Please say it again."},
    "zh": {"not_understood": "对不起，我没听懂。", "no_quantity": "多少？请把数量和物品一起说。",
           "unknown_item": "我不认识这个物品。请按货架标签上的名字说。",
           "declined": "好的，没有记录。", "no_yes": "没有听到“是”，所以没有记录。",
           "no_choice": "对不起，我还是不知道是哪个物品，所以什么也没做。",
           "too_many": "{q}太多了，一次记录不了；没有记录。",
           "cancelled": "好的，已取消，没有记录。", "no_docs": "这台设备没有索引任何文档。",
           "no_place": "哪个位置？请和物品一起说。", "where_to": "移到哪里？",
           "no_place_choice": "对不起，我还是不知道是哪个位置，所以什么也没做。",
           "no_number": "没有听到一个确定的数，所以没有记录。",
           "no_direction": "没有听到是用了还是收到，所以没有记录。",
           "overreach": "这个回答超出了我的问题，所以没有记录。请把整条命令再说一遍。",
           "hold": "好，我等你。还没有记录：准备好了再回答，或者说“算了”。",
           "grudging": "要记录需要你明确说“是”。还没有记录：请说是或不是。",
           "missed_audio": "对不起，我漏听了一部分，所以什么也没做。请再说一遍。"},
}


#: Why a store write failed, as said in "nothing was saved" (keys: edge.stock.faults.REASONS).
NOT_SAVED_WHY = {
    "en": {"disk full": "the store's disk is full", "read-only": "the store is read-only",
           "I/O error": "the store's card or disk has an I/O error", "corrupt": "the store file is damaged",
           "locked": "the store is locked by another program", None: "the store could not be written"},
    "zh": {"disk full": "存储空间已满", "read-only": "数据库是只读的", "I/O error": "存储卡读写出错",
           "corrupt": "数据库文件已损坏", "locked": "数据库被另一个程序占用", None: "数据库无法写入"},
}


def not_saved(reason: str | None, language: str = "en") -> str:
    """What the box says when the store failed during a turn: nothing was saved, and why (``reason``:
    one of :data:`edge.stock.faults.REASONS` or None)."""
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


def zh_amount(item: Item, quantity: int | float) -> str:
    """"140个M8螺栓", "12盒nitrile gloves"; a sized item without a Chinese alias adds its size
    ("241个hex bolt（M12，80毫米）")."""
    name = zh_name(item)
    family, size = split_size(item.item)
    if name == item.item and size and name_key(item.item).startswith(name_key(family)) and family != item.item:
        name = f"{family}（{spoken_size(size, 'zh')}）"
    return f"{quantity}{ZH_MEASURE.get(item.unit.lower(), item.unit)}{name}"


def zh_place(location: str) -> str:
    """"bin 12" → "12号料箱", "shelf B" → "B号货架"; other places as written."""
    m = re.fullmatch(r"\s*([A-Za-z]+)\s+([0-9A-Za-z]+)\s*", location)
    if m and m.group(1).lower() in ZH_PLACE:
        return f"{m.group(2).upper() if m.group(2).isalpha() else m.group(2)}号{ZH_PLACE[m.group(1).lower()]}"
    return location


def _zh_q(item: Item, quantity: int | float) -> str:
    return f"{quantity}{ZH_MEASURE.get(item.unit.lower(), item.unit)}"


def _zh_query(item: Item, asked_location: str | None) -> str:
    here = zh_place(item.location)
    at = item.place(asked_location)
    if asked_location and at is None:
        return f"{zh_place(asked_location)}没有{zh_name(item)}；{where(item, 'zh')}。"
    if len(item.places()) > 1:
        if at is not None:
            return f"{zh_place(at)}有{zh_amount(item, item.at(at))}。"
        return f"{where(item, 'zh')}。"
    if item.quantity < 0:
        return negative_reply(item, "zh")
    if item.quantity <= 0:
        return f"{zh_name(item)}用完了，{here}一{ZH_MEASURE.get(item.unit.lower(), '个')}也没有了。"
    return f"{here}有{zh_amount(item, item.quantity)}。"


# -- the stock room's operations ------------------------------------------------------------------

def read_back(item: Item, quantity: int | float | None, direction: str | None, language: str = "en",
              location: str | None = None, loose: bool = False, converted: str | None = None) -> str:
    """A log read back before it is written: below zero ("That would take … below zero …"), a loose
    count ("Log 2 boxes of … received?") or a plain "Did you say …?"; ``converted``: the amount as
    said in a smaller unit ("200 cm"), said first with what it is in the item's unit ("200 cm is 2 m.")."""
    if converted:
        head = (f"{converted}即{quantity:g} {item.unit}。" if language == "zh"
                else f"{converted} is {quantity:g} {item.unit}. ")
        return head + read_back(item, quantity, direction, language, location, loose)
    q = quantity or 0
    did = "used" if direction == "out" else "received"
    delta = -q if direction == "out" else q
    have = item.at(location) if location and item.at(location) is not None else item.quantity
    where = location or item.location
    if language == "zh":
        did = "用了" if direction == "out" else "收到"
        if have + delta < 0:
            return (f"这样{zh_name(item)}会低于零：{zh_place(where)}只有"
                    f"{zh_amount(item, have)}。还是记录{did}{zh_amount(item, q)}吗？请说是或不是。")
        if loose:
            return f"要记录{did}{zh_amount(item, q)}吗？请说是或不是。"
        return f"你是说{did}{zh_amount(item, q)}吗？说“是”就记录。"
    if have + delta < 0:
        return (f"That would take {name_and_size(item)} below zero: there {'is' if have == 1 else 'are'} only "
                f"{have} {place(where)}. Log {amount(item, q, True)} {did} anyway? Say yes or no.")
    if loose:  # "a couple of boxes": the 2 it was taken as is said back
        return f"Log {amount(item, q, True)} {did}? Say yes or no."
    return f"Did you say {amount(item, q, True)} {did}? Say yes to log it."


def parts_reply(done: list[tuple[Record, Item]], language: str = "en", pieces: dict | None = None) -> str:
    """Several logs written in one transaction, said from the records the store returned (one per
    record): "Logged 3 drill bits used and 2 fuses received."; an item said more than once was summed
    into one record (``pieces``: SKU → the amounts said) and is said so: "4 drill bits used (2 and 2)"."""
    seen, records = set(), []
    for r, i in done:
        if r.id not in seen:
            seen.add(r.id)
            records.append((r, i))
    pieces = pieces or {}

    def sum_said(r: Record, joiner: str) -> str:
        said = pieces.get(r.sku)
        return f" ({joiner.join(f'{q:g}' for q in said)})" if said else ""

    if language == "zh":
        return "已记录：" + "，".join(f"{'收到' if r.delta > 0 else '用了'}{zh_amount(i, abs(r.delta))}{sum_said(r, '+')}"
                                   for r, i in records) + "。"
    said = [f"{amount(i, abs(r.delta), True)} {'received' if r.delta > 0 else 'used'}{sum_said(r, ' and ')}"
            for r, i in records]
    return f"Logged {join_and(said)}."


def both_ways_reply(item: Item | None, language: str = "en") -> str:
    """One item said both used and received in one sentence: nothing written, the net change asked for."""
    if language == "zh":
        return f"没有记录：同一句里{zh_name(item) if item else '这个物品'}既有用了又有收到。请说净变动。"
    name = plural(sized(item)[0]) if item is not None else "that item"
    return f"Nothing logged: you said {name} were both used and received. Please say the change once, in all."


def transfer_reply(out: Record, into: Record, item: Item, language: str = "en") -> str:
    """"Moved 30 hex bolts, M12, 80 millimetre, from bin 12 to bin 90: 211 left in bin 12, 70 in bin 90."."""
    a, b = item.at(out.location) or 0, item.at(into.location) or 0
    if language == "zh":
        return (f"已把{zh_amount(item, into.delta)}从{zh_place(out.location)}移到{zh_place(into.location)}："
                f"{zh_place(out.location)}剩{_zh_q(item, a)}，{zh_place(into.location)}有{_zh_q(item, b)}。")
    return (f"Moved {amount(item, into.delta, True)} from {out.location} to {into.location}: "
            f"{a} left {place(out.location)}, {b} {place(into.location)}.")


def count_reply(record: Record, item: Item, language: str = "en") -> str:
    """"Counted 40 washers in bin 3: 2 fewer than recorded." (or more, or as recorded)."""
    d = record.delta
    if language == "zh":
        diff = "与记录一致" if d == 0 else f"比记录{'少' if d < 0 else '多'}{_zh_q(item, abs(d))}"
        return f"已盘点：{zh_place(record.location)}有{zh_amount(item, record.counted)}，{diff}。"
    diff = "as recorded" if d == 0 else f"{abs(d)} {'fewer' if d < 0 else 'more'} than recorded"
    return f"Counted {amount(item, record.counted, True)} {place(record.location)}: {diff}."


def place_reply(location: str, rows: list[tuple[Item, int | float]], total: int, language: str = "en") -> str:
    """What is stored at ``location``: the items of ``rows`` (the first of ``total``) said by name
    (:func:`shown`) and how many more."""
    rows = shown(rows, total)
    if language == "zh":
        if not rows:
            return f"{zh_place(location)}没有记录任何物品。"
        more = f"，还有{total - len(rows)}种" if total > len(rows) else ""
        return f"{zh_place(location)}有" + "、".join(zh_amount(i, q) for i, q in rows) + more + "。"
    if not rows:
        return f"Nothing is recorded {place(location)}."
    said = [f"{label(i)}, {q}{'' if i.unit.lower() in _COUNT_UNITS else ' ' + i.unit}" for i, q in rows]
    if total > len(rows):
        said.append(_more(total - len(rows)))
    return f"{place(location)[0].upper()}{place(location)[1:]}: {'; '.join(said[:-1]) + '; and ' if len(said) > 1 else ''}{said[-1]}."


def low_stock_reply(items: list[Item], total: int, language: str = "en") -> str:
    """The low items (:func:`edge.stock.low.why`: below zero, out of stock, at or below the reorder
    level): those of ``items`` (the first of ``total``) said by name with why (:func:`shown`) and how many more."""
    items = shown(items, total)
    if language == "zh":
        if not items:
            return "没有缺货、低于零或低于补货线的物品。"
        more = f"，还有{total - len(items)}种" if total > len(items) else ""
        return "库存偏低：" + "、".join(f"{zh_amount(i, i.quantity)}（{low.why(i, 'zh')}）" for i in items) + more + "。"
    if not items:
        return "Nothing is low: nothing is out of stock, below zero or at its reorder level."
    said = [f"{amount(i, i.quantity)} ({low.why(i)})" for i in items]
    if total > len(items):
        said.append(_more(total - len(items)))
    return f"Low on stock: {join_and(said)}."


def count_settled_reply(covered: list[Covered], item: Item, language: str = "en") -> str:
    """An undo the store refused (:class:`edge.stock.store.CountSettled`): a stock count after the
    change already settled the stock, which stays; what would be right if the count was wrong."""
    if language == "zh":
        counts = "，".join(f"{zh_place(c.location)}盘点为{zh_amount(item, c.counted)}" for c in covered)
        stays = "，".join(f"{zh_place(c.location)}{clean(c.now)}" for c in covered)
        return f"没有撤销：之后的盘点（{counts}）已经确定了库存，仍是{stays}。如果盘点有误，请重新盘点。"
    counts = " and ".join(f"{amount(item, c.counted)} {place(c.location)}" for c in covered)
    stays = " and ".join(f"{c.now} {place(c.location)}" for c in covered)
    return (f"I didn't undo that: a stock count after it ({counts}) already settled the stock, so it stays "
            f"{stays}. If that count was wrong, please count them again.")


def undo_transfer_reply(rows: list[Record], item: Item, language: str = "en") -> str:
    """The undo of a transfer (its two compensating rows): "Undone: the move of 30 … from bin 12 to
    bin 90. Now 241 in bin 12 and 40 in bin 90."."""
    back_out = next(r for r in rows if r.delta < 0)  # the undo of the row into the destination
    back_in = next(r for r in rows if r.delta > 0)
    src, dst = back_in.location, back_out.location
    if language == "zh":
        return (f"已撤销：从{zh_place(src)}移到{zh_place(dst)}的{zh_amount(item, back_in.delta)}。"
                f"{zh_place(src)}现在有{_zh_q(item, item.at(src))}，{zh_place(dst)}有{_zh_q(item, item.at(dst))}。")
    return (f"Undone: the move of {amount(item, back_in.delta, True)} from {src} to {dst}. "
            f"Now {item.at(src)} {place(src)} and {item.at(dst)} {place(dst)}.")


def refusal_reply(refusal: str, item: Item | None, quantity: int | float | None, language: str = "en", *,
                  kind: str = "log_record", direction: str | None = None, told: bool = False,
                  what: str | None = None) -> str:
    """Why nothing was written for an Intent whose ``refusal`` is set (see
    :data:`edge.stages.nlu.types.REFUSALS`); for range, correction and fraction a question for one number.

    ``kind``: the intent (``log_record``, ``transfer``, ``stock_count``), ``direction`` the log's
    (``in``/``out``/None) and ``told`` whether the words told the box not to write it ("don't log
    3 fuses") rather than saying it did not happen ("we did not use 3 fuses"): a negation is read
    back as it was said, never as another one. ``what``: the amount said, when it is not
    ``quantity`` of ``item`` (several parts)."""
    if what is None:
        what = amount(item, quantity, True) if item is not None and quantity is not None else None
    name = plural(sized(item)[0]) if item is not None else "items"
    if language == "zh":
        zwhat = zh_amount(item, quantity) if item is not None and quantity is not None else (
            zh_name(item) if item is not None else "这个")
        return {"negated": _negated_zh(zwhat, kind, direction, told), "already_done": f"没有再记录：{zwhat}已经记录过了。",
                "future": f"没有记录：{zwhat}还没有发生，发生后再告诉我。", "hypothetical": f"没有记录：{zwhat}只是假设。",
                "range": "请只说一个数：多少？", "correction": "请再说一次数量：多少？",
                "fraction": "这个物品按整数计：多少？", "negative": "没有记录：数量不能是负数。",
                "implausible": f"没有记录：{zwhat}不太可能，请核对数量。",
                "order": "没有记录：订货不是入库，到货后再记录。",
                "shortage": "没有记录：短缺不是出入库；请清点后告诉我实际数量。",
                "expected": "没有记录：应有的数量不是盘点数；请清点后告诉我实际数量。"}.get(refusal, "没有记录。")
    if refusal == "negated":
        return _negated_en(what, item, kind, direction, told)
    if refusal == "already_done":
        done = {"transfer": "moved", "stock_count": "counted"}.get(kind, "logged")
        if what is None:
            return f"Nothing {done} again: you said that was already done."
        return f"Nothing {done} again: {what} {'was' if quantity == 1 else 'were'} already {done}."
    what = what or "that"
    return {"future": f"Nothing logged: {what} {'are' if quantity not in (None, 1) else 'is'} still to come; "
                      "tell me when it has happened.",
            "hypothetical": f"Nothing logged: {what} {'were' if quantity not in (None, 1) else 'was'} only a what-if.",
            "range": "Please say one number: how many?",
            "correction": "Please say the number once more: how many?",
            "fraction": f"{name[0].upper()}{name[1:]} are counted in whole {item.unit if item else 'units'}: how many?",
            "negative": "Nothing logged: a quantity cannot be negative.",
            "implausible": f"Nothing logged: {what} is more than I can believe at once; please check the number.",
            "order": "Nothing logged: an order is not stock received; log it when it arrives.",
            "shortage": f"Nothing logged: a shortage is not a movement; please count them: say 'counted N {name}'.",
            "expected": f"Nothing written: what should be there is not a count; please count them: say 'counted N {name}'."
            }.get(refusal, "Nothing logged.")


def _negated_en(what: str | None, item: Item | None, kind: str, direction: str | None, told: bool) -> str:
    """The reply to a negated command: what the box will not do when told so (or when the words
    say no direction), else the negation read back as said ("3 fuses were not used")."""
    some = what or (name_and_size(item) if item is not None else "that")
    if kind == "transfer":
        return f"OK, I won't move {some}. Nothing was moved." if told or what is None else \
            f"Nothing moved: you said {what} {_were(what)} not moved."
    if kind == "stock_count":
        return f"OK, I won't record a count of {name_and_size(item) if item is not None else 'that'}. Nothing was logged."
    done = {"out": "used", "in": "received"}.get(direction or "")
    if told or done is None:
        return f"OK, I won't log {some}. Nothing was logged."
    if what is None and item is not None:  # "we didn't use any goggles"
        return f"Nothing logged: you said no {some} {_were(some)} {done}."
    return f"Nothing logged: you said {some} {_were(some)} not {done}."


def _were(what: str) -> str:
    """The verb for an amount or a name: "1 fuse was", "3 fuses were", "white paint was"."""
    head = what.split(",", 1)[0]
    first = head.split(" ", 1)[0]
    if first.replace(".", "", 1).isdigit():
        return "was" if first == "1" else "were"
    return "were" if head.endswith("s") else "was"


def _negated_zh(zwhat: str, kind: str, direction: str | None, told: bool) -> str:
    if kind == "transfer":
        return f"好的，不移动{zwhat}。" if told else f"没有移动：你说没有移动{zwhat}。"
    if kind == "stock_count":
        return f"好的，不记录{zwhat}的盘点。"
    done = {"out": "用", "in": "收到"}.get(direction or "")
    if told or done is None:
        return f"好的，不记录{zwhat}。"
    return f"没有记录：你说没有{done}{zwhat}。"


def variants_reply(family: str, labels: list[str], unit: str = "", language: str = "en") -> str:
    """The sizes a family is stocked in, smallest first: "Sockets come in 3 sizes: 10, 13 and 17
    millimetre."; Mandarin "套筒有3种规格：10、13、17毫米。"."""
    if language == "zh":
        return f"{family}有{len(labels)}种规格：{'、'.join(labels)}{'毫米' if unit else ''}。"
    name = plural(family)
    return f"{name[0].upper()}{name[1:]} come in {len(labels)} sizes: {join_and(labels)}{' ' + unit if unit else ''}."


def hearsay_question(what: str, language: str = "en") -> str:
    """The read-back of a command said on someone else's word (``what``: the action as said back,
    "log 4 cans of WD-40 spray used"): written only after a yes."""
    if language == "zh":
        return f"这是听别人说的：要{what}吗？请说是或不是。"
    return f"That is second-hand: {what}? Say yes or no."


def log_said(item: Item, quantity: int | float, out: bool, language: str) -> str:
    """A log as said back in a question: "log 4 cans of WD-40 spray used"; Mandarin "记录用了4罐…"."""
    if language == "zh":
        return f"记录{'用了' if out else '收到'}{zh_amount(item, quantity)}"
    return f"log {amount(item, quantity, True)} {'used' if out else 'received'}"


def parts_read_back(said: list[str], hearsay: bool, language: str = "en") -> str:
    """Several logs of one sentence read back together (``said``: each as :func:`hearsay_question`'s
    ``what``): "Log 3 fuses used and log 2 washers used? Say yes or no."; second-hand ones said so."""
    what = ("、" if language == "zh" else " and ").join(said)
    if hearsay:
        return hearsay_question(what, language)
    return f"要{what}吗？请说是或不是。" if language == "zh" else f"{what[0].upper()}{what[1:]}? Say yes or no."


def what_if_note(item: Item, location: str | None, delta: int | float | None, language: str = "en") -> str:
    """Said after the stock of a what-if question ("pretend I used 5 …, what would be left"): what
    the supposed change would leave (``delta``: signed, in the item's unit; None: not said), and
    that nothing was logged."""
    have = item.at(location) if location and item.place(location) is not None else item.quantity
    if delta is None:
        return "没有记录。" if language == "zh" else "Nothing was logged."
    after = have + delta
    if language == "zh":
        return f"如果{'收到' if delta > 0 else '用了'}{zh_amount(item, abs(delta))}，会剩{_zh_q(item, after)}；没有记录。"
    return f"After {'receiving' if delta > 0 else 'using'} {abs(delta)} there would be {after}; nothing was logged."


def logged_answer(record: Record | None, item: Item | None, name: str, whole: bool, language: str = "en",
                  undone: bool = False) -> str:
    """The answer to "did I log the coolant?" from the store's records: the last record of the item
    (``record``, its ``item``; ``undone``: it was undone since), or that none was found (``name``:
    what was asked about; ``whole``: the whole history was read, else only its latest records)."""
    if record is None or item is None:
        if language == "zh":
            return f"没有找到{name}的记录。" if whole else f"最近的记录里没有{name}。"
        return f"I have no record of {name} being logged." if whole else \
            f"I find no record of {name} among the latest records."
    q = abs(record.counted if record.kind == "count" and record.counted is not None else record.delta)
    day = local(datetime.fromisoformat(record.time))
    when = clock_time(record.time) if day.date() == now_local().date() else \
        f"{clock_time(record.time)} on {day.strftime('%Y-%m-%d')}"
    if language == "zh":
        did = {"count": "盘点", "transfer": "移动"}.get(record.kind, "收到" if record.delta > 0 else "用了")
        if undone:
            return f"最后一条是{when}{did}{zh_amount(item, q)}，已经撤销了。"
        return f"有：最后一条是{when}{did}{zh_amount(item, q)}。"
    did = {"count": "counted", "transfer": "moved"}.get(record.kind, "received" if record.delta > 0 else "used")
    if undone:
        return f"The last record, {amount(item, q, True)} {did} at {when}, was undone; nothing of it is logged now."
    return f"Yes: the last record is {amount(item, q, True)} {did}, at {when}."


def choice_text(options: list[str], language: str = "en", suffix: str = "", most: int = MAX_LISTED + 1) -> str:
    """A spoken either-or question over ``options`` (at most ``most`` read out): "Bin 12 or bin
    90?", "30, 50 or 80 millimetre?"; Mandarin "…还是…？"."""
    shown = options[:most]
    if language == "zh":
        text = ("、".join(shown[:-1]) + "还是" + shown[-1]) if len(shown) > 1 else shown[0]
        return f"{text}{suffix}？"
    text = (", ".join(shown[:-1]) + " or " + shown[-1]) if len(shown) > 1 else shown[0]
    return f"{text[0].upper()}{text[1:]}{(' ' + suffix) if suffix else ''}?"


def sounds_alike(items) -> bool:
    """Whether two of ``items`` have names that sound the same (:func:`edge.stages.names.spoken_key`:
    "Muller clamp", "Müller clamp"): asking them by name cannot be answered."""
    keys = [spoken_key(i.item) for i in items]
    return len(set(keys)) < len(keys)


def sound_alike_question(items, language: str = "en") -> str | None:
    """Which of ``items`` was meant when their names sound the same: by the place only each one is
    kept at ("The Muller clamps in bin 3 or the Müller clamps in bin 4? Please say the place."),
    else by SKU ("MUL-1 or MUL-2? Please say the SKU."). None when no two names sound alike."""
    items = list(items)
    if not sounds_alike(items):
        return None
    own = []
    for i in items:
        others = {p for j in items if j is not i for p in (*(q for q, _n in j.places()), j.location)}
        mine = [p for p in (*(q for q, _n in i.places()), i.location) if p not in others]
        own.append(mine[0] if mine else None)
    if language == "zh":
        if all(own):
            return "还是".join(f"{zh_place(p)}的{zh_name(i)}" for i, p in zip(items, own, strict=True)) + "？请说位置。"
        return "还是".join(i.sku for i in items) + "？请说编号。"
    if all(own):
        said = join_or([f"the {name_and_size(i)} {place(p)}" for i, p in zip(items, own, strict=True)])
        return f"{said[0].upper()}{said[1:]}? Please say the place."
    return f"{join_or([i.sku for i in items])}? Please say the SKU."


def join_or(parts: list[str]) -> str:
    """"a", "a or b", "a, b or c"."""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]


def no_variant_reply(family: str, heard: str, options: list[str], unit: str, language: str = "en") -> str:
    """A variant that was said but is not stocked, with the nearest ones that are."""
    if language == "zh":
        return f"没有{heard}{unit}的{family}；有{'、'.join(options)}{unit}。要哪一个？"
    unit = f" {unit}" if unit else ""
    # "100 millimetre" was heard with its unit: said once
    heard_unit = "" if not unit or heard.endswith(unit) or heard.split()[-1:] == ["mm"] else unit
    return f"I don't have {plural(family)}, {heard}{heard_unit}; there are {join_and(options)}{unit}. Which one?"


def direction_question(item: Item, quantity: int | float | None, language: str = "en") -> str:
    """The question for a log that said neither in nor out: "5 o-rings, 20 millimetre: used or
    received?"; Mandarin "…：用了还是收到？"."""
    if language == "zh":
        return f"{zh_amount(item, quantity) if quantity is not None else zh_name(item)}：用了还是收到？"
    what = amount(item, quantity) if quantity is not None else plural(sized(item)[0])
    return f"{what[0].upper()}{what[1:]}: used or received?"


def unknown_reply(words: str, language: str = "en") -> str:
    """An item that is not in the inventory, named with the words heard."""
    return f"库存里没有{words}。" if language == "zh" else f"I don't have {words} in the inventory."
