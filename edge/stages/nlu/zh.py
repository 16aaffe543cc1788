"""The grammar path for Mandarin Chinese (``language: zh``): commands → :class:`Intent`.

Used through ``Grammar(items, language="zh")`` (:mod:`edge.stages.nlu.grammar`), which sends text with
Chinese ideographs here. Steps:

1. Clean: NFKC (full-width ``Ｍ８`` → ``m8``), lowercase, punctuation and spaces removed.
2. ``undo``: the whole text is ``撤销`` / ``撤回`` / ``取消`` / ``删掉`` …, optionally with
   ``上一条`` / ``刚才那条`` / ``最后一条`` (``撤销上一条``, ``请撤销一下``).
3. Numbers → digits (:func:`edge.stages.nlu.numbers_zh.normalize_numbers_zh`: ``十二`` → 12, ``一打`` → 12).
4. Location: ``12号箱`` / ``箱子12`` → ``bin 12``, ``4号抽屉`` → ``drawer 4``, ``B号架`` / ``B架`` /
   ``货架B`` → ``shelf B`` (the English form the inventory uses, :func:`normalize_location`).
5. Item: the longest Chinese name or alias of the inventory found in the text (``M8螺栓``), else a
   Chinese head word only one item has (``螺栓`` when only the M8 bolt has it; shared by several →
   ``candidates``), else the best ``rapidfuzz`` partial match (≥ :data:`ZH_FUZZY_CUTOFF`, for ASR
   homophones: ``丁晴手套``), else a Latin word of the names (``M8`` → every M8 item), else the only
   item at the location. Chinese item names come from the inventory's aliases.
6. Intent: a question cue (``多少``, ``几个``, ``有没有``, ``还有``, ``还剩``, ``库存`` …) →
   ``query_stock`` (also ``有什么`` at a location); an out verb (``用了``, ``拿了``, ``领用``, ``出库`` …) or an in verb (``收到``,
   ``到了``, ``入库``, ``补货``, ``登记`` …) plus a count → ``log_record``. The count is the number said with a measure word
   when there is one such (``五十个``), else the first number outside the location and the item name;
   other numbers beside it (a place heard as 十二后) or a numeral Whisper wrote as a homophone (使一个)
   have it read back before it is written.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import replace

from rapidfuzz import fuzz

from edge.stages.nlu.filler import has_cjk, strip_leading_fillers
from edge.stages.nlu.lexicon import is_name_word, normalize_location, normalize_text, singular
from edge.stages.nlu.numbers_zh import MEASURE_WORDS, normalize_numbers_zh
from edge.stages.nlu.types import Intent, ItemMatch

#: rapidfuzz partial_ratio cutoff for Chinese names of ≥ 3 characters: 3 of 4 characters right
#: (one homophone slip, e.g. 丁晴手套 for 丁腈手套) scores 75.
ZH_FUZZY_CUTOFF = 75
#: location words → the English kind used in the inventory
LOCATION_KINDS = {"料箱": "bin", "箱子": "bin", "箱": "bin", "抽屉": "drawer", "货架": "shelf",
                  "架子": "shelf", "架": "shelf"}
_KIND = "料箱|箱子|箱|抽屉|货架|架子|架"
_LOCATIONS = [
    re.compile(rf"(?P<n>\d+)号(?P<k>{_KIND})"),
    re.compile(r"(?P<k>料箱|箱子|抽屉|货架|架子)(?P<n>\d+)号?"),
    re.compile(r"(?<![a-z0-9])(?P<n>[a-z])号?(?P<k>货架|架子|架)"),
    re.compile(r"(?P<k>货架|架子)(?P<n>[a-z])(?![a-z0-9])"),
]
_UNDO = re.compile(
    r"(?:请|帮我|麻烦你?|哎呀|不对)?(?:撤销|撤回|取消|删除|删掉|作废|撤掉)(?:一下)?"
    r"(?:刚才那条|刚才的|刚才|上一条|上一个|上一笔|上条|最后一条|最后那条|那条|这条|那个|这个)?"
    r"(?:记录|操作)?(?:吧|了|啊)?")
_QUERY = re.compile(r"多少|几(?!乎)[个只支把盒箱包卷罐桶张件根条片套对双副瓶袋]?|有没有|还有|还剩|剩下|剩多少|"
                    r"库存|查一下|查查|查询|在哪|够不够|有吗|有什么|有哪些")
_STRONG_QUERY = re.compile(r"多少|有没有|还有|还剩|剩下|库存")
#: verbs that say stock went out (used, taken, issued …) / came in (received, restocked, returned …)
OUT_VERBS = re.compile(r"用了|用掉|用完了|用光了|用坏了|使用了|拿了|拿走|拿出|取了|取走|领了|领走|领用|消耗|出库|发了|发出|发放|借了|"
                  r"借走|减少|减去|扣除|扣掉")
IN_VERBS = re.compile(r"收到|到了|到货|进了|进货|入库|补了|补充|补货|加了|添加|增加|加上|放了|放入|放进|新到|"
                 r"归还|还回|退回|送来|送到|添了|买了|采购")
#: "log it" (登记五个钻头, 记一下三个保险丝): a write that says neither in nor out, asked "用了还是收到？"
LOG_SAID = re.compile(r"登记|记录|记一下|记上")
_QTY = re.compile(r"(?<![a-z0-9.])(\d+)(?![a-z0-9])")
#: characters a recognizer writes for a numeral it misheard, right before the rest of the number
#: (Whisper base heard 收到十一个钻头 as 收到、使一个钻头: "11" lost its 十 and became 1): a count right
#: after one of these is read back before it is written. Homophones of 十 (shí), 四 (sì), 七 (qī),
#: 九 (jiǔ), 一 (yī), 二 (èr), 三 (sān), 五 (wǔ), 六 (liù), 两 (liǎng).
SOUNDS_LIKE_A_NUMERAL = "使是时实石事市式室识史试似寺期其齐久酒以已依衣而儿耳山散无午武舞路留流亮"
#: a number said with a measure word (50个): the count when there is one such
_COUNTED = re.compile(rf"(?<![a-z0-9.])(\d+)(?=[{MEASURE_WORDS}])")
_LOOSE_COUNT = re.compile(rf"[{SOUNDS_LIKE_A_NUMERAL}](\d+)(?![a-z0-9])")
_LATIN = re.compile(r"[a-z][a-z0-9]*|\d+[a-z]+[a-z0-9]*")
_PARTICLES = re.compile(
    r"一下|刚才|今天|现在|一共|总共|我们|咱们|里面|已经|请问|帮我|给我|还有|"
    rf"[的了吗呢吧啊呀我你他她有还在里上下把帮请给共这那都就是从到往向要和跟也又再被个点些{MEASURE_WORDS}]")


def clean_zh(text: str) -> str:
    """NFKC, lowercase, every character that is not a letter, digit or ideograph removed."""
    text = unicodedata.normalize("NFKC", text or "").lower()
    return re.sub(r"[\W_]+", "", text)


def find_location_zh(t: str) -> tuple[str | None, tuple[int, int] | None]:
    """The first location in cleaned, digit-normalized text ``t``: (``"bin 12"``, (start, end))."""
    best = None
    for pat in _LOCATIONS:
        m = pat.search(t)
        if m and (best is None or m.start() < best.start()):
            best = m
    if best is None:
        return None, None
    kind = LOCATION_KINDS[best.group("k")]
    ident = best.group("n")
    loc = f"{kind} {int(ident)}" if ident.isdigit() else f"{kind} {ident.upper()}"
    return loc, best.span()


class ZhGrammar:
    """Rule-based understanding of Mandarin commands, built from the inventory items (Chinese
    names come from their aliases, e.g. ``M8螺栓``; English names still match Latin words)."""

    def __init__(self, items: Iterable):
        """``items``: objects with ``sku``, ``item``, ``location``, ``aliases``. Raises
        ``AttributeError`` if one lacks an attribute."""
        self.items = list(items)
        self._names: dict[str, str] = {}  # cleaned Chinese name/alias → sku
        self._heads: dict[str, set[str]] = {}  # Chinese part of a name without its Latin prefix → skus
        self._words: dict[str, set[str]] = {}  # Latin word of a name → skus
        for it in self.items:
            for name in (it.item, *it.aliases):
                key = clean_zh(name)
                if has_cjk(key):
                    self._names.setdefault(key, it.sku)
                    head = re.sub(r"^[a-z0-9.]+", "", key)
                    for h in {head, head[-2:] if len(head) >= 4 else head}:
                        if len(h) >= 2 and h != key:
                            self._heads.setdefault(h, set()).add(it.sku)
                    latin = re.match(r"^[a-z][a-z0-9]*", key)
                    if latin:
                        self._words.setdefault(latin.group(0), set()).add(it.sku)
                else:
                    for t in normalize_text(name).split():
                        s = singular(t)
                        if is_name_word(s):
                            self._words.setdefault(s, set()).add(it.sku)
        self._ordered = sorted(self._names, key=len, reverse=True)
        self._by_location: dict[str, list[str]] = {}
        for it in self.items:
            self._by_location.setdefault(normalize_location(it.location) or it.location, []).append(it.sku)

    def _find_item(self, t: str, location: str | None) -> tuple[ItemMatch, str]:
        """The item in ``t`` (cleaned, digits, location cut out); also ``t`` with it cut out."""
        for key in self._ordered:
            i = t.find(key)
            if i >= 0:
                return ItemMatch(self._names[key], via="name"), t[:i] + "|" + t[i + len(key):]
        found = [(h, skus) for h, skus in self._heads.items() if h in t]
        if found:
            longest = max(len(h) for h, _ in found)
            skus = sorted(set().union(*(s for h, s in found if len(h) == longest)))
            head = next(h for h, _ in found if len(h) == longest)
            rest = t.replace(head, "|", 1)
            if len(skus) == 1:
                return ItemMatch(skus[0], via="head"), rest
            # a Latin word next to the head may settle it ("m8" + 螺栓 with M8 and M10 bolts)
            narrowed = [s for s in skus if any(s in self._words.get(w, ()) for w in _LATIN.findall(t))]
            if len(narrowed) == 1:
                return ItemMatch(narrowed[0], via="head"), rest
            return ItemMatch(None, candidates=tuple(narrowed or skus), via="head"), rest
        scored = [(fuzz.partial_ratio(k, t), k) for k in self._ordered if len(k) >= 3]
        scored = [(s, k) for s, k in scored if s >= ZH_FUZZY_CUTOFF]
        if scored:
            top = max(s for s, _ in scored)
            skus = sorted({self._names[k] for s, k in scored if s == top})
            if len(skus) == 1:
                return ItemMatch(skus[0], via="fuzzy"), t
            return ItemMatch(None, candidates=tuple(skus), via="fuzzy"), t
        latin = [w for w in _LATIN.findall(t) if singular(w) in self._words]
        if latin:
            sets = [self._words[singular(w)] for w in latin]
            common = set.intersection(*sets)
            skus = sorted(common or set.union(*sets))
            rest = t
            for w in latin:
                rest = rest.replace(w, "|", 1)
            if len(skus) == 1:
                return ItemMatch(skus[0], via="word"), rest
            return ItemMatch(None, candidates=tuple(skus), via="word"), rest
        at = self._by_location.get(location or "", [])
        if len(at) == 1 and not self._unknown_words(t):  # "12号箱有多少链轮": the 链轮, not bin 12's item
            return ItemMatch(at[0], via="location"), t
        return ItemMatch(None, via="unknown"), t

    @staticmethod
    def _unknown_words(t: str) -> str | None:
        rest = _PARTICLES.sub("", LOG_SAID.sub("", IN_VERBS.sub("", OUT_VERBS.sub("", _QUERY.sub("", t)))))
        rest = re.sub(r"[|\d]+", "", rest)
        return rest if len(rest) >= 2 else None

    def _prepare(self, text: str) -> tuple[str, str | None]:
        t = clean_zh(normalize_numbers_zh(strip_leading_fillers(text or "")))
        location, span = find_location_zh(t)
        if span:
            t = t[:span[0]] + "|" + t[span[1]:]
        return t, location

    def resolve_item(self, text: str) -> ItemMatch:
        """The item a Chinese ``text`` names (see :class:`edge.stages.nlu.grammar.ItemMatch`)."""
        t, location = self._prepare(text)
        m, rest = self._find_item(t, location)
        if m.via == "unknown":
            return ItemMatch(None, unknown=self._unknown_words(rest), via="unknown")
        return m

    def parse(self, text: str) -> Intent | None:
        """Understand one Chinese transcript, or None (not a known command: the LLM's turn).

        Returns an :class:`Intent` (``source="grammar"``) like the English grammar: ``undo``,
        ``query_stock`` (``sku``, ``location``), ``log_record`` (``sku``, ``quantity`` > 0,
        ``direction``, ``location``), with ``extra["candidates"]`` / ``extra["unknown_item"]`` when
        the command is clear but the item is not. Raises nothing.
        """
        if _UNDO.fullmatch(clean_zh(strip_leading_fillers(text or ""))):
            return Intent("undo", source="grammar", text=text)
        t, location = self._prepare(text)
        if not t.strip("|"):
            return None
        if _QUERY.search(t):
            intent, direction = "query_stock", None
        elif OUT_VERBS.search(t):
            intent, direction = "log_record", "out"
        elif IN_VERBS.search(t):
            intent, direction = "log_record", "in"
        elif LOG_SAID.search(t):
            intent, direction = "log_record", None  # never guessed: the dialog asks
        else:
            return None
        found, rest = self._find_item(t, location)
        extra: dict = {}
        unknown = None
        if found.candidates:
            extra["candidates"] = list(found.candidates)
        elif found.sku is None:
            unknown = self._unknown_words(rest)
            if not unknown:
                return None
            extra["unknown_item"] = unknown
        if intent == "query_stock":
            if "unknown_item" in extra and not _STRONG_QUERY.search(t):
                return None
            return Intent("query_stock", sku=found.sku, location=location, source="grammar", text=text,
                          candidates=tuple(found.candidates), unknown=unknown, extra=extra,
                          explain={"item_via": found.via})
        nums = [int(n) for n in _QTY.findall(rest)]
        if not nums or nums[0] <= 0:
            return None
        quantity = nums[0]
        counted = [int(n) for n in _COUNTED.findall(rest)]
        if len(counted) == 1:  # the number with a measure word is the count, not a place number misheard
            quantity = counted[0]
        loose = _LOOSE_COUNT.search(rest)
        if (loose and int(loose.group(1)) == quantity) or len(set(nums)) > 1:
            extra["low_confidence_quantity"] = True  # the dialog reads it back first
        return Intent("log_record", sku=found.sku, quantity=quantity, direction=direction, location=location,
                      source="grammar", text=text, candidates=tuple(found.candidates), unknown=unknown, extra=extra,
                      explain={"item_via": found.via})


def zh_match_text(text: str) -> str:
    """A Mandarin transcript as the zh templates see it: fillers dropped, NFKC, numbers as digits,
    punctuation and spaces removed."""
    return clean_zh(normalize_numbers_zh(strip_leading_fillers(text or "")))


def zh_fill(g: ZhGrammar, intent: str, slots: dict, text: str) -> Intent | None:
    """The slots of ``intent`` from a Mandarin ``text`` (and the zh template's slot texts
    ``slots``), by the Mandarin rules of :class:`ZhGrammar`; ``source="template"``. None when the
    text lacks what the intent needs. Raises nothing."""
    base = Intent(intent, source="template", text=text)
    if intent in ("undo", "cancel", "low_stock", "ask_docs", "other"):
        return base
    if intent in ("query_stock", "log_record"):
        got = g.parse(text)
        return replace(got, source="template") if got is not None and got.intent == intent else None
    where = slots.get("location")
    location = find_location_zh(clean_zh(normalize_numbers_zh(where)))[0] if where else None
    t, first = g._prepare(slots.get("item") or text)
    location = location or first
    if intent == "place_contents":
        return Intent(intent, location=location, source="template", text=text) \
            if location in g._by_location else None
    to = slots.get("to_location")
    to_location = find_location_zh(clean_zh(normalize_numbers_zh(to)))[0] if to else None
    found, rest = g._find_item(t, location if intent != "transfer" else None)
    nums = [int(n) for n in _QTY.findall(rest)]
    if not nums or (found.sku is None and not found.candidates):
        return None
    if intent == "transfer" and (location is None or to_location is None):
        return None
    extra = {"candidates": list(found.candidates)} if found.candidates else {}
    return Intent(intent, sku=found.sku, quantity=nums[0], location=location, to_location=to_location,
                  candidates=tuple(found.candidates), source="template", text=text, extra=extra,
                  explain={"item_via": found.via})
