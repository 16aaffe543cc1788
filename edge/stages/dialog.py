"""What the box does with an understood intent, including the short exchanges that need a second
utterance without a new wake word:

- **ask-back**: the item is ambiguous ("M8 bolts or washers?"), only its variant is missing
  ("30, 50 or 80 millimetre?"), a variant said is not stocked (the nearest ones are named), the
  item is in several places ("Bin 12 or bin 90?"), or one number is needed ("three or four"); the
  answer is taken within the follow-up window and the command completed.
- **read-back**: a log whose quantity was recognised with low confidence, or whose count or
  direction only the LLM gave (``extra["llm_guessed"]``), that would take stock
  below zero, that puts stock into a place the item is not stored at yet, or whose item was
  found only from the place said ("add 5 to bin 30"), and a transfer or count into a place the
  item was never stored in, is read back and written only after "yes". A log whose unit word is
  clearly not the item's ("2 boxes" of an item counted in pcs) asks for the number in its unit.
- **undo** undoes this box's last record, of the item named ("undo the fuses") or the last N.
- **refusals**: an Intent with ``refusal`` set, a negative quantity, a fraction of a whole unit or
  an implausible number writes nothing and says why; ``cancel`` ends the turn and says so.

:func:`act` and :func:`follow_up` return an :class:`Outcome`: the reply text, and a
:class:`Pending` question when the box waits for an answer. A record is committed to SQLite
before any text that says it was logged is returned. Each turn reads the store by SKU or place
(indexed); nothing here reads the whole inventory except the old "Which item?" question and
an undo that names an item.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from edge.stages import cancel_reply, last_record, records_reply, reply
from edge.stages.nlu.followup import (
    answer_overreaches,
    ask_back_text,
    by_size,
    direction_answer,
    holds,
    is_cancel,
    number_answer,
    place_choice,
    resolve_choice,
    variant_choices,
    variant_pick,
    yes_no,
)
from edge.stages.nlu.numbers import normalize_numbers
from edge.stages.nlu.said_counts import other_unit
from edge.stages.nlu.types import Intent
from edge.stages.reply_unexplained import unexplained_reply
from edge.stages.sizes import split_size
from edge.stock import low
from edge.stock.csvfile import allows_decimals
from edge.stock.store import Item, Record, Store

MAX_QUANTITY = 1_000_000  # one spoken log above this is a mishearing, not a delivery (and keeps SQLite's 64-bit INTEGER safe)
#: Intents that act on one item.
ITEM_INTENTS = ("query_stock", "log_record", "transfer", "stock_count")
#: Places read out in a "which place?" question.
MAX_PLACES_ASKED = 4
#: Variants read out in a "which size?" question (short labels: "20, 25, … or 100 millimetre?").
MAX_VARIANTS_ASKED = 8
#: The most items of one place a low-stock question looks at.
MAX_PLACE_ITEMS = 500
#: The latest records a question about the log ("did I log the coolant?") reads.
MAX_LOG_QUESTION_RECORDS = 500


@dataclass(frozen=True)
class Pending:
    """A question the box asked. ``kind``: ``choose_item`` (``candidates`` are the items offered;
    empty = any inventory item; ``variant``: the attribute they differ by when the question named
    variants), ``choose_place`` (``places`` offered for the slot ``slot``, ``location`` or
    ``to_location``; empty = any place), ``quantity`` (one number is needed), ``direction`` (a log
    that said neither in nor out: "used or received?"), ``period`` (a records question's period: "Which
    week?") or ``confirm`` (``intent`` is written after a yes). ``part``: the index into ``intent.parts`` asked about."""

    kind: Literal["choose_item", "confirm", "choose_place", "quantity", "direction", "period"]
    intent: Intent
    candidates: tuple[Item, ...] = ()
    places: tuple[str, ...] = ()
    slot: str = "location"
    part: int | None = None
    variant: str | None = None


@dataclass(frozen=True)
class Outcome:
    text: str
    pending: Pending | None = None
    record: Record | None = None


def act(intent: Intent, store: Store, utterance: str, turn_id: str, *, confirmed: bool = False,
        language: str = "en", docs: Callable[[str], str] | None = None) -> Outcome:
    """Carry out ``intent`` on ``store``. ``docs``: answers an ``ask_docs`` question (the
    documents room); None: no documents are indexed. The outcome is noted as the store's latest
    turn (:func:`edge.stages.last_record.noted`: a count corrected next turn corrects its record).

    Raises:
        edge.stock.store.StoreError: the store refused the write (nothing was logged).
    """
    return last_record.noted(store, turn_id, _act(intent, store, utterance, turn_id, confirmed, language, docs))


def _act(intent: Intent, store: Store, utterance: str, turn_id: str, confirmed: bool, language: str,
         docs: Callable[[str], str] | None) -> Outcome:
    kind = intent.intent
    if kind == "cancel":
        return Outcome(cancel_reply.reply_to_cancel(store, language, intent))
    if intent.refusal == "unexplained":  # a word the parse left over would change the record: nothing written
        why = intent.extra.get("unexplained") or {}
        return Outcome(unexplained_reply(why.get("kind", ""), why.get("words", ""), language))
    if intent.extra.get("set_aside"):
        return _set_aside(act(dataclasses.replace(intent, extra={k: v for k, v in intent.extra.items()
                                                                 if k != "set_aside"}),
                              store, utterance, turn_id, confirmed=confirmed, language=language, docs=docs),
                          intent.extra["set_aside"], language)
    if intent.parts:
        return _parts(intent, store, utterance, turn_id, confirmed, language)
    if kind == "undo":
        return _last_record(intent, store, utterance, turn_id, language)
    if kind not in ITEM_INTENTS:
        return _without_a_write(intent, store, utterance, language, docs)
    intent = _narrow(intent, store)
    item = store.get(intent.sku) if intent.sku else None
    if item is None and intent.refusal in ("negated", "already_done") and not intent.unknown:
        return Outcome(_refused(intent, None, language))  # nothing will be written: no question which item
    if item is None:
        return _without_item(intent, store, language)
    if kind == "query_stock":
        return Outcome(_with_site_note(_stock_answer(intent, item, language), store, language))
    problem = _check_quantity(intent, item, language)
    if problem is not None:
        return problem
    if kind == "transfer":
        return _transfer(intent, item, store, utterance, turn_id, confirmed, language)
    if kind == "stock_count":
        return _count(intent, item, store, utterance, turn_id, language, confirmed)
    return _log(intent, item, store, utterance, turn_id, confirmed, language)


def _last_record(intent: Intent, store: Store, utterance: str, turn_id: str, language: str) -> Outcome:
    """An undo, or a count corrected in the turn after its log (:mod:`edge.stages.last_record`)."""
    if "amend" not in intent.extra:
        text, record = last_record.undo(store, utterance, turn_id, language)
        return Outcome(text, record=record)
    done = last_record.amend(intent, store, utterance, turn_id)
    if done is None:  # a whole command said after a turn that wrote nothing: that command
        return act(intent.extra["amend"]["log"], store, utterance, turn_id, language=language)
    return Outcome(done[0], record=done[1])


def _set_aside(outcome: Outcome, aside: list[str], language: str) -> Outcome:
    """A command said beside questions or remarks: its reply, with what was not taken as a change
    said when something was written."""
    if outcome.record is None or language != "en":
        return outcome
    said = " ".join(aside)
    return dataclasses.replace(outcome, text=f"{outcome.text} I took \u201c{said}\u201d as no change.")


def _without_a_write(intent: Intent, store: Store, utterance: str, language: str,
                     docs: Callable[[str], str] | None) -> Outcome:
    """The intents that name no item to act on: documents, low stock, place contents, questions
    about the log, free answers."""
    kind = intent.intent
    if kind == "ask_docs":
        return Outcome(docs(intent.text or utterance) if docs is not None else reply.text("no_docs", language))
    if kind == "ask_records":
        return _records(intent, store, language)
    if kind == "low_stock":
        return Outcome(reply.low_stock_reply(*_low(intent, store), language))
    if kind == "place_contents":
        if not intent.location:
            return Outcome(reply.text("no_place", language))
        rows, total = store.place_contents(intent.location, reply.MAX_LISTED + 1)
        return Outcome(reply.place_reply(intent.location, rows, total, language))
    if intent.extra.get("log_question"):  # "did I already log the coolant?": the records answer
        return Outcome(records_reply.logged_answer(intent, store, language))
    return Outcome(intent.answer or reply.text("not_understood", language))


def _stock_answer(intent: Intent, item: Item, language: str) -> str:
    """How many there are; for a what-if question ("pretend I used 5 …, what would be left?") also
    what the change supposed would leave (nothing is written)."""
    said = reply.query_reply(item, intent.location, language)
    if "what_if" not in intent.extra:
        return said
    return f"{said} {reply.what_if_note(item, intent.location, intent.extra['what_if'], language)}"


def _low(intent: Intent, store: Store) -> tuple[list[Item], int]:
    """The low items (:mod:`edge.stock.low`) a ``low_stock`` Intent asks about: of its item or candidates
    ("are we low on cutting discs"), at its place ("anything on shelf F getting low"), else all of them."""
    skus = (intent.sku,) if intent.sku else intent.candidates
    if not skus and not intent.location:
        return store.low_stock(reply.MAX_LISTED + 1)
    if skus:
        items = [i for i in (store.get(s) for s in skus) if i is not None]
    else:
        items = [i for i, _q in store.place_contents(intent.location, MAX_PLACE_ITEMS)[0]]
    return low.low_among([i for i in items if not (skus and intent.location) or i.place(intent.location)],
                         reply.MAX_LISTED + 1)


def _records(intent: Intent, store: Store, language: str) -> Outcome:
    """A question about what happened: answered from the records (:mod:`edge.stages.records_reply`);
    an item that is not one SKU is asked or said unknown first, never answered with the stock."""
    if intent.sku is None and (intent.candidates or intent.unknown):
        return _without_item(intent, store, language)
    said, asked = records_reply.answer_intent(intent, store, language)
    return Outcome(said, Pending("period", intent) if asked else None)  # "Which week?": the next words say it


def _with_site_note(text: str, store: Store, language: str) -> str:
    # on a site, an answer given while the site is unreachable is this box's view only: say so
    offline = store.site_offline()
    return text if offline is None else f"{text} {reply.offline_note(*offline, language)}"


def _narrow(intent: Intent, store: Store) -> Intent:
    """An Intent whose item fits several candidates, with a place said: the candidates stored at
    that place ("one drill bit out of drawer four": the three sizes kept there), and the item when
    only one of them is ("eight M8 bolts from bin 16": the one M8 bolt in bin 16). Unchanged when
    none is stored there (a new or misheard place), or when a word said names no item or a
    variant said is not stocked (those are said, not guessed)."""
    if intent.sku or not intent.location or len(intent.candidates) < 2 or intent.unknown or intent.heard_variant:
        return intent
    here = [s for s in intent.candidates if (i := store.get(s)) is not None and i.place(intent.location) is not None]
    if len(here) == 1:
        return dataclasses.replace(intent, sku=here[0], candidates=(), variant_missing=None)
    return dataclasses.replace(intent, candidates=tuple(here)) if here else intent


def _without_item(intent: Intent, store: Store, language: str) -> Outcome:
    """The reply to an Intent whose item is not one SKU: a refusal that needs no size, the sizes
    asked for, else the question (:func:`_which_item`)."""
    if intent.candidates and intent.refusal in ("negated", "already_done"):
        # "don't log the cable ties": nothing is written whichever size was meant, so none is asked
        return Outcome(reply.refusal_reply(intent.refusal, None, intent.quantity, language))
    if intent.intent == "query_stock" and intent.extra.get("variants_asked"):
        return _variants(intent, store, language)
    return _which_item(intent, store, language)


def _variants(intent: Intent, store: Store, language: str) -> Outcome:
    """The answer to "what sizes of sockets do we carry": every variant of the candidates, smallest
    first; the question of :func:`_which_item` when no size tells them apart."""
    cands = tuple(by_size([i for i in (store.get(s) for s in intent.candidates) if i is not None]))
    attribute, labels, unit = variant_choices(cands) if len(cands) > 1 else ("name", [], "")
    if attribute == "name":
        return _which_item(intent, store, language)
    return Outcome(reply.variants_reply(split_size(cands[0].item)[0], labels, unit, language))


def _which_item(intent: Intent, store: Store, language: str) -> Outcome:
    """The question (or the refusal) for an Intent whose item is not one SKU."""
    cands = tuple(i for i in (store.get(s) for s in intent.candidates) if i is not None)
    alike = reply.sound_alike_question(cands, language) if 1 < len(cands) <= MAX_PLACES_ASKED else None
    if alike is not None:  # names that sound the same are asked by place or SKU, never by name
        return Outcome(alike, Pending("choose_item", intent, cands))
    if intent.heard_variant and cands:
        cands = _nearest(cands, intent.heard_variant)
        attribute, labels, unit = variant_choices(cands)
        family = split_size(cands[0].item)[0]
        return Outcome(reply.no_variant_reply(family, intent.heard_variant, labels, unit, language),
                       Pending("choose_item", intent, cands, variant=attribute))
    if intent.variant_missing and len(cands) > 1:
        cands = tuple(by_size(cands))  # read smallest first, so "the second one" is the second heard
        attribute, labels, unit = variant_choices(cands)
        if attribute != "name":
            return Outcome(reply.choice_text(_ordered(labels), language, unit if language == "en" else "毫米" if unit else "",
                                             most=MAX_VARIANTS_ASKED),
                           Pending("choose_item", intent, cands, variant=attribute))
    if len(cands) > 1:
        return Outcome(ask_back_text(cands, language), Pending("choose_item", intent, cands))
    if intent.unknown:
        return Outcome(reply.unknown_reply(intent.unknown, language))
    legacy = tuple(i for i in (store.get(s) for s in intent.extra.get("candidates", ())) if i is not None)
    if len(legacy) > 1:
        return Outcome(ask_back_text(legacy, language), Pending("choose_item", intent, legacy))
    return Outcome(ask_back_text((), language), Pending("choose_item", intent, ()))


def _ordered(labels: list[str]) -> list[str]:
    """The labels of a variant question as said; more than :data:`MAX_VARIANTS_ASKED`: the first
    ones and the last, so the range is heard (any of them is taken as the answer)."""
    if len(labels) <= MAX_VARIANTS_ASKED:
        return labels
    return [*labels[:MAX_VARIANTS_ASKED - 1], f"{labels[-1]}"]


def _nearest(cands: tuple[Item, ...], heard: str, keep: int = 3) -> tuple[Item, ...]:
    """The ``keep`` variants nearest to the heard one ("60" → 50 and 80 mm before 30), in size order."""
    attribute, labels, _unit = variant_choices(cands)
    said = number_answer(heard)
    if said is None or len(cands) <= keep:
        return cands
    # a size label ("60", "M8") or, for items of several families, the first number of the name
    value = {lab: float(m.group(0)) for lab in labels if (m := re.search(r"\d+(?:\.\d+)?", lab)) is not None}
    ranked = sorted((c for c, lab in zip(cands, labels, strict=True) if lab in value),
                    key=lambda c: abs(value[labels[cands.index(c)]] - said))[:keep]
    return tuple(sorted(ranked, key=lambda c: value[labels[cands.index(c)]])) or cands


def _check_quantity(intent: Intent, item: Item, language: str, part: int | None = None) -> Outcome | None:
    """The refusal or question for a quantity that must not be written as heard, else None."""
    q = intent.quantity
    if intent.refusal in ("range", "correction", "fraction"):
        return Outcome(reply.refusal_reply(intent.refusal, item, q, language), Pending("quantity", intent, part=part))
    if intent.refusal and intent.refusal != "hearsay":  # hearsay is read back where a write would happen
        return Outcome(_refused(intent, item, language))
    if q is None or (not q and intent.intent != "stock_count"):
        return Outcome(reply.text("no_quantity", language), Pending("quantity", intent, part=part))
    if not intent.extra.get("unit_asked") and (intent.extra.get("other_unit") or other_unit(
            intent.text, intent.quantity, (item.item, *item.aliases), item.unit, part is not None) is not None):  # "3 sheets of paper" counted in pallets: asked, never converted
        return Outcome(reply.unit_question(item, language), Pending("quantity", dataclasses.replace(
            intent, extra={**intent.extra, "unit_asked": True}), part=part))
    if q < 0:
        return Outcome(reply.refusal_reply("negative", item, q, language))
    if abs(q) > MAX_QUANTITY:
        return Outcome(reply.text("too_many", language, q=q))
    if isinstance(q, float) and not q.is_integer() and not allows_decimals(item.unit):
        # defence in depth: the understanding should have set refusal=fraction already
        return Outcome(reply.refusal_reply("fraction", item, q, language), Pending("quantity", intent, part=part))
    return None


def _refused(intent: Intent, item: Item | None, language: str, what: str | None = None) -> str:
    """The refusal reply for ``intent``, read back as it was said (a log told not to be written,
    one said not to have happened, a move, a count)."""
    return reply.refusal_reply(intent.refusal, item, intent.quantity, language, kind=intent.intent,
                               direction=intent.direction, told=bool(intent.extra.get("told_not_to")), what=what)


def _place(intent: Intent, item: Item, slot: str, language: str, part: int | None = None,
           new_ok: bool = False, taking: bool = False) -> tuple[str | None, Outcome | None]:
    """The item's stored place the Intent's ``slot`` names (or its only place; ``taking`` stock
    out, the only place that has any), or the question."""
    said = getattr(intent, slot)
    stock = item.places()
    if said:
        held = item.place(said)
        if held is not None or (new_ok and _names_one(said)):
            return held or said, None
        names = [p for p, _q in stock]
        told = reply.query_reply(item, said, language)
        if len(names) == 1:  # the one place it is at: ask to use it rather than guess
            ask = f"{reply.zh_place(names[0])}吗？请说是或不是。" if language == "zh" else f"{names[0]}, then? Say yes or no."
            return None, Outcome(f"{told} {ask[0].upper()}{ask[1:]}",
                                 Pending("confirm", _fill_part(intent, part, **{slot: names[0]})))
        return None, Outcome(f"{told} " + reply.choice_text(_said_places(names, language), language),
                             Pending("choose_place", intent, places=tuple(names), slot=slot, part=part))
    if len(stock) == 1:
        return stock[0][0], None
    having = [p for p, q in stock if q > 0]
    if taking and len(having) == 1:  # what is taken out comes from where there is some
        return having[0], None
    names = [p for p, _q in stock]
    return None, Outcome(reply.choice_text(_said_places(names[:MAX_PLACES_ASKED], language), language),
                         Pending("choose_place", intent, places=tuple(names), slot=slot, part=part))


def _names_one(location: str) -> bool:
    """Whether a place said names one place (a word and its number or letter: "bin 90", "shelf
    H"), not only a kind ("the shelf"), so it may become an item's new place."""
    return re.fullmatch(r"[^\W\d_]+ [0-9A-Za-z]+", " ".join(location.split())) is not None \
        and location.split()[0].lower() != "the"


def _said_places(names: list[str], language: str) -> list[str]:
    return [reply.zh_place(n) for n in names] if language == "zh" else names


def _log(intent: Intent, item: Item, store: Store, utterance: str, turn_id: str, confirmed: bool,
         language: str) -> Outcome:
    if intent.direction not in ("in", "out"):  # neither "used" nor "received" was said: never guess
        return Outcome(reply.direction_question(item, intent.quantity, language), Pending("direction", intent))
    out = intent.direction == "out"
    location, ask = _place(intent, item, "location", language, new_ok=not out, taking=out)
    if ask is not None:
        return ask
    if intent.explain.get("item_via") == "location" and not confirmed:  # the item was not said: read it back
        text = (f"{reply.zh_place(location)}：{'用了' if out else '放入'}{reply.zh_amount(item, intent.quantity)}吗？请说是或不是。"
                if language == "zh" else f"{reply.amount(item, intent.quantity, True)} {'out of' if out else 'into'} "
                f"{location}? Say yes or no.")
        return Outcome(text[0].upper() + text[1:], Pending("confirm", intent))
    delta = -intent.quantity if out else intent.quantity
    have = item.at(location)
    needs_read_back = intent.extra.get("low_confidence_quantity") or intent.extra.get("loose_count") \
        or (have is not None and have + delta < 0) \
        or have is None or intent.extra.get("llm_guessed") or intent.refusal == "hearsay" \
        or intent.extra.get("converted") or intent.extra.get("read_back")  # LLM-only count, second-hand, converted
    if needs_read_back and not confirmed:
        if have is None:  # stock into a place the item is not stored at yet: a misheard place must not make one
            text = (f"{reply.plural(reply.sized(item)[0])} are not stored {reply.place(location)} yet. "
                    f"Log {reply.amount(item, intent.quantity, True)} into {location}? Say yes or no.")
            if language == "zh":
                text = f"{reply.zh_place(location)}还没有{reply.zh_name(item)}。要记录放入{reply.zh_amount(item, intent.quantity)}吗？请说是或不是。"
            return Outcome(text[0].upper() + text[1:], Pending("confirm", intent))
        if intent.refusal == "hearsay" and have + delta >= 0:
            return Outcome(reply.hearsay_question(reply.log_said(item, intent.quantity, out, language), language),
                           Pending("confirm", intent))
        return Outcome(reply.read_back(item, intent.quantity, intent.direction, language, location,
                                       intent.extra.get("loose_count"), intent.extra.get("converted")),
                       Pending("confirm", intent))
    # the place only when it decides something (an Inventory of an older shape takes no place)
    where = {"location": location} if len(item.places()) > 1 or location != item.location else {}
    record, item = store.log(item.sku, delta, utterance, turn_id, **where)
    return Outcome(_with_site_note(reply.log_reply(record, item, language), store, language), record=record)


def _transfer(intent: Intent, item: Item, store: Store, utterance: str, turn_id: str, confirmed: bool,
              language: str) -> Outcome:
    src, ask = _place(intent, item, "location", language, taking=True)
    if ask is not None:
        return ask
    if not intent.to_location:
        return Outcome(reply.text("where_to", language), Pending("choose_place", intent, slot="to_location"))
    if item.place(intent.to_location) is None and not _names_one(intent.to_location):
        # not one place ("er bin 62", "bin 61 no to bin 62"): a misheard place must not become one
        return Outcome(reply.text("where_to", language), Pending("choose_place", intent, slot="to_location"))
    if item.place(intent.to_location) is None and not confirmed:
        # a place the item was never stored in is made only after a yes (a misheard place must not become one)
        name, have = reply.plural(reply.sized(item)[0]), item.at(src) or 0
        short = "" if have >= intent.quantity else (  # one yes answers both, so both are said
            f"，{reply.zh_place(src)}只有{reply.zh_amount(item, have)}" if language == "zh" else
            f", and there {'is' if have == 1 else 'are'} only {have} {reply.place(src)}")
        text = (f"{reply.zh_place(intent.to_location)}是{reply.zh_name(item)}的新位置{short}。要移动到那里吗？请说是或不是。"
                if language == "zh" else f"{intent.to_location[0].upper()}{intent.to_location[1:]} is a new place for "
                f"{name}{short}: move {'them' if not short else reply.amount(item, intent.quantity, True)} there? "
                "Say yes or no.")
        return Outcome(text, Pending("confirm", dataclasses.replace(intent, location=src)))
    if item.place(intent.to_location) == src:
        return Outcome(f"{src}是同一个位置，没有移动。" if language == "zh" else
                       f"{src[0].upper()}{src[1:]} is where they are already; nothing was moved.")
    have = item.at(src) or 0
    if have - intent.quantity < 0 and not confirmed:
        text = (f"There {'is' if have == 1 else 'are'} only {have} {reply.place(src)}. Move "
                f"{reply.amount(item, intent.quantity, True)} to {intent.to_location} anyway? Say yes or no.")
        if language == "zh":
            text = (f"{reply.zh_place(src)}只有{reply.zh_amount(item, have)}。还是移动"
                    f"{reply.zh_amount(item, intent.quantity)}吗？请说是或不是。")
        return Outcome(text, Pending("confirm", dataclasses.replace(intent, location=src)))
    if intent.refusal == "hearsay" and not confirmed:
        what = (f"从{reply.zh_place(src)}移动{reply.zh_amount(item, intent.quantity)}到{reply.zh_place(intent.to_location)}"
                if language == "zh" else f"move {reply.amount(item, intent.quantity, True)} from {src} to {intent.to_location}")
        return Outcome(reply.hearsay_question(what, language), Pending("confirm", dataclasses.replace(intent, location=src)))
    out, into, item = store.transfer(item.sku, intent.quantity, src, intent.to_location, utterance, turn_id)
    return Outcome(_with_site_note(reply.transfer_reply(out, into, item, language), store, language), record=out)


def _count(intent: Intent, item: Item, store: Store, utterance: str, turn_id: str, language: str,
           confirmed: bool = False) -> Outcome:
    location, ask = _place(intent, item, "location", language, new_ok=True)
    if ask is not None:
        return ask
    if item.place(location) is None and not confirmed:  # a new place only after a yes
        text = (f"{reply.zh_place(location)}是{reply.zh_name(item)}的新位置。要记录盘点{reply.zh_amount(item, intent.quantity)}吗？"
                "请说是或不是。" if language == "zh" else f"{location[0].upper()}{location[1:]} is a new place for "
                f"{reply.plural(reply.sized(item)[0])}: count {reply.amount(item, intent.quantity, True)} there? Say yes or no.")
        return Outcome(text, Pending("confirm", dataclasses.replace(intent, location=location)))
    if intent.explain.get("item_via") == "location" and not confirmed:  # the item was not said: read it back
        return Outcome(f"{reply.zh_place(location)}：盘点{reply.zh_amount(item, intent.quantity)}吗？请说是或不是。"
                       if language == "zh" else f"Count {reply.amount(item, intent.quantity, True)} "
                       f"{reply.place(location)}? Say yes or no.", Pending("confirm", dataclasses.replace(intent, location=location)))
    if intent.refusal == "hearsay" and not confirmed:
        what = (f"记录{reply.zh_place(location)}盘点{reply.zh_amount(item, intent.quantity)}" if language == "zh"
                else f"count {reply.amount(item, intent.quantity, True)} {reply.place(location)}")
        return Outcome(reply.hearsay_question(what, language), Pending("confirm", dataclasses.replace(intent, location=location)))
    record, item = store.count(item.sku, intent.quantity, utterance, turn_id, location=location)
    return Outcome(_with_site_note(reply.count_reply(record, item, language), store, language), record=record)


def _parts(intent: Intent, store: Store, utterance: str, turn_id: str, confirmed: bool, language: str) -> Outcome:
    """Several logs in one sentence: every part resolved and checked first (the first one that is
    not is asked about, nothing written), then all written in one transaction."""
    if intent.refusal in ("negated", "already_done"):
        return _parts_refused(intent, store, language)
    changes: list[tuple[str, int | float, str | None]] = []
    said: list[str] = []
    for k, part in enumerate(intent.parts):
        part = _narrow(part, store)
        item = store.get(part.sku) if part.sku else None
        if item is None:
            return _for_part(_which_item(part, store, language), intent, k)
        problem = _check_quantity(part, item, language, part=k)
        if problem is not None:
            return _for_part(problem, intent, k)
        if part.direction not in ("in", "out"):
            return _for_part(Outcome(reply.direction_question(item, part.quantity, language),
                                     Pending("direction", part, part=k)), intent, k)
        location, ask = _place(part, item, "location", language, part=k, taking=part.direction == "out")
        if ask is not None:
            return _for_part(ask, intent, k)
        have = item.at(location) or 0
        delta = -part.quantity if part.direction == "out" else part.quantity
        if have + delta < 0 and not confirmed:
            return Outcome(reply.read_back(item, part.quantity, part.direction, language, location, part.extra.get("loose_count")), Pending("confirm", intent))
        changes.append((item.sku, delta, location))
        said.append(reply.log_said(item, part.quantity, part.direction == "out", language))
    doubt = [p.refusal == "hearsay" or bool(p.extra.get("read_back") or p.extra.get("low_confidence_quantity"))
             for p in intent.parts]  # second-hand, typed in the present tense, or not heard well: all read back
    if not confirmed and any(doubt):
        return Outcome(reply.parts_read_back(said, any(p.refusal == "hearsay" for p in intent.parts), language),
                       Pending("confirm", intent))
    merged, pieces = _merged(changes)
    if merged is None:  # one item both used and received in one sentence: which net change is not guessed
        item = store.get(pieces)
        return Outcome(reply.both_ways_reply(item, language))
    # one record per item and place (the store keeps one change per turn there): "2 … and 2 more" is one of 4
    done = store.log_many(merged, utterance, turn_id)
    return Outcome(_with_site_note(reply.parts_reply(done, language, pieces), store, language), record=done[0][0])


def _merged(changes: list[tuple[str, int | float, str | None]]):
    """The changes of one sentence with those of one item and place summed: ``(changes, {sku: [the
    amounts said]})`` for items said more than once; ``(None, sku)`` when one item and place goes
    both ways."""
    by: dict[tuple[str, str | None], list[int | float]] = {}
    for sku, delta, location in changes:
        by.setdefault((sku, location), []).append(delta)
    for (sku, _loc), deltas in by.items():
        if len({d > 0 for d in deltas}) > 1:
            return None, sku
    merged = [(sku, sum(deltas), loc) for (sku, loc), deltas in by.items()]
    pieces = {sku: [abs(d) for d in deltas] for (sku, _loc), deltas in by.items() if len(deltas) > 1}
    return merged, pieces


def _parts_refused(intent: Intent, store: Store, language: str) -> Outcome:
    """A negated or already logged sentence of several parts: one reply naming every part said."""
    said = []
    for part in intent.parts:
        item = store.get(part.sku) if part.sku else None
        if item is None or part.quantity is None:
            return Outcome(_refused(intent, None, language))
        said.append(reply.zh_amount(item, part.quantity) if language == "zh" else reply.amount(item, part.quantity))
    what = "和".join(said) if language == "zh" else reply.join_and(said)
    return Outcome(_refused(intent, None, language, what=what))


def _for_part(outcome: Outcome, whole: Intent, k: int) -> Outcome:
    """A part's question, pending on the whole sentence (so the answer completes all of it)."""
    if outcome.pending is None:
        return outcome
    parts = list(whole.parts)
    parts[k] = outcome.pending.intent  # the part as asked about (a confirm's carries the place it proposes)
    whole = dataclasses.replace(whole, parts=tuple(parts))
    part = None if outcome.pending.kind == "confirm" else k
    return dataclasses.replace(outcome, pending=dataclasses.replace(outcome.pending, intent=whole, part=part))


def _one_answer(pending: Pending, text: str, store: Store, again: str, turn_id: str, language: str) -> Outcome:
    """The answer to "used or received?", "how many?" or a records question's "Which week?" (asked
    again over the period said; nothing is written)."""
    if pending.kind == "period":
        asked = records_reply.with_period(pending.intent, text)
        return act(asked, store, again, turn_id, language=language) if asked else Outcome(records_reply.no_period(language))
    if pending.kind == "direction":
        way = direction_answer(text, language)
        if way is None:
            return Outcome(reply.text("no_direction", language))
        return act(_fill(pending, direction=way), store, again, turn_id, language=language)
    q = number_answer(text)
    if q is None:
        return Outcome(reply.text("no_number", language))
    return act(_fill(pending, quantity=q, refusal=None), store, again, turn_id, language=language)


def _fill(pending: Pending, **slots) -> Intent:
    """The pending Intent with ``slots`` set (on the part asked about, when it is a part)."""
    return _fill_part(pending.intent, pending.part, **slots)


def _fill_part(intent: Intent, part: int | None, **slots) -> Intent:
    if part is None or part >= len(intent.parts):
        return dataclasses.replace(intent, **slots)
    parts = list(intent.parts)
    parts[part] = dataclasses.replace(parts[part], **slots)
    return dataclasses.replace(intent, parts=tuple(parts))


def answer_phrases(pending: Pending) -> list[str]:
    """What an answer to ``pending`` is likely to say, for biasing recognition while the box waits: the
    sizes offered ("80 millimetre"), the places or items offered, used / received, never mind, yes / no."""
    said: list[str] = []
    if pending.kind == "choose_place":
        said += list(pending.places)
    elif pending.kind == "choose_item" and pending.candidates:
        attribute, labels, unit = variant_choices(pending.candidates)
        said += [f"{lab} {unit}".strip() for lab in labels] if pending.variant and attribute != "name" \
            else [c.item for c in pending.candidates[:MAX_VARIANTS_ASKED]]
        if reply.sounds_alike(pending.candidates):  # asked by place or SKU
            said += list(dict.fromkeys(p for c in pending.candidates for p, _q in c.places()))
            said += [c.sku for c in pending.candidates]
    elif pending.kind == "direction":
        said += ["used", "received"]
    elif pending.kind == "confirm":
        said += ["yes", "no"]
    return [*said, "never mind"]


def offers(pending: Pending) -> bool:
    """Whether the question of ``pending`` has a closed set of answers (places, items or sizes
    offered, a number, yes or no, used or received), not "Which item?" over the whole inventory."""
    return pending.kind in ("confirm", "quantity", "direction") or bool(pending.places or pending.candidates)


def follow_up(pending: Pending, text: str, store: Store, turn_id: str, language: str = "en") -> Outcome:
    """The answer ``text`` to ``pending``: complete, confirm or drop the command (noted as :func:`act`'s)."""
    return last_record.noted(store, turn_id, _follow_up(pending, text, store, turn_id, language))


def _follow_up(pending: Pending, text: str, store: Store, turn_id: str, language: str) -> Outcome:
    again = pending.intent.text
    waits = holds(text, language)  # "no wait", 等一下; a grudging 好吧 to a read-back: asked again, nothing written
    if waits == "hold" or (waits == "grudging" and pending.kind == "confirm"):
        return Outcome(reply.text(waits, language), pending)
    if is_cancel(text, language) and pending.kind != "confirm":  # (a read-back takes "no" as its no)
        return Outcome(reply.text("cancelled", language))
    if pending.kind == "period":
        return _one_answer(pending, text, store, again, turn_id, language)
    if answer_overreaches(pending, text, store):  # more than the answer: nothing is written from it
        return Outcome(reply.text("overreach", language))
    if pending.kind == "confirm":
        yn = yes_no(text, language)
        if yn:
            return act(pending.intent, store, again, turn_id, confirmed=True, language=language)
        q = number_answer(text) if yn is None and pending.intent.extra.get("loose_count") else None
        if q is not None:  # "Log 2 boxes …?" "two": the count said now is the count, checked as any other
            extra = {k: v for k, v in pending.intent.extra.items() if k != "loose_count"}
            return act(_fill(pending, quantity=q, extra=extra), store, again, turn_id, language=language)
        return Outcome(reply.text("declined" if yn is False else "no_yes", language))
    if pending.kind in ("direction", "quantity"):
        return _one_answer(pending, text, store, again, turn_id, language)
    if pending.kind == "choose_place":
        if pending.places:
            where = place_choice(text, pending.places)
        else:  # "where to?": any place said as a place word and its name ("bin 90")
            words = [w for w in normalize_numbers(text).lower().split() if w not in ("to", "into", "the", "please")]
            where = " ".join(words) if len(words) == 2 else None
        if where is None:
            return Outcome(reply.text("no_place_choice", language))
        return act(_fill(pending, **{pending.slot: where}), store, again, turn_id, language=language)
    if pending.variant is not None:
        sku = variant_pick(text, pending.candidates)
    else:
        sku = resolve_choice(text, pending.candidates or tuple(store.items()))
    if sku is None:
        return Outcome(reply.text("no_choice", language))
    return act(_fill(pending, sku=sku, candidates=(), variant_missing=None, heard_variant=None), store, again,
               turn_id, language=language)
