"""Loading the LLM under the resource governor: the one place where a llama.cpp step is admitted
and built, for the start of the service, for the fallback chain's later loads and for the reload
after an idle unload.

A llama.cpp step (:func:`admit_step`) first passes the governor's memory admission (weights + KV
cache + pipeline within the 30 % reserve; a smaller n_ctx or a smaller model when only that fits,
case C11) and gets its threads capped by the governor's thread plan (at most 70 % of the cores,
the big cluster on big.LITTLE boards); only then is it built (:func:`load_step`). A refused step
raises before anything loads. Other engines (RKLLM on the NPU) are built as they are.

- :func:`build_llm`: the configured LLM (a started fallback chain of governed steps, wrapped in
  an idle-unloading engine when ``governor.idle_unload_s`` > 0; every reload is a new governed chain).
- :func:`governed_factory`: the chain factory (a refusal becomes :class:`EngineError`, so the chain
  moves on to its next step).
- :func:`step_loader`: a ``load()`` of one step for :class:`edge.governor.idle.IdleUnloader`
  (a refusal raises :class:`edge.governor.admission.AdmissionError` with the numbers).
"""
from __future__ import annotations

import dataclasses
import logging
from typing import Callable

from edge.config import Settings
from edge.governor.admission import AdmissionError
from edge.governor.governor import Governor
from edge.llm.base import Engine, EngineError
from edge.llm.chain import EngineChain, StepSpec, build_chain, default_factory, specs_from_settings
from edge.llm.idle import IdleEngine

log = logging.getLogger("edge.service")


def admit_step(governor: Governor, spec: StepSpec) -> StepSpec:
    """``spec`` (a llama.cpp step) as the governor admits it: the model and n_ctx
    :meth:`Governor.admit` chose (the configured ones, or a halved n_ctx / a model of
    ``governor.smaller_models``; logged as a warning when degraded) and threads ≤ the governor's
    current LLM threads (:meth:`Governor.limits`; the step's own count when that is 0).

    Raises:
        AdmissionError: no configuration fits in memory; its ``decision`` has the numbers (MiB).
    """
    d = governor.admit(spec.model, spec.n_ctx)
    if not d.admitted:
        raise AdmissionError(d)
    threads = max(1, min(spec.threads, governor.limits().llm_threads or spec.threads))
    if d.degraded:
        log.warning("memory admission: %s", d.reason)
    return dataclasses.replace(spec, model=d.model, n_ctx=d.n_ctx, threads=threads)


def load_step(governor: Governor, spec: StepSpec) -> Engine:
    """The engine of ``spec``, built by :func:`edge.llm.chain.default_factory` (loads the model);
    a llama.cpp step passes :func:`admit_step` first.

    Raises:
        AdmissionError: a llama.cpp step does not fit in memory (nothing was loaded).
        EngineError / FileNotFoundError / ValueError: as the engine's constructor does.
    """
    if spec.engine == "llamacpp":
        spec = admit_step(governor, spec)
    return default_factory(spec)


def governed_factory(governor: Governor) -> Callable[[StepSpec], Engine]:
    """A chain factory (:class:`edge.llm.chain.EngineChain`) that loads each step with
    :func:`load_step`. A refused step raises :class:`edge.llm.base.EngineError` ("memory admission
    refused MODEL: …" with the numbers) before anything loads; the chain moves on."""

    def factory(spec: StepSpec) -> Engine:
        try:
            return load_step(governor, spec)
        except AdmissionError as e:
            raise EngineError(f"memory admission refused {spec.model}: {e.decision.reason}") from e

    return factory


def step_loader(governor: Governor, spec: StepSpec | None = None) -> Callable[[], Engine]:
    """A ``load()`` for :meth:`Governor.idle_unloader`: :func:`load_step` of ``spec`` (default:
    the first step of the settings, :func:`edge.llm.chain.specs_from_settings`) on every call.

    Raises (from ``load()``):
        AdmissionError: the step does not fit in memory (nothing was loaded).
        EngineError: no LLM step is configured (``llm.engine: none``).
    """
    if spec is None:
        specs = specs_from_settings(governor.settings)
        spec = specs[0] if specs else None

    def load() -> Engine:
        if spec is None:
            raise EngineError("no LLM step configured (llm.engine: none and no llm.chain)")
        return load_step(governor, spec)

    return load


def build_governor(settings: Settings) -> Governor:
    """The :class:`Governor` of ``settings``."""
    return Governor(settings)


def build_llm(settings: Settings, governor: Governor | None = None, *,
              lazy: bool = False) -> EngineChain | IdleEngine | None:
    """The configured LLM: a started :class:`edge.llm.chain.EngineChain` of ``llm.chain`` (when
    empty, the single ``llm.engine``/``llm.model``/``llm.n_ctx`` step), then the grammar path; or
    None for ``llm.engine: none`` without a chain. Each llama.cpp step passes the governor's memory
    admission first (:func:`governed_factory`). A step that fails to load or to answer its
    one-token smoke inference is skipped (logged); with none left, answers come from the grammar.
    With ``governor.idle_unload_s`` > 0 the chain is wrapped in an :class:`edge.llm.idle.IdleEngine`:
    loaded now, unloaded when idle, and rebuilt (admitted again) on demand.

    ``lazy=True`` (``edge ask``, the voice loop, the service): always an :class:`IdleEngine` that
    loads nothing now; the chain is built (admitted, loaded, smoke-tested) by the first request
    that needs the model, so a turn the templates take never loads it (its ``loaded`` stays False
    and the governor's ``llm_loaded`` too); that first request's load time is its ``llm_reload_ms``."""
    gov = governor if governor is not None else build_governor(settings)
    if not specs_from_settings(settings) and not settings.llm.chain:
        return None
    if lazy:
        return IdleEngine(gov.idle_unloader(lambda: build_chain(settings, factory=governed_factory(gov))))
    if settings.governor.idle_unload_s <= 0:
        return build_chain(settings, factory=governed_factory(gov))
    idle = IdleEngine(gov.idle_unloader(lambda: build_chain(settings, factory=governed_factory(gov))))
    idle.unloader.acquire()  # loaded (and smoke-tested) at start; unloaded when idle, reloaded on demand
    return idle
