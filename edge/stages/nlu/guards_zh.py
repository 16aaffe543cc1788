"""The Mandarin guards against a wrong record (``language: zh``), on the transcript as heard.

The same refusals as the English guards (:mod:`edge.stages.nlu.guards`), for how they are said in
Mandarin:

* **range** — ``三四个`` / ``两三个`` / ``一两个`` / ``三五个`` (two numerals side by side before a
  measure word: "three or four", "one or two", "three to five", never 34, 12 or 35), ``三到四个``,
  ``三个或四个``;
* **bound** — a count said as a bound or an approximation (``将近三个``, ``不到三个``, ``三个以上``,
  ``至少三个``, ``最多三个``, ``超过三个``, ``大概三个``, ``三个左右``): no number is taken, one is asked
  for (as the English guards ask for "about 3", "at least 3", "more than 3");
* **repeated** — ``三三个``: a numeral said twice is asked as a range is (never 33);
* **correction** — ``三个，不对，四个`` → 4 (the later number replaces the earlier one); a marker left
  unresolved (``说错了`` without a number after it) is refused;
* **fraction** — ``两个半`` → 2.5, ``半个`` → 0.5, ``二点五`` → 2.5, ``一点五个`` → 1.5 (the item's unit
  decides); a time of day (``三点二十用了``) is no decimal;
* **negated** — ``没有用``, ``没用``, ``未收到`` / ``并未`` / ``尚未``, ``别记``, ``不要登记``, ``别把…移到…``; **already_done** — ``已经登记过了``;
* **negative** — ``负三个``;
* **future** — ``明天会收到五十个螺栓``, ``下周``, ``将要``, ``即将``, ``订了``; **hypothetical** —
  ``假如用了五个垫圈``, ``如果``, ``要是``; **hearsay** — ``听说夜班用了四罐``, ``据说``, ``他说``, ``老王说``, ``听老王说``
  (read back, written after a yes); the cue words are dropped so the command itself is parsed;
* **parts** — ``用了三个钻头和两个保险丝``: one command per part, the verb of the first repeated.

:func:`guard_zh` returns the text to parse (the guard words removed, the command said plainly) and
the facts the parser's result must carry. A leaf: nothing here looks at the inventory.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from edge.stages.nlu.numbers_zh import normalize_numbers_zh

_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_MEASURE = "个只支把盒箱包卷罐桶张件根条片套对双副瓶袋台块颗粒枚捆托米升斤克十百千"
_NEIGHBOURS = re.compile(rf"(?<![零〇一二两三四五六七八九十百千万\d])([一二两三四五六七八九])([一二两三四五六七八九])(?=[{_MEASURE}])")
_REPEATED = re.compile(rf"(?<![零〇一二两三四五六七八九十百千万\d])([一二两三四五六七八九])\1+(?=[{_MEASURE}])")
#: a bound or an approximation of the count: before it (the bounding words may come before the verb:
#: 至少用了三个, 将近收到十个), or after it (三个以上, 三个保险丝左右)
_STOP = r"[^\d，,。；;！!？?]"
_AFTER = ("以上", "以下", "以内", "之内", "开外", "出头", "上下", "左右", "朝上", "往上", "不到", "不止", "不够", "不足",
          "打底")
BOUND = re.compile(
    rf"(?:将近|接近|几乎|至少|最少|起码|最多|顶多|至多|撑死|充其量|少说|不止|不到|不足|不够|不下|不超过|不少于|不低于|不多于|少于|多于|"
    rf"低于|高于|大于|小于|超过)"
    rf"(?={_STOP}{{0,4}}?\d)|(?:大概|大约|大致|约莫|差不多|(?<![最附将接])近|(?<![预大])约|快)(?=\d)|"
    rf"(?<=\d)(?:[{_MEASURE}]{_STOP}{{0,6}}?)?(?:{'|'.join(_AFTER)})")
_RANGE = re.compile(rf"(\d+)[{_MEASURE}]?(?:到|至|或者?|还是)(\d+)(?=[{_MEASURE}])")
#: "3个，不对，4个" and "3个保险丝，不对，4个" (the item's name between the count and the marker is kept)
_CORRECTION = re.compile(rf"(?<![a-zA-Z\d.])(\d+)(?P<m>[{_MEASURE}]?)(?P<name>(?:[^\d，,。]|(?<=[a-zA-Z])\d)+?)?\W*"
                         rf"(?:不对|不是|哦不|说错了|我是说|应该是|更正)\W*(?:是)?(\d+)[{_MEASURE}]?"
                         # with the item said before the marker, nothing may follow the new count: "…，不对，是2个垫圈"
                         # corrects the item too (left unresolved, asked)
                         rf"(?(name)(?=\s*[。！!]?\s*$))")
_MARKER = re.compile(r"不对|说错了|我是说|应该是|更正")
_HALF_AFTER = re.compile(rf"(\d+)([{_MEASURE}])半")
#: 半个 is half of one; 半个月, 半个小时 a time (半个月前收到五个: the count is 5)
_HALF = re.compile(rf"半([{_MEASURE}])(?!月|小时|钟头|星期|礼拜)")
#: "2点5个", "1点5米": a decimal count; "3点20用了" (twenty past three) is a time of day, no count
_POINT = re.compile(rf"(\d+)点(\d+)(?=\s*(?:[{_MEASURE}]|公斤|公升|毫升|千克|[，,。！!]|$))")
_DECIMAL = re.compile(r"(?<![A-Za-z\d.])(\d+\.\d+)")
#: not done: 没(有)用, and the written 未 (并未收到, 尚未收到, 还未收到, 暂未收到, 未曾用)
_NOT_VERB = re.compile(r"(?:并|尚|还|暂|从)?(?:没有?|未曾?)(用|拿|领|取|消耗|收到|入库)(?:了|过)?")
_DONT_LOG = re.compile(r"(?:不要|别|不用)(?:记|登记|录|记录)(?:一下)?")
_DONT = re.compile(r"(?:别|不要|不用|并没有|没有|没)(?=把|从|移|搬|转|挪|调|用|拿|领|盘点|清点)")
#: an instruction not to write it (别记, 不要把…移到…), not a report that it did not happen (没有用)
_TOLD = re.compile(r"(?:别|不要|不用)(?=把|从|移|搬|转|挪|调|用|拿|领|盘点|清点|记|登记|录)")
_ALREADY = re.compile(r"(?:已经|早就|之前就?)(?:登记|记录|记|录入|入账)(?:过)?(?:了)?")
_NEGATIVE = re.compile(r"负(?=\d)")
_PARTS = re.compile(r"(?:和|还有|以及|跟|外加)(?=\d)")
#: said as still to come: "tomorrow", "next week", "will", "about to", "ordered" (会 before a verb, not 一会儿)
_FUTURE = re.compile(r"需要(?=[\d一二两三四五六七八九十几])|要买|要订|下单|订(?=[\d一二两三四五六七八九十])|明天|后天|下周|下星期|下礼拜|下个?月|下次|将要|将会|即将|快要|预计|订了|订购了?|(?<!一)会(?=[用拿领收到送来有需])")
_HYPOTHETICAL = re.compile(r"假如|如果|假设|假使|假定|要是|万一")
#: who a change may be heard from: 老王, 小李, 王师傅, 夜班的, 班长, 同事, 他们 … (老实说 is the speaker's)
_WHO = r"(?:[老小](?!实)[\u4e00-\u9fff]|[\u4e00-\u9fff]{0,2}师傅|[夜白早晚]班的?|班长|组长|同事|主管|经理|领导|[他她]们?|别人|人家|有人)"
_HEARSAY = re.compile(rf"听说|据说|据[他她]们?说|[他她]们?说|说是|听{_WHO}说|据{_WHO}(?:说|讲)|"
                      rf"{_WHO}(?:(?:跟|和|对)我们?)?(?:说|讲|告诉我们?|反映|报告)")
_VERB = re.compile(r"^.*?(用了|用掉|拿了|拿走|领了|领用|出库|消耗了?|收到|入库|补了|加了|放了|放入|新到|到了)")


@dataclass
class GuardedZh:
    """``text``: what the Mandarin parser should read (numbers as digits). ``refusal``: one of
    :data:`edge.stages.nlu.types.REFUSALS` or None. ``quantity``: a decimal count the parser cannot
    read itself (2.5), else None. ``negative``, ``range``, ``told`` and ``parts`` (texts of several
    commands) as in :class:`edge.stages.nlu.guards.Guarded`; ``notes`` for ``--explain``."""

    text: str
    refusal: str | None = None
    quantity: float | None = None
    negative: bool = False
    range: tuple[float, float] | None = None
    vague: bool = False
    told: bool = False
    parts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def guard_zh(raw: str) -> GuardedZh:
    """Apply every Mandarin guard to the transcript ``raw``. Raises nothing."""
    g = GuardedZh(raw or "")
    m = _NEIGHBOURS.search(g.text)
    if m and _DIGITS[m.group(2)] != _DIGITS[m.group(1)]:
        g.range = tuple(sorted((float(_DIGITS[m.group(1)]), float(_DIGITS[m.group(2)]))))
        g.text = g.text[:m.start()] + m.group(1) + g.text[m.end():]  # parse as one number, then refuse
        g.refusal = "range"
        g.notes.append(f"range {m.group(1)}{m.group(2)}")
    m = _REPEATED.search(g.text)
    if m and g.refusal is None:  # "三三个": a numeral said twice, never 33 (三十三): one number is asked
        g.text = g.text[:m.start()] + m.group(1) + g.text[m.end():]
        g.refusal = "range"
        g.notes.append(f"repeated {m.group(0)}")
    g.text = normalize_numbers_zh(g.text)
    if _NOT_VERB.search(g.text) or _DONT_LOG.search(g.text) or _DONT.search(g.text):
        g.told = bool(_TOLD.search(g.text))
        g.text = _DONT.sub("", _DONT_LOG.sub("登记", _NOT_VERB.sub(r"\1了", g.text)))
        g.refusal = g.refusal or "negated"
        g.notes.append("negated")
    if _ALREADY.search(g.text):
        rest = _ALREADY.sub("", g.text)
        g.text = rest if re.search(r"\d", rest) else g.text
        g.refusal = g.refusal or "already_done"
        g.notes.append("already done")
    if _NEGATIVE.search(g.text):
        g.text = _NEGATIVE.sub("", g.text)
        g.negative = True
        g.refusal = g.refusal or "negative"
        g.notes.append("negative")
    m = _RANGE.search(g.text)
    if m:
        g.range = (float(m.group(1)), float(m.group(2)))
        g.text = g.text[:m.start()] + m.group(1) + g.text[m.end():]
        g.refusal = g.refusal or "range"
        g.notes.append(f"range {m.group(1)}–{m.group(2)}")
    _bound(g)
    m = _CORRECTION.search(g.text)
    if m:
        g.text = g.text[:m.start()] + m.group(4) + m.group("m") + (m.group("name") or "") + g.text[m.end():]
        g.notes.append(f"correction {m.group(1)} → {m.group(4)}")
    elif _MARKER.search(g.text):
        g.refusal = g.refusal or "correction"
        g.notes.append("unresolved correction")
    _decimals(g)
    if g.quantity is not None:
        g.notes.append(f"decimal {g.quantity:g}")
    _not_said_as_done(g)
    pieces = [p for p in _PARTS.split(g.text) if p.strip("，,。 ")]
    if len(pieces) >= 2:
        verb = _VERB.match(pieces[0])
        if verb:
            g.parts = [pieces[0]] + [verb.group(1) + p for p in pieces[1:]]
            g.notes.append(f"{len(g.parts)} parts")
    return g


def _bound(g: GuardedZh) -> None:
    """A count said as a bound or an approximation (:data:`BOUND`): ``vague``, refused as a range
    (the dialog asks for one number), the bounding words dropped from the text to parse."""
    words = [_bound_word(m.group(0)) for m in BOUND.finditer(g.text)]
    if not words or g.range is not None:
        return
    g.text = BOUND.sub(lambda m: m.group(0)[:-len(_bound_word(m.group(0)))], g.text)  # "3个保险丝以上": the name stays
    g.vague = True
    g.refusal = g.refusal or "range"
    g.notes.append(f"bound {'、'.join(words)}")


def _bound_word(match: str) -> str:
    """The bounding word of a :data:`BOUND` match ("3个保险丝以上" → "以上")."""
    return match[-2:] if match.endswith(_AFTER) else match


def bound_zh(text: str) -> str | None:
    """The words of a bound or an approximation of a count in a Mandarin ``text`` (numerals as
    digits or characters), or None."""
    m = BOUND.search(normalize_numbers_zh(text or ""))
    return _bound_word(m.group(0)) if m else None


def _not_said_as_done(g: GuardedZh) -> None:
    """``future`` or ``hypothetical`` (over every refusal but a negation or minus), else ``hearsay``
    (only when nothing else was refused); the cue words dropped from ``g.text``."""
    for pattern, cue in ((_HYPOTHETICAL, "hypothetical"), (_FUTURE, "future"), (_HEARSAY, "hearsay")):
        if not pattern.search(g.text):
            continue
        if cue == "hearsay" and g.refusal is not None:
            return
        g.text = pattern.sub("", g.text)
        if g.refusal not in ("negated", "negative"):
            g.refusal = cue
        g.notes.append(cue)
        return


def _decimals(g: GuardedZh) -> None:
    """``两个半`` → 2.5, ``半个`` → 0.5, ``2点5`` → 2.5: the count as a decimal, and the text with a
    whole number the parser can read."""
    m = _HALF_AFTER.search(g.text)
    if m:
        g.quantity = int(m.group(1)) + 0.5
        g.text = g.text[:m.start()] + m.group(1) + m.group(2) + g.text[m.end():]
        return
    m = _HALF.search(g.text)
    if m:
        g.quantity = 0.5
        g.text = g.text[:m.start()] + "1" + m.group(1) + g.text[m.end():]
        return
    g.text = _POINT.sub(r"\1.\2", g.text)
    m = _DECIMAL.search(g.text)
    if m:
        g.quantity = float(m.group(1))
        g.text = g.text[:m.start()] + str(int(g.quantity)) + g.text[m.end():]
