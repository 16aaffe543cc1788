"""Periods as people say them ("today", "last week", "since Monday", "in November", 上周), resolved in
the box's local time zone with weeks starting on a set weekday.

:func:`resolve` turns the period words of a question into a :class:`Period` (local start, local end
exclusive, and the words a reply says it with), or an :class:`Unresolved` with the question to ask
back ("Which week?") — a period is never guessed. :func:`find_period` finds period words in a
sentence, for the understanding.

Hand-written on purpose: ``bench/period_libraries.py`` tried dateparser 1.2.2, parsedatetime 2.6
and recognizers-text-date-time 1.0.2a2 on 19 phrases (bench/results/period_libraries.json).
dateparser and parsedatetime return a point in time, never a period (0/19); recognizers-text
returns periods (12/19) but reads "in November", "on Tuesday" and "since Monday" as the coming
ones, "the week before last" as this week, needs ``emoji<1`` and is an alpha last released in
2019. The periods a records question uses are a short closed list; the rules below are that list.

"This week" on the first day of the week is that day so far; "on Tuesday" is the latest Tuesday
before today (said on a Tuesday it is asked back: today or a week ago?); "in November" is the latest
November that has begun; "the last 3 days" are today and the 2 days before.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone, tzinfo

__all__ = ["Calendar", "Period", "Unresolved", "resolve", "between", "buckets", "bucket_count", "typed", "FORMS", "FIRST_DAY", "LAST_DAY", "find_period", "WEEKDAYS", "MONTHS", "FUTURE", "local_zone", "utc_iso"]

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_ZH_NUM = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
           "十一": 11, "十二": 12}
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                 "ten": 10, "fourteen": 14, "thirty": 30, "a": 1, "a couple of": 2, "couple of": 2}


@dataclass(frozen=True)
class Period:
    """A stretch of local time: ``start`` ≤ t < ``end`` (timezone-aware, the box's zone).

    ``key``: what kind (``today``, ``yesterday``, ``this_week``, ``last_week``, ``day``, ``month``,
    ``since``, ``last_days``, ``morning``, ``afternoon``, ``this_month``, ``last_month``, ``year``).
    ``words``: how a reply says it in English ("today", "last week", "in November", "since Monday").
    """

    start: datetime
    end: datetime
    key: str
    words: str

    def utc_bounds(self) -> tuple[str, str]:
        """``(start, end)`` as the records' ISO 8601 UTC text (``2026-11-30T23:00:00.000+00:00``),
        for comparing with ``records.time``."""
        return utc_iso(self.start), utc_iso(self.end)

    def days(self) -> int:
        """Whole local days the period spans (at least 1)."""
        return max(1, (self.end.date() - self.start.date()).days)


@dataclass(frozen=True)
class Unresolved:
    """Period words that name no one period ("that week", "on Tuesday" said on a Tuesday):
    ``ask`` is the question to put back (English), ``ask_zh`` the Mandarin one."""

    ask: str
    ask_zh: str = "哪一段时间？"


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(frozen=True)
class Calendar:
    """Where and when the box is: ``zone`` (None = the system's), the first day of a week
    (``week_start`` 0 = Monday … 6 = Sunday) and ``clock`` (the current time, timezone-aware;
    injected in tests)."""

    zone: tzinfo | None = None
    week_start: int = 0
    clock: Callable[[], datetime] = field(default=_utc_now, compare=False)

    @classmethod
    def from_settings(cls, store_settings, clock: Callable[[], datetime] | None = None) -> Calendar:
        """From the ``store`` settings (``timezone``, ``week_start``). Raises ``ValueError`` for an unknown zone."""
        return cls(local_zone(store_settings.timezone), WEEKDAYS.index(store_settings.week_start), clock or _utc_now)

    @property
    def tz(self) -> tzinfo:
        return self.zone if self.zone is not None else local_zone(None)

    def now(self) -> datetime:
        """The current local time."""
        return self.clock().astimezone(self.tz)

    def resolve(self, words: str) -> Period | Unresolved:
        """:func:`resolve` of ``words`` now."""
        return resolve(words, self.clock(), self.tz, self.week_start)

    def local(self, iso: str) -> datetime:
        """A record's time (ISO 8601 UTC) in the local zone."""
        return datetime.fromisoformat(iso).astimezone(self.tz)


def utc_iso(moment: datetime) -> str:
    """``moment`` in UTC as a record's time is written (milliseconds, ``+00:00``)."""
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds")


def local_zone(name: str | None) -> tzinfo:
    """The zone called ``name`` (IANA, e.g. ``Europe/Berlin``), or the system's when None or empty.
    Raises ``ValueError`` naming the setting for an unknown zone."""
    if not name:
        return datetime.now().astimezone().tzinfo or timezone.utc
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"records.timezone: {name!r} is not a time zone; fix: an IANA name such as "
                         "Europe/Berlin, or leave it empty for the system's") from None


def _midnight(day: date, tz: tzinfo) -> datetime:
    return datetime.combine(day, time(0), tzinfo=tz)


def _day_span(first: date, last_excl: date, tz: tzinfo, key: str, words: str) -> Period:
    return Period(_midnight(first, tz), _midnight(last_excl, tz), key, words)


def _week_start(day: date, week_start: int) -> date:
    return day - timedelta(days=(day.weekday() - week_start) % 7)


def _month_start(day: date, back: int = 0) -> date:
    y, m = day.year, day.month - back
    while m < 1:
        y, m = y - 1, m + 12
    return date(y, m, 1)


def _next_month(day: date) -> date:
    return date(day.year + (day.month == 12), day.month % 12 + 1, 1)


def _day_words(day: date, today: date) -> str:
    if day == today:
        return "today"
    if day == today - timedelta(days=1):
        return "yesterday"
    if today - day < timedelta(days=7):
        return f"on {WEEKDAYS[day.weekday()].capitalize()}"
    return f"on {WEEKDAYS[day.weekday()].capitalize()} {day.day} {MONTHS[day.month - 1].capitalize()}"


_EN = re.compile(
    r"\b(?P<p>(?:yesterday|today|the day before yesterday) (?:morning|afternoon|evening)|(?:last|yesterday) night|"
    r"on (?:" + "|".join(WEEKDAYS) + r") (?:morning|afternoon|evening)|"
    r"today|tonight|this morning|this afternoon|this evening|yesterday|the day before yesterday|"
    r"(?:this|last|past|previous) (?:week|month|year)|the (?:week|month) before last|so far this (?:week|month|year)|"
    r"(?:since|on|last) (?:" + "|".join(WEEKDAYS) + r")|"
    r"(?:in|during|for|since|on) (?:(?:the )?\d{1,2}(?:st|nd|rd|th)? (?:of )?)?(?:" + "|".join(MONTHS) + r")"
    r"(?: (?:the )?\d{1,2}(?:st|nd|rd|th)?)?(?: \d{4})?|"
    r"(?:in|over|during|for) the (?:last|past) (?:\d+|" + "|".join(_NUMBER_WORDS) + r") (?:days?|weeks?)|"
    r"(?:in|over|during|for) the (?:last|past) (?:day|week|month)|"
    r"(?:that|the other|which) (?:day|week|month)|(?<!most )recently|lately|the other day|a while ago)\b")
_ZH_PART = r"(?:今天|昨天|前天)?(?:早上|上午|中午|下午|晚上)|今早|今晚"
_ZH = re.compile(r"(?P<p>" + _ZH_PART + r"|今天|今日|昨天|前天|本周|这周|这个星期|这礼拜|这星期|上周|上个星期|上星期|上礼拜|"
                 r"本月|这个月|上个月|上月|今年|去年|(?:自从|从)?(?:周|星期|礼拜)[一二三四五六日天](?:以来|以后|之后|开始|起)?|"
                 r"(?:1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])月(?:份)?(?:(?:[12]\d|3[01]|0?[1-9]|[一二三]?十[一二三四五六七八九]?|"
                 r"[一二三四五六七八九])[号日](?!料箱|箱|抽屉|货架|架|柜))?|(?:过去|最近)(?:[一二两三四五六七八九十\d]+)(?:天|周|个星期))")
#: A part of a day in Mandarin: its local hours [start, end) (上午 as "this morning": midnight to noon).
_ZH_PART_HOURS = {"早上": (0, 12), "上午": (0, 12), "今早": (0, 12), "中午": (11, 14), "下午": (12, 18), "晚上": (18, 24),
                  "今晚": (18, 24)}
#: Words of a time still to come ("next week", "tomorrow", 明天, 下周): the records cannot answer them.
FUTURE = re.compile(r"\b(?:tomorrow|next (?:week|month|year|few days|" + "|".join(WEEKDAYS) + r")|"
                    r"(?:in|over|during|for) the (?:next|coming) (?:\d+|[a-z]+ )?(?:days?|weeks?|months?)|"
                    r"this coming (?:week|month)|(?:will|shall|are going to|re going to|gonna) (?:we|i|they)? ?"
                    r"(?:need|use|go through|get|receive))\b|明天|后天|下周|下个?星期|下礼拜|下个?月|明年|将来|未来|会用|会进|要用多少|需要多少")


def find_period(text: str) -> str | None:
    """The period words in ``text`` (lowercase English in normal form, or Mandarin), or None."""
    m = _EN.search(text) or _ZH.search(text)
    return m.group("p") if m else None


def resolve(words: str, now: datetime, tz: tzinfo, week_start: int = 0) -> Period | Unresolved:
    """The period ``words`` (from :func:`find_period`) name at ``now`` (aware) in zone ``tz``, weeks
    starting on ``week_start`` (0 = Monday … 6 = Sunday). Raises nothing."""
    now = now.astimezone(tz)
    today = now.date()
    w = words.strip().lower()
    if any("\u4e00" <= c <= "\u9fff" for c in w):
        return _resolve_zh(w, now, tz, week_start)
    tomorrow = today + timedelta(days=1)
    fixed = {
        "today": lambda: _day_span(today, tomorrow, tz, "today", "today"),
        "tonight": lambda: Period(datetime.combine(today, time(18), tzinfo=tz), _midnight(tomorrow, tz), "evening", "tonight"),
        "this morning": lambda: Period(_midnight(today, tz), datetime.combine(today, time(12), tzinfo=tz), "morning",
                                       "this morning"),
        "this afternoon": lambda: Period(datetime.combine(today, time(12), tzinfo=tz),
                                         datetime.combine(today, time(18), tzinfo=tz), "afternoon", "this afternoon"),
        "yesterday": lambda: _day_span(today - timedelta(days=1), today, tz, "yesterday", "yesterday"),
        "the day before yesterday": lambda: _day_span(today - timedelta(days=2), today - timedelta(days=1), tz, "day",
                                                      "the day before yesterday"),
    }
    if w in fixed:
        return fixed[w]()
    m = re.fullmatch(r"(yesterday|today|the day before yesterday|last|this) (morning|afternoon|evening|night)", w)
    m2 = re.fullmatch(r"on (" + "|".join(WEEKDAYS) + r") (morning|afternoon|evening)", w)
    if m2:  # "on Saturday morning": that day's hours only
        day = _weekday("on", WEEKDAYS.index(m2.group(1)), today, tz)
        if isinstance(day, Unresolved):
            return day
        a, b = {"morning": (0, 12), "afternoon": (12, 18), "evening": (18, 24)}[m2.group(2)]
        d = day.start.date()
        end = _midnight(d + timedelta(days=1), tz) if b == 24 else datetime.combine(d, time(b), tzinfo=tz)
        return Period(datetime.combine(d, time(a), tzinfo=tz), end, "part", f"{day.words} {m2.group(2)}")
    if m:  # a part of a day: the hours 今天上午 / 昨天下午 read (morning to noon, 12–18, 18–24)
        back = {"yesterday": 1, "last": 1, "the day before yesterday": 2}.get(m.group(1), 0)
        zh = {"morning": "上午", "afternoon": "下午", "evening": "晚上", "night": "晚上"}[m.group(2)]
        return _resolve_zh(("今天", "昨天", "前天")[back] + zh, now, tz, week_start)
    got = _relative(w, today, tz, week_start)
    if got is not None:
        return got
    m = re.fullmatch(r"(since|on|last) (" + "|".join(WEEKDAYS) + ")", w)
    if m:
        return _weekday(m.group(1), WEEKDAYS.index(m.group(2)), today, tz)
    got = _month_or_date(w, today, tz)
    if got is not None:
        return got
    if "week" in w:
        return Unresolved("Which week? Say this week, last week or the week before last.", "哪一周？请说这周或上周。")
    if "month" in w:
        return Unresolved("Which month? Say this month, last month or the month's name.", "哪个月？请说这个月、上个月或月份。")
    return Unresolved("Over which days? Say today, yesterday, this week or last week.", "哪几天？请说今天、昨天、这周或上周。")


def _relative(w: str, today: date, tz: tzinfo, week_start: int) -> Period | None:
    """this/last week, month, year; the week or month before last; the last N days or weeks."""
    m = re.fullmatch(r"(?:(this|last|past|previous)|so far this) (week|month|year)", w)
    if m:
        last = m.group(1) in ("last", "past", "previous")
        unit = m.group(2)
        if unit == "week":
            first = _week_start(today, week_start) - timedelta(days=7 if last else 0)
            return _day_span(first, first + timedelta(days=7), tz, "last_week" if last else "this_week",
                             "last week" if last else "this week")
        if unit == "month":
            first = _month_start(today, 1 if last else 0)
            return _day_span(first, _next_month(first), tz, "last_month" if last else "this_month",
                             "last month" if last else "this month")
        year = today.year - last
        return _day_span(date(year, 1, 1), date(year + 1, 1, 1), tz, "year", "last year" if last else "this year")
    if w == "the week before last":
        first = _week_start(today, week_start) - timedelta(days=14)
        return _day_span(first, first + timedelta(days=7), tz, "week", "the week before last")
    if w == "the month before last":
        first = _month_start(today, 2)
        return _day_span(first, _next_month(first), tz, "month", f"in {MONTHS[first.month - 1].capitalize()}")
    m = re.fullmatch(r"(?:in|over|during|for) the (?:last|past) (?:(\d+|[a-z ]+?) )?(days?|weeks?|month)", w)
    if m:
        n = 1 if not m.group(1) else (int(m.group(1)) if m.group(1).isdigit() else _NUMBER_WORDS.get(m.group(1)))
        if n is None or n < 1 or n > 366:
            return None
        days = n * (7 if m.group(2).startswith("week") else 30 if m.group(2) == "month" else 1)
        words = f"over the last {n} {m.group(2)}" if n > 1 else f"over the last {m.group(2).rstrip('s')}"
        return _day_span(today - timedelta(days=days - 1), today + timedelta(days=1), tz, "last_days", words)
    return None


def _weekday(how: str, wd: int, today: date, tz: tzinfo) -> Period | Unresolved:
    back = (today.weekday() - wd) % 7
    if how == "since":
        first = today - timedelta(days=back)
        name = WEEKDAYS[wd].capitalize()
        return _day_span(first, today + timedelta(days=1), tz, "since", f"since {name}")
    if back == 0 and how == "last":  # "last Monday" said on a Monday: a week ago
        back = 7
    if back == 0:  # "on Tuesday" said on a Tuesday: today or a week ago
        return Unresolved(f"Today or last {WEEKDAYS[wd].capitalize()}?", "今天还是上周的那一天？")
    day = today - timedelta(days=back)
    return _day_span(day, day + timedelta(days=1), tz, "day", _day_words(day, today))


def _month_or_date(w: str, today: date, tz: tzinfo) -> Period | None:
    m = re.fullmatch(r"(in|during|for|since|on) (?:(?:the )?(\d{1,2})(?:st|nd|rd|th)? (?:of )?)?(" + "|".join(MONTHS) +
                     r")(?: (?:the )?(\d{1,2})(?:st|nd|rd|th)?)?(?: (\d{4}))?", w)
    if not m:
        return None
    how, day_a, month_name, day_b, year_s = m.groups()
    month = MONTHS.index(month_name) + 1
    day_n = int(day_a or day_b) if (day_a or day_b) else None
    year = int(year_s) if year_s else (today.year if (month, day_n or 1) <= (today.month, today.day) else today.year - 1)
    try:
        first = date(year, month, day_n or 1)
    except ValueError:
        return None
    if first > today:
        return None
    if how == "since":
        name = f"{first.day} {month_name.capitalize()}" if day_n else month_name.capitalize()
        return _day_span(first, today + timedelta(days=1), tz, "since", f"since {name}")
    if day_n is None:
        return _day_span(first, _next_month(first), tz, "month", f"in {month_name.capitalize()}"
                         + (f" {year}" if year != today.year else ""))
    return _day_span(first, first + timedelta(days=1), tz, "day", _day_words(first, today))


def _resolve_zh(w: str, now: datetime, tz: tzinfo, week_start: int) -> Period | Unresolved:
    """The Mandarin period words: 今天, 昨天, 前天, 今早, 这周/本周, 上周, 这个月, 上个月, 今年, 去年,
    (自从)周一(以来), 十一月, 过去三天."""
    table = {"今天": "today", "今日": "today", "昨天": "yesterday", "前天": "the day before yesterday",
             "本周": "this week", "这周": "this week", "这个星期": "this week", "这礼拜": "this week",
             "这星期": "this week", "上周": "last week", "上个星期": "last week", "上星期": "last week",
             "上礼拜": "last week", "本月": "this month", "这个月": "this month", "上个月": "last month",
             "上月": "last month", "今年": "this year", "去年": "last year"}
    if w in table:
        return resolve(table[w], now, tz, week_start)
    m = re.fullmatch(r"(自从|从)?(?:周|星期|礼拜)([一二三四五六日天])(以来|以后|之后|开始|起)?", w)
    if m:
        how = "since" if (m.group(1) or m.group(3)) else "on"
        return resolve(f"{how} {WEEKDAYS[_ZH_WEEKDAYS[m.group(2)]]}", now, tz, week_start)
    m = re.fullmatch(r"(今天|昨天|前天)?(早上|上午|中午|下午|晚上|今早|今晚)", w)
    if m:
        back = {"昨天": 1, "前天": 2}.get(m.group(1) or "", 0)
        day = now.date() - timedelta(days=back)
        a, b = _ZH_PART_HOURS[m.group(2)]
        part = {(0, 12): "morning", (12, 18): "afternoon", (18, 24): "evening"}.get((a, b), "midday")
        key = part if not back else "part"
        words = (f"{('yesterday', 'the day before yesterday')[back - 1]} {part}" if back else
                 "tonight" if part == "evening" else f"this {part}" if part != "midday" else "at midday today")
        end = _midnight(day + timedelta(days=1), tz) if b == 24 else datetime.combine(day, time(b), tzinfo=tz)
        return Period(datetime.combine(day, time(a), tzinfo=tz), end, key, words)
    m = re.fullmatch(r"(\d{1,2}|十[一二]?|[一二三四五六七八九])月(?:份)?(?:(\d{1,2}|[一二三四五六七八九十]+)[号日])?", w)
    if m:
        month = _zh_number(m.group(1))
        day_n = _zh_number(m.group(2)) if m.group(2) else None
        if not month or month > 12 or (m.group(2) and not day_n):
            return Unresolved("Which month?", "哪个月？")
        return (resolve(f"on {MONTHS[month - 1]} {day_n}", now, tz, week_start) if day_n
                else resolve(f"in {MONTHS[month - 1]}", now, tz, week_start))
    m = re.fullmatch(r"(?:过去|最近)([一二两三四五六七八九十\d]+)(天|周|个星期)", w)
    if m:
        n = int(m.group(1)) if m.group(1).isdigit() else _ZH_NUM.get(m.group(1))
        if n:
            return resolve(f"over the last {n} {'days' if m.group(2) == '天' else 'weeks'}", now, tz, week_start)
    return Unresolved("Which period?", "哪一段时间？")


def _zh_number(text: str) -> int | None:
    """1 to 31 written in digits or in Mandarin (五, 十二, 二十五, 三十一), or None."""
    if text.isdigit():
        return int(text)
    if text in _ZH_NUM:
        return _ZH_NUM[text]
    m = re.fullmatch(r"([一二三])?十([一二三四五六七八九])?", text)
    if not m:
        return None
    return (_ZH_NUM[m.group(1)] if m.group(1) else 1) * 10 + (_ZH_NUM[m.group(2)] if m.group(2) else 0)


#: The days a records period may name: the records' times are ISO 8601 text in this range
#: (a date outside it is refused, never clipped).
FIRST_DAY = date(1970, 1, 1)
LAST_DAY = date(2199, 12, 31)


#: The period forms a typed field (the console) understands, as said to the user when one is not read.
FORMS = ("today", "yesterday", "this morning", "this week", "last week", "the week before last", "this month",
         "last month", "November", "5 November", "on Tuesday", "since Monday", "the last 3 days", "the last 2 weeks",
         "this year", "今天", "上周", "11月", "12月5号")


def typed(text: str, now: datetime, tz: tzinfo, week_start: int = 0) -> Period | Unresolved:
    """The period a typed field names, read as the voice reads it (:func:`find_period`), also when
    said bare ("November", "last 3 days", "Tuesday", "5 Nov" is not: month names in full). An
    :class:`Unresolved` listing :data:`FORMS` when no period is found. Raises nothing."""
    t = " ".join((text or "").strip().lower().replace(",", " ").split())
    for said in (t, f"in {t}", f"on {t}", f"over the {t}", f"in the {t}", f"the {t}"):
        words = find_period(said)
        if words is not None and (words == said or len(words) >= len(said) - 1):
            return resolve(words, now, tz, week_start)
    return Unresolved(f"The period {text!r} is not one I can read; fix: one of " + ", ".join(FORMS) +
                      ", or the from/to dates.", "哪一段时间？")


def between(since: date, until: date, tz: tzinfo, names: tuple[str, str] = ("--since", "--until")) -> Period:
    """The local days ``since`` to ``until``, both included (``edge records summary --since … --until …``);
    ``names``: how the two fields are called in a message. Raises ``ValueError`` naming the field when a
    day is outside :data:`FIRST_DAY` … :data:`LAST_DAY` or ``until`` is before ``since``."""
    for name, day in zip(names, (since, until), strict=True):
        if not FIRST_DAY <= day <= LAST_DAY:
            raise ValueError(f"{name} {day.isoformat()} is outside the dates the records can hold; fix: a date from "
                             f"{FIRST_DAY.isoformat()} to {LAST_DAY.isoformat()}")
    if until < since:
        raise ValueError(f"{names[1]} {until.isoformat()} is before {names[0]} {since.isoformat()}; fix: swap them")
    words = (f"on {since.isoformat()}" if since == until else f"from {since.isoformat()} to {until.isoformat()}")
    return _day_span(since, until + timedelta(days=1), tz, "between", words)


def bucket_count(period: Period, by: str = "day", week_start: int = 0) -> int:
    """How many buckets :func:`buckets` cuts ``period`` into, counted without building them."""
    if by == "day":
        return (period.end - timedelta(microseconds=1)).date().toordinal() - period.start.date().toordinal() + 1
    first = _week_start(period.start.date(), week_start)
    last = _week_start((period.end - timedelta(microseconds=1)).date(), week_start)
    return (last - first).days // 7 + 1


def buckets(period: Period, by: str = "day", week_start: int = 0) -> list[Period]:
    """``period`` cut at local midnights into days (``by="day"``) or at the start of each week
    (``"week"``, weeks starting on ``week_start``), the first and last clipped to the period; each
    bucket's ``words`` is its first local day (``YYYY-MM-DD``). Raises ``ValueError`` for another ``by``."""
    if by not in ("day", "week"):
        raise ValueError(f"by: {by!r} is not day or week")
    tz = period.start.tzinfo
    day = period.start.date() if by == "day" else _week_start(period.start.date(), week_start)
    step = timedelta(days=1 if by == "day" else 7)
    out: list[Period] = []
    while _midnight(day, tz) < period.end:
        a, b = max(period.start, _midnight(day, tz)), min(period.end, _midnight(day + step, tz))
        if a < b:
            out.append(Period(a, b, by, a.date().isoformat()))
        day += step
    return out
