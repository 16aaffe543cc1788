"""Reply text from an intent and the store: what the box says back.

Quantities are phrased in the item's unit ("12 boxes of nitrile gloves", "140 M8 bolts");
places take "in" (bin, drawer, box) or "on" (shelf, rack).
"""
from __future__ import annotations

from edge.store import Item, Record

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


def query_reply(item: Item, asked_location: str | None = None) -> str:
    if asked_location and asked_location.lower() != item.location.lower():
        return f"I have no {item.item} {place(asked_location)}; there are {amount(item, item.quantity)} {place(item.location)}."
    if item.quantity <= 0:
        return f"We are out of {item.item}; none left {place(item.location)}."
    verb = "is" if item.quantity == 1 else "are"
    return f"There {verb} {amount(item, item.quantity)} {place(item.location)}."


def log_reply(record: Record, item: Item) -> str:
    q = abs(record.delta)
    did = "received" if record.delta > 0 else "used"
    return f"Logged {amount(item, q)} {did}. Now {item.quantity} {place(item.location)}."


def undo_reply(result: tuple[Record, Item] | None) -> str:
    if result is None:
        return "There is nothing to undo."
    record, item = result
    return f"Undone: {amount(item, abs(record.delta))}. Now {item.quantity} {place(item.location)}."


UNKNOWN_ITEM = "I don't know that item. Please say its name as it is on the shelf label."
NO_QUANTITY = "How many? Please say the number with the item."
NOT_UNDERSTOOD = "Sorry, I didn't understand that."
