"""The ``edge`` command line, run as a user runs it (a child process)."""
from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest

from edge.events import EVENT_TYPES
from tests.helpers import INVENTORY, REPO, SESSION_WAKE, SESSIONS


def edge(*args, cwd=REPO, check=True) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "edge.cli", *map(str, args)], cwd=cwd, capture_output=True,
                       text=True, timeout=300)
    if check:
        assert r.returncode == 0, r.stderr
    return r


@pytest.fixture
def cfg(tmp_path):
    p = tmp_path / "edge.yaml"
    p.write_text(f"board: x86-dev\n{SESSION_WAKE}store: {{path: {tmp_path / 'edge.db'}}}\n")
    return p


def test_run_json_writes_one_event_per_line_and_the_reply_audio(cfg, tmp_path):
    out = tmp_path / "out"
    r = edge("run", "--input", SESSIONS / "log_drill_bits_used.wav", "--config", cfg, "--inventory", INVENTORY,
             "--output-dir", out, "--json")
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert all(e["type"] in EVENT_TYPES for e in lines)
    assert [e["state"] for e in lines if e["type"] == "state"] == ["awake", "transcribing", "understanding",
                                                                   "speaking", "listening"]
    partials = [e for e in lines if e["type"] == "partial"]  # how many: the CPU budget's (wall-clock) call
    assert all(p["engine"] == "whisper" and p["text"] for p in partials)
    events = [e for e in lines if e["type"] not in ("state", "partial")]
    assert [e["type"] for e in events] == ["wake", "endpoint", "transcript", "intent", "reply", "turn_end"]
    wake, endpoint, transcript, intent, reply, end = events
    assert endpoint["reason"] == "complete"
    assert wake["wake_word"] == "hey_mycroft" and 0.5 <= wake["score"] <= 1
    assert transcript["engine"] == "whisper" and "drill" in transcript["text"].lower()
    assert intent == {**intent, "intent": "log_record", "source": "template",
                      "slots": {"sku": "DRL-BIT-6", "quantity": 3, "direction": "out", "location": "drawer 4"}}
    assert (out / reply["audio"].rsplit("/", 1)[-1]).stat().st_size > 1000
    assert set(end["latency_ms"]) >= {"endpoint_to_transcript_ms", "transcript_to_intent_ms",
                                      "intent_to_reply_audio_ms", "total_ms"}
    # the transcript was decoded when silence started (semantic endpointing): ~0 ms after the endpoint
    assert all(v >= 0 for v in end["latency_ms"].values()) and end["latency_ms"]["total_ms"] > 0
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


def test_models_verify_json_is_one_object_per_check():
    r = edge("models", "verify", "--json")
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert r.returncode == 0 and rows and all(row["ok"] for row in rows), r.stderr[-2000:]
    assert {"model", "file", "check", "path", "fix", "message"} <= set(rows[0])
    assert any(row["model"] == "wake-hey-mycroft" and row["check"] == "sha256" for row in rows)


def test_models_list_shows_each_model_with_its_licence():
    r = edge("models", "list", "--json")
    rows = {row["id"]: row for row in map(json.loads, r.stdout.splitlines())}
    assert rows["wake-hey-mycroft"]["licence"] == "CC-BY-NC-SA-4.0"
    assert rows["smollm2-135m-instruct-q4_1"]["licence"] == "Apache-2.0"
    assert all(row["licence"] for row in rows.values())


def test_an_unknown_model_is_named_by_its_key_before_anything_loads(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"store: {{path: {tmp_path / 'e.db'}}}\nasr: {{whisper: {{model: /nonexistent}}}}\n")
    r = edge("run", "--input", SESSIONS / "undo_last.wav", "--config", cfg, "--inventory", INVENTORY, check=False)
    assert r.returncode == 2 and "asr.whisper.model" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "e.db").exists()  # refused before the store was touched


def test_an_unknown_llm_model_is_named_by_its_key_and_the_box_runs_degraded(tmp_path):
    """Only the LLM missing (C24): named with its key and check, then the grammar path serves."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"store: {{path: {tmp_path / 'e.db'}}}\nllm: {{model: smollm3}}\n")
    r = edge("run", "--input", SESSIONS / "undo_last.wav", "--config", cfg, "--inventory", INVENTORY,
             "--output-dir", tmp_path / "out", check=False)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "llm.model: smollm3: missing check failed" in r.stderr and "starting degraded" in r.stderr, r.stderr


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
    assert [t for t in kept if t not in ("state", "partial")] == ["wake", "endpoint", "transcript", "intent", "reply",
                                                                  "turn_end"]


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


# ------------------------------------------------------------------------ user errors and bugs


def assert_one_line_user_error(r: subprocess.CompletedProcess, *names) -> str:
    """Exit 2 and exactly one ``edge: ...`` line on stderr, naming each of ``names``; no traceback."""
    assert r.returncode == 2, (r.returncode, r.stderr[-3000:])
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("edge: "), r.stderr
    for name in names:
        assert str(name) in lines[0], (name, lines[0])
    return lines[0]


def test_a_folder_given_as_the_input_wav_is_a_user_error(cfg, tmp_path):
    assert_one_line_user_error(edge("run", "--input", tmp_path, "--config", cfg, check=False), tmp_path, "WAV")


def test_a_folder_given_as_the_config_is_a_user_error(tmp_path):
    line = assert_one_line_user_error(edge("run", "--input", SESSIONS / "undo_last.wav", "--config", tmp_path,
                                           check=False), tmp_path)
    assert "a folder, not a config file" in line


def test_a_binary_config_file_is_a_user_error(tmp_path):
    bad = tmp_path / "edge.yaml"
    bad.write_bytes(b"\xff\xfe\x00\x81binary")
    line = assert_one_line_user_error(edge("ask", "undo that", "--config", bad, check=False), bad)
    assert "UTF-8" in line


@pytest.mark.parametrize("what", ["missing", "folder"])
def test_a_missing_or_unreadable_inventory_csv_is_a_user_error(cfg, tmp_path, what):
    csv_path = tmp_path / "stock.csv"
    if what == "folder":
        csv_path.mkdir()
    line = assert_one_line_user_error(edge("inventory", "import", csv_path, "--config", cfg, check=False), csv_path)
    assert "cannot read inventory CSV" in line


def test_an_unknown_board_is_a_user_error_listing_the_boards(tmp_path):
    line = assert_one_line_user_error(edge("ask", "undo that", "--board", "rk9999", check=False), "rk9999")
    assert "known boards" in line and "x86-dev" in line


def test_ask_with_no_words_is_one_line(cfg):
    assert_one_line_user_error(edge("ask", "  ", "--config", cfg, check=False), "give the words")


def test_a_missing_bundle_is_a_user_error(tmp_path):
    line = assert_one_line_user_error(edge("models", "install", tmp_path / "nope.tar", "--models-dir",
                                           tmp_path / "models", check=False), "nope.tar")
    assert "refused, nothing switched" in line and "cannot read the bundle" in line


def test_a_bundle_written_onto_a_folder_is_a_user_error(tmp_path):
    out = tmp_path / "out.tar"
    out.mkdir()
    line = assert_one_line_user_error(edge("models", "bundle", "--board", "x86-dev", out, "--model", "wake-alexa",
                                           check=False), out)
    assert "cannot write the bundle" in line and not (tmp_path / "out.tar.part").exists()


def test_doctor_with_an_unknown_check_or_board_is_a_user_error(tmp_path):
    line = assert_one_line_user_error(edge("doctor", "--board", "x86-dev", "--root", tmp_path, "--no-audio-probe",
                                           "--check", "vibes", check=False), "vibes")
    assert "known: packages" in line
    line = assert_one_line_user_error(edge("doctor", "--board", "rk9999-nope", "--root", tmp_path,
                                           "--no-audio-probe", check=False), "rk9999-nope")
    assert "known boards: generic-aarch64" in line


def test_install_into_a_root_with_a_file_for_etc_is_a_user_error(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "etc").write_text("not a folder")
    line = assert_one_line_user_error(edge("install", "--board", "x86-dev", "--root", root, "--exec", "/bin/true",
                                           check=False), root / "etc")
    assert line.startswith("edge: install: ") and "a file stands where a folder belongs" in line


# A bug is any exception that is not a UserError: the handler of a real command is replaced by one
# that raises, and main() itself (the unit: its error handling) runs unchanged in a child process.
BUG = """
import sys
import edge.cli

def handler(args):
    raise {exc}("the handler has a bug")

edge.cli.cmd_records_export = handler
sys.exit(edge.cli.main(["records", "export", "--csv", "--config", sys.argv[1]]))
"""


@pytest.mark.parametrize("exc", ["RuntimeError", "ValueError", "OSError", "FileNotFoundError", "KeyError"])
def test_a_bug_shows_its_traceback_and_exits_1(cfg, exc):
    r = subprocess.run([sys.executable, "-c", BUG.format(exc=exc), str(cfg)], cwd=REPO, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert r.stderr.startswith("Traceback (most recent call last):"), r.stderr
    assert "in handler" in r.stderr and r.stderr.rstrip().splitlines()[-1].startswith(exc), r.stderr
    assert "the handler has a bug" in r.stderr and "edge: " not in r.stderr


def test_the_same_harness_turns_a_user_error_into_one_line(cfg):
    code = BUG.format(exc="UserError").replace("import edge.cli", "import edge.cli\nfrom edge.errors import UserError")
    r = subprocess.run([sys.executable, "-c", code, str(cfg)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr == "edge: the handler has a bug\n", r.stderr


@pytest.mark.parametrize("bad", ["-1", "nan", "inf", "soon"])
def test_status_refuses_an_interval_that_is_not_zero_or_more_seconds(bad):
    r = edge("status", "--interval", bad, check=False)
    assert r.returncode == 2 and "--interval" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_a_reader_that_leaves_early_is_not_a_traceback():
    p = subprocess.Popen([sys.executable, "-m", "edge.cli", "models", "list"], cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdout.close()  # like `| head` that has read enough
    err = p.stderr.read().decode()
    assert p.wait(timeout=300) in (0, 141) and "Traceback" not in err, err
