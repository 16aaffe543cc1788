"""Building the stages from the settings and running the loop over a file or the microphone."""
from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from drivers.cpu import pinned
from edge import events as ev
from edge.config import LlmStep, Settings
from edge.errors import EdgeError
from edge.llm.loader import build_governor, build_llm
from edge.loop.inventory import with_units
from edge.loop.pipeline import Pipeline
from edge.loop.stages import Stages, cpu_sets
from edge.models.manifest import ModelError
from edge.models.startup import check_configured
from edge.stages import asr as asr_mod
from edge.stages import reply
from edge.stages.asr.base import Recognizer
from edge.stages.asr.worker import AsrWorker
from edge.stages.grounded.answer import GroundedAnswerer
from edge.stages.grounded.tools import Toolbox
from edge.stages.nlu.paraphrase import Paraphraser
from edge.stages.nlu.understand import Understanding
from edge.stages.tts import engine as tts_mod
from edge.stages.vad import SileroVad
from edge.stages.wake import WakeWord
from edge.stages.wake_check import build_check
from edge.stock.store import Store

if TYPE_CHECKING:
    from edge.stages.docs.desk import DocsDesk

log = logging.getLogger("edge.service")


def preflight(settings: Settings) -> Settings:
    """The start-up check of every configured model (:func:`edge.models.startup.check_configured`:
    there, readable, magic and size), before anything is loaded or changed; the settings to run with.

    When only LLM models are bad, each is said on stderr (key, path, check, why) and the settings come
    back without them (``llm.chain`` without those steps; the grammar path when none is left): the
    box starts degraded, its voice path up.

    Raises:
        edge.models.manifest.ModelError: the speech-recognition model is bad; one line per bad model
            (exit 2, which the unit's ``RestartPreventExitStatus`` lists: no restart storm).
    """
    speech, llm = check_configured(settings)
    if speech:
        raise ModelError("the start-up check refused the configured models:\n  "
                         + "\n  ".join(str(p) for p in speech + llm))
    if not llm:
        return settings
    for p in llm:
        stderr(f"warning: {p}")
    bad = {p.key for p in llm}
    smaller = [m for i, m in enumerate(settings.governor.smaller_models) if f"governor.smaller_models[{i}]" not in bad]
    # llm.model missing (e.g. not joined yet) with a usable smaller model: the governor's admission
    # skips it for governor.smaller_models, saying why
    cpu_ok = "llm.model" not in bad or bool(smaller)
    steps = [s for i, s in enumerate(settings.llm.chain) if f"llm.chain[{i}].model" not in bad
             and (cpu_ok or not (s.engine == "llamacpp" and not s.model))]
    if not settings.llm.chain and cpu_ok:
        steps = []  # the single llm.model step (or its smaller model) is fine
    elif not any(s.engine != "grammar" for s in steps):
        steps = [LlmStep(engine="grammar")]
        stderr("warning: starting degraded without the LLM: the grammar path answers the stock commands")
    return settings.model_copy(update={
        "llm": settings.llm.model_copy(update={"chain": steps}),
        "governor": settings.governor.model_copy(update={"smaller_models": smaller})})


def build_understanding(settings: Settings, store: Store, llm=None) -> Understanding:
    """The understanding of ``settings`` over the store's items: templates (with the site's own
    files, ``nlu.intents_dir``), the paraphrase matcher (loaded at its first use, see
    :meth:`edge.stages.nlu.understand.Understanding.warm`) and ``llm``.

    Raises:
        edge.stages.nlu.templates.TemplateError: a site template file is unreadable or wrong.
    """
    n = settings.nlu
    factory = None
    if n.paraphrase and settings.language == "en":
        def factory():
            # the sentence encoder (tokenizers, scipy: ~0.6 s of imports) only when a template missed
            from edge.models.embed import Encoder

            return Paraphraser(Encoder.shared(), language=settings.language, threshold=n.paraphrase_threshold,
                               margin=n.paraphrase_margin)
    return Understanding(store.items(), llm, max_tokens=settings.llm.max_tokens,
                         temperature=settings.llm.temperature, language=settings.language,
                         site_dir=n.intents_dir, paraphraser=factory)


def open_docs(settings: Settings, llm=None) -> DocsDesk | None:
    """The site's documents when an index with documents exists (``edge docs add``), else None; an
    index that cannot be opened is logged and left out (the stock dialog works without it)."""
    if not Path(settings.docs.index_path(settings.store.path)).exists():
        return None  # no documents: their retrieval and encoder modules are not even imported
    from edge.stages.docs.desk import DocsDesk

    try:
        return DocsDesk.open(settings, llm)
    except EdgeError as e:
        log.warning("documents left out: %s", e)
        return None


def build_recognizer(settings: Settings, isolation: str = "inline", cpus: tuple[int, ...] | None = None) -> Recognizer:
    """The configured recognizer: in this process (``isolation`` ``inline``) or in a worker process
    recycled when it leaks (``process``: :class:`edge.stages.asr.worker.AsrWorker` with the memory
    watch of ``asr.worker``, its children on ``cpus``).

    Raises:
        FileNotFoundError: the model is not installed (inline).
        edge.stages.asr.worker.AsrWorkerError: the worker did not start (process).
    """
    if isolation == "process":
        return AsrWorker.from_settings(settings.asr, settings.language, cpus=cpus)
    return asr_mod.create(settings.asr, settings.language)


def build_stages(settings: Settings, store: Store, llm=None, governor=None, isolation: str | None = None) -> Stages:
    """Load every model the loop needs (wake word, VAD, ASR, LLM, TTS). ``isolation``: where the
    recognizer runs (:func:`build_recognizer`); None = ``asr.worker.loop`` (``edge wyoming`` gives
    ``asr.worker.wyoming``).

    On a big.LITTLE board (:meth:`edge.governor.governor.Governor.cpu_sets`) the wake word and VAD are loaded
    pinned to the audio core and recognition and the LLM to the big cores, so the worker threads
    their runtimes start keep those CPUs."""
    governor = governor if governor is not None else build_governor(settings)
    audio_cpus, turn_cpus = cpu_sets(governor)
    with pinned(audio_cpus):
        wake = WakeWord.from_settings(settings, check=False)  # its second stage shares the recognizer's model
        vad = SileroVad(normalize=settings.endpoint.vad_adaptive)
    with pinned(turn_cpus):
        asr = build_recognizer(settings, isolation or settings.asr.worker.loop, turn_cpus)
        checker = build_check(settings, wake.phrases, asr)
        if checker is not None:
            wake.confirm_with(checker, settings.wake.check.hold_ms)
        if settings.asr.bias:
            items = store.items()
            asr.set_vocabulary(with_units(asr_mod.vocabulary(items), items))
        understanding = build_understanding(settings, store, llm if llm is not None else build_llm(settings, governor, lazy=True))
        understanding.warm()  # the paraphrase encoder loads now, not at the first paraphrased turn
        understanding.docs = open_docs(settings, understanding.llm)
    stages = Stages(wake=wake, vad=vad, asr=asr, understanding=understanding, store=store, docs=understanding.docs,
                    tts=tts_mod.create(settings.tts, settings.language), governor=governor)
    attach_grounded(settings, understanding, lambda: stages.store)
    return stages


def attach_grounded(settings: Settings, und: Understanding, store: Store | Callable[[], Store]) -> None:
    """Give ``und`` its grounded answers (:mod:`edge.stages.grounded`) over ``store`` (or the function
    returning the store in use) and ``und.docs`` as they are at each question; nothing when
    ``llm.grounded`` is off or there is no LLM."""
    if not settings.llm.grounded or und.llm is None:
        return

    def docs(question: str) -> tuple[str, bool, str | None]:
        desk = und.docs
        if desk is None:
            return reply.text("no_docs", settings.language), False, None
        text = desk.answer(question)
        last = desk.last
        source = last.sources[0].title if last is not None and last.sources else None
        return text, bool(last is not None and last.found), source

    und.grounded = GroundedAnswerer(und.llm, Toolbox(store, docs, settings.language), und.llm_shortlist,
                                    settings.language)


def close_stages(stages: Stages) -> None:
    """Stop what runs beside the process: the speech engine's worker and a recognizer worker."""
    stages.tts.close()
    if isinstance(stages.asr, AsrWorker):
        stages.asr.close()


def run_frames(frames, stages: Stages, settings: Settings, output_dir: Path,
               emit: Callable[[ev.Event], None], speaker=None, lost_audio: Callable[[], int] | None = None) -> Pipeline:
    """Drive a pipeline over an iterable of 16 kHz frames until it ends; returns the pipeline.
    ``lost_audio``: the chunks the frame source dropped so far (a live capture's ring overflows); a
    turn during which it grew is not acted on, the box asks for the command again.

    On a big.LITTLE board the loop runs pinned to the audio core and each turn to the big cores."""
    p = Pipeline(stages, settings.endpoint, output_dir, emit, speaker=speaker,
                 guard_ms=settings.wake.guard_ms, echo_cancellation=settings.audio.echo_cancellation)
    p.follow_up_ms = settings.dialog.follow_up_window_ms
    p.vocabulary.bias = settings.asr.bias
    p.language = settings.language
    if lost_audio is not None:
        p.lost_audio = lost_audio
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
