"""Resource governor: memory admission, a 30 % compute reserve, thermal levels with hysteresis,
idle unload of the LLM, power modes; status and metrics for ``edge status`` and ``/metrics``.

Every signal comes from :mod:`drivers.sensors`, read from the paths in the board config
(``board.sensors``); a missing, unreadable or garbled file makes that signal unknown and is listed
in :meth:`Governor.reasons`, it never stops the service. Every decision is logged with its reason
on the ``edge.governor`` logger.

**Memory admission** (:func:`estimate`, :func:`admit`; case C11). Before a model loads:
weights (file size) + KV cache (``n_layers × n_ctx × n_kv_heads × (head_dim_k + head_dim_v) ×
bytes per element``, i.e. ``2 × n_layers × n_ctx × n_kv_heads × head_dim × b`` when K and V heads
are the same size) + pipeline overhead must be ≤ ``governor.mem_fraction`` (70 %) of MemTotal
and < MemAvailable. Otherwise n_ctx is halved down to ``governor.min_n_ctx``, then the next model
of ``governor.smaller_models`` is tried; :class:`Decision` says why with the numbers in MiB.

**Compute reserve** (:func:`thread_plan`): LLM threads ≤ ``floor(fraction × cores)`` (at least
1), on the big cores of a big.LITTLE board and never more than there are big cores; audio and
the wake word on one little core.

**Thermal levels** (:class:`ThermalLevels`): ``normal`` → ``warm`` (half the LLM threads, token
pacing, shorter answers) → ``hot`` (grammar path only, a spoken "cooling down" notice). A level
is entered as soon as any watched zone reaches its threshold; it is left one step at a time, only
after every zone stayed below ``threshold − hysteresis_c`` for ``dwell_s`` seconds.

**Idle unload** (:class:`IdleUnloader`): the LLM is unloaded after ``governor.idle_unload_s``
without use and reloaded on demand; the load time is returned (``reload_ms``) for the turn's
latency events.
"""
from __future__ import annotations

import contextlib
import ctypes
import gc
import logging
import math
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from drivers.sensors import MemInfo, SensorPaths, SensorReader, Snapshot, ThermalZone, read_meminfo
from edge.config import BoardSettings, GovernorSettings, Settings
from edge.errors import EdgeError, UserError

log = logging.getLogger("edge.governor")

MIB = 1024 * 1024

#: Bytes per element of each llama.cpp KV cache type, from ggml's block layouts
#: (``ggml/src/ggml-common.h``): f16 = 2 bytes; ``block_q8_0`` = one fp16 scale + 32 int8 = 34 bytes
#: per 32 elements = 1.0625; ``block_q4_0`` = one fp16 scale + 16 bytes of 4-bit pairs = 18 bytes
#: per 32 elements = 0.5625. Checked against llama.cpp's own log (llama-cpp-python 0.3.36) for
#: SmolLM2-135M at n_ctx 2048: "llama_kv_cache: size = 45.00 MiB" (f16), 23.91 MiB (q8_0),
#: 12.66 MiB (q4_0) — exactly what :func:`kv_cache_bytes` gives.
#: The spoken notice at the hot level under ``language: zh`` when ``governor.cooling_notice`` is the default.
COOLING_NOTICE_ZH = "我正在降温，现在只能处理库存指令。"
KV_BYTES_PER_ELEMENT = {"f16": 2.0, "q8_0": 34 / 32, "q4_0": 18 / 32}

#: MiB the rest of the process needs besides LLM weights and KV cache, measured on this project's
#: x86_64 dev machine by ``bench/governor_overhead.py`` (``bench/results/governor_overhead.json``):
#: the voice pipeline without an LLM (4 openWakeWord models, Silero VAD, whisper tiny.en int8,
#: pyttsx3/espeak-ng, SQLite) peaks at VmHWM 405.1 MiB over two turns; loading SmolLM2-135M and
#: generating grows RSS beyond weights + KV cache by 45.4 MiB the first time in a process
#: (n_ctx 2048: +184.2 MiB vs 138.8 estimated; llama.cpp compute/output buffers, the library
#: itself) and 6.1 MiB for a second load (n_ctx 8192: +279.9 vs 273.8). 405.1 + 45.4 = 450.5,
#: rounded up to 460. Default of ``governor.pipeline_overhead_mib``; re-measure on a board.
PIPELINE_OVERHEAD_MIB = 460

LEVELS = ("normal", "warm", "hot")


@dataclass(frozen=True)
class PowerMode:
    """What a ``governor.power_mode`` changes: thresholds are lowered by ``trip_offset_c`` °C
    (degrade earlier, before the kernel throttles at its passive trips), LLM threads ≤
    ``cpu_fraction`` of the cores (never above ``governor.cpu_fraction``), answer budget ×
    ``max_tokens_scale``."""

    trip_offset_c: float
    cpu_fraction: float
    max_tokens_scale: float


#: Chosen here (no external source): performance uses the board's trip points as they are and the
#: full 70 % of the cores; balanced degrades 5 °C before the kernel's passive trip, half the cores;
#: powersave 10 °C before, a quarter of the cores and half-length answers.
POWER_MODES = {
    "performance": PowerMode(trip_offset_c=0.0, cpu_fraction=0.70, max_tokens_scale=1.0),
    "balanced": PowerMode(trip_offset_c=5.0, cpu_fraction=0.50, max_tokens_scale=1.0),
    "powersave": PowerMode(trip_offset_c=10.0, cpu_fraction=0.25, max_tokens_scale=0.5),
}


def _mib(n: float | None) -> str:
    return "unknown" if n is None else f"{n / MIB:.1f} MiB"


# ============================================================================================
# Model shape and memory estimate


class ModelShapeError(UserError, ValueError):
    """A model's size or shape cannot be known; the message names the model, the file and the fix."""


@dataclass(frozen=True)
class ModelShape:
    """What sizes a model's KV cache: ``n_layers``, ``n_kv_heads``, ``head_dim`` (K) and
    ``head_dim_v`` (V) per head, ``n_ctx_train`` (tokens, ``None`` if not stated) and the
    ``source`` of these numbers (GGUF metadata of a file, or a manifest ``arch:`` block)."""

    n_layers: int
    n_kv_heads: int
    head_dim: int
    head_dim_v: int
    n_ctx_train: int | None
    source: str

    def to_dict(self) -> dict:
        return {"n_layers": self.n_layers, "n_kv_heads": self.n_kv_heads, "head_dim": self.head_dim,
                "head_dim_v": self.head_dim_v, "n_ctx_train": self.n_ctx_train, "source": self.source}


class ArchSpec(BaseModel):
    """A manifest entry's optional ``arch:`` block (required for ``.rkllm`` files, which carry no
    GGUF metadata): ``{n_layers, n_kv_heads, head_dim, head_dim_v?, n_ctx_train?}``."""

    model_config = ConfigDict(extra="forbid")
    n_layers: int = Field(gt=0)
    n_kv_heads: int = Field(gt=0)
    head_dim: int = Field(gt=0)
    head_dim_v: int | None = Field(None, gt=0)
    n_ctx_train: int | None = Field(None, gt=0)


_META_CACHE: dict[tuple[str, int, int], dict[str, str]] = {}
_META_LOCK = threading.Lock()


def gguf_metadata(path: str | os.PathLike[str]) -> dict[str, str]:
    """All key/value pairs of a GGUF file's header, as strings, read with llama.cpp's
    ``llama_model_load_from_file`` with ``vocab_only`` (no weights; ~0.1-0.4 s) and cached per
    (path, size, mtime).

    Raises:
        ModelShapeError: llama-cpp-python is not installed, or llama.cpp cannot read the file.
    """
    p = Path(path)
    try:
        st = p.stat()
    except OSError as e:
        raise ModelShapeError(f"{p}: cannot read ({e.strerror or e})") from None
    key = (str(p.resolve()), st.st_size, st.st_mtime_ns)
    with _META_LOCK:
        if key in _META_CACHE:
            return dict(_META_CACHE[key])
        try:
            import llama_cpp
        except ImportError:
            raise ModelShapeError(f"{p}: reading GGUF metadata needs llama-cpp-python (scripts/setup.sh "
                                  f"installs it), or give the model an arch: block in models/manifest.yaml") from None
        lg = logging.getLogger("llama-cpp-python")  # llama-cpp-python's log callback prints below this level
        old = lg.level
        lg.setLevel(logging.ERROR)
        try:
            llama_cpp.llama_backend_init()
            params = llama_cpp.llama_model_default_params()
            params.vocab_only = True
            model = llama_cpp.llama_model_load_from_file(str(p).encode(), params)
            if not model:
                raise ModelShapeError(f"{p}: llama.cpp cannot read it as a GGUF model; check it with "
                                      f"'edge models verify'")
            try:
                buf = ctypes.create_string_buffer(4096)
                meta = {}
                for i in range(llama_cpp.llama_model_meta_count(model)):
                    if llama_cpp.llama_model_meta_key_by_index(model, i, buf, len(buf)) < 0:
                        continue
                    k = buf.value.decode("utf-8", "replace")
                    if llama_cpp.llama_model_meta_val_str_by_index(model, i, buf, len(buf)) < 0:
                        continue
                    meta[k] = buf.value.decode("utf-8", "replace")
            finally:
                llama_cpp.llama_model_free(model)
        finally:
            lg.setLevel(old)
        _META_CACHE[key] = meta
        return dict(meta)


def shape_from_gguf_metadata(meta: dict[str, str], source: str = "GGUF metadata") -> ModelShape:
    """:class:`ModelShape` from GGUF keys (GGUF spec, ggml docs/gguf.md): ``general.architecture``
    = A; ``A.block_count``; ``A.attention.head_count``; ``A.attention.head_count_kv`` (default:
    head_count); ``A.attention.key_length`` / ``value_length`` (default: ``A.embedding_length /
    head_count``); ``A.context_length``.

    Raises:
        ModelShapeError: a key is missing or not a number (names the key).
    """
    arch = meta.get("general.architecture")
    if not arch:
        raise ModelShapeError(f"{source}: no general.architecture key")

    def get(k: str, default: int | None = None) -> int:
        v = meta.get(f"{arch}.{k}")
        if v is None:
            if default is None:
                raise ModelShapeError(f"{source}: no {arch}.{k} key")
            return default
        try:
            n = int(v)
        except ValueError:
            raise ModelShapeError(f"{source}: {arch}.{k} is {v[:40]!r}, not one number (per-layer values "
                                  f"are not supported; give an arch: block in the manifest)") from None
        if n <= 0:
            raise ModelShapeError(f"{source}: {arch}.{k} = {n}, expected a positive number")
        return n

    n_head = get("attention.head_count")
    dim = get("attention.key_length", max(1, get("embedding_length") // n_head))
    ctx = meta.get(f"{arch}.context_length")
    return ModelShape(get("block_count"), get("attention.head_count_kv", n_head), dim,
                      get("attention.value_length", dim), int(ctx) if ctx and ctx.isdigit() else None, source)


def _manifest_path(manifest_path: str | os.PathLike[str] | None) -> Path:
    from edge.models.manifest import default_manifest_path

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
    p = Path(model).expanduser()
    if p.is_file():
        return p
    try:
        from edge.models.local import find_model
    except ImportError:
        from edge.models import manifest as models
        try:
            return models.resolve(model, models.load_manifest(manifest_path))
        except models.ModelError as e:
            raise FileNotFoundError(str(e)) from None
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


def kv_cache_bytes(shape: ModelShape, n_ctx: int, cache_type: str = "f16") -> int:
    """Bytes of llama.cpp's K and V caches for ``n_ctx`` tokens:
    ``n_layers × n_ctx × n_kv_heads × (head_dim + head_dim_v) × bytes per element`` (see
    :data:`KV_BYTES_PER_ELEMENT`). SmolLM2-135M (30 layers, 3 KV heads of 64) at 2048, f16:
    47 185 920 bytes = 45.00 MiB.

    Raises:
        ValueError: unknown ``cache_type`` or ``n_ctx`` ≤ 0.
    """
    if cache_type not in KV_BYTES_PER_ELEMENT:
        raise ValueError(f"KV cache type {cache_type!r} not one of {sorted(KV_BYTES_PER_ELEMENT)}")
    if n_ctx <= 0:
        raise ValueError(f"n_ctx must be a positive number of tokens, got {n_ctx}")
    elems = shape.n_layers * n_ctx * shape.n_kv_heads * (shape.head_dim + shape.head_dim_v)
    return int(round(elems * KV_BYTES_PER_ELEMENT[cache_type]))


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
        return (f"weights {_mib(self.weights_bytes)} + KV cache {_mib(self.kv_cache_bytes)} "
                f"({self.cache_type}, n_ctx {self.n_ctx}) + pipeline {_mib(self.overhead_bytes)} "
                f"= {_mib(self.total_bytes)}")

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


# ============================================================================================
# Admission


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
        b = [f"≤ {_mib(budget)} ({pct} of {total_src} {_mib(total)})"] if budget is not None else []
        if avail is not None:
            b.append(f"< MemAvailable {_mib(avail)}")
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
                over.append(f"{_mib(t)} > {pct} of {total_src} {_mib(total)} = {_mib(budget)}")
            if avail is not None and t >= avail:
                over.append(f"{_mib(t)} ≥ MemAvailable {_mib(avail)}")
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


# ============================================================================================
# Threads


@dataclass(frozen=True)
class ThreadPlan:
    """``llm_threads`` (0 = no LLM at this level), the CPUs they may run on (``llm_cpus``), the
    CPUs for audio capture, wake word and VAD (``audio_cpus``), and ``reason`` (the rule, with numbers)."""

    llm_threads: int
    llm_cpus: tuple[int, ...]
    audio_cpus: tuple[int, ...]
    reason: str = ""

    def to_dict(self) -> dict:
        return {"llm_threads": self.llm_threads, "llm_cpus": list(self.llm_cpus),
                "audio_cpus": list(self.audio_cpus), "reason": self.reason}


def _level_index(level: str | int) -> int:
    if isinstance(level, int):
        if not 0 <= level < len(LEVELS):
            raise ValueError(f"thermal level {level} not in 0..{len(LEVELS) - 1}")
        return level
    if level not in LEVELS:
        raise ValueError(f"thermal level {level!r} not one of {LEVELS}")
    return LEVELS.index(level)


def thread_plan(board: BoardSettings | None, level: str | int = "normal", power_mode: str = "performance",
                cpu_fraction: float = 0.70, online_cpus: Iterable[int] | None = None) -> ThreadPlan:
    """Where and how many LLM threads, from the board's CPU clusters.

    Rule: cores = the board's ``cpu_clusters`` (or ``online_cpus``, default the CPUs this process
    may use); budget = ``max(1, floor(f × cores))`` with f = min(``cpu_fraction``, the power
    mode's fraction) — the 30 % reserve at f = 0.70.

    - big.LITTLE (``big`` and ``little`` clusters): LLM on the big cores only, at most as many
      threads as big cores (a thread on a slow little core would hold every matrix step back);
      audio + wake word on the first little core. RK3588 (4 × A55 + 4 × A76), performance:
      floor(0.70 × 8) = 5 → 4, on CPUs 4-7; audio on CPU 0.
    - otherwise: audio on the first core; the LLM on the others (all if there is one core),
      ``min(budget, their number)``. x86-dev, 2 cores: floor(0.70 × 2) = 1 thread on CPU 1.
    - ``warm``: half the threads (at least 1); ``hot``: 0 (grammar path only).

    Raises:
        ValueError: unknown ``level`` or ``power_mode``.
    """
    lvl = _level_index(level)
    if power_mode not in POWER_MODES:
        raise ValueError(f"power mode {power_mode!r} not one of {sorted(POWER_MODES)}")
    clusters = list(board.cpu_clusters) if board is not None else []
    if clusters:
        cores = sorted({c for cl in clusters for c in cl.cores})
        src = f"board {board.name} cpu_clusters"
    else:
        if online_cpus is None:
            try:
                online_cpus = os.sched_getaffinity(0)
            except (AttributeError, OSError):
                online_cpus = range(os.cpu_count() or 1)
        cores = sorted(set(online_cpus)) or [0]
        src = "online CPUs"
    frac = min(cpu_fraction, POWER_MODES[power_mode].cpu_fraction)
    budget = max(1, math.floor(frac * len(cores) + 1e-9))
    big = sorted({c for cl in clusters if cl.kind == "big" for c in cl.cores})
    little = sorted({c for cl in clusters if cl.kind == "little" for c in cl.cores})
    head = f"{len(cores)} cores ({src}); {power_mode}: floor({frac:.2f} × {len(cores)}) = {budget}"
    if big and little:
        llm_cpus, audio = tuple(big), (little[0],)
        n = min(budget, len(big))
        why = f"{head}; big.LITTLE: LLM on the {len(big)} big cores {big} → {n}; audio on little core {little[0]}"
    else:
        audio = (cores[0],)
        llm_cpus = tuple(cores[1:]) or tuple(cores)
        n = min(budget, len(llm_cpus))
        why = f"{head}; LLM on CPUs {list(llm_cpus)} → {n}; audio on CPU {cores[0]}"
    if lvl == 1:
        n2 = max(1, n // 2)
        why += f"; warm: {n} → {n2}"
        n = n2
    elif lvl == 2:
        n = 0
        why += "; hot: no LLM threads (grammar path only)"
    return ThreadPlan(n, llm_cpus, audio, why)


@contextlib.contextmanager
def pinned(cpus: Iterable[int] | None):
    """Run the block with the calling thread pinned to ``cpus`` (:func:`apply_affinity`); threads it
    starts meanwhile (onnxruntime, CTranslate2 and llama.cpp worker pools) keep that mask. The
    thread's previous mask is restored after. ``None`` or empty: nothing is changed."""
    before = None
    if cpus:
        try:
            before = os.sched_getaffinity(0)
        except (AttributeError, OSError):
            before = None
    applied = apply_affinity(cpus) if cpus and before is not None else None
    try:
        yield applied
    finally:
        if applied is not None:
            with contextlib.suppress(OSError):
                os.sched_setaffinity(0, before)


def apply_affinity(cpus: Iterable[int], pid: int = 0) -> set[int] | None:
    """Pin ``pid`` (0 = the calling *thread*; threads it starts afterwards inherit the mask) to
    ``cpus`` with ``os.sched_setaffinity``; the kernel keeps only CPUs the process's cpuset allows
    (the thread's current mask does not limit it, so a pinned thread can be moved). Returns the
    set applied, or ``None`` (logged) when none of ``cpus`` is allowed or the call is refused;
    never raises."""
    want = set(cpus)
    try:
        os.sched_setaffinity(pid, want)
        use = set(os.sched_getaffinity(pid))
    except (AttributeError, OSError, ValueError, OverflowError) as e:  # EINVAL: no CPU of the mask is in the cpuset
        log.warning("affinity: cannot pin to %s: %s; left unchanged", sorted(want), e)
        return None
    log.debug("affinity: pinned %s to CPUs %s", "this thread" if pid == 0 else f"pid {pid}", sorted(use))
    return use


# ============================================================================================
# Thermal levels


@dataclass(frozen=True)
class ZoneThresholds:
    """A zone's ``warm_c`` and ``hot_c`` thresholds (°C, after the power-mode offset) and their ``source``."""

    zone: str
    warm_c: float
    hot_c: float
    source: str

    def of(self, level: int) -> float:
        """The threshold that enters ``level`` (1 = warm, 2 = hot)."""
        return self.warm_c if level == 1 else self.hot_c

    def to_dict(self) -> dict:
        return {"zone": self.zone, "warm_c": self.warm_c, "hot_c": self.hot_c, "source": self.source}


def zone_thresholds(zone: ThermalZone, gs: GovernorSettings, power_mode: str | None = None,
                    label: str | None = None) -> ZoneThresholds:
    """warm = the zone's lowest passive trip, hot = its second passive trip (RK3588 soc-thermal:
    75 / 85 °C); missing ones come from ``governor.warm_c`` / ``hot_c``; hot is kept above warm
    and at most the zone's critical trip. Both are lowered by the power mode's ``trip_offset_c``."""
    mode = POWER_MODES[power_mode or gs.power_mode]
    passive = zone.passive_trips()
    warm = passive[0].temp_c if passive else gs.warm_c
    hot = passive[1].temp_c if len(passive) > 1 else gs.hot_c
    src = ["warm from " + (f"passive trip {passive[0].index}" if passive else "governor.warm_c"),
           "hot from " + (f"passive trip {passive[1].index}" if len(passive) > 1 else "governor.hot_c")]
    if hot <= warm:
        hot = warm + (gs.hot_c - gs.warm_c)
        src.append(f"hot = warm + {gs.hot_c - gs.warm_c:g} °C")
    crit = [t.temp_c for t in zone.trips if t.type in ("critical", "hot")]
    if crit and hot > min(crit):
        hot = min(crit)
        src.append("hot capped at the critical trip")
    if mode.trip_offset_c:
        src.append(f"− {mode.trip_offset_c:g} °C ({power_mode or gs.power_mode})")
    return ZoneThresholds(label or zone.label, warm - mode.trip_offset_c, hot - mode.trip_offset_c, ", ".join(src))


def zone_labels(zones: Iterable[ThermalZone]) -> list[str]:
    """A unique label per zone: its type, or ``type/thermal_zoneN`` when several zones share a type."""
    zones = list(zones)
    counts: dict[str, int] = {}
    for z in zones:
        counts[z.label] = counts.get(z.label, 0) + 1
    return [z.label if counts[z.label] == 1 else f"{z.label}/{z.name}" for z in zones]


class ThermalLevels:
    """The level state machine (0 normal, 1 warm, 2 hot) with hysteresis and dwell.

    :meth:`update` with ``(zone, temp_c, thresholds)`` per watched zone and the time ``now`` (s,
    from an injected clock). Up: immediately, to the highest level any zone reached. Down: one
    level, once every known zone has stayed below ``threshold(level) − hysteresis_c`` for
    ``dwell_s`` s; each further step needs its own dwell. A sample at or above that lower
    threshold restarts the dwell, so a temperature hovering around a threshold changes the level
    once, not at every sample. Zones with an unknown temperature are ignored; with none known the
    level is held.
    """

    def __init__(self, hysteresis_c: float, dwell_s: float):
        self.hysteresis_c = hysteresis_c
        self.dwell_s = dwell_s
        self.level = 0
        self.reason = "normal: no temperature read yet"
        self.changes = 0
        self._below_since: float | None = None

    def _all_below(self, known, level: int) -> tuple[bool, tuple | None]:
        """Whether every zone is below threshold(level) − hysteresis; else the first blocking zone."""
        for z, t, th in known:
            lim = th.of(level) - self.hysteresis_c
            if t >= lim:
                return False, (z, t, lim)
        return True, None

    def update(self, readings: Iterable[tuple[str, float | None, ZoneThresholds]], now: float) -> str | None:
        """Feed one sample; returns the change's reason if the level changed, else ``None``."""
        known = [(z, t, th) for z, t, th in readings if t is not None]
        name = LEVELS[self.level]
        if not known:
            self.reason = f"{name}: no zone temperature known; level held"
            return None

        def lvl(t, th):
            return 2 if t >= th.hot_c else 1 if t >= th.warm_c else 0

        z, t, th = max(known, key=lambda r: (lvl(r[1], r[2]), r[1] - r[2].warm_c))
        target = lvl(t, th)
        if target > self.level:
            old, self.level = self.level, target
            self._below_since = None
            self.changes += 1
            self.reason = (f"{LEVELS[old]} → {LEVELS[target]}: {z} {t:.1f} °C ≥ {LEVELS[target]} threshold "
                           f"{th.of(target):.1f} °C")
            return self.reason
        if self.level == 0:
            self._below_since = None
            self.reason = f"normal: hottest {z} {t:.1f} °C < warm threshold {th.warm_c:.1f} °C"
            return None
        ok, block = self._all_below(known, self.level)
        if not ok:
            bz, bt, lim = block
            self._below_since = None
            self.reason = (f"{name}: {bz} {bt:.1f} °C not below {lim:.1f} °C ({name} threshold − "
                           f"{self.hysteresis_c:g} °C hysteresis)")
            return None
        if self._below_since is None:
            self._below_since = now
        waited = now - self._below_since
        if waited < self.dwell_s:
            self.reason = (f"{name}: all zones below {name} threshold − {self.hysteresis_c:g} °C for "
                           f"{waited:.0f} s of {self.dwell_s:g} s dwell")
            return None
        old = self.level
        self.level -= 1
        self.changes += 1
        self.reason = (f"{LEVELS[old]} → {LEVELS[self.level]}: every zone below its {LEVELS[old]} threshold − "
                       f"{self.hysteresis_c:g} °C for {waited:.0f} s ≥ dwell {self.dwell_s:g} s "
                       f"(hottest {z} {t:.1f} °C)")
        still = self.level > 0 and self._all_below(known, self.level)[0]
        self._below_since = now if still else None
        return self.reason


@dataclass(frozen=True)
class Limits:
    """What the pipeline may do now: ``llm_allowed`` (False = grammar path only), ``llm_threads``
    on ``llm_cpus``, ``audio_cpus``, ``max_tokens`` (answer budget), ``token_pacing_ms`` (pause
    between tokens), ``notice`` (text to speak when the LLM is withheld), ``reason``."""

    level: str
    llm_allowed: bool
    llm_threads: int
    llm_cpus: tuple[int, ...]
    audio_cpus: tuple[int, ...]
    max_tokens: int
    token_pacing_ms: int
    notice: str | None
    reason: str

    def to_dict(self) -> dict:
        return {"level": self.level, "llm_allowed": self.llm_allowed, "llm_threads": self.llm_threads,
                "llm_cpus": list(self.llm_cpus), "audio_cpus": list(self.audio_cpus),
                "max_tokens": self.max_tokens, "token_pacing_ms": self.token_pacing_ms, "notice": self.notice,
                "reason": self.reason}


# ============================================================================================
# Idle unload


class IdleUnloader:
    """Keeps one LLM engine: loads it on demand, unloads it after ``idle_unload_s`` without use.

    ``load()`` builds the engine (e.g. :meth:`Governor.llm_loader`, which admits it first);
    ``unload(engine)`` frees it (default: its ``close()`` if it has one, then the reference is
    dropped). ``clock`` (s) measures idleness and is injected in tests; the load time itself is
    measured with ``time.perf_counter``. ``on_load(ms)`` / ``on_unload(idle_s)`` are called after
    each. Thread-safe; an engine in use (inside :meth:`use`) is never unloaded.

    Usage::

        with unloader.use() as (engine, reload_ms):   # reload_ms: None if it was loaded already
            ...                                       # put reload_ms into the turn's latency events
        unloader.tick()                               # from a timer: unloads when idle too long
    """

    def __init__(self, load: Callable[[], Any], idle_unload_s: float, *, clock: Callable[[], float] = time.monotonic,
                 unload: Callable[[Any], None] | None = None, on_load: Callable[[float], None] | None = None,
                 on_unload: Callable[[float], None] | None = None):
        self._load = load
        self._unload = unload
        self.idle_unload_s = idle_unload_s
        self.clock = clock
        self.on_load = on_load
        self.on_unload = on_unload
        self._engine = None
        self._busy = 0
        self._last_used = clock()
        self._lock = threading.RLock()
        self.loads = 0
        self.unloads = 0
        self.last_load_ms: float | None = None

    @property
    def loaded(self) -> bool:
        return self._engine is not None

    def acquire(self) -> tuple[Any, float | None]:
        """The engine, loading it if needed: ``(engine, load_ms or None)``. Marks it used.

        Raises whatever ``load()`` raises (e.g. :class:`AdmissionError`); nothing is kept then.
        """
        with self._lock:
            ms = None
            if self._engine is None:
                t0 = time.perf_counter()
                engine = self._load()
                ms = round(1000 * (time.perf_counter() - t0), 1)
                self._engine = engine
                self.loads += 1
                self.last_load_ms = ms
                log.info("llm: loaded in %.1f ms (load %d)", ms, self.loads)
                if self.on_load:
                    self.on_load(ms)
            self._last_used = self.clock()
            return self._engine, ms

    @contextlib.contextmanager
    def use(self) -> Iterator[tuple[Any, float | None]]:
        """``with unloader.use() as (engine, reload_ms):`` — not unloaded while inside."""
        with self._lock:
            engine, ms = self.acquire()
            self._busy += 1
        try:
            yield engine, ms
        finally:
            with self._lock:
                self._busy -= 1
                self._last_used = self.clock()

    def idle_s(self) -> float:
        """Seconds since the engine was last used (by ``clock``)."""
        return self.clock() - self._last_used

    def tick(self) -> bool:
        """Unload the engine if loaded, not in use, and idle ≥ ``idle_unload_s`` (0 = never).
        Returns True if it unloaded now."""
        with self._lock:
            if self._engine is None or self._busy or self.idle_unload_s <= 0:
                return False
            idle = self.idle_s()
            if idle < self.idle_unload_s:
                return False
            engine, self._engine = self._engine, None
            self.unloads += 1
        try:
            if self._unload is not None:
                self._unload(engine)
            elif callable(getattr(engine, "close", None)):
                engine.close()
        except Exception as e:  # freeing must not stop the service
            log.warning("llm: unload failed: %s", e)
        del engine
        gc.collect()
        log.info("llm: unloaded after %.0f s idle ≥ governor.idle_unload_s %g s", idle, self.idle_unload_s)
        if self.on_unload:
            self.on_unload(idle)
        return True


# ============================================================================================
# The governor


def sensor_paths(board: BoardSettings | None) -> SensorPaths:
    """:class:`drivers.sensors.SensorPaths` from a board config's ``sensors:`` block."""
    s = (board or BoardSettings()).sensors
    return SensorPaths(root=Path(s.root), meminfo=s.meminfo, stat=s.stat, cpufreq=s.cpufreq, thermal=s.thermal,
                       thermal_zones=tuple(s.thermal_zones), npu_load=s.npu_load, npu_devfreq=s.npu_devfreq,
                       hwmon=s.hwmon)


def _label(v: str) -> str:
    return str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


class Governor:
    """Reads the board's signals, keeps the thermal level, plans threads, admits models.

    Args:
        settings: validated :class:`edge.config.Settings` (``board``, ``governor``, ``llm``).
        clock: seconds, monotonic; injected in tests to step time without sleeping.
        manifest_path: model manifest for :meth:`admit` (default: ``$EDGE_MANIFEST`` or the repo's).

    Call :meth:`sample` periodically (e.g. every few seconds and before a turn), read
    :meth:`limits` before using the LLM, :meth:`admit` before loading it.
    """

    def __init__(self, settings: Settings, *, clock: Callable[[], float] = time.monotonic,
                 manifest_path: str | os.PathLike[str] | None = None):
        self.settings = settings
        self.board = settings.board or BoardSettings()
        self._pin_warned = False
        self.gs = settings.governor
        self.power_mode = self.gs.power_mode
        self.clock = clock
        self.manifest_path = manifest_path
        self.paths = sensor_paths(self.board)
        self.reader = SensorReader(self.paths)
        self.thermal = ThermalLevels(self.gs.hysteresis_c, self.gs.dwell_s)
        self.snapshot: Snapshot | None = None
        self.thresholds: list[ZoneThresholds] = []
        self.decision: Decision | None = None
        self.llm_loaded = False
        self.last_reload_ms: float | None = None
        self._problems_logged: frozenset[str] = frozenset()
        self._plan_logged: ThreadPlan | None = None

    # -- signals, level -----------------------------------------------------------------------
    @property
    def level(self) -> str:
        return LEVELS[self.thermal.level]

    def sample(self) -> Snapshot:
        """Read every signal and update the thermal level; logs level changes and new problems."""
        snap = self.reader.read()
        self.snapshot = snap
        labels = zone_labels(snap.zones)
        self.thresholds = [zone_thresholds(z, self.gs, self.power_mode, lb) for z, lb in zip(snap.zones, labels)]
        before = self.thermal.level
        change = self.thermal.update([(th.zone, z.temp_c, th) for z, th in zip(snap.zones, self.thresholds)],
                                     self.clock())
        if change:
            (log.warning if self.thermal.level > before else log.info)("thermal: %s", change)
        probs = frozenset(snap.problems)
        if probs != self._problems_logged:
            for p in sorted(probs - self._problems_logged):
                log.warning("signal unknown: %s", p)
            for p in sorted(self._problems_logged - probs):
                log.info("signal back: %s", p)
            self._problems_logged = probs
        return snap

    # -- plan, limits -------------------------------------------------------------------------
    def plan(self) -> ThreadPlan:
        """:func:`thread_plan` for this board at the current level and power mode (logged on change)."""
        p = thread_plan(self.board, self.thermal.level, self.power_mode, self.gs.cpu_fraction)
        if p != self._plan_logged:
            log.info("threads: %d LLM threads on CPUs %s, audio on CPUs %s: %s", p.llm_threads,
                     list(p.llm_cpus), list(p.audio_cpus), p.reason)
            self._plan_logged = p
        return p

    def cpu_sets(self) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """``(audio_cpus, llm_cpus)`` to pin to, on a board whose config declares big and little
        clusters (audio, wake word and VAD on a little core; recognition and the LLM on the big
        cores); ``None`` elsewhere (a uniform machine is left to the kernel's scheduler)."""
        clusters = list(getattr(self.board, "cpu_clusters", None) or [])
        kinds = {c.kind for c in clusters}
        if not {"big", "little"} <= kinds:
            return None
        p = self.plan()
        try:
            allowed = set(os.sched_getaffinity(0))  # the CPUs this process may use (cpuset, taskset, CPUAffinity=)
        except (AttributeError, OSError):
            return None
        audio = tuple(c for c in p.audio_cpus if c in allowed)
        llm = tuple(c for c in p.llm_cpus if c in allowed)
        if not audio or not llm:
            if not self._pin_warned:
                log.warning("affinity: the board config's CPUs (audio %s, LLM %s) are not all among this process's "
                            "CPUs %s; not pinning (check board.cpu_clusters for this board)",
                            list(p.audio_cpus), list(p.llm_cpus), sorted(allowed))
                self._pin_warned = True
            return None
        return audio, llm

    def _cooling_notice(self) -> str:
        """``governor.cooling_notice``; in Chinese when ``language: zh`` and it was left at its default."""
        from edge.config import GovernorSettings

        notice = self.gs.cooling_notice
        if getattr(self.settings, "language", "en") == "zh" and notice == GovernorSettings.model_fields["cooling_notice"].default:
            return COOLING_NOTICE_ZH
        return notice

    def limits(self) -> Limits:
        """What the LLM may do at the current level (see :class:`Limits`). Threads are the plan's,
        capped by ``llm.threads``."""
        p = self.plan()
        lvl = self.thermal.level
        mode = POWER_MODES[self.power_mode]
        max_tokens = self.settings.llm.max_tokens * mode.max_tokens_scale
        pacing = 0
        if lvl >= 1:
            max_tokens *= self.gs.warm_max_tokens_scale
            pacing = self.gs.warm_token_pacing_ms
        threads = min(p.llm_threads, self.settings.llm.threads)
        llm_ok = lvl < 2 and self.settings.llm.engine != "none"
        return Limits(self.level, llm_ok, threads if llm_ok else 0, p.llm_cpus, p.audio_cpus,
                      max(1, int(max_tokens)), pacing, self._cooling_notice() if lvl >= 2 else None,
                      self.thermal.reason)

    # -- memory -------------------------------------------------------------------------------
    def candidates(self, model: str | None = None) -> list[str]:
        """The configured model (or ``model``), then ``governor.smaller_models``, without repeats."""
        out: list[str] = []
        for m in [model or self.settings.llm.model, *self.gs.smaller_models]:
            if m and m not in out:
                out.append(m)
        return out

    def admit(self, model: str | None = None, n_ctx: int | None = None) -> Decision:
        """:func:`admit` with the current MemTotal/MemAvailable (read now) and the config."""
        mem = read_meminfo(self.paths.path(self.paths.meminfo))
        ram = getattr(self.board, "ram_mib", None)
        d = admit(self.candidates(model), n_ctx or self.settings.llm.n_ctx, mem,
                  cache_type=self.gs.kv_cache_type, overhead_mib=self.gs.pipeline_overhead_mib,
                  mem_fraction=self.gs.mem_fraction, min_n_ctx=self.gs.min_n_ctx,
                  ram_mib=ram if isinstance(ram, (int, float)) else None, manifest_path=self.manifest_path,
                  models_dir=getattr(getattr(self.settings, "models", None), "dir", None))
        self.decision = d
        return d

    # -- LLM loading ----------------------------------------------------------------------------
    def llm_loader(self) -> Callable[[], Any]:
        """A ``load()`` for :class:`IdleUnloader`: admits (raising :class:`AdmissionError` with the
        numbers before anything loads), then builds a :class:`edge.llm.llamacpp.LlamaCppEngine`
        with the admitted model and n_ctx and the plan's thread count."""
        def load():
            d = self.admit()
            if not d.admitted:
                raise AdmissionError(d)
            from edge.llm.llamacpp import LlamaCppEngine

            threads = max(1, min(self.plan().llm_threads or 1, self.settings.llm.threads))
            return LlamaCppEngine(d.model, n_ctx=d.n_ctx, threads=threads, seed=self.settings.llm.seed)
        return load

    def idle_unloader(self, load: Callable[[], Any] | None = None) -> IdleUnloader:
        """An :class:`IdleUnloader` with ``governor.idle_unload_s``, this governor's clock, and
        callbacks that keep :meth:`status` / :meth:`metrics` current (loaded, last reload ms)."""
        return IdleUnloader(load or self.llm_loader(), self.gs.idle_unload_s, clock=self.clock,
                            on_load=self._on_load, on_unload=self._on_unload)

    def _on_load(self, ms: float) -> None:
        self.llm_loaded = True
        self.last_reload_ms = ms

    def _on_unload(self, idle_s: float) -> None:
        self.llm_loaded = False

    # -- reporting ------------------------------------------------------------------------------
    def reasons(self) -> list[str]:
        """Why things are as they are: the thermal level, the admission, unknown signals."""
        out = [f"thermal: {self.thermal.reason}"]
        if self.decision is not None:
            out.append(f"memory: {self.decision.reason}")
        if self.snapshot is not None:
            out += [f"signal unknown: {p}" for p in self.snapshot.problems]
        return out

    def engines(self) -> dict:
        """The configured engines and what admission chose."""
        s = self.settings
        llm: dict[str, Any] = {"engine": s.llm.engine, "model": s.llm.model, "n_ctx": s.llm.n_ctx}
        chain = getattr(s.llm, "chain", None)
        if chain:
            llm["chain"] = [c.model_dump(mode="json") for c in chain]
        if self.decision is not None:
            llm["admitted"] = self.decision.admitted
            llm["chosen_model"] = self.decision.model
            llm["chosen_n_ctx"] = self.decision.n_ctx
            llm["admission"] = self.decision.to_dict()
        asr = {"engine": s.asr.engine}
        sub = getattr(s.asr, s.asr.engine, None)
        if sub is not None and hasattr(sub, "model"):
            asr["model"] = sub.model
        return {"asr": asr, "llm": llm, "tts": {"engine": s.tts.engine}}

    def status(self) -> dict:
        """Everything for ``edge status --json``: level, reasons, signals, thresholds, engines,
        thread plan, limits, power mode, LLM load state. JSON-ready."""
        snap = self.snapshot
        return {
            "board": self.board.name,
            "power_mode": self.power_mode,
            "level": self.level,
            "level_value": self.thermal.level,
            "reasons": self.reasons(),
            "signals": snap.to_dict() if snap else None,
            "thresholds": [t.to_dict() for t in self.thresholds],
            "engines": self.engines(),
            "thread_plan": self.plan().to_dict(),
            "limits": self.limits().to_dict(),
            "llm": {"loaded": self.llm_loaded, "last_reload_ms": self.last_reload_ms,
                    "idle_unload_s": self.gs.idle_unload_s},
        }

    def metrics(self) -> dict[str, float]:
        """The same figures as :meth:`status`, Prometheus-style: ``{"name{label=\\"v\\"}": value}``.

        Names (units in the name, ratios 0..1): ``edge_thermal_level`` (0 normal, 1 warm, 2 hot),
        ``edge_thermal_level_changes_total``, ``edge_temperature_celsius{zone}``,
        ``edge_thermal_threshold_celsius{zone,level}``, ``edge_mem_total_bytes``,
        ``edge_mem_available_bytes``, ``edge_cpu_load_ratio{cpu}``, ``edge_cpu_freq_hertz{policy}``,
        ``edge_npu_load_ratio{core}``, ``edge_npu_freq_hertz``, ``edge_npu_max_freq_hertz``,
        ``edge_power_watts{sensor}``, ``edge_llm_threads``, ``edge_llm_allowed``,
        ``edge_llm_max_tokens``, ``edge_llm_token_pacing_ms``, ``edge_llm_loaded``,
        ``edge_llm_reload_ms``, ``edge_llm_admitted``, ``edge_llm_n_ctx``,
        ``edge_llm_estimate_bytes``, ``edge_mem_budget_bytes``, ``edge_power_mode{mode}``,
        ``edge_signal_problems``. Unknown values are left out, not reported as 0.
        """
        m: dict[str, float] = {}
        m["edge_thermal_level"] = float(self.thermal.level)
        m["edge_thermal_level_changes_total"] = float(self.thermal.changes)
        for mode in POWER_MODES:
            m[f'edge_power_mode{{mode="{mode}"}}'] = 1.0 if mode == self.power_mode else 0.0
        snap = self.snapshot
        if snap is not None:
            for z, th in zip(snap.zones, self.thresholds):
                if z.temp_c is not None:
                    m[f'edge_temperature_celsius{{zone="{_label(th.zone)}"}}'] = z.temp_c
            for th in self.thresholds:
                m[f'edge_thermal_threshold_celsius{{zone="{_label(th.zone)}",level="warm"}}'] = th.warm_c
                m[f'edge_thermal_threshold_celsius{{zone="{_label(th.zone)}",level="hot"}}'] = th.hot_c
            if snap.mem.total_bytes is not None:
                m["edge_mem_total_bytes"] = float(snap.mem.total_bytes)
            if snap.mem.available_bytes is not None:
                m["edge_mem_available_bytes"] = float(snap.mem.available_bytes)
            for cpu, r in snap.cpu_load.items():
                m[f'edge_cpu_load_ratio{{cpu="{_label(cpu)}"}}'] = r
            for pol in snap.policies:
                if pol.cur_khz is not None:
                    m[f'edge_cpu_freq_hertz{{policy="{_label(pol.name)}"}}'] = pol.cur_khz * 1000.0
            if snap.npu_load is not None:
                for core, r in snap.npu_load.cores.items():
                    m[f'edge_npu_load_ratio{{core="{_label(core)}"}}'] = r
            if snap.npu_devfreq is not None:
                if snap.npu_devfreq.cur_hz is not None:
                    m["edge_npu_freq_hertz"] = float(snap.npu_devfreq.cur_hz)
                if snap.npu_devfreq.max_hz is not None:
                    m["edge_npu_max_freq_hertz"] = float(snap.npu_devfreq.max_hz)
            for pw in snap.power:
                m[f'edge_power_watts{{sensor="{_label(pw.key)}"}}'] = pw.watts
            m["edge_signal_problems"] = float(len(snap.problems))
        lim = self.limits()
        m["edge_llm_threads"] = float(lim.llm_threads)
        m["edge_llm_allowed"] = 1.0 if lim.llm_allowed else 0.0
        m["edge_llm_max_tokens"] = float(lim.max_tokens)
        m["edge_llm_token_pacing_ms"] = float(lim.token_pacing_ms)
        m["edge_llm_loaded"] = 1.0 if self.llm_loaded else 0.0
        if self.last_reload_ms is not None:
            m["edge_llm_reload_ms"] = float(self.last_reload_ms)
        d = self.decision
        if d is not None:
            m["edge_llm_admitted"] = 1.0 if d.admitted else 0.0
            if d.n_ctx is not None:
                m["edge_llm_n_ctx"] = float(d.n_ctx)
            if d.estimate is not None:
                m["edge_llm_estimate_bytes"] = float(d.estimate.total_bytes)
            if d.budget_bytes is not None:
                m["edge_mem_budget_bytes"] = float(d.budget_bytes)
        return m


def format_status(st: dict) -> str:
    """:meth:`Governor.status` as readable lines (``edge status`` without ``--json``)."""
    lines = [f"board {st['board']}, power mode {st['power_mode']}: level {st['level'].upper()}"]
    sig = st.get("signals") or {}
    mem = sig.get("mem") or {}
    lines.append(f"memory: MemTotal {_mib(mem.get('total_bytes'))}, MemAvailable {_mib(mem.get('available_bytes'))}")
    load = (sig.get("cpu") or {}).get("load") or {}
    if load:
        lines.append("cpu load: " + ", ".join(f"{k} {v * 100:.0f} %" for k, v in load.items()))
    for pol in (sig.get("cpu") or {}).get("policies") or []:
        cur = pol.get("cur_khz")
        lines.append(f"cpufreq {pol['name']} (CPUs {pol['cpus']}): "
                     f"{'unknown' if cur is None else f'{cur / 1000:.0f} MHz'}, {pol.get('governor') or '?'}")
    ths = st.get("thresholds") or []
    for i, z in enumerate(sig.get("thermal") or []):
        t = z.get("temp_c")
        th = ths[i] if i < len(ths) else None  # same order: both come from the same reading
        extra = f" (warm {th['warm_c']:.1f}, hot {th['hot_c']:.1f} °C)" if th else ""
        name = th["zone"] if th else (z.get("type") or z["name"])
        lines.append(f"thermal {name}: {'unknown' if t is None else f'{t:.1f} °C'}{extra}")
    npu = sig.get("npu") or {}
    if npu.get("load"):
        lines.append("npu load: " + ", ".join(f"{k} {v * 100:.0f} %" for k, v in npu["load"].items()))
    df = npu.get("devfreq")
    if df and df.get("cur_hz"):
        lines.append(f"npu clock: {df['cur_hz'] / 1e6:.0f} MHz of {(df.get('max_hz') or 0) / 1e6:.0f} MHz, "
                     f"{df.get('governor') or '?'}")
    for p in sig.get("power") or []:
        lines.append(f"power {p.get('name') or p['hwmon']}/{p.get('label') or p['channel']}: {p['watts']:.2f} W")
    llm = st["engines"]["llm"]
    chosen = ""
    if "admitted" in llm:
        chosen = (f"; admitted {llm['chosen_model']} n_ctx {llm['chosen_n_ctx']}" if llm["admitted"]
                  else "; NOT admitted")
    lines.append(f"engines: asr {st['engines']['asr'].get('engine')} {st['engines']['asr'].get('model', '')}, "
                 f"llm {llm['engine']} {llm['model']} n_ctx {llm['n_ctx']}{chosen}, tts {st['engines']['tts']['engine']}")
    tp = st["thread_plan"]
    lines.append(f"threads: {tp['llm_threads']} LLM on CPUs {tp['llm_cpus']}, audio on CPUs {tp['audio_cpus']}")
    lim = st["limits"]
    lines.append(f"limits: llm {'allowed' if lim['llm_allowed'] else 'OFF (grammar only)'}, max_tokens "
                 f"{lim['max_tokens']}, pacing {lim['token_pacing_ms']} ms" +
                 (f", notice {lim['notice']!r}" if lim.get("notice") else ""))
    lines.append("reasons:")
    lines += [f"  - {r}" for r in st["reasons"]]
    return "\n".join(lines)
