"""The guards that keep a heard command from becoming a wrong record (English, normalized text).

They run on text already in the normal form of :func:`edge.stages.nlu.lexicon.normalize_text`
(numbers as digits, lowercase, no punctuation) and return the text a template should see plus the
reason it must not be written as heard (:data:`edge.stages.nlu.types.REFUSALS`):

* **negated** — "we did not use 3 drill bits", "don't log 3 drill bits", "we never took …",
  "nobody took …", "no need to log …", "the fuses haven't come in yet": the negation (and a "yet" or
  "still" with it) is removed so the command still matches, and the refusal says it must not be
  written; ``told`` tells an instruction not to write it ("don't log …", "no need to record …")
  from a report that it did not happen ("we did not use …"), so the reply can say which;
* **already_done** — "… already logged", "that's already been recorded", "… were logged yesterday"
  (a question about the log, "did I already log the coolant?", is none: :func:`asks_about_log`);
* **correction** — a self-correction replaces what it corrects
  (:mod:`edge.stages.nlu.corrections`: "3, no wait, 4" → 4; "from drawer 4, no, from bin 118";
  "M8 nuts, no, M10 nuts"); one that fits nothing said before is an unresolved correction;
* **range** — "three or four", "2 to 3": two numbers, neither one the count; a vague count
  ("about 20", "20 or so", "a few", "some") is refused the same way (``vague``);
* **negative** — "minus 3", "-3";
* **future** — said as still to come: "they'll send 200 next week", "we're expecting 50 tomorrow",
  "the nuts are on order", or as what should be done: "we should use 3 fuses", "we have to take 2 …"
  (a log verb after "will"/"'ll"/"should" is the command itself: "I'll log 5 …");
* **hypothetical** — "pretend I used 5", "suppose we took …", "what if …", "if we used 20 …",
  "… what would the balance be" (:attr:`Guarded.asks_stock`: the sentence asks what would be left);
* **order** — asked for, not received: "order 200 washers", "we need 200 washers", "the fitter wants
  3 fuses", "Bob asked for 3 fuses", "we could use 3 fuses" (an order is no stock received);
* **shortage** — "the delivery had 3 fuses short", "3 fuses are missing": no movement, a count is;
* **expected** — "there should be 40 fuses in bin 30": what is expected, not what was counted;
* a yes/no question about a movement ("did we use 3 fuses?", "were 3 fuses used", "should I log …?")
  is none of these and no command either: :func:`asks_yes_no`;
* **hearsay** — said on someone else's word: "the night shift reckons …", "Dave says he used …",
  "apparently …", "I think someone took …" (written only after a yes: read back);
* fractions are rewritten as decimals first (:func:`fractions`): "two and a half" → 2.5, "half a
  box" → 0.5 box, "one point five" → 1.5 (whether a decimal may be written is the item's unit's
  business: :func:`edge.stages.nlu.slots.quantity_refusal`).

A leaf apart from the lexicon's word lists; nothing here looks at the inventory.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from edge.stages.nlu.corrections import resolve_corrections
from edge.stages.nlu.lexicon import LOCATION_WORDS

_NUM = r"\d+(?:\.\d+)?"
_MEASURE = (r"(litres?|liters?|metres?|meters?|kilos?|kilograms?|grams?|kg|l|m|boxe?s?|packs?|packets?|rolls?|"
            r"bags?|cans?|tins?|sheets?|pairs?|sets?)")
_FRACTIONS = [
    # "a litre and a half" is 1.5 litres, "2 metres and a half" 2.5 metres
    (re.compile(rf"\b(?:a|an|one) {_MEASURE} and (?:a|one) half\b"), lambda m: f"1.5 {m.group(1)}"),
    (re.compile(rf"\b({_NUM}) {_MEASURE} and (?:a|one) half\b"), lambda m: f"{_plus(m, 0.5)} {m.group(2)}"),
    (re.compile(rf"\b({_NUM}) and (?:a|one) half\b"), lambda m: _plus(m, 0.5)),
    (re.compile(rf"\b({_NUM}) and (?:a|one) quarter\b"), lambda m: _plus(m, 0.25)),
    (re.compile(rf"\b({_NUM}) and 3 quarters\b"), lambda m: _plus(m, 0.75)),
    # "three quarters of a litre" is 0.75 litres, "a quarter of a metre" 0.25 metres: the "a" is no count
    (re.compile(rf"\b(?:(?:a|one) (quarter)|3 quarters|(half)) of (?:a|an|one) {_MEASURE}"),
     lambda m: f"{0.25 if m.group(1) else 0.5 if m.group(2) else 0.75} {m.group(3)}"),
    (re.compile(r"\b(?:nought|naught|zero|oh) point (?=\d)"), lambda m: "0 point "),
    # "we used point 5 litres" is 0.5: "point" said right after the verb, or first (not "at this point 3 …")
    (re.compile(r"(^|\b(?:used|use|took|take|received|receive|got|added|add|log|logged|count|counted|moved|move) )"
                r"point (?=\d)"), lambda m: f"{m.group(1)}0 point "),
    # "one point two five" is 1.25: the single digits said after "point" are all decimals
    (re.compile(r"\b(\d+) point ((?:\d )+\d|\d+)\b"), lambda m: f"{m.group(1)}.{m.group(2).replace(' ', '')}"),
    (re.compile(r"\b(?!(?:a |one )?half (?:an? )?dozen)(?:a half|one half|half an?|half)\b"), lambda m: "0.5"),
    (re.compile(r"\b(?:a|one) quarter(?: of)?\b"), lambda m: "0.25"),
    (re.compile(r"\b3 quarters(?: of)?\b"), lambda m: "0.75"),
    (re.compile(r"(?<=\d) mils?\b"), lambda m: " mm"),  # "6.5 mil" once "six and a half" is a number
]
_NEGATION = re.compile(
    r"\b(?:(?:did|do|does|have|has|had|was|were|should|will|would|could|must) not|didnt|dont|doesnt|"
    r"havent|hasnt|hadnt|wasnt|werent|shouldnt|wont|wouldnt|couldnt|mustnt|never|not|nobody|no one|no 1|noone|"
    r"none of (?:us|them|you)|neither of (?:us|them)|no need to|hold off(?: on)?|wait with)\b")
#: the negation is an instruction to the box ("don't log 3 fuses", "no need to record …", "please do not
#: move …"), not a report that something did not happen ("we did not use …", "nobody took …")
_TOLD = re.compile(r"^(?:please |so |just )*(?:dont|do not|never|no need to|hold off|wait with|(?:theres|there is) no need to)\b|"
                   r"\b(?:dont|do not|not|no need to|never|neednt|need not) (?:(?:need|have) to )?(?:bother to )?"
                   r"(?:log|record|enter|book|note|write)\b")
#: said with a negation ("not received yet", "still haven't got"): no part of an item's name
_NEGATION_TIME = re.compile(r"\b(?:yet|still)\b")
#: a count said vaguely: no number to write ("about 20", "20 or so", "a few", "some")
_VAGUE = re.compile(r"\b(?:about|around|roughly|approximately|approx|maybe|perhaps|probably|or so|ish|give or take|"
                    r"more or less|something like|a few|few|several|some|a bunch of|a handful of|a load of|"
                    r"loads of|lots of|a lot of|plenty of|a couple more|a number of|"
                    # a count qualified, not said: "hardly used 3", "3 too many", "more than 20", "up to 5"
                    r"hardly|barely|scarcely|too many|too much|too few|more than|less than|fewer than|at least|"
                    r"at most|no more than|not more than|upwards of|"
                    # "like 3", "a good 3", "easily 3", "a max of 3", "3 tops", "at a guess": a count qualified
                    r"(?<!looks )(?<!looked )(?<!seems )(?<!seemed )(?<!sounds )like (?=\d)|a (?:good|solid|rough|max|maximum|min|minimum) (?:of )?(?=\d)|easily (?=\d)|"
                    r"(?<=\d )(?:\w+ ){0,3}?(?:tops|max|maximum|at the (?:most|outside|very most|least))|at a guess|"
                    r"if that|or thereabouts|(?:id|i would|i d) (?:say|guess)|ballpark|"
                    # "2 and a bit litres", "2 litres odd", "2 point something": more than the number said
                    r"and a (?:bit|little)|and something|point something|(?<=\d )[a-z]+ odd|(?<!hand )(?<!handed )(?<!passed )(?<!moved )(?<!shifted )(?:over|under|up to) (?=\d)|(?<=\d )odd)\b")
#: hesitations inside a command ("move, uh, five, um, M8 nuts"); "mm" is millimetres there
_HESITATION = re.compile(r"\b(?:uh|um|umm|uhm|er|erm|ah|eh|hm|hmm)\b ?")
#: what may follow "… already logged": "no need", "so no need to log them", "nothing to do"
_NO_NEED = (r"(?:\s+(?:so\s+)?(?:no need(?:\s+to\s+\w+(?:\s+(?:it|them|that|those|again))?)?|nothing to do|"
            r"dont worry|all good|forget it))?")
_ALREADY_END = re.compile(
    r"\s*\b(?:(?:thats|that is|that was|that has|its|it is|it was|it has|they are|theyre|theyve|they were|"
    r"was|were|is|are|has|have|we have|weve|i have|ive)\s+)?(?:been\s+)?already\s+(?:been\s+)?"
    r"(?:logged|recorded|entered|booked|done|noted|in|in the system|put in)(?:\s+(?:it|that|them|those))?" + _NO_NEED
    + r"\s*$")
_ALREADY = re.compile(r"\balready\s*")
#: "… were logged yesterday", "… got booked this morning": said as done before
_DONE_BEFORE = re.compile(r"\s*\b(?:were|was|have been|has been|got|are|is)\s+(?:logged|recorded|entered|booked|noted)"
                          r"(?:\s+(?:in|out))?(?:\s+(?:yesterday|earlier|before|today|this morning|this afternoon|"
                          r"last night|last week|on friday|on monday))?" + _NO_NEED + r"\s*$")
_STRONG_MARKER = re.compile(r"\b(?:no wait|wait no|i mean|i meant|make that|make it|or rather|correction)\b")
_RANGE = re.compile(rf"\bbetween (?P<a2>{_NUM}) and (?P<b2>{_NUM})\b|\b(?P<a>{_NUM}) (?:or|to) (?P<b>{_NUM})\b")
#: two counts said for one thing, neither the count: "3 or was it 4", "2 boxes, or 3", "3 yesterday and
#: 2 today", "3-4 boxes" (a hyphen between two numbers, before the normal form reads it)
_OR_WAS = re.compile(rf"\b{_NUM}\b.*\bor (?:was it|is it|maybe|perhaps|possibly) {_NUM}\b")
_OR_LATER = re.compile(rf"\b{_NUM} (?:\w+ ){{1,4}}or {_NUM}(?! ?(?:mm|cm|a|v|w|inch|inches)\b)(?: \w+)?$")
_DAYS = r"(?:yesterday|today|this morning|this afternoon|last night|last week|earlier|tomorrow|on \w+day)"
_TWO_DAYS = re.compile(rf"\b{_NUM} .*\b{_DAYS} and {_NUM} {_DAYS}\b")
_RAW_RANGE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?[-\u2013\u2014]\s?(\d+(?:\.\d+)?)(?![\w.]*\s?(?:mm|cm|a|v|w)\b)",
                        re.IGNORECASE)
#: "we used 3 o-rings not 2", "3 not 2 fuses": the count said, then the one it is not (a correction)
_NOT_OTHER = re.compile(rf"\b(?P<said>{_NUM})\b(?P<mid>(?: [a-z]\w*){{0,4}}?) not (?P<other>{_NUM})\b(?! ?(?:mm|cm|m|a)\b)")
#: "we used not 3 but 5 fuses": the count after "but" corrects the one after "not"
_NOT_BUT = re.compile(rf"\bnot (?P<other>{_NUM}) but (?P<said>{_NUM})\b")
_NEGATIVE_RAW = re.compile(r"(?:^|[\s(])[-\u2212]\s?\d|\b(?:minus|negative)\s+\w")
_NEGATIVE_WORD = re.compile(r"\b(?:minus|negative)\s+")
#: a log verb after "will"/"'ll"/"going to" is the command itself ("I'll log 5 bolts"), not a plan
_NOT_LOG_VERB = r"(?!(?: just| now| quickly)? (?:log|record|enter|book|note|write|mark|put (?:it|that|them|those) (?:in|down))\b)"
_FUTURE = re.compile(
    rf"\b(?:will|shall|going to|gonna|about to)\b{_NOT_LOG_VERB}|\b(?:(?:plan|planning|intend|intending|hope|hoping) to|"
    r"tomorrow|the day after|next (?:week|month|time|shift|delivery|order|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)|later (?:today|on|this week)|in (?:a|an|\d+) (?:days?|weeks?|hours?)|(?<!as )expecting|"
    r"(?<!as )expect|awaiting|waiting (?:for|on)|on (?:back ?)?order|due(?! to\b)|arriving|to arrive|on (?:its|their) way|"
    r"(?:being|getting|to be) (?:sent|delivered|shipped|received|booked in)|should (?:arrive|come|get here|be here|turn up)|"
    # "20 fuses incoming", "in transit", "for delivery": on their way, not here yet
    r"incoming|inbound|en route|in transit|pending|back ?ordered|for delivery|(?:still |yet )to (?:come|arrive))\b")
#: said as what should or must be done ("we should use 3 fuses", "we have to take 2 washers"): not done yet;
#: "should be"/"should have" is what is expected or supposed, not this
_MODAL = re.compile(rf"\b(?:should|ought to|must|have to|has to|gotta|got to|wanna|would like to|wed like to|"
                    rf"id like to|would(?! (?:you|u)\b)|supposed to|meant to)\b(?! (?:still )?(?:be|have|of|get)\b){_NOT_LOG_VERB}"
                    # "we'd use 3 fuses", "I'd take 2": would, not done ("we'd used" is had: done); "we'd need"
                    # and "I'd want" are a need, which the order rule says as one
                    r"|\b(?:wed|id|youd|theyd|hed|shed) (?=(?:use|take|get|grab|receive|pull|add|move|count|"
                    r"go through|run through)\b)")
_FUTURE_RAW = re.compile(rf"\b(?:i|we|they|he|she|you|it|that|someone|somebody|the \w+)\s*['’]ll\b{_NOT_LOG_VERB}",
                         re.IGNORECASE)
#: when a planned thing is to come: dropped from the item's words ("200 m8 nuts next week")
_FUTURE_WHEN = re.compile(r"\s*\b(?:tomorrow(?: morning| afternoon)?|the day after|next (?:week|month|time|shift|"
                          r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)|later (?:today|on|this week)|"
                          r"in (?:a|an|\d+) (?:days?|weeks?|hours?))\b")
_HYPOTHETICAL = re.compile(
    r"\b(?:pretend|pretending|suppose|supposing|imagine|hypothetically|in theory|what if|what happens if|"
    r"(?:let us|lets|just) say|^say (?=(?:i|we|they|you|someone) )|(?:even |only )?if (?!(?:you|u) (?:could|can|would|will|dont|do not|please|mind)\b)"
    r"(?:i|we|you|they|he|she|someone|somebody|anyone|the)\b|in case|were to|"
    r"would (?!be (?:possible|ok|okay|alright|fine|great)\b)(?:be|have|leave|there|we|i|it|that|they|the)\b|"
    r"might|could (?:be|have)|(?:must|should) (?:have|of)|mustve|shouldve|may need|"
    # "we'd have used", "we'd've", "would've", "could've" (normalized without the apostrophe): what would have been
    r"(?:wed|id|youd|theyd|hed|shed) (?:have|of)|(?:wed|id|youd|theyd|hed|shed)ve|wouldve|couldve|mightve|"
    r"woulda|coulda|shoulda|musta|(?:almost|nearly) (?=\w+ed\b|took|taken|ran|gave|given|threw|broke|lost|got|sent))\b")
#: "I almost used 3 fuses": dropped for the templates (the refusal says it did not happen)
_ALMOST = re.compile(r"\b(?:almost|nearly)\s+")
#: a log verb after "need to"/"want to" is the command itself ("I need to log 3 fuses used")
_NOT_LOG_AFTER = r"(?! to (?:log|record|enter|book|note|write|mark|put (?:it|that|them|those) (?:in|down))\b)"
_ORDER = re.compile(
    rf"\b(?:(?:re ?)?order(?:s|ed|ing)?|(?:need|want|wants|wanted|would like|wed like|id like){_NOT_LOG_AFTER}|"
    # "Dave needs 3 sanding sheets for the doors": handed out for a job (a log), as the dev set says
    r"needs(?!.*\bfor (?:the|a|an|his|her|their)\b)|"
    r"asked for|asking for|asks for|requested|requesting|request|should get|could use|could do with|put in for)\b")
_SHORTAGE = re.compile(r"\b(?:short|shortfall|missing|lacking|unaccounted for|gone missing)\b")
_EXPECTED = re.compile(r"\b(?:should|ought to|supposed to|meant to) (?:still )?(?:be|have)\b")
#: a yes/no question ("did we use 3 fuses", "were 3 fuses used", "should I log 3 fuses used"), read on
#: the raw transcript ("we're short" is no "were"); "can you log …" is a request, no question
_YES_NO = re.compile(r"^\W*(?:(?:so|and|hey|ok|okay|quick question)\W+)*(?:did|do|does|were|was|is|are|should|shall|"
                     r"have|has|had|can|could)\b(?!\W+(?:you|u|not)\b)"
                     # "did a stocktake on the goggles, there's 7": a statement
                     r"(?!\W+(?:a|an|the|my|our)?\W*(?:stock ?take|re ?count|count|stock count)\b)"
                     r"(?!(?<=did)\W+(?:a|an)\b)", re.IGNORECASE)
#: a question that asks what or how many ("if we receive 50 nuts tomorrow, what will we have?"): no yes/no
_WH = re.compile(r"\b(?:what|whats|what's|how|which|where|when|who)\b", re.IGNORECASE)
_REQUEST = re.compile(r"^\W*(?:please\W+)?(?:(?:can|could|would|will)\W+(?:you|u)\b|(?:can|could|may)\W+(?:i|we)\W+"
                      r"(?:please\W+)?(?:log|record|enter|book|note|write|put|add|mark)\b)", re.IGNORECASE)
#: a hypothetical that asks what the stock would be ("… what would the balance be", "… how many would be left")
_ASKS_STOCK = re.compile(r"\b(?:(?:what|how many|how much)\b.*\b(?:would|will|d|be|have|left|leave)|balance|"
                         r"would (?:be|we have|there be) left|would leave)\b")
_HEARSAY = re.compile(
    r"\b(?:reckons?|reckoned|says|saying|(?<!\bi )(?<!\bwe )(?<!\blike )said|tells me|told (?:me|us)|apparently|"
    r"allegedly|supposedly|according to|heard|word is|rumou?r|claims?|claimed|reportedly|"
    r"(?:i|we) (?:think|thought|guess|believe) (?:someone|somebody|they|he|she|the|one of)|"
    r"(?:someone|somebody|he|she|they) (?:thinks|thought|mentioned))\b")
#: the reporting clause before what was reported ("the night shift reckons they …"), dropped for the templates
_HEARSAY_LEAD = re.compile(r"^(?:.*?\b)?(?:reckons?|reckoned|says|said|think|thinks|thought|mentioned|tells me|told (?:me|us)|"
                           r"heard|claims?|claimed|apparently|allegedly|supposedly)(?: that)?"
                           r"(?: (?:he|she|they|we|i|you|someone|somebody))?\s+(?=\S)")
#: a question about what was logged ("did I already log the coolant?", "was the M8 delivery booked in"):
#: no command, whatever its words; the store's records answer it
_LOG_QUESTION = re.compile(r"^(?:(?:so|and|hey|ok|okay|quick question)\s+)*(?:did|have|has|had|was|were|is|are)\s+"
                           r"(?:\S+\s+){1,6}?(?:already\s+)?(?:been\s+)?(?:log|logged|record|recorded|enter|entered|"
                           r"book|booked|note|noted|put in|put down)\b")
#: "we tried to use 3 fuses", "failed to receive …": said as the change so the parse finds it; the try is
#: what the accounting refuses (:mod:`edge.stages.nlu.not_stock`), never a write
_ATTEMPT = re.compile(r"\b(?:tried|attempted|failed|forgot|forgotten|neglected)(?: not)? to (use|take|receive|grab|get|"
                      r"move|count|add|put|return)\b")
_PAST = {"use": "used", "take": "took", "receive": "received", "grab": "grabbed", "get": "got", "move": "moved",
         "count": "counted", "add": "added", "put": "put", "return": "returned"}
_LEADING = re.compile(r"^(?:(?:sorry|actually|oops|wait|no(?! need\b| one\b| 1\b)|ok|okay|right)\s+)+")


@dataclass
class Guarded:
    """What the guards made of a text: ``text`` (for the templates), ``refusal`` (one of
    :data:`edge.stages.nlu.types.REFUSALS` or None), ``negative`` (a minus was said), ``range``
    (the two numbers of "three or four"), ``vague`` (a count said as "about 20", "a few": refusal
    ``range``, no count written), ``told`` (refusal ``negated`` by an instruction not to write it:
    "don't log …"), ``asks_stock`` (a what-if that asks what would be left: a stock question,
    nothing written) and ``notes`` (what was changed, for ``--explain``)."""

    text: str
    refusal: str | None = None
    negative: bool = False
    range: tuple[float, float] | None = None
    vague: bool = False
    told: bool = False
    asks_stock: bool = False
    notes: list[str] = field(default_factory=list)


def _plus(m: re.Match, frac: float) -> str:
    v = float(m.group(1)) + frac
    return f"{v:g}"


def fractions(norm: str) -> str:
    """Fractions in normalized text as decimals: ``"2 and a half boxes"`` → ``"2.5 boxes"``,
    ``"half a box"`` → ``"0.5 box"``, ``"1 point 5"`` → ``"1.5"``; ``half a dozen`` was already 6."""
    for pattern, repl in _FRACTIONS:
        norm = pattern.sub(repl, norm)
    return norm


def asks_about_log(norm: str) -> bool:
    """True when the normalized text asks whether something was logged ("did I already log the
    coolant", "have we recorded the 6 mm drill bits"): a question, never a command to write."""
    return bool(_LOG_QUESTION.match(norm))


def asks_yes_no(raw: str) -> bool:
    """True when the transcript ``raw`` is said as a yes/no question: it starts with did, do, were,
    is, should, have, can … (not "can you …", a request) or ends with "?". Raises nothing."""
    t = (raw or "").strip()
    if not t or _REQUEST.match(t):
        return False
    return bool(_YES_NO.match(t)) or t.endswith("?") and not _WH.search(t)


def has_negative(raw: str) -> bool:
    """True when the raw transcript says a negative count ("-3", "minus three")."""
    return bool(_NEGATIVE_RAW.search(raw or ""))


def guard(norm: str, raw: str = "") -> Guarded:
    """Apply every guard to the normalized text ``norm`` (``raw``: the transcript as heard, for the
    minus sign the normal form drops). Raises nothing."""
    g = Guarded(" ".join(_HESITATION.sub("", _LEADING.sub("", norm)).split()))
    if _ATTEMPT.search(g.text):
        g.text = _ATTEMPT.sub(lambda m: _PAST[m.group(1)], g.text)
        g.notes.append("attempt")
    if has_negative(raw) or _NEGATIVE_WORD.search(g.text):
        g.negative = True
        g.text = _NEGATIVE_WORD.sub("", g.text)
        g.refusal = "negative"
        g.notes.append("negative")
    if _ALREADY_END.search(g.text) or _ALREADY.search(g.text) or _DONE_BEFORE.search(g.text):
        g.text = _ALREADY.sub("", _ALREADY_END.sub("", _DONE_BEFORE.sub("", g.text))).strip()
        g.refusal = g.refusal or "already_done"
        g.notes.append("already done")
    _not_the_other(g)
    cue = _not_happened(g, raw)
    if _NEGATION.search(g.text):
        g.told = bool(_TOLD.search(g.text))
        g.text = " ".join(_NEGATION_TIME.sub(" ", _NEGATION.sub(" ", g.text)).split())
        g.refusal = "negated"
        g.notes.extend(["negated", "told not to"] if g.told else ["negated"])
    g.text, notes, unresolved = resolve_corrections(g.text, raw)
    g.notes.extend(notes)
    if unresolved or _STRONG_MARKER.search(g.text):
        g.refusal = g.refusal or "correction"
        g.notes.append("unresolved correction")
    if _VAGUE.search(g.text):
        g.vague = True
        g.refusal = g.refusal or "range"
        g.notes.append("vague count")
    _unclear_count(g, raw)
    m = _RANGE.search(g.text)
    if m and not _after_location(g.text, m.start()):
        a, b = (m.group("a"), m.group("b")) if m.group("a") else (m.group("a2"), m.group("b2"))
        g.range = (float(a), float(b))
        g.refusal = g.refusal or "range"
        g.notes.append(f"range {a}–{b}")
    if cue is not None and g.refusal not in ("negated", "negative"):
        g.refusal = cue  # not done (yet): stronger than how the count was said
    elif cue is None and g.refusal is None and _HEARSAY.search(g.text):
        g.refusal = "hearsay"
        g.notes.append("hearsay")
        g.text = _HEARSAY_LEAD.sub("", g.text)
    return g


def _not_happened(g: Guarded, raw: str) -> str | None:
    """``future``, ``hypothetical``, ``order``, ``shortage`` or ``expected`` when the text says the
    stock change has not happened; the words saying when are dropped from ``g.text`` and
    ``g.asks_stock`` set for a what-if question."""
    if _HYPOTHETICAL.search(g.text):
        cue = "hypothetical"
        g.text = _ALMOST.sub("", g.text)
    elif _FUTURE.search(g.text) or _FUTURE_RAW.search(raw or "") or _MODAL.search(g.text):
        cue = "future"
    else:
        cue = next((c for c, p in (("order", _ORDER), ("shortage", _SHORTAGE), ("expected", _EXPECTED))
                    if p.search(g.text)), None)
        if cue is None:
            return None
    g.asks_stock = bool(_ASKS_STOCK.search(g.text))
    g.text = " ".join(_FUTURE_WHEN.sub(" ", g.text).split())
    g.notes.append(cue + (" question" if g.asks_stock else ""))
    return cue


def _not_the_other(g: Guarded) -> None:
    """"3 o-rings not 2" says 3 and corrects a 2 said or written before: the 2 is dropped (no negation);
    "not 3 but 5" says 5."""
    m = _NOT_BUT.search(g.text)
    if m is not None and float(m.group("said")) != float(m.group("other")):
        g.text = " ".join((g.text[:m.start()] + m.group("said") + g.text[m.end():]).split())
        g.notes.append(f"correction not {m.group('other')} but {m.group('said')}")
        return
    m = _NOT_OTHER.search(g.text)
    if m is None or float(m.group("said")) == float(m.group("other")):
        return
    g.text = " ".join((g.text[:m.start()] + m.group("said") + m.group("mid") + g.text[m.end():]).split())
    g.notes.append(f"correction not {m.group('other')} → {m.group('said')}")


def _unclear_count(g: Guarded, raw: str) -> None:
    """Two counts for one thing ("3 or was it 4", "2 boxes of gloves, or 3", "3 yesterday and 2
    today", "3-4 boxes"): refusal ``range`` (no count is written; the box asks for one number)."""
    m = _RAW_RANGE.search(raw or "")
    if m:
        before = (raw or "")[:m.start()].lower().split()
        if not (before and before[-1] in LOCATION_WORDS | {"number", "no"}):
            g.range = (float(m.group(1)), float(m.group(2)))
    if g.range is None and not (_OR_WAS.search(g.text) or _OR_LATER.search(g.text) or _TWO_DAYS.search(g.text)):
        return
    g.vague = g.vague or g.range is None
    g.refusal = g.refusal or "range"
    g.notes.append("two counts said")


def _after_location(text: str, pos: int) -> bool:
    before = text[:pos].split()
    return bool(before) and before[-1] in LOCATION_WORDS | {"number", "no"}
