"""The intent a transcript is understood as, and the item match the grammars resolve it with."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

INTENTS = ("query_stock", "log_record", "undo", "other")
Direction = Literal["in", "out"]


@dataclass(frozen=True)
class Intent:
    """One understood command.

    ``intent``: one of :data:`INTENTS`. Slots: ``sku`` (inventory SKU or None), ``quantity``
    (int, units of the item's unit), ``direction`` (``in`` adds stock, ``out`` removes it),
    ``location`` (normalized, e.g. ``"bin 12"``, ``"shelf B"``). ``source``: ``grammar`` or ``llm``.
    ``text``: the transcript it came from. ``answer``: the LLM's free answer for ``other``.
    """

    intent: str
    sku: str | None = None
    quantity: int | None = None
    direction: Direction | None = None
    location: str | None = None
    source: str = "grammar"
    text: str = ""
    answer: str | None = None
    extra: dict = field(default_factory=dict)

    def slots(self) -> dict:
        return {"sku": self.sku, "quantity": self.quantity, "direction": self.direction, "location": self.location}


@dataclass(frozen=True)
class ItemMatch:
    """What a transcript names as its item.

    ``sku``: the one item named, or None. ``tokens``: indices of the (normalized) tokens that name
    it. ``candidates``: 2+ SKUs when the words fit several items equally (``"m8"`` with an M8 bolt
    and an M8 washer). ``unknown``: the spoken content words when they fit no item, else None.
    ``via``: how it was found — ``name`` (a name or alias), ``head`` (Chinese head word), ``fuzzy``,
    ``word`` (one word of a name), ``location`` (the only item stocked there) or ``unknown``.
    """

    sku: str | None = None
    tokens: frozenset[int] = frozenset()
    candidates: tuple[str, ...] = ()
    unknown: str | None = None
    via: str = ""
