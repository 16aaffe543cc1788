"""What "cancel" / "never mind" / "forget it" / 算了 says when no question is waiting: such words
write nothing, and the reply must not claim that nothing was logged when the turn just before
logged something. The latest record, if written within :data:`RECENT_S`, is said back with the way
to take it back ("undo that"); the words never undo by themselves ("cancel that" is an undo, parsed
as one before this)."""
from __future__ import annotations

from datetime import datetime

from edge.stages.nlu.types import Intent
from edge.stages.reply import amount, zh_amount
from edge.stock.store import Store

#: How old (seconds) the latest record may be to count as the command just before the cancel
#: words: longer than a follow-up window (the box's question waits 8 s by default) and a
#: spoken exchange, short enough not to reach back to another shift's work.
RECENT_S = 180.0

_VERB_EN = {"log": ("used", "received"), "transfer": ("moved", "moved"), "count": ("counted", "counted")}
_VERB_ZH = {"log": ("用了", "收到"), "transfer": ("移动了", "移动了"), "count": ("盘点了", "盘点了")}


def reply_to_cancel(store: Store, language: str = "en", intent: Intent | None = None) -> str:
    """The reply to cancel words said as a command. A change taken back as it was said ("we used 3
    fuses, scratch that", "……，算了": ``intent.explain["path"] == "taken back"``) was not written.
    Cancel words on their own name the record just written (not undone) and offer "undo that";
    otherwise they say only that nothing was logged now (always true: the words write nothing)."""
    if intent is not None and (intent.explain or {}).get("path") == "taken back":
        return "好的，你收回了，没有记录。" if language == "zh" else "OK, taken back. Nothing was logged."
    recs = store.records(last=1)
    rec = recs[-1] if recs else None
    item = store.get(rec.sku) if rec is not None else None
    if rec is None or item is None or rec.undoes is not None or not recent(store, rec.time):
        return "好的，这次没有记录。" if language == "zh" else "OK, nothing was logged just now."
    verbs = (_VERB_ZH if language == "zh" else _VERB_EN).get(rec.kind, _VERB_ZH["log"] if language == "zh" else _VERB_EN["log"])
    verb = verbs[0] if rec.delta < 0 else verbs[1]
    if language == "zh":
        return f"上一条已经记录了：{verb}{zh_amount(item, abs(rec.delta))}。要撤回的话，请说“撤销”。"
    return (f"That was already logged: {amount(item, abs(rec.delta))} {verb}. It stays logged; "
            "say \"undo that\" to take it back.")


def recent(store: Store, when: str) -> bool:
    """Whether the record time ``when`` (ISO 8601) is within :data:`RECENT_S` of the store's clock now."""
    try:
        t = datetime.fromisoformat(when)
    except ValueError:
        return False
    return (store.calendar.clock() - t).total_seconds() <= RECENT_S
