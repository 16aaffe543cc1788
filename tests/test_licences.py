"""Licences of the models the box ships: every model in models/manifest.yaml says its licence and
whether a commercial product may ship it; the default install's models may, the default wake word
included; `edge models list`, `edge doctor` and the console's status page say which may ship."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from edge.boards import load_board
from edge.config import LAYER_ENV, load_settings
from edge.models import licences
from edge.models.manifest import default_manifest_path, load_manifest
from edge.ops.doctor import Doctor
from edge.service.console.status import models_part

REPO = Path(__file__).resolve().parents[1]


def raw_manifest() -> dict:
    return yaml.safe_load(default_manifest_path().read_text(encoding="utf-8"))


def test_every_model_in_the_manifest_states_its_licence_and_commercial_use():
    raw = raw_manifest()
    for e in raw["models"] + raw["local_models"]:
        assert str(e.get("licence") or "").strip(), f"{e['id']}: no licence"
        assert "commercial_use" in e, f"{e['id']}: no commercial_use (true, false, or null for unknown)"
        assert e["commercial_use"] in (True, False, None), e["id"]
        assert e.get("licence_source"), f"{e['id']}: where the licence is stated is missing"


def test_every_model_the_default_settings_use_is_in_the_manifest_and_may_ship(monkeypatch):
    monkeypatch.delenv(LAYER_ENV, raising=False)  # the real defaults, not the tests' small-model layer
    used = licences.in_use(load_settings())
    assert [u.name for u in used if u.role == "LLM"] == ["qwen2.5-coder-1.5b-instruct-q4_k_m"]
    assert {u.role for u in used} >= {"wake word", "VAD", "recognizer", "LLM", "sentence encoder"}
    for u in used:
        assert u.entry is not None, f"{u.role} {u.name} is not in the manifest"
        assert u.entry.licence not in ("", "unknown", "unstated"), (u.name, u.entry.licence)
        assert u.entry.commercial_use is True, f"{u.role} {u.name}: {u.entry.licence} may not ship"


def test_the_default_wake_word_is_commercial_and_runs_without_openwakeword_weights():
    s = load_settings()
    (w,) = s.wake.models
    entry = load_manifest().get(licences.wake_manifest_id(w.name, w.engine))
    assert (w.engine, entry.kind, entry.licence, entry.commercial_use) == ("micro", "wake_word", "Apache-2.0", True)
    # no CC BY-NC-SA front end either: openWakeWord's melspectrogram is only used by its own models
    assert not [u for u in licences.in_use(s) if u.role == "wake-word features"]


def test_openwakeword_models_are_marked_non_commercial_and_microwakeword_ones_commercial():
    m = load_manifest()
    wake = {e.id: e for e in m.models if e.kind == "wake_word"}
    assert {i for i, e in wake.items() if e.commercial_use is False} == {
        "wake-alexa", "wake-hey-jarvis", "wake-hey-mycroft", "wake-hey-rhasspy"}
    assert {i for i, e in wake.items() if e.commercial_use is True} == {
        "micro-okay-nabu", "micro-hey-mycroft", "micro-alexa", "micro-hey-jarvis"}
    assert "Amazon" in wake["micro-alexa"].trademark and "Mycroft AI" in wake["micro-hey-mycroft"].trademark
    assert "Nabu Casa" in wake["micro-okay-nabu"].trademark


def test_models_list_says_which_may_ship():
    r = subprocess.run([sys.executable, "-m", "edge.cli", "models", "list", "--json"], cwd=REPO, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rows = {d["id"]: d for d in map(json.loads, r.stdout.splitlines())}
    assert rows["micro-okay-nabu"]["may_ship"] == "yes" and rows["wake-hey-mycroft"]["may_ship"] == "no"
    assert rows["vosk-ko"]["may_ship"] == "unknown"
    assert rows["wake-alexa"]["trademark"]


def test_doctor_warns_for_a_non_commercial_wake_word_and_names_the_trademark(tmp_path):
    s = load_settings(overrides={"wake": {"models": [{"name": "hey_mycroft", "engine": "openwakeword"}]}})
    r = Doctor(tmp_path, load_board("x86-dev"), s, probe_audio=False).run(["licences"])[0]
    assert r.status == "warn"
    assert "hey_mycroft (openwakeword) is CC-BY-NC-SA-4.0 (non-commercial)" in r.message
    assert "Mycroft AI" in r.message and "oww-melspectrogram" in r.message
    assert "edge models add" in r.fix


def test_doctor_on_the_default_wake_word_says_it_may_ship_but_is_nabu_casas_phrase(tmp_path):
    r = Doctor(tmp_path, load_board("x86-dev"), load_settings(), probe_audio=False).run(["licences"])[0]
    assert r.status == "warn" and "Nabu Casa" in r.message
    assert "non-commercial" not in r.message and "okay_nabu (micro): Apache-2.0, may ship: yes" in r.message


def test_an_own_wake_word_without_a_trademark_note_is_ok(tmp_path):
    own = tmp_path / "models" / "wake"
    s = load_settings(overrides={"wake": {"models": [{"name": str(own / "hey_stockroom.json"), "engine": "micro"}]}})
    r = Doctor(tmp_path, load_board("x86-dev"), s, probe_audio=False).run(["licences"])[0]
    assert r.status == "ok" and "hey_stockroom (micro): own model, may ship: own" in r.message


def test_the_console_status_page_shows_which_models_may_ship():
    p = models_part()
    assert not p.error and p.header[4] == "may ship commercially"
    rows = {r[0]: r for r in p.rows}
    assert rows["micro-okay-nabu"][4] == "yes" and rows["wake-hey-mycroft"][4] == "no"
