"""The voice loop per stage over recorded sessions: wake-word CPU per frame, recognition real-time
factor, the pipeline's ``turn_end`` latencies for the grammar and the LLM path, and the whole-loop
real-time factor per session (see the package doc, point 5)."""
from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable

from drivers.audio.wavfile import wav_frames
from drivers.sensors.procinfo import peak_rss_bytes
from edge import events as ev
from edge.loop.build import build_stages, run_frames
from edge.loop.pipeline import FRAME_MS
from edge.loop.stages import Stages
from edge.ops.bench.defaults import DEFAULT_LLM_TURNS, LLM_TURN_TEXTS, BenchArgumentError, check_llm_turns
from edge.ops.bench.stats import MIB, median, percentile, rounded
from edge.stages import dialog
from edge.stock.store import Store

#: The per-turn figures summarised per path (grammar, llm).
STAGES = ("asr_rtf", "endpoint_to_transcript_ms", "transcript_to_intent_ms", "intent_to_first_audio_ms", "total_ms")
PATHS = ("grammar", "llm")


class _TimedWake:
    """Wraps a :class:`edge.stages.wake.WakeWord`: CPU time (``time.process_time``, s) of every
    :meth:`process` call is appended to :attr:`cpu_s`; everything else is the wrapped object's."""

    def __init__(self, wake):
        self._wake = wake
        self.cpu_s: list[float] = []

    def process(self, frame):
        c = time.process_time()
        out = self._wake.process(frame)
        self.cpu_s.append(time.process_time() - c)
        return out

    def __getattr__(self, name):
        return getattr(self._wake, name)


class _RecordingAsr:
    """Wraps a recognizer; :attr:`last` is the :class:`edge.stages.asr.base.Recognition` of the last
    :meth:`finish` (or of its :meth:`recheck`)."""

    def __init__(self, asr):
        self._asr = asr
        self.last = None

    def finish(self):
        self.last = self._asr.finish()
        return self.last

    def recheck(self):
        rec = self._asr.recheck()
        self.last = rec or self.last
        return rec

    def __getattr__(self, name):
        return getattr(self._asr, name)


def _gen_figures(stats) -> dict:
    if stats is None:
        return {}
    return {"llm_ttft_ms": rounded(stats.ttft_ms, 1), "llm_tokens_per_s": rounded(stats.tokens_per_s),
            "llm_completion_tokens": stats.completion_tokens}


def _path_summary(turns: list[dict]) -> dict:
    out = {}
    for k in STAGES:
        nd = 3 if k == "asr_rtf" else 1
        xs = [t[k] for t in turns if t.get(k) is not None]
        out[k] = {"median": rounded(median(xs), nd), "mean": rounded(statistics.fmean(xs), nd) if xs else None,
                  "n": len(xs)}
    out["turns"] = len(turns)
    return out


def check_sessions(sessions_dir: Path) -> tuple[list[Path], Path]:
    """The session WAVs (sorted) and ``inventory.csv`` of ``sessions_dir``.

    Raises:
        BenchArgumentError: no WAV or no inventory; the message names the folder and the fix.
    """
    sessions_dir = Path(sessions_dir)
    wavs = sorted(sessions_dir.glob("*.wav"))
    inventory = sessions_dir / "inventory.csv"
    if not wavs or not inventory.is_file():
        raise BenchArgumentError(
            f"{sessions_dir}: needs session *.wav files and inventory.csv (found {len(wavs)} WAVs, inventory "
            f"{'present' if inventory.is_file() else 'missing'}); pass the shared sessions folder with --sessions DIR "
            f"or skip the voice loop with --no-loop")
    return wavs, inventory


def _fresh_store(path: Path, inventory: Path) -> Store:
    store = Store(path)
    store.import_csv(inventory)
    return store


class _TurnRows:
    """The pipeline's event sink for one session: one row of figures per turn id."""

    def __init__(self, session: str, asr: _RecordingAsr, stages: Stages):
        self.session = session
        self.asr = asr
        self.understanding = stages.understanding
        self.rows: dict[str, dict] = {}

    def __call__(self, e: ev.Event) -> None:
        row = self.rows.setdefault(e.turn_id, {"session": self.session, "origin": "audio"})
        if isinstance(e, ev.Transcript) and self.asr.last is not None:
            row["asr_rtf"] = rounded(self.asr.last.real_time_factor, 3)
            row["text"] = e.text
        elif isinstance(e, ev.IntentEvent):
            row["source"], row["intent"] = e.source, e.intent
            if e.source == "llm":
                row.update(_gen_figures(self.understanding.last_generation))
        elif isinstance(e, ev.TurnEnd):
            lat = e.latency_ms
            row.update({"endpoint_to_transcript_ms": lat.get("endpoint_to_transcript_ms"),
                        "transcript_to_intent_ms": lat.get("transcript_to_intent_ms"),
                        "intent_to_first_audio_ms": lat.get("intent_to_reply_audio_ms"),
                        "total_ms": lat.get("total_ms")})

    def done(self) -> list[dict]:
        """The rows of the turns that ended with an intent."""
        return [r for r in self.rows.values() if r.get("source") and r.get("total_ms") is not None]


def _measure_session(wav: Path, stages: Stages, settings, tmp: Path, inventory: Path) -> tuple[dict, list[dict]]:
    """Run the loop over one session WAV with a fresh store; ``(session figures, turn rows)``.
    ``stages.wake`` and ``stages.asr`` are the timing wrappers of :func:`measure_loop`."""
    wake, asr = stages.wake, stages.asr
    frames = list(wav_frames(wav))
    audio_s = len(frames) * FRAME_MS / 1000
    store = _fresh_store(tmp / f"{wav.stem}.db", inventory)
    stages.store = store
    wake.flush()
    n0 = len(wake.cpu_s)
    rows = _TurnRows(wav.stem, asr, stages)
    w0, c0 = time.perf_counter(), time.process_time()
    run_frames(frames, stages, settings, tmp, rows)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    done = rows.done()
    cpu_frames = wake.cpu_s[n0:]
    store.close()
    return {"session": wav.stem, "audio_s": round(audio_s, 3), "wall_s": round(wall, 3),
            "cpu_s": round(cpu, 3), "rtf": round(wall / audio_s, 3) if audio_s else None,
            "frames": len(cpu_frames),
            "wake_cpu_ms_per_frame": rounded(1000 * statistics.fmean(cpu_frames), 3) if cpu_frames else None,
            "turns": len(done)}, done


def _text_turns(stages: Stages, inventory: Path, tmp: Path, llm_turns: int,
                log: Callable[[str], None]) -> list[dict]:
    """The first ``llm_turns`` of :data:`LLM_TURN_TEXTS` from text: understand, act, synthesize."""
    und = stages.understanding
    store = _fresh_store(tmp / "text-turns.db", inventory)
    stages.store = store  # what understanding reads (the grounded tools, the guards) is this store too
    turns = []
    for i, text in enumerate(LLM_TURN_TEXTS[:llm_turns]):
        t1 = time.perf_counter()
        intent = und.understand(text)
        t2 = time.perf_counter()
        if intent is None:
            continue
        outcome = dialog.act(intent, store, text, f"bench-text-{i}")
        t3 = time.perf_counter()
        stages.tts.synthesize(outcome.text, tmp / f"text-{i}.wav")
        t4 = time.perf_counter()
        row = {"session": None, "origin": "text", "text": text, "source": intent.source,
               "intent": intent.intent, "asr_rtf": None, "endpoint_to_transcript_ms": None,
               "transcript_to_intent_ms": round(1000 * (t2 - t1), 1),
               "intent_to_first_audio_ms": round(1000 * (t4 - t3), 1), "total_ms": None}
        if intent.source == "llm":
            row.update(_gen_figures(und.last_generation))
        turns.append(row)
        log(f"text turn {text!r}: {intent.source}, {row['transcript_to_intent_ms']} ms to intent")
    store.close()
    return turns


def _wake_summary(cpu_s: list[float]) -> dict:
    cpu_ms = [1000 * c for c in cpu_s]
    return {
        "mean": rounded(statistics.fmean(cpu_ms), 3) if cpu_ms else None, "p50": rounded(percentile(cpu_ms, 0.5), 3),
        "p95": rounded(percentile(cpu_ms, 0.95), 3), "frames": len(cpu_ms),
        "core_fraction": rounded(statistics.fmean(cpu_ms) / FRAME_MS, 4) if cpu_ms else None,
        "note": "process CPU time (all threads) per 80 ms frame; core_fraction = mean / 80 ms"}


def measure_loop(settings, sessions_dir: Path, llm_turns: int = DEFAULT_LLM_TURNS,
                 log: Callable[[str], None] = lambda s: None) -> dict:
    """The voice loop per stage over every ``*.wav`` of ``sessions_dir`` (with its ``inventory.csv``).

    Args:
        settings: validated :class:`edge.config.Settings`; ``store.path`` and ``output_dir`` are
            replaced by temporary ones.
        sessions_dir: folder of 16 kHz session WAVs and ``inventory.csv``.
        llm_turns: extra LLM-path turns from text (:data:`LLM_TURN_TEXTS`), 0 for none.
    Returns:
        ``{"sessions", "turns", "wake_cpu_ms_per_frame", "paths": {"grammar", "llm"}, "rtf_overall", ...}``.
    Raises:
        BenchArgumentError: no sessions or no ``inventory.csv`` (names ``--sessions``).
        ValueError: ``llm_turns`` outside 0..len(LLM_TURN_TEXTS).
    """
    sessions_dir = Path(sessions_dir)
    wavs, inventory = check_sessions(sessions_dir)
    check_llm_turns(llm_turns)
    tmp = Path(tempfile.mkdtemp(prefix="edge-bench-"))
    settings = settings.model_copy(update={
        "store": settings.store.model_copy(update={"path": tmp / "boot.db"}), "output_dir": tmp})
    boot = _fresh_store(tmp / "boot.db", inventory)
    t = time.perf_counter()
    log("loading the voice loop's models")
    stages = build_stages(settings, boot)
    load_s = time.perf_counter() - t
    wake = _TimedWake(stages.wake)
    stages.wake, stages.asr = wake, _RecordingAsr(stages.asr)
    sessions, turns = [], []
    for wav in wavs:
        session, done = _measure_session(wav, stages, settings, tmp, inventory)
        sessions.append(session)
        turns.extend(done)
        log(f"session {wav.stem}: RTF {session['rtf']}, {len(done)} turn(s)")
    llm = stages.understanding.llm
    if llm is not None:
        turns.extend(_text_turns(stages, inventory, tmp, llm_turns, log))
    peak = peak_rss_bytes()
    close = getattr(llm, "close", None)
    if close:
        close()
    boot.close()
    total_audio = sum(s["audio_s"] for s in sessions)
    total_wall = sum(s["wall_s"] for s in sessions)
    return {
        "sessions_dir": str(sessions_dir),
        "asr": settings.asr.engine, "llm": settings.llm.model if settings.llm.engine != "none" else None,
        "model_load_s": round(load_s, 2),
        "total_audio_s": round(total_audio, 2), "total_wall_s": round(total_wall, 2),
        "rtf_overall": round(total_wall / total_audio, 3) if total_audio else None,
        "wake_cpu_ms_per_frame": _wake_summary(wake.cpu_s),
        # "grammar": the deterministic path, whose intents say source "template" (Mandarin: "grammar")
        "paths": {p: _path_summary([t for t in turns if ("llm" if t.get("source") == "llm" else "grammar") == p])
                  for p in PATHS},
        "peak_rss_mib": rounded(peak / MIB, 1) if peak else None,
        "sessions": sessions,
        "turns": turns,
    }
