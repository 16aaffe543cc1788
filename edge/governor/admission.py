"""Memory admission (case C11): before a model loads, weights (file size) + KV cache
(:func:`edge.llm.shape.kv_cache_bytes`) + pipeline overhead must be ≤ ``governor.mem_fraction``
(70 %) of MemTotal and < MemAvailable. Otherwise n_ctx is halved down to ``governor.min_n_ctx``,
then the next model of ``governor.smaller_models`` is tried; :class:`Decision` says why with the
numbers in MiB. Logged on the ``edge.governor`` logger.

A model's size and shape come from the model manifest (``files:`` sizes, an ``arch:`` block) or
the installed file (its size, its GGUF header): :func:`model_weights_bytes`, :func:`model_shape`.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import yaml
from pydantic import ValidationError

from drivers.sensors import MemInfo
from edge.errors import EdgeError
from edge.llm.shape import (
    ArchSpec,
    ModelShape,
    ModelShapeError,
    gguf_metadata,
    kv_cache_bytes,
    shape_from_gguf_metadata,
)
from edge.models.local import find_model
from edge.models.manifest import default_manifest_path

log = logging.getLogger("edge.governor")

MIB = 1024 * 1024

#: MiB the rest of the process needs besides LLM weights and KV cache, measured on this project's
#: x86_64 dev machine by ``bench/governor_overhead.py`` (``bench/results/governor_overhead.json``):
#: the voice pipeline without an LLM (4 openWakeWord models, Silero VAD, whisper tiny.en int8,
#: pyttsx3/espeak-ng, SQLite) peaks at VmHWM 405.1 MiB over two turns; loading SmolLM2-135M and
#: generating grows RSS beyond weights + KV cache by 45.4 MiB the first time in a process
#: (n_ctx 2048: +184.2 MiB vs 138.8 estimated; llama.cpp compute/output buffers, the library
#: itself) and 6.1 MiB for a second load (n_ctx 8192: +279.9 vs 273.8). 405.1 + 45.4 = 450.5,
#: rounded up to 460. Default of ``governor.pipeline_overhead_mib``; re-measure on a board.
PIPELINE_OVERHEAD_MIB = 460


def mib(n: float | None) -> str:
    """Bytes as ``"93.8 MiB"``; ``"unknown"`` for ``None``."""
    return "unknown" if n is None else f"{n / MIB:.1f} MiB"


# -- a model's size and shape -------------------------------------------------------------------


def _manifest_path(manifest_path: str | os.PathLike[str] | None) -> Path:
    return Path(manifest_path) if manifest_path is not None else default_manifest_path()


def _manifest_entry(model: str, manifest_path: str | os.PathLike[str] | None) -> tuple[dict | None, Path]:
    """The raw ``models:`` or ``local_models:`` entry with id ``model`` (``None`` if none)."""
    p = _manifest_path(manifest_path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return None, p
    for section in ("models", "local_models"):
        for raw in data.get(section) or []:
            if isinstance(raw, dict) and str(raw.get("id")) == model:
                return raw, p
    return None, p


def _model_file(model: str, manifest_path, models_dir) -> Path:
    """The installed file of a manifest id / local model id, or ``model`` itself if it is a file."""
    return find_model(model, models_dir, manifest_path)


def model_shape(model: str, manifest_path: str | os.PathLike[str] | None = None,
                models_dir: str | os.PathLike[str] | None = None) -> ModelShape:
    """The :class:`ModelShape` of a manifest id, a ``local_models`` id or a model file path.

    Order: the manifest entry's ``arch:`` block if it has one; else the GGUF metadata of the
    installed file. A ``.rkllm`` file has no GGUF metadata: its entry needs ``arch:``.

    Raises:
        ModelShapeError: no ``arch:`` block and no readable GGUF file (the message says which fix).
    """
    raw, mp = _manifest_entry(model, manifest_path)
    if raw is not None and raw.get("arch") is not None:
        try:
            a = ArchSpec.model_validate(raw["arch"])
        except ValidationError as e:
            bad = "; ".join(f"arch.{'.'.join(str(x) for x in err['loc'])}: {err['msg']}" for err in e.errors())
            raise ModelShapeError(f"model manifest {mp}: {model}: {bad} (arch needs positive integers "
                                  f"n_layers, n_kv_heads, head_dim)") from None
        return ModelShape(a.n_layers, a.n_kv_heads, a.head_dim, a.head_dim_v or a.head_dim, a.n_ctx_train,
                          f"arch: block of {model} in {mp}")
    try:
        path = _model_file(model, manifest_path, models_dir)
    except FileNotFoundError as e:
        raise ModelShapeError(f"model {model!r}: {e}; or give it an arch: block in {mp}") from None
    if path.suffix == ".rkllm":
        raise ModelShapeError(f"model {model!r} ({path}) is an .rkllm file without GGUF metadata: add "
                              f"arch: {{n_layers, n_kv_heads, head_dim}} to its entry in {mp}")
    return shape_from_gguf_metadata(gguf_metadata(path), f"GGUF metadata of {path}")


def model_weights_bytes(model: str, manifest_path: str | os.PathLike[str] | None = None,
                        models_dir: str | os.PathLike[str] | None = None) -> tuple[int, str]:
    """``(bytes, source)``: the weights' size — a file's size, the sum of a manifest entry's
    ``files:`` sizes, or a ``local_models`` entry's ``size``, in that order of preference for a
    path, then the manifest, then the installed file.

    Raises:
        ModelShapeError: none of these is known.
    """
    p = Path(model).expanduser()
    if p.is_file():
        return p.stat().st_size, f"size of {p}"
    raw, mp = _manifest_entry(model, manifest_path)
    if raw is not None:
        files = raw.get("files")
        if isinstance(files, list) and files and all(isinstance(f, dict) and isinstance(f.get("size"), int)
                                                     for f in files):
            return sum(f["size"] for f in files), f"files: sizes of {model} in {mp}"
        if isinstance(raw.get("size"), int) and raw["size"] > 0:
            return raw["size"], f"size: of {model} in {mp}"
    try:
        path = _model_file(model, manifest_path, models_dir)
        return path.stat().st_size, f"size of {path}"
    except (FileNotFoundError, OSError) as e:
        raise ModelShapeError(f"model {model!r}: size unknown: {e}") from None


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes a configuration needs: ``weights_bytes`` + ``kv_cache_bytes`` + ``overhead_bytes``
    (pipeline) = :attr:`total_bytes`; ``shape`` and ``weights_source`` say where numbers came from."""

    model: str
    n_ctx: int
    cache_type: str
    weights_bytes: int
    kv_cache_bytes: int
    overhead_bytes: int
    shape: ModelShape
    weights_source: str

    @property
    def total_bytes(self) -> int:
        return self.weights_bytes + self.kv_cache_bytes + self.overhead_bytes

    def describe(self) -> str:
        """``weights 93.8 MiB + KV cache 45.0 MiB (f16, n_ctx 2048) + pipeline 460.0 MiB = 598.8 MiB``."""
        return (f"weights {mib(self.weights_bytes)} + KV cache {mib(self.kv_cache_bytes)} "
                f"({self.cache_type}, n_ctx {self.n_ctx}) + pipeline {mib(self.overhead_bytes)} "
                f"= {mib(self.total_bytes)}")

    def to_dict(self) -> dict:
        return {"model": self.model, "n_ctx": self.n_ctx, "cache_type": self.cache_type,
                "weights_bytes": self.weights_bytes, "kv_cache_bytes": self.kv_cache_bytes,
                "overhead_bytes": self.overhead_bytes, "total_bytes": self.total_bytes,
                "total_mib": round(self.total_bytes / MIB, 1), "shape": self.shape.to_dict(),
                "weights_source": self.weights_source}


def estimate(model: str, n_ctx: int = 2048, cache_type: str = "f16",
             overhead_mib: float = PIPELINE_OVERHEAD_MIB, manifest_path: str | os.PathLike[str] | None = None,
             models_dir: str | os.PathLike[str] | None = None) -> MemoryEstimate:
    """The :class:`MemoryEstimate` of ``model`` (manifest id, local model id or file) at ``n_ctx``.

    Weights are counted fully resident (llama.cpp maps them; under memory pressure mapped pages
    can be dropped, but then every token reads them from storage again).

    Raises:
        ModelShapeError: size or shape unknown (see :func:`model_shape`, :func:`model_weights_bytes`).
        ValueError: bad ``n_ctx`` or ``cache_type``.
    """
    shape = model_shape(model, manifest_path, models_dir)
    weights, src = model_weights_bytes(model, manifest_path, models_dir)
    return MemoryEstimate(model, n_ctx, cache_type, weights, kv_cache_bytes(shape, n_ctx, cache_type),
                          int(round(overhead_mib * MIB)), shape, src)


# -- admission ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Attempt:
    """One configuration tried: ``total_bytes`` (``None`` if it could not be estimated), ``fits``, ``why``."""

    model: str
    n_ctx: int
    total_bytes: int | None
    fits: bool
    why: str

    def to_dict(self) -> dict:
        return {"model": self.model, "n_ctx": self.n_ctx, "total_bytes": self.total_bytes, "fits": self.fits,
                "why": self.why}


@dataclass(frozen=True)
class Decision:
    """The admission verdict. ``admitted`` with ``model``/``n_ctx``/``estimate`` chosen, or not;
    ``budget_bytes`` = ``mem_fraction × MemTotal``; ``reason`` explains with the numbers (MiB);
    ``attempts`` lists every configuration tried, in order."""

    admitted: bool
    model: str | None
    n_ctx: int | None
    cache_type: str
    estimate: MemoryEstimate | None
    budget_bytes: int | None
    mem_total_bytes: int | None
    mem_available_bytes: int | None
    reason: str
    attempts: tuple[Attempt, ...] = ()

    @property
    def degraded(self) -> bool:
        """Admitted, but not the first configuration tried."""
        return self.admitted and len(self.attempts) > 1

    def to_dict(self) -> dict:
        return {"admitted": self.admitted, "model": self.model, "n_ctx": self.n_ctx, "cache_type": self.cache_type,
                "estimate": self.estimate.to_dict() if self.estimate else None, "budget_bytes": self.budget_bytes,
                "mem_total_bytes": self.mem_total_bytes, "mem_available_bytes": self.mem_available_bytes,
                "reason": self.reason, "attempts": [a.to_dict() for a in self.attempts]}


class AdmissionError(EdgeError):
    """No configuration fits in memory; ``decision`` has the numbers. Raised before any load."""

    def __init__(self, decision: Decision):
        self.decision = decision
        super().__init__(decision.reason)


def ctx_steps(n_ctx: int, floor: int) -> list[int]:
    """``n_ctx`` halved down to ``floor``: ``ctx_steps(8192, 512)`` = [8192, 4096, 2048, 1024, 512]."""
    steps = [n_ctx]
    while steps[-1] // 2 >= floor:
        steps.append(steps[-1] // 2)
    return steps


def admit(models: Iterable[str], n_ctx: int, mem: MemInfo, *, cache_type: str = "f16",
          overhead_mib: float = PIPELINE_OVERHEAD_MIB, mem_fraction: float = 0.70, min_n_ctx: int = 512,
          ram_mib: float | None = None, manifest_path: str | os.PathLike[str] | None = None,
          models_dir: str | os.PathLike[str] | None = None) -> Decision:
    """Pick the first configuration that fits: each of ``models`` in order (the configured one
    first, then smaller ones), each at ``n_ctx`` halved down to ``min_n_ctx`` (:func:`ctx_steps`).

    Fits = total ≤ ``mem_fraction`` × MemTotal **and** total < MemAvailable. When MemTotal is
    unknown, ``ram_mib`` (the board config's RAM) stands in; when MemAvailable is unknown only the
    first bound is checked; with neither, the first model is admitted unchecked (said in the
    reason). A model whose size or shape is unknown is skipped with its reason. Logged on
    ``edge.governor``; never raises.
    """
    models = [m for m in models if m]
    total, avail = mem.total_bytes, mem.available_bytes
    total_src = "MemTotal"
    if total is None and ram_mib:
        total, total_src = int(ram_mib * MIB), "board ram_mib"
    budget = int(mem_fraction * total) if total is not None else None
    pct = f"{mem_fraction * 100:.0f} %"
    attempts: list[Attempt] = []
    first: tuple[str, int] | None = None

    def bounds() -> str:
        b = [f"≤ {mib(budget)} ({pct} of {total_src} {mib(total)})"] if budget is not None else []
        if avail is not None:
            b.append(f"< MemAvailable {mib(avail)}")
        return " and ".join(b)

    for model in models:
        for n in ctx_steps(n_ctx, min_n_ctx):
            first = first or (model, n)
            try:
                est = estimate(model, n, cache_type, overhead_mib, manifest_path, models_dir)
            except (ModelShapeError, ValueError) as e:
                attempts.append(Attempt(model, n, None, False, f"cannot estimate: {e}"))
                break  # the next n_ctx would fail the same way: next model
            t = est.total_bytes
            over = []
            if budget is not None and t > budget:
                over.append(f"{mib(t)} > {pct} of {total_src} {mib(total)} = {mib(budget)}")
            if avail is not None and t >= avail:
                over.append(f"{mib(t)} ≥ MemAvailable {mib(avail)}")
            if over:
                attempts.append(Attempt(model, n, t, False, f"{est.describe()}: " + "; ".join(over)))
                continue
            if budget is None and avail is None:
                why = f"{est.describe()}; memory unknown (no MemTotal, MemAvailable or board ram_mib): not checked"
            else:
                why = f"{est.describe()} {bounds()}"
            attempts.append(Attempt(model, n, t, True, why))
            if len(attempts) == 1:
                reason = f"admitted {model} with n_ctx {n}: {why}"
                log.info("admission: %s", reason)
            else:
                refused = "; ".join(f"{a.model} n_ctx {a.n_ctx} refused: {a.why}" for a in attempts[:-1])
                reason = (f"admitted {model} with n_ctx {n} instead of {first[0]} with n_ctx {first[1]}: "
                          f"{refused}; chosen: {why}")
                log.warning("admission: %s", reason)
            return Decision(True, model, n, cache_type, est, budget, total, avail, reason, tuple(attempts))
    tried = "; ".join(f"{a.model} n_ctx {a.n_ctx}: {a.why}" for a in attempts) or "no model configured"
    reason = (f"refused: no configuration fits ({bounds() or 'memory unknown'}); tried {tried}; "
              f"fix: free memory, lower llm.n_ctx, set governor.kv_cache_type: q8_0, or list a smaller model "
              f"in governor.smaller_models")
    log.error("admission: %s", reason)
    return Decision(False, None, None, cache_type, None, budget, total, avail, reason, tuple(attempts))
