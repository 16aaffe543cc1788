"""Understanding: the grammar path for the common commands, the LLM for everything else.

``understand(text, confidence=None) -> Intent | None``:

1. Filler only ("the", "uh", "you", "Thank you.", "Thanks for watching!": what Whisper writes for
   silence or hum, case C09) → **None**: not a command; the pipeline treats it as no speech.
2. The template path (:mod:`edge.stages.nlu.grammar`: intent templates, guards, resolvers built
   from the inventory's names, aliases, families, sizes and places) answers in a few milliseconds.
3. A phrasing no template lists goes to the paraphrase matcher (:mod:`edge.stages.nlu.paraphrase`:
   the nearest exemplar sentence by sentence embedding picks the intent, the template path's
   resolvers fill the slots, a log's direction only from the utterance's words; English), when one
   is configured.
4. Anything neither takes goes to the LLM as constrained, validated JSON
   (:mod:`edge.stages.nlu.llm_intent`, case C14); for intent ``other`` the model's ``answer`` is the reply
   (at most two short sentences; a free answer is generated if the JSON one is empty).
5. A log (English) whose words say more counts than it holds ("we received 50 fuses and used 5")
   is refused as ``range`` (asked for one number), and one counted in pairs of an item counted in
   another unit ("a pair of gloves", boxes) has no count (asked): :mod:`edge.stages.nlu.said_counts`.
6. English, before and after the parse: a count corrected on its own the turn after a command ("actually
   it was 2", "no, 2") is ``undo`` with ``extra["amend"]`` (the dialog corrects the log the turn before
   wrote, or says why not); a test said first ("test: we used 3 fuses") and an item set aside or
   another item's whole name beside the change ("forget the washers, we used 3 fuses",
   :mod:`edge.stages.nlu.asides`) are refused as ``unexplained``; a sentence no parse took that names
   an item and a count and says why it is no change (a loan, a swap, another's stock, a place the store
   does not keep: :data:`SAID_WHY`) is refused with that reason rather than "not understood".
7. ``confidence`` (the transcript's, 0..1) is kept in ``extra["confidence"]``; a parsed quantity
   under :data:`LOW_CONFIDENCE` sets ``extra["low_confidence_quantity"] = True`` (the pipeline reads
   such a log back before writing it).
"""
from __future__ import annotations

import dataclasses
import logging
import re

from edge.errors import EdgeError
from edge.llm.base import ContextOverflow, EngineError, GenerationRequest
from edge.stages.grounded import scope
from edge.stages.nlu.accounting import Utterance, set_aside, size_not_count, taken_back, trailing, unexplained
from edge.stages.nlu.amend import amend_intent
from edge.stages.nlu.asides import another_named, dismissed, other_named, several_items
from edge.stages.nlu.filler import has_cjk, is_filler
from edge.stages.nlu.grammar import Grammar, text_direction
from edge.stages.nlu.guards import asks_yes_no
from edge.stages.nlu.leftovers import kind_not_had_zh, not_ours_zh, other_thing_zh, present_tense, zh_not_a_change
from edge.stages.nlu.lexicon import normalize_text
from edge.stages.nlu.llm_intent import SHORTLIST_MAX, LlmIntentParser
from edge.stages.nlu.paraphrase import Paraphraser, understand_paraphrase
from edge.stages.nlu.said_counts import counts_said, other_unit_zh, pairs_in_other_unit
from edge.stages.nlu.slots import WRITES
from edge.stages.nlu.types import Intent
from edge.stages.sentences import SentenceSplitter, answer_sentences, clean_answer, join_sentences, two_sentences

#: Transcript confidence below which a parsed quantity is read back before it is written.
#: The whisper engine's confidence is exp(mean token log-probability) (edge/stages/asr/whisper.py);
#: Whisper itself treats a decode with mean log-probability below -1.0 (exp → 0.37) as failed
#: (openai/whisper ``transcribe(logprob_threshold=-1.0)``). 0.6 (log-probability -0.51) is a
#: starting value between that failure point and clear speech: whisper tiny.en gives the shared
#: session recordings 0.45–0.84 (measured here, whole files with the wake phrase, which it mishears
#: and which pulls the figure down). Tune it per site and recognizer.
LOW_CONFIDENCE = 0.6
#: words of a stock count: a paraphrase that says them is not taken as a log
COUNT_WORDS = re.compile(r"\b(?:stock ?take|stock ?taking|stock count|re-?count(?:ed|ing)?|counted|counting|count)\b")
#: what a stock count says besides a counting word ("there are exactly 40", "set the M8 nuts to 40",
#: "we actually have 12", "22 left"): a paraphrase matched as a count that says none of these and
#: no :data:`COUNT_WORDS` is no count ("five M8 nuts from bin 60" is a log, or not understood)
COUNT_CUES = re.compile(r"\b(?:exactly|actually|really|real|left|remaining|set|update[sd]?|correct(?:ed|ion)?|"
                        r"measured|tally|physical|there (?:are|is|s)|theres|now (?:have|has|at)|should be)\b")
#: how a question starts (or a request to be told): a paraphrase taken as a stock question that starts
#: otherwise, and says a count and a direction, is a log ("knocked off a litre of brake fluid …")
QUESTION_START = re.compile(r"^\W*(?:(?:hey|ok|okay|so|and|um|uh|please)\W+)*(?:how|what|whats|where|wheres|which|who|"
                            r"when|why|do|does|did|is|are|was|were|have|has|any|anything|can|could|would|got|tell|"
                            r"check|show|list|give|find|look)\b")
_WH_WORD = re.compile(r"\b(?:how|what|whats|where|wheres|which)\b")
#: what a paraphrased undo must say: a word that takes a record back ("revert it", "that last entry was a mistake")
UNDO_SAID = re.compile(r"\b(?:undo|undid|delete|remove|scratch|revert|reverse|cancel|roll ?back|erase|strike|mistake|"
                       r"wrong|incorrect|not right|back (?:\w+ )?out|take (?:\w+ ){0,2}?(?:back|off|out)|took (?:\w+ ){0,2}?back|"
                       r"void|unlog|rub (?:\w+ )?out|cross (?:\w+ )?out|didn'?t mean)\b")
#: a count said loosely: "a couple of boxes" is taken as 2 but read back before a log writes it
LOOSE_COUNT = re.compile(r"\bcouple\b")
#: a test said before a command: no change happened ("test: …", "this is a test, …", "testing testing, we used …")
_TEST_FIRST = re.compile(r"^\W*(?P<words>(?:(?:this is|that is|thats|that's|its|it's) )?(?:(?:just|only) )?(?:an? )?"
                         r"(?:test(?:ing)?|trial|practice|rehearsal|demo|demonstration|simulation|dry run)"
                         r"(?: (?:test(?:ing)?|run|only|one|two|three|\d+))*)"
                         r"(?:\s*[,:;.!?-]+\s*|\s+(?=(?:we|i|log|add|record|undo)\b))(?P<rest>\w.*)$", re.IGNORECASE)
#: why a sentence no parse took is no change, said rather than "not understood" (:meth:`Understanding._why_not`)
SAID_WHY = frozenset({"aside", "other_item", "someones", "loan", "swap", "place"})
log = logging.getLogger("edge.stages.nlu")
#: Fewest words the paraphrase matcher and the documents judge; shorter utterances are the templates'
MIN_WORDS_PARAPHRASE = 2
MIN_WORDS_DOCS = 3

SYSTEM_PROMPT = (
    "You are the voice assistant of a workshop stock room. Answer in at most two short, plain "
    "sentences that are easy to speak aloud. No lists, no markdown.")
SYSTEM_PROMPT_ZH = "你是车间库房的语音助手。用不超过两句简短、口语化的中文回答。不要列表，不要格式。"

#: The answer when a question does not fit the LLM's context window even after trimming (case C10).
TOO_LONG = "That question is too long for me. Please ask it in fewer words."
TOO_LONG_ZH = "这个问题太长了，请说得简短一些。"

#: arithmetic a template's answer does not do: a rate, a duration, a sum, a comparison, a multiple
ARITHMETIC = re.compile(r"\b(?:a|per|each|every) (?:day|week|month|shift|job)\b|\bhow (?:many|much) (?:days|weeks|jobs|"
                        r"shifts|more)\b|\bhow long\b|\bdouble\b|\bhalf of\b|\btwice\b")
#: a sum or comparison: beyond a template only when it is over several items (one item's total over its
#: places is the template's answer)
SEVERAL_CUES = re.compile(r"\bcombined\b|\bin total\b|\baltogether\b|\btotal of\b|\bsum of\b|\bmore \w+(?: \w+)? "
                          r"(?:or|than)\b|\b(?:fewer|less) \w+(?: \w+)? than\b|\bmore of\b|\bcompare\b|\bof each\b")
#: a what-if said as a condition ("what would the total be if we received 100 more")
IF_WOULD = re.compile(r"\bif\b.*\bwould\b|\bwould\b.*\bif\b")
#: a request to be told, which names an item without a question word ("I need to know the number of spanners")
ASKED = re.compile(r"\b(?:i need to know|i want to know|i'd like to know|tell me|let me know|find out|look up|"
                   r"give me (?:a|the) (?:rundown|number|count|figure))\b")
HOW_MANY = re.compile(r"\bhow (?:many|much)\b|\bwhat would\b|\bremain")
#: a question about when something last happened (the records answer it, never the stock now)
WHEN_LAST = re.compile(r"^\W*when\b|\blast (?:taken|used|came|received|delivered|logged|moved|counted|ordered)\b")


#: words that make a second equal count another lot, not the first said again ("3 and 3 more", "再用了三个")
_ANOTHER_LOT = re.compile(r"\b(?:more|another|again|other|extra|second|also|too|each|both|plus)\b|再|又|另|还")


def restated(intent: Intent, text: str) -> bool:
    """Whether a log of several parts says one item's same count and direction twice with nothing
    making it another lot ("we used 3 fuses, 3 fuses", "three fuses three fuses", "用了三个保险丝和三个保险丝"):
    a restatement (3) or two lots (6) is not guessed."""
    seen = set()
    for p in intent.parts:
        key = (p.sku or p.unknown, p.quantity, p.direction)
        if key[0] and p.quantity is not None and key in seen:
            return _ANOTHER_LOT.search(text.lower()) is None
        seen.add(key)
    return False


def _once_or_twice(intent: Intent, text: str) -> Intent:
    """A log that says one count twice (:func:`restated`) as one part with its count asked (``range``)."""
    if intent.intent != "log_record" or not restated(intent, text):
        return intent
    return dataclasses.replace(intent.parts[0], quantity=None, refusal="range", text=text,
                               explain={**intent.explain, "restated": f"{intent.parts[0].quantity} twice"})


def _unanswered(intent: Intent) -> bool:
    """A template's reading that answers nothing: a records question with no fields it could read
    ("I can't answer that one from the records"), an item nobody stocks, or an order refused as a log
    (the box orders nothing: said so when the words ask it to)."""
    return (intent.intent == "ask_records" and not intent.extra.get("records")) or intent.refusal == "order" or bool(
        intent.unknown and not intent.sku and not intent.candidates and not intent.parts)


def _asks(text: str) -> bool:
    """``text`` is said as a question: a question mark, a question word ("bearings 6204, what have we got"),
    or it starts like one (:data:`QUESTION_START`)."""
    return "?" in text or bool(QUESTION_START.match(text.lower()) or _WH_WORD.search(text.lower()))


def accounted(intent: Intent, utt: Utterance, names=None) -> Intent:
    """``intent`` when its parse explains every word of ``utt`` that would change a record; else the
    same intent refused as ``unexplained`` (``extra["unexplained"]``: ``{"kind", "words"}``, see
    :mod:`edge.stages.nlu.accounting`), its count dropped when the only number said is a size (the
    dialog asks how many). ``names(sku)``: the item's names as normalized token tuples. Raises nothing."""
    # a Mandarin correction the guards left unresolved ("3个保险丝，不对，是钻头": the item corrected) is said as such
    # and so is a word that explains why more counts were heard than held ("we took 3 fuses, John took 2 …",
    # "… 2 days ago"): said, rather than asking for one number
    several = bool(intent.extra.get("several_counts"))
    if intent.refusal not in (None, "negated", "hearsay") and not (intent.refusal == "correction" and has_cjk(utt.raw)) \
            and not several:
        return intent
    found = unexplained(intent, utt, names)
    if found is not None and several and found.kind not in ("someone", "time"):
        return intent  # several counts heard for one: one number is asked
    if found is not None:
        return refused_unexplained(intent, found.kind, found.words)
    if size_not_count(intent, utt):  # "we used 6 mm drill bits": the 6 is the size; how many is asked
        return dataclasses.replace(intent, quantity=None, extra={**intent.extra, "size_not_count": True},
                                   explain={**intent.explain, "size_not_count": intent.quantity})
    return intent


def _doubtful(intent: Intent, utt: Utterance, confidence: float | None) -> Intent:
    """A log to be read back before it is written: "a couple of" (``loose_count``: the 2 it was taken
    as is said back), or a change typed in the present tense ("we use 3 fuses": a habit, or done?);
    heard speech in the present tense logs (recognition drops the "d" of "we used")."""
    if intent.intent != "log_record":
        return intent
    if intent.quantity == 2 and LOOSE_COUNT.search(utt.raw.lower()):
        intent = dataclasses.replace(intent, extra={**intent.extra, "loose_count": True})
    said = present_tense(utt.norm) if confidence is None and intent.refusal is None and not has_cjk(utt.raw) else None
    return _read_back(intent, said) if said else intent


def _read_back(intent: Intent, why: str) -> Intent:
    """``intent`` (and its parts) marked to be read back before it is written (``extra["read_back"]``)."""
    parts = tuple(dataclasses.replace(p, extra={**p.extra, "read_back": why}) for p in intent.parts)
    return dataclasses.replace(intent, parts=parts, extra={**intent.extra, "read_back": why})


def refused_unexplained(intent: Intent, kind: str, words: str) -> Intent:
    """``intent`` refused as ``unexplained`` (nothing written; the dialog says ``kind`` and ``words``)."""
    why = {"kind": kind, "words": words}
    parts = tuple(dataclasses.replace(p, refusal="unexplained") for p in intent.parts)
    return dataclasses.replace(intent, refusal="unexplained", parts=parts, extra={**intent.extra, "unexplained": why},
                               explain={**intent.explain, "unexplained": why})


class SentenceGate:
    """Passes an answer's complete sentences to ``on_sentence`` as the text arrives, cut and cleaned
    as :func:`answer_sentences` does: at most ``limit`` (what :func:`two_sentences` keeps). At a
    sentence of a prompt example's answer (a small model sometimes repeats one) it stops passing
    sentences on, so the rest is spoken after the answer is complete, in order."""

    def __init__(self, on_sentence, example_answers=(), limit: int = 2):
        self.on_sentence = on_sentence
        self.limit = limit
        self.skip = {s for a in example_answers for s in answer_sentences(a)[0]}
        self.given: list[str] = []
        self.restart()

    def restart(self) -> None:
        """A new answer (the previous one's unfinished sentence is dropped)."""
        self.splitter = SentenceSplitter()
        self.closed = False

    def feed(self, piece: str) -> None:
        for raw in self.splitter.feed(piece):
            sentence = clean_answer(raw)
            if self.closed or not sentence:
                continue
            if sentence in self.skip or len(self.given) >= self.limit:
                self.closed = True
                continue
            self.given.append(sentence)
            self.on_sentence(sentence)

    def whole(self, text: str) -> None:
        """A whole answer at once (its last sentence included): its sentences passed on as :meth:`feed` does."""
        self.feed(text)
        self.feed_rest()

    def feed_rest(self) -> None:
        for raw in self.splitter.flush():
            sentence = clean_answer(raw)
            if sentence and not self.closed and len(self.given) < self.limit and sentence not in self.skip:
                self.given.append(sentence)
                self.on_sentence(sentence)


class Understanding:
    """Filler check, grammar first, then the LLM.

    Args:
        items: inventory items (:class:`edge.stock.store.Item`) the grammar and the LLM prompt are built from.
        llm: an :class:`edge.llm.base.Engine` (or an :class:`edge.llm.chain.EngineChain`), or None
            for the grammar path only. ``last_generation`` holds the last answer's
            :class:`edge.llm.base.GenerationStats`.
        max_tokens: answer budget for the LLM, in tokens (the JSON path adds its own overhead).
        temperature: for the free answer of ``other`` (the JSON path is always greedy).
        language: ``en`` or ``zh`` (settings ``language``): number and grammar rules, prompt.
        site_dir: the site's folder of intent template files (``<config dir>/intents``), or None.
        paraphraser: a :class:`edge.stages.nlu.paraphrase.Paraphraser`, or a function returning one
            (called at the first utterance the templates do not take, or by :meth:`warm`), or None
            for no paraphrase path. A factory that raises leaves the path off (logged).
    Raises:
        ValueError: unknown ``language``.
        edge.stages.nlu.templates.TemplateError: a site template file is unreadable or wrong.
    """

    def __init__(self, items, llm=None, max_tokens: int = 48, temperature: float = 0.2, language: str = "en",
                 site_dir=None, paraphraser=None):
        self.language = language
        self._paraphraser = paraphraser
        #: the site's documents (``finds(text)``, ``answer(text)``: :class:`edge.stages.docs.desk.DocsDesk`)
        #: or None; a free question they answer becomes ``ask_docs`` instead of going to the LLM
        self.docs = None
        #: answers a question the templates do not take through the box's tools
        #: (:class:`edge.stages.grounded.answer.GroundedAnswerer`), or None: the model's free answer
        self.grounded = None
        self.site_dir = site_dir
        self.llm = llm
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.last_generation = None
        self.withheld: str | None = None  # set by the governor when hot: the LLM is not used, this is said
        self.rebuild(items)

    def rebuild(self, items) -> None:
        """Rebuild the grammar and the LLM prompt after the inventory changed."""
        self.items = list(items)
        self.grammar = Grammar(self.items, language=self.language, site_dir=self.site_dir)
        self.shortlist = self.grammar.shortlist
        self._by_sku = {it.sku: it for it in self.items}
        self._name_tokens: dict[str, tuple[tuple[str, ...], ...]] = {}
        if isinstance(self._paraphraser, Paraphraser):
            self._paraphraser.set_items(self.items)
        self.llm_intent = None
        if self.llm is not None:
            self.llm_intent = LlmIntentParser(self.llm, self.items, self.language, self.max_tokens, self.grammar,
                                              shortlister=self.llm_shortlist)

    def name_tokens(self, sku: str) -> tuple[tuple[str, ...], ...]:
        """The item's name and aliases in the normal form, one token tuple each (made once per item)."""
        got = self._name_tokens.get(sku)
        if got is None:
            it = self._by_sku.get(sku)
            got = tuple(tuple(normalize_text(n).split()) for n in ((it.item, *it.aliases) if it else ()))
            self._name_tokens[sku] = got
        return got

    def llm_shortlist(self, text: str) -> list:
        """The items the LLM prompt lists for ``text``: the resolver's item (or its candidates) first,
        then the FTS5 shortlist (:class:`edge.stages.nlu.shortlist.Shortlist`), at most
        :data:`edge.stages.nlu.llm_intent.SHORTLIST_MAX`. A bounded lookup; raises nothing."""
        match = self.grammar.resolve_item(text)
        skus = [match.sku] if match.sku else list(match.candidates)
        picked = [self._by_sku[s] for s in skus if s in self._by_sku][:SHORTLIST_MAX]
        for it in self.shortlist.shortlist(text, SHORTLIST_MAX):
            if len(picked) >= SHORTLIST_MAX:
                break
            if all(it.sku != p.sku for p in picked):
                picked.append(it)
        return picked

    def paraphraser(self) -> Paraphraser | None:
        """The paraphrase matcher, loaded now if it was given as a factory; None when off."""
        p = self._paraphraser
        if p is not None and not isinstance(p, Paraphraser):
            try:
                p = p()
                p.set_items(self.items)
            except (EdgeError, OSError, ValueError) as e:  # no encoder installed: templates and LLM only
                log.warning("paraphrase path off: %s", e)
                p = None
            self._paraphraser = p
        return p

    def warm(self) -> None:
        """Load what is loaded lazily (the paraphrase matcher), so the first turn does not wait."""
        self.paraphraser()

    def fill_slots(self, intent_name: str, text: str, direction: str | None = None) -> Intent | None:
        """The deterministic resolvers' slots for ``intent_name`` picked elsewhere (the paraphrase
        matcher): :meth:`edge.stages.nlu.grammar.Grammar.fill_slots`. Raises nothing."""
        return self.grammar.fill_slots(intent_name, text, direction)

    def completeness(self, text: str) -> tuple[str, Intent | None]:
        """Whether the partial transcript ``text`` is a whole command, by the grammar alone (no LLM):
        :meth:`edge.stages.nlu.grammar.Grammar.completeness`. Raises nothing."""
        return self.grammar.completeness(text)

    def understand(self, text: str, confidence: float | None = None, on_sentence=None,
                   llm: bool = True) -> Intent | None:
        """``text`` → :class:`Intent`, or None when ``text`` is only filler (see module doc).

        ``confidence``: the transcript's confidence 0..1, or None when the recognizer gives none.
        Never returns a ``log_record`` from LLM output that failed validation. Raises nothing for
        engine failures (``EngineError`` → intent ``other`` without answer; a question too long
        for the context → :data:`TOO_LONG`).

        ``on_sentence(sentence)``: called with each complete sentence of an LLM answer while it is
        still being generated (at most the two the answer keeps; none that repeats a prompt
        example), so the voice loop can speak the first one early. The returned intent's
        ``answer`` is the whole answer; its sentences past those already given are the caller's.

        ``llm=False``: the grammar only (an utterance the hard cap closed: a TV, not a person asking);
        what it does not understand is None, and the LLM is not called.
        """
        if is_filler(text):
            return None
        utt = Utterance.of(text)
        # "actually it was 2" the turn after a log (that record's count, or nothing); "test: we used 3 fuses"
        # (nothing written, the reply says why)
        said = (self._said_after(utt, confidence, on_sentence, llm)
                or self._test_first(utt, confidence, on_sentence, llm)) if self.language == "en" else None
        if said is not None:
            return said
        back = taken_back(utt)
        if back is not None:  # "we used 3 fuses, scratch that": nothing is written
            return Intent("cancel", source="template", text=text, explain={"path": "taken back", "words": back})
        aside = (set_aside(utt) or trailing(utt)) if self.language == "en" else None
        if aside is not None:  # "why did we use 3 fuses? we needed them. log 3 fuses used": the last one
            return self._beside_aside(aside, confidence, on_sentence, llm)
        intent = self.grammar.parse(text)
        if intent is None and not llm:
            return None
        grounded = self.grounded is not None and self.language == "en" and not has_cjk(text)
        if grounded and (intent is None or _unanswered(intent)):  # "what's in the news": not a records question
            intent = self._out_of_scope(text) or intent
        if intent is None:  # "we borrowed 3 fuses": not understood, but said why nothing is logged
            intent = self._paraphrase(text) or self._why_not(text, utt)
        if grounded and llm and not self.withheld and intent is not None and self._beyond(intent, utt):
            intent = self._grounded(text, on_sentence)  # a comparison, a sum, a what-if: the tools and a calculation
        # a free question of a few words goes to the documents; "8" or "yes" alone never does
        if intent is None and self.docs is not None and len(text.split()) >= MIN_WORDS_DOCS and self.docs.finds(text):
            intent = Intent("ask_docs", source="docs", text=text, explain={"path": "docs"})
        if intent is None:
            intent = self._llm(text, on_sentence)
        if intent.intent == "query_stock" and intent.source != "template" and self.grammar.timed(text):
            # the matcher or the model read a question over a time as a stock question: never the stock now
            intent = self.grammar.records.cannot(text, None)
        if intent.intent == "log_record" and self.language == "en" and not has_cjk(text):
            intent = self._counts_checked(intent, text)  # more counts said than held: one number is asked
        intent = self._moved_counts(intent, text)  # "moved 3 fuses and 2 drill bits": one move holds one count
        intent = _once_or_twice(intent, text)  # "3 fuses, 3 fuses": one lot said again, or two? asked
        intent = self._accounted_zh(intent, utt) if has_cjk(text) else self._asides(
            accounted(intent, utt, self.name_tokens), utt)
        intent = _doubtful(intent, utt, confidence)
        if confidence is not None:
            extra = {**intent.extra, "confidence": confidence}
            if intent.quantity is not None and confidence < LOW_CONFIDENCE:
                extra["low_confidence_quantity"] = True
            intent = dataclasses.replace(intent, extra=extra)
        return intent

    def _accounted_zh(self, intent: Intent, utt: Utterance) -> Intent:
        """:func:`accounted` for Mandarin, and what only Mandarin needs: a sentence no parse took that
        says a use how often or still to come ("每天用三个保险丝", "明天要用") is said to be not logged;
        a write of another thing or of stock not ours (:meth:`_not_this_stock_zh`) is refused; a count
        in another measure word than the item's unit ("三盒保险丝" of pcs) is asked."""
        if intent.intent == "other" and not intent.answer:
            why = zh_not_a_change(utt.norm)
            if why is not None:
                intent = refused_unexplained(Intent("log_record", source=intent.source, text=utt.raw), *why)
        why = self._not_this_stock_zh(intent, utt)
        if why is not None:
            return refused_unexplained(intent, *why)
        intent = accounted(intent, utt, self.name_tokens)
        if intent.intent == "log_record" and intent.parts:  # "三个手套和两个保险丝": each part's own measure word
            intent = dataclasses.replace(intent, parts=tuple(self._unit_zh(p, utt) for p in intent.parts))
        elif intent.intent == "log_record":
            intent = self._unit_zh(intent, utt)
        return intent

    def _why_not(self, text: str, utt: Utterance) -> Intent | None:
        """A sentence no template or exemplar took that, read as a log (:meth:`fill_slots`), names an item
        and a count and says why it is no change of the stock (an item set aside, another's stock, a loan,
        a swap, a place the store does not keep: :data:`SAID_WHY`): that refusal, so the reply says why
        nothing was logged; None otherwise (a question, the LLM's turn, or not understood)."""
        said = self.language == "en" and not has_cjk(text) and not _asks(text)  # a question is the LLM's to answer
        got = self.fill_slots("log_record", text) if said else None
        if got is None or got.intent != "log_record" or not (got.sku or got.parts) or not utt.numbers:
            return None
        got = self._asides(accounted(got, utt, self.name_tokens), utt)
        return got if got.refusal == "unexplained" and got.extra["unexplained"]["kind"] in SAID_WHY else None

    def _test_first(self, utt: Utterance, confidence, on_sentence, llm: bool) -> Intent | None:
        """A command said after "test" ("test: we used 3 fuses", "this is a test, …", "just testing, …"):
        refused as ``unexplained`` (``test``) when the rest is a write; the rest's intent when it is no
        write ("testing, how many fuses"); None when no test is said first. English."""
        m = _TEST_FIRST.match(utt.raw)
        if m is None or has_cjk(utt.raw):
            return None
        rest = self.understand(m.group("rest"), confidence, on_sentence, llm)
        if rest is not None and (rest.intent in WRITES or rest.intent == "undo"):
            return refused_unexplained(rest, "test", m.group("words").strip())
        return rest

    def _said_after(self, utt: Utterance, confidence, on_sentence, llm: bool) -> Intent | None:
        """:func:`edge.stages.nlu.amend.amend_intent` with this understanding's item resolver, and the
        whole command said with it understood as any other."""
        return amend_intent(utt, self.grammar.resolve_item,
                            lambda text: self.understand(text, confidence, on_sentence, llm))

    def _asides(self, intent: Intent, utt: Utterance) -> Intent:
        """A write said beside an item set aside or another item's whole name (:mod:`edge.stages.nlu.asides`):
        refused as ``unexplained`` (``aside``, ``other_item``): the count is never given to either."""
        if intent.intent not in WRITES or intent.refusal not in (None, "hearsay", "range", "correction", "fraction"):
            return intent  # (the others write nothing whatever is answered)
        index = self.grammar.index
        words = dismissed(utt.norm, index.words)
        if words:
            return refused_unexplained(intent, "aside", words)
        used = {s for p in (intent.parts or (intent,)) for s in ((p.sku,) if p.sku else p.candidates)}
        if not used:  # no item understood: nothing is written without one ("I don't have fuse holders")
            return intent
        other = other_named(utt.tokens, index.phrases, used, {w for s in used for w in index.name_words.get(s, ())})
        return refused_unexplained(intent, "other_item", other) if other else intent

    def _unit_zh(self, intent: Intent, utt: Utterance) -> Intent:
        """``intent`` marked ``other_unit`` when its count was said in another measure than its item's."""
        said = other_unit_zh(utt.norm, intent.quantity, self._by_sku[intent.sku].unit) \
            if intent.sku in self._by_sku else None
        return intent if said is None else dataclasses.replace(intent, extra={**intent.extra, "other_unit": said})

    def _not_this_stock_zh(self, intent: Intent, utt: Utterance) -> tuple[str, str] | None:
        """A Mandarin write that is no change of this stock as parsed, whatever the guards asked
        (a count asked for after "三四个" would still be written to the wrong thing): the item's name
        glued to another noun (保险丝盒, :func:`other_thing_zh`), or borrowed, someone else's, all
        but the count, what is left (:func:`not_ours_zh`), or another kind of it (乳胶手套,
        :func:`kind_not_had_zh`). ``(kind, words)`` or None."""
        if intent.intent not in WRITES or intent.refusal in ("unexplained", "negated", "already_done"):
            return None
        names: list[str] = []
        for part in intent.parts or (intent,):
            item = self._by_sku.get(part.sku or "")
            if item is None:
                continue
            names += [item.item, *item.aliases]
            words = other_thing_zh(utt.norm, (item.item, *item.aliases))
            if words:
                return "other_thing", words
        theirs = not_ours_zh(utt.norm, names)
        if theirs is not None:
            return theirs
        for part in intent.parts or (intent,):  # "三盒乳胶手套" of nitrile gloves: another kind of glove
            item = self._by_sku.get(part.sku or "")
            words = kind_not_had_zh(utt.norm, (item.item, *item.aliases)) if item is not None else None
            if words:
                return "other_thing", words
        return None

    def _beside_aside(self, aside: tuple, confidence, on_sentence, llm: bool) -> Intent | None:
        """The command of an utterance with sentences or a reason set aside (``aside``: from
        :func:`set_aside` or :func:`trailing`); refused when the reason says a count or a change."""
        intent = self.understand(aside[0], confidence, on_sentence, llm)
        if intent is None:
            return None
        if len(aside) > 2 and aside[2] and intent.intent in WRITES:  # "… because 2 blew": the count in doubt
            return refused_unexplained(intent, "reason", aside[2])
        kept = [*aside[1], *intent.extra.get("set_aside", ())]
        return dataclasses.replace(intent, extra={**intent.extra, "set_aside": kept},
                                   explain={**intent.explain, "set_aside": kept})

    def _counts_checked(self, intent: Intent, text: str) -> Intent:
        """A log whose words say more counts than it holds ("we received 50 fuses and used 5", "we used
        3 washers and 2": :func:`edge.stages.nlu.said_counts.counts_said`) is refused as ``range`` (the
        dialog asks for one number; nothing is written as heard); one whose count was said in pairs
        of an item counted otherwise ("a pair of gloves" of boxes) has no count (the dialog asks)."""
        if intent.refusal is not None:
            return intent
        parts = intent.parts or (intent,)
        skus = {p.sku for p in parts if p.sku} | {c for p in parts for c in p.candidates}
        names = [n for s in skus if s in self._by_sku for n in (self._by_sku[s].item, *self._by_sku[s].aliases)]
        said = counts_said(text, names)
        if said > len(parts):
            note = f"{said} counts said, {len(parts)} understood"
            return dataclasses.replace(
                intent, quantity=None, refusal="range",
                parts=tuple(dataclasses.replace(p, quantity=None, refusal="range") for p in intent.parts),
                extra={**intent.extra, "several_counts": said}, explain={**intent.explain, "counts_said": note})
        item = self._by_sku.get(intent.sku) if not intent.parts and intent.sku else None
        if item is not None and intent.quantity is not None and pairs_in_other_unit(text, item.unit, intent.quantity):
            return dataclasses.replace(intent, quantity=None,
                                       explain={**intent.explain, "pairs_said": f"counted in {item.unit}"})
        return intent

    def _moved_counts(self, intent: Intent, text: str) -> Intent:
        """A move whose words say more counts than its one count ("we moved 3 fuses and 2 drill bits
        to shelf A", "moved 5 fuses to drawer 4 and used 2"): nothing is written, the counts said back. English."""
        if intent.intent != "transfer" or self.language != "en" or has_cjk(text) or intent.refusal is not None:
            return intent
        item = self._by_sku.get(intent.sku) if intent.sku else None
        said = counts_said(text, [item.item, *item.aliases] if item is not None else [])
        return refused_unexplained(intent, "counts", f"{said} counts") if said > 1 else intent

    def _paraphrase(self, text: str) -> Intent | None:
        if self.language != "en" or self._paraphraser is None or len(text.split()) < MIN_WORDS_PARAPHRASE:
            return None  # one word ("yes", "no") is too little for a sentence embedding to judge
        p = self.paraphraser()
        if p is None:
            return None
        found = p.explain(text)
        if found is not None and found["intent"] == "ask_docs":  # no slots: the question is the text
            return Intent("ask_docs", source="paraphrase", text=text, explain={"path": "paraphrase", **found})
        got = understand_paraphrase(text, self.fill_slots, p) if found is not None else None
        if got is not None and got.intent == "undo" and not UNDO_SAID.search(text.lower()):
            return None  # "log it", "the last one": an undo writes, so it is said, never guessed from a near exemplar
        if got is not None and got.intent in ("log_record", "transfer", "stock_count") and asks_yes_no(text):
            return None  # "was a box of gloves taken?": a question is never a write on a near exemplar
        if got is not None and got.intent == "stock_count" and not (COUNT_WORDS.search(text.lower())
                                                                  or COUNT_CUES.search(text.lower())):
            # a count replaces the stock level: it needs a counting word; without one the words are a log
            # (its direction from the words, else not understood) — never a count on a guess
            log_fill = self.fill_slots("log_record", text)
            if log_fill is None or log_fill.intent != "log_record" or log_fill.direction is None:
                return None
            return dataclasses.replace(log_fill, source="paraphrase", text=text,
                                       explain={**got.explain, "counted_as": "log_record", "slots": log_fill.slots()})
        if got is not None and got.intent == "query_stock" and not _asks(text) and text_direction(text) is not None:
            # "knocked off a litre of brake fluid for the forklift": a statement with a count and a direction
            # is a log, not a question; written only when the log's slots are all there
            log_fill = self.fill_slots("log_record", text)
            if log_fill is None or log_fill.intent != "log_record" or log_fill.quantity is None and not log_fill.parts:
                return None
            return dataclasses.replace(log_fill, source="paraphrase", text=text,
                                       explain={**got.explain, "said_as": "log_record", "slots": log_fill.slots()})
        if got is not None and got.intent == "log_record" and COUNT_WORDS.search(text.lower()):
            return None  # "just did a stock take, bin 60 has 790 …": a count said, never a log
        # a log's direction is the words' alone (fill_slots: text_direction, place_direction): "3 fuses",
        # "we need 200 washers", "make an entry for 10 …" say none, so the dialog asks "used or
        # received?"; the nearest exemplar's direction ("I'm taking {n} {item}") is never the answer
        return got

    @staticmethod
    def _spoken(intent: Intent, text: str, gate: SentenceGate) -> Intent:
        """The JSON attempt's answer after some of it was spoken: the reply is what was spoken,
        completed by the final answer when it continues it; never a stock command (the user heard
        an answer, not a read-back), never the refusal after a failed validation."""
        given = gate.given
        final = answer_sentences(intent.answer)[0] if intent.intent == "other" and intent.answer else []
        kept = final[:gate.limit] if final[:len(given)] == given else given
        return Intent("other", source="llm", text=text, answer=join_sentences(kept),
                      extra={**intent.extra, "streamed": len(given)})

    def _beyond(self, intent: Intent, utt: Utterance) -> bool:
        """Whether the templates' or the matcher's reading of a question leaves out what it asks: a
        comparison or sum of several items, arithmetic over the stock ("5 a day, how long"), a what-if
        the guards refused as a log, a "when … last" read as a stock question, or documents that are
        not there. Never for a write that was not refused (those stay with the dialog)."""
        text = utt.raw
        t = text.lower()
        kind = intent.intent
        if kind == "ask_docs":
            return intent.source == "paraphrase" and (self.docs is None or not self.docs.finds(text))
        if kind == "log_record" and intent.refusal in ("hypothetical", "order"):
            return _asks(text) and bool(ARITHMETIC.search(t) or SEVERAL_CUES.search(t) or HOW_MANY.search(t))
        if kind not in ("query_stock", "low_stock", "place_contents", "ask_records"):
            return False
        if ARITHMETIC.search(t) or (kind == "query_stock" and (several_items(t, self.grammar.resolve_item)
                                                          or another_named(intent.sku, utt.tokens, self.grammar.index))):
            return True  # (a sum or comparison cue of one item alone stays the template's)
        if IF_WOULD.search(t) and ("what_if" not in intent.extra or not intent.sku):  # a what-if of a known item says what is left itself
            return True
        return kind == "query_stock" and intent.source == "paraphrase" and bool(WHEN_LAST.search(t))

    @staticmethod
    def _out_of_scope(text: str) -> Intent | None:
        """What the box cannot know or do ("set a timer", "turn off the compressor", "what's the
        weather"): ``other`` with the honest sentence (:mod:`edge.stages.grounded.scope`), before the
        paraphrase matcher can take a timer for an item; None for anything else."""
        name = scope.topic(text)
        if name is None:
            return None
        return Intent("other", source="grammar", text=text, answer=scope.cannot_text(name),
                      explain={"path": "grounded:cannot", "topic": name})

    def _grounded(self, text: str, on_sentence=None) -> Intent:
        """``other`` with the grounded answer (:mod:`edge.stages.grounded`); ``source`` ``llm`` when the
        model ran, ``grammar`` for a fixed sentence; ``explain`` the tools called and the guard's findings.
        A composed answer or small talk reaches ``on_sentence`` sentence by sentence as the guard passes
        each one while the model generates; any other answer whole once it is known (never text the
        guard may still replace)."""
        g = self.grounded.answer(text, on_sentence)
        if on_sentence is not None and g.text and not g.streamed:
            SentenceGate(on_sentence).whole(g.text)
        if g.rounds:
            self.last_generation = self.grounded.last_stats
        why = g.explain()
        return Intent("other", source="llm" if g.rounds else "grammar", text=text, answer=g.text,
                      extra={"grounded": why}, explain=why)

    def _llm(self, text: str, on_sentence=None) -> Intent:
        if self.llm is None:
            return Intent("other", source="grammar", text=text, answer=None)
        if self.withheld:  # the governor keeps the LLM off (hot): the grammar path only
            return Intent("other", source="grammar", text=text, answer=self.withheld)
        if self.grounded is not None and self.language == "en" and not has_cjk(text) and (
                not self.llm_intent.is_command(text) or ASKED.search(text.lower())):
            return self._grounded(text, on_sentence)  # a question or remark: answered from the tools, never free text
        gate = SentenceGate(on_sentence, self.llm_intent.example_answers) if on_sentence else None
        try:
            intent = self.llm_intent.parse(text, on_answer=gate.feed if gate else None)
            self.last_generation = self.llm_intent.last_stats
            if gate is not None and gate.given:
                return self._spoken(intent, text, gate)
            if intent.intent != "other" or intent.answer:
                return intent
            system = SYSTEM_PROMPT_ZH if self.language == "zh" else SYSTEM_PROMPT
            request = GenerationRequest([{"role": "system", "content": system}, {"role": "user", "content": text}],
                                        max_tokens=self.max_tokens, temperature=self.temperature)
            if gate is not None:
                gate.restart()  # nothing of the JSON attempt was spoken: the free answer starts over
            parts = []
            for piece in self.llm.stream(request):
                parts.append(piece)
                if gate is not None:
                    gate.feed(piece)
            answer, stats = "".join(parts), self.llm.last_stats
        except ContextOverflow:  # case C10: even trimmed, the question does not fit n_ctx
            return Intent("other", source="llm", text=text, answer=TOO_LONG_ZH if self.language == "zh" else TOO_LONG)
        except EngineError as e:  # every LLM engine of the chain failed: the grammar path only
            if gate is not None and gate.given:  # the user already hears an answer: it ends there
                return Intent("other", source="llm", text=text, answer=join_sentences(gate.given),
                              extra={"streamed": len(gate.given), "engine_error": str(e)})
            return Intent("other", source="grammar", text=text, answer=None)
        self.last_generation = stats
        if gate is not None and gate.given:
            final, _ = answer_sentences(answer)
            if final[:len(gate.given)] != gate.given:
                return dataclasses.replace(intent, answer=join_sentences(gate.given))
        return dataclasses.replace(intent, answer=two_sentences(answer) or None)
