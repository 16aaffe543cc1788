"""Retrieval: BM25 (SQLite FTS5) and, when the index has vectors, cosine similarity of sentence
embeddings; the two rankings fused by reciprocal rank fusion (RRF, k = 60: Cormack, Clarke and
Büttcher, SIGIR 2009).

How sure a hit is does not come from the fused rank (ranks say nothing about whether the documents
answer at all) but from :func:`coverage`: the share of the question's content words, weighted by
their rarity in the index (IDF), that the passage holds — a question about words the documents
never use scores near 0 — blended with the cosine similarity when vectors exist.
"""
from __future__ import annotations

import math
import re
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from threadpoolctl import ThreadpoolController

from edge.stages.docs.index import TOKENIZER, DocsIndex, StoredChunk

#: RRF's constant.
RRF_K = 60
#: Candidates each ranking contributes to the fusion.
CANDIDATES = 40
#: FTS5 bm25 column weights: title, section headings, text.
BM25_WEIGHTS = (2.0, 3.0, 1.0)
#: Question words that say nothing about the topic ("what does the manual say about …").
STOPWORDS = frozenset("""
a an the and or but if of to in on at by for with from into onto about as is are was were be been being
do does did doing done can could should would will shall may might must have has had having not no nor
what which who whom whose when where why how i me my we our you your it its this that these those there
here then than so such too very just also any some all each every other more most own same only
say says said tell tells told explain explains describe describes mean means meaning
manual manuals documentation docs doc document documents guide page pages man section sections
according instructions instruction please know find show give want need use using used get
""".split())
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*[A-Za-z0-9+]|[A-Za-z0-9]")


def terms(text: str) -> list[str]:
    """The content words of a question, lower-case, in order, without duplicates or stopwords."""
    words = [w.lower().strip(".") for w in _WORD.findall(text)]
    return list(dict.fromkeys(w for w in words if w and w not in STOPWORDS and len(w) > 1 or w.isdigit()))


def fts_query(words: list[str]) -> str:
    """An FTS5 query matching any of ``words`` (each quoted: ``-`` and ``.`` are not operators)."""
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk: ``fused`` RRF score, its ranks (1-based, None when the ranking did
    not return it), ``cosine`` (None without vectors), ``confidence`` in [0, 1] (set for the
    first hits only, see :func:`search`)."""

    stored: StoredChunk
    fused: float
    bm25_rank: int | None
    vector_rank: int | None
    cosine: float | None
    confidence: float


class Retriever:
    """Searches one :class:`DocsIndex` (its encoder embeds the question, in a worker thread while
    BM25 runs: the encoder and SQLite both release the GIL)."""

    def __init__(self, index: DocsIndex):
        self.index = index
        # One BLAS thread for the vector product too: at 10,000 chunks two OpenBLAS threads took
        # 14 ms for what one does in 5, and kept spinning against the next question's encoding
        # (measured here under load: the embedding 52 ms after a two-thread product, 25 after one).
        self._threads = ThreadpoolController() if index.encoder is not None else None
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="docs-embed") if index.encoder is not None else None
        self._df = lru_cache(maxsize=4096)(self._doc_freq)
        self._count: tuple[str | None, int] = (None, 0)  # (write counter, chunks)
        # a few candidate chunks are matched term by term in a small in-memory FTS5 table with the
        # index's tokenizer: restricting a MATCH on the big table to a few rowids still walks
        # each term's whole posting list (~5 ms a term at 10,000 chunks)
        self._probe = sqlite3.connect(":memory:", check_same_thread=False)
        self._probe.execute(f"CREATE VIRTUAL TABLE probe USING fts5(title, section, text, tokenize = '{TOKENIZER}')")

    def close(self) -> None:
        """Stop the embedding thread (the index stays open: it is the caller's)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        self._probe.close()

    def _doc_freq(self, word: str, writes: str) -> int:
        with self.index.lock:
            return self.index.db.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?",
                                         (fts_query([word]),)).fetchone()[0]

    def idf(self, word: str, n: int, writes: str) -> float:
        """log((N + 1) / (df + 0.5)): a word the index never holds weighs most."""
        return math.log((n + 1) / (self._df(word, writes) + 0.5))

    def bm25(self, words: list[str], limit: int = CANDIDATES) -> list[int]:
        """Chunk ids by BM25, best first."""
        if not words:
            return []
        w = ", ".join(str(x) for x in BM25_WEIGHTS)
        with self.index.lock:
            rows = self.index.db.execute(f"SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? "
                                         f"ORDER BY bm25(chunks_fts, {w}) LIMIT ?", (fts_query(words), limit)).fetchall()
        return [r[0] for r in rows]

    def embed(self, question: str) -> np.ndarray | None:
        """The question's unit vector (384,), None without an encoder."""
        if self.index.encoder is None:
            return None
        return np.asarray(self.index.encoder.encode([question]), dtype=np.float32)[0]

    def vector(self, question: str, limit: int = CANDIDATES,
               qvec: np.ndarray | None = None) -> tuple[list[int], dict[int, float]]:
        """Chunk ids by cosine similarity to the question (``qvec``: its vector, if already
        embedded), best first, and their cosines."""
        if self.index.encoder is None:
            return [], {}
        ids, mat = self.index.vectors()
        if not len(ids):
            return [], {}
        q = self.embed(question) if qvec is None else qvec
        with self._threads.limit(limits=1, user_api="blas"):
            sims = mat @ q
        if len(sims) > limit:  # a partial sort: the top ``limit`` of 10,000 without ordering the rest
            part = np.argpartition(-sims, limit)[:limit]
            top = part[np.argsort(-sims[part])]
        else:
            top = np.argsort(-sims)
        return [int(ids[i]) for i in top], {int(ids[i]): float(sims[i]) for i in top}

    def coverage(self, words: list[str], chunk_ids: list[int]) -> dict[int, float]:
        """Per chunk: the IDF-weighted share of ``words`` it holds (FTS5 matching, so stemmed)."""
        if not words or not chunk_ids:
            return {c: 0.0 for c in chunk_ids}
        with self.index.lock:
            row = self.index.db.execute("SELECT value FROM meta WHERE key = 'writes'").fetchone()
            writes = row[0] if row else "0"
            if self._count[0] != writes:  # counting an FTS5 table reads all of it: once per write
                self._count = (writes, self.index.db.execute("SELECT count(*) FROM chunks").fetchone()[0])
        n = self._count[1]
        weights = {w: self.idf(w, n, writes) for w in words}
        total = sum(weights.values()) or 1.0
        got = dict.fromkeys(chunk_ids, 0.0)
        q = ",".join("?" * len(chunk_ids))
        with self.index.lock:
            rows = self.index.db.execute(f"SELECT rowid, title, section, text FROM chunks_fts WHERE rowid IN ({q})",
                                         chunk_ids).fetchall()
            with self._probe:
                self._probe.execute("DELETE FROM probe")
                self._probe.executemany("INSERT INTO probe(rowid, title, section, text) VALUES (?,?,?,?)", rows)
            for w, wt in weights.items():
                for (cid,) in self._probe.execute("SELECT rowid FROM probe WHERE probe MATCH ?", (fts_query([w]),)):
                    got[cid] += wt
        return {c: v / total for c, v in got.items()}

    def search(self, question: str, k: int = 5, judged: int = 3, qvec: np.ndarray | None = None) -> list[Hit]:
        """The ``k`` best chunks for ``question``, fused ranking; the first ``judged`` carry a
        :func:`confidence` (the others 0). ``qvec``: the question's vector when already embedded."""
        words = terms(question)
        if qvec is None and self._pool is not None and len(self.index.vectors()[0]):
            pending = self._pool.submit(self.embed, question)
            lexical = self.bm25(words)
            qvec = pending.result()
        else:
            lexical = self.bm25(words)
        semantic, cos = self.vector(question, qvec=qvec)
        fused: dict[int, float] = {}
        for ranking in (lexical, semantic):
            for r, cid in enumerate(ranking, 1):
                fused[cid] = fused.get(cid, 0.0) + 1.0 / (RRF_K + r)
        best = sorted(fused, key=lambda c: -fused[c])[:k]
        stored = self.index.chunks(best)
        cover = self.coverage(words, best[:judged])
        lrank = {c: r for r, c in enumerate(lexical, 1)}
        vrank = {c: r for r, c in enumerate(semantic, 1)}
        hits = []
        for cid in best:
            conf = confidence(cover[cid], cos.get(cid)) if cid in cover else 0.0
            hits.append(Hit(stored[cid], fused[cid], lrank.get(cid), vrank.get(cid), cos.get(cid), conf))
        return hits


#: Cosine similarity (all-MiniLM-L6-v2) mapped to [0, 1]: at or below LOW it says nothing, at HIGH all.
COSINE_LOW, COSINE_HIGH = 0.15, 0.65


def confidence(cover: float, cosine: float | None) -> float:
    """How sure a hit answers the question, in [0, 1]: the word coverage alone without vectors,
    else the mean of the coverage and the rescaled cosine."""
    if cosine is None:
        return cover
    c = min(1.0, max(0.0, (cosine - COSINE_LOW) / (COSINE_HIGH - COSINE_LOW)))
    return 0.5 * (cover + c)


__all__ = ["Hit", "Retriever", "confidence", "fts_query", "terms"]
