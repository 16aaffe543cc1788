"""The Mandarin replies to records questions (:mod:`edge.stages.records_reply` says the English ones):
the period ("今天", "这周", "十一月", "周一以来"), the item with its measure word
(:func:`edge.stages.reply.zh_amount`), a count said as a count, an estimate said as one."""
from __future__ import annotations

from datetime import date, datetime

from edge.stages import reply
from edge.stock.periods import Period

__all__ = ["say_zh", "period_zh"]

_WD = "一二三四五六日"
_FIXED = {"today": "今天", "yesterday": "昨天", "this_week": "这周", "last_week": "上周", "this_month": "这个月",
          "last_month": "上个月", "morning": "今天上午", "afternoon": "今天下午", "evening": "今晚"}


def period_zh(p: Period | None, today: date | None = None) -> str:
    """The period in Mandarin words ("今天", "上周", "11月", "周一以来", "过去3天"); ``today``: the box's
    local date, for a part of another day ("昨天下午", "12月5日（周六）上午")."""
    if p is None:
        return ""
    if p.key in _FIXED:
        return _FIXED[p.key]
    s, e = p.start.date(), p.end.date()
    if p.key in ("part", "midday"):
        part = {0: "上午", 11: "中午", 12: "下午", 18: "晚上"}.get(p.start.hour, "")
        back = 0 if p.key == "midday" else (today - s).days if today is not None else \
            (1 if p.words.startswith("yesterday") else 2)
        day = {0: "今天", 1: "昨天", 2: "前天"}.get(back, f"{s.month}月{s.day}日（周{_WD[s.weekday()]}）")
        return day + part
    if p.key == "month":
        return f"{s.month}月" + (f"（{s.year}年）" if str(s.year) in p.words else "")
    if p.key == "since":
        return (f"周{_WD[s.weekday()]}以来" if p.words.split(" ")[1].lower() in
                ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
                else f"{s.month}月{s.day}日以来")
    if p.key == "last_days":
        return f"过去{(e - s).days}天"
    if p.key == "day":
        return f"{s.month}月{s.day}日（周{_WD[s.weekday()]}）"
    if p.key == "week":
        return "上上周"
    if p.key == "year":
        return f"{s.year}年"
    return f"{s.isoformat()}至{e.isoformat()}"


def _when(iso: str, today: date) -> str:
    t = datetime.fromisoformat(iso)
    d = t.date()
    day = "今天" if d == today else "昨天" if (today - d).days == 1 else f"{d.month}月{d.day}日（周{_WD[d.weekday()]}）"
    return f"{day}{t:%H:%M}"


def _days(times: list[str], today: date) -> str:
    days = sorted({datetime.fromisoformat(t).date() for t in times})
    return "、".join("今天" if d == today else "昨天" if (today - d).days == 1 else f"周{_WD[d.weekday()]}"
                    if 0 < (today - d).days < 7 else f"{d.month}月{d.day}日" for d in days)


def _diff(d) -> str:
    return "和记录一致" if d == 0 else f"比记录{'多' if d > 0 else '少'}{abs(d)}"


def say_zh(ans, item, store, today: date) -> str:
    """The Mandarin reply to ``ans`` (:class:`edge.stock.questions.Answer`) about ``item`` (or None)."""
    q, f = ans.question, ans.facts
    per = period_zh(ans.period, today)
    if q.location and q.kind == "total":
        per = f"{per}在{reply.zh_place(q.location)}"
    name = reply.zh_name(item) if item is not None else ""
    if q.kind == "total":
        return _total(q, f, item, name, per, today, ans.period is not None and ans.period.days() == 1)
    if q.kind == "last":
        return _last(q, f, item, name, today)
    return _other(q, f, item, name, per, store, today)


def _total(q, f: dict, item, name: str, per: str, today: date, one_day: bool = False) -> str:
    if q.what == "counted":
        if not f["counts"]:
            return f"{per}没有盘点{name}。"
        last = f["counts_at"][-1]
        return f"{per}盘点了{name}{f['counts']}次；最后一次在{_when(last['time'], today)}，数到{last['counted']}，{_diff(last['difference'])}。"
    if q.what == "moved":
        return f"{per}没有移动{name}。" if not f["moved"] else f"{per}在货位之间移动了{reply.zh_amount(item, f['moved'])}。"
    used = q.what == "used"
    n = f["used"] if used else f["received"]
    times = f["use_times"] if used else f["receive_times"]
    if not n:
        return f"{per}没有{'用' if used else '进'}{name}。"
    if one_day:  # one day: said at its times ("在09:00、14:00"), the day is in the period already
        days = f"，在{'、'.join(sorted({t[11:16] for t in times}))}" if len(times) <= 4 else ""
    else:
        days = f"，在{_days(times, today)}" if len({t[:10] for t in times}) <= 4 and len(times) < 50 else ""
    return f"{per}{'用了' if used else '进了'}{reply.zh_amount(item, n)}{days}。"


def _last(q, f: dict, item, name: str, today: date) -> str:
    e = f["event"]
    verb = {"used": "使用", "received": "到货", "counted": "盘点", "moved": "移动"}.get(q.what, "记录")
    if e is None:
        return f"记录里没有{name}的{verb}。"
    if q.what == "counted":
        return f"{name}上次盘点是{_when(e['time'], today)}：数到{e['counted']}，{_diff(e['delta'])}。"
    return f"{name}上次{verb}是{_when(e['time'], today)}：{reply.zh_amount(item, e['quantity'])}。"


def _other(q, f: dict, item, name: str, per: str, store, today: date) -> str:
    if q.kind == "who":
        e = f["event"]
        if e is None:
            return f"还没有{name}的记录。"
        here = "（本机）" if e["box"] == f["box"] else ""
        return f"{name}最近一次变动由终端{e['box']}{here}记录，{_when(e['time'], today)}。"
    if q.kind == "entries":
        rows = f["entries"]
        if not rows:
            return f"{per}没有记录。" if per else "还没有记录。"
        said = []
        for e in rows:
            it = store.get(e["sku"])
            if e["kind"] == "transfer":  # one entry: from where into where
                src = f"从{reply.zh_place(e['from'])}" if e.get("from") else ""
                said.append(f"{_when(e['time'], today)}{src}把{reply.zh_amount(it, e['quantity']) if it else e['sku']}"
                            f"移到{reply.zh_place(e['location'])}" if e["delta"] > 0 else
                            f"{_when(e['time'], today)}从{reply.zh_place(e['location'])}移出"
                            f"{reply.zh_amount(it, e['quantity']) if it else e['sku']}")
                continue
            what = ("盘点" if e["kind"] == "count" else "移动" if e["kind"] == "transfer" else
                    "用了" if e["delta"] < 0 else "进了")
            if e["kind"] == "count":  # a count is what was found, with its difference; never the difference alone
                found = reply.zh_amount(it, e["counted"]) if it and e["counted"] is not None else e["sku"]
                said.append(f"{_when(e['time'], today)}盘点数到{found}（{_diff(e['delta'])}）")
                continue
            said.append(f"{_when(e['time'], today)}{what}{reply.zh_amount(it, e['quantity']) if it else e['sku']}")
        head = f"{per}共有{f['total']}条记录。" if per else ""
        return f"{head}最近的：{'；'.join(said)}。"
    if q.kind == "top":
        rows = [(store.get(s), n) for s, n in f["top"][:reply.MAX_LISTED]]
        rows = [(i, n) for i, n in rows if i is not None]
        if not rows:
            return f"{per}没有{'用' if q.what != 'received' else '进'}任何物品。"
        return f"{per}{'用' if q.what != 'received' else '进'}得最多的是：" + "、".join(reply.zh_amount(i, n) for i, n in rows) + "。"
    if q.kind == "change":
        c = f["change"]
        if c == 0:
            return f"{per}{name}的库存没有变化。"
        return f"{per}{name}{'增加' if c > 0 else '减少'}了{reply.zh_amount(item, abs(c))}。"
    if not f["used"]:
        return f"{per}没有用{name}，无法估计什么时候用完。"
    rate = f"平均每天约{f['per_day']:g}，每周约{f['per_week']:g}"
    if f["days_left"] is None:
        return f"{per}用了{reply.zh_amount(item, f['used'])}，{rate}；现在已经没有了。"
    return (f"{per}用了{reply.zh_amount(item, f['used'])}，{rate}。按这个速度，剩下的{reply.zh_amount(item, f['quantity'])}大约还能用"
            f"{f['days_left']:g}天。这是估计。")
