"""Words beside a parsed change that make it no change of the stock as heard (English normalized text
and Mandarin with numerals as digits), for :func:`edge.stages.nlu.accounting.unexplained`:

- ``equipment``: stock put into a machine, a vehicle or a kit ("we put 3 fuses in the compressor",
  "added 3 fuses to the machine", "we put in 3 fuses", 放了三个保险丝到车上, 给机器加了三个保险丝,
  加了三个保险丝): a use, or a move to a place the inventory does not keep — never a receipt; a
  stock place said ("in bin 30", 放进三十号料箱) is a receipt as before;
- ``count_what``: a count of something else than what is there ("counted out 3 fuses", "we counted
  3 broken fuses", "counted 3 fuses used", 数了三个用掉的保险丝);
- ``not_done``: a try, a test, a dream or a doubt ("we tried to use 3 fuses", "this is a test, …",
  "… in the simulation", "… or did we", 试着用了, 测试一下, 做梦, 假的, 不过是错的), a "wait" after the
  change (用了三个保险丝，等一下), or what almost happened (差点用了三个: nothing was used); a "wait"
  said first and set off (等等，用了三个保险丝) is a hesitation before the command, and one between two
  counts (三个，等等，四个) a correction (``correction``);
- ``etc``: a list left open (保险丝、垫圈等等, 用了三个保险丝等等, …什么的, …之类的): more was said than the
  count covers;
- ``moved``: stock taken and put into a place (从30号拿了三个保险丝放到31号, 拿了三个保险丝，从30号箱放到31号箱)
  that no move was understood of: a move, never a use;
- ``not_count``: the only count said counts something else ("we used fuses on 3 machines", "drill bits
  for 4 holes", 在三台机器上用了保险丝);
- ``undo``: an undo or cancel beside a write ("undo that and log 3 fuses used"): the undo would be
  dropped silently, so nothing is written and both are asked for one at a time.

A leaf: nothing here looks at the inventory (the caller says whether a stock place was understood).
"""
from __future__ import annotations

import re

from edge.stages.nlu.lexicon import LOCATION_WORDS

#: a putting verb, the item, and where it went ("put 3 fuses in the van", "added 3 drill bits to the kit")
_PUT = re.compile(r"\b(?:put|putting|puts|added|add|adding|adds|fitted|installed|loaded|placed|stuck|inserted|"
                  r"popped|plugged)\b(?P<rest>(?: (?!back\b)\S+){0,8}?) (?:in|into|inside|on|onto|to|in to)"
                  r"(?: (?:the|a|an|my|our|his|her|their|that|this|those|these))? (?P<dest>\w+)")
#: where stock is kept (a receipt or a move, as before): a place word, or the stock itself
_STOCK_DEST = LOCATION_WORDS | frozenset("stock stocks store stores storeroom stockroom inventory system warehouse "
                                         "shelves bins drawers racks back".split())
_COUNT_WHAT = re.compile(r"\bcount(?:ed|ing)? out\b|\bcount(?:ed|ing)? (?:\S+ ){1,5}?out\b|"
                         r"\bcount(?:ed|ing)? (?:\S+ ){0,4}?(?:broken|damaged|faulty|defective|blown|dead|spent|bad|"
                         r"worn|used|missing|returned|spare|extra)\b")
_NOT_DONE = re.compile(
    r"\b(?:tried|try|trying|attempted|attempt|attempting|failed|forgot|forgotten|neglected)(?: not)? to "
    r"(?!(?:log|record|enter|book|note|write|mark)\b)|"
    r"^(?:this is |thats |its )?(?:just |only )?(?:a )?test(?:ing)?\b|\bthis is (?:just |only )?a test\b|"
    r"\b(?:in|during|for) (?:my|a|the|our|this) (?:dream|simulation|demo|demonstration|test|practice|rehearsal|"
    r"training|exercise|game)\b|\b(?:i|we) (?:dreamt|dreamed)\b|\bdreaming\b|\b(?:just |only )?(?:kidding|joking)\b|"
    r"\bfor example\b|\bsimulated\b|\bor (?:did|didnt|have|havent|were|werent|was|wasnt) (?:we|i|they|it)\b|"
    r"\bor not$")
_UNDO = re.compile(r"\b(?:undo|undid|cancel|cancelled|canceled|scratch that|revert|reverse that|delete (?:that|it|the)|"
                   r"remove (?:that|the last)|take that back)\b")
#: the only count said after the item and a preposition ("we used fuses on 3 machines", "drill bits for 4
#: holes"): it counts something else; a unit after it ("for 2 boxes") is no other thing
_OTHER_COUNT = re.compile(r"\b(?:on|for|across|over|between) (?:each of )?\d+(?:\.\d+)? "
                          r"(?!(?:pcs|pieces?|boxe?s|packs?|packets?|pairs?|sets?|rolls?|bags?|cans?|tins?|metres?|"
                          r"meters?|m|litres?|liters?|l|kg|kilos?|grams?|g|mm|cm|sheets?|pallets?)\b)[a-z]\w*")
_OTHER_COUNT_ZH = re.compile(r"在\d+(?!号)[台辆部个处块][^\d，,。]{0,6}?[上里中]")
#: Mandarin: putting into a machine or vehicle, or 加了 with no stock place
_PUT_ZH = re.compile(r"加了|加上|添了|放了|放进|放入|放到|放在|装了|装上|装进|装到|装在|塞进|插进")
_STOCK_PLACE_ZH = re.compile(r"料箱|箱|抽屉|货架|架子|架|仓库|库房|库存|入库|柜|\d+号")
#: 点了 is counted (or ordered); 八点了 is a time of day
_COUNT_WHAT_ZH = re.compile(r"数了|数出|(?<![\d零一二两三四五六七八九十])点了|清点了?|盘点了?")
_NOT_DONE_ZH = re.compile(r"试着|试图|尝试|试了试|想用|没能|忘了用|忘记用|测试|做梦|梦里|梦见|模拟|演示|假的|就当|当作|开玩笑|"
                          r"错的|不对吧|是不是|差一?点儿?(?=[\u4e00-\u9fff])(?!儿?忘)|险些|差些")
#: "wait": said first and set off by a pause (等等，…) a hesitation; said later, a doubt or a correction;
#: glued to a word (垫圈等等) "and so on"
_WAIT_FIRST_ZH = re.compile(r"^\s*(?:(?:嗯|呃|额|啊|哦|那个|这个|就是)[，,。\s]*)*(?:等等|等一下|等一等|稍等(?:一下)?)[啊呀哈]?"
                            r"[，,。！!\s]+(?!再)")
_WAIT_ZH = re.compile(r"等等|等一下|等一等|稍等")
_ETC_ZH = re.compile(r"[^\d，,。！!？?\s]{0,12}(?:(?<=[\u4e00-\u9fffa-z0-9])等等|什么的|之类的?|啥的)|"
                     r"等等(?=\d*[^\d，,。！!\s]*(?:东西|物品|材料|零件|配件))")
#: taken from one place and put into another: a place word or a place number after the putting verb
_MOVED_ZH = re.compile(r"(?:放到|放进|放入|放在|移到|搬到|挪到|转到|送到|送去|搬进|挪进|拿到|拿去|带到|带去)(?:了)?[^，,。]{0,4}?"
                       r"(?:\d+号|料箱|箱|抽屉|货架|架|柜|仓库|库房)")


def not_stock(norm: str, stock_place: bool, direction: str | None, intent: str) -> tuple[str, str] | None:
    """``(kind, words)`` when ``norm`` (English, normalized) says a change that is no stock change as
    parsed (see module doc), else None. ``stock_place``: the parse understood a place of the
    inventory; ``direction``: the log's (``in``/``out``/None); ``intent``: the parsed intent."""
    m = _UNDO.search(norm)
    if m:
        return "undo", m.group(0)
    m = _NOT_DONE.search(norm)
    if m:
        return "not_done", m.group(0).strip()
    m = _OTHER_COUNT.search(norm)
    if m and intent == "log_record" and not re.search(r"\d", norm[:m.start()]):
        return "not_count", m.group(0)
    if intent == "stock_count":
        m = _COUNT_WHAT.search(norm)
        return ("count_what", m.group(0)) if m else None
    if intent != "log_record" or direction != "in" or stock_place:
        return None
    for m in _PUT.finditer(norm):
        dest = m.group("dest")
        if dest.replace(".", "").isdigit():
            if not m.group("rest"):  # "we put in 3 fuses": put in where?
                return "equipment", m.group(0)
            continue
        if dest not in _STOCK_DEST:
            return "equipment", m.group(0)
    return None


def not_stock_zh(text: str, direction: str | None, intent: str) -> tuple[str, str] | None:
    """The Mandarin of :func:`not_stock` on ``text`` (numerals as digits); a place is a stock place
    when a place word of the inventory (料箱, 抽屉, 货架, 3号 …) is said."""
    m = _OTHER_COUNT_ZH.search(text)
    if m and intent == "log_record":
        return "not_count", m.group(0)
    m = _MOVED_ZH.search(text)
    if m and intent == "log_record" and direction == "out":  # taken, then put into a place
        return "moved", m.group(0)
    m = _NOT_DONE_ZH.search(text)
    if m:
        return "not_done", m.group(0)
    got = _wait_zh(text)
    if got is not None:
        return got
    m = _COUNT_WHAT_ZH.search(text)
    if m and intent == "log_record":
        return "count_what", m.group(0)
    m = _PUT_ZH.search(text)
    if m and intent == "log_record" and direction == "in" and not _STOCK_PLACE_ZH.search(text):
        return "equipment", m.group(0)
    return None


def _wait_zh(text: str) -> tuple[str, str] | None:
    """等等 / 等一下 beside a change (see module doc): ``etc``, ``correction`` or ``not_done``; None
    when it is only said first, as a hesitation."""
    m = _ETC_ZH.search(text)
    if m:
        return "etc", m.group(0).lstrip("个只支把盒箱包卷罐桶张件根条片对双副瓶袋台块颗粒枚捆托、")
    rest = _WAIT_FIRST_ZH.sub("", text, count=1)
    m = _WAIT_ZH.search(rest)
    if m is None:
        return None
    if re.search(r"\d", rest[:m.start()]) and re.search(r"\d", rest[m.end():]):  # "3个，等等，4个"
        return "correction", m.group(0)
    return "not_done", m.group(0)
