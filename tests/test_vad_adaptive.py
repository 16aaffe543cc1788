"""Low and distant voices: the level is normalised before the VAD and the end of an utterance has
hysteresis, so a quiet far-field speaker is not cut before the end; steady noise never becomes
speech, and a constant background talker still ends at the hard cap. Real Silero VAD, real
espeak-ng speech, noise from a seeded generator."""
import numpy as np
import pytest
from synth import speech

from edge.stages.vad import FRAME_MS, Endpoint, Endpointer, LevelNormalizer, SileroVad

FRAME = 1280
COMMAND = "we took twelve boxes of masks from shelf B"


def _at(samples: np.ndarray, dbfs: float) -> np.ndarray:
    """``samples`` scaled so their loudest 80 ms frame has RMS ``dbfs``."""
    x = samples.astype(np.float32)
    n = len(x) // FRAME * FRAME
    peak = np.sqrt((x[:n].reshape(-1, FRAME) ** 2).mean(axis=1)).max()
    return x * (32768 * 10 ** (dbfs / 20) / peak)


def _noise(n: int, dbfs: float, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(0, 32768 * 10 ** (dbfs / 20), n).astype(np.float32)


def _run(audio: np.ndarray, *, adaptive: bool, release: float, max_ms: int = 10000) -> tuple[Endpointer, int]:
    """Frames of ``audio`` through Silero and an endpointer (no wake phrase); the endpointer and the
    number of frames it took to reach END or NO_SPEECH (or all of them)."""
    vad = SileroVad(normalize=adaptive)
    ep = Endpointer(0.5, 700, max_ms, 5000, after_wake=False, release=release)
    pcm = np.clip(audio, -32768, 32767).astype(np.int16)
    for i in range(len(pcm) // FRAME):
        state = ep.push(pcm[i * FRAME:(i + 1) * FRAME], vad.probability(pcm[i * FRAME:(i + 1) * FRAME]))
        if state in (Endpoint.END, Endpoint.NO_SPEECH):
            return ep, i + 1
    return ep, len(pcm) // FRAME


@pytest.fixture(scope="module")
def quiet_far_command():
    """0.5 s of room noise, the command with its loudest frame at −42 dBFS and a short echo, 2 s of
    noise; the noise floor at −60 dBFS. Returns (audio, the frame index where speech truly ends)."""
    cmd = _at(speech(COMMAND), -42.0)
    echo = np.zeros(len(cmd) + 1600, np.float32)
    echo[:len(cmd)] += cmd
    echo[1600:] += 0.35 * cmd  # a 100 ms reflection: far-field in a small room
    lead, tail = 8000, 32000
    audio = _noise(lead + len(echo) + tail, -60.0)
    audio[lead:lead + len(echo)] += echo
    return audio, (lead + len(cmd)) // FRAME


def test_a_quiet_distant_speaker_is_heard_to_the_end(quiet_far_command):
    audio, true_end = quiet_far_command
    ep, frames = _run(audio, adaptive=True, release=0.15)
    assert ep.state is Endpoint.END and ep.reason == "vad_tail"
    # the utterance ends in the trailing silence, after the last word, and keeps all of it
    assert frames > true_end
    assert len(ep.frames) * FRAME_MS >= (true_end - 8000 // FRAME) * FRAME_MS - 160


def test_without_normalisation_the_same_speaker_is_cut(quiet_far_command):
    # the figure the adaptive default is measured against: one fixed threshold loses the command
    audio, true_end = quiet_far_command
    ep, frames = _run(audio, adaptive=False, release=0.0)
    assert ep.state is Endpoint.NO_SPEECH or frames < true_end


@pytest.mark.parametrize("dbfs", [-70.0, -50.0, -40.0])
def test_steady_noise_never_becomes_speech(dbfs):
    ep, _ = _run(_noise(16000 * 6, dbfs, seed=1), adaptive=True, release=0.15)
    assert ep.state is Endpoint.NO_SPEECH


def test_a_constant_background_talker_ends_at_the_hard_cap():
    talk = np.concatenate([_at(speech(COMMAND), -35.0)] * 4)  # ~10 s of speech without a pause
    ep, _ = _run(talk + _noise(len(talk), -60.0), adaptive=True, release=0.15, max_ms=4000)
    assert ep.state is Endpoint.END and ep.reason == "max_length"


def test_the_normaliser_never_attenuates_and_never_lifts_the_floor_past_its_ceiling():
    norm = LevelNormalizer()
    loud = _at(speech(COMMAND), -6.0).astype(np.int16)[:FRAME]
    assert np.array_equal(norm(loud), loud) and norm.gain == 1.0
    norm.reset()
    for _ in range(30):  # a noise floor at −70 dBFS may be lifted only to −50
        norm(_noise(FRAME, -70.0).astype(np.int16))
    assert 1.0 < norm.gain <= 10 ** (20 / 20) * 1.05
