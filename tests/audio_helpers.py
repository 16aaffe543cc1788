"""Helpers shared by the audio case modules (C01 rates and formats, C02 chunk sizes)."""
from __future__ import annotations

import numpy as np

from drivers.audio import FRAME_SAMPLES, FrameConverter


def convert_in_chunks(samples: np.ndarray, rate: int, chunk: int) -> list[np.ndarray]:
    """Feed ``samples`` ``(n, channels)`` to a fresh converter ``chunk`` samples at a time."""
    conv = FrameConverter(rate, samples.shape[1])
    frames: list[np.ndarray] = []
    for i in range(0, len(samples), chunk):
        frames += conv.push(samples[i:i + chunk])
    frames += conv.flush()
    return frames


def assert_pipeline_frames(frames: list[np.ndarray]) -> None:
    """Every frame is a ``(1280,)`` int16 array."""
    assert frames, "no frames"
    for i, f in enumerate(frames):
        assert isinstance(f, np.ndarray), f"frame {i} is a {type(f).__name__}"
        assert f.shape == (FRAME_SAMPLES,), f"frame {i} has shape {f.shape}"
        assert f.dtype == np.int16, f"frame {i} has dtype {f.dtype}"


def turn_signature(events) -> list[tuple]:
    """The parts of a turn's events that depend only on the audio: wake (t_ms, word, score),
    transcript (t_ms, text), intent (t_ms, intent, slots), no_speech/turn_end (t_ms); turn ids and
    latencies (wall-clock) left out."""
    sig = []
    for e in events:
        if e.type == "wake":
            sig.append(("wake", e.t_ms, e.wake_word, e.score))
        elif e.type == "transcript":
            sig.append(("transcript", e.t_ms, e.text))
        elif e.type == "intent":
            sig.append(("intent", e.t_ms, e.intent, tuple(sorted(e.slots.items()))))
        elif e.type in ("no_speech", "turn_end", "error"):
            sig.append((e.type, e.t_ms))
    return sig
