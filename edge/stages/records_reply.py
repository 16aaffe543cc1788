"""What the box says to a records question (:mod:`edge.stock.questions`), in English or Mandarin.

Every reply says the period and the unit ("Today you used 1 drill bit, at 09:00.", "This week: 9
drill bits used, on Monday, Wednesday and today.", "No drill bits used last week.", "Nitrile gloves
last came in on Monday 30 November: 20 boxes."). A stock count is said as a count and its
difference, never as use or receipt; an estimate is said as one. Times are the box's local time
(the facts are already local, :class:`edge.stock.periods.Calendar`).
"""
from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime

from edge.stages import reply
from edge.stages.nlu.filler import has_cjk
from edge.stages.nlu.lexicon import normalize_text
from edge.stages.records_reply_zh import say_zh
from edge.stock.periods import MONTHS, WEEKDAYS, find_period
from edge.stock.places import IMPORT_TURN_PREFIX
from edge.stock.questions import Answer, Question, answer

__all__ = ["say", "answer_intent", "question_of", "with_period", "no_period", "logged_answer", "future_answer", "CANNOT", "CANNOT_ZH"]

#: Said to a records question the box cannot answer from the records (never the current stock).
CANNOT = "I can't answer that one from the records."
CANNOT_ZH = "这个问题我无法从记录中回答。"
#: The latest records a question about the log ("did I already log the coolant?") reads.
MAX_LOG_QUESTION_RECORDS = 500
_DID = {"used": "used", "received": "came in", "moved": "moved", "counted": "counted"}


def question_of(intent) -> Question | None:
    """The :class:`edge.stock.questions.Question` an ``ask_records`` Intent asks, or None when no
    template or cue read it."""
    fields = intent.extra.get("records") if intent.intent == "ask_records" else None
    if not fields:
        return None
    return Question(fields["kind"], fields.get("what", "used"), intent.sku, fields.get("period"),
                    bool(fields.get("mine")), int(fields.get("limit", 3)), location=fields.get("location"),
                    listed=bool(fields.get("listed")))


def answer_intent(intent, store, language: str = "en") -> tuple[str, bool]:
    """The reply to an ``ask_records`` :class:`edge.stages.nlu.types.Intent` (``extra["records"]``:
    the question's fields, or None: "I can't answer that one"), and whether it asks for the period
    (:func:`with_period` reads the answer). Raises :class:`edge.stock.store.StoreError` when the store
    cannot be read."""
    if intent.intent == "ask_records" and intent.extra.get("also"):  # several items or periods: each answered
        first = replace(intent, extra={**intent.extra, "also": None})
        said = [answer_intent(first, store, language)[0]]
        for a in intent.extra["also"]:
            one = replace(first, sku=a.get("sku", intent.sku), extra={**first.extra, "records": a["records"]})
            said.append(answer_intent(one, store, language)[0])
        return ("" if language == "zh" else " ").join(said), False
    if intent.intent == "ask_records" and intent.extra.get("future"):
        return future_answer(intent, store, language), False
    if intent.intent == "ask_records" and intent.extra.get("place_unknown"):
        said = intent.extra["place_unknown"]
        return (f"库存里没有{reply.zh_place(said)}，所以无法回答那里的记录。" if language == "zh" else
                f"No place called {said} is in the inventory, so I can't answer for it."), False
    q = question_of(intent)
    if q is None:
        return (CANNOT_ZH if language == "zh" else CANNOT), False
    if q.location and q.kind not in ("total", "entries"):
        return (f"这个问题我无法按一个货位（{reply.zh_place(q.location)}）回答；不说货位可以回答所有货位的。"
                if language == "zh" else f"I can't answer that one for one place ({q.location}); asked without the "
                "place, I can answer it for all places."), False
    if q.kind in ("total", "last", "who", "change", "rate") and q.sku is None:
        return ("Which item? Please say its name." if language != "zh" else "哪个物品？请说出名称。"), False
    ans = answer(store, q)
    return say(ans, store, language), ans.ask is not None


def future_answer(intent, store, language: str = "en") -> str:
    """The reply to a question about a time to come: the records cannot say it; when an item is named
    and used lately, the estimate from its recent rate, said as one."""
    head = ("记录只能说已经发生的事，不能回答以后会用多少。" if language == "zh" else
            "The records only say what has already happened, so I can't say what will be used.")
    if not intent.sku or store.get(intent.sku) is None:
        return head
    ans = answer(store, Question("rate", "used", intent.sku, None, False, 3))
    if not ans.facts.get("used"):
        return head
    est = say(ans, store, language)
    return f"{head}{est}" if language == "zh" else f"{head} As an estimate from the records: {est[:1].lower()}{est[1:]}"


def with_period(intent, text: str):
    """``intent`` (an ``ask_records`` Intent whose period was asked for) with the period ``text``
    says ("last week", "上周"), or None when it names none."""
    words = find_period(text if has_cjk(text or "") else normalize_text(text or ""))
    if words is None or not intent.extra.get("records"):
        return None
    return replace(intent, extra={**intent.extra, "records": {**intent.extra["records"], "period": words}})


def no_period(language: str = "en") -> str:
    """Said when the answer to "Which week?" names no period: nothing is answered."""
    return "那段时间我没听清，所以没有回答。" if language == "zh" else "I didn't catch a period, so I haven't answered."


def say(ans: Answer, store, language: str = "en") -> str:
    """The reply to ``ans``; ``store`` names the items (:meth:`edge.stock.store.Store.get`)."""
    if ans.ask:
        return ans.ask_zh if language == "zh" and ans.ask_zh else ans.ask
    q, f = ans.question, ans.facts
    item = store.get(q.sku) if q.sku else None
    if q.sku and item is None:
        return CANNOT_ZH if language == "zh" else CANNOT
    today = store.calendar.now().date()
    if language == "zh":
        return say_zh(ans, item, store, today)
    words = ans.period.words if ans.period is not None else ""
    if q.location and q.kind == "total":
        words = f"{words} in {q.location}" if words else f"in {q.location}"
    return _say_en(q, f, item, words, store, today)


def _say_en(q, f: dict, item, words: str, store, today: date) -> str:
    if q.kind == "total":
        return _total(q.what, item, f, words, today)
    if q.kind == "last":
        return _last(q.what, item, f["event"], today)
    if q.kind == "who":
        e = f["event"]
        if e is None:
            return f"Nothing has been recorded for {reply.name_and_size(item)} yet."
        return (f"The latest movement of {reply.name_and_size(item)} was logged by box {e['box']}"
                f"{' (this box)' if e['box'] == f['box'] else ''}, {_when(e['time'], today)}: {_event_words(e, item)}.")
    if q.kind == "entries":
        return _entries(f, words, store, today)
    if q.kind == "top":
        return _top(q.what, f["top"], words, store, q.listed)
    if q.kind == "change":
        c = f["change"]
        if c == 0:
            return f"{_cap(words)}: the stock of {reply.name_and_size(item)} did not change."
        return f"{_cap(words)}: {reply.name_and_size(item)} went {'up' if c > 0 else 'down'} by {reply.amount(item, abs(c))}."
    return _rate(item, f, words)


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _day(d: date, today: date) -> str:
    if d == today:
        return "today"
    if (today - d).days == 1:
        return "yesterday"
    if 0 < (today - d).days < 7:
        return WEEKDAYS[d.weekday()].capitalize()
    return f"{WEEKDAYS[d.weekday()].capitalize()} {d.day} {MONTHS[d.month - 1].capitalize()}"


def _when(iso: str, today: date) -> str:
    t = datetime.fromisoformat(iso)
    d = _day(t.date(), today)
    return f"{d if d in ('today', 'yesterday') else 'on ' + d} at {t:%H:%M}"


def _days_list(times: list[str], today: date) -> str:
    days = sorted({datetime.fromisoformat(t).date() for t in times})
    said = [_day(d, today) for d in days]
    return "on " + reply.join_and(said) if said[0] not in ("today", "yesterday") or len(said) > 1 else said[0]


def _total(what: str, item, f: dict, words: str, today: date) -> str:
    name = reply.name_and_size(item)
    if what == "counted":
        if not f["counts"]:
            return f"{_cap(name)} were not counted {words}."
        last = f["counts_at"][-1]
        diff = last["difference"]
        how = "as recorded" if diff == 0 else f"{abs(diff)} {'more' if diff > 0 else 'fewer'} than recorded"
        n = f["counts"]
        return (f"{_cap(words)}: {name} counted {'once' if n == 1 else f'{n} times'}; the last count, "
                f"{_when(last['time'], today)}, found {last['counted'] if last['counted'] is not None else '?'}: {how}.")
    if what == "moved":
        q = f["moved"]
        return f"No {name} moved {words}." if not q else f"{_cap(words)}: {reply.amount(item, q)} moved between places."
    q = f["used"] if what == "used" else f["received"]
    times = f["use_times"] if what == "used" else f["receive_times"]
    if not q:
        return f"No {name} {'used' if what == 'used' else 'came in'} {words}."
    also = ""
    if what == "used" and f["received"]:
        also = f", and {reply.amount(item, f['received'])} came in (net {'+' if f['net'] > 0 else ''}{f['net']})"
    if len(times) == 1:
        t = datetime.fromisoformat(times[0])
        at = (f"at {t:%H:%M}" if words in ("today", "yesterday", "this morning", "this afternoon")
              or (words.startswith("on ") and t.date() != today) else _when(times[0], today))
        verb = "you used" if what == "used" else "came in:"
        return f"{_cap(words)} {verb} {reply.amount(item, q)}, {at}{also}."
    did = "used" if what == "used" else "came in"
    if len({t[:10] for t in times}) == 1 and words.startswith(("today", "yesterday", "this ", "tonight", "on ")):
        days = f", at {reply.join_and(sorted({t[11:16] for t in times}))}" if len(times) <= 4 else ""
    else:
        days = f", {_days_list(times, today)}" if len({t[:10] for t in times}) <= 4 and len(times) < 50 else ""
    return f"{_cap(words)}: {reply.amount(item, q)} {did}{days}{also}."


def _last(what: str, item, e: dict | None, today: date) -> str:
    name = reply.name_and_size(item)
    if e is None:
        return f"There is no record of {name} {_DID.get(what, 'logged')} in the records."
    if what == "counted":
        diff = e["delta"]
        how = "as recorded" if diff == 0 else f"{abs(diff)} {'more' if diff > 0 else 'fewer'} than recorded"
        return f"{_cap(name)} last counted {_when(e['time'], today)}: {e['counted']}, {how}."
    if what == "any":
        return f"The last record of {name}: {_event_words(e, item)}, {_when(e['time'], today)}."
    return f"{_cap(name)} last {_DID[what]} {_when(e['time'], today)}: {reply.amount(item, e['quantity'])}."


def _event_words(e: dict, item) -> str:
    if e["kind"] == "count":
        d = e["delta"]
        how = "as recorded" if d == 0 else f"{abs(d)} {'more' if d > 0 else 'fewer'} than recorded"
        found = reply.amount(item, e["counted"]) if e["counted"] is not None else "?"
        return f"counted {found} ({how})"
    if e["kind"] == "transfer":
        if e["delta"] < 0:
            return f"{reply.amount(item, e['quantity'])} moved out of {e['location']}"
        came = f" from {e['from']}" if e.get("from") else ""
        return f"{reply.amount(item, e['quantity'])} moved{came} into {e['location']}"
    return f"{reply.amount(item, e['quantity'])} {'used' if e['delta'] < 0 else 'received'}"


def _entries(f: dict, words: str, store, today: date) -> str:
    rows = f["entries"]
    mine = " by this box" if f.get("box") else ""
    if not rows:
        return f"Nothing was logged{mine} {words}." if words else f"Nothing has been logged{mine} yet."
    said = []
    for e in rows:
        item = store.get(e["sku"])
        what = _event_words(e, item) if item is not None else f"{e['sku']} {e['delta']:+}"
        said.append(f"{what} {_when(e['time'], today)}")
    if words:
        total = f["total"]
        head = f"{_cap(words)}: {total} entr{'y' if total == 1 else 'ies'}{mine}"
        return f"{head}. {'The latest: ' if total > len(rows) else ''}{'; '.join(said)}."
    return f"The last {len(rows)} entr{'y' if len(rows) == 1 else 'ies'}{mine}: {'; '.join(said)}."


def _top(what: str, rows: list, words: str, store, listed: bool = False) -> str:
    did = "used" if what != "received" else "received"
    if not rows:
        return f"Nothing was {did} {words}."
    if listed:  # "what came in today": every item, largest first, never called "the most"
        said = [reply.amount(i, q) for i, q in ((store.get(s), q) for s, q in rows) if i is not None]
        more = f" and {len(said) - reply.MAX_LISTED} more" if len(said) > reply.MAX_LISTED else ""
        verb = "came in" if what == "received" else "used"
        return f"{_cap(words)}: {reply.join_and(said[:reply.MAX_LISTED])}{more} {verb}."
    by_unit: dict[str, list] = {}
    for sku, q in rows:
        item = store.get(sku)
        if item is not None:
            by_unit.setdefault(item.unit, []).append((item, q))
    groups = sorted(by_unit.items(), key=lambda g: -len(g[1]))
    if len(groups) == 1:
        listed = [reply.amount(i, q) for i, q in groups[0][1][:reply.MAX_LISTED]]
        return f"Most {did} {words}: {reply.join_and(listed)}."
    said = [f"in {unit or 'pieces'}, {reply.name_and_size(g[0][0])} ({g[0][1]})" for unit, g in groups[:reply.MAX_LISTED]]
    return f"Most {did} {words}, per unit: {'; '.join(said)}."


def _rate(item, f: dict, words: str) -> str:
    name = reply.name_and_size(item)
    if not f["used"]:
        return f"No {name} used {words}, so there is no estimate of when they run out."
    per_day = f["per_day"]
    rate = f"about {_num(per_day)} a day ({_num(f['per_week'])} a week)"
    if f["days_left"] is None:
        return f"{_cap(words)} you used {reply.amount(item, f['used'])}, {rate}; none are left now."
    return (f"{_cap(words)} you used {reply.amount(item, f['used'])}, {rate}. At that rate the "
            f"{f['quantity']} left last about {_num(f['days_left'])} days. That is an estimate.")


def _num(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".") if x >= 1 else f"{x:.2f}".rstrip("0").rstrip(".")


def logged_answer(intent, store, language: str = "en") -> str:
    """The answer to "did I already log the coolant?" from the latest :data:`MAX_LOG_QUESTION_RECORDS`
    records: the item's (or its candidates') last voice record not undone; never an import's count."""
    recs = store.records(MAX_LOG_QUESTION_RECORDS)
    undone = {r.undoes for r in recs if r.undoes is not None}
    skus = (intent.sku,) if intent.sku else intent.candidates
    mine = [r for r in recs if r.undoes is None and r.kind != "undo"
            and not r.turn_id.startswith(IMPORT_TURN_PREFIX) and (not skus or r.sku in skus)]
    last = mine[-1] if mine else None
    asked = store.get(skus[0]) if len(skus) == 1 else None
    if asked is not None:
        name = reply.zh_name(asked) if language == "zh" else reply.name_and_size(asked)
    else:
        name = intent.unknown or ("这个物品" if language == "zh" else "that")
    item = store.get(last.sku) if last is not None else None
    return reply.logged_answer(last, item, name, len(recs) < MAX_LOG_QUESTION_RECORDS, language,
                               undone=last is not None and last.id in undone)
