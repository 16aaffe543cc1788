"""``edge records summary`` and ``edge records list``: the records questions on the command line,
through the same query code as the voice (:func:`edge.stock.questions.answer`).

``summary --item SKU --since DATE --until DATE [--json]``: what was used, received, moved and
counted of one item over the local days ``--since`` to ``--until`` (both included; ``--until``
defaults to today), or over ``--period "last week"``. ``list [--item SKU] --since … [--mine]
[--limit N] [--json]``: the records that stand over those days, newest first.
"""
from __future__ import annotations

import json
from datetime import date

from edge.errors import UserError
from edge.stock.low import report
from edge.stock.periods import Period, Unresolved, between, typed
from edge.stock.questions import Question, answer

__all__ = ["register", "low_status"]


def low_status(store, limit: int = 5) -> tuple[dict, str]:
    """``edge status``'s low stock (:func:`edge.stock.low.report`, the voice's rule): ``({"total", "items":
    [{"sku", "quantity", "unit", "why"}]}, one line)``; closes ``store``."""
    with store:
        return report(store, limit)


def register(rsub, common, open_store, settings_of) -> None:
    """Add ``summary`` and ``list`` to the ``edge records`` subparsers ``rsub``. ``open_store(settings)``
    opens the configured store; ``settings_of(args)`` loads the settings."""
    for name, helptext in (("summary", "one item's use, receipts, moves and counts over a period"),
                           ("list", "the records over a period, newest first")):
        q = rsub.add_parser(name, help=helptext)
        common(q)
        q.add_argument("--item", required=name == "summary", help="the item's SKU")
        q.add_argument("--since", help="first local day, YYYY-MM-DD")
        q.add_argument("--until", help="last local day, YYYY-MM-DD (default: today)")
        q.add_argument("--period", help='the period in words instead: "today", "last week", "in November"')
        q.add_argument("--json", action="store_true", help="one JSON document")
        if name == "list":
            q.add_argument("--mine", action="store_true", help="this box's records only")
            q.add_argument("--limit", type=int, default=20, help="at most this many records (default 20)")
        q.set_defaults(func=lambda args, n=name: _run(args, n, open_store, settings_of))


def _day(text: str, flag: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise UserError(f"{flag} {text!r} is not a date; fix: YYYY-MM-DD, e.g. 2026-11-30") from None


def _period(args, store) -> Period:
    cal = store.calendar
    if args.period:
        got = typed(args.period, cal.clock(), cal.tz, cal.week_start)  # read as the voice and the console read it
        if isinstance(got, Unresolved):
            raise UserError(f"--period {args.period!r}: {got.ask}")
        return got
    if not args.since:
        raise UserError("say which days: --since YYYY-MM-DD [--until YYYY-MM-DD], or --period \"last week\"")
    until = _day(args.until, "--until") if args.until else cal.now().date()
    try:
        return between(_day(args.since, "--since"), until, cal.tz)
    except ValueError as e:
        raise UserError(str(e)) from None


def _run(args, name: str, open_store, settings_of) -> int:
    settings = settings_of(args)
    with open_store(settings) as store:
        if args.item and store.get(args.item) is None:
            raise UserError(f"--item {args.item!r}: no such SKU in the store {settings.store.path}; "
                            "fix: a SKU from the inventory (edge inventory import)")
        period = _period(args, store)
        if name == "summary":
            q = Question("total", "any", args.item, period_fixed=period)
        else:
            q = Question("entries", "any", args.item, mine=args.mine, limit=max(1, args.limit), period_fixed=period)
        got = answer(store, q)
        if args.json:
            print(json.dumps(got.as_json(), ensure_ascii=False, indent=1))
            return 0
        print(_text(got, store))
    return 0


def _text(got, store) -> str:
    f, p = got.facts, got.period
    head = f"{p.start.date().isoformat()} to {(p.end.date()).isoformat()} (end excluded, {p.start.tzinfo})"
    if got.question.kind == "total":
        item = store.get(got.question.sku)
        unit = item.unit
        return "\n".join([
            f"{item.sku} {item.item}, {head}",
            f"used      {f['used']} {unit} (logs: {len(f['use_times'])})",
            f"received  {f['received']} {unit} (logs: {len(f['receive_times'])})",
            f"net       {f['net']} {unit}",
            f"moved     {f['moved']} {unit} between places",
            f"counted   {f['counts']} counts, {f['counted']:+} {unit} against the records",
        ])
    lines = [f"{f['total']} records, {head}"]
    for e in f["entries"]:
        extra = f" counted {e['counted']}" if e["kind"] == "count" else ""
        lines.append(f"{e['time']}  {e['box']:<12} {e['kind']:<8} {e['sku']:<12} {e['delta']:+}{extra}"
                     f"{'  ' + e['location'] if e['location'] else ''}")
    return "\n".join(lines)
