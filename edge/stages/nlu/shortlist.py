"""A bounded item lookup: the few inventory items an utterance may be about, from thousands.

:class:`Shortlist` keeps an in-memory SQLite FTS5 index (``trigram`` tokenizer, so "washerz" still
shares most of its trigrams with "washer", and Chinese names index as character trigrams) over each
item's name, aliases, family and size, built once per inventory. :meth:`Shortlist.shortlist` asks it
for the best :data:`POOL` rows by BM25 over the utterance's content-word trigrams, then reranks those
with ``rapidfuzz`` (token-set ratio against the name and aliases) and returns the top ``k``. The cost
per utterance is the index lookup plus ``POOL`` comparisons, whatever the inventory size.

Used by the item resolver's fuzzy step (:mod:`edge.stages.nlu.resolve`) and by the LLM prompt, which
lists only the shortlisted items.
"""
from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable

from rapidfuzz import fuzz

from edge.stages.names import name_key
from edge.stages.nlu.lexicon import NOT_ITEM
from edge.stages.sizes import split_size

#: rows taken from the index before the rapidfuzz rerank
POOL = 40


class Shortlist:
    """The FTS5 + rapidfuzz shortlist of ``items`` (objects with ``sku``, ``item``, ``aliases``;
    :class:`edge.stock.store.Item`). Built once; thread-safe for reads (one connection, serialized)."""

    def __init__(self, items: Iterable):
        self.items = list(items)
        self._by_rowid = {}
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._lock = threading.Lock()  # the voice loop's speculation and the turn may ask at once
        self._db.execute("CREATE VIRTUAL TABLE f USING fts5(name, aliases, family, size, tokenize='trigram')")
        rows = []
        for n, it in enumerate(self.items, 1):
            family, size = split_size(it.item)
            self._by_rowid[n] = it
            rows.append((n, name_key(it.item), " | ".join(name_key(a) for a in it.aliases), name_key(family),
                         name_key(size.text)))
        self._db.executemany("INSERT INTO f(rowid, name, aliases, family, size) VALUES (?, ?, ?, ?, ?)", rows)
        self._keys = {n: [name_key(it.item), *(name_key(a) for a in it.aliases)] for n, it in self._by_rowid.items()}

    def _query(self, words: list[str]) -> str | None:
        grams = set()
        for w in words:
            if len(w) >= 3:
                grams.update(w[i:i + 3] for i in range(len(w) - 2))
        grams = {g for g in grams if '"' not in g}
        return " OR ".join(f'"{g}"' for g in sorted(grams)) or None

    def rows(self, text: str, pool: int = POOL) -> list[int]:
        """Row ids of the best ``pool`` items for ``text`` by BM25 (name weighted over aliases)."""
        words = [w for w in name_key(text).split() if w not in NOT_ITEM and not w.isdigit()]
        q = self._query(words)
        if q is None:
            return []
        try:
            with self._lock:
                return [r[0] for r in self._db.execute(
                    "SELECT rowid FROM f WHERE f MATCH ? ORDER BY bm25(f, 4.0, 2.0, 2.0, 1.0) LIMIT ?", (q, pool))]
        except sqlite3.OperationalError:
            return []

    def shortlist(self, text: str, k: int = 8) -> list:
        """The ``k`` items ``text`` most likely names, best first (may be fewer, or empty when no
        word of ``text`` shares a trigram with any name). Raises nothing."""
        key = name_key(text)
        scored = []
        for rowid in self.rows(text):
            score = max(fuzz.token_set_ratio(key, name) for name in self._keys[rowid])
            scored.append((-score, rowid))
        scored.sort()
        return [self._by_rowid[r] for _, r in scored[:k]]
