"""When to rebuild what is built from the inventory (grammar, LLM shortlist, recognition biasing).

A turn must not read the whole item list: at 20,000 items ``Store.items()`` takes ~0.85 s here
(bench/import_scale.py). :class:`InventoryWatch` asks the store's ``items_version()`` (one read)
and reads the items only when it changed; the recognizer's phrase order also follows the items
this box used most lately (:func:`edge.stages.asr.bias.used_first` over the last
:data:`RECENT_RECORDS` records).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from edge.stages.asr.base import COMMAND_WORDS, UNIT_WORDS, vocabulary
from edge.stages.asr.bias import used_first

if TYPE_CHECKING:
    from edge.loop.stages import Inventory
    from edge.stock.store import Item

#: records looked at for the most used items (a bounded read, whatever the history's length)
RECENT_RECORDS = 200


def same_items(a, b) -> bool:
    """Whether two item lists have the same SKUs, names, first places and aliases (what the grammar
    and the recognizer are built from; quantities do not matter)."""
    def sig(items):
        return sorted((i.sku, i.item, i.location, tuple(i.aliases)) for i in items)

    return len(a) == len(b) and sig(a) == sig(b)


class InventoryWatch:
    """Tells whether the store's items or this box's most used items changed since the last call.

    ``store``: an :class:`edge.loop.stages.Inventory` with ``items_version()`` and
    ``records(last=n)``."""

    def __init__(self, store: Inventory):
        self.store = store
        self.version: int | None = None
        self.first: list[str] | None = None
        self.items: list[Item] = []

    def changed_items(self) -> list[Item] | None:
        """The items when the item list changed since the last call (or on the first call), else None."""
        v = self.store.items_version()
        if v == self.version:
            return None
        self.version = v
        self.items = self.store.items()
        return self.items

    def vocabulary_if_changed(self, items_changed: bool) -> list[str] | None:
        """The recognizer's phrases (:func:`edge.stages.asr.base.vocabulary`, most used items first)
        when the items or their order changed, else None."""
        first = used_first(self.store.records(last=RECENT_RECORDS))
        if not items_changed and first == self.first:
            return None
        self.first = first
        return with_units(vocabulary(self.items, first=first), self.items)


def with_units(phrases: list[str], items: list[Item]) -> list[str]:
    """``phrases`` with the spoken words of the inventory's units right after the command words
    (a recognizer with a bounded prompt keeps the first phrases)."""
    units = list(dict.fromkeys(UNIT_WORDS[u] for u in (i.unit.lower() for i in items) if u in UNIT_WORDS))
    k = next((n for n, p in enumerate(phrases) if p not in COMMAND_WORDS), len(phrases))
    return [*phrases[:k], *units, *phrases[k:]]
