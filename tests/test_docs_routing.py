"""Routing to the documents (text): the ``ask_docs`` template phrasings (en, zh), a free question
the documents answer taken before the LLM (:attr:`Understanding.docs`), no index → "No documents
are indexed" and never the LLM's guess, ``edge ask`` and ``POST /api/docs/ask`` giving the same
answer text, and the source phrase in Mandarin."""
from __future__ import annotations

import json

import pytest

from edge.config import load_settings
from edge.stages.dialog import act
from edge.stages.docs.answer import NOT_FOUND, Source, source_phrase
from edge.stages.docs.desk import DocsDesk
from edge.stages.docs.index import DocsIndex
from edge.stages.nlu.understand import Understanding
from edge.stages.reply import text as reply_text
from edge.stock.store import Store
from tests.docs_helpers import MAN_CONF, MAN_PGCTL, skip_without_documents
from tests.helpers import INVENTORY

TEMPLATED = ["what does the manual say about the maximum number of queued messages",
             "What does the documentation say about M8 bolts?",  # an item's name does not make it a stock question
             "according to the procedure how do I vent the pump",
             "look up retained messages in the manual",
             "is there anything in the handbook about bridge restart timeouts"]
TEMPLATED_ZH = ["手册上关于max_queued_messages怎么说", "说明书里关于压力释放写了什么", "根据规程，泵怎么排气",
                "查一下手册里关于密码文件"]
FREE = "How do I append the server log output to a log file?"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A store with the shared sessions' inventory and, beside it, an index of two real man pages
    (BM25 only: the routing is the same with vectors)."""
    skip_without_documents((MAN_CONF, MAN_PGCTL))
    tmp = tmp_path_factory.mktemp("docs_routing")
    settings = load_settings(board="x86-dev", overrides={"store": {"path": str(tmp / "edge.db")},
                                        "docs": {"embeddings": False}, "llm": {"engine": "none"}})
    store = Store(settings.store.path)
    store.import_csv(INVENTORY)
    with DocsIndex(settings.docs.index_path(settings.store.path)) as ix:
        ix.add([MAN_CONF, MAN_PGCTL])
    yield settings, store, tmp
    store.close()


@pytest.mark.parametrize("language,texts", [("en", TEMPLATED), ("zh", TEMPLATED_ZH)])
def test_template_phrasings_are_ask_docs(site, language, texts):
    _, store, _ = site
    und = Understanding(store.items(), None, language=language)
    for t in texts:
        intent = und.understand(t)
        assert (intent.intent, intent.source, intent.text) == ("ask_docs", "template", t), (t, intent)
    assert und.understand("how many M8 bolts are in bin twelve" if language == "en" else "螺栓还有多少").intent == "query_stock"


def test_a_free_question_the_documents_answer_is_ask_docs(site):
    settings, store, _ = site
    und = Understanding(store.items(), None)
    assert und.understand(FREE).intent == "other"  # without documents: the LLM's (here: none) to answer
    und.docs = DocsDesk.open(settings)
    try:
        intent = und.understand(FREE)
        assert (intent.intent, intent.source) == ("ask_docs", "docs")
        said = act(intent, store, FREE, "t1", docs=und.docs.answer).text
        assert said.startswith("From the pg_ctl manual page, section Description: ") and "-l" in said
        # a question the documents do not answer goes on to the LLM path, not to ask_docs
        assert und.understand("what is the capital of france").intent == "other"
        assert und.understand("how many M8 bolts are in bin twelve").intent == "query_stock"
    finally:
        und.docs.close()


def test_no_index_says_so_and_never_guesses(tmp_path, capsys):
    from edge.cli import main

    settings = load_settings(overrides={"store": {"path": str(tmp_path / "edge.db")}, "docs": {"embeddings": False}})
    assert DocsDesk.open(settings) is None  # no index file
    DocsIndex(settings.docs.index_path(settings.store.path)).close()
    assert DocsDesk.open(settings) is None  # an index without documents
    cfg = tmp_path / "edge.yaml"  # the small LLM is loaded: the answer must still not be its guess
    cfg.write_text(f"board: x86-dev\nstore: {{path: {tmp_path / 'edge.db'}}}\ndocs: {{embeddings: false}}\n")
    assert main(["ask", "--config", str(cfg), "--json", TEMPLATED[0]]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(e["intent"], e["source"]) for e in lines if e["type"] == "intent"] == [("ask_docs", "template")]
    assert [e["text"] for e in lines if e["type"] == "reply"] == ["No documents are indexed on this box."]
    assert main(["ask", "--config", str(cfg), "--docs", "what is the retention period"]) == 2  # --docs: an error
    assert "no documents indexed" in capsys.readouterr().err


@pytest.mark.parametrize("question", [TEMPLATED[0], FREE])
def test_edge_ask_and_the_http_api_give_the_same_answer(site, question, capsys):
    from fastapi.testclient import TestClient

    from edge.cli import main
    from edge.service.api.app import create_app
    from edge.service.console.routes import ConsoleContext

    settings, store, tmp = site
    cfg = tmp / "edge.yaml"
    cfg.write_text(f"board: x86-dev\nstore: {{path: {settings.store.path}}}\ndocs: {{embeddings: false}}\n"
                   "llm: {engine: none}\n")
    assert main(["ask", "--config", str(cfg), "--json", question]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    said = [e["text"] for e in lines if e["type"] == "reply"]
    assert [e["intent"] for e in lines if e["type"] == "intent"] == ["ask_docs"]
    console = ConsoleContext(Store(settings.store.path), settings=settings, events=())
    with TestClient(create_app(None, settings.api, console=console), base_url="http://127.0.0.1") as client:
        body = client.post("/api/docs/ask", json={"question": question}).json()
    console.store.close()
    assert said == [body["answer"]] and body["found"]
    assert body["sources"][0]["title"] in {"mosquitto.conf(5)", "pg_ctl(1)"}
    assert body["passages"] and body["passages"][0]["source"]["file"] in {str(MAN_CONF), str(MAN_PGCTL)}


def test_mandarin_names_the_source_in_mandarin(site):
    settings, store, _ = site
    zh = load_settings(overrides={"language": "zh", "store": {"path": str(settings.store.path)},
                                  "docs": {"embeddings": False}, "llm": {"engine": "none"}})
    desk = DocsDesk.open(zh)
    try:
        und = Understanding(store.items(), None, language="zh")
        und.docs = desk
        q = "手册上关于max_queued_messages怎么说"
        said = act(und.understand(q), store, q, "t1", language="zh", docs=desk.answer).text
        assert said.startswith("根据《mosquitto.conf》手册，第General Options节：") and "max_queued_messages" in said
        q = "手册上关于压缩机螺栓扭矩怎么说"
        assert act(und.understand(q), store, q, "t2", language="zh", docs=desk.answer).text == NOT_FOUND["zh"]
    finally:
        desk.close()
    assert act(und.understand(q), store, q, "t3", language="zh", docs=None).text == reply_text("no_docs", "zh")
    pdf = Source("Shared MIME-info Database", "2.4. The glob files", ("2. Unified system", "2.4. The glob files"),
                 7, "/x.pdf")
    assert source_phrase(pdf, "pdf", "zh") == "根据《Shared MIME-info Database》，第2.4. The glob files节，第7页"
    assert source_phrase(pdf, "pdf") == "From Shared MIME-info Database, section 2.4. The glob files, page 7"
