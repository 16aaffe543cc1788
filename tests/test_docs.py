"""Answers from documents (edge.stages.docs): every reader on real files Debian ships, the broken
kinds (encrypted, text-less and truncated PDFs, binary, empty, a man-page link) reported by name
with the reason while the rest is indexed, incremental re-indexing by SHA-256, answers naming
their source or declining, sentence vectors, the prompt fitting n_ctx, the CLI and the HTTP API."""
from __future__ import annotations

import gzip
import io
import json
import os
import random
import shutil
from pathlib import Path

import pypdf
import pytest

from edge.config import ConfigError, DocsSettings, load_settings
from edge.llm.base import ContextOverflow
from edge.stages.docs.answer import (
    NOT_FOUND,
    answer_question,
    fit_passages,
    generates,
    looks_like_docs_question,
    model_billions,
    prepare,
    source_phrase,
    with_generated,
)
from edge.stages.docs.chunk import MAX_WORDS, chunk_document
from edge.stages.docs.index import DocsIndex
from edge.stages.docs.parse import DocParseError, parse_file
from edge.stages.docs.retrieve import Retriever
from tests.docs_helpers import (
    HTML,
    MAN_CONF,
    MAN_PGCTL,
    MD,
    PDF,
    TEXT,
    docs_recording,
    encoder_or_skip,
    skip_without_documents,
)


@pytest.fixture(scope="module", autouse=True)
def _debian_docs():
    skip_without_documents()


def test_man_page_sections_options_and_title():
    doc = parse_file(MAN_CONF)
    assert (doc.kind, doc.title) == ("man", "mosquitto.conf(5)")
    assert doc.summary.startswith("mosquitto.conf - the configuration file")
    paths = [s.path for s in doc.sections]
    assert ("GENERAL OPTIONS",) in paths and ("LISTENERS", "Certificate based SSL/TLS Support") in paths
    chunks = chunk_document(doc)
    # an option's name stays with its explanation
    assert any(c.section == "GENERAL OPTIONS" and c.text.startswith("max_queued_messages count: The maximum number")
               for c in chunks)
    assert all(len(c.text.split()) <= MAX_WORDS + 12 for c in chunks)
    assert "\\f" not in " ".join(c.text for c in chunks)  # roff font escapes are gone


def test_docbook_man_page_options_keep_both_spellings():
    chunks = chunk_document(parse_file(MAN_PGCTL))
    assert any(c.text.startswith("-l filename, --log=filename: Append the server log output") for c in chunks)
    assert {"Starting the Server", "OPTIONS", "FILES"} <= {c.section for c in chunks}


def test_markdown_html_text_pdf_structure():
    md = parse_file(MD)
    assert md.title == "eSpeak NG user guide"
    assert ("eSpeak NG user guide", "Installation", "Linux") in [s.path for s in md.sections]
    html = parse_file(HTML)
    assert html.kind == "html" and html.title == "MBROLA Voices"
    rows = [b.text for s in html.sections for b in s.blocks if b.kind == "row"]
    assert "MBROLA Voice: de1; Language: German; Gender: female; eSpeak: mb-de1; Debian Package: mbrola-de1" in rows
    text = parse_file(TEXT)
    assert text.title == "PostgreSQL for Debian"
    assert "First steps for the impatient" in [s.heading for s in text.sections]
    pdf = parse_file(PDF)
    assert pdf.kind == "pdf" and pdf.title == "Shared MIME-info Database"
    glob = next(s for s in pdf.sections if s.heading == "2.4. The glob files")
    assert glob.path == ("2. Unified system", "2.4. The glob files") and glob.blocks[0].page == 7


def _pdf_bytes(text: str | None, password: str | None = None) -> bytes:
    w = pypdf.PdfWriter()
    if text is None:
        w.add_blank_page(612, 792)
    else:
        w.append(pypdf.PdfReader(PDF), pages=[0])
    if password:
        w.encrypt(password)
    buf = io.BytesIO()
    w.write(buf)
    return buf.getvalue()


@pytest.fixture
def broken(tmp_path) -> Path:
    """A folder with one good Markdown file and every broken kind."""
    d = tmp_path / "docs"
    d.mkdir()
    (d / "good.md").write_text("# Pump P-101 manual\n\n## 4.2 Pressure relief\n\nOpen valve V3 slowly before "
                               "removing the cover of pump P-101.\n")
    (d / "encrypted.pdf").write_bytes(_pdf_bytes("x", password="secret"))
    (d / "scanned.pdf").write_bytes(_pdf_bytes(None))
    (d / "truncated.pdf").write_bytes(PDF.read_bytes()[:3000])
    (d / "notapdf.pdf").write_text("hello")
    (d / "binary.txt").write_bytes(b"\x00\x01\x02" * 100)
    (d / "empty.md").write_text("\n\n")
    (d / "link.1").write_text(".so man1/other.1\n")
    (d / "badgzip.md.gz").write_bytes(b"not gzip at all")
    (d / "picture.png").write_bytes(b"\x89PNG")  # no reader: skipped in a folder, not failed
    return d


def test_broken_files_are_named_with_reasons(broken):
    reasons = {}
    for f in sorted(broken.iterdir()):
        if f.name in {"good.md", "picture.png"}:
            continue
        with pytest.raises(DocParseError) as e:
            parse_file(f)
        reasons[f.name] = e.value.reason
    assert "encrypted" in reasons["encrypted.pdf"]
    assert "no text layer" in reasons["scanned.pdf"]
    assert "broken or truncated" in reasons["truncated.pdf"]
    assert "not a PDF" in reasons["notapdf.pdf"]
    assert "binary" in reasons["binary.txt"]
    assert reasons["empty.md"] == "no text in it"
    assert "link to another man page" in reasons["link.1"]
    assert "cannot be read" in reasons["badgzip.md.gz"]


def test_pdf_with_only_an_owner_password_is_read(tmp_path):
    w = pypdf.PdfWriter()
    w.append(pypdf.PdfReader(PDF), pages=[0, 1])
    w.encrypt(user_password="", owner_password="owner")
    f = tmp_path / "owner.pdf"
    with open(f, "wb") as fh:
        w.write(fh)
    assert parse_file(f).sections


def test_index_reports_failures_and_indexes_the_rest(broken, tmp_path):
    with DocsIndex(tmp_path / "docs.db") as ix:
        rep = ix.add([broken])
        assert [Path(p).name for p in rep.added] == ["good.md"]
        assert sorted(Path(p).name for p, _ in rep.failed) == sorted(
            ["encrypted.pdf", "scanned.pdf", "truncated.pdf", "notapdf.pdf", "binary.txt", "empty.md", "link.1",
             "badgzip.md.gz"])
        assert rep.skipped == 1
        ans = answer_question("What does the manual say about pressure relief on pump P-101?", Retriever(ix))
        assert ans.found and ans.text.startswith("From Pump P-101 manual, section 4.2 Pressure relief: Open valve V3")


def test_a_fifo_a_link_loop_and_random_bytes_are_named_for_what_they_are(tmp_path):
    fifo = tmp_path / "notes.md"
    os.mkfifo(fifo)
    loop_a, loop_b = tmp_path / "a.md", tmp_path / "b.md"
    loop_a.symlink_to(loop_b)
    loop_b.symlink_to(loop_a)
    noise = tmp_path / "noise.md"  # random bytes without a NUL (the NUL test alone let them in as Latin-1)
    noise.write_bytes(bytes(b for b in random.Random(7).randbytes(6000) if b))
    with DocsIndex(tmp_path / "docs.db") as ix:
        rep = ix.add([fifo, loop_a, noise])
        reasons = {Path(p).name: r for p, r in rep.failed}
        assert rep.added == [] and ix.count() == 0
    assert reasons["notes.md"].startswith("a FIFO (named pipe), not a document file; fix:"), reasons
    assert reasons["a.md"].startswith("a loop of symbolic links"), reasons
    assert "binary data, not text" in reasons["noise.md"] and "fix:" in reasons["noise.md"], reasons
    assert not any("no such file" in r for r in reasons.values())


def test_incremental_reindex_by_sha256(tmp_path):
    d = tmp_path / "docs"
    d.mkdir()
    shutil.copy(MD, d / "guide.md")
    (d / "pump.md").write_text("# Pump manual\n\n## Bearings\n\nGrease the bearings every 500 hours.\n")
    with DocsIndex(tmp_path / "docs.db") as ix:
        r = Retriever(ix)
        first = ix.add([d])
        assert len(first.added) == 2 and first.chunks == ix.count()
        again = ix.add([d])
        assert (again.added, again.updated, len(again.unchanged), again.chunks) == ([], [], 2, 0)
        (d / "pump.md").write_text("# Pump manual\n\n## Bearings\n\nGrease the bearings every 250 hours.\n")
        changed = ix.reindex()
        assert [Path(p).name for p in changed.updated] == ["pump.md"] and len(changed.unchanged) == 1
        hit = r.search("how often grease bearings")[0]
        assert "250 hours" in hit.stored.chunk.text
        assert not [h for h in r.search("grease bearings 500 hours", k=20) if "500 hours" in h.stored.chunk.text]
        (d / "pump.md").unlink()
        gone = ix.reindex()
        assert [Path(p).name for p in gone.removed] == ["pump.md"]
        assert not r.search("grease bearings")  # nothing left that mentions them: the FTS rows went too
        assert [Path(f["path"]).name for f in ix.files()] == ["guide.md"]
        assert ix.remove([d]) == [str((d / "guide.md").resolve())] and ix.count() == 0


@pytest.fixture(scope="module")
def bm25_index(tmp_path_factory):
    ix = DocsIndex(tmp_path_factory.mktemp("docs") / "docs.db")
    ix.add([MAN_CONF, MAN_PGCTL, MD, HTML, TEXT, PDF])
    yield ix
    ix.close()


def test_answer_names_its_source_or_declines(bm25_index):
    r = Retriever(bm25_index)
    ans = answer_question("What is the default maximum of queued messages per client in mosquitto?", r)
    assert ans.found and ans.mode == "extractive"
    assert ans.text.startswith("From the mosquitto.conf manual page, section General Options: ")
    assert "1000" in ans.text and ans.sources[0].title == "mosquitto.conf(5)"
    assert len(ans.text.split()) <= 60
    pdf = answer_question("In which byte order are the numbers of the mime.cache file?", r)
    assert pdf.text.startswith("From Shared MIME-info Database, section 2.9. The mime.cache files, page 13: ")
    no = answer_question("What is the torque for the compressor head bolts?", r)
    assert (no.found, no.text, no.sources, no.mode) == (False, NOT_FOUND["en"], [], "declined")


def test_docs_question_heuristic_and_model_size():
    assert looks_like_docs_question("What does the manual say about bridge restart timeouts?")
    assert looks_like_docs_question("according to the procedure, how do I vent the pump")
    assert not looks_like_docs_question("how many M8 bolts are in bin twelve")
    assert model_billions("qwen2.5-coder-1.5b-instruct-q4_k_m") == 1.5
    assert model_billions("smollm2-135m-instruct-q4_1") == pytest.approx(0.135)
    assert generates("auto", "qwen2.5-coder-1.5b-instruct-q4_k_m") and not generates("auto", "smollm2-135m-instruct-q4_1")
    assert generates("generated", "smollm2-135m-instruct-q4_1") and not generates("extractive", "x-7b")


def test_docs_settings_errors_name_the_key(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("docs:\n  threshold: 2\n")
    with pytest.raises(ConfigError, match="docs.threshold"):
        load_settings(cfg)
    s = load_settings(overrides={"store": {"path": str(tmp_path / "s" / "edge.db")}})
    assert s.docs.index_path(s.store.path) == tmp_path / "s" / "docs.db"


def test_vectors_are_stored_and_fused(tmp_path):
    import numpy as np

    enc = encoder_or_skip()
    with DocsIndex(tmp_path / "docs.db", enc) as ix:
        ix.add(["/usr/share/man/man7/mosquitto-tls.7.gz", "/usr/share/man/man7/mqtt.7.gz"])
        ids, mat = ix.vectors()
        assert mat.shape == (ix.count(), 384) and abs(float((mat[0] ** 2).sum()) - 1.0) < 1e-4
        assert ix.vectors()[1] is mat  # kept in memory between questions, not read again per query
        r = Retriever(ix)
        q = "what happens to a message the broker keeps for new subscribers"
        hits = r.search(q)
        assert hits[0].vector_rank is not None and hits[0].cosine is not None
        assert any(h.stored.chunk.section == "RETAINED MESSAGES" for h in hits[:3])
        # the embedding made beside BM25 (a worker thread) gives what the question's vector given does
        assert [(h.stored.id, h.cosine, h.confidence) for h in hits] == [
            (h.stored.id, h.cosine, h.confidence) for h in r.search(q, qvec=r.embed(q))]
        # the partial sort keeps the full sort's order of the best candidates
        top, _ = r.vector(q, limit=5)
        assert top == [int(ids[i]) for i in np.argsort(-(mat @ r.embed(q)))[:5]]
        r.close()
        ix.add(["/usr/share/man/man7/mqtt.7.gz"], force=True)  # a write: the matrix is read again
        assert ix.vectors()[1] is not mat and ix.vectors()[1].shape == mat.shape
    with DocsIndex(tmp_path / "docs.db") as plain:  # the same file read without the encoder: BM25 only
        assert Retriever(plain).search("retained messages")[0].vector_rank is None


@pytest.fixture(scope="module")
def small_llm():
    from edge.llm.llamacpp import LlamaCppEngine

    e = LlamaCppEngine("smollm2-135m-instruct-q4_1", n_ctx=256, threads=1)  # its tokenizer; nothing generated
    yield e
    e.close()


def test_prompt_fits_n_ctx_or_answer_stays_extractive(bm25_index, small_llm):
    r = Retriever(bm25_index)
    hits = r.search("pg_ctl stop shutdown modes smart fast immediate", k=8)
    short = [h for h in hits if len(h.stored.chunk.text.split()) < 40]
    messages = fit_passages("which shutdown modes?", short, small_llm, 64)
    used = sum(small_llm.count_tokens(m["content"]) for m in messages)
    assert used + 64 <= small_llm.n_ctx
    with pytest.raises(ContextOverflow):  # not even the best passage fits 256 tokens with a 200-token answer
        fit_passages("which shutdown modes?", hits, small_llm, 200)
    # a prompt that cannot fit is never sent: the answer is the extractive one, with its source
    ans = answer_question("Which shutdown modes can pg_ctl stop use?", r, DocsSettings(answer="generated"), small_llm)
    assert ans.found and ans.mode == "extractive" and ans.text.startswith("From the pg_ctl manual page")


def test_generated_text_gets_the_source_or_falls_back(bm25_index):
    prep = prepare("Which shutdown modes can pg_ctl stop use?", Retriever(bm25_index))
    gen = with_generated(prep, "Smart, fast and immediate. Fast is the default. It also says more")
    assert gen.mode == "generated" and gen.text == (f"{source_phrase(prep.answer.sources[0], 'man')}: "
                                                    "Smart, fast and immediate. Fast is the default.")
    # the model saying no passage answers declines (a quote of the nearest passage would be a wrong answer)
    assert with_generated(prep, "NOT FOUND").mode == "declined" and with_generated(prep, None) is prep.answer


def test_cli_add_list_ask_json(tmp_path, broken, capsys):
    from edge.cli import main

    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"store:\n  path: {tmp_path / 'edge.db'}\ndocs:\n  embeddings: false\n")
    assert main(["docs", "add", "--config", str(cfg), str(broken), str(MAN_CONF)]) == 1
    out = capsys.readouterr()
    assert "2 added" in out.out and "not indexed: " in out.err and "encrypted.pdf: encrypted" in out.err
    assert main(["docs", "list", "--config", str(cfg), "--json"]) == 0
    assert {f["title"] for f in json.loads(capsys.readouterr().out)} == {"Pump P-101 manual", "mosquitto.conf(5)"}
    assert main(["ask", "--config", str(cfg), "--json", "what does the manual say about the password_file option"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines[0]["type"] == "intent" and lines[0]["intent"] == "ask_docs"
    assert lines[1]["text"].startswith("From the mosquitto.conf manual page, section General Options")
    assert lines[-1]["type"] == "docs" and lines[-1]["sources"][0]["file"] == str(MAN_CONF)
    assert main(["docs", "remove", "--config", str(cfg), str(MAN_CONF)]) == 0


def test_http_api_answers_with_passages(tmp_path):
    from fastapi.testclient import TestClient

    from edge.service.api.app import create_app
    from edge.service.console.routes import ConsoleContext
    from edge.stock.store import Store

    with DocsIndex(tmp_path / "docs.db") as ix:
        ix.add([MAN_PGCTL, MD])
    settings = load_settings(overrides={"store": {"path": str(tmp_path / "edge.db")}, "docs": {"embeddings": False}})
    console = ConsoleContext(Store(settings.store.path), settings=settings, events=())
    app = create_app(None, settings.api, console=console)
    with TestClient(app, base_url="http://127.0.0.1") as client:  # the guard wants a loopback Host
        r = client.post("/api/docs/ask", json={"question": "How do I append the server log output to a file with pg_ctl?"})
        assert r.status_code == 200
        body = r.json()
        assert body["found"] and body["answer"].startswith("From the pg_ctl manual page, section ")
        assert "-l" in body["answer"] and body["sources"][0]["file"] == str(MAN_PGCTL)
        assert body["passages"][0]["source"]["title"] == "pg_ctl(1)" and body["passages"][0]["text"]
        no = client.post("/api/docs/ask", json={"question": "What tyre pressure does the delivery van need?"}).json()
        assert no["found"] is False and no["sources"] == [] and no["answer"] == NOT_FOUND["en"]
        assert client.post("/api/docs/ask", json={"question": " "}).status_code == 400
        long = client.post("/api/docs/ask", json={"question": "pg_ctl log file " * 400})  # 6,400 characters
        assert long.status_code == 400 and "at most 1,000 characters" in long.json()["error"]
        assert "pg_ctl log file" not in long.json()["error"]  # not echoed
    console.store.close()


def test_gzipped_markdown_reads_like_plain(tmp_path):
    plain = tmp_path / "a.md"
    plain.write_text("# T\n\n## S\n\ntext here.\n")
    gz = tmp_path / "b.md.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    assert [s.path for s in parse_file(gz).sections] == [s.path for s in parse_file(plain).sections]


def test_spoken_question_is_answered_with_its_source(bm25_index):
    import numpy as np

    from drivers.audio import wav_frames
    from edge.stages.asr.whisper import WhisperRecognizer

    audio = np.concatenate(list(wav_frames(docs_recording())))
    heard = WhisperRecognizer("whisper-tiny-en").transcribe(audio).text
    assert "manual" in heard.lower() and "queued messages" in heard.lower()
    assert looks_like_docs_question(heard)
    ans = answer_question(heard, Retriever(bm25_index))
    assert ans.found and ans.text.startswith("From the mosquitto.conf manual page, section General Options: ")
    assert "max_queued_messages" in ans.text or "queue" in ans.text
