"""Compare time-expression libraries on the periods a records question says (English and Mandarin).

Run: ``python bench/period_libraries.py`` with ``dateparser``, ``parsedatetime`` and
``recognizers-text-date-time`` importable (e.g. ``pip install --target /tmp/datecmp …`` and
``PYTHONPATH=/tmp/datecmp``). For each phrase, each library's output is printed and judged against
the period a person means (start and end of the local period, weeks from Monday), with "now" =
Friday 4 December 2026 10:00 Europe/Berlin. Writes bench/results/period_libraries.json.
"""
from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 12, 4, 10, 0, tzinfo=TZ)
# phrase → (start, end) of the period meant (local dates, end exclusive)
PHRASES = {
    "today": ("2026-12-04", "2026-12-05"),
    "yesterday": ("2026-12-03", "2026-12-04"),
    "this week": ("2026-11-30", "2026-12-07"),
    "last week": ("2026-11-23", "2026-11-30"),
    "this month": ("2026-12-01", "2027-01-01"),
    "last month": ("2026-11-01", "2026-12-01"),
    "in November": ("2026-11-01", "2026-12-01"),
    "since Monday": ("2026-11-30", "2026-12-05"),
    "over the last 3 days": ("2026-12-02", "2026-12-05"),
    "on Tuesday": ("2026-12-01", "2026-12-02"),
    "this morning": ("2026-12-04", "2026-12-04"),
    "the week before last": ("2026-11-16", "2026-11-23"),
    "on 30 November": ("2026-11-30", "2026-12-01"),
    "今天": ("2026-12-04", "2026-12-05"),
    "昨天": ("2026-12-03", "2026-12-04"),
    "这周": ("2026-11-30", "2026-12-07"),
    "上周": ("2026-11-23", "2026-11-30"),
    "上个月": ("2026-11-01", "2026-12-01"),
    "十一月": ("2026-11-01", "2026-12-01"),
}


def try_dateparser(phrase: str) -> str:
    import dateparser
    got = dateparser.parse(phrase, settings={"RELATIVE_BASE": NOW.replace(tzinfo=None), "TIMEZONE": "Europe/Berlin",
                                             "PREFER_DATES_FROM": "past"})
    return "none" if got is None else f"point {got.isoformat()}"


def try_parsedatetime(phrase: str) -> str:
    import parsedatetime
    cal = parsedatetime.Calendar(version=parsedatetime.VERSION_CONTEXT_STYLE)
    got, ctx = cal.parseDT(phrase, sourceTime=NOW.replace(tzinfo=None))
    return "none" if not ctx.hasDateOrTime else f"point {got.isoformat()}"


def try_recognizers(phrase: str) -> str:
    from recognizers_date_time import recognize_datetime
    from recognizers_text import Culture
    culture = Culture.Chinese if any("\u4e00" <= c <= "\u9fff" for c in phrase) else Culture.English
    try:
        res = recognize_datetime(phrase, culture, reference=NOW.replace(tzinfo=None))
    except Exception as e:  # the library raises on some inputs
        return f"error {type(e).__name__}"
    if not res:
        return "none"
    values = res[0].resolution.get("values", [])
    if not values:
        return "none"
    v = values[-1]
    if "start" in v:
        return f"range {v.get('start')}..{v.get('end', '(open)')} ({v.get('type')})"
    return f"{v.get('type')} {v.get('value')}"


def judge(out: str, want: tuple[str, str]) -> bool:
    """Right only when the library gives the whole period: start and end dates as meant (a date
    alone stands for its whole day)."""
    from datetime import date, timedelta
    day_after = (date.fromisoformat(want[0]) + timedelta(days=1)).isoformat()
    if out.startswith("date ") and want[1] == day_after:  # a whole day said as its date
        return out == f"date {want[0]}"
    return out.startswith("range") and want[0] in out and (want[1] in out or want[0] == want[1])


def main() -> int:
    rows, score = [], {}
    for name, fn in (("dateparser", try_dateparser), ("parsedatetime", try_parsedatetime),
                     ("recognizers-text-date-time", try_recognizers)):
        right = 0
        for phrase, want in PHRASES.items():
            try:
                out = fn(phrase)
            except Exception as e:
                out = f"error {type(e).__name__}: {e}"[:120]
            ok = judge(out, want)
            right += ok
            rows.append({"library": name, "phrase": phrase, "want": list(want), "got": out, "right": ok})
            print(f"{name:28} {phrase:24} {'OK ' if ok else '-- '} {out}")
        score[name] = {"right": right, "of": len(PHRASES)}
    out = Path(__file__).parent / "results" / "period_libraries.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"now": NOW.isoformat(), "score": score, "rows": rows}, ensure_ascii=False, indent=1))
    print(json.dumps(score))
    return 0


if __name__ == "__main__":
    sys.exit(main())
