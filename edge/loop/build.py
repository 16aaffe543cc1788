"""Building the stages from the settings and running the loop over a file or the microphone."""
from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Callable

from edge import events as ev
from edge.config import Settings
from edge.governor import pinned
from edge.loop.pipeline import Pipeline
from edge.loop.stages import Stages, cpu_sets
from edge.stages import asr as asr_mod
from edge.stages.nlu.understand import Understanding
from edge.stages.store import Store
from edge.stages.tts import engine as tts_mod
from edge.stages.vad import SileroVad
from edge.stages.wake import WakeWord

log = logging.getLogger("edge.service")


def preflight(settings: Settings) -> None:
    """Check that every model the settings name exists, before anything is loaded or changed.

    Raises:
        edge.models.manifest.ModelError: a model id is neither installed nor an existing path; the message
            names the settings key.
    """
    from edge.models.manifest import ModelError, resolve

    wanted = [("asr.whisper.model" if settings.asr.engine == "whisper" else "asr.vosk.model",
               settings.asr.whisper.model if settings.asr.engine == "whisper" else settings.asr.vosk.model)]
    if settings.llm.engine != "none":
        wanted.append(("llm.model", settings.llm.model))
    for key, model in wanted:
        if Path(model).expanduser().exists():
            continue
        try:
            resolve(model)
        except (ModelError, FileNotFoundError) as e:
            raise ModelError(f"{key}: {model!r} is neither an existing file or folder nor an installed "
                             f"model ({e}); see 'edge models list'") from None


def governed_factory(governor):
    """A chain factory that asks ``governor`` (:class:`edge.governor.Governor`) before loading a
    llama.cpp step: memory admission (weights + KV cache + pipeline within the 30 % reserve; a
    smaller n_ctx or model when that fits instead, case C11) and the thread plan (at most 70 % of
    the cores, the big cluster on big.LITTLE boards). A refused step raises
    :class:`edge.llm.base.EngineError` with the numbers, before anything loads; the chain moves on."""
    import dataclasses

    from edge.llm.base import EngineError
    from edge.llm.chain import default_factory

    def factory(spec):
        if spec.engine == "llamacpp":
            d = governor.admit(spec.model, spec.n_ctx)
            if not d.admitted:
                raise EngineError(f"memory admission refused {spec.model}: {d.reason}")
            threads = max(1, min(spec.threads, governor.limits().llm_threads or spec.threads))
            if d.degraded:
                log.warning("memory admission: %s", d.reason)
            spec = dataclasses.replace(spec, model=d.model, n_ctx=d.n_ctx, threads=threads)
        return default_factory(spec)

    return factory


def build_governor(settings: Settings):
    from edge.governor import Governor

    return Governor(settings)


def build_llm(settings: Settings, governor=None):
    """The configured LLM: a started :class:`edge.llm.chain.EngineChain` of ``llm.chain`` (when
    empty, the single ``llm.engine``/``llm.model``/``llm.n_ctx`` step), then the grammar path; or
    None for ``llm.engine: none`` without a chain. Each llama.cpp step passes the governor's memory
    admission first. A step that fails to load or to answer its one-token smoke inference is
    skipped (logged); with none left, answers come from the grammar."""
    from edge.llm.chain import build_chain, specs_from_settings

    gov = governor if governor is not None else build_governor(settings)
    if not specs_from_settings(settings) and not settings.llm.chain:
        return None
    if settings.governor.idle_unload_s <= 0:
        return build_chain(settings, factory=governed_factory(gov))
    from edge.llm.idle import IdleEngine

    idle = IdleEngine(gov.idle_unloader(load=lambda: build_chain(settings, factory=governed_factory(gov))))
    idle.unloader.acquire()  # loaded (and smoke-tested) at start; unloaded when idle, reloaded on demand
    return idle


def build_understanding(settings: Settings, store: Store, llm=None) -> Understanding:
    return Understanding(store.items(), llm, max_tokens=settings.llm.max_tokens,
                         temperature=settings.llm.temperature, language=settings.language)


def build_stages(settings: Settings, store: Store, llm=None, governor=None) -> Stages:
    """Load every model the loop needs (wake word, VAD, ASR, LLM, TTS).

    On a big.LITTLE board (:meth:`edge.governor.Governor.cpu_sets`) the wake word and VAD are loaded
    pinned to the audio core and recognition and the LLM to the big cores, so the worker threads
    their runtimes start keep those CPUs."""
    w = settings.wake
    governor = governor if governor is not None else build_governor(settings)
    audio_cpus, turn_cpus = cpu_sets(governor)
    with pinned(audio_cpus):
        wake = WakeWord([(m.name, m.threshold) for m in w.models], w.refractory_ms)
        vad = SileroVad()
    with pinned(turn_cpus):
        asr = asr_mod.create(settings.asr, settings.language)
        if settings.asr.bias:
            asr.set_vocabulary(asr_mod.vocabulary(store.items()))
        understanding = build_understanding(settings, store, llm if llm is not None else build_llm(settings, governor))
    return Stages(wake=wake, vad=vad, asr=asr, understanding=understanding, store=store,
                  tts=tts_mod.create(settings.tts, settings.language), governor=governor)


def run_frames(frames, stages: Stages, settings: Settings, output_dir: Path,
               emit: Callable[[ev.Event], None], speaker=None) -> Pipeline:
    """Drive a pipeline over an iterable of 16 kHz frames until it ends; returns the pipeline.

    On a big.LITTLE board the loop runs pinned to the audio core and each turn to the big cores."""
    p = Pipeline(stages, settings.endpoint, output_dir, emit, speaker=speaker,
                 guard_ms=settings.wake.guard_ms, echo_cancellation=settings.audio.echo_cancellation)
    p.follow_up_ms = settings.dialog.follow_up_window_ms
    p.language = settings.language
    audio_cpus, p.turn_cpus = cpu_sets(stages.governor)
    with pinned(audio_cpus):  # the audio loop (wake word, VAD) on the little core of a big.LITTLE board
        for frame in frames:
            p.feed(frame)
        p.finish()
    return p


def printer(json_lines: bool, also: Path | None = None) -> Callable[[ev.Event], None]:
    """An ``emit`` that writes JSON lines (or readable lines) to stdout and JSON lines to ``also``."""
    fh = open(also, "w", encoding="utf-8") if also else None  # this run's events only

    def emit(e: ev.Event) -> None:
        print(e.to_json() if json_lines else e.human(), flush=True)
        if fh:
            fh.write(e.to_json() + "\n")
            fh.flush()

    return emit


def stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
