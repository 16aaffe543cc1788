"""The wake word with its second stage (edge.stages.wake.Confirm + edge.stages.wake_check.WhisperCheck)
replayed over the first stage's stored scores and the same audio, for bench/wake_words.py.

A configuration is a first-stage model, its threshold, and either no check or Whisper's check of
the phrase (optionally skipped above a score). Each is replayed frame by frame exactly as
:meth:`edge.stages.wake.WakeWord.process` runs it: Trigger (2 s refractory), the hold until the
score stops rising, the check on the audio window ending at that frame.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from edge.stages.wake import Confirm, Trigger

FRAME = 1280
REFRACTORY_FRAMES = 25  # 2 s, the default wake.refractory_ms
HOLD_FRAMES = 6  # 480 ms, the default wake.check.hold_ms


@dataclass(frozen=True)
class Config:
    """``model``: ``engine/name`` of the stored scores; ``threshold``: the first stage's;
    ``check``: Whisper's check after it; ``alone``: in a window noisier than the check's
    ``quiet_db`` a score >= its ``alone_above`` is a detection whatever Whisper heard (False:
    Whisper decides everywhere)."""

    model: str
    threshold: float
    check: bool
    alone: bool = True
    check_model: str = "whisper-tiny-en"

    @property
    def label(self) -> str:
        if not self.check:
            return f"{self.model} @{self.threshold:g}"
        by = "" if self.check_model == "whisper-tiny-en" else f" ({self.check_model})"
        return f"{self.model} @{self.threshold:g} + whisper check{by}" + ("" if self.alone else " (whisper alone)")


class Counting:
    """A checker that counts the checks it passes on and adds up their CPU time (the verdict's
    ``cpu_ms``). Configurations that check the same window share one verdict (``memo``): the
    same audio gives the same verdict, and each configuration is charged its CPU time."""

    def __init__(self, checker, memo: dict, alone: bool):
        self.checker = checker
        self.alone = alone
        self.window_samples = checker.window_samples
        self.phrases = checker.phrases
        self.memo = memo
        self.n = 0
        self.cpu_s = 0.0
        self.accepted = 0

    def check(self, name, audio, score):
        key = (id(self.checker), name, hashlib.blake2b(np.ascontiguousarray(audio).tobytes(), digest_size=16).digest())
        v = self.memo.get(key)
        if v is None:
            v = self.memo[key] = self.checker.hear(name, audio)
        v = self.checker.decide(v, score) if self.alone else v
        self.cpu_s += v.cpu_ms / 1000
        self.n += 1
        self.accepted += v.accepted
        return v


def replay(cfg: Config, scores: np.ndarray, audio: np.ndarray, checker: Counting | None) -> list[int]:
    """Frames at which ``cfg`` detects its word in ``audio`` (int16, 16 kHz) whose first-stage scores
    (one per 80 ms frame, from a flushed state) are ``scores``."""
    word = cfg.model.split("/", 1)[1]
    trigger = Trigger({word: cfg.threshold}, REFRACTORY_FRAMES)
    gate = Confirm(trigger, checker, hold_frames=HOLD_FRAMES) if cfg.check else None
    win = checker.window_samples if checker is not None else 0
    hits = []
    for i, s in enumerate(scores):
        row = {word: float(s)}
        if gate is None:
            det = trigger.step(row)
        else:
            end = (i + 1) * FRAME
            det = gate.step(row, lambda e=end: audio[max(0, e - win):e])
        if det is not None:
            hits.append(i)
    return hits


def count_per_hour(hits: list[int], hours: float) -> float:
    return round(len(hits) / hours, 2)


def detected(hits: list[int], start: int, end: int, rate: int = 16000) -> bool:
    """A detection between a clip's start and 1.5 s after its end (samples)."""
    a, b = start // FRAME, (end + int(1.5 * rate)) // FRAME + 1
    return any(a <= h < b for h in hits)


class Cascade:
    """Collects every :class:`Config` over the benchmark's inputs; one checker per Whisper model
    (int8, one thread), loaded only when a configuration checks with it."""

    def __init__(self, configs: list[Config]):
        self.configs = list(configs)
        self.checkers: dict[str, object] = {}
        for name in dict.fromkeys(c.check_model for c in self.configs if c.check):
            from faster_whisper import WhisperModel

            from edge.stages.asr.base import model_dir
            from edge.stages.wake_check import WhisperCheck

            model = WhisperModel(str(model_dir(name)), device="cpu", compute_type="int8", cpu_threads=1)
            self.checkers[name] = WhisperCheck(model, {"okay_nabu": "okay nabu", "hey_mycroft": "hey mycroft"})
        memo: dict = {}
        self.counters = {c: Counting(self.checkers[c.check_model], memo, c.alone) if c.check else None
                         for c in self.configs}
        self.hours: dict[str, dict[Config, dict]] = {}
        self.snr: dict[int, dict[Config, list[bool]]] = {}

    def hour(self, key: str, scores: dict[str, np.ndarray], audio: np.ndarray, hours: float) -> None:
        """False accepts and checks per hour in the noise ``key`` (no wake word in it)."""
        out = self.hours.setdefault(key, {})
        for c in self.configs:
            k = self.counters[c]
            n0, cpu0 = (k.n, k.cpu_s) if k else (0, 0.0)
            hits = replay(c, scores[c.model], audio, k)
            out[c] = {"fa_per_hour": count_per_hour(hits, hours),
                      "checks_per_hour": round(((k.n - n0) if k else 0) / hours, 1),
                      "check_cpu_s": (k.cpu_s - cpu0) if k else 0.0, "frames": len(scores[c.model])}

    def noisy(self, snr: int, scores: dict[str, np.ndarray], audio: np.ndarray, where: list[tuple],
              splits: list[str | None]) -> None:
        """Recall on the positive clips mixed into a noise at ``snr`` dB; ``splits``: each clip's
        ``tune`` / ``test`` (the held-out half) / None."""
        for c in self.configs:
            hits = replay(c, scores[c.model], audio, self.counters[c])
            word = c.model.split("/", 1)[1]
            for (w, st, en), split in zip(where, splits, strict=True):
                if w == word:
                    self.snr.setdefault(snr, {}).setdefault(c, []).append((detected(hits, st, en), split))

    def result(self, clips: list[dict], clean_scores: list[dict]) -> dict:
        """``{label: row}`` for the JSON."""
        out = {}
        for c in self.configs:
            word = c.model.split("/", 1)[1]
            k = self.counters[c]
            fired = {i: bool(replay(c, clean_scores[i][c.model], cl["audio"], k)) for i, cl in enumerate(clips)
                     if cl["word"] == word or cl["word"] is None}
            mine = [i for i, cl in enumerate(clips) if cl["word"] == word]
            confus = [i for i, cl in enumerate(clips) if cl["word"] is None and cl["kind"].startswith("own")]
            okay_now = [i for i in confus if clips[i]["name"].endswith("okay now")]
            neg_real = [i for i, cl in enumerate(clips) if cl["word"] is None and cl["kind"].startswith("shared")]
            row = {"model": c.model, "threshold": c.threshold, "check": c.check,
                   "alone_above": k.checker.alone_above if k is not None and c.alone else None,
                   "check_model": c.check_model if c.check else None,
                   "recall_clean": round(float(np.mean([fired[i] for i in mine])), 3),
                   **{f"recall_clean_{kind.split()[-1]}": round(float(np.mean(v)), 3) for kind in ("own espeak-ng", "own piper")
                      if (v := [fired[i] for i in mine if clips[i]["kind"] == kind])},
                   **{f"recall_{snr}db": round(float(np.mean([d for d, _ in v[c]])), 3)
                      for snr, v in sorted(self.snr.items(), reverse=True)},
                   **{f"recall_{snr}db_test": round(float(np.mean(t)), 3) for snr, v in sorted(self.snr.items(), reverse=True)
                      if (t := [d for d, split in v[c] if split == "test"])},
                   "test_clips_in_noise": sum(split == "test" for _, split in next(iter(self.snr.values()), {}).get(c, [])),
                   **{f"fa_per_hour_{key}": v[c]["fa_per_hour"] for key, v in self.hours.items()},
                   "fires_on_confusables": f"{sum(fired[i] for i in confus)}/{len(confus)}",
                   "fires_on_okay_now": f"{sum(fired[i] for i in okay_now)}/{len(okay_now)}",
                   "fires_on_shared_negatives": int(sum(fired[i] for i in neg_real))}
            if k is not None:
                cpu = sum(v[c]["check_cpu_s"] for v in self.hours.values())
                frames = sum(v[c]["frames"] for v in self.hours.values())
                row |= {**{f"checks_per_hour_{key}": v[c]["checks_per_hour"] for key, v in self.hours.items()},
                        "checks_in_all": k.n, "ms_per_check": round(1000 * k.cpu_s / max(1, k.n), 1),
                        "check_ms_per_frame_in_the_noise_hours": round(1000 * cpu / max(1, frames), 3)}
            out[c.label] = row
        return out
