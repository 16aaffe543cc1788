"""The ``edge`` command line, run as a user runs it (a child process)."""
from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest

from edge.events import EVENT_TYPES
from tests.helpers import INVENTORY, REPO, SESSIONS


def edge(*args, cwd=REPO, check=True) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "edge.cli", *map(str, args)], cwd=cwd, capture_output=True,
                       text=True, timeout=300)
    if check:
        assert r.returncode == 0, r.stderr
    return r


@pytest.fixture
def cfg(tmp_path):
    p = tmp_path / "edge.yaml"
    p.write_text(f"board: x86-dev\nstore: {{path: {tmp_path / 'edge.db'}}}\n")
    return p


def test_run_json_writes_one_event_per_line_and_the_reply_audio(cfg, tmp_path):
    out = tmp_path / "out"
    r = edge("run", "--input", SESSIONS / "log_drill_bits_used.wav", "--config", cfg, "--inventory", INVENTORY,
             "--output-dir", out, "--json")
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert all(e["type"] in EVENT_TYPES for e in lines)
    assert [e["state"] for e in lines if e["type"] == "state"] == ["awake", "transcribing", "understanding",
                                                                   "speaking", "listening"]
    events = [e for e in lines if e["type"] != "state"]
    assert [e["type"] for e in events] == ["wake", "transcript", "intent", "reply", "turn_end"]
    wake, transcript, intent, reply, end = events
    assert wake["wake_word"] == "hey_mycroft" and 0.5 <= wake["score"] <= 1
    assert transcript["engine"] == "whisper" and "drill" in transcript["text"].lower()
    assert intent == {**intent, "intent": "log_record", "source": "grammar",
                      "slots": {"sku": "DRL-BIT-6", "quantity": 3, "direction": "out", "location": "drawer 4"}}
    assert (out / reply["audio"].rsplit("/", 1)[-1]).stat().st_size > 1000
    assert set(end["latency_ms"]) >= {"endpoint_to_transcript_ms", "transcript_to_intent_ms",
                                      "intent_to_reply_audio_ms", "total_ms"}
    assert all(v > 0 for v in end["latency_ms"].values())
    # the same events are kept in the output folder
    kept = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert [e["type"] for e in kept] == [e["type"] for e in lines]
    # and the record is durable in the store the config names
    r = edge("records", "export", "--csv", "--config", cfg)
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [(row["sku"], row["delta"]) for row in rows] == [("DRL-BIT-6", "-3")]


def test_run_without_json_prints_readable_lines(cfg, tmp_path):
    r = edge("run", "--input", SESSIONS / "query_goggles_shelf.wav", "--config", cfg, "--inventory", INVENTORY,
             "--output-dir", tmp_path / "out")
    lines = r.stdout.splitlines()
    assert lines and not any(line.lstrip().startswith("{") for line in lines)
    assert any(" wake " in line for line in lines)
    assert any(" reply " in line and "8 safety goggles" in line for line in lines)


def test_a_bad_config_names_the_key_and_the_allowed_values(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("asr: {engine: kaldi}\n")
    r = edge("run", "--input", SESSIONS / "undo_last.wav", "--config", bad, check=False)
    assert r.returncode == 2
    assert "asr.engine" in r.stderr and "'whisper' or 'vosk'" in r.stderr and str(bad) in r.stderr


def test_a_missing_input_names_the_file(cfg, tmp_path):
    r = edge("run", "--input", tmp_path / "nope.wav", "--config", cfg, check=False)
    assert r.returncode == 2 and "nope.wav" in r.stderr and "no such file" in r.stderr


def test_inventory_import_then_ask(cfg):
    r = edge("inventory", "import", INVENTORY, "--config", cfg)
    assert "imported 10 items" in r.stdout
    r = edge("ask", "how many M8 bolts are in bin twelve", "--config", cfg, "--json")
    events = [json.loads(line) for line in r.stdout.splitlines()]
    assert [e["type"] for e in events] == ["intent", "reply", "turn_end"]
    assert events[0]["slots"]["sku"] == "BLT-M8-30"
    assert events[1]["text"] == "There are 140 M8 bolts in bin 12."


def test_models_verify_passes_on_the_installed_models():
    r = edge("models", "verify")
    assert r.stdout.strip().splitlines()[-1].endswith("0 failed")


def test_models_list_shows_each_model_with_its_licence():
    r = edge("models", "list", "--json")
    rows = {row["id"]: row for row in map(json.loads, r.stdout.splitlines())}
    assert rows["wake-hey-mycroft"]["licence"] == "CC-BY-NC-SA-4.0"
    assert rows["smollm2-135m-instruct-q4_1"]["licence"] == "Apache-2.0"
    assert all(row["licence"] for row in rows.values())


@pytest.mark.parametrize("setting,key", [("asr: {whisper: {model: /nonexistent}}", "asr.whisper.model"),
                                         ("llm: {model: smollm3}", "llm.model")])
def test_an_unknown_model_is_named_by_its_key_before_anything_loads(tmp_path, setting, key):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"store: {{path: {tmp_path / 'e.db'}}}\n{setting}\n")
    r = edge("run", "--input", SESSIONS / "undo_last.wav", "--config", cfg, "--inventory", INVENTORY, check=False)
    assert r.returncode == 2 and key in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "e.db").exists()  # refused before the store was touched


def test_an_unwritable_output_dir_is_a_clear_error(cfg, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = edge("run", "--input", SESSIONS / "undo_last.wav", "--config", cfg, "--output-dir", blocker / "out", check=False)
    assert r.returncode == 2 and "output_dir" in r.stderr and "Traceback" not in r.stderr


def test_events_file_holds_this_runs_events_only(cfg, tmp_path):
    out = tmp_path / "out"
    for _ in range(2):
        edge("run", "--input", SESSIONS / "query_m8_bolts.wav", "--config", cfg, "--inventory", INVENTORY,
             "--output-dir", out, "--json")
    kept = [json.loads(line)["type"] for line in (out / "events.jsonl").read_text().splitlines()]
    assert [t for t in kept if t != "state"] == ["wake", "transcript", "intent", "reply", "turn_end"]


def test_an_input_without_samples_says_so(cfg, tmp_path):
    import numpy as np
    import soundfile as sf

    empty = tmp_path / "empty.wav"
    sf.write(str(empty), np.zeros(0, dtype=np.int16), 16000)
    r = edge("run", "--input", empty, "--config", cfg)
    assert "holds no audio samples" in r.stderr and r.stdout == ""


def test_ask_with_no_words_is_refused(cfg):
    r = edge("ask", "  ", "--config", cfg, check=False)
    assert r.returncode == 2 and "give the words" in r.stderr
