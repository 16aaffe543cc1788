"""The documents by voice, through the whole loop: ``edge run --input`` over one session (the real
"hey mycroft" clip before each question, the questions spoken by piper's joe voice, then a stock
question from the shared sessions) with a store whose documents folder holds two real Debian man
pages (``edge docs add``). A question the documents answer is answered with its source, a free
question they answer too; one they cannot answer gets "I don't find that in the documents" (the
LLM is loaded and never asked); the stock question in the same run still works, and nothing is
written to the store."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from drivers.audio import read_wav
from edge.stages.docs.answer import NOT_FOUND
from edge.stock.store import Store
from tests.docs_helpers import MAN_CONF, MAN_PGCTL, VOICE_TEXT, docs_recording, skip_without_documents
from tests.helpers import INVENTORY, REPO, SESSION_WAKE, SESSIONS
from tests.synth import session, to16k

UNANSWERABLE = "What does the manual say about the torque for the compressor head bolts?"
FREE = "How do I append the server log output to a log file?"  # no template: the documents take it


def recording(text: str) -> np.ndarray:
    data, rate = read_wav(docs_recording(text))
    return to16k(data, rate)


def edge(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "edge.cli", *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def voice_run(tmp_path_factory):
    skip_without_documents((MAN_CONF, MAN_PGCTL))
    tmp = tmp_path_factory.mktemp("docs_voice")
    stock, rate = read_wav(SESSIONS / "query_m8_bolts.wav")  # its own wake word, then the question
    wav = session(tmp / "session.wav", 0.5, "<wake>", 0.4, recording(VOICE_TEXT), 2.5,
                  "<wake>", 0.4, recording(UNANSWERABLE), 2.5, "<wake>", 0.4, recording(FREE), 2.5,
                  to16k(stock, rate), 2.0)
    cfg = tmp / "edge.yaml"
    # BM25 only: embedding the two pages would take a minute here; the routing is the same
    cfg.write_text(f"board: x86-dev\n{SESSION_WAKE}store: {{path: {tmp / 'store' / 'edge.db'}}}\ndocs: {{embeddings: false}}\n")
    added = edge("docs", "add", "--config", cfg, MAN_CONF, MAN_PGCTL)
    assert added.returncode == 0 and "2 added" in added.stdout, added.stderr
    r = edge("run", "--input", wav, "--config", cfg, "--inventory", INVENTORY, "--output-dir", tmp / "out", "--json")
    events = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    return r, events, tmp


def test_spoken_questions_are_answered_from_the_documents_or_declined(voice_run):
    r, events, tmp = voice_run
    heard = [e["text"] for e in events if e["type"] == "transcript"]
    assert r.returncode == 0, (r.stderr[-2000:], heard)
    assert not [e for e in events if e["type"] == "error"], events
    intents = [(e["intent"], e["source"]) for e in events if e["type"] == "intent"]
    replies = [e["text"] for e in events if e["type"] == "reply"]
    # the template path takes "what does the manual say about …"; the free question becomes
    # ask_docs because the documents answer it (source docs), before the LLM could guess
    assert intents == [("ask_docs", "template"), ("ask_docs", "template"), ("ask_docs", "docs"),
                       ("query_stock", "template")], (intents, heard, replies)
    assert replies[0].startswith("From the mosquitto.conf manual page, section General Options: "), replies
    assert "max_queued_messages" in replies[0] and "1000" in replies[0]
    assert replies[1] == NOT_FOUND["en"], (heard[1], replies[1])  # no invention from the loaded LLM
    assert replies[2].startswith("From the pg_ctl manual page, section Description: ") and "-l" in replies[2]
    assert "140" in replies[3] and "bin 12" in replies[3], replies[3]
    with Store(tmp / "store" / "edge.db") as store:
        assert store.records() == []  # a question is not a stock movement
