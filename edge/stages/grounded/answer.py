"""A grounded turn: the model picks tools under a JSON schema, the box runs them, and the answer says
only what they returned.

1. What the box cannot know or do is told apart by its words (:mod:`edge.stages.grounded.scope`) and
   answered with a fixed sentence; no model runs. Small talk gets one short sentence of the model's,
   said only when it states no number, no action and no item (else a fixed friendly sentence).
2. **Round 1**: the model turns the question into at most :data:`MAX_CALLS` tool calls (constrained
   JSON, greedy; the item is one of the shortlist's SKUs or null; a call carries only the fields
   it needs, so the JSON is short: decoding is most of a turn's time on a CPU). The system prompt
   (the tools and worked examples) is the same for every question, so the engine's prefix cache
   keeps its KV state (``Grounded.cache`` says per round whether it was reused, restored or saved);
   the shortlist and the question come in the user message. A ``cannot`` call gets the honest
   sentence of its topic; ``small_talk`` a fixed friendly one.
3. **Round 2**, at most one of: for a what-if ("if we use 5 a day, how long will the bolts last")
   one arithmetic expression over the numbers returned and said, which the calculator runs (a
   number in it that nobody said and no tool returned refuses the calculation), said by the box
   with the facts it used; or, for results of different tools, a composed answer. A turn never runs
   more than :data:`MAX_ROUNDS` model rounds.
4. One result is said as the tool said it (the fast path's own sentence, no second round; a
   documents answer with its source, or the documents' decline). Several stock results (a
   comparison, a sum) are said by the box with which is more, or the total, computed from the store.
   Others are composed by the model and checked sentence by sentence as they are generated
   (:func:`edge.stages.grounded.check.grounded_or_plain`): a sentence that passes is handed to
   ``on_sentence`` at once (the voice loop speaks it while the next is generated); a first
   sentence with a number no tool returned or a claimed action, and the tools' own sentences are
   said instead; a later one, and the answer ends before it.

Nothing here writes: the tools read the store, the records and the documents only.
"""
from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from edge.llm.base import CancelToken, ContextOverflow, EngineError, GenerationRequest, generate
from edge.stages import reply
from edge.stages.grounded import scope
from edge.stages.grounded.check import claims_action, grounded_or_plain, plain, said_numbers
from edge.stages.grounded.tools import (
    RECORD_WHATS,
    TOOLS,
    Toolbox,
    ToolResult,
    fully_named,
    names,
    numbers_in,
    said_number,
)
from edge.stages.nlu.numbers import normalize_numbers
from edge.stages.sentences import SentenceSplitter, clean_answer, join_sentences
from edge.stock.questions import KINDS

log = logging.getLogger("edge.stages.grounded")

#: tool calls the first round may make ("more gloves or more goggles": two stock calls)
MAX_CALLS = 3
#: model rounds a turn may run: the calls, then a calculation or a composed answer
MAX_ROUNDS = 2
#: sentences a composed answer or small talk keeps (what :func:`edge.stages.sentences.two_sentences` keeps)
MAX_SENTENCES = 2
#: tokens for round 1's JSON (three calls of a few fields) and for a composed answer
CALLS_MAX_TOKENS = 120
COMPOSE_MAX_TOKENS = 64
TOPICS = tuple(scope.CANNOT)
#: a what-if: a calculation over the numbers looked up is asked for
WHAT_IF = re.compile(r"\b(?:if|would|suppose|pretend|how long|how many days|how many weeks|last us|enough for|"
                     r"per day|a day|each day|per week|a week|times|double|half|total of|altogether|combined|"
                     r"in total|sum|more than|fewer than|less than|difference)\b")

#: a question asking how something is done (the documents' to answer, or to decline)
HOW_TO = re.compile(r"\bhow (?:do|can|should|would) (?:i|we|you)\b|\bhow to\b|\bbest way\b|\bwhat(?:'s| is) the way\b")
#: a sum asked for ("combined", "in total")
SUM = re.compile(r"\b(?:combined|total|altogether|together|sum)\b")
#: a question about several items at once
SEVERAL = re.compile(r"\b(?:or|and|than|versus|vs|compare|combined|total|altogether|each|both)\b")

SYSTEM_PROMPT = """You answer questions from workers in a stock room by choosing tools. You never answer from your own knowledge.
Reply with JSON: {"calls": [...]} with one to three calls. Each call has the field tool and only the fields it needs of item, place, kind, what, period, topic.
Tools:
stock: how many of one item there are, and where. Set item (a sku from the list) and place if one was said.
place: what is stored in a bin, drawer or shelf. Set place, e.g. "bin 12".
low_stock: what is low or out of stock, or whether an item is low. Set item or place if said.
records: what was used, received, moved or counted over time. Set item, kind (total, last, entries, top, rate, change, who), what (used, received, moved, counted, any) and period (e.g. "this week", "yesterday", "last month").
documents: how to do something, settings, procedures, safety, what a manual says.
cannot: anything the stock room box cannot know or do. Set topic: machines, timer, order, weather, news, people, schedule or other.
small_talk: greetings, thanks, jokes.
Examples:
Question: do we have more gloves or more goggles
{"calls": [{"tool": "stock", "item": "GLV"}, {"tool": "stock", "item": "GOG"}]}
Question: which item did we use the most of this week
{"calls": [{"tool": "records", "kind": "top", "what": "used", "period": "this week"}]}
Question: when did the fuses last come in
{"calls": [{"tool": "records", "item": "FUS", "kind": "last", "what": "received"}]}
Question: anything running low in drawer 7
{"calls": [{"tool": "low_stock", "place": "drawer 7"}]}
Question: what torque do the wheel nuts need
{"calls": [{"tool": "documents"}]}
Question: who won the match last night
{"calls": [{"tool": "cannot", "topic": "news"}]}"""

SMALL_TALK_PROMPT = ("You are the friendly voice of a stock room's assistant. Reply to the worker's small talk in one "
                     "short, plain sentence. Never state a number, a stock level, an item or that you did anything.")
#: tokens for a small-talk reply (one short sentence; a joke may take two)
SMALL_TALK_MAX_TOKENS = 40
CALC_PROMPT = ("You write one arithmetic expression (numbers, + - * / and brackets) that answers the question from "
               "the facts. Use only numbers from the facts and the question. Reply with JSON: {\"expression\": \"...\"}")
COMPOSE_PROMPT = ("You answer a stock room worker in one or two short spoken sentences, using only the facts given. "
                  "Never add a number, an item or an action that is not in the facts. No lists, no markdown.")


def calls_schema(skus: list[str]) -> dict:
    """Round 1's output: ``{"calls": [call, …]}`` with 1–:data:`MAX_CALLS` calls; a call needs
    ``tool`` and may carry the other fields (in this order; a field left out is null)."""
    nullable = {"type": ["string", "null"]}
    call = {"type": "object", "properties": {
        "tool": {"enum": [*(t for t in TOOLS if t != "calculate"), "cannot", "small_talk"]},
        "item": {"enum": [*sorted(set(skus)), None]},
        "place": nullable,
        "kind": {"enum": [*KINDS, None]},
        "what": {"enum": [*RECORD_WHATS, None]},
        "period": nullable,
        "topic": {"enum": [*TOPICS, None]},
    }, "required": ["tool"], "additionalProperties": False}
    return {"type": "object", "properties": {"calls": {"type": "array", "items": call, "minItems": 1,
                                                       "maxItems": MAX_CALLS}},
            "required": ["calls"], "additionalProperties": False}


EXPRESSION_SCHEMA = {"type": "object", "properties": {"expression": {"type": "string"}},
                     "required": ["expression"], "additionalProperties": False}


@dataclass
class Grounded:
    """A grounded turn's outcome: the ``text`` said, its ``path`` (``cannot``, ``small_talk``,
    ``tools``, ``composed``, ``plain`` — a composed answer replaced —, ``unknown``, ``error``), the
    tool ``results``, the guard's findings (``check``), the model ``rounds`` run (at most
    :data:`MAX_ROUNDS`), the engine's prefix cache per round (``cache``: ``reused``, ``restored``,
    ``saved`` or ``none``, see :class:`edge.llm.llamacpp.LlamaCppEngine`) and ``streamed``: how many
    sentences of ``text`` were handed to ``on_sentence`` while the model still generated."""

    text: str
    path: str
    results: list[ToolResult] = field(default_factory=list)
    check: dict = field(default_factory=dict)
    rounds: int = 0
    calls: list[dict] = field(default_factory=list)
    cache: list[str] = field(default_factory=list)
    streamed: int = 0

    def explain(self) -> dict:
        return {"path": f"grounded:{self.path}", "rounds": self.rounds, "calls": self.calls,
                "tools": [{"tool": r.tool, "args": r.args, "ok": r.ok, "text": r.text} for r in self.results],
                **({"cache": self.cache} if self.cache else {}), **({"streamed": self.streamed} if self.streamed else {}),
                **({"check": self.check} if self.check else {})}


class RoundLimit(EngineError):
    """A turn asked for a model round beyond :data:`MAX_ROUNDS` (a bug of this module: answered as
    an engine failure, "I don't know that")."""


class GroundedAnswerer:
    """Grounded answers over ``engine`` (an :class:`edge.llm.base.Engine`, or None: the fixed
    sentences and tools only) and ``toolbox``. ``shortlister(text)``: the candidate items (``sku``,
    ``item``, ``location``) the prompt lists; their SKUs are the ``item`` values allowed."""

    def __init__(self, engine, toolbox: Toolbox, shortlister: Callable[[str], list], language: str = "en"):
        self.engine = engine
        self.toolbox = toolbox
        self.shortlister = shortlister
        self.language = language
        self.last_stats = None
        self._cache: list[str] = []

    def answer(self, text: str, on_sentence: Callable[[str], None] | None = None) -> Grounded:
        """The grounded answer to ``text``. ``on_sentence(sentence)``: called with each checked
        sentence of a composed answer or of small talk while the model still generates (the
        returned ``text`` then starts with them; ``streamed`` says how many). Raises nothing for
        engine failures (the answer then says it does not know)."""
        name = scope.topic(text)
        if name is not None:
            return Grounded(scope.cannot_text(name, self.language), "cannot")
        talk = scope.small_talk(text)
        if self.engine is None:
            return Grounded(scope.small_talk_text(talk, self.language) if talk else scope.cannot_text("other", self.language),
                            "small_talk" if talk else "cannot")
        self._cache = []
        try:
            g = self._small_talk(text, talk, on_sentence) if talk is not None else self._with_tools(text, on_sentence)
        except (EngineError, ContextOverflow) as e:
            log.warning("grounded answer failed: %s", e)
            g = Grounded(scope.cannot_text("other", self.language), "error", check={"error": str(e)})
        g.cache = list(self._cache)
        return g

    def _request(self, system: str, user: str, max_tokens: int, schema: dict | None) -> GenerationRequest:
        if len(self._cache) >= MAX_ROUNDS:
            raise RoundLimit(f"a grounded turn runs at most {MAX_ROUNDS} model rounds")
        return GenerationRequest([{"role": "system", "content": system}, {"role": "user", "content": user}],
                                 max_tokens=max_tokens, json_schema=schema, temperature=0.0)

    def _generate(self, system: str, user: str, max_tokens: int, schema: dict | None) -> str:
        out, self.last_stats = generate(self.engine, self._request(system, user, max_tokens, schema))
        self._cache.append(str(self.last_stats.extra.get("prefix_cache", "none")))
        return out

    def _sentences(self, system: str, user: str, max_tokens: int, fits: Callable[[str], bool],
                   on_sentence: Callable[[str], None] | None) -> tuple[list[str], bool]:
        """Generate and cut the answer into sentences as it comes: each one ``fits`` accepts goes to
        ``on_sentence`` at once; generation stops at the first that does not fit or after
        :data:`MAX_SENTENCES`. ``(sentences kept, whether one was refused)``; a last piece without
        its full stop counts when it is the only one (a short reply)."""
        request = self._request(system, user, max_tokens, None)
        kept: list[str] = []
        refused = False
        splitter = SentenceSplitter()
        stop = CancelToken()  # a refused or second sentence: the rest is not generated

        def take(raw: str) -> None:
            nonlocal refused
            sentence = clean_answer(raw)
            if stop.cancelled or not sentence:
                return
            if not fits(sentence):
                refused = True
                stop.cancel()
                return
            kept.append(sentence)
            if on_sentence is not None:
                on_sentence(sentence)
            if len(kept) >= MAX_SENTENCES:
                stop.cancel()

        for piece in self.engine.stream(request, stop):  # read to its end: the engine's figures come last
            for raw in splitter.feed(piece):
                take(raw)
        rest = splitter.flush()
        if rest and (not kept or rest[0].rstrip()[-1:] in ".!?"):
            take(rest[0])
        self.last_stats = self.engine.last_stats
        self._cache.append(str(self.last_stats.extra.get("prefix_cache", "none")))
        return kept, refused

    def _small_talk(self, text: str, kind: str, on_sentence=None) -> Grounded:
        """A short friendly reply in the model's words, said only when it states no fact: no number,
        no claimed action, no word of the site's items; else the fixed sentence of ``kind``."""
        shortlist = self.shortlister(text)

        def fits(sentence: str) -> bool:
            return not (said_numbers(sentence) or claims_action(sentence) or any(names(it, sentence) for it in shortlist))

        kept, refused = self._sentences(SMALL_TALK_PROMPT, text, SMALL_TALK_MAX_TOKENS, fits, on_sentence)
        if not kept:
            return Grounded(scope.small_talk_text(kind, self.language), "small_talk", rounds=1,
                            check={"replaced": True})
        return Grounded(join_sentences(kept), "small_talk", rounds=1, streamed=len(kept) if on_sentence else 0,
                        check={"cut": True} if refused else {})

    def _with_tools(self, text: str, on_sentence=None) -> Grounded:
        shortlist = self.shortlister(text)
        skus = [it.sku for it in shortlist]
        out = self._generate(SYSTEM_PROMPT, f"Items (sku: name; place):\n{_items(shortlist)}\nQuestion: {text}",
                             CALLS_MAX_TOKENS, calls_schema(skus))
        calls = _calls(out)
        rounds = 1
        if not calls:
            return Grounded(scope.cannot_text("other", self.language), "unknown", rounds=rounds)
        for c in calls:  # a refusal or small talk anywhere in the calls decides the answer
            if c.get("tool") == "cannot":  # the words named no topic (scope.topic ran first): the model's is a guess
                return Grounded(scope.cannot_text("other", self.language), "cannot", rounds=rounds, calls=calls)
        if all(c.get("tool") == "small_talk" for c in calls):
            return Grounded(scope.small_talk_text("greeting", self.language), "small_talk", rounds=rounds, calls=calls)
        grounded = set(numbers_in(normalize_numbers(text)))
        named = [it for it in shortlist if fully_named(it, text)]
        if named:  # items the question names in full: a call for another ("flex cable" for "cable ties") is dropped
            keep = {it.sku for it in named}
            calls = [c for c in calls if not c.get("item") or c["item"] in keep] or calls
        calls = _completed(calls, named, text)
        results = self._run(calls, text, grounded)
        ok = [r for r in results if r.ok]
        docs = [r for r in results if r.tool == "documents"]
        if docs and HOW_TO.search(text.lower()):  # "how do I …": the documents answer or decline, never the stock
            return Grounded(docs[0].text, "tools" if docs[0].ok else "unknown", results, rounds=rounds, calls=calls)
        if not ok and named and not HOW_TO.search(text.lower()):
            # the tools picked found nothing, and the question names items: their stock
            extra = [_stock_call(it.sku) for it in named[:MAX_CALLS]]
            calls += extra
            results += self._run(extra, text, grounded)
            ok = [r for r in results if r.ok]
        several = len(ok) > 1 and all(r.tool == "stock" for r in ok)  # compared or summed by the box below
        if ok and not several and WHAT_IF.search(text.lower()) and not any(r.tool == "documents" for r in ok):
            return self._what_if(text, named, calls, results, grounded)
        if not ok:
            return Grounded(plain(results) if _says_something(results) else scope.cannot_text("other", self.language),
                            "unknown", results, rounds=rounds, calls=calls)
        if len(ok) == 1:
            return Grounded(ok[0].text, "tools", results, rounds=rounds, calls=calls)
        if all(r.tool == "stock" for r in ok):  # a comparison or a sum: said by the box, never by the model
            return Grounded(self._compared(ok, text), "compared", results, rounds=rounds, calls=calls)
        return self._composed(text, ok, results, calls, on_sentence)

    def _what_if(self, text: str, named: list, calls: list[dict], results: list[ToolResult],
                 grounded: set[float]) -> Grounded:
        """Round 2 of a what-if: the model writes the expression, the calculator runs it, and the box
        says the facts it used and the result (no third round to word it)."""
        ok = [r for r in results if r.ok]
        stocked = {r.args.get("item") for r in ok if r.tool == "stock"}
        if len(named) == 1 and named[0].sku not in stocked:  # a what-if is over the stock: look it up
            calls.append(_stock_call(named[0].sku))
            results += self._run(calls[-1:], text, grounded)
            ok = [r for r in results if r.ok]
        # the stock is what a what-if changes: a record's number ("200 came in") is not its base
        used = [r for r in ok if r.tool == "stock"] or ok
        facts = "\n".join(f"- {r.text}" for r in used)
        expr = _expression(self._generate(CALC_PROMPT, f"Facts:\n{facts}\nQuestion: {text}", 48, EXPRESSION_SCHEMA))
        r = self.toolbox.run({"tool": "calculate", "expression": expr}, text, grounded)
        calls.append({"tool": "calculate", "expression": expr})
        results.append(r)
        if not r.ok:  # no calculation from known numbers: the facts looked up, said as the tools said them
            return Grounded(plain(used), "tools", results, rounds=2, calls=calls, check={"calculation": r.text})
        return Grounded(f"{plain(used)} {_spoken_sum(expr, r)}", "calculated", results, rounds=2, calls=calls)

    def _composed(self, text: str, ok: list[ToolResult], results: list[ToolResult], calls: list[dict],
                  on_sentence=None) -> Grounded:
        """Round 2 for results of different tools: the model words them, each sentence checked
        (:func:`grounded_or_plain`) before it is handed on."""
        facts = "\n".join(f"- {r.text}" for r in ok)
        found: dict = {"ungrounded": [], "claimed_action": False}

        def fits(sentence: str) -> bool:
            check = grounded_or_plain(sentence, ok, text)[1]
            if check["replaced"]:
                found.update(ungrounded=check["ungrounded"], claimed_action=check["claimed_action"], said=sentence)
            return not check["replaced"]

        kept, refused = self._sentences(COMPOSE_PROMPT, f"Facts:\n{facts}\nQuestion: {text}\nAnswer:",
                                        COMPOSE_MAX_TOKENS, fits, on_sentence)
        if not kept:
            return Grounded(plain(ok), "plain", results, {**found, "replaced": True}, 2, calls)
        return Grounded(join_sentences(kept), "composed", results, {**found, "replaced": False, "cut": refused}, 2,
                        calls, streamed=len(kept) if on_sentence else 0)

    def _compared(self, ok: list[ToolResult], text: str) -> str:
        """The stock results said, then which is more (or the total when asked), computed here from
        the store: only when the items are counted in the same unit."""
        items = [self.toolbox.store.get(r.args["item"]) for r in ok]
        said = plain(ok)
        items = [it for it in dict((it.sku, it) for it in items if it is not None).values()]
        if len(items) < 2 or len({it.unit.lower() for it in items}) > 1:
            return said if len(items) < 2 else f"{said} They are counted in different units."
        if SUM.search(text.lower()):
            total = sum(it.quantity for it in items)
            return f"{said} Together that is {said_number(total)}."
        ranked = sorted(items, key=lambda it: it.quantity, reverse=True)
        first, second = ranked[0], ranked[1]
        if first.quantity == second.quantity:
            return f"{said} That is the same number of each."
        return f"{said} So there are more {reply.plural(first.item)} than {reply.plural(second.item)}."

    def _run(self, calls: list[dict], text: str, grounded: set[float]) -> list[ToolResult]:
        """Run ``calls`` in order (small talk skipped); each result's numbers join ``grounded``."""
        results = []
        for c in calls:
            if c.get("tool") == "small_talk":
                continue
            r = self.toolbox.run(c, text, grounded)
            grounded |= r.numbers
            results.append(r)
        return results


def _stock_call(sku: str) -> dict:
    return {"tool": "stock", "item": sku, "place": None, "kind": None, "what": None, "period": None, "topic": None}


def _items(shortlist: list) -> str:
    """The shortlist as the prompt lists it: one line per SKU, its places joined (fewer prompt
    tokens than one line per place: the user message is decoded on every question)."""
    places: dict[str, list[str]] = {}
    label: dict[str, str] = {}
    for it in shortlist:
        label.setdefault(it.sku, it.item)
        if it.location and it.location not in places.setdefault(it.sku, []):
            places[it.sku].append(it.location)
    return "\n".join(f"{sku}: {label[sku]}; {', '.join(places[sku]) or '?'}" for sku in label) or "(none)"


_SPOKEN_OPS = {"+": " plus ", "-": " minus ", "*": " times ", "x": " times ", "/": " divided by "}


def _spoken_sum(expression: str, result: ToolResult) -> str:
    """The calculator's result as a sentence to say ("60 divided by 5 is 12."), from its own text
    ``"<expression> = <value>."``."""
    value = result.text.rsplit("=", 1)[-1].strip().rstrip(".")
    words = re.sub(r"\s+", " ", re.sub(r"[-+*/x]", lambda m: _SPOKEN_OPS[m.group()], expression.replace("(", "").replace(")", "")))
    return f"{words.strip()} is {value}."


def _completed(calls: list[dict], named: list, text: str) -> list[dict]:
    """``calls`` with a stock call for every item the question names in full that a comparison or
    sum ("more gloves or goggles", "fuses and drill bits combined") left out (at most :data:`MAX_CALLS`)."""
    asked = {c.get("item") for c in calls if c.get("tool") == "stock"}
    if not asked or not SEVERAL.search(text.lower()):
        return calls
    extra = [_stock_call(it.sku) for it in named if it.sku not in asked]
    return (calls + extra)[:max(MAX_CALLS, len(calls))]


def _calls(out: str) -> list[dict]:
    """The calls of round 1's JSON; none when it is not the object asked for."""
    try:
        obj = json.loads(out)
    except ValueError:
        return []
    calls = obj.get("calls") if isinstance(obj, dict) else None
    return [c for c in calls if isinstance(c, dict)][:MAX_CALLS] if isinstance(calls, list) else []


def _expression(out: str) -> str:
    try:
        obj = json.loads(out)
    except ValueError:
        return ""
    return str(obj.get("expression") or "") if isinstance(obj, dict) else ""


def _says_something(results: list[ToolResult]) -> bool:
    """Whether a failed result is still worth saying (a documents decline, an empty place), rather
    than a tool error meant for the model."""
    return any(not r.failed for r in results)
