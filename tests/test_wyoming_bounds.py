"""Bounds on what a Wyoming client can make the server hold, against the real server on loopback
(edge.service.wyoming on the real stages): a header line started and never ended, a connection
that says nothing, JSON nested thousands deep, a transcript of 100 kB, a synthesize text of
minutes of speech, a streamed sentence that never ends; and ``handled`` for every answered turn."""
from __future__ import annotations

import asyncio
import json
import socket

import pytest
from wyoming.audio import AudioChunk, AudioStart
from wyoming.event import Event, async_read_event
from wyoming.handle import Handled, NotHandled
from wyoming.ping import Ping, Pong
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop
from wyoming.wake import Detect

from edge.config import WyomingSettings
from edge.service.wyoming.box import Box
from edge.service.wyoming.connection import MAX_SYNTHESIZE_CHARS
from edge.service.wyoming.frames import MAX_JSON_DEPTH
from edge.stages.sentences import SentenceSplitter
from edge.stages.utterance import MAX_UTTERANCE_CHARS
from tests.test_wyoming import ask, client, is_type, run, serve, wait_until

HEADER_S = 1.0  # the test server's wyoming.header_timeout_s


def wyoming_box(rig_grammar, **wyoming):
    """A fixture's body: a Box on the shared stages with 4 client slots, a 300 s idle timeout and the
    ``wyoming`` settings given (s), closed after."""
    settings, stages = rig_grammar
    settings = settings.model_copy(update={"wyoming": WyomingSettings(
        uri="tcp://127.0.0.1:0", max_clients=4, idle_timeout_s=300.0, **wyoming)})
    b = Box(settings, stages, share_wake=False)
    yield b
    b.close()


@pytest.fixture(scope="module")
def box(rig_grammar):
    yield from wyoming_box(rig_grammar, header_timeout_s=HEADER_S)


@pytest.fixture(scope="module")
def server(box):
    yield from serve(box)


@pytest.fixture
def store(rig_grammar, inventory_store):
    stages = rig_grammar[1]
    saved, stages.store = stages.store, inventory_store
    yield inventory_store
    stages.store = saved


async def exchange(server, events, until) -> list[Event]:
    """Send ``events`` on one connection; every event read back until ``until(event)`` (errors too)."""
    async with client(server) as c:
        for e in events:
            await c.write_event(e if isinstance(e, Event) else e.event())
        got = []
        while (e := await c.read_event()) is not None:
            got.append(e)
            if until(e):
                break
        return got


async def until_closed(reader: asyncio.StreamReader) -> list[Event]:
    got = []
    while (e := await asyncio.wait_for(async_read_event(reader), 60)) is not None:
        got.append(e)
    return got


# --------------------------------------------------------------------------------------------
# time: a header once started must end within header_timeout_s; a new connection speaks at once


@pytest.mark.parametrize("sent", [b'{"type": "desc', b""], ids=["half a header line", "nothing"])
def test_stalled_connections_free_their_slots_by_the_header_deadline(server, sent):
    async def scenario():
        stalled = []
        for _ in range(server.settings.wyoming.max_clients):
            r, w = await asyncio.open_connection("127.0.0.1", server.port)
            w.write(sent)
            await w.drain()
            stalled.append((r, w))
        assert await wait_for_clients(server.settings.wyoming.max_clients)
        async with client(server) as locked_out:  # every slot held: refused now
            refused = await locked_out.read_event()
        ends = [await until_closed(r) for r, _w in stalled]  # each closed by the deadline, not the idle timeout
        for _r, w in stalled:
            w.close()
        pong = await ask(server, [Ping("served")], is_type("pong"))
        return refused, ends, pong

    async def wait_for_clients(n):
        for _ in range(400):
            if server.clients == n:
                return True
            await asyncio.sleep(0.05)
        return False

    refused, ends, pong = run(scenario())
    assert refused.type == "error" and refused.data["code"] == "busy"
    for got in ends:
        assert [e.type for e in got] == ["error"] and got[0].data["code"] == "timeout"
        assert "wyoming.header_timeout_s" in got[0].data["text"]
    assert Pong.from_event(pong[0]).text == "served"


def test_a_connection_idle_between_events_is_kept_past_the_header_deadline(server):
    async def scenario():
        async with client(server) as c:
            await c.write_event(Ping("one").event())
            first = await c.read_event()
            await asyncio.sleep(3 * HEADER_S)  # idle between events: wyoming.idle_timeout_s applies
            await c.write_event(Ping("two").event())
            return first, await c.read_event()

    first, second = run(scenario())
    assert Pong.from_event(first).text == "one" and Pong.from_event(second).text == "two"


# --------------------------------------------------------------------------------------------
# size: JSON nesting


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


DEEP_DATA = b'{"a":' + nested(5000).encode() + b"}"
NESTED = {
    "header nested 5,000 deep": b'{"type": "ping", "data": {"text": "x", "deep": ' + nested(5000).encode() + b"}}\n",
    "data nested 5,000 deep": (json.dumps({"type": "ping", "data_length": len(DEEP_DATA)}).encode() + b"\n"
                               + DEEP_DATA),
    "header one level over the cap": (b'{"type": "ping", "data": {"deep": ' + nested(MAX_JSON_DEPTH).encode()
                                      + b"}}\n"),
}


@pytest.mark.parametrize("case", list(NESTED))
def test_deeply_nested_json_is_an_error_event_not_a_traceback(server, case, caplog):
    async def scenario():
        r, w = await asyncio.open_connection("127.0.0.1", server.port)
        w.write(NESTED[case])
        await w.drain()
        got = await until_closed(r)
        w.close()
        return got

    got = run(scenario())
    assert [e.type for e in got] == ["error"], got
    assert got[0].data["code"] == "protocol" and f"more than {MAX_JSON_DEPTH} levels deep" in got[0].data["text"]
    assert not any(r.exc_info for r in caplog.records)  # no traceback logged


def test_json_nested_to_the_cap_is_served(server):
    # the header object is level 1, data level 2: the list nests the rest
    line = b'{"type": "ping", "data": {"text": "deep", "x": ' + nested(MAX_JSON_DEPTH - 2).encode() + b"}}\n"

    async def scenario():
        r, w = await asyncio.open_connection("127.0.0.1", server.port)
        w.write(line)
        await w.drain()
        e = await asyncio.wait_for(async_read_event(r), 60)
        w.close()
        return e

    assert Pong.from_event(run(scenario())).text == "deep"


# --------------------------------------------------------------------------------------------
# size: text


def test_an_oversize_transcript_is_refused_without_taking_the_turn(server, box, store):
    text = "how many M8 bolts are in bin twelve " * 2800  # ~100 kB
    taken = box.locks["understanding"].acquired
    (got,) = run(ask(server, [Event("transcript", {"text": text})], is_type("handled", "not-handled")))
    said = NotHandled.from_event(got).text
    assert got.type == "not-handled"
    assert f"at most {MAX_UTTERANCE_CHARS:,} characters" in said and "nothing was done" in said
    assert "M8 bolts" not in said
    assert box.locks["understanding"].acquired == taken  # answered before the turn's lock
    assert store.records() == []


def test_a_records_question_over_handle_is_handled(server, store):
    (got,) = run(ask(server, [Event("transcript", {"text": "did I already log the fuses?"})],
                     is_type("handled", "not-handled")))
    assert got.type == "handled", got
    assert Handled.from_event(got).text == "I have no record of fuses being logged."


def test_an_oversize_synthesize_is_refused_and_the_connection_stays(server):
    text = "The bolts are in bin twelve. " * 100  # 2,900 characters
    got = run(exchange(server, [Synthesize(text), Ping("after")], is_type("pong")))
    assert [e.type for e in got] == ["error", "pong"], [e.type for e in got]
    assert got[0].data["code"] == "too-long" and f"{MAX_SYNTHESIZE_CHARS:,} characters" in got[0].data["text"]


def test_a_streamed_sentence_that_never_ends_is_refused_at_the_cap(server):
    chunks = [SynthesizeChunk("and the bolts ")] * (MAX_SYNTHESIZE_CHARS // 14 + 10)  # no sentence end
    got = run(exchange(server, [SynthesizeStart(), *chunks, SynthesizeStop(), Ping("after")], is_type("pong")),
              timeout_s=300)
    types = [e.type for e in got]
    assert types == ["error", "pong"], types  # the refusal; no audio held or spoken, the stream's rest dropped
    assert got[0].data["code"] == "too-long"


def test_streamed_text_is_scanned_once_not_per_chunk():
    s = SentenceSplitter()
    for _ in range(500):
        assert s.feed("and the bolts ") == []
        # where the next scan starts: the end of the buffer (nothing before it can end a sentence)
        assert s._resume == len(s.buffer)
    assert s.feed("go. Then") == ["and the bolts " * 500 + "go."]
    assert s.buffer == " Then"


# --------------------------------------------------------------------------------------------
# time, continued: deadlines a client cannot stretch (own server: short frame_timeout_s)

SHORT_S = 2.0  # this server's wyoming.header_timeout_s and frame_timeout_s


@pytest.fixture(scope="module")
def short_box(rig_grammar):
    yield from wyoming_box(rig_grammar, header_timeout_s=SHORT_S, frame_timeout_s=SHORT_S)


@pytest.fixture(scope="module")
def short_server(short_box):
    yield from serve(short_box)


def test_a_first_event_sent_in_parts_each_before_its_own_deadline_is_cut_at_the_header_deadline(short_server):
    """Each part alone comes within its own deadline (0.75 of it), the whole event does not come within
    header_timeout_s: the connection is closed then, not after the sum of the parts' deadlines."""
    data = json.dumps({"text": "late"}).encode()
    parts = [b"{", json.dumps({"type": "ping", "data_length": len(data)}).encode()[1:] + b"\n", data]

    async def scenario():
        r, w = await asyncio.open_connection("127.0.0.1", short_server.port)
        got: list[Event] = []

        async def read_all():
            while (e := await async_read_event(r)) is not None:
                got.append(e)

        reader = asyncio.create_task(read_all())
        for part in parts:
            await asyncio.sleep(0.75 * SHORT_S)
            if got or reader.done():  # answered: writing on would reset a closing connection
                break
            try:
                w.write(part)
                await w.drain()
            except ConnectionError:
                break
        try:
            await asyncio.wait_for(reader, 60)
        except ConnectionError:
            pass
        w.close()
        return got

    got = run(scenario())
    assert [e.type for e in got] == ["error"], got  # no pong
    assert "wyoming.header_timeout_s" in got[0].data["text"], got[0].data  # cut where the whole event was due


def test_a_client_that_stops_reading_frees_its_slot_by_the_stall_deadline(short_server):
    """A client that asks for speech and never reads it: the server's write makes no progress for
    header_timeout_s, so the connection is dropped and its slot is free (before: held until it closed)."""
    async def scenario():
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # fills at once
        sock.connect(("127.0.0.1", short_server.port))
        _r, w = await asyncio.open_connection(sock=sock)
        w.write(_frame(Synthesize(text="We used three drill bits from drawer four. " * 40).event()))
        await w.drain()
        for _ in range(1200):  # 60 s at most: the reply's synthesis, then the write deadline
            if short_server.clients == 0:
                break
            await asyncio.sleep(0.05)
        freed = short_server.clients == 0
        w.close()
        return freed

    assert run(scenario())


def test_an_audio_stream_gone_silent_gives_its_wake_word_detector_back(short_server, short_box):
    async def scenario():
        r, w = await asyncio.open_connection("127.0.0.1", short_server.port)
        for e in [Detect(), AudioStart(16000, 2, 1), AudioChunk(16000, 2, 1, bytes(3200))]:
            w.write(_frame(e.event()))
        await w.drain()  # then silence, the connection left open
        got = await until_closed(r)
        w.close()
        return got

    got = run(scenario())
    assert [e.type for e in got] == ["error"] and got[0].data["code"] == "timeout"
    assert "inside an audio stream" in got[0].data["text"]
    assert wait_until(lambda: short_box.wake_pool.free == 1)  # given back when the connection closes


def _frame(event: Event) -> bytes:
    """One event as Wyoming's wire bytes (header line, data, payload)."""
    data = json.dumps(event.data).encode() if event.data else b""
    header = {"type": event.type, "version": "1.0.0"}
    if data:
        header["data_length"] = len(data)
    if event.payload:
        header["payload_length"] = len(event.payload)
    return json.dumps(header).encode() + b"\n" + data + (event.payload or b"")
