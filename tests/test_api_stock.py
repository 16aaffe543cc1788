"""The box's grounded dialog as the API model ``edge-stock`` (edge.service.api.stock): the real server
on a free loopback port, a real store, a real HTTP client; read-only unless the token may write."""
from __future__ import annotations

import json

import httpx
import pytest
from helpers import INVENTORY

from edge.config import ApiSettings, load_settings
from edge.llm.loader import build_llm
from edge.service.api.app import ServerThread, create_app
from edge.service.api.stock import READ_ONLY, StockDesk
from edge.stock.store import Store

TOKEN = "test-token-0123456789abcdef"


class StockServer:
    def __init__(self, tmp_path, **api):
        db = tmp_path / "edge.db"
        with Store(db) as s:
            s.import_csv(INVENTORY)
        self.settings = load_settings(overrides={"store": {"path": str(db)}, "output_dir": str(tmp_path), "api": api})
        self.engine = build_llm(self.settings, lazy=True)  # loaded only if a turn needs the model
        self.desk = StockDesk(self.settings, self.engine, writes=self.settings.api.stock_writes)
        app = create_app(self.engine, ApiSettings(**api), stock=self.desk)
        self.thread = ServerThread(app, "127.0.0.1", 0).start()
        headers = {"Authorization": f"Bearer {TOKEN}"} if api.get("token") else {}
        self.client = httpx.Client(base_url=self.thread.url, timeout=60, headers=headers)

    def records(self) -> int:
        return len(self.desk.store.records(last=1000))

    def chat(self, text: str) -> str:
        r = self.client.post("/api/chat", json={"model": "edge-stock", "stream": False,
                                                "messages": [{"role": "user", "content": text}]})
        assert r.status_code == 200, r.text
        return r.json()["message"]["content"]

    def close(self):
        self.client.close()
        self.thread.stop()
        self.desk.close()
        self.engine.close()


@pytest.fixture
def read_only(tmp_path):
    s = StockServer(tmp_path)
    yield s
    s.close()


def test_the_stock_model_is_listed_next_to_the_raw_one(read_only):
    names = [m["id"] for m in read_only.client.get("/v1/models").json()["data"]]
    assert names == ["edge", "edge-stock"]
    assert [m["name"] for m in read_only.client.get("/api/tags").json()["models"]] == ["edge", "edge-stock"]


def test_a_stock_question_gets_the_boxs_answer(read_only):
    assert read_only.chat("how many fuses are there") == "There are 60 fuses in bin 30."
    r = read_only.client.post("/api/generate", json={"model": "edge-stock", "prompt": "what's in bin 30", "stream": False})
    assert "fuse" in r.json()["response"] and r.json()["done"] is True


def test_a_write_is_refused_without_a_token_that_allows_it(read_only):
    before = read_only.records()
    assert read_only.chat("we used 3 fuses") == READ_ONLY
    assert read_only.chat("undo that") == READ_ONLY
    assert read_only.records() == before
    assert read_only.chat("how many fuses are there") == "There are 60 fuses in bin 30."


def test_the_openai_stream_carries_the_answer(read_only):
    body = {"model": "edge-stock", "stream": True, "messages": [{"role": "user", "content": "set a timer for ten minutes"}]}
    with read_only.client.stream("POST", "/v1/chat/completions", json=body) as r:
        events = [ln[6:] for ln in r.iter_lines() if ln.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    assert text == "I can't set timers or alarms; I can log and look up stock."
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_a_token_that_may_write_logs_through_the_same_dialog(tmp_path):
    s = StockServer(tmp_path, token=TOKEN, stock_writes=True)
    try:
        before = s.records()
        said = s.chat("we used 3 fuses")
        assert "3 fuses" in said and s.records() == before + 1
        assert s.chat("how many fuses are there") == "There are 57 fuses in bin 30."
        assert httpx.post(f"{s.thread.url}/api/chat", json={"model": "edge-stock", "messages": []}).status_code == 401
    finally:
        s.close()
