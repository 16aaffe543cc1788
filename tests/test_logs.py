"""Logs: readable lines in a terminal; journald entries with TURN_ID / STAGE / LATENCY_MS fields.

The journald test uses the real ``systemd.journal.JournalHandler`` (systemd-python), which writes the
native journal protocol to the fixed address ``/run/systemd/journal/socket``. There is no journald on
this machine, so the test binds a datagram socket at that address, receives what the handler sends
and parses it as journald would (systemd's "Native Journal Protocol": ``KEY=value`` lines, or ``KEY``,
a little-endian 64-bit length and the raw value for values with newlines). It is skipped where a
journald already listens there.
"""
from __future__ import annotations

import io
import os
import re
import socket
import struct
from pathlib import Path

import pytest

from edge import events as ev
from edge.service import logs

JOURNAL_SOCKET = Path("/run/systemd/journal/socket")


def parse_native(data: bytes) -> dict[str, str]:
    """Decode one native-protocol datagram into ``{FIELD: value}``."""
    fields, i = {}, 0
    while i < len(data):
        nl = data.index(b"\n", i)
        line = data[i:nl]
        if b"=" in line:
            k, _, v = line.partition(b"=")
            fields[k.decode()] = v.decode()
            i = nl + 1
        else:  # binary-safe form: KEY\n<u64 le length><value>\n
            (n,) = struct.unpack("<Q", data[nl + 1:nl + 9])
            fields[line.decode()] = data[nl + 9:nl + 9 + n].decode()
            i = nl + 9 + n + 1
    return fields


def _turn_end():
    return ev.TurnEnd(14320, "3f2a9c01b2d4", {"endpoint_to_transcript_ms": 512.0, "transcript_to_intent_ms": 0.8,
                                             "intent_to_reply_audio_ms": 26.2, "total_ms": 539.0})


def test_event_fields():
    f = logs.event_fields(_turn_end())
    assert f == {"TURN_ID": "3f2a9c01b2d4", "STAGE": "turn_end", "LATENCY_MS": 539.0,
                 "LATENCY_ENDPOINT_TO_TRANSCRIPT_MS": 512.0, "LATENCY_TRANSCRIPT_TO_INTENT_MS": 0.8,
                 "LATENCY_INTENT_TO_REPLY_AUDIO_MS": 26.2}
    f = logs.event_fields(ev.Transcript(1000, "abc", "how many bolts", "whisper", 0.9))
    assert f == {"TURN_ID": "abc", "STAGE": "transcript"}


def test_terminal_lines_are_readable():
    buf = io.StringIO()
    log = logs.setup(env={"EDGE_LOG_LEVEL": "DEBUG"}, stream=buf, journal=False)
    logs.log_event(log, _turn_end())
    log.warning("waiting for capture device: none", extra={"STAGE": "capture"})
    log.debug("plain")
    lines = buf.getvalue().splitlines()
    assert len(lines) == 3
    assert re.fullmatch(r"\d\d:\d\d:\d\d\.\d{3} INFO  \[turn 3f2a9c01b2d4 turn_end 539\.0 ms\] "
                        r"\[   14\.32s\] turn_end   latency_ms=\{.*'total_ms': 539\.0\}", lines[0]), lines[0]
    assert lines[1][13:] == "WARNING [capture] waiting for capture device: none"
    assert lines[2].endswith("DEBUG plain")
    assert "\x1b" not in buf.getvalue()  # no colour codes: the same text reads fine in a log file


def test_level_from_the_environment():
    buf = io.StringIO()
    log = logs.setup(env={"EDGE_LOG_LEVEL": "WARNING"}, stream=buf, journal=False)
    log.info("hidden")
    log.warning("shown")
    assert buf.getvalue().count("\n") == 1 and "shown" in buf.getvalue()


def test_journal_stream_detection(tmp_path):
    with open(tmp_path / "f", "w") as fh:
        st = os.fstat(fh.fileno())
        assert logs.under_journald({"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"}, fh.fileno())
        assert not logs.under_journald({"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino + 1}"}, fh.fileno())
        assert not logs.under_journald({}, fh.fileno())
        assert not logs.under_journald({"JOURNAL_STREAM": "garbage"}, fh.fileno())


@pytest.fixture
def fake_journald():
    pytest.importorskip("systemd.journal")
    if JOURNAL_SOCKET.exists():
        pytest.skip(f"{JOURNAL_SOCKET} exists (a journald runs here): not replacing it")
    made = [d for d in (JOURNAL_SOCKET.parent.parent, JOURNAL_SOCKET.parent) if not d.exists()]
    for d in made:
        d.mkdir()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(str(JOURNAL_SOCKET))
    s.settimeout(5)
    try:
        yield s
    finally:
        s.close()
        JOURNAL_SOCKET.unlink()
        for d in reversed(made):
            d.rmdir()


def test_journal_handler_sends_structured_fields(fake_journald):
    log = logs.setup(env={"EDGE_LOG_LEVEL": "INFO"}, journal=True)
    assert type(log.handlers[-1]).__name__ == "JournalHandler"
    logs.log_event(log, _turn_end())
    log.warning("capture device lost:\nline two", extra={"STAGE": "capture"})
    first = parse_native(fake_journald.recv(1 << 16))
    second = parse_native(fake_journald.recv(1 << 16))
    assert first["TURN_ID"] == "3f2a9c01b2d4" and first["STAGE"] == "turn_end"
    assert float(first["LATENCY_MS"]) == 539.0 and float(first["LATENCY_ENDPOINT_TO_TRANSCRIPT_MS"]) == 512.0
    assert first["PRIORITY"] == "6" and first["SYSLOG_IDENTIFIER"] == "edge"  # 6 = info (syslog levels)
    assert first["MESSAGE"].startswith("[   14.32s] turn_end")
    assert second["MESSAGE"] == "capture device lost:\nline two" and second["PRIORITY"] == "4"
    assert second["STAGE"] == "capture" and "TURN_ID" not in second
