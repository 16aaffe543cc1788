"""Wyoming inside the live service: a real ``edge run`` (live mode, capturing from a private
PulseAudio server's null sink, tests/pulse.py) with a ``wyoming:`` section serves Wyoming from the
same process and the same loaded stages. The wyoming package's own client asks ``describe``, logs
stock with a ``transcript`` (``handled``), and the turn is in the service's event output and its
store like a voice turn. A Wyoming transcription sent while a spoken turn is under way waits for the
recognizer's stage lock (the service logs the wait) and is then answered; ``edge status`` shows the
Wyoming service's recognizer worker."""
from __future__ import annotations

import asyncio
import json
import queue
import shutil
import signal
import subprocess
import threading
import time

import numpy as np
import pytest
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.handle import Handled
from wyoming.info import Describe, Info
from wyoming.wake import Detect, Detection

from drivers.audio import SAMPLE_RATE, wav_frames
from edge.service.wyoming.locks import StageLocks
from edge.stock.store import Store
from tests.helpers import AUDIO, SESSION_WAKE, SESSIONS
from tests.live import lines_until, start_edge_run, stop
from tests.pulse import pulse_server
from tests.test_cli import edge

TIMEOUT_S = 120  # hang detection only, never asserted on
CHUNK = 1024


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    """``(process, stdout queue, stderr lines so far + queue, (host, port), env, store path)``."""
    if shutil.which("pulseaudio") is None:
        pytest.skip("the 'pulseaudio' binary is not installed (apt-get install pulseaudio)")
    tmp = tmp_path_factory.mktemp("wyoming-service")
    cfg = tmp / "live.yaml"
    cfg.write_text(f"board: x86-dev\n{SESSION_WAKE}store: {{path: {tmp / 'edge.db'}}}\nllm: {{engine: none}}\n"
                   f"wyoming: {{uri: 'tcp://127.0.0.1:0'}}\n")
    with pulse_server(tmp / "pulse") as penv:
        env = dict(penv, PYTHONUNBUFFERED="1")
        proc, out_q, err_q = start_edge_run(cfg, env, tmp / "out")
        try:
            err = lines_until(err_q, lambda l: l.startswith("wyoming on "), TIMEOUT_S)
            uri = next(l for l in err if l.startswith("wyoming on ")).split()[-1]
            host, port = uri.removeprefix("tcp://").rsplit(":", 1)
            err += lines_until(err_q, lambda l: l.startswith("listening on"), TIMEOUT_S)
            yield {"proc": proc, "out": out_q, "err": err, "err_q": err_q, "addr": (host, int(port)), "env": env,
                   "store": tmp / "edge.db", "out_dir": tmp / "out", "cfg": cfg}
        finally:
            stop(proc, signal.SIGINT)


def client(addr) -> AsyncTcpClient:
    return AsyncTcpClient(addr[0], addr[1], connect_timeout=10, read_timeout=TIMEOUT_S)


async def ask(addr, events, until: str):
    async with client(addr) as c:
        for e in events:
            await c.write_event(e.event())
        while (e := await c.read_event()) is not None:
            if e.type in (until, "error"):
                return e
    raise AssertionError("the connection closed before an answer")


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT_S))


def events_until(out_q: queue.Queue, pred) -> list[dict]:
    return [json.loads(line) for line in lines_until(out_q, lambda l: pred(json.loads(l)), TIMEOUT_S)]


def test_the_service_serves_describe_and_a_handled_log_into_its_own_store_and_events(service):
    info = Info.from_event(run(ask(service["addr"], [Describe()], "info")))
    assert info.handle[0].name == "edge-stock" and info.asr[0].name == "edge-whisper"
    assert info.tts[0].voices and info.wake[0].models

    e = run(ask(service["addr"], [Transcript("log twenty boxes of nitrile gloves received")], "handled"))
    assert e.type == "handled", e
    reply = Handled.from_event(e)
    turn = reply.context["edge_turn_id"]
    assert "32" in reply.text
    # the turn is in the service's own event output (stdout and events.jsonl), as a voice turn is
    mine = [x for x in events_until(service["out"], lambda x: x["type"] == "turn_end" and x["turn_id"] == turn)
            if x["turn_id"] == turn]
    assert [x["type"] for x in mine] == ["intent", "reply", "turn_end"]
    assert mine[0]["intent"] == "log_record" and mine[0]["slots"]["sku"] == "GLV-NIT-L"
    written = [json.loads(line) for line in (service["out_dir"] / "events.jsonl").read_text().splitlines()]
    assert [x["type"] for x in written if x["turn_id"] == turn] == ["intent", "reply", "turn_end"]
    # and in the service's store
    store = Store(service["store"])
    try:
        (rec,) = [r for r in store.records() if r.turn_id == turn]
        assert (rec.sku, rec.delta) == ("GLV-NIT-L", 20) and store.get("GLV-NIT-L").quantity == 32
    finally:
        store.close()


def audio_events(first, samples: np.ndarray):
    raw = samples.astype("<i2").tobytes()
    step = CHUNK * 2
    return ([first, AudioStart(SAMPLE_RATE, 2, 1)]
            + [AudioChunk(SAMPLE_RATE, 2, 1, raw[i:i + step]) for i in range(0, len(raw), step)] + [AudioStop()])


def transcribe_events(samples: np.ndarray):
    return audio_events(Transcribe(language="en"), samples)


def test_a_wyoming_wake_stream_gets_its_own_detector_beside_the_voice_loop(service):
    """The voice loop scores every captured frame with its detector; a Wyoming stream is given
    another one (built on first need), which finds the wake word in a real recording."""
    silence = np.zeros(SAMPLE_RATE, np.int16)
    samples = np.concatenate([silence, *wav_frames(AUDIO / "real" / "hey_mycroft_test.wav"), silence])
    got = run(ask(service["addr"], audio_events(Detect(), samples), "detection"))
    assert got.type == "detection", got
    assert Detection.from_event(got).name == "hey_mycroft"


def test_a_wyoming_transcription_during_a_voice_turn_waits_for_the_recognizer(service):
    session = SESSIONS / "query_m8_bolts.wav"
    samples = np.concatenate(list(wav_frames(session)))
    play = subprocess.Popen(["paplay", str(session)], env=service["env"])
    try:
        # the turn state left listening: the voice turn holds the stage locks from here
        events_until(service["out"], lambda x: x["type"] == "state" and x["state"] == "awake")
        got = run(ask(service["addr"], transcribe_events(samples), "transcript"))
        voice = events_until(service["out"], lambda x: x["type"] == "turn_end")
    finally:
        play.wait(60)
    assert got.type == "transcript", got
    text = Transcript.from_event(got).text.lower()
    assert "m8" in text and "12" in text
    reply = next(x for x in voice if x["type"] == "reply")
    assert "140" in reply["text"]  # the voice turn was answered, undisturbed
    err = service["err"]
    while True:
        try:
            line = service["err_q"].get_nowait()
        except queue.Empty:
            break
        if line is not None:
            err.append(line)
    # the recognizer's stage lock: the Wyoming request found it held by the voice turn and waited
    assert any("stage asr: wyoming waits for voice" in line for line in err), "".join(err)


def test_the_wyoming_recognizer_worker_is_in_edge_status(service):
    """Beside the voice loop's inline recognizer the Wyoming asr service has a worker of its own
    (``asr.worker.wyoming: process``); ``edge status`` reads its pid, RSS and counters from the
    service's state file."""
    got = run(ask(service["addr"], transcribe_events(np.concatenate(list(wav_frames(SESSIONS / "query_m8_bolts.wav")))),
                  "transcript"))
    assert got.type == "transcript" and "m8" in Transcript.from_event(got).text.lower(), got
    deadline = time.monotonic() + TIMEOUT_S  # the heartbeat writes every service.state_interval_s (hang detection only)
    while True:
        st = json.loads(edge("status", "--json", "--config", service["cfg"]).stdout)["service"]
        w = st.get("asr_worker") or {}
        if w.get("calls", 0) >= 1 or time.monotonic() > deadline:
            break
        time.sleep(1.0)
    assert st["running"] and w["calls"] >= 1 and w["recycles"] == 0 and w["rss_bytes"] > 50 * 2**20, st
    assert w["pid"] != service["proc"].pid
    text = edge("status", "--config", service["cfg"]).stdout
    assert f"asr worker: pid {w['pid']}, RSS " in text, text


def test_stage_locks_make_a_wyoming_call_wait_for_the_voice_turn_in_order():
    """The lock class itself, across two threads: the voice turn holds every stage; a Wyoming
    call on the recognizer and the store waits, counted, and takes the locks only after the turn
    gave them back."""
    locks = StageLocks()
    locks.begin_turn("voice")
    done = threading.Event()

    def wyoming_call():
        with locks.hold("wyoming", ("store", "asr")):  # any order asked: taken in ORDER
            done.set()

    t = threading.Thread(target=wyoming_call)
    t.start()
    deadline = time.monotonic() + TIMEOUT_S  # hang detection only
    while locks["asr"].waited == 0:
        assert time.monotonic() < deadline, "the Wyoming call never tried the recognizer's lock"
        time.sleep(0.01)
    assert not done.is_set() and locks["asr"].holder == "voice"  # it waits: the turn holds the recognizer
    locks.end_turn()
    t.join(TIMEOUT_S)
    assert done.is_set()
    assert list(locks["asr"].history) == [("voice", "takes"), ("wyoming", "waits"), ("voice", "releases"),
                                          ("wyoming", "takes"), ("wyoming", "releases")]
    assert [lk.counters() for lk in (locks["asr"], locks["store"], locks["tts"])] == [
        {"name": "asr", "holder": None, "acquired": 2, "waited": 1},
        {"name": "store", "holder": None, "acquired": 2, "waited": 0},  # asr first: store was free by then
        {"name": "tts", "holder": None, "acquired": 1, "waited": 0}]
