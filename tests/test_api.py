"""edge.service.api.app: the real server (uvicorn on a free loopback port, in a thread) with the real SmolLM2
engine behind the fallback chain, driven by a real HTTP client (httpx): Ollama and OpenAI response
shapes, streamed and not; healthz; Prometheus metrics; the bearer-token rule; 503 when the queue
is full; a disconnecting client cancels its generation."""
from __future__ import annotations

import json
import threading
import time

import httpx
import jsonschema
import pytest
from prometheus_client.parser import text_string_to_metric_families

from edge.cli import main as cli_main
from edge.config import ApiSettings, ConfigError, load_settings
from edge.llm.base import LlmEngine
from edge.llm.chain import EngineChain, StepSpec
from edge.service.api.app import ServerThread, create_app
from edge.service.api.metrics import METRIC_NAMES

MODEL = "smollm2-135m-instruct-q4_1"
TOKEN = "test-token-0123456789abcdef"
GUARD_S = 60  # hang detection only


@pytest.fixture(scope="module")
def chain():
    c = EngineChain([StepSpec("llamacpp", MODEL, 1024)]).start()
    yield c
    c.close()


class Server:
    def __init__(self, engine, **api):
        self.settings = ApiSettings(**api)
        self.app = create_app(engine, self.settings)
        self.thread = ServerThread(self.app, "127.0.0.1", 0).start()
        headers = {"Authorization": f"Bearer {self.settings.token}"} if self.settings.token else {}
        self.client = httpx.Client(base_url=self.thread.url, timeout=GUARD_S, headers=headers)

    def close(self):
        self.client.close()
        self.thread.stop()


@pytest.fixture
def server(chain):
    s = Server(chain)
    yield s
    s.close()


def chat_body(text="What is a wrench?", **kw):
    body = {"model": "edge", "messages": [{"role": "user", "content": text}], "options": {"num_predict": 12,
                                                                                           "temperature": 0}}
    body.update(kw)
    return body


def ndjson(resp) -> list[dict]:
    return [json.loads(line) for line in resp.iter_lines() if line.strip()]


USAGE_KEYS = {"total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration", "eval_count",
              "eval_duration", "done_reason"}


# ------------------------------------------------------------------------------------ Ollama


def test_ollama_chat_streams_ndjson(server):
    with server.client.stream("POST", "/api/chat", json=chat_body()) as r:  # stream defaults to true
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
        lines = ndjson(r)
    *parts, last = lines
    assert len(parts) >= 2
    for p in parts:
        assert set(p) == {"model", "created_at", "message", "done"} and p["done"] is False
        assert p["message"]["role"] == "assistant" and p["created_at"].endswith("Z")
    assert last["done"] is True and USAGE_KEYS <= set(last) and last["message"] == {"role": "assistant", "content": ""}
    assert last["done_reason"] in ("stop", "length") and last["prompt_eval_count"] > 0
    assert 1 <= last["eval_count"] <= 12 and last["total_duration"] >= last["eval_duration"] > 0
    assert "".join(p["message"]["content"] for p in parts).strip()


def test_ollama_chat_without_streaming_is_one_object(server):
    r = server.client.post("/api/chat", json=chat_body(stream=False))
    assert r.status_code == 200
    d = r.json()
    assert d["done"] is True and d["model"] == "edge" and USAGE_KEYS <= set(d)
    assert d["message"]["role"] == "assistant" and d["message"]["content"].strip()


def test_ollama_generate_streamed_and_not(server):
    body = {"model": "edge", "prompt": "Name one tool.", "system": "Answer briefly.",
            "options": {"num_predict": 8, "temperature": 0}}
    with server.client.stream("POST", "/api/generate", json=body) as r:
        lines = ndjson(r)
    assert all("response" in x and "message" not in x for x in lines)
    assert lines[-1]["done"] is True and lines[-1]["response"] == "" and USAGE_KEYS <= set(lines[-1])
    d = server.client.post("/api/generate", json={**body, "stream": False}).json()
    assert d["done"] is True and d["response"].strip() and d["eval_count"] <= 8


def test_ollama_format_schema_constrains_the_answer(server):
    schema = {"type": "object", "properties": {"tool": {"type": "string"}, "count": {"type": "integer"}},
              "required": ["tool", "count"]}
    d = server.client.post("/api/chat", json=chat_body("We have 3 hammers. Give tool and count as JSON.",
                                                       stream=False, format=schema,
                                                       options={"num_predict": 40, "temperature": 0})).json()
    jsonschema.validate(json.loads(d["message"]["content"]), schema)


# ------------------------------------------------------------------------------------ OpenAI


def test_openai_chat_completion_object(server):
    r = server.client.post("/v1/chat/completions", json={
        "model": "edge", "messages": [{"role": "system", "content": "Be brief."},
                                      {"role": "user", "content": "What is a drill?"}],
        "max_tokens": 10, "temperature": 0})
    assert r.status_code == 200
    d = r.json()
    assert d["object"] == "chat.completion" and d["id"].startswith("chatcmpl-") and isinstance(d["created"], int)
    (choice,) = d["choices"]
    assert choice["index"] == 0 and choice["message"]["role"] == "assistant" and choice["message"]["content"]
    assert choice["finish_reason"] in ("stop", "length")
    u = d["usage"]
    assert u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"] and 1 <= u["completion_tokens"] <= 10


def test_openai_streams_server_sent_events(server):
    body = {"model": "edge", "messages": [{"role": "user", "content": "What is a saw?"}], "max_tokens": 10,
            "stream": True, "stream_options": {"include_usage": True}}
    with server.client.stream("POST", "/v1/chat/completions", json=body) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        events = [line[len("data: "):] for line in r.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    finals = [c for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]
    assert len(finals) == 1 and finals[0]["choices"][0]["finish_reason"] in ("stop", "length")
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert text.strip()
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] >= 1


def test_openai_json_schema_response_format(server):
    schema = {"type": "object", "properties": {"answer": {"type": "boolean"}}, "required": ["answer"]}
    d = server.client.post("/v1/chat/completions", json={
        "messages": [{"role": "user", "content": "Is steel a metal? Answer in JSON."}], "max_tokens": 20,
        "response_format": {"type": "json_schema", "json_schema": {"name": "yes_no", "schema": schema}}}).json()
    jsonschema.validate(json.loads(d["choices"][0]["message"]["content"]), schema)


def test_too_long_question_is_400_not_a_crash(server):
    r = server.client.post("/v1/chat/completions", json={
        "messages": [{"role": "user", "content": "bin " * 1500}], "max_tokens": 10})
    assert r.status_code == 400 and "too long" in r.json()["error"]["message"]
    assert server.client.get("/healthz").json()["status"] == "ok"  # the engine is still fine


def test_a_malformed_request_is_400_naming_the_field(server):
    r = server.client.post("/api/chat", json={"model": "edge", "messages": []})
    assert r.status_code == 400 and "messages" in r.json()["error"]


# -------------------------------------------------------------------------------- health, metrics


def test_healthz_names_the_active_engine(server):
    d = server.client.get("/healthz").json()
    assert d["status"] == "ok" and d["engine"] == f"llamacpp:{MODEL}"
    assert [(s["engine"], s["state"], s["active"]) for s in d["chain"]] == [("llamacpp", "healthy", True),
                                                                            ("grammar", "healthy", False)]
    assert d["queue_depth"] == 0 and d["busy"] is False


def test_healthz_is_degraded_and_chat_503_when_grammar_only():
    s = Server(EngineChain([]).start())
    try:
        d = s.client.get("/healthz").json()
        assert d["status"] == "degraded" and d["engine"] == "grammar"
        r = s.client.post("/api/chat", json=chat_body(stream=False))
        assert r.status_code == 503 and "grammar" in r.json()["error"]
    finally:
        s.close()


def test_metrics_are_prometheus_text(server):
    server.client.post("/api/chat", json=chat_body(stream=False))
    r = server.client.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    families = {f.name: f for f in text_string_to_metric_families(r.text)}
    for name in METRIC_NAMES:
        assert name.removesuffix("_total") in families, name
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families.values() for s in f.samples}
    assert samples[("edge_llm_tokens_total", (("kind", "completion"),))] >= 1
    assert samples[("edge_api_requests_total", (("code", "200"), ("endpoint", "/api/chat")))] >= 1
    assert samples[("edge_llm_ttft_seconds_count", ())] >= 1
    healthy = [k for k in samples if k[0] == "edge_llm_engine_healthy"]
    assert samples[healthy[0]] == 1 and dict(healthy[0][1])["engine"] == "llamacpp"


# ------------------------------------------------------------------------------------- tokens


def test_non_loopback_host_without_token_is_refused():
    with pytest.raises(ConfigError, match=r"api\.token"):
        load_settings(overrides={"api": {"host": "0.0.0.0"}})
    with pytest.raises(ConfigError, match=r"api\.token"):
        load_settings(overrides={"api": {"host": "192.168.1.20"}})
    assert load_settings(overrides={"api": {"host": "0.0.0.0", "token": TOKEN}}).api.token == TOKEN
    assert load_settings(overrides={"api": {"host": "::1"}}).api.host == "::1"
    assert cli_main(["serve", "--host", "0.0.0.0"]) == 2  # refused before any model loads


def test_a_configured_token_is_required_on_every_endpoint(chain):
    s = Server(chain, token=TOKEN)
    try:
        bare = httpx.Client(base_url=s.thread.url, timeout=GUARD_S)
        for method, path in (("GET", "/healthz"), ("GET", "/metrics"), ("POST", "/api/chat")):
            r = bare.request(method, path, json=chat_body(stream=False))
            assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        wrong = bare.get("/healthz", headers={"Authorization": "Bearer wrong-token-wrong-token"})
        assert wrong.status_code == 401
        assert s.client.get("/healthz").status_code == 200
        assert s.client.post("/api/chat", json=chat_body(stream=False)).status_code == 200
        bare.close()
    finally:
        s.close()


# ------------------------------------------------------------------------------ queue, cancel


class Gated(LlmEngine):
    """A neighbouring engine that waits at a gate before answering through the real chain."""

    def __init__(self, real):
        self.real = real
        self.gate = threading.Event()
        self.started = threading.Event()
        self.n_ctx = real.n_ctx

    @property
    def last_stats(self):
        return self.real.last_stats

    def stream(self, request, cancel=None):
        self.started.set()
        assert self.gate.wait(GUARD_S)
        yield from self.real.stream(request, cancel)

    def count_tokens(self, text):
        return self.real.count_tokens(text)


def wait_for(cond, what):
    deadline = time.monotonic() + GUARD_S
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_a_full_queue_answers_503(chain):
    gated = Gated(chain)
    s = Server(gated, queue_size=1)
    results = {}

    def post(name):
        results[name] = s.client.post("/api/chat", json=chat_body(stream=False)).status_code

    try:
        a = threading.Thread(target=post, args=("running",))
        a.start()
        assert gated.started.wait(GUARD_S)  # the first request is generating (held at the gate)
        b = threading.Thread(target=post, args=("queued",))
        b.start()
        wait_for(lambda: s.app.state.generator.queue_depth == 1, "the second request to queue")
        r = s.client.post("/api/chat", json=chat_body(stream=False))
        assert r.status_code == 503 and "busy" in r.json()["error"] and r.headers["retry-after"]
        gated.gate.set()
        a.join(GUARD_S)
        b.join(GUARD_S)
        assert results == {"running": 200, "queued": 200}
        text = s.client.get("/metrics").text
        assert 'edge_api_requests_total{code="503",endpoint="/api/chat"} 1.0' in text
    finally:
        gated.gate.set()
        s.close()


def test_a_client_leaving_mid_stream_cancels_the_generation(chain, server):
    body = chat_body("Write a long story about a robot in a warehouse.", options={"num_predict": 400})
    with server.client.stream("POST", "/api/chat", json=body) as r:
        lines = r.iter_lines()
        next(lines)
        next(lines)
    wait_for(lambda: server.app.state.generator.running is None, "the generation to stop")
    stats = chain.last_stats
    assert stats.finish_reason == "cancelled" and stats.completion_tokens < 400


def test_metrics_carry_the_governor_figures(chain, tmp_path):
    """The resource governor's figures on /metrics, read from a fake RK3588 tree at each scrape."""
    from edge.config import load_settings
    from edge.governor.governor import Governor
    from tests.fakesys import rk3588

    fs = rk3588(tmp_path / "sys", temp_c=80.0)
    settings = load_settings(board="rk3588-rock5b", overrides={"board": {"sensors": fs.sensors_settings()}})
    s = Server.__new__(Server)
    s.settings = ApiSettings()
    s.app = create_app(chain, s.settings, governor=Governor(settings))
    s.thread = ServerThread(s.app, "127.0.0.1", 0).start()
    s.client = httpx.Client(base_url=s.thread.url, timeout=GUARD_S)
    try:
        text = s.client.get("/metrics").text
        samples = {(x.name, tuple(sorted(x.labels.items()))): x.value
                   for f in text_string_to_metric_families(text) for x in f.samples}
        assert samples[("edge_temperature_celsius", (("zone", "soc-thermal"),))] == 80.0
        assert ("edge_thermal_level", ()) in samples
    finally:
        s.close()


def test_metrics_carry_the_live_service_capture_counters(chain, tmp_path):
    """The daemon's state file (another process writes it) on /metrics: capture overflows, xruns,
    losses; edge_service_up 0 without a file, 1 with a fresh one."""
    from edge.service.runstate import ServiceState

    class Device:
        device_name, rate, channels = "default", 48000, 2
        overflows, overflow_stalls, xruns = 17, 2, 3

    path = tmp_path / "service-state.json"
    s = Server.__new__(Server)
    s.settings = ApiSettings()
    s.app = create_app(chain, s.settings, state_file=path)
    s.thread = ServerThread(s.app, "127.0.0.1", 0).start()
    s.client = httpx.Client(base_url=s.thread.url, timeout=GUARD_S)

    def scrape():
        text = s.client.get("/metrics").text
        return {x.name: x.value for f in text_string_to_metric_families(text) for x in f.samples}

    try:
        before = scrape()
        assert before["edge_service_up"] == 0.0 and "edge_capture_overflows_total" not in before
        st = ServiceState(path)
        st.opened(Device())
        st.write()
        after = scrape()
        assert after["edge_service_up"] == 1.0 and after["edge_capture_ok"] == 1.0
        assert (after["edge_capture_overflows_total"], after["edge_capture_overflow_stalls_total"],
                after["edge_capture_xruns_total"], after["edge_capture_lost_total"]) == (17.0, 2.0, 3.0, 0.0)
        path.write_text('{"version": 1, "pid": null}')  # malformed: the scrape still works, the service is not up
        r = s.client.get("/metrics")
        assert r.status_code == 200
        broken = {x.name: x.value for f in text_string_to_metric_families(r.text) for x in f.samples}
        assert broken["edge_service_up"] == 0.0 and "edge_api_queue_depth" in broken  # the other metrics stay
    finally:
        s.close()
