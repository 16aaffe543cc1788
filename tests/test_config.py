"""edge.config.load_settings: defaults ← board ← user file ← overrides, and the errors people see."""
from __future__ import annotations

import sys
from pathlib import Path

import pydantic
import pytest

from edge.config import BOARD_DIR, DEFAULTS, ConfigError, load_settings


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def config_error(**kwargs) -> str:
    with pytest.raises(ConfigError) as ei:
        load_settings(**kwargs)
    assert isinstance(ei.value, ValueError)
    return str(ei.value)


# --------------------------------------------------------------------------------------------
# loads


def test_defaults_load():
    s = load_settings()
    assert s.asr.engine == "whisper"
    assert s.language == "en"
    assert [(m.name, m.engine) for m in s.wake.models] == [("okay_nabu", "micro")]
    assert s.endpoint.trailing_silence_ms == 700
    assert s.endpoint.max_utterance_ms == 10000
    assert s.endpoint.no_speech_timeout_ms == 5000
    assert s.board is None


def test_board_x86_dev_loads():
    s = load_settings(board="x86-dev")
    assert s.asr.engine == "whisper"
    assert s.board.name == "x86-dev"
    assert s.llm.n_ctx == 2048
    # settings the board does not mention keep their defaults
    assert s.endpoint.trailing_silence_ms == 700


def test_board_named_in_the_user_file_is_merged(tmp_path):
    p = write(tmp_path, "edge.yaml", "board: x86-dev\nendpoint:\n  trailing_silence_ms: 560\n")
    s = load_settings(p)
    assert s.board.name == "x86-dev"
    assert s.endpoint.trailing_silence_ms == 560


def test_user_file_and_overrides_win_in_order(tmp_path):
    p = write(tmp_path, "edge.yaml", "asr:\n  engine: vosk\nendpoint:\n  vad_threshold: 0.6\n")
    s = load_settings(p, board="x86-dev", overrides={"endpoint": {"vad_threshold": 0.7}})
    assert s.asr.engine == "vosk"  # the user file beats the board
    assert s.endpoint.vad_threshold == 0.7  # overrides beat the user file
    assert s.asr.vosk.model == "vosk-ko"  # siblings of an overridden key are kept


def test_empty_user_file_gives_the_defaults(tmp_path):
    p = write(tmp_path, "empty.yaml", "# nothing set\n")
    assert load_settings(p) == load_settings()


def test_settings_are_frozen():
    s = load_settings()
    with pytest.raises(pydantic.ValidationError):
        s.asr.engine = "vosk"
    assert s.asr.engine == "whisper"


# --------------------------------------------------------------------------------------------
# errors: each names the file and the key


def test_unknown_key_names_file_and_key(tmp_path):
    p = write(tmp_path, "typo.yaml", "asr:\n  engin: vosk\n")
    msg = config_error(path=p)
    assert str(p) in msg
    assert "asr.engin" in msg
    assert "unknown key" in msg


def test_unknown_top_level_key_names_file_and_key(tmp_path):
    p = write(tmp_path, "top.yaml", "wakeword_threshold: 0.4\n")
    msg = config_error(path=p)
    assert str(p) in msg and "wakeword_threshold" in msg


def test_wrong_enum_value_lists_the_allowed_values(tmp_path):
    p = write(tmp_path, "engine.yaml", "asr:\n  engine: kaldi\n")
    msg = config_error(path=p)
    assert str(p) in msg
    assert "asr.engine" in msg
    assert "kaldi" in msg
    assert "'whisper'" in msg and "'vosk'" in msg


@pytest.mark.parametrize("key, yaml_text", [
    ("wake.models.0.threshold", "wake:\n  models:\n    - {name: alexa, threshold: 1.5}\n"),
    ("wake.models.0.threshold", "wake:\n  models:\n    - {name: alexa, threshold: 0}\n"),
    ("endpoint.vad_threshold", "endpoint:\n  vad_threshold: -0.1\n"),
    ("endpoint.trailing_silence_ms", "endpoint:\n  trailing_silence_ms: 10\n"),
])
def test_value_out_of_range_names_file_and_key(tmp_path, key, yaml_text):
    p = write(tmp_path, "range.yaml", yaml_text)
    msg = config_error(path=p)
    assert str(p) in msg
    assert key in msg, msg


def test_out_of_range_override_names_the_key():
    msg = config_error(overrides={"endpoint": {"vad_threshold": 1.0}})
    assert "endpoint.vad_threshold" in msg
    assert str(DEFAULTS) in msg


@pytest.mark.parametrize("text, kind", [("- a\n- b\n", "list"), ("just a sentence\n", "str"), ("42\n", "int")])
def test_non_mapping_yaml_names_the_file(tmp_path, text, kind):
    p = write(tmp_path, "notamap.yaml", text)
    msg = config_error(path=p)
    assert str(p) in msg
    assert "mapping" in msg and kind in msg


def test_bad_yaml_syntax_names_the_file_and_line(tmp_path):
    p = write(tmp_path, "broken.yaml", "asr:\n  engine: whisper\nendpoint: [unclosed\n")
    msg = config_error(path=p)
    assert str(p) in msg
    assert "YAML" in msg
    assert "line 4, column 1:" in msg and "fix the YAML" in msg
    assert "\n" not in msg  # one line, not PyYAML's multi-line report


def test_missing_file_names_the_file(tmp_path):
    p = tmp_path / "nowhere" / "edge.yaml"
    msg = config_error(path=p)
    assert str(p) in msg
    assert "not found" in msg


@pytest.mark.parametrize("how", ["argument", "user file"])
def test_unknown_board_lists_the_known_boards(tmp_path, how):
    kwargs = {"board": "raspberry-pi-9"} if how == "argument" else {
        "path": write(tmp_path, "edge.yaml", "board: raspberry-pi-9\n")}
    msg = config_error(**kwargs)
    assert "raspberry-pi-9" in msg
    known = sorted(q.stem for q in BOARD_DIR.glob("*.yaml"))
    assert "x86-dev" in known
    for b in known:
        assert b in msg, f"known board {b!r} not listed in: {msg}"


def test_bad_board_file_names_the_board_file_and_key(tmp_path, monkeypatch):
    """A board config with an invalid value: the message names the board file among the sources."""
    import edge.config as config

    boards = tmp_path / "board-configs"
    boards.mkdir()
    bad = write(boards, "tiny-board.yaml", "board:\n  name: tiny\nllm:\n  n_ctx: 0\n")
    monkeypatch.setattr(config, "BOARD_DIR", boards)
    msg = config_error(board="tiny-board")
    assert str(bad) in msg
    assert "llm.n_ctx" in msg


def test_one_bad_threshold_is_reported_as_one_error(tmp_path):
    """A single out-of-range threshold in a one-model list must give one error line. Today pydantic
    also reports ``wake.models: Tuple should have at least 1 item after validation, not 0`` for the
    variadic ``tuple[WakeModel, ...]`` with ``min_length=1``: it tells the user the list is empty
    when it holds one model, and sends them looking for the wrong fault."""
    p = write(tmp_path, "one_model.yaml", "wake:\n  models:\n    - {name: alexa, threshold: 1.5}\n")
    msg = config_error(path=p)
    errors = [line for line in msg.splitlines()[1:] if line.strip()]
    assert len(errors) == 1, msg
    assert "wake.models.0.threshold" in errors[0]


def test_a_key_given_twice_is_refused_with_both_lines(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("board: x86-dev\nlanguage: en\nboard: {cpu_clusters: [{name: a, cores: [0]}]}\n")
    with pytest.raises(ConfigError, match=r"c\.yaml.*'board' is given twice \(line 1 and line 3\).*board: \{name: NAME"):
        load_settings(f)


def test_a_board_mapping_with_a_name_takes_that_board_and_changes_its_fields(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("board: {name: rk3588-rock5b, cpu_clusters: [{name: all, cores: [0, 1]}]}\n")
    s = load_settings(f)
    assert s.board.name == "rk3588-rock5b" and [c.cores for c in s.board.cpu_clusters] == [[0, 1]]
    assert s.board.npu["device_node"] == "/dev/dri/renderD129"  # the rest comes from the board's file


# --------------------------------------------------------------------------------------------
# wyoming: loopback unless allow_lan (Wyoming has no authentication)


def test_wyoming_listens_on_loopback_by_default():
    assert load_settings().wyoming is None  # no section: the live service serves no Wyoming
    w = load_settings(overrides={"wyoming": {}}).wyoming
    assert (w.uri, w.allow_lan) == ("tcp://127.0.0.1:10700", False)


@pytest.mark.parametrize("uri", ["tcp://0.0.0.0:10700", "tcp://192.168.1.20:10700", "tcp://[::]:10700"])
def test_wyoming_off_loopback_needs_allow_lan(tmp_path, uri):
    p = write(tmp_path, "lan.yaml", f"wyoming:\n  uri: {uri}\n")
    msg = config_error(path=p)
    assert str(p) in msg and "wyoming.allow_lan" in msg and "no authentication" in msg
    allowed = write(tmp_path, "ok.yaml", f"wyoming:\n  uri: {uri}\n  allow_lan: true\n")
    assert load_settings(allowed).wyoming.uri == uri


@pytest.mark.parametrize("uri", ["http://127.0.0.1:10700", "tcp://127.0.0.1", "127.0.0.1:10700"])
def test_wyoming_uri_must_be_tcp_with_a_port_or_unix(uri):
    msg = config_error(overrides={"wyoming": {"uri": uri}})
    assert "wyoming.uri" in msg and "tcp://HOST:PORT" in msg


def test_wyoming_unix_socket_is_local():
    assert load_settings(overrides={"wyoming": {"uri": "unix:///run/edge/wyoming.sock"}}).wyoming.allow_lan is False


def test_secrets_and_whole_sections_are_not_echoed_in_errors(tmp_path):
    p = write(tmp_path, "s.yaml", 'site: {box: goods-in, dsn: "host=10.0.0.5 password=hunter2pw dbname=edge"}\n'
                                  'api: {token: "sekrit"}\n')
    msg = config_error(path=p)
    assert "site.dsn holds a password" in msg and "api.token" in msg  # both errors named ...
    assert "hunter2pw" not in msg and "sekrit" not in msg  # ... without the secrets


def test_a_wrong_plain_value_is_still_echoed(tmp_path):
    msg = config_error(path=write(tmp_path, "v.yaml", "asr: {engine: kaldi}\n"))
    assert "asr.engine" in msg and "(got 'kaldi')" in msg


# --------------------------------------------------------------------------------------------
# wake-word engines


def test_a_wake_model_without_an_engine_gets_the_one_its_name_means():
    s = load_settings(overrides={"wake": {"models": [{"name": "okay_nabu"}, {"name": "hey_mycroft", "threshold": 0.6},
                                                     {"name": "/x/own.tflite"}]}})
    assert [m.engine for m in s.wake.models] == ["micro", "openwakeword", "micro"]
    assert s.wake.models[0].threshold is None  # the model's own cutoff, read from its JSON when loaded


def test_one_wake_word_on_two_engines_is_refused():
    assert "hey_mycroft configured twice" in config_error(overrides={"wake": {"models": [
        {"name": "hey_mycroft", "engine": "micro"}, {"name": "hey_mycroft", "engine": "openwakeword"}]}})


def test_an_engine_that_is_not_installed_is_a_settings_error_naming_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "pymicro_wakeword", None)  # what an install without it looks like to import
    msg = config_error(overrides={"wake": {"models": [{"name": "okay_nabu", "engine": "micro"}]}})
    assert "pymicro-wakeword==2.5.0" in msg and "okay_nabu" in msg and "scripts/setup.sh" in msg
    monkeypatch.setitem(sys.modules, "openwakeword", None)
    assert "openwakeword==0.5.1" in config_error(
        overrides={"wake": {"models": [{"name": "alexa", "engine": "openwakeword"}]}})
