"""Recordings that lie: a WAV whose header promises more audio than the file holds (a recorder
killed before it closed the file, a copy cut short) is processed with a warning naming what is
missing; a directory given as ``--input`` says it is a directory. Real ``edge run`` processes."""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys

import soundfile as sf

from drivers.audio.wavfile import length_warning
from tests.helpers import INVENTORY, REPO, SESSION_WAKE, SESSIONS

TWO_TURNS = SESSIONS / "two_turns_log_then_undo.wav"


def edge(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "edge.cli", *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})


def run(tmp_path, wav) -> tuple[subprocess.CompletedProcess, list[dict]]:
    cfg = tmp_path / "edge.yaml"
    cfg.write_text(f"board: x86-dev\n{SESSION_WAKE}store: {{path: {tmp_path / 'edge.db'}}}\nllm: {{engine: none}}\n")
    r = edge("run", "--input", wav, "--config", cfg, "--inventory", INVENTORY, "--output-dir", tmp_path / "out",
             "--json")
    return r, [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]


def data_offset(raw: bytes) -> int:
    i = raw.find(b"data", 12)
    assert i > 0
    return i + 8


def test_a_recording_cut_short_is_processed_with_what_is_missing_named(tmp_path):
    raw = TWO_TURNS.read_bytes()
    info = sf.info(str(TWO_TURNS))
    bytes_per_s = info.samplerate * info.channels * 2
    assert info.subtype == "PCM_16"
    keep = 7 * bytes_per_s + 1  # 7 s of the 11.3 s, and half a sample frame
    cut = tmp_path / "cut.wav"
    cut.write_bytes(raw[:data_offset(raw) + keep])
    r, events = run(tmp_path, cut)
    assert r.returncode == 0, r.stderr[-3000:]
    warning = next(x for x in r.stderr.splitlines() if x.startswith("warning:") and "missing" in x)
    assert str(cut) in warning and "holds 7.00 s" in warning and "4.30 s" in warning, warning
    assert "half a sample frame" in warning
    # what is there was processed: the first turn (the log) was heard, understood and answered
    intents = [e for e in events if e["type"] == "intent"]
    assert intents and intents[0]["intent"] == "log_record", events
    assert any(e["type"] == "reply" for e in events)


def test_a_header_promising_more_than_the_file_holds_is_processed_whole(tmp_path):
    raw = bytearray(TWO_TURNS.read_bytes())
    off = data_offset(raw)
    raw[off - 4:off] = struct.pack("<I", 0x7FFFFFFF)  # what a streaming recorder writes before it knows the length
    lying = tmp_path / "lying.wav"
    lying.write_bytes(raw)
    r, events = run(tmp_path, lying)
    assert r.returncode == 0, r.stderr[-3000:]
    assert any(x.startswith(f"warning: {lying}: the header promises") and "missing" in x
               for x in r.stderr.splitlines()), r.stderr
    # every sample the file holds was processed: the same turns as the honest original
    (tmp_path / "honest").mkdir()
    _, honest = run(tmp_path / "honest", TWO_TURNS)
    assert [e["intent"] for e in events if e["type"] == "intent"] == \
        [e["intent"] for e in honest if e["type"] == "intent"] == ["log_record", "undo"]


def test_an_honest_recording_gets_no_warning():
    assert all(length_warning(p) is None for p in SESSIONS.glob("*.wav"))


def test_a_directory_as_input_says_it_is_a_directory(tmp_path):
    cfg = tmp_path / "edge.yaml"
    cfg.write_text(f"board: x86-dev\n{SESSION_WAKE}store: {{path: {tmp_path / 'edge.db'}}}\nllm: {{engine: none}}\n")
    r = edge("run", "--input", tmp_path, "--config", cfg)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith(f"edge: {tmp_path}: is a directory, not a WAV file"), r.stderr
