"""The LLM fallback: a sentence the grammar path did not take → :class:`Intent`, through JSON that
is constrained while it is generated and validated after (case C14).

1. The prompt never holds the whole inventory (2,000 items overflow a 2,048-token context): it is
   built per sentence (:func:`build_system_prompt`) from what each intent means, worked examples
   of every intent made from the first items of the inventory (the same for every sentence, so the
   engine's KV prefix cache keeps them), and last a **shortlist** of at most
   :data:`SHORTLIST_MAX` candidate items (SKU, name, aliases, location). The shortlist comes from
   the caller (``parse(text, shortlist=[...])``) or the parser's ``shortlister(text)``; by default
   the grammar's item resolver's pick and candidates, filled up with the nearest names by
   ``rapidfuzz``. The prompt's size does not grow with the inventory (``bench/prompt_size.py``).
2. Generation is constrained to :func:`edge.stages.nlu.schema.generation_schema` of the shortlist's
   SKUs through
   ``GenerationRequest.json_schema`` (a llama.cpp grammar), greedy (temperature 0) with the
   engine's fixed seed, so the same sentence gives the same answer.
3. The text that comes back is parsed strictly (exactly one JSON object) and validated with
   ``jsonschema`` (:func:`edge.stages.nlu.schema.parse_and_validate`), then checked against the sentence:
   a logged quantity must be a number the sentence says (or 1 when it says none).
4. On any failure the model is asked once more, shown its output and what was wrong (a cut-off
   answer also gets twice the token budget). A second failure gives
   ``Intent("other", answer=NOT_UNDERSTOOD, extra={"failed_validation": True, "errors": [...]})``:
   nothing is ever logged from output that failed validation.
5. The direction of a log must be the one the sentence's own verbs say when they say one
   (``took``, ``handed out`` → out; ``received``, ``returned`` → in:
   :func:`edge.stages.nlu.grammar.text_direction`); the model's other pick is kept in
   ``extra["llm_direction"]``. SmolLM2-135M often says "in" for "I'm taking five drill bits".
6. The item must be one the sentence names: the grammar path's item resolver
   (:meth:`edge.stages.nlu.grammar.Grammar.resolve_item`) decides. When it finds one item, that SKU is used
   (``extra["llm_sku"]`` keeps the model's pick if it differed); several → ``sku=None`` and
   ``extra["candidates"]``; none → ``sku=None`` and ``extra["unknown_item"]``. A small model that
   picks a plausible SKU for an item nobody said cannot make a record that way.
7. A stock question is answered by the store, never by the model (:func:`asks_about_stock`): when
   the model calls one ``other`` (its answer may hold an invented number) or, for a "how many …"
   question, ``log_record``, it becomes ``query_stock`` with the resolved item (or ``unknown``);
   the model's answer is dropped (kept in ``extra["llm_answer_dropped"]``) and the dialog answers
   from the store or says it does not know the item. A stock question whose two attempts both
   failed validation is the same ``query_stock`` (``extra["llm_errors"]``), not "not understood".
8. A stock command (:func:`is_stock_command`: not a question, and it names an item or says a stock
   verb) is never answered in the model's words: when the model calls it ``other``, when both
   attempts fail, or when a log names no item at all, the answer is
   :data:`NOT_UNDERSTOOD_COMMAND` (nothing is written; a small model's free answer to "chuck the
   gloves on the order" was "chuck the gloves on.", as if done), and nothing of it is streamed.
   A log whose count or direction only the model gave (the sentence says no number, or only as a
   size: "6 mm drill bits"; or no direction word) carries ``extra["llm_guessed"]`` and is read back
   before it is written.
"""
from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterable

from rapidfuzz import fuzz, process

from edge.llm.base import GenerationRequest, GenerationStats, generate
from edge.stages.nlu.accounting import Utterance, counts_in
from edge.stages.nlu.filler import has_cjk
from edge.stages.nlu.grammar import Grammar, text_direction
from edge.stages.nlu.guards import fractions, guard
from edge.stages.nlu.guards_zh import guard_zh
from edge.stages.nlu.lexicon import LOG_WORDS, find_location, normalize_text
from edge.stages.nlu.numbers_zh import normalize_numbers_zh
from edge.stages.nlu.schema import INTENT_VALUES, IntentJsonError, generation_schema, parse_and_validate
from edge.stages.nlu.types import Intent
from edge.stages.nlu.zh import clean_zh, find_location_zh
from edge.stages.sentences import two_sentences

#: the reply when both attempts failed validation (same words as :data:`edge.stages.reply.NOT_UNDERSTOOD`)
NOT_UNDERSTOOD = "Sorry, I didn't understand that."
NOT_UNDERSTOOD_ZH = "对不起，我没听懂。"
#: the reply to a stock command the model did not turn into a valid intent (:func:`is_stock_command`):
#: never the model's own words, which may echo the command as if it were done
NOT_UNDERSTOOD_COMMAND = "Sorry, I didn't understand that, so nothing was logged. Please say it again, for example: we used 3 fuses."
NOT_UNDERSTOOD_COMMAND_ZH = "对不起，我没听懂，所以没有记录。请再说一次，例如：用了三个保险丝。"
#: tokens for the JSON around the answer. Measured with SmolLM2's tokenizer on the sample
#: inventory: 33 (undo, every slot null) to 55 (a log with the longest SKU, a 4-digit quantity and
#: a location); the answer budget comes on top of it
JSON_OVERHEAD_TOKENS = 64
#: attempts in all: the first and one retry (issue 3: "one retry, then I didn't understand")
ATTEMPTS = 2
#: most candidate items the prompt lists (the SKU enum of the generation schema is the same set)
SHORTLIST_MAX = 5

_INTENT_HELP = (
    "query_stock: the worker asks how many of an item there are, or whether or where it is stocked. "
    "Set sku.\n"
    "log_record: the worker reports that stock changed. direction is \"in\" when items were received, "
    "added, delivered or returned, \"out\" when they were used, taken, grabbed or given out. Set sku, "
    "quantity (a whole number) and direction.\n"
    "undo: the worker wants the last record taken back.\n"
    "other: anything else (small talk, general questions). Put a helpful reply of at most two short "
    "sentences in answer.\n"
    "Use null for every field that does not apply. location is the bin, drawer or shelf the worker "
    "said, else null.")


def _plural(name: str) -> str:
    return name if name.endswith("s") else name + "s"


def _cjk_name(item) -> str | None:
    return next((a for a in (item.item, *item.aliases) if has_cjk(a)), None)


def _row(obj: dict) -> str:
    return json.dumps({k: obj.get(k) for k in ("intent", "sku", "quantity", "direction", "location", "answer")},
                      ensure_ascii=False)


def _examples(items: list, language: str) -> list[tuple[str, dict]]:
    """(sentence, JSON) pairs for every intent, from the first items of the inventory."""
    if not items:
        return [("undo that", {"intent": "undo"}),
                ("what is the capital of France", {"intent": "other", "answer": "Paris is the capital of France."})]
    pick = [items[k % len(items)] for k in range(4)]

    def base(intent, it, **kw):
        return {"intent": intent, "sku": it.sku, **kw}

    if language == "zh" and any(_cjk_name(it) for it in items):
        zh = [it for it in items if _cjk_name(it)]
        pick = [zh[k % len(zh)] for k in range(4)]
        n = [_cjk_name(it) for it in pick]
        return [
            (f"{n[0]}还有多少", base("query_stock", pick[0])),
            (f"我们收到了十二个{n[1]}", base("log_record", pick[1], quantity=12, direction="in")),
            (f"刚才拿走了三个{n[2]}", base("log_record", pick[2], quantity=3, direction="out")),
            (f"{n[3]}放在哪里", base("query_stock", pick[3])),
            ("把刚才那条撤回", {"intent": "undo"}),
            ("今天星期几", {"intent": "other", "answer": "对不起，我不知道今天的日期。"}),
            ("讲个笑话", {"intent": "other", "answer": "螺栓对螺母说：没有你我就松了。"}),
        ]
    n = [it.item for it in pick]
    return [
        (f"could you check how many {_plural(n[0])} are left", base("query_stock", pick[0])),
        (f"a delivery of twelve {_plural(n[1])} just came in", base("log_record", pick[1], quantity=12, direction="in")),
        (f"I grabbed three {_plural(n[2])} for the job", base("log_record", pick[2], quantity=3, direction="out")),
        (f"where do we keep the {_plural(n[3])}", base("query_stock", pick[3])),
        (f"put down two {_plural(n[0])} as returned to {pick[0].location}",
         base("log_record", pick[0], quantity=2, direction="in", location=pick[0].location)),
        ("take back the last entry", {"intent": "undo"}),
        ("what's the capital of France", {"intent": "other", "answer": "Paris is the capital of France."}),
        ("tell me something funny", {"intent": "other",
                                     "answer": "Why did the bolt break up with the nut? It felt screwed."}),
    ]


def build_system_prompt(items: Iterable, language: str = "en",
                        examples: list[tuple[str, dict]] | None = None) -> str:
    """The system message: the task, the intents, worked examples (sentence → JSON line), and last
    the candidate items (one line per item: ``SKU: name; first alias; location``).

    ``items``: the shortlist, listed as given (the parser passes at most :data:`SHORTLIST_MAX`).
    ``examples``: the worked examples; default made from ``items``. Everything before the item
    lines depends on the examples only, so a fixed set keeps that prefix the same for every
    sentence. Raises nothing."""
    items = list(items)
    lines = ["You turn one sentence from a stock-room worker into a JSON object with the fields "
             "intent, sku, quantity, direction, location and answer.",
             "Intents:", _INTENT_HELP, "Examples:"]
    for sentence, obj in (examples if examples is not None else _examples(items, language)):
        lines.append(f"Sentence: {sentence}\nJSON: {_row(obj)}")
    if language == "zh":
        lines.append("The worker speaks Mandarin Chinese; answer in Chinese.")
    lines.append("Items the sentence may name (sku: name; other names; location); sku is one of these or null:")
    for it in items:  # one alias at most: a line's size does not depend on how many names an item has
        lines.append(f"{it.sku}: {it.item}; {(it.aliases or ('-',))[0]}; {it.location}")
    if not items:
        lines.append("(none: sku is null)")
    return "\n".join(lines)


_QUESTION_START = re.compile(r"^(?:how|do|does|are|is|where|whats|what|which|any|have|has|got|could you (?:check|tell)"
                             r"|can you (?:check|tell)|tell me|check)\b")
_COUNT_QUESTION = re.compile(r"^(?:how (?:many|much)|do we (?:still )?have|have we (?:still )?got|is there|are there"
                             r"|any)\b")
_STOCK_WORDS = re.compile(r"\b(?:stock|stocked|left|remaining|remain|inventory|on hand|in store|available|keep|kept"
                          r"|do we (?:still )?have|have we (?:still )?got|we got|we (?:still )?have)\b")
_STOCK_ZH = re.compile(r"多少|还有|库存|在哪|剩")
_WHERE_OR_COUNT = re.compile(r"\b(?:how (?:many|much)|where|do we|have we|is there|are there|any|got any)\b")


def asks_about_stock(text: str, names_item: bool) -> bool:
    """Whether ``text`` asks about stock: a question with stock words ("left", "in stock", "do we
    have"), or a how-many / where / is-there question about an item the inventory has
    (``names_item``: the item resolver found one or several). "How many legs does a spider have"
    and "what is the torque for M8 bolts" are not. Raises nothing."""
    if has_cjk(text):
        return bool(_STOCK_ZH.search(text))
    norm = normalize_text(text)
    asked = bool(_QUESTION_START.match(norm)) or text.rstrip().endswith("?")
    return asked and (bool(_STOCK_WORDS.search(norm)) or (names_item and bool(_WHERE_OR_COUNT.search(norm))))


def is_stock_command(text: str, names_item: bool) -> bool:
    """Whether ``text`` is a stock command rather than a question or small talk: not a question
    (no question word first, no question mark), and it names an inventory item (``names_item``:
    the item resolver found one or several) or says a stock verb ("used", "received", "log" …).
    "chuck the gloves on the order" is one; "tell me a joke" and "what is the torque for M8
    bolts" are not. Raises nothing."""
    if has_cjk(text):
        asked = text.rstrip().endswith(("?", "？", "吗", "呢")) or bool(_STOCK_ZH.search(text))
        return not asked and (names_item or text_direction(text) is not None)
    norm = normalize_text(text)
    if _QUESTION_START.match(norm) or text.rstrip().endswith("?"):
        return False
    return names_item or text_direction(text) is not None or bool(set(norm.split()) & LOG_WORDS)


def counts_question(text: str) -> bool:
    """Whether ``text`` opens as a "how many / do we have / is there" question (never a command
    to log). Raises nothing."""
    if has_cjk(text):
        return bool(_STOCK_ZH.search(text))
    return bool(_COUNT_QUESTION.match(normalize_text(text)))


def spoken_numbers(text: str) -> set[int]:
    """The whole numbers a sentence says, as digits or words (English or Chinese)."""
    if has_cjk(text):
        t = normalize_numbers_zh(text).lower()
        return {int(n) for n in re.findall(r"(?<![a-z0-9.])(\d+)(?![a-z0-9])", t)}
    return {int(t) for t in normalize_text(text).split() if t.isdigit()}


_INTENT_KEY = re.compile(r'"intent"\s*:\s*"([^"\\]*)"')
_ANSWER_KEY = re.compile(r'"answer"\s*:\s*"')
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class AnswerTap:
    """Reads the ``answer`` string out of the intent JSON while it is generated, so the voice loop
    can speak it before the object is complete.

    ``feed(chunk)`` returns the answer text decoded so far that was not returned before; nothing
    unless the object says ``"intent": "other"`` (a stock command's JSON is never spoken) and
    ``check_prefix(text)`` accepts the fields before the answer (given as a complete object with
    ``"answer": null``), so an object that will fail validation on those fields is not spoken. JSON
    string escapes are decoded (``\\n``, ``\\"``, ``\\uXXXX`` with surrogate pairs); an escape cut
    between two chunks waits for the next one. The fields come in schema order (the llama.cpp
    grammar keeps it: intent first, answer last), but the key is searched for, not assumed.
    """

    def __init__(self, check_prefix=None):
        self.buffer = ""
        self.sent = 0  # characters of the decoded answer already returned
        self.check_prefix = check_prefix or (lambda _text: True)
        self._prefix_ok: bool | None = None

    def feed(self, chunk: str) -> str:
        self.buffer += chunk
        m = _INTENT_KEY.search(self.buffer)
        if not m or m.group(1) != "other":
            return ""
        a = _ANSWER_KEY.search(self.buffer, m.end())
        if not a:
            return ""
        if self._prefix_ok is None:
            self._prefix_ok = self.check_prefix(self.buffer[:a.start()].rstrip().rstrip(",") + ', "answer": null}')
        if not self._prefix_ok:
            return ""  # the fields before the answer will fail validation: the retry decides, nothing spoken
        text = self._decode(a.end())
        new, self.sent = text[self.sent:], max(self.sent, len(text))
        return new

    def _decode(self, i: int) -> str:
        out: list[str] = []
        b = self.buffer
        n = len(b)
        while i < n:
            c = b[i]
            if c == '"':
                break
            if c != "\\":
                out.append(c)
                i += 1
                continue
            if i + 1 >= n:
                break  # the escape continues in the next chunk
            e = b[i + 1]
            if e == "u":
                if i + 6 > n:
                    break
                code = int(b[i + 2:i + 6], 16)
                if 0xD800 <= code < 0xDC00:  # a surrogate pair: wait for its second half
                    if i + 12 > n:
                        break
                    low = int(b[i + 8:i + 12], 16)
                    out.append(chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)))
                    i += 12
                    continue
                out.append(chr(code))
                i += 6
                continue
            out.append(_ESCAPES.get(e, e))
            i += 2
        return "".join(out)


def _guarded_quantity(quantity, text: str, extra: dict):
    """The model's count after the grammar's guards on the sentence itself (a negation, "about 3",
    "3 or was it 4", a minus): ``(quantity, refusal)``; a range or vague count keeps no number."""
    g = guard_zh(text) if has_cjk(text) else guard(fractions(normalize_text(text)), text)
    if g.refusal is None:
        return quantity, None
    extra["guards"] = list(getattr(g, "notes", []) or [g.refusal])
    if g.refusal == "negated" and g.told:
        extra["told_not_to"] = True
    if g.range is not None or getattr(g, "vague", False):
        return None, g.refusal
    return quantity, g.refusal


def _grounded_sku(sku: str | None, match, extra: dict) -> str | None:
    """The SKU the sentence names (``match``, the grammar's resolver) over the model's ``sku``:
    the one item it names, else None with ``extra["candidates"]`` or ``extra["unknown_item"]``
    (the model's differing pick kept in ``extra["llm_sku"]``)."""
    if match.sku is not None:
        if sku != match.sku:
            extra["llm_sku"] = sku
        return match.sku
    if match.candidates:
        extra["candidates"] = list(match.candidates)
    elif match.unknown is not None:
        extra["unknown_item"] = match.unknown
    if sku is not None:
        extra["llm_sku"] = sku
    return None


class LlmIntentParser:
    """Sentence → :class:`Intent` with an LLM, constrained, validated, retried once.

    Args:
        engine: an :class:`edge.llm.base.Engine` (e.g. :class:`edge.llm.llamacpp.LlamaCppEngine`).
        items: inventory items (``sku``, ``item``, ``location``, ``aliases``).
        language: ``en`` or ``zh`` (prompt examples, the refusal text).
        answer_max_tokens: budget for the ``answer`` of ``other``, tokens; the request allows
            :data:`JSON_OVERHEAD_TOKENS` more for the JSON around it.
        grammar: the grammar whose item resolver checks the SKU (built from ``items`` if None).
        shortlister: ``(text) -> list of items``, the candidates the prompt lists (the first
            :data:`SHORTLIST_MAX`); default :meth:`default_shortlist`.
    """

    def __init__(self, engine, items: Iterable, language: str = "en", answer_max_tokens: int = 48,
                 grammar: Grammar | None = None, shortlister: Callable[[str], list] | None = None):
        self.engine = engine
        self.items = list(items)
        self.language = language
        self.grammar = grammar or Grammar(self.items, language=language)
        self.shortlister = shortlister or self.default_shortlist
        self._by_sku = {it.sku: it for it in self.items}
        self._names = {}  # name or alias → sku, for the default shortlist's fuzzy fill
        for it in self.items:
            for name in (it.item, *it.aliases):
                self._names.setdefault(name.lower(), it.sku)
        self._name_keys = list(self._names)
        #: the prompt's worked examples, from the first items of the whole inventory (fixed)
        self.examples = _examples(self.items, language)
        #: the answers of the prompt's examples: a small model sometimes repeats one verbatim for
        #: any small talk (seen with SmolLM2-135M); such an answer counts as no answer
        self.example_answers = {o["answer"] for _, o in self.examples if o.get("answer")}
        self.max_tokens = JSON_OVERHEAD_TOKENS + answer_max_tokens
        #: the shortlist, its SKUs, schema and system prompt of the last :meth:`parse` (or :meth:`messages`)
        self.shortlist: list = []
        self.skus: list[str] = []
        self.schema = generation_schema([])
        self.system_prompt = build_system_prompt([], language, self.examples)
        #: per attempt of the last :meth:`parse`: ``{"output", "errors", "stats"}``
        self.attempts: list[dict] = []
        self.last_stats: GenerationStats | None = None

    def default_shortlist(self, text: str) -> list:
        """The grammar resolver's item (or candidates) for ``text``, filled up with the inventory
        names nearest to it (``rapidfuzz`` partial token-set ratio): :data:`SHORTLIST_MAX` items
        (all of a smaller inventory), so the prompt has the same size for any inventory. Raises nothing."""
        match = self.grammar.resolve_item(text)
        skus = [match.sku] if match.sku else list(match.candidates)
        query = normalize_text(text) if not has_cjk(text) else text
        if query and len(skus) < SHORTLIST_MAX:
            for name, _score, _ in process.extract(query, self._name_keys, scorer=fuzz.partial_token_set_ratio,
                                                   limit=4 * SHORTLIST_MAX):
                sku = self._names[name]
                if sku not in skus:
                    skus.append(sku)
                if len(skus) >= SHORTLIST_MAX:
                    break
        return [self._by_sku[s] for s in skus[:SHORTLIST_MAX] if s in self._by_sku]

    def use_shortlist(self, shortlist: Iterable) -> None:
        """Build the prompt and schema for ``shortlist`` (its first :data:`SHORTLIST_MAX` items)."""
        self.shortlist = list(shortlist)[:SHORTLIST_MAX]
        self.skus = [it.sku for it in self.shortlist]
        self.schema = generation_schema(self.skus)
        self.system_prompt = build_system_prompt(self.shortlist, self.language, self.examples)

    def messages(self, text: str, shortlist: Iterable | None = None) -> list[dict]:
        """The first attempt's chat messages for ``text`` (the prompt listing ``shortlist``, default
        ``shortlister(text)``)."""
        self.use_shortlist(self.shortlister(text) if shortlist is None else shortlist)
        return [{"role": "system", "content": self.system_prompt},
                {"role": "user", "content": f"Sentence: {text}\nJSON:"}]

    def check(self, output: str, text: str) -> dict:
        """Parse, validate and check ``output`` against the sentence ``text``; the JSON object.
        The SKU must be one of the current shortlist's (or null).

        Raises:
            IntentJsonError: not exactly one JSON object, a schema violation, or a logged quantity
                the sentence does not say.
        """
        obj = parse_and_validate(output, self.skus)
        if obj["intent"] == "log_record":
            said = spoken_numbers(text) or {1}
            if obj["quantity"] not in said:
                raise IntentJsonError([f"quantity: {obj['quantity']} is not a number the sentence says "
                                       f"({', '.join(map(str, sorted(said)))})"])
        return obj

    def is_stock_question(self, text: str) -> bool:
        """:func:`asks_about_stock` with the grammar's item resolver deciding whether an item is named."""
        match = self.grammar.resolve_item(text)
        return asks_about_stock(text, match.sku is not None or bool(match.candidates))

    def is_command(self, text: str) -> bool:
        """:func:`is_stock_command` with the grammar's item resolver deciding whether an item is named."""
        match = self.grammar.resolve_item(text)
        return is_stock_command(text, match.sku is not None or bool(match.candidates))

    def not_understood(self, text: str, extra: dict) -> Intent:
        """``other`` with the not-understood answer (:data:`NOT_UNDERSTOOD_COMMAND` for a stock
        command, else :data:`NOT_UNDERSTOOD`) and ``extra``."""
        if self.is_command(text):
            answer = NOT_UNDERSTOOD_COMMAND_ZH if self.language == "zh" else NOT_UNDERSTOOD_COMMAND
            extra = {**extra, "command_not_understood": True}
        else:
            answer = NOT_UNDERSTOOD_ZH if self.language == "zh" else NOT_UNDERSTOOD
        return Intent("other", source="llm", text=text, answer=answer, extra=extra)

    def _valid_prefix(self, obj_text: str) -> bool:
        try:
            parse_and_validate(obj_text, self.skus)
        except IntentJsonError:
            return False
        return True

    def parse(self, text: str, on_answer=None, shortlist: Iterable | None = None) -> Intent:
        """Understand ``text`` with the LLM; the prompt lists ``shortlist`` (the candidate items,
        at most :data:`SHORTLIST_MAX` used; default ``shortlister(text)``).

        Returns an :class:`Intent` with ``source="llm"``; after two failed attempts, intent
        ``other`` with the refusal answer and ``extra["failed_validation"] = True`` and
        ``extra["errors"]``. Raises what the engine raises (``edge.llm.base.EngineError``,
        ``ContextOverflow``).

        ``on_answer(text)``: called during the first attempt with each new piece of the ``answer``
        of an ``other`` object as it is generated (:class:`AnswerTap`), for speaking it early;
        never for a stock command's JSON.
        """
        self.attempts = []
        messages = self.messages(text, shortlist)
        if on_answer is not None and (self.is_stock_question(text) or self.is_command(text)):
            on_answer = None  # answered from the store, or a command: nothing of the model's is spoken
        max_tokens = self.max_tokens
        errors: list[str] = []
        for attempt in range(ATTEMPTS):
            request = GenerationRequest(messages, max_tokens=max_tokens, json_schema=self.schema, temperature=0.0)
            tap = None
            if on_answer is not None and attempt == 0:
                tap, parts = AnswerTap(self._valid_prefix), []
                for piece in self.engine.stream(request):
                    parts.append(piece)
                    if new := tap.feed(piece):
                        on_answer(new)
                output, stats = "".join(parts), self.engine.last_stats
            else:
                output, stats = generate(self.engine, request)
            self.last_stats = stats
            try:
                obj = self.check(output, text)
            except IntentJsonError as e:
                errors = e.errors
                if tap is not None and tap.sent:  # part of the answer went out already: no second opinion
                    self.attempts.append({"output": output, "errors": errors, "stats": stats})
                    return Intent("other", source="llm", text=text, answer=None,
                                  extra={"failed_validation": True, "errors": errors, "attempts": 1, "streamed": True})
                self.attempts.append({"output": output, "errors": errors, "stats": stats})
                if stats is not None and getattr(stats, "finish_reason", "") == "length":
                    max_tokens *= 2
                messages = messages + [
                    {"role": "assistant", "content": output},
                    {"role": "user", "content": "That reply was not accepted: " + "; ".join(errors)
                     + f". Reply with only the JSON object for the sentence: {text}\nJSON:"}]
                continue
            self.attempts.append({"output": output, "errors": [], "stats": stats})
            return self._intent(obj, text, attempt + 1)
        if self.is_stock_question(text):  # the store can still answer it: nothing of the model's output is used
            blank = {"intent": "query_stock", "sku": None, "quantity": None, "direction": None, "location": None,
                     "answer": None}
            intent = self._intent(blank, text, ATTEMPTS)
            return dataclasses.replace(intent, extra={**intent.extra, "llm_errors": errors})
        return self.not_understood(text, {"failed_validation": True, "errors": errors, "attempts": ATTEMPTS})

    def _intent(self, obj: dict, text: str, attempts: int) -> Intent:
        kind = obj["intent"]
        assert kind in INTENT_VALUES
        extra: dict = {"attempts": attempts}
        if kind == "undo":
            return Intent("undo", source="llm", text=text, extra=extra)
        match = self.grammar.resolve_item(text)
        named = match.sku is not None or bool(match.candidates)
        # a how-many or where question that names a stock place is about stock even when the item is
        # unknown ("how many hammers are in bin 5"): the dialog says it has none, the model's words go
        placed = self._location(text) is not None
        if (kind == "other" and asks_about_stock(text, named or placed)) or (kind == "log_record" and counts_question(text)):
            # a stock question: the store answers it (or the dialog says it does not know the item)
            extra["llm_intent"] = kind
            if obj.get("answer"):
                extra["llm_answer_dropped"] = obj["answer"]
            kind, obj = "query_stock", {**obj, "intent": "query_stock", "answer": None}
        if kind == "other" and self.is_command(text):  # the model's words may say it was done: never spoken
            return self.not_understood(text, {**extra, "llm_answer_dropped": obj.get("answer")})
        if kind == "other":
            answer = two_sentences(obj.get("answer") or "") or None
            if answer in self.example_answers:
                extra["example_answer_repeated"] = True
                answer = None
            return Intent("other", source="llm", text=text, answer=answer, extra=extra)
        sku = _grounded_sku(obj["sku"], match, extra)
        if sku is None and not match.candidates and match.unknown is None:
            # no content word names an item: nothing to ask about or log
            return self.not_understood(text, {**extra, "llm_intent": kind, "llm_sku": obj["sku"]})
        location = self._location(text)
        if obj.get("location") and obj["location"] != location:
            extra["llm_location"] = obj["location"]
        slots = {"candidates": tuple(extra.get("candidates", ())),
                 "unknown": extra.get("unknown_item") if sku is None and not extra.get("candidates") else None}
        if kind == "query_stock":
            return Intent("query_stock", sku=sku, location=location, source="llm", text=text, extra=extra, **slots)
        direction = obj["direction"]
        said = text_direction(text)
        if said is None and set(normalize_text(text).split()) & LOG_WORDS:
            said = "asked"  # "log 3 o-rings" says no direction: asked ("used or received?"), never guessed
        if said is not None and said != direction:
            extra["llm_direction"] = direction
            direction = None if said == "asked" else said
        # the model's count is the sentence's only when the sentence says that number, and not as a size
        # ("we used 6 mm drill bits": the 6 is no count); else it is read back before anything is written
        q = obj.get("quantity")
        counts = {float(n) for n in spoken_numbers(text)} if has_cjk(text) else counts_in(Utterance.of(text))
        own_q = q is not None and float(q) in counts
        guessed = [k for k, own in (("quantity", own_q), ("direction", said is not None)) if not own]
        if guessed:  # only the model said it: read back before anything is written
            extra["llm_guessed"] = guessed
        quantity, refusal = _guarded_quantity(obj["quantity"], text, extra)
        return Intent("log_record", sku=sku, quantity=quantity, direction=direction, refusal=refusal,
                      location=location, source="llm", text=text, extra=extra, **slots)

    @staticmethod
    def _location(text: str) -> str | None:
        """The location the sentence itself names (the model's ``location`` is not trusted)."""
        if has_cjk(text):
            return find_location_zh(clean_zh(normalize_numbers_zh(text)))[0]
        return find_location(normalize_text(text).split())[0]
