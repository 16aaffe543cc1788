"""An answer from the documents, always naming its source, or "I don't find that in the documents".

Two ways, chosen by ``docs.answer`` (``auto``: generated when the LLM has 1.5 B parameters or
more, by the size its model name states (:func:`generates`), else extractive):

- extractive: the sentences of the best passage that hold most of the question's words (IDF
  weighted), in document order, at most two and :data:`MAX_SPOKEN_WORDS` words;
- generated: the LLM reads the top passages, numbered (as many as fit the engine's ``n_ctx`` as
  loaded, with the answer budget ``max_tokens`` as the governor sets it for the turn), and replies
  with JSON naming the one passage it answers from and the answer (:func:`answer_schema`). The
  answer is said with that passage's source; passage 0 (none answers) declines; an option name or
  number the cited passage does not hold (:func:`unsupported`) makes the box say that passage's own
  sentences instead. A prompt that would not fit, or a reply without a usable citation, leaves the
  extractive answer.

Below ``docs.threshold`` (the best hit's :func:`edge.stages.docs.retrieve.confidence`) the box
declines before any LLM runs. The answer starts with its source: "From the mosquitto.conf manual
page, section General Options: …" (Mandarin: "根据《mosquitto.conf》手册，第General Options节：…").
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from edge.llm.base import ContextOverflow, EngineError, GenerationRequest, generate
from edge.stages.docs.chunk import Chunk
from edge.stages.docs.retrieve import Hit, Retriever, terms
from edge.stages.sentences import split_sentences, two_sentences

if TYPE_CHECKING:
    from edge.config import DocsSettings
    from edge.llm.base import Engine

#: Words of an extractive answer at most (two spoken sentences).
MAX_SPOKEN_WORDS = 45
#: The LLM's answer budget in tokens for a generated answer when the caller gives none
#: (:class:`edge.stages.docs.desk.DocsDesk` gives ``llm.max_tokens`` as the governor sets it).
ANSWER_TOKENS = 96
#: Tokens the chat template adds around the messages, when the engine cannot render the prompt
#: itself to count it exactly (smollm2 and qwen2.5 templates: 5-7 per message).
TEMPLATE_MARGIN = 32
NOT_FOUND = {"en": "I don't find that in the documents.", "zh": "我在文档里没有找到这个。"}
SYSTEM_PROMPT = ("You answer questions about the site's documents from the numbered passages given. "
                 "Pick the one passage that answers the question and answer from that passage only, in one or "
                 "two short, complete spoken sentences that say what the number or option is for, keeping option "
                 "names, numbers and units exactly as written there. "
                 "If no passage answers the question, give passage 0. "
                 'Reply with JSON: {"passage": <number>, "answer": "<answer>"}.')
_CUT_REPLY = re.compile(r'\{\s*"passage"\s*:\s*(\d+)\s*,\s*"answer"\s*:\s*"(.*)', re.S)
#: option names, setting names and numbers a generated answer states: each must be in the passage
#: it cites (or the question), else the passage's own sentences are said instead
_FACT = re.compile(r"(?<![\w-])--?[A-Za-z?][\w-]*|(?<![\w$])\$?[A-Za-z][\w$]*[_.$/][\w$./-]*\w|(?<![\w.])\d+(?:[.,]\d+)*")
_DOCS_QUESTION = re.compile(
    r"\b(manual|manuals|man page|documentation|the docs?\b|handbook|guide|procedure|instructions?|datasheet|"
    r"spec(ification)?|readme)\b|\b(what|how) (does|do) (the )?\w+ (say|says|describe|explain)|according to|"
    r"\bin the (documents?|docs)\b", re.I)


@dataclass(frozen=True)
class Source:
    """Where a passage comes from: the document ``title``, its ``section`` (last heading), the
    heading ``path``, ``page`` (PDF, 1-based) and the file ``path`` on the box."""

    title: str
    section: str
    headings: tuple[str, ...]
    page: int | None
    file: str

    def to_dict(self) -> dict:
        return {"title": self.title, "section": self.section, "headings": list(self.headings),
                "page": self.page, "file": self.file}


@dataclass(frozen=True)
class Passage:
    """A retrieved passage: ``text``, its :class:`Source`, the ``confidence`` and fused ``score``."""

    text: str
    source: Source
    confidence: float
    score: float

    def to_dict(self) -> dict:
        return {"text": self.text, "source": self.source.to_dict(), "confidence": round(self.confidence, 3),
                "score": round(self.score, 5)}


@dataclass
class DocsAnswer:
    """What the box says (``text``), whether the documents answered (``found``), the sources the
    answer rests on, the passages retrieved (best first) and how it was made (``mode``:
    ``extractive``, ``generated`` or ``declined``)."""

    text: str
    found: bool
    sources: list[Source] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)
    mode: str = "extractive"

    def to_dict(self) -> dict:
        return {"answer": self.text, "found": self.found, "mode": self.mode,
                "sources": [s.to_dict() for s in self.sources], "passages": [p.to_dict() for p in self.passages]}


def looks_like_docs_question(text: str) -> bool:
    """True when the words ask about documents ("what does the manual say about …", "according
    to the procedure …", "in the docs"); a cheap router hint, not a classifier."""
    return bool(_DOCS_QUESTION.search(text))


def source_of(hit: Hit) -> Source:
    c = hit.stored.chunk
    return Source(c.title, c.section, c.path, c.page, hit.stored.source)


def spoken_section(section: str) -> str:
    """A heading as it is said: man pages' upper-case headings in title case, numbers kept."""
    return section.title() if section.isupper() else section


def source_phrase(src: Source, kind: str, language: str = "en") -> str:
    """"From the pg_ctl manual page, section Options" / "From Shared MIME-info Database, section
    2.4, page 5"; ``language`` ``zh``: "根据《pg_ctl》手册，第Options节" / "根据《Shared MIME-info
    Database》，第2.4节，第5页"."""
    if language == "zh":
        return source_phrase_zh(src, kind)
    if kind == "man":
        name = re.sub(r"\(\w+\)$", "", src.title)
        head = f"From the {name} manual page"
    else:
        head = f"From {src.title}"
    if src.section and src.section != src.title:
        head += f", section {spoken_section(src.section)}"
    if src.page:
        head += f", page {src.page}"
    return head


def source_phrase_zh(src: Source, kind: str) -> str:
    """The Mandarin source phrase (see :func:`source_phrase`)."""
    name = re.sub(r"\(\w+\)$", "", src.title) if kind == "man" else src.title
    head = f"根据《{name}》手册" if kind == "man" else f"根据《{name}》"
    if src.section and src.section != src.title:
        head += f"，第{spoken_section(src.section)}节"
    if src.page:
        head += f"，第{src.page}页"
    return head


def source_lead(src: Source, kind: str, language: str = "en") -> str:
    """The source phrase with the colon the answer follows ("…: " / "…：")."""
    return source_phrase(src, kind, language) + ("：" if language == "zh" else ": ")


def best_sentences(question: str, chunk: Chunk, limit_words: int = MAX_SPOKEN_WORDS) -> str:
    """The sentences of ``chunk`` that share most words with ``question`` (a sentence's own
    words; ties: the earlier), at most two, in document order, cut to ``limit_words``."""
    words = set(terms(question))
    sentences = [s for line in chunk.text.split("\n") for s in split_sentences(line) if s.strip()]
    if not sentences:
        return ""

    def score(s: str) -> int:
        return len(words & set(terms(s)))

    ranked = sorted(range(len(sentences)), key=lambda i: (-score(sentences[i]), i))
    first = ranked[0]
    picked = [first]
    if first + 1 < len(sentences) and len((sentences[first] + " " + sentences[first + 1]).split()) <= limit_words:
        picked.append(first + 1)  # the next sentence usually finishes the thought
    text = " ".join(sentences[i].strip() for i in sorted(picked))
    words_ = text.split()
    if len(words_) > limit_words:
        text = " ".join(words_[:limit_words]).rstrip(",;:") + " …"
    return text


def model_billions(name: str) -> float | None:
    """Parameters in billions as a model's name states them ("qwen2.5-coder-1.5b-instruct-q4_k_m":
    1.5, "smollm2-135m-instruct-q4_1": 0.135), None when it does not."""
    m = re.search(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*([bm])(?![a-z])", str(name).lower())
    if not m:
        return None
    return float(m.group(1)) / (1000.0 if m.group(2) == "m" else 1.0)


def generates(mode: str, model_name: str, min_b: float = 1.5) -> bool:
    """Whether an answer is generated by the LLM named ``model_name`` under ``docs.answer`` = ``mode``."""
    if mode == "generated":
        return True
    size = model_billions(model_name)
    return mode == "auto" and size is not None and size >= min_b


def passage_prompt(question: str, hits: list[Hit]) -> list[dict]:
    """The chat messages of a generated answer over ``hits``."""
    parts = [f"[{i}] {h.stored.chunk.title}, {h.stored.chunk.section}:\n{h.stored.chunk.text}" for i, h in enumerate(hits, 1)]
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": "Passages:\n" + "\n\n".join(parts) + f"\n\nQuestion: {question}"}]


def prompt_size(engine: Engine, messages: list[dict]) -> int:
    """Tokens of ``messages`` as the engine will see them: rendered with its chat template when it
    can (llama.cpp, also as the serving step of a chain, idle-unloading or not), else the
    contents' tokens plus :data:`TEMPLATE_MARGIN`."""
    inner = engine
    for _ in range(3):  # IdleEngine.inner -> EngineChain.active_engine -> LlamaCppEngine
        render = getattr(inner, "prompt_tokens", None)
        if callable(render):
            return len(render(messages))
        inner = getattr(inner, "inner", None) or getattr(inner, "active_engine", None)
        if inner is None:
            break
    return sum(engine.count_tokens(m["content"]) for m in messages) + TEMPLATE_MARGIN


def fit_passages(question: str, hits: list[Hit], engine: Engine, max_tokens: int) -> list[dict]:
    """The prompt with as many of ``hits`` (best first) as fit ``engine.n_ctx`` (read now: the
    context the governor admitted the model with) minus ``max_tokens`` (:func:`prompt_size`).

    Raises:
        ContextOverflow: not even the best passage fits (or the engine has no context: grammar only).
    """
    n_ctx = int(engine.n_ctx or 0)
    lo, hi = 1, len(hits)  # the passages that fit: bisect, each try renders and tokenizes the prompt
    if not hits or prompt_size(engine, passage_prompt(question, hits[:1])) + max_tokens > n_ctx:
        used = prompt_size(engine, passage_prompt(question, hits[:1])) if hits else 0
        raise ContextOverflow(used, n_ctx, max_tokens)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if prompt_size(engine, passage_prompt(question, hits[:mid])) + max_tokens <= n_ctx:
            lo = mid
        else:
            hi = mid - 1
    return passage_prompt(question, hits[:lo])


def answer_schema(n: int) -> dict:
    """The generated answer's JSON: the ``passage`` it rests on (1..``n``; 0: none answers) and
    the ``answer``."""
    return {"type": "object", "properties": {"passage": {"type": "integer", "enum": list(range(n + 1))},
                                             "answer": {"type": "string"}},
            "required": ["passage", "answer"], "additionalProperties": False}


def generation_request(question: str, hits: list[Hit], engine: Engine, max_tokens: int) -> GenerationRequest:
    """The request for a generated answer: the passages that fit (:func:`fit_passages`), greedy,
    constrained to :func:`answer_schema`.

    Raises:
        ContextOverflow: not even the best passage fits."""
    messages = fit_passages(question, hits, engine, max_tokens)
    shown = next(n for n in range(len(hits), 0, -1) if passage_prompt(question, hits[:n]) == messages)
    return GenerationRequest(messages, max_tokens=max_tokens, temperature=0.0, json_schema=answer_schema(shown))


def shown_in(request: GenerationRequest) -> int:
    """The passages a :func:`generation_request` shows (its schema's largest passage number)."""
    return max(request.json_schema["properties"]["passage"]["enum"])


def unsupported(answer: str, passage: str, question: str) -> list[str]:
    """The option names, setting names and numbers of ``answer`` that neither ``passage`` nor
    ``question`` holds as a whole token."""
    out = []
    for m in _FACT.finditer(answer):
        fact = m.group(0).rstrip(".")
        if fact.startswith("-"):
            pat = r"(?<![\w-])" + re.escape(fact) + r"(?![\w-])"
        else:
            pat = r"(?<![\w$])" + re.escape(fact) + r"(?![\w])"
        if not re.search(pat, passage) and not re.search(pat, question):
            out.append(fact)
    return out


def cited(llm_text: str, n: int) -> tuple[int, str] | None:
    """``(passage, answer)`` of a generated reply (:func:`answer_schema`; plain text from an
    engine without JSON output: passage 1, or 0 for "NOT FOUND"); None when unusable."""
    try:
        obj = json.loads(llm_text)
    except ValueError:
        text = llm_text.strip()
        if text.startswith("{"):  # cut at the token budget: the passage and the whole sentences written
            m = _CUT_REPLY.match(text)
            said = re.findall(r".*?[.!?](?=\s|$)", m.group(2).replace('\\"', '"')) if m else []
            return (int(m.group(1)), "".join(said).strip()) if m and said and int(m.group(1)) <= n else None
        if not text:
            return None
        return (0, "") if "NOT FOUND" in text.upper() else (1, text)
    if not isinstance(obj, dict) or not isinstance(obj.get("passage"), int) or not 0 <= obj["passage"] <= n:
        return None
    return obj["passage"], str(obj.get("answer") or "")


def llm_body(text: str) -> str | None:
    """A generated answer cut to two sentences; None when it is empty or says the passages do not answer."""
    text = two_sentences(text.strip())
    if not text or "NOT FOUND" in text.upper():
        return None
    return text


def answer_order(hits: list[Hit]) -> list[Hit]:
    """``hits`` in the order an answer uses them: :meth:`Retriever.search` already reranks them
    by confidence, so the first is the one an extractive answer quotes."""
    return list(hits)


@dataclass
class Prepared:
    """An answer before any LLM: the extractive (or declined) :class:`DocsAnswer`, the hits a
    generated answer may cite (best first; none when declined), and the ``question``."""

    answer: DocsAnswer
    hits: list[Hit]
    kind: str = ""
    language: str = "en"
    question: str = ""
    shown: int = 0  # passages in the generation prompt (0: not generated yet)


def prepare(text: str, retriever: Retriever, settings: DocsSettings | None = None, language: str = "en") -> Prepared:
    """Retrieve for ``text`` and build the extractive answer, or the decline below
    ``settings.threshold`` (see :func:`answer_question`)."""
    threshold = settings.threshold if settings else 0.5
    top_k = settings.top_k if settings else 3
    hits = answer_order(retriever.search(text, k=max(top_k, 1)))
    passages = [Passage(h.stored.chunk.text, source_of(h), h.confidence, h.fused) for h in hits]
    if not hits or hits[0].confidence < threshold:
        return Prepared(DocsAnswer(NOT_FOUND.get(language, NOT_FOUND["en"]), False, [], passages, "declined"), [],
                        language=language, question=text)
    best = hits[0]
    src = source_of(best)
    body = best_sentences(text, best.stored.chunk)
    answer = DocsAnswer(source_lead(src, best.stored.kind, language) + body, True, [src], passages, "extractive")
    return Prepared(answer, hits, best.stored.kind, language, text)


def declined(prep: Prepared) -> DocsAnswer:
    """The decline, with the passages that were read."""
    return DocsAnswer(NOT_FOUND.get(prep.language, NOT_FOUND["en"]), False, [], prep.answer.passages, "declined")


def with_generated(prep: Prepared, llm_text: str | None) -> DocsAnswer:
    """The generated answer from the LLM's reply (:func:`cited`), with the source of the passage it
    cites. The model citing no passage (0) declines: none of the passages answers, and a quote of
    the nearest one would be a wrong answer. An answer stating an option name or number that its
    passage does not hold (:func:`unsupported`) is replaced by that passage's own sentences
    (:func:`best_sentences`); no usable reply (the LLM failed, the prompt did not fit) leaves the
    extractive answer."""
    if not prep.answer.found or not llm_text:
        return prep.answer
    got = cited(llm_text, len(prep.hits))
    if got is None:
        return prep.answer
    n, text = got
    if n == 0:
        return declined(prep)
    question = prep.question
    body = llm_body(text)
    hit = prep.hits[n - 1]
    if body is not None and unsupported(body, passage_text(hit), question):
        # a small model may number its passage wrong: the passage that holds every fact it states
        # is the one it answered from; with none, its answer rests on nothing shown
        holding = [h for h in prep.hits[:shown_passages(prep)] if not unsupported(body, passage_text(h), question)]
        hit, body = (holding[0], body) if holding else (hit, None)
    if body is None:
        body, mode = best_sentences(question, hit.stored.chunk), "cited"
    else:
        mode = "generated"
    src = source_of(hit)
    return DocsAnswer(source_lead(src, hit.stored.kind, prep.language) + body, True, [src], prep.answer.passages, mode)


def passage_text(hit: Hit) -> str:
    """What a passage shows the model: its document title, section and text."""
    c = hit.stored.chunk
    return f"{c.title} {c.section} {c.text}"


def shown_passages(prep: Prepared) -> int:
    """How many of ``prep.hits`` the model was shown (set by :func:`answer_question`; all when unknown)."""
    return prep.shown or len(prep.hits)


def answer_question(text: str, retriever: Retriever, settings: DocsSettings | None = None,
                    llm: Engine | None = None, language: str = "en", max_tokens: int = ANSWER_TOKENS,
                    prepared: Prepared | None = None) -> DocsAnswer:
    """Answer ``text`` from the documents behind ``retriever``.

    ``settings`` (an :class:`edge.config.DocsSettings`; defaults when None) give the threshold,
    the passages kept and the answer mode; ``llm`` is used for a generated answer when the mode
    calls for it (see module docstring), from the passages that fit its ``n_ctx`` with the answer
    budget ``max_tokens`` (tokens). ``prepared``: :func:`prepare`'s result for this ``text``, when
    the caller already retrieved. Never raises for a question the documents cannot answer:
    ``found`` is False and ``text`` says so.
    """
    prep = prepared if prepared is not None else prepare(text, retriever, settings, language)
    mode = settings.answer if settings else "auto"
    name = str(getattr(llm, "model", "") or "")  # a lazily loaded engine names none: the caller chose it
    if llm is None or not prep.answer.found or mode == "extractive" or (name and not generates(mode, name)):
        return prep.answer
    try:
        request = generation_request(text, prep.hits, llm, max_tokens)
        prep.shown = shown_in(request)
        out, _ = generate(llm, request)
    except (ContextOverflow, EngineError):
        out = None
    return with_generated(prep, out)
