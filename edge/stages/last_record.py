"""What a turn does to the records this box wrote last: take them back ("undo that", "undo the fuses",
"undo the last two": :func:`undo`), or correct the count of the one the turn before wrote ("we used 3
fuses" … "actually it was 2", "no, 2", "make that 2": :func:`amend`).

A correction is written only when it cannot be a wrong record: the turn just before this one
(:func:`noted`: the dialog notes every turn's outcome per store, in memory) wrote one log of one
item, within :data:`edge.stages.cancel_reply.RECENT_S`, nothing was written since, and the words
fit it (the same item, direction and unit). Then the log is undone and the corrected one written in
one transaction (:meth:`edge.stock.store.Store.amend`) and the change is said back. Otherwise nothing
is changed and the reply says why; a correction said as a whole command ("actually we used 2 fuses")
after a turn that wrote nothing is that command (the caller acts on it).

Each function returns the reply text and the first record written (None when nothing was).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from weakref import WeakKeyDictionary

from edge.stages import reply
from edge.stages.cancel_reply import recent
from edge.stages.nlu.followup import resolve_choice
from edge.stages.nlu.numbers import normalize_numbers
from edge.stages.nlu.said_counts import counts_said, other_unit
from edge.stages.nlu.types import Intent
from edge.stock.csvfile import allows_decimals
from edge.stock.store import CountSettled, Item, Record, Store, StoreError

#: Words of an undo command that name neither an item nor how many ("undo the last one please").
_UNDO_WORDS = frozenset(
    "undo un do revert reverse scratch take back delete remove cancel that this it the last one ones entry "
    "entries record records log logs change changes booking go roll rollback was is s were wrong a mistake "
    "incorrect not right thats i we made my our and an on please oops sorry ok okay uh um er hey of for "
    "those these them both "
    # what was done, not what with: "undo the transfer", "put that move back the way it was",
    # "forget the last thing I logged", "undo that last count"
    "transfer transfers move moves moved count counts counted stock thing things logged booked entered put "
    "way forget just did done"
    # what is said around an undo, not what it undoes: "no hang on, undo that", "I said that wrong, back it
    # out", "take it off again", "scrap that last one"
    " no hang hold wait again off out said got bad scrap strike ditch drop"
    # a request's politeness and the reason given: "can you cancel that last entry", "reverse that, wrong item"
    " can could would you item number".split())
MAX_UNDO = 5  #: the most records one "undo the last N" reverts
#: an undo said negated ("don't undo that", "no need to undo it", "不要撤销"): nothing is undone
_NOT_UNDO = re.compile(r"\b(?:don'?t|do not|dont|never|no need to|not)\b(?:\s+\w+){0,2}?\s+(?:undo|reverse|delete|"
                       r"remove|cancel|take back|scrap|revert)\b|(?:不要|别|不用|不必)(?:再)?(?:撤销|撤回|删除|取消)")
UNDO_LOOKBACK = 20  #: how many latest records an undo naming an item searches first for it


def undo(store: Store, utterance: str, turn_id: str, language: str) -> tuple[str, Record | None]:
    """Undo this box's last record, of the item the words name ("undo the fuses": never another
    item's), or the last N ("undo the last two"; more than :data:`MAX_UNDO` undoes nothing, said so).
    Words naming no item of the store undo nothing (an unheard item must not undo another's). Returns
    the reply and the first record written (None when nothing was undone)."""
    sku, n = None, 1
    if _NOT_UNDO.search((utterance or "").lower().replace("\u2019", "'")):  # "don't undo that": told not to
        return "好的，没有撤销。" if language == "zh" else "OK, nothing was undone.", None
    if language != "zh":
        words = re.sub(r"[^\w\s-]", " ", normalize_numbers(utterance).lower().replace("'", "")).split()
        counts = [int(w) for w in words if w.isdigit()] + [2 for w in words if w in ("both", "those", "these")]
        if (n := max(1, counts[0] if counts else 1)) > MAX_UNDO:
            return f"I can undo at most {MAX_UNDO} records at a time, so nothing was undone.", None
        rest = [w for w in words if w not in _UNDO_WORDS and not w.isdigit()]
        if rest:
            # "delete the washers entry": the washers just logged (of many in the inventory), else any item
            recent = dict.fromkeys(r.sku for r in reversed(store.records(last=UNDO_LOOKBACK)) if r.undoes is None)
            near = tuple(it for it in (store.get(k) for k in recent) if it is not None)
            sku = resolve_choice(" ".join(rest), near) or resolve_choice(" ".join(rest), tuple(store.items()))
            if sku is None:
                return f"I don't have {' '.join(rest)}, so nothing was undone.", None
    texts, first = [], None
    for k in range(n):
        try:
            result = store.undo(utterance, turn_id if k == 0 else f"{turn_id}:{k}", sku=sku)
        except CountSettled as e:  # a later count settled it: refused, the stock stays as counted
            return " ".join([*texts, reply.count_settled_reply(e.covered, e.item, language)]), first
        if result is None:
            break
        first = first or result[0]
        texts.append(_undo_text(store, result, language))
    if not texts:
        if sku is not None:
            return f"There is no record of {reply.plural(reply.sized(store.get(sku))[0])} to undo.", None
        return reply.undo_reply(None, language), None
    if n > 1 and len(texts) < n:
        texts.append(f"That was all there was to undo ({len(texts)} of {n}).")
    return " ".join(texts), first


def _undo_text(store: Store, result: tuple[Record, Item], language: str) -> str:
    rows = store.operation(result[0].op) if result[0].op else []
    return reply.undo_transfer_reply(rows, result[1], language) if len(rows) > 1 else reply.undo_reply(result, language)




#: the latest turn each store was acted on in (:func:`noted`), in memory: a restart forgets it, so a
#: correction after one is not guessed
_LAST: WeakKeyDictionary = WeakKeyDictionary()
#: how many latest records are read for the turn before's
LOOKBACK = 10


@dataclass(frozen=True)
class _Turn:
    turn_id: str
    wrote: bool


def noted(store, turn_id: str, outcome):
    """``outcome`` (a dialog outcome with ``record``) unchanged, noted as ``store``'s latest turn."""
    try:
        _LAST[store] = _Turn(turn_id, outcome.record is not None)
    except TypeError:  # a store that cannot be referenced weakly keeps no note: nothing is corrected on it
        pass
    return outcome


def amend(intent: Intent, store: Store, utterance: str, turn_id: str) -> tuple[str, Record | None] | None:
    """Correct the count of the log the turn before wrote (see module doc). ``intent``: ``undo`` with
    ``extra["amend"]`` (``words``: the marker said, ``was``: the count said to be wrong or None, ``unit``:
    a unit word said or None, ``log``: the whole command said, or None); its ``quantity`` the count
    said, ``sku`` and ``direction`` when said. None when the turn before wrote nothing and the words
    are a whole command of their own (the caller acts on ``log``). English."""
    said = intent.extra["amend"]
    rec, why = _turn_before(store, _LAST.get(store), turn_id)
    if rec is None:
        return None if said.get("log") is not None and why is None else (why or _NOTHING, None)
    item = store.get(rec.sku)
    if item is None:
        return _NOTHING, None
    old, out = abs(rec.delta), rec.delta < 0
    did = f"{reply.amount(item, old)} {'used' if out else 'received'}"
    why = _misfit(intent, item, rec, did, utterance)
    if why is not None:
        return why, None
    q = intent.quantity
    if q == old:
        return f"That is what was logged: {did}. Nothing changed.", None
    try:
        _undo, new, item = store.amend(rec.id, -q if out else q, f"{rec.utterance} / {utterance}", turn_id)
    except (CountSettled, StoreError) as e:
        return f"Nothing changed: {e}", None
    return f"Corrected the last record from {old:g} to {q:g}. {reply.log_reply(new, item)}", new


_NOTHING = ("Nothing changed: the turn before wrote no record to correct. Please say the whole change, like 'we used "
            "2 fuses'.")


def _turn_before(store: Store, before: _Turn | None, turn_id: str) -> tuple[Record | None, str | None]:
    """The one log the turn before wrote, or None and why it is not corrected (None: it wrote nothing)."""
    if before is None or not before.wrote:
        return None, None
    if before.turn_id == turn_id:
        return None, "That correction was made already."
    recs = store.records(last=LOOKBACK)
    if not recs or recs[-1].turn_id != before.turn_id:
        return None, ("Nothing changed: other records were written since the turn before, and I won't guess which "
                      "one to correct. Say 'undo that' and the change again.")
    kept = [r for r in recs if r.turn_id == before.turn_id and r.undoes is None]
    if not kept:
        return None, "Nothing changed: the turn before undid a record, and an undo is not corrected by a number."
    if len(kept) != 1 or kept[0].kind != "log":
        what = "a move or a count" if any(r.kind != "log" for r in kept) else f"{len(kept)} records"
        return None, (f"Nothing changed: the turn before wrote {what}, and I won't guess which count this corrects. "
                      "Say 'undo that', then each change on its own.")
    if not recent(store, kept[0].time):
        return None, ("Nothing changed: the last record is too old to correct by a number. Say 'undo that' and the "
                      "change again.")
    return kept[0], None


def _misfit(intent: Intent, item: Item, rec: Record, did: str, utterance: str) -> str | None:
    """Why the words do not correct ``rec`` (another item, direction, unit or count), or None."""
    said, q = intent.extra["amend"], intent.quantity
    marker = said.get("words") or "that"
    if intent.sku and intent.sku != rec.sku or intent.candidates and rec.sku not in intent.candidates:
        return (f"Nothing logged or changed: you said \u201c{marker}\u201d right after logging {did}. A correction of "
                "it, or another change? To correct it, say 'undo that' first; for another change, say it on its own.")
    if intent.direction and (intent.direction == "out") != (rec.delta < 0):
        return (f"Nothing changed: the last record was {did}, and you said it the other way. Say 'undo that' and the "
                "change again.")
    if said.get("was") is not None and said["was"] != abs(rec.delta):
        return f"Nothing changed: the last record was {did}, not {said['was']:g}."
    if q is None or q <= 0:
        return f"Nothing changed: to take back {did}, say 'undo that'."
    names = (item.item, *item.aliases)
    if counts_said(rec.utterance, names) > 1:  # "3 fuses and 2 more fuses", one record: which count is corrected?
        return (f"Nothing changed: the last record ({did}) was said as several counts, and I won't guess which one "
                "this corrects. Say 'undo that' and the change again.")
    if said.get("unit") and other_unit(utterance, q, names, item.unit) is not None or \
            isinstance(q, float) and not q.is_integer() and not allows_decimals(item.unit):
        name = reply.plural(reply.sized(item)[0])
        return f"Nothing changed: {name} are counted in {item.unit}. Say the count in {item.unit}."
    have = (item.at(rec.location) if rec.location else item.quantity) or 0
    if have - rec.delta + (-q if rec.delta < 0 else q) < 0:
        return "Nothing changed: that would leave less than none. Say 'undo that' and the change again."
    return None
