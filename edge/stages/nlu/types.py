"""The intent a transcript is understood as, and the item match the grammars resolve it with.

This is the one contract between the understanding (templates, paraphrase matcher, LLM: text →
:class:`Intent`) and the dialog (:class:`Intent` → store → reply). The understanding never writes;
the dialog never re-reads the text except to keep it in the record.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

#: Every intent the box knows. ``query_stock``: how many of an item (per place and in total).
#: ``log_record``: stock in or out. ``undo``: take back this box's last record (a transfer as one); with
#: ``extra["amend"]`` a count corrected the turn after its log ("actually it was 2": ``quantity``, and
#: ``sku``/``direction`` when said), written only as a correction of that log (:mod:`edge.stages.last_record`).
#: ``cancel``: "never mind" — end the turn, write nothing. ``place_contents``: what is stored in a
#: place. ``transfer``: move a quantity from ``location`` to ``to_location``. ``stock_count``: the
#: counted quantity at a place (``quantity`` is the count, not a delta). ``low_stock``: items at or
#: below their reorder level. ``ask_docs``: a question about the site's documents. ``ask_records``: a
#: question about what happened (``extra["records"]``: the question, :mod:`edge.stages.nlu.records`;
#: None when it cannot be answered from the records). ``other``: anything else (the LLM's free
#: answer, or "not understood").
INTENTS = ("query_stock", "log_record", "undo", "cancel", "place_contents", "transfer", "stock_count",
           "low_stock", "ask_docs", "ask_records", "other")
Direction = Literal["in", "out"]

#: Why an understood command must not be written as heard; the dialog says so and writes nothing
#: (or asks). ``negated``: "we did not use 3 drill bits", "don't log…". ``already_done``: "…already
#: logged". ``range``: "three or four". ``correction``: a self-correction that could not be resolved
#: to one number. ``fraction``: a fraction for an item whose unit is counted in whole units.
#: ``negative``: a negative quantity. ``implausible``: over the plausible maximum. ``future``: said as
#: still to come ("they'll send 200 next week", "on order"). ``hypothetical``: a what-if ("pretend I
#: used 5"). ``hearsay``: on someone else's word ("the night shift reckons …"): read back, written
#: only after a yes. ``unexplained``: a word the parse does not account for would change the record
#: ("why did we use 3 fuses", "three times", "3 nuts and washers": :mod:`edge.stages.nlu.accounting`).
REFUSALS = ("negated", "already_done", "range", "correction", "fraction", "negative", "implausible", "future",
            "hypothetical", "hearsay", "order", "shortage", "expected", "unexplained")


@dataclass(frozen=True)
class Intent:
    """One understood command.

    ``intent``: one of :data:`INTENTS`. Slots:

    - ``sku``: the inventory SKU, or None when not resolved to exactly one item;
    - ``quantity``: a count in the item's unit (int; a float only for a unit that allows decimals,
      e.g. ``m``, ``kg``, ``l``); for ``stock_count`` the counted quantity;
    - ``direction``: ``in`` adds stock, ``out`` removes it (``log_record`` only);
    - ``location``: the place, normalized (``"bin 12"``, ``"shelf b"``); for ``transfer`` the source;
    - ``to_location``: the destination of a ``transfer``.

    When the item is not one SKU: ``candidates`` lists the SKUs that fit (2+; ask which), and
    ``variant_missing`` names what tells them apart when only the variant was not said (``"length"``,
    ``"diameter"``, ``"size"``; ask naming the variants); ``heard_variant`` is a variant that was said
    but that no item of the family has (say so with the nearest ones); ``unknown`` is the words that
    named no stocked item ("I don't have <unknown> in the inventory").

    ``refusal``: one of :data:`REFUSALS` when the command must not be written as heard. ``parts``:
    several commands in one sentence ("3 drill bits and 2 fuses"), each a full :class:`Intent`; the
    dialog writes all or asks. ``source``: ``template``, ``paraphrase``, ``llm`` (or ``grammar`` for the
    Mandarin parser). ``explain``: what matched (template or path name, score, slot values) for
    ``edge ask --explain``. ``text``: the transcript. ``answer``: the LLM's free answer for ``other``.
    ``extra``: everything else (``confidence``, ``low_confidence_quantity``, ``candidates`` of older
    callers, engine errors; ``told_not_to``: a ``negated`` command was an instruction not to write
    it, "don't log …"; ``llm_guessed``: the slots only the LLM gave, read back before writing;
    ``loose_count``: a log count said loosely, "a couple of", read back before writing).
    """

    intent: str
    sku: str | None = None
    quantity: int | float | None = None
    direction: Direction | None = None
    location: str | None = None
    source: str = "grammar"
    text: str = ""
    answer: str | None = None
    extra: dict = field(default_factory=dict)
    to_location: str | None = None
    candidates: tuple[str, ...] = ()
    variant_missing: str | None = None
    heard_variant: str | None = None
    unknown: str | None = None
    refusal: str | None = None
    parts: tuple[Intent, ...] = ()
    explain: dict = field(default_factory=dict)

    def slots(self) -> dict:
        """The slot values as a plain dict (for events, logs and ``--explain``)."""
        out = {"sku": self.sku, "quantity": self.quantity, "direction": self.direction, "location": self.location}
        if self.to_location is not None:
            out["to_location"] = self.to_location
        return out


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
