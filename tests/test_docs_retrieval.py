"""Retrieval and cited answers over real man pages (edge.stages.docs): one chunk per option of an
option list, option names and numbers matched exactly, the reranked best passage first, a
generated answer resting on the passage it cites (a fact that passage lacks is never said), and a
question no document answers declined before any generation."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from edge.config import DocsSettings
from edge.stages.docs.answer import (
    NOT_FOUND,
    answer_question,
    cited,
    prepare,
    source_phrase,
    unsupported,
    with_generated,
)
from edge.stages.docs.chunk import chunk_document, entry_term
from edge.stages.docs.index import DocsIndex
from edge.stages.docs.parse import parse_file
from edge.stages.docs.retrieve import Retriever, literals
from tests.docs_helpers import MAN_CONF, MAN_PGCTL, encoder_or_skip, skip_without_documents

MAN_ESPEAK = Path("/usr/share/man/man1/espeak-ng.1.gz")


@pytest.fixture(scope="module", autouse=True)
def _debian_docs():
    skip_without_documents((MAN_CONF, MAN_PGCTL, MAN_ESPEAK))


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    ix = DocsIndex(tmp_path_factory.mktemp("docs") / "docs.db")  # BM25 only: the literals and rerank alone
    ix.add([MAN_CONF, MAN_PGCTL, MAN_ESPEAK])
    yield ix
    ix.close()


def test_an_option_list_is_one_chunk_per_option():
    chunks = chunk_document(parse_file(MAN_ESPEAK))
    options = [c for c in chunks if c.section == "OPTIONS"]
    speed = [c for c in options if c.text.startswith("-s <integer>")]
    assert len(speed) == 1 and speed[0].text == "-s <integer>: Speed in words per minute, default is 175."
    assert all(entry_term(c.text) for c in options[1:])  # every option its own passage (after the summary)
    conf = chunk_document(parse_file(MAN_CONF))
    queued = next(c for c in conf if c.text.startswith("max_queued_messages"))
    assert "Defaults to 1000" in queued.text  # the paragraphs after an option's label stay with it
    assert "max_queued_bytes" not in queued.text.split(":")[0]
    prose = [c for c in conf if c.section == "AUTHENTICATION"]  # prose without entries is packed as before
    assert any(len(c.text.split()) > 60 for c in prose)


def test_literals_are_option_and_setting_names_and_numbers():
    assert literals("What does pg_ctl -c do?") == ["pg_ctl", "-c"]
    assert literals("is --no-wait the opposite of -w, and is postmaster.pid read?") == ["--no-wait", "-w", "postmaster.pid"]
    assert literals("how often are the $SYS topics updated, every 10 seconds?") == ["$SYS", "10"]
    assert literals("how fast does espeak speak") == []


@pytest.mark.parametrize("question,starts", [
    ("What does pg_ctl -c do?", "-c, --core-files"),
    ("What does the -g option of espeak do?", "-g <integer>"),
    ("What is max_inflight_messages for?", "max_inflight_messages"),
    ("How do I make pg_ctl print only errors?", "-s, --silent"),
])
def test_the_entry_of_the_option_asked_about_comes_first(index, question, starts):
    hit = Retriever(index).search(question, k=3)[0]
    assert hit.stored.chunk.text.startswith(starts), hit.stored.chunk.text[:80]


def test_a_generated_answer_rests_on_the_passage_it_cites(index):
    prep = prepare("What is the default pitch of espeak-ng?", Retriever(index))
    assert prep.answer.found and len(prep.hits) >= 2
    second = prep.hits[1]
    gen = with_generated(prep, json.dumps({"passage": 2, "answer": "It is what the second passage says."}))
    assert gen.mode == "generated" and gen.sources[0].section == second.stored.chunk.section
    assert gen.text.startswith(source_phrase(gen.sources[0], "man") + ": ")
    # a number the cited passage does not hold is never said: that passage's own sentences are
    pitch = next(i for i, h in enumerate(prep.hits, 1) if h.stored.chunk.text.startswith("-p <integer>"))
    made_up = with_generated(prep, json.dumps({"passage": pitch, "answer": "The default pitch is 64."}))
    assert made_up.mode == "cited" and "64" not in made_up.text and "default is 50" in made_up.text
    kept = with_generated(prep, json.dumps({"passage": pitch, "answer": "The default pitch is 50, set with -p."}))
    assert kept.mode == "generated" and kept.text.endswith("The default pitch is 50, set with -p.")
    # a wrong passage number: the passage holding every fact the answer states is its source
    other = next(i for i in range(1, len(prep.hits) + 1) if i != pitch)
    moved = with_generated(prep, json.dumps({"passage": other, "answer": "The default pitch is 50, set with -p."}))
    assert moved.mode == "generated" and moved.sources[0] == kept.sources[0]
    assert moved.text == kept.text
    # citing no passage declines; an unusable reply leaves the extractive answer
    none = with_generated(prep, json.dumps({"passage": 0, "answer": ""}))
    assert (none.found, none.text, none.mode) == (False, NOT_FOUND["en"], "declined")
    assert with_generated(prep, "{broken") is prep.answer and with_generated(prep, None) is prep.answer
    assert cited(json.dumps({"passage": 9, "answer": "x"}), 3) is None
    # a reply cut at the token budget keeps its whole sentences
    assert cited('{"passage": 2, "answer": "Use -p. The default is 50. It can go', 3) == (2, "Use -p. The default is 50.")
    assert cited('{"passage": 2, "answer": "Use the', 3) is None


def test_unsupported_facts_are_option_names_and_numbers_the_passage_lacks():
    passage = "-s <integer>: Speed in words per minute, default is 175."
    assert unsupported("Use -s; the default is 175 words per minute.", passage, "how fast") == []
    assert unsupported("Use -d 200 for speed.", passage, "how fast") == ["-d", "200"]
    assert unsupported("Use --speed=175.", passage, "") == ["--speed"]


class CountingEngine:
    """A real engine, its generations counted (the engine is not the unit under test)."""

    def __init__(self, inner):
        self.inner = inner
        self.calls = 0

    def stream(self, request, cancel=None):
        self.calls += 1
        return self.inner.stream(request, cancel)

    def __getattr__(self, name):
        return getattr(self.inner, name)


@pytest.fixture(scope="module")
def small_engine():
    from edge.llm.llamacpp import LlamaCppEngine

    e = LlamaCppEngine("smollm2-135m-instruct-q4_1", n_ctx=2048, threads=1)
    yield CountingEngine(e)
    e.close()


def test_a_question_no_document_answers_is_declined_without_generation(index, small_engine):
    settings = DocsSettings(answer="generated")
    before = small_engine.calls
    for q in ("How do I reset the air compressor after an overload?", "What torque do the forklift wheel nuts need?"):
        ans = answer_question(q, Retriever(index), settings, small_engine, max_tokens=48)
        assert (ans.found, ans.mode, ans.sources) == (False, "declined", [])
    assert small_engine.calls == before  # never reached the model


def test_a_generated_answer_states_only_what_its_passage_holds(index, small_engine):
    # the small model's words may be poor; whatever it says, the facts said are in the cited passage
    settings = DocsSettings(answer="generated")
    r = Retriever(index)
    for q in ("How fast does espeak speak?", "How long does pg_ctl wait for an operation by default?"):
        before = small_engine.calls
        ans = answer_question(q, r, settings, small_engine, max_tokens=64)
        assert small_engine.calls == before + 1
        assert ans.mode in ("generated", "cited", "declined", "extractive")  # extractive: no usable reply
        if ans.found:
            body = ans.text.split(": ", 1)[1]
            read = " ".join(f"{p.source.title} {p.source.section} {p.text}" for p in ans.passages)
            assert ans.text.startswith(source_phrase(ans.sources[0], "man"))
            assert unsupported(body, read, q) == []


def test_the_passage_closest_in_meaning_is_among_those_the_model_reads(tmp_path):
    enc = encoder_or_skip()
    with DocsIndex(tmp_path / "docs.db", enc) as ix:
        ix.add([MAN_ESPEAK, MAN_PGCTL])
        r = Retriever(ix)
        # no word of "how fast" is in "-s <integer>: Speed in words per minute": only the meaning finds it
        hits = r.search("How fast does espeak speak?", k=3)
        assert any(h.stored.chunk.text.startswith("-s <integer>") for h in hits)
        prep = prepare("How fast does espeak speak?", r, DocsSettings(top_k=3))
        assert any(h.stored.chunk.text.startswith("-s <integer>") for h in prep.hits)
        r.close()
