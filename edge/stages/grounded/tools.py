"""The tools a grounded answer may call: each reads the store, the records or the documents (never
writes) and returns a :class:`ToolResult` whose ``text`` is the sentence the fast path would say.

=============  ======================================  =======================================
tool           arguments                               answered by
=============  ======================================  =======================================
stock          ``item`` (SKU), ``place`` (optional)    :func:`edge.stages.reply.query_reply`
place          ``place``                               :meth:`edge.stock.store.Store.place_contents`
low_stock      ``item`` / ``place`` (optional)         :func:`edge.stock.low.low_among`, the store
records        ``item``, ``kind``, ``what``, ``period``  :func:`edge.stock.questions.answer`
documents      the question                            :class:`edge.stages.docs.desk.DocsDesk`
calculate      ``expression`` (+ - * / and brackets)   :func:`calculate`
=============  ======================================  =======================================
"""
from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from edge.stages import records_reply, reply
from edge.stages.nlu.numbers import normalize_numbers
from edge.stock import low
from edge.stock.questions import KINDS, Question, answer
from edge.stock.store import Store

TOOLS = ("stock", "place", "low_stock", "records", "documents", "calculate")
#: what a records question may ask about (:class:`edge.stock.questions.Question` ``what``)
RECORD_WHATS = ("used", "received", "moved", "counted", "any")
#: the most items a low-stock or place answer names (as the fast path)
MAX_LISTED = reply.MAX_LISTED
#: longest calculator expression accepted, characters
MAX_EXPRESSION = 80
#: words of a question about the records (a "top" or "entries" answer to anything else is beside the point)
RECORD_CUES = re.compile(r"\b(?:use[ds]?|using|received|came in|come in|delivered|deliver(?:y|ies)|logged|log|logs|"
                         r"took|taken|take|moved|counted|most|least|top|entries|records?|went through|got through|get through|go through|"
                         r"when|last|yesterday|today|this week|last week|this month|since)\b")
#: the kind of record a question's own words name; one alone decides over the model's ``what``
#: ("when were fuses last taken out": used, not moved)
WHAT_CUES = {
    "used": re.compile(r"\b(?:use[ds]?|using|took|taken|take[ns]? out|went out|went through|got through|consumed)\b"),
    "received": re.compile(r"\b(?:received|receive|came in|come in|comes in|delivered|deliver(?:y|ies)|arrived)\b"),
    "moved": re.compile(r"\b(?:moved|move[ds]?|transferred|transfer)\b"),
    "counted": re.compile(r"\b(?:counted|count(?:ed)? again|stocktake)\b"),
}
#: how a failed call's text starts
FAILED = "That tool call failed:"
#: words of item names too common to show that a question names the item
_GENERIC = frozenset("mm cm pcs box can roll set kit pack new old big small large white black red blue the and for".split())
#: numbers a calculation may use without anyone saying them (a week's days, a day's hours, per cent)
CONSTANTS = frozenset({1.0, 2.0, 7.0, 24.0, 60.0, 100.0})
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:[.,]\d+)*(?![\w])")


def numbers_in(text: str) -> set[float]:
    """The numbers written as digits in ``text`` ("1,200" → 1200.0, "2.5" → 2.5; "M8" and "A4" are
    names, not numbers)."""
    out = set()
    for m in _NUMBER.finditer(text or ""):
        s = m.group(0).replace(",", "")
        try:
            out.add(float(s))
        except ValueError:
            continue
    return out


@dataclass(frozen=True)
class ToolResult:
    """One tool call's outcome: ``tool``, its ``args``, the sentence ``text`` and whether it found
    anything (``ok``; False: the item or place is unknown, the documents do not say). ``source``: the
    document a documents answer quotes."""

    tool: str
    args: dict
    text: str
    ok: bool = True
    source: str | None = None
    numbers: frozenset = field(default_factory=frozenset)

    @property
    def failed(self) -> bool:
        """A call the tools could not run (a message for the model, never said)."""
        return self.text.startswith(FAILED)

    @classmethod
    def of(cls, tool: str, args: dict, text: str, ok: bool = True, source: str | None = None) -> ToolResult:
        return cls(tool, args, text, ok, source, frozenset(numbers_in(text)))


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def calculate(expression: str) -> float:
    """The value of an arithmetic ``expression`` of numbers, ``+ - * /`` and brackets (Python's
    ``ast``; nothing is executed).

    Raises:
        ValueError: another token, a division by zero, or more than :data:`MAX_EXPRESSION` characters."""
    text = (expression or "").replace("x", "*").replace("×", "*").replace("÷", "/").replace(",", "")
    if not text.strip() or len(text) > MAX_EXPRESSION:
        raise ValueError(f"expression must be 1–{MAX_EXPRESSION} characters of numbers and + - * /")

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return float(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            right = ev(node.right)
            if isinstance(node.op, ast.Div) and right == 0:
                raise ValueError("division by zero")
            return _OPS[type(node.op)](ev(node.left), right)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        raise ValueError(f"not arithmetic: {ast.dump(node)[:40]}")

    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as e:
        raise ValueError(f"not arithmetic: {expression!r}") from e
    return ev(tree)


def said_number(x: float) -> str:
    """``x`` as said: whole numbers without a decimal point, others to at most 2 decimals."""
    return str(int(x)) if float(x).is_integer() else f"{x:.2f}".rstrip("0").rstrip(".")


def _stems(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {w[:-2] if w.endswith("es") and len(w) > 4 else w[:-1] if w.endswith("s") and len(w) > 3 else w
            for w in words}


def names(item, question: str) -> bool:
    """Whether ``question`` names ``item``: a word of its name, an alias or its SKU (plural or not,
    not a generic word such as "mm" or "box") is one of the question's. Raises nothing."""
    said = _stems(normalize_numbers(question))
    own = set().union(*(_stems(n) for n in (item.item, *item.aliases, item.sku.replace("-", " "))))
    return bool({w for w in own if len(w) > 2 and not w.isdigit() and w not in _GENERIC
                 or any(c.isdigit() for c in w) and any(c.isalpha() for c in w)} & said)


def said_place(place: str, question: str) -> bool:
    """Whether ``question`` says ``place`` ("bin 12", "shelf B"; number words as digits). Raises nothing."""
    norm = " ".join(re.findall(r"[a-z0-9]+", normalize_numbers(question).lower()))
    want = " ".join(re.findall(r"[a-z0-9]+", (place or "").lower()))
    return bool(want) and re.search(rf"\b{re.escape(want)}\b", norm) is not None


def fully_named(item, question: str) -> bool:
    """Whether ``question`` says ``item``'s name or one of its aliases in full (every word of it but
    the generic ones, plural or not): "M8 bolts" names the M8 bolt, not the M8 washer. Raises nothing."""
    said = _stems(normalize_numbers(question))
    for name in (item.item, *item.aliases):
        words = {w for w in _stems(name) if w not in _GENERIC}
        if words and words <= said:
            return True
    return False


class Toolbox:
    """The tools over one ``store`` (read only; a :class:`Store`, or a function returning the one in
    use), the documents ``docs`` (``(question) -> (text, found, source)``, or None when none are
    indexed) and ``language``."""

    def __init__(self, store: Store | Callable[[], Store], docs: Callable[[str], tuple[str, bool, str | None]] | None = None,
                 language: str = "en"):
        self._store = store
        self.docs = docs
        self.language = language
        #: the question of the call running (an item must be one it names); None: not checked
        self.question: str | None = None

    @property
    def store(self) -> Store:
        return self._store if isinstance(self._store, Store) else self._store()

    def run(self, call: dict, question: str, grounded: set[float]) -> ToolResult:
        """Run one ``call`` (``{"tool", "item", "place", "kind", "what", "period", "expression"}``;
        absent keys are None) for ``question``. ``grounded``: the numbers known so far (the question's
        and earlier results'); a calculation may use only those. Raises nothing: a bad call is a
        result with ``ok=False`` saying why."""
        tool = call.get("tool")
        self.question = question
        if call.get("place") and not said_place(call["place"], question):
            call = {**call, "place": None}  # a place the question does not say is the model's guess: not used
        try:
            if tool == "stock":
                return self.stock(call.get("item"), call.get("place"))
            if tool == "place":
                return self.place(call.get("place"))
            if tool == "low_stock":
                return self.low_stock(call.get("item"), call.get("place"))
            if tool == "records":
                return self.records(call.get("item"), call.get("kind"), call.get("what"), call.get("period"))
            if tool == "documents":
                return self.documents(question)
            if tool == "calculate":
                return self.calc(call.get("expression"), grounded)
        except (ValueError, KeyError) as e:
            return ToolResult.of(tool or "?", call, f"{FAILED} {e}", ok=False)
        return ToolResult.of(str(tool), call, f"There is no tool {tool!r}.", ok=False)

    def _item(self, sku):
        item = self.store.get(sku) if sku else None
        if item is None:
            raise ValueError(f"no item {sku!r}")
        if self.question is not None and not names(item, self.question):
            raise ValueError(f"the question does not name {item.item!r}")  # a model's pick for "hammers"
        return item

    def stock(self, sku: str | None, place: str | None = None) -> ToolResult:
        try:
            item = self._item(sku)
        except ValueError:
            return ToolResult.of("stock", {"item": sku, "place": place}, reply.UNKNOWN_ITEM, ok=False)
        where = place if place and item.place(place) is not None else None
        args = {"item": sku, "place": place}
        return ToolResult.of("stock", args, reply.query_reply(item, where or place, self.language))

    def place(self, place: str | None) -> ToolResult:
        if not place:
            raise ValueError("no place given")
        rows, total = self.store.place_contents(place, MAX_LISTED + 1)
        return ToolResult.of("place", {"place": place}, reply.place_reply(place, rows, total, self.language),
                             ok=bool(rows))

    def low_stock(self, sku: str | None = None, place: str | None = None) -> ToolResult:
        if sku:
            items, total = low.low_among([self._item(sku)], MAX_LISTED + 1)
        elif place:
            rows, _n = self.store.place_contents(place, 500)
            items, total = low.low_among([i for i, _q in rows], MAX_LISTED + 1)
        else:
            items, total = self.store.low_stock(MAX_LISTED + 1)
        text = reply.low_stock_reply(items, total, self.language)
        if sku and not items:
            text = f"{text[:-1]}: {reply.query_reply(self._item(sku), None, self.language)}"
        return ToolResult.of("low_stock", {"item": sku, "place": place}, text)

    def records(self, sku: str | None, kind: str | None, what: str | None, period: str | None) -> ToolResult:
        kind = kind if kind in KINDS else "total"
        what = what if what in RECORD_WHATS else "used"
        if self.question is not None:
            said = [w for w, cue in WHAT_CUES.items() if cue.search(self.question.lower())]
            if len(said) == 1:
                what = said[0]
        if kind in ("total", "last", "who", "change", "rate") and not sku:
            raise ValueError(f"a {kind} question needs an item")
        if self.question is not None and not RECORD_CUES.search(self.question.lower()):
            raise ValueError("the question asks nothing about what was used, received or logged")
        if sku:
            self._item(sku)  # one the question names
        if kind in ("total", "top", "change") and not period:
            period = "this week"
        q = Question(kind, what, sku if kind not in ("top",) else None, period or None)
        ans = answer(self.store, q)
        return ToolResult.of("records", {"item": sku, "kind": kind, "what": what, "period": period},
                             records_reply.say(ans, self.store, self.language), ok=ans.ask is None)

    def documents(self, question: str) -> ToolResult:
        if self.docs is None:
            return ToolResult.of("documents", {}, reply.text("no_docs", self.language), ok=False)
        text, found, source = self.docs(question)
        return ToolResult.of("documents", {}, text, ok=found, source=source)

    def calc(self, expression: str | None, grounded: set[float]) -> ToolResult:
        used = numbers_in((expression or "").replace("x", " * "))
        stray = sorted(n for n in used if n not in grounded and n not in CONSTANTS)
        if stray:  # a number nobody said and no tool returned: the sum would state an invented fact
            raise ValueError(f"the numbers {', '.join(said_number(n) for n in stray)} were neither said nor looked up")
        value = calculate(expression or "")
        return ToolResult.of("calculate", {"expression": expression}, f"{expression} = {said_number(value)}.")
