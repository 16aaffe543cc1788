"""The service state file (edge.service.runstate): capture counters summed across devices, atomic writes,
and what a reader in another process makes of a fresh, stale, dead or broken file."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from drivers.audio import wav_frames
from edge import events as ev
from edge.config import load_settings
from edge.service.api.metrics import ServiceStateCollector
from edge.service.runstate import ServiceState, format_service, read_state, state_path
from edge.stages.asr.worker import AsrWorker
from tests.helpers import SESSIONS


class Clock:
    def __init__(self, t: float = 1_000_000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


class Device:
    """What ServiceState reads off a drivers.audio.capture.Capture: its name, format and counters."""

    def __init__(self, name="default", rate=48000, channels=2):
        self.device_name, self.rate, self.channels = name, rate, channels
        self.overflows = self.overflow_stalls = self.xruns = 0


def test_counters_are_summed_over_every_capture_and_losses_counted(tmp_path):
    clock = Clock()
    st = ServiceState(tmp_path / "s.json", interval_s=5.0, clock=clock)
    st.open_failed(OSError("no capture device"))
    first = Device()
    st.opened(first)
    first.overflows, first.overflow_stalls, first.xruns = 7, 2, 1
    st.tick()  # the audio loop only notes the time of its frame
    clock.t += 2.0
    assert read_state(st.path, clock)["capture"]["overflows"] == 0  # not written yet
    st.write()  # the heartbeat
    s = read_state(st.path, clock)
    assert s["capture"]["overflows"] == 7 and s["last_frame_age_s"] == 2.0
    st.closed(first, lost=OSError("stream stopped"))
    c = read_state(st.path, clock)["capture"]
    assert (c["state"], c["lost_events"], c["reopens"], c["overflows"]) == ("lost", 1, 0, 7)
    assert c["last_error"] == "stream stopped"
    second = Device("USB mic", 44100, 1)
    st.opened(second)
    second.overflows, second.xruns = 3, 4
    st.write()
    c = read_state(st.path, clock)["capture"]
    assert (c["state"], c["device"], c["rate"], c["channels"]) == ("ok", "USB mic", 44100, 1)
    assert (c["overflows"], c["overflow_stalls"], c["xruns"]) == (10, 2, 5)
    assert (c["lost_events"], c["reopens"], c["open_attempts"]) == (1, 1, 3)


def test_turns_follow_the_events(tmp_path):
    """``turn`` is the pipeline's turn state from its ``state`` events (written at once); each
    ``turn_end`` counts one turn."""
    st = ServiceState(tmp_path / "s.json")
    st.event(ev.Wake(100, "t1", "hey_mycroft", 0.9))
    assert st.turn == "starting"  # the state event says what the turn state is, not the wake word
    st.event(ev.StateChange(100, "t1", "awake", "listening"))
    assert st.turn == "awake" and read_state(st.path)["turn"] == "awake"
    st.event(ev.TurnEnd(900, "t1", {}))
    st.event(ev.StateChange(900, "t1", "listening", "speaking"))
    s = read_state(st.path)
    assert (s["turn"], s["turns"], s["running"]) == ("listening", 1, True)


def test_a_reader_sees_whole_files_only(tmp_path):
    """Writes are a rename of a complete temporary file: a reader in another process, reading while
    the file is rewritten as fast as possible, never parses half a document."""
    path = tmp_path / "s.json"
    st = ServiceState(path)
    dev = Device()
    st.opened(dev)
    reader = subprocess.Popen([sys.executable, "-c", f"""
import json, pathlib
p = pathlib.Path({str(path)!r}); bad = n = 0
while n < 500:
    try:
        json.loads(p.read_text()); n += 1
    except ValueError:
        bad += 1
print(n, bad)
"""], stdout=subprocess.PIPE, text=True)
    writes = 0
    while reader.poll() is None and writes < 200_000:
        dev.overflows = writes
        st.write()
        writes += 1
    reads, bad = map(int, reader.communicate(timeout=60)[0].split())
    assert reads == 500 and bad == 0
    assert json.loads(path.read_text())["capture"]["overflows"] == writes - 1
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".service-state.")] == []


def test_missing_stale_dead_and_broken_files_are_not_running(tmp_path):
    missing = read_state(tmp_path / "none.json")
    assert missing["running"] is False and "has not run here" in missing["reason"]
    assert "not running" in format_service(missing)[0]

    clock = Clock()
    st = ServiceState(tmp_path / "s.json", interval_s=5.0, clock=clock)
    st.write()
    assert read_state(st.path, clock)["running"] is True
    clock.t += 60.0  # the audio loop stopped writing
    stale = read_state(st.path, clock)
    assert stale["running"] is False and "no update for 60 s" in stale["reason"]

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    doc = json.loads(st.path.read_text())
    doc["pid"] = int(dead.stdout)
    st.path.write_text(json.dumps(doc))
    gone = read_state(st.path, lambda: doc["updated"])
    assert gone["running"] is False and gone["reason"] == "process gone"

    st.path.write_text('{"version": 1, "pid": ')
    broken = read_state(st.path)
    assert broken["running"] is False and broken["reason"].startswith("unreadable state file")


def test_status_lines_name_the_counters(tmp_path):
    st = ServiceState(tmp_path / "s.json")
    dev = Device()
    st.opened(dev)
    dev.overflows, dev.overflow_stalls = 12, 3
    st.write()
    lines = format_service(read_state(st.path))
    assert lines[0].startswith("service: running")
    assert "overflows 12 in 3 stalls" in lines[1] and "default at 48000 Hz x 2 ch" in lines[1]


def test_an_unwritable_state_file_does_not_stop_the_service(tmp_path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("")
    st = ServiceState(blocker / "s.json")  # its directory is a file
    st.write()
    assert "not written" in caplog.text


def test_the_heartbeat_writes_while_the_loop_is_busy_and_stop_says_stopped(tmp_path):
    """A long turn (LLM answer, model load) blocks the audio loop; the state stays fresh."""
    st = ServiceState(tmp_path / "s.json", interval_s=0.05).start()
    first = json.loads(st.path.read_text())["updated"]
    guard = 200
    while json.loads(st.path.read_text())["updated"] == first and guard:  # nothing else calls write()
        threading.Event().wait(0.05)
        guard -= 1
    assert guard, "the heartbeat never wrote"
    assert read_state(st.path)["running"] is True
    st.stop()
    assert read_state(st.path)["turn"] == "stopped"
    assert not any(t.name == "edge-state" for t in threading.enumerate())


def test_a_capture_closed_on_purpose_is_not_ok_and_a_dead_service_has_no_ok_capture(tmp_path):
    st = ServiceState(tmp_path / "s.json")
    dev = Device()
    st.opened(dev)
    st.closed(dev)
    assert read_state(st.path)["capture"]["state"] == "closed"
    st.opened(dev)
    doc = json.loads(st.path.read_text())
    doc["pid"] = 4_000_000  # above any pid_max: no such process
    st.path.write_text(json.dumps(doc))
    gone = read_state(st.path)
    assert gone["running"] is False and gone["capture"]["state"] == "unknown"


def _doc(**changes):
    d = {"version": 1, "pid": os.getpid(), "started": 1.0, "updated": 2.0, "uptime_s": 1.0, "turn": "listening",
         "turns": 0, "interval_s": 5.0, "last_frame_age_s": None,
         "capture": {"state": "ok", "overflows": 0, "overflow_stalls": 0, "xruns": 0, "lost_events": 0,
                     "reopens": 0, "open_attempts": 1}}
    d.update(changes)
    return json.dumps(d)


BAD = {
    "pid null": _doc(pid=None), "pid huge": _doc(pid=99999999999999999999), "pid text": _doc(pid="abc"),
    "capture null": _doc(capture=None), "capture text": _doc(capture="x"), "updated text": _doc(updated="x"),
    "updated NaN": _doc().replace('"updated": 2.0', '"updated": NaN'),
    "counter text": _doc().replace('"xruns": 0', '"xruns": "many"'), "version 2": _doc(version=2),
    "asr_worker text": _doc(asr_worker="x"),
    "asr_worker counter text": _doc(asr_worker={"pid": 5, "calls": "many", "recycles": 0, "restarts": 0}),
    "deep nesting": "[" * 100_000, "over 1 MiB": " " * (1 << 20) + _doc(), "a list": "[1, 2]",
}


@pytest.mark.parametrize("name", BAD)
def test_a_malformed_state_file_is_reported_not_raised(tmp_path, name):
    p = tmp_path / "s.json"
    p.write_text(BAD[name])
    st = read_state(p)
    assert st["running"] is False and st["reason"].startswith("unreadable state file"), st
    assert "not running" in format_service(st)[0]


def test_a_fifo_or_directory_as_state_file_does_not_hang_or_raise(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "not a regular file" in read_state(fifo)["reason"]
    assert "not a regular file" in read_state(tmp_path)["reason"]


def test_writing_into_a_directory_leaves_no_temporary_files_and_warns_once(tmp_path, caplog):
    target = tmp_path / "target"
    target.mkdir()
    st = ServiceState(target)
    for _ in range(5):
        st.write()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["target"] and list(target.iterdir()) == []
    assert caplog.text.count("not written") == 1


def test_the_state_file_goes_to_the_runtime_directory_when_there_is_one(tmp_path):
    s = load_settings(board="x86-dev", overrides={"store": {"path": str(tmp_path / "data" / "edge.db")}})
    run = tmp_path / "run-edge"
    assert state_path(s, runtime_dir=run) == tmp_path / "data" / "service-state.json"  # no /run/edge: a checkout
    run.mkdir()
    assert state_path(s, runtime_dir=run) == run / "service-state.json"  # the installed service's tmpfs
    explicit = load_settings(board="x86-dev", overrides={"service": {"state_file": "~/x.json"}})
    assert state_path(explicit, runtime_dir=run) == Path.home() / "x.json"


def test_the_recognizer_workers_memory_and_recycles_are_in_the_state_status_and_metrics(tmp_path):
    """A real worker (whisper tiny.en) after one utterance: its pid, RSS and counters in the state
    file, the ``edge status`` line and the /metrics families."""
    w = AsrWorker(load_settings(board="x86-dev").asr)
    try:
        assert "bolts" in w.transcribe(np.concatenate(list(wav_frames(SESSIONS / "query_m8_bolts.wav")))).text.lower()
        st = ServiceState(tmp_path / "s.json")
        st.asr_worker = w.status
        st.write()
        got = read_state(st.path)
        lines = format_service(got)
        families = {f.name: f.samples[0].value for f in ServiceStateCollector(st.path).collect()}
    finally:
        w.close()
    a = got["asr_worker"]
    assert a["pid"] == w.pid and a["rss_bytes"] > 50 * 2**20 and (a["calls"], a["recycles"], a["restarts"]) == (1, 0, 0)
    assert any(x.startswith(f"asr worker: pid {w.pid}, RSS ") and "1 utterances, recycled 0 times" in x for x in lines)
    assert families["edge_asr_worker_rss_bytes"] == a["rss_bytes"]
    assert (families["edge_asr_worker_utterances"], families["edge_asr_worker_recycles"]) == (1.0, 0.0)
    assert "asr_worker" not in ServiceState(tmp_path / "t.json").snapshot()  # no worker: no entry
