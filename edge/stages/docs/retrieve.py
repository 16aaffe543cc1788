"""Retrieval: BM25 (SQLite FTS5), the chunks that hold the question's option names, setting names
and numbers exactly (:func:`literals`: "-s", "max_queued_messages", "5433" — FTS5's tokenizer
drops a lone "-s" and splits "pg_ctl"), and, when the index has vectors, cosine similarity of
sentence embeddings; the rankings fused by reciprocal rank fusion (RRF, k = 60: Cormack, Clarke
and Büttcher, SIGIR 2009), then the first :data:`RERANK` candidates reranked by their
:func:`confidence` (plus :data:`TERM_BONUS` for the entry that defines an option the question
names), so the passage that answers comes first, not the first one near it.

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

from edge.stages.docs.chunk import entry_term
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
#: an option ("-s", "--no-wait"), a name with an underscore, dot, dollar or slash ("pg_ctl",
#: "postmaster.pid", "$SYS"), or a number ("5433", "1.2")
_LITERAL = re.compile(r"(?<![\w-])(--?[A-Za-z?][\w-]*|\$?[A-Za-z][\w$]*[_.$/][\w$./-]*[\w]|\$[A-Za-z]\w*|"
                      r"\d+(?:\.\d+)?)(?![\w])")
_TERM_OPTION = re.compile(r"(?<![\w-])--?[A-Za-z0-9?#][\w-]*(?:=\S*)?")
#: fused candidates reranked by confidence (and literal candidates added to them)
RERANK = 20
#: rank bonus of an entry whose term holds an option the question names ("-s <integer>: …" for "-s")
TERM_BONUS = 0.15


def terms(text: str) -> list[str]:
    """The content words of a question, lower-case, in order, without duplicates or stopwords."""
    words = [w.lower().strip(".") for w in _WORD.findall(text)]
    return list(dict.fromkeys(w for w in words if w and w not in STOPWORDS and len(w) > 1 or w.isdigit()))


def literals(text: str) -> list[str]:
    """The option names, setting names and numbers of a question, as written, in order, without
    duplicates ("What does pg_ctl -c do?" → ["pg_ctl", "-c"])."""
    return list(dict.fromkeys(m.group(1).rstrip(".") for m in _LITERAL.finditer(text)))


def literal_pattern(lit: str) -> re.Pattern:
    """``lit`` as a whole token: "-s" not inside "--stdin" or "-stop", "10" not inside "100"."""
    return re.compile(r"(?<![\w-])" + re.escape(lit) + r"(?![\w-])" if lit.startswith("-")
                      else r"(?<![\w$-])" + re.escape(lit) + r"(?![\w])")


def fts_query(words: list[str]) -> str:
    """An FTS5 query matching any of ``words`` (each quoted: ``-`` and ``.`` are not operators)."""
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk: ``fused`` RRF score, its ranks (1-based, None when the ranking did
    not return it), ``cosine`` (None without vectors), ``confidence`` in [0, 1] (see
    :func:`confidence`)."""

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
        self._lit = lru_cache(maxsize=1024)(self._literal_ids)
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

    def _literal_ids(self, lit: str, writes: str) -> tuple[int, ...]:
        """Ids of the chunks holding ``lit`` as a whole token in their document title, headings or
        text (a substring scan, then the pattern)."""
        pat = literal_pattern(lit)
        with self.index.lock:
            rows = self.index.db.execute("SELECT id, title || ' ' || path || ' ' || text AS t FROM chunks "
                                         "WHERE instr(t, ?) > 0", (lit,)).fetchall()
        return tuple(cid for cid, text in rows if pat.search(text))

    def literal_hits(self, lits: list[str], writes: str) -> dict[str, tuple[int, ...]]:
        """Per literal, the chunks that hold it (cached until the index is written)."""
        return {lit: self._lit(lit, writes) for lit in lits}

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

    def _writes(self) -> tuple[str, int]:
        """The index's write counter and its chunk count (counted once per write)."""
        with self.index.lock:
            row = self.index.db.execute("SELECT value FROM meta WHERE key = 'writes'").fetchone()
            writes = row[0] if row else "0"
            if self._count[0] != writes:  # counting an FTS5 table reads all of it: once per write
                self._count = (writes, self.index.db.execute("SELECT count(*) FROM chunks").fetchone()[0])
        return writes, self._count[1]

    def coverage(self, words: list[str], chunk_ids: list[int], lits: dict[str, tuple[int, ...]] | None = None
                 ) -> dict[int, float]:
        """Per chunk: the IDF-weighted share of ``words`` (FTS5 matching, so stemmed) and of the
        literals ``lits`` (each with the chunks that hold it exactly) it holds."""
        lits = lits or {}
        if not (words or lits) or not chunk_ids:
            return {c: 0.0 for c in chunk_ids}
        writes, n = self._writes()
        weights = {w: self.idf(w, n, writes) for w in words}
        lit_weights = {lit: math.log((n + 1) / (len(ids) + 0.5)) for lit, ids in lits.items()}
        total = (sum(weights.values()) + sum(lit_weights.values())) or 1.0
        got = dict.fromkeys(chunk_ids, 0.0)
        for lit, ids in lits.items():
            for cid in set(ids) & got.keys():
                got[cid] += lit_weights[lit]
        if words:
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

    def cosines(self, qvec: np.ndarray | None, chunk_ids: list[int]) -> dict[int, float]:
        """Cosine similarity of ``qvec`` to each chunk that has a vector."""
        if qvec is None:
            return {}
        ids, mat = self.index.vectors()
        if not len(ids):
            return {}
        pos = np.searchsorted(ids, chunk_ids)
        return {c: float(mat[p] @ qvec) for c, p in zip(chunk_ids, pos, strict=True) if p < len(ids) and ids[p] == c}

    def search(self, question: str, k: int = 5, judged: int = RERANK, qvec: np.ndarray | None = None) -> list[Hit]:
        """The ``k`` best chunks for ``question``: the fused ranking's first ``judged`` (with the
        chunks holding the question's literals) reranked by :func:`confidence` plus
        :data:`TERM_BONUS` where an entry's term defines a literal; ties keep the fused order. The
        candidate closest by cosine takes the last of the ``k`` seats when the rerank left it out.
        ``qvec``: the question's vector when already embedded."""
        lits = literals(question)
        lowered = {x.lower() for x in lits}
        words = [w for w in terms(question) if w not in lowered]
        if qvec is None and self._pool is not None and len(self.index.vectors()[0]):
            pending = self._pool.submit(self.embed, question)
            lexical = self.bm25(words + [x for x in lits if not x.startswith("-")])
            qvec = pending.result()
        else:
            lexical = self.bm25(words + [x for x in lits if not x.startswith("-")])
        semantic, _ = self.vector(question, qvec=qvec)
        writes, _n = self._writes()
        held = self.literal_hits(lits, writes)
        exact = sorted({c for ids in held.values() for c in ids},
                       key=lambda c: -sum(c in ids for ids in held.values()))[:CANDIDATES]
        fused: dict[int, float] = {}
        for ranking in (lexical, semantic, exact):
            for r, cid in enumerate(ranking, 1):
                fused[cid] = fused.get(cid, 0.0) + 1.0 / (RRF_K + r)
        order = sorted(fused, key=lambda c: -fused[c])
        pool = order[:max(judged, k)]
        pool += [c for c in exact[:5] + semantic[:3] if c not in pool]  # an option's own entry, the closest by meaning
        stored = self.index.chunks(pool)
        cover = self.coverage(words, pool, {lit: ids for lit, ids in held.items() if ids})
        cos = self.cosines(qvec, pool)
        lrank = {c: r for r, c in enumerate(lexical, 1)}
        vrank = {c: r for r, c in enumerate(semantic, 1)}
        hits = []
        for cid in pool:
            conf = confidence(cover[cid], cos.get(cid))
            hits.append(Hit(stored[cid], fused[cid], lrank.get(cid), vrank.get(cid), cos.get(cid), conf))
        hits.sort(key=lambda h: -(rank_score(cover[h.stored.id], h.cosine) + TERM_BONUS * defines(h.stored.chunk.text, lits, h.stored.chunk.title)))
        closest = max((h for h in hits if h.cosine is not None), key=lambda h: h.cosine, default=None)
        if k > 1 and closest is not None and closest not in hits[:k]:
            # the words can miss what the meaning finds ("how fast" → "Speed in words per minute"):
            # the closest passage by meaning keeps the last seat, for the model to choose from
            return hits[:k - 1] + [closest]
        return hits[:k]


def rank_score(cover: float, cosine: float | None) -> float:
    """The rerank key: like :func:`confidence`, but the cosine rescaled up to :data:`RANK_COSINE_HIGH`
    (:data:`COSINE_HIGH` saturates at the similarity where a passage is surely on topic; among
    candidates that all are, the closer one should still win)."""
    if cosine is None:
        return cover
    return (1 - RANK_COSINE_WEIGHT) * cover + RANK_COSINE_WEIGHT * max(0.0, (cosine - COSINE_LOW) / (RANK_COSINE_HIGH - COSINE_LOW))


def defines(text: str, lits: list[str], title: str = "") -> bool:
    """Whether ``text`` is the entry of an option or setting the question names: its term's first
    name or one of its option names is a literal ("-c, --core-files: …" for "-c"). The document's
    own name ("pg_ctl" in pg_ctl(1)) says which document, not which entry: it does not count."""
    term = entry_term(text)
    own = re.sub(r"\(\w+\)$", "", title)
    lits = [x for x in lits if x != own]
    if term is None or not lits:
        return False
    first = term.split()[0].rstrip(",|")
    names = {first} | {m.split("=")[0] for m in _TERM_OPTION.findall(term)}
    return any(x in names for x in lits if x.startswith("-") or x == first)


#: Cosine similarity (all-MiniLM-L6-v2) mapped to [0, 1]: at or below LOW it says nothing, at HIGH all.
COSINE_LOW, COSINE_HIGH = 0.15, 0.65
#: The rerank's cosine scale's top and the cosine's weight in it (see :func:`rank_score`).
RANK_COSINE_HIGH, RANK_COSINE_WEIGHT = 0.85, 0.5


def confidence(cover: float, cosine: float | None) -> float:
    """How sure a hit answers the question, in [0, 1]: the word coverage alone without vectors,
    else the mean of the coverage and the rescaled cosine."""
    if cosine is None:
        return cover
    c = min(1.0, max(0.0, (cosine - COSINE_LOW) / (COSINE_HIGH - COSINE_LOW)))
    return 0.5 * (cover + c)


__all__ = ["Hit", "Retriever", "confidence", "defines", "fts_query", "literals", "terms"]
