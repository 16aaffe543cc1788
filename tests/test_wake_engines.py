"""Both wake-word engines behind edge.stages.wake.WakeWord, on the shared real recordings: the
80 ms frames reach microWakeWord in its 10 ms feature steps unchanged, its state is reset between
streams (reloaded: a streaming TFLite model keeps its state inside the interpreter), thresholds
change without reloading, and models of both engines run side by side."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from drivers.audio import wav_frames
from edge.stages.wake import WakeWord

REAL = Path(__file__).resolve().parents[2] / "shared" / "audio" / "real"
SILENCE = np.zeros(1280, np.int16)


def frames(name: str, pad: int = 12) -> list[np.ndarray]:
    return [SILENCE] * pad + list(wav_frames(REAL / name)) + [SILENCE] * pad


def test_the_frames_reach_microwakeword_as_its_own_10ms_steps_would():
    """The engine's per-frame score is the highest of pymicro-wakeword's own sliding-window means
    over the frame's 8 feature steps: fed the whole recording at once, the library gives the same peak."""
    from pymicro_wakeword import MicroWakeWord, MicroWakeWordFeatures, Model

    audio = np.concatenate(frames("hey_mycroft_test.wav"))
    ref, feats = MicroWakeWord.from_builtin(Model.HEY_MYCROFT), MicroWakeWordFeatures()
    probs = [p for f in feats.process_streaming(audio.tobytes()) if (p := ref.process_streaming_prob(f)) is not None]
    ww = WakeWord([("hey_mycroft", "micro", 0.95)])
    ours = [ww.score(audio[i:i + 1280])["hey_mycroft"] for i in range(0, len(audio), 1280)]
    assert max(ours) == pytest.approx(max(probs), abs=1e-6) and max(ours) > 0.95


def test_a_micro_model_fires_once_and_its_lingering_score_is_the_refractory_times_business():
    """microWakeWord's score stays high for a while after the word (measured here: ~1 s of frames
    over its cutoff): without a refractory time that is several detections; with the default 2 s, one."""
    clip = frames("hey_mycroft_test.wav", pad=25)
    loose = WakeWord([("hey_mycroft", "micro", 0.95)], refractory_ms=0)
    assert sum(loose.process(f) is not None for f in clip) > 1
    ww = WakeWord([("hey_mycroft", "micro", 0.95)], refractory_ms=2000)
    assert [d.wake_word for f in clip if (d := ww.process(f))] == ["hey_mycroft"]


def test_flush_between_turns_resets_microwakewords_state():
    """Right after a detection, a flush leaves nothing of the word: silence scores 0 at once, where
    without it the following silent frames still score over the cutoff."""
    clip = frames("hey_mycroft_test.wav", pad=12)
    stale = WakeWord([("hey_mycroft", "micro", 0.95)], refractory_ms=0)
    at = next(i for i, f in enumerate(clip) if stale.process(f))
    fresh = WakeWord([("hey_mycroft", "micro", 0.95)], refractory_ms=0)
    for f in clip[:at + 1]:
        fresh.process(f)
    fresh.flush()
    without = [stale.score(SILENCE)["hey_mycroft"] for _ in range(6)]
    after = [fresh.score(SILENCE)["hey_mycroft"] for _ in range(25)]
    assert max(without) > 0.95, without  # the control: the word lingers in the model's state
    assert max(after) < 0.05, after
    # and the next stream's word is detected again, the refractory time forgotten too
    assert [d.wake_word for f in clip if (d := fresh.process(f))][:1] == ["hey_mycroft"]


def test_micro_thresholds_change_without_reloading_the_model():
    clip = frames("hey_mycroft_test.wav")
    ww = WakeWord([("hey_mycroft", "micro", 0.95)])
    engine = ww.engine_for("hey_mycroft")
    peak = max(ww.score(f)["hey_mycroft"] for f in clip)
    ww.flush()
    ww.set_thresholds([("hey_mycroft", min(0.999, peak + 0.001))])
    assert not any(ww.process(f) for f in clip)
    ww.flush()
    ww.set_thresholds([("hey_mycroft", "micro", 0.9)])
    assert [d.wake_word for f in clip if (d := ww.process(f))] == ["hey_mycroft"]
    assert ww.engine_for("hey_mycroft") is engine
    with pytest.raises(ValueError, match="another engine needs a restart"):
        ww.set_thresholds([("hey_mycroft", "openwakeword", 0.5)])


def test_models_of_both_engines_run_side_by_side_each_on_its_own_word():
    ww = WakeWord([("hey_mycroft", "micro", 0.95), ("alexa", "openwakeword", 0.5)])
    assert ww.engines == {"hey_mycroft": "micro", "alexa": "openwakeword"}
    got = {}
    for clip in ("hey_mycroft_test.wav", "alexa_test.wav", "negative_reference.wav"):
        ww.flush()
        got[clip] = [d.wake_word for f in frames(clip) if (d := ww.process(f))]
    assert got == {"hey_mycroft_test.wav": ["hey_mycroft"], "alexa_test.wav": ["alexa"], "negative_reference.wav": []}


def test_a_micro_model_without_a_threshold_uses_its_own_cutoff():
    ww = WakeWord([("okay_nabu", "micro", None), ("hey_mycroft", "micro", None)])
    assert ww.trigger.thresholds == {"okay_nabu": 0.85, "hey_mycroft": 0.95}  # pymicro-wakeword 2.5.0's JSONs
