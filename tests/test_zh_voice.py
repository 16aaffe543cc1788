"""Mandarin by voice, end to end: recordings of a real "hey mycroft" and a Mandarin command
(tests/recordings/zh/, Kokoro-82M speaking misaki's Mandarin phonemes; README there) played through
``edge run --input`` with ``language: zh`` from a fresh store each, and the store read afterwards.

The recognizer is the one ``language: zh`` picks (the multilingual Whisper base, joined by
``edge models install whisper-base``; scripts/setup.sh does it), with the inventory's Chinese names
in its prompt. One run per recording (a model load each): a handful, all short.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from edge.config import load_settings
from edge.models.manifest import ModelNotFoundError, resolve
from edge.stock.store import Store
from tests.helpers import SESSION_WAKE

REPO = Path(__file__).resolve().parents[1]
ZH = REPO / "tests" / "recordings" / "zh"
INVENTORY = ZH / "inventory.csv"
EXPECTED = json.loads((ZH / "expected.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def whisper_base():
    try:
        return resolve("whisper-base")
    except ModelNotFoundError as e:
        pytest.fail(f"{e} (scripts/setup.sh installs it: edge models install whisper-base)")


def run_zh(wav: Path, tmp_path: Path) -> tuple[list[dict], list[tuple[str, float]], dict[str, float]]:
    """``edge run --input wav`` with ``language: zh`` on a fresh store: (events, records as (sku,
    delta), stock by sku)."""
    cfg = tmp_path / "edge.yaml"
    # the replies' voice is espeak-ng here: these check the loop and the store (Kokoro costs seconds of
    # CPU per reply); the Mandarin voice has its own test below
    cfg.write_text(f"language: zh\n{SESSION_WAKE}store: {{path: {tmp_path / 'edge.db'}}}\ntts: {{engine: pyttsx3}}\n",
                   encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "edge.cli", "run", "--input", str(wav), "--config", str(cfg),
                        "--inventory", str(INVENTORY), "--output-dir", str(tmp_path / "out"), "--json"],
                       cwd=REPO, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    events = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    with Store(tmp_path / "edge.db") as s:
        return events, [(x.sku, x.delta) for x in s.records()], {it.sku: it.quantity for it in s.items()}


def said(events) -> str:
    return " | ".join(f"{e['type']}: {e.get('text') or e.get('intent')}" for e in events
                      if e["type"] in ("transcript", "intent", "reply"))


def test_language_zh_picks_the_multilingual_whisper_and_refuses_tiny_en(tmp_path):
    s = load_settings(overrides={"language": "zh", "store": {"path": str(tmp_path / "e.db")}})
    assert s.asr.whisper.model == "whisper-base"
    assert load_settings(overrides={"store": {"path": str(tmp_path / "e.db")}}).asr.whisper.model == "whisper-tiny-en"
    from edge.config import ConfigError
    with pytest.raises(ConfigError, match="English-only"):
        load_settings(overrides={"language": "zh", "store": {"path": str(tmp_path / "e.db")},
                                 "asr": {"whisper": {"model": "whisper-tiny-en"}}})


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_mandarin_session_leaves_the_store_as_said(name, whisper_base, tmp_path):
    want = EXPECTED[name]
    events, records, stock = run_zh(ZH / f"{name}.wav", tmp_path)
    replies = [e["text"] for e in events if e["type"] == "reply"]
    if not records and want.get("or_asks") and any(want["or_asks"] in r for r in replies):
        # the recognizer lost the measure word (收到20、…手套 for 收到二十盒…): a count without the unit
        # of an item counted in boxes is asked, never logged as boxes; the safe outcome of that transcript
        want = {**want, "records": [], "reply_mentions": []}
    assert [tuple(r) for r in want["records"]] == [(sku, float(d)) for sku, d in records], said(events)
    with Store(tmp_path / "fresh.db") as fresh:
        fresh.import_csv(INVENTORY)
        before = {it.sku: it.quantity for it in fresh.items()}
    for sku, delta in want["records"]:
        before[sku] += delta
    assert stock == before  # nothing else moved
    wakes = [e for e in events if e["type"] == "wake"]
    assert len(wakes) == len(want["said"]), said(events)
    intents = [e for e in events if e["type"] == "intent"]
    if want["intent"] is None:  # noise after the wake word: no command understood
        assert all(e["intent"] in ("other", "no_speech") for e in intents), said(events)
    else:
        assert intents and intents[-1]["intent"] == want["intent"], said(events)
    if want.get("sku"):
        assert intents[-1]["slots"]["sku"] == want["sku"], said(events)
    for word in want.get("reply_mentions", []):
        assert any(word in r for r in replies), said(events)


def test_mandarin_replies_are_spoken_by_kokoro_with_numbers_as_words(whisper_base, tmp_path):
    """The reply voice language zh picks, its numbers as Chinese words, read back by the recognizer."""
    import numpy as np

    from drivers.audio import read_wav
    from edge.config import TtsSettings
    from edge.stages.asr.whisper import WhisperRecognizer
    from edge.stages.tts.clean import for_speech
    from edge.stages.tts.engine import WatchdogTts, engine_for
    from edge.stages.tts.kokoro_zh import SAMPLE_RATE

    assert engine_for(TtsSettings(), "zh") == "kokoro" and engine_for(TtsSettings(), "en") == "pyttsx3"
    assert for_speech("12号料箱有140个M8螺栓。", "zh") == "十二号料箱有一百四十个M八螺栓。"
    assert for_speech("用了2卷，还有22卷。", "zh") == "用了两卷，还有二十二卷。"
    tts = WatchdogTts("zh", engine="kokoro", base_timeout_s=60.0)
    try:
        wav = tts.synthesize("已撤销：3个钻头。", tmp_path / "r.wav")
    finally:
        tts.close()
    data, rate = read_wav(wav)
    assert rate == SAMPLE_RATE and 0.8 < len(data) / rate < 6.0
    import soxr
    pcm = (soxr.resample(data[:, 0], rate, 16000) * 32767).astype(np.int16)
    heard = WhisperRecognizer("whisper-base", language="zh").transcribe(np.concatenate([pcm, np.zeros(8000, np.int16)])).text
    assert "撤销" in heard and "钻头" in heard, heard
