"""What sizes a model's KV cache, read from a GGUF file's header: :class:`ModelShape`,
:func:`gguf_metadata`, :func:`shape_from_gguf_metadata`, and :func:`kv_cache_bytes` (the bytes of
llama.cpp's K and V caches for a context length).

A leaf: the governor's memory admission (:mod:`edge.governor.admission`) and the llama.cpp engine
(:mod:`edge.llm.llamacpp`) both read shapes from here. llama-cpp-python is imported only when a
GGUF header is read.
"""
from __future__ import annotations

import ctypes
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from edge.errors import UserError

#: Bytes per element of each llama.cpp KV cache type, from ggml's block layouts
#: (``ggml/src/ggml-common.h``): f16 = 2 bytes; ``block_q8_0`` = one fp16 scale + 32 int8 = 34 bytes
#: per 32 elements = 1.0625; ``block_q4_0`` = one fp16 scale + 16 bytes of 4-bit pairs = 18 bytes
#: per 32 elements = 0.5625. Checked against llama.cpp's own log (llama-cpp-python 0.3.36) for
#: SmolLM2-135M at n_ctx 2048: "llama_kv_cache: size = 45.00 MiB" (f16), 23.91 MiB (q8_0),
#: 12.66 MiB (q4_0) — exactly what :func:`kv_cache_bytes` gives.
KV_BYTES_PER_ELEMENT = {"f16": 2.0, "q8_0": 34 / 32, "q4_0": 18 / 32}


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
