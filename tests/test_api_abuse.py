"""edge.service.api under abuse, against the real server (uvicorn on a loopback port, in a thread)
and the real SmolLM2 engine behind the fallback chain: a 50 MB body is refused before it is read
(401 or 413, the process's peak memory barely moves), 10,000 messages are refused at once and,
allowed, trimmed without the chain calling the engine hung, wrong option types are 400 naming the
field, a client that leaves before its whole answer cancels it, /docs and /openapi.json need the
token and load nothing from the internet, a foreign Host or Origin is refused and no answer carries
a CORS header."""
from __future__ import annotations

import json
import re
import select
import socket

import httpx
import pytest

from edge.config import ConfigError, load_settings
from edge.llm.chain import EngineChain, StepSpec
from tests.test_api import GUARD_S, MODEL, TOKEN, Server, chat_body, wait_for

MIB = 1024 * 1024
BIG = 50 * MIB


@pytest.fixture(scope="module")
def chain():
    c = EngineChain([StepSpec("llamacpp", MODEL, 1024)]).start()
    yield c
    c.close()


@pytest.fixture(scope="module")
def open_server(chain):
    s = Server(chain)
    yield s
    s.close()


@pytest.fixture(scope="module")
def locked(chain):
    s = Server(chain, token=TOKEN)
    yield s
    s.close()


def status_kib(key: str) -> int:
    """``VmRSS`` / ``VmHWM`` of this process (the server runs in it), KiB."""
    return int(re.search(rf"^{key}:\s+(\d+) kB", open("/proc/self/status").read(), re.M).group(1))


def raw_request(port: int, head: str, body_chunks, chunked: bool = False) -> tuple[int, bytes, int]:
    """Send ``head`` then the body chunk by chunk until the server answers; ``(status, raw
    answer, body bytes sent)``. Stops sending as soon as an answer is readable."""
    s = socket.create_connection(("127.0.0.1", port), timeout=GUARD_S)
    sent = 0
    try:
        s.sendall(head.encode())
        for chunk in body_chunks:
            if select.select([s], [], [], 0)[0]:
                break
            try:
                s.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(chunk)
        got = b""
        while not complete(got):
            try:
                part = s.recv(65536)
            except ConnectionResetError:
                break
            if not part:
                break
            got += part
    finally:
        s.close()
    return int(got.split(b" ", 2)[1]), got, sent


def complete(got: bytes) -> bool:
    """True once ``got`` holds an HTTP answer's head and its Content-Length of body."""
    head_, sep, body = got.partition(b"\r\n\r\n")
    m = re.search(rb"(?im)^content-length:\s*(\d+)", head_)
    return bool(sep) and len(body) >= (int(m.group(1)) if m else 0)


def megabytes(total: int):
    chunk = b"x" * MIB  # one buffer sent again and again: the client side does not grow
    for _ in range(total // MIB):
        yield chunk


def head(port: int, length: int | None, token: str | None = None) -> str:
    lines = ["POST /api/chat HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/json"]
    lines.append(f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked")
    if token:
        lines.append(f"Authorization: Bearer {token}")
    return "\r\n".join(lines) + "\r\n\r\n"


# ------------------------------------------------------------------------------- body limits


@pytest.mark.parametrize("case", ["unauthenticated", "too long", "chunked"])
def test_a_50_mb_body_is_refused_before_it_is_read(locked, case):
    port = locked.thread.port
    token = None if case == "unauthenticated" else TOKEN
    length = None if case == "chunked" else BIG
    rss_before = status_kib("VmRSS")
    open("/proc/self/clear_refs", "w").write("5")  # reset VmHWM (the peak) to the current RSS
    code, raw, sent = raw_request(port, head(port, length, token), megabytes(BIG), chunked=length is None)
    growth_mib = (status_kib("VmHWM") - rss_before) / 1024
    assert code == {"unauthenticated": 401, "too long": 413, "chunked": 413}[case], raw[:300]
    assert growth_mib < 50, f"the server's process grew by {growth_mib:.0f} MiB"
    assert sent < BIG  # answered before the body was all sent
    if case != "unauthenticated":
        assert b"api.max_body_bytes" in raw
    assert locked.client.get("/healthz").status_code == 200


# ---------------------------------------------------------------------- messages and prompt


def many(n: int) -> list[dict]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"bin {i}"} for i in range(n)] + \
        [{"role": "user", "content": "What is a wrench?"}]


def test_10000_messages_are_413_and_the_engine_stays_healthy(open_server, chain):
    r = open_server.client.post("/api/chat", json={"messages": many(10_000), "stream": False})
    assert r.status_code == 413 and "api.max_messages" in r.json()["error"]
    r = open_server.client.post("/v1/chat/completions", json={"messages": many(10_000)})
    assert r.status_code == 413 and "api.max_messages" in r.json()["error"]["message"]
    big = [{"role": "user", "content": "bolt " * 30_000}]  # 150,000 characters in one message
    r = open_server.client.post("/api/chat", json={"messages": big, "stream": False})
    assert r.status_code == 413 and "api.max_prompt_chars" in r.json()["error"]
    health = open_server.client.get("/healthz").json()
    assert health["status"] == "ok" and [s["state"] for s in health["chain"]] == ["healthy", "healthy"]


def test_10000_messages_when_allowed_are_trimmed_without_the_engine_counted_hung():
    """Measuring these 10,000 messages once takes seconds here (chat template and tokenizer over
    ~110,000 tokens): the trimming measures some 15 times (a bisection), not once per message, so
    the chain's watchdog (no token for the step's 60 s) does not fire and the answer comes; a
    client that leaves during the trimming cancels it between two measures."""
    watched = EngineChain([StepSpec("llamacpp", MODEL, 1024, timeout_s=60.0)]).start()
    s = Server(watched, max_messages=20_000)
    try:
        body = {"messages": many(10_000), "stream": False, "options": {"num_predict": 4, "temperature": 0}}
        r = s.client.post("/api/chat", json=body)
        assert r.status_code == 200 and r.json()["done"] is True
        assert watched.last_stats.trimmed_messages > 9_000
        health = s.client.get("/healthz").json()
        assert health["status"] == "ok" and health["chain"][0]["state"] == "healthy"

        port, data = s.thread.port, json.dumps(body).encode()
        sock = socket.create_connection(("127.0.0.1", port), timeout=GUARD_S)
        sock.sendall((f"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                      f"Content-Length: {len(data)}\r\n\r\n").encode() + data)
        gen = s.app.state.generator
        wait_for(lambda: gen.running is not None, "the generation to start")
        sock.close()
        wait_for(lambda: gen.running is None, "the generation to stop")
        stats = watched.last_stats
        assert stats.finish_reason == "cancelled" and stats.completion_tokens == 0
        assert stats.trimmed_messages == 0  # stopped while trimming, before any drop was decided
        assert s.client.get("/healthz").json()["chain"][0]["state"] == "healthy"
    finally:
        s.close()
        watched.close()


# ------------------------------------------------------------------------------- option types


@pytest.mark.parametrize("path,body,field", [
    ("/api/chat", chat_body(options={"temperature": "hot"}), "options.temperature"),
    ("/api/chat", chat_body(options={"temperature": float("nan")}), "options.temperature"),
    ("/api/chat", chat_body(options={"temperature": float("inf")}), "options.temperature"),
    ("/api/chat", chat_body(options={"num_predict": 10**30}), "options.num_predict"),
    ("/api/chat", chat_body(options={"num_predict": 1e300}), "options.num_predict"),
    ("/api/chat", chat_body(options={"num_predict": "many"}), "options.num_predict"),
    ("/api/chat", chat_body(options={"stop": 5}), "options.stop"),
    ("/api/chat", chat_body(stream="yes please"), "stream"),
    ("/api/chat", {"messages": [{"role": "user", "content": 7}]}, "messages.0.content"),
    ("/api/generate", {"prompt": "hi", "options": {"temperature": [1]}}, "options.temperature"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "temperature": "hot"}, "temperature"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "temperature": float("nan")},
     "temperature"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 10**9}, "max_tokens"),
])
def test_a_wrong_option_type_is_400_naming_the_field(open_server, path, body, field):
    r = open_server.client.post(path, content=json.dumps(body), headers={"Content-Type": "application/json"})
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    msg = err["message"] if path.startswith("/v1/") else err
    assert field in msg, msg


# ------------------------------------------------------------------------ client disconnects


def test_a_non_streaming_client_that_leaves_cancels_its_generation(open_server, chain):
    port = open_server.thread.port
    body = json.dumps(chat_body("Write a long story about a robot in a warehouse.", stream=False,
                                options={"num_predict": 900, "temperature": 0.8})).encode()
    s = socket.create_connection(("127.0.0.1", port), timeout=GUARD_S)
    s.sendall((f"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
    gen = open_server.app.state.generator
    wait_for(lambda: gen.running is not None, "the generation to start")
    s.close()
    wait_for(lambda: gen.running is None, "the generation to stop")
    stats = chain.last_stats
    assert stats.finish_reason == "cancelled" and stats.completion_tokens < 900
    text = open_server.client.get("/metrics").text
    assert 'edge_api_requests_total{code="499",endpoint="/api/chat"}' in text


# ------------------------------------------------------------------------------------ docs


def test_docs_and_openapi_need_the_token_and_load_nothing_from_the_internet(locked, open_server):
    bare = httpx.Client(base_url=locked.thread.url, timeout=GUARD_S)
    try:
        for path in ("/docs", "/openapi.json", "/redoc", "/docs/oauth2-redirect"):
            assert bare.get(path).status_code == 401, path
    finally:
        bare.close()
    docs = locked.client.get("/docs")
    assert docs.status_code == 200 and "/api/chat" in docs.text and "/v1/chat/completions" in docs.text
    schema = locked.client.get("/openapi.json")
    assert schema.status_code == 200 and "/api/chat" in schema.json()["paths"]
    for r in (docs, schema, open_server.client.get("/docs")):
        assert not re.search(r"(src|href)\s*=\s*['\"]?(https?:)?//", r.text), r.text[:500]
        assert "cdn" not in r.text.lower()


# --------------------------------------------------------------------------- Host and Origin


@pytest.mark.parametrize("path", ["/healthz", "/api/tags", "/docs", "/console/records"])
def test_a_foreign_host_header_is_400(open_server, path):
    port = open_server.thread.port
    r = open_server.client.get(path, headers={"Host": f"rebind.attacker.example:{port}"})
    assert r.status_code in (400, 421) and "Host header" in r.text
    if not path.startswith("/console"):  # this server has no console: the check is the app's, before routing
        assert open_server.client.get(path, headers={"Host": f"localhost:{port}"}).status_code == 200


def test_a_foreign_origin_is_403_and_no_answer_allows_cross_origin(open_server):
    port = open_server.thread.port
    answers = []
    for origin in ("http://attacker.example", f"http://rebind.example:{port}", f"http://127.0.0.1:{port + 1}",
                   "null", f"https://127.0.0.1:{port}"):
        for method, path in (("GET", "/healthz"), ("POST", "/api/chat"), ("OPTIONS", "/api/chat"),
                             ("GET", "/console/records")):
            r = open_server.client.request(method, path, json=chat_body(stream=False) if method == "POST" else None,
                                           headers={"Origin": origin, "Access-Control-Request-Method": "POST"})
            assert r.status_code == 403, (origin, method, path, r.status_code)
            answers.append(r)
    own = open_server.client.get("/healthz", headers={"Origin": f"http://127.0.0.1:{port}"})
    assert own.status_code == 200
    answers += [own, open_server.client.get("/healthz"), open_server.client.get("/api/tags")]
    assert not [r for r in answers if any(k.lower().startswith("access-control-") for k in r.headers)]


# ------------------------------------------------------------------------------- the settings


@pytest.mark.parametrize("key,value", [("max_body_bytes", 0), ("max_messages", 0), ("max_prompt_chars", -1),
                                       ("max_predict", "lots"), ("max_messages", 10**9)])
def test_a_bad_limit_in_the_config_names_the_key(key, value):
    with pytest.raises(ConfigError, match=rf"api\.{key}"):
        load_settings(overrides={"api": {key: value}})
    d = load_settings().api
    assert (d.max_body_bytes, d.max_messages, d.max_prompt_chars, d.max_predict) == (2 * MIB, 1000, 131_072, 4096)
