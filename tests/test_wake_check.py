"""The wake word's second stage (edge.stages.wake_check, edge.stages.wake.Confirm): Whisper tiny.en
checks okay_nabu's phrase on real microWakeWord detections of espeak-ng speech made here."""
from __future__ import annotations

import subprocess
import tempfile

import numpy as np
import pytest

from drivers.audio import FRAME_SAMPLES, read_wav
from drivers.audio.convert import FrameConverter
from edge.config import load_settings
from edge.stages.wake import WakeWord
from edge.stages.wake_check import Verdict, build_check, plain, spellings, window_snr_db
from tests.tvmix import at_db, rms_db, workshop


def espeak(text: str, voice: str = "en-us", speed: int = 150) -> np.ndarray:
    """``text`` said by espeak-ng, 16 kHz int16, 0.5 s of silence before and 1 s after."""
    with tempfile.NamedTemporaryFile(suffix=".wav") as tmp:
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", tmp.name, "--", text], check=True)
        data, rate = read_wav(tmp.name)
    conv = FrameConverter(rate, data.shape[1])
    x = np.concatenate(conv.push(data) + conv.flush()).astype(np.int16)
    return np.concatenate([np.zeros(8000, np.int16), x, np.zeros(16000, np.int16)])


def frames(audio: np.ndarray) -> list[np.ndarray]:
    return [audio[i:i + FRAME_SAMPLES] for i in range(0, len(audio) - FRAME_SAMPLES + 1, FRAME_SAMPLES)]


@pytest.fixture(scope="module")
def settings():
    return load_settings()


@pytest.fixture(scope="module")
def checked(settings) -> WakeWord:
    ww = WakeWord.from_settings(settings)  # the defaults: okay_nabu at 0.7, checked, its first stage at 0.1
    assert ww.confirm is not None and set(ww.confirm.checker.phrases) == {"okay_nabu"}
    return ww


def detect(ww: WakeWord, audio: np.ndarray) -> list:
    ww.flush()
    return [d for f in frames(audio) if (d := ww.process(f)) is not None]


def test_okay_now_wakes_the_first_stage_but_not_the_checked_word(checked):
    said = espeak("okay now")
    alone = WakeWord([("okay_nabu", "micro", 0.7)])
    assert [d.wake_word for d in detect(alone, said)] == ["okay_nabu"]  # the confusable fires the model
    assert detect(checked, said) == []
    v = checked.confirm.verdicts[-1]
    assert not v.accepted and not v.match and plain(v.heard) == "oknow", v


def test_okay_nabu_wakes_through_the_check(checked):
    found = detect(checked, espeak("okay nabu"))
    assert [d.wake_word for d in found] == ["okay_nabu"]
    v = checked.confirm.verdicts[-1]
    assert v.accepted and v.match and v.snr_db == 60.0, v  # digital silence around it: Whisper decides


def test_a_checked_word_listens_at_the_checks_lower_threshold(settings, checked):
    assert checked.thresholds == {"okay_nabu": 0.7} and checked.trigger.thresholds == {"okay_nabu": 0.1}
    off = settings.model_copy(update={"wake": settings.wake.model_copy(update={
        "check": settings.wake.check.model_copy(update={"models": []})})})
    assert WakeWord.from_settings(off).trigger.thresholds == {"okay_nabu": 0.7}  # unguarded: the model's own
    own = settings.model_copy(update={"wake": settings.wake.model_copy(update={
        "check": settings.wake.check.model_copy(update={"threshold": None})})})
    assert WakeWord.from_settings(own).trigger.thresholds == {"okay_nabu": 0.7}


def test_a_wake_word_in_workshop_noise_below_the_models_threshold_wakes_through_the_check(checked):
    said = espeak("okay nabu").astype(np.float64)
    voiced = np.abs(said) > 0.05 * np.abs(said).max()
    shop = workshop(60.0, level_db=-20.0)[:len(said)]
    # the phrase 8 dB over the workshop (its voiced part, as bench/wake_words.py mixes)
    mix = shop + at_db(said, rms_db(shop) + 8 + rms_db(said) - rms_db(said[voiced]))
    mix = np.clip(mix * min(1.0, 32000 / np.abs(mix).max()), -32768, 32767).astype(np.int16)
    model = WakeWord([("okay_nabu", "micro", 0.7)])
    model.flush()
    peak = max(model.score(f)["okay_nabu"] for f in frames(mix))
    assert 0.1 <= peak < 0.7, peak  # the model alone at its threshold misses it
    n0 = len(checked.confirm.verdicts)
    assert [d.wake_word for d in detect(checked, mix)] == ["okay_nabu"]
    v = checked.confirm.verdicts[-1]
    assert len(checked.confirm.verdicts) == n0 + 1 and v.match and v.snr_db < checked.confirm.checker.quiet_db, v


def test_in_a_noisy_window_a_high_first_stage_score_wakes_whatever_whisper_heard(checked):
    check = checked.confirm.checker
    noisy = Verdict(False, "OK, now move.", False, 12.0, 100.0)
    assert check.decide(noisy, 0.9).accepted and not check.decide(noisy, 0.5).accepted
    quiet = Verdict(False, "OK, now.", False, 55.0, 100.0)
    assert not check.decide(quiet, 0.99).accepted


def test_the_window_snr_tells_a_quiet_room_from_a_workshop():
    said = espeak("okay nabu")[:32000].astype(np.float64)
    room = np.random.default_rng(1).normal(0, 3, len(said))  # a -80 dBFS noise floor
    shop = workshop(2.0, level_db=-20.0)[:len(said)]
    assert window_snr_db((said + room).astype(np.int16)) >= 40
    assert window_snr_db(np.clip(said + shop, -32768, 32767).astype(np.int16)) < 40


def test_a_rejected_detection_is_checked_once_and_the_word_can_wake_right_after(checked):
    audio = np.concatenate([espeak("okay now"), espeak("okay nabu")])
    n0 = len(checked.confirm.verdicts)
    found = detect(checked, audio)
    assert [d.wake_word for d in found] == ["okay_nabu"]  # no refractory time after the rejection
    assert [v.accepted for v in checked.confirm.verdicts[n0:]] == [False, True]  # one check per phrase


def test_a_word_the_check_does_not_name_passes_unchecked(settings):
    ww = WakeWord.from_settings(settings.model_copy(update={"wake": settings.wake.model_copy(update={
        "models": [*settings.wake.models, settings.wake.models[0].model_copy(update={"name": "hey_mycroft"})]})}))
    assert set(ww.confirm.checker.phrases) == {"okay_nabu"}
    found = detect(ww, espeak("hey mycroft"))
    assert [d.wake_word for d in found] == ["hey_mycroft"] and ww.confirm.verdicts == []
    assert ww.trigger.thresholds == {"okay_nabu": 0.1, "hey_mycroft": 0.7}  # an unchecked word keeps its own


def test_no_checked_word_no_second_stage(settings):
    off = settings.model_copy(update={"wake": settings.wake.model_copy(update={
        "check": settings.wake.check.model_copy(update={"models": []})})})
    assert build_check(off, {"okay_nabu": "Okay Nabu"}) is None
    assert WakeWord.from_settings(off).confirm is None


def test_thresholds_reload_without_a_restart_with_the_second_stage(checked):
    said = espeak("okay now")  # okay_nabu's score reaches ~0.8 on it
    n0 = len(checked.confirm.verdicts)
    detect(checked, said)
    assert len(checked.confirm.verdicts) == n0 + 1  # at 0.7: a detection, checked (and rejected)
    checked.set_thresholds([("okay_nabu", 0.95)])  # the check's 0.1 still applies
    assert checked.trigger.thresholds == {"okay_nabu": 0.1}
    checked.set_check_threshold(None)  # wake.check.threshold: null, reloaded: the model's 0.95
    try:
        assert detect(checked, said) == [] and len(checked.confirm.verdicts) == n0 + 1  # at 0.95: nothing to check
    finally:
        checked.set_thresholds([("okay_nabu", 0.7)])
        checked.set_check_threshold(0.1)
    assert checked.trigger.thresholds == {"okay_nabu": 0.1}
    checked.process(np.zeros(FRAME_SAMPLES, np.int16))
    checked.flush()
    assert checked.confirm._pending is None and len(checked._ring) == 0


def test_the_phrase_is_written_the_ways_whisper_writes_it():
    assert spellings("Okay Nabu") == [" OK Nabu", " OK, Nabu.", " Okay Nabu", " Okay, Nabu."]
    assert spellings("hey_mycroft") == [" Hey Mycroft", " Hey, Mycroft."]
    with pytest.raises(ValueError):
        spellings(" , ")
