"""The documents' index: one SQLite file in the store's folder (``docs.db`` by default).

Tables: ``files`` (path, SHA-256, kind, title, chunks, the
:data:`FORMAT` and encoder it was read with), ``chunks`` (title, section path, page,
text, and the sentence embedding as a float32 BLOB when an encoder is given), ``chunks_fts``
(FTS5, porter stemming: title, section, text) and ``meta`` (a write counter that tells readers
in other processes to reload the vectors). Adding is incremental: a file whose
SHA-256 is unchanged is not read again. Vectors are searched with numpy over the BLOBs (this
Python's sqlite3 cannot load extensions, so sqlite-vec is not used; 10,000 × 384 float32 is
15 MiB and one matrix product).
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import sqlite3
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from edge.errors import UserError
from edge.models.embed import EmbedError, Encoder
from edge.stages.docs.chunk import Chunk, chunk_document
from edge.stages.docs.parse import DocParseError, Document, kind_of, parse_file

if TYPE_CHECKING:
    from edge.config import Settings

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
  id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, sha256 TEXT NOT NULL, kind TEXT NOT NULL,
  title TEXT NOT NULL, chunks INTEGER NOT NULL, indexed_at REAL NOT NULL,
  format TEXT NOT NULL, encoder TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks(
  id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  ord INTEGER NOT NULL, title TEXT NOT NULL, path TEXT NOT NULL, page INTEGER, text TEXT NOT NULL, vec BLOB);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(title, section, text,
  tokenize = 'porter unicode61 remove_diacritics 2');
"""
#: The FTS5 tokenizer of ``chunks_fts`` (English stemming; accents folded).
TOKENIZER = "porter unicode61 remove_diacritics 2"
#: Chunks embedded per encoder call.
EMBED_BATCH = 32
#: The parsers' and chunker's version: a file indexed by another version is read again.
FORMAT = "3"


class DocsIndexError(UserError):
    """The index file cannot be opened or written; the message names it and the fix."""


class TextEncoder(Protocol):
    """What the index needs of a sentence encoder: ``encode(texts) -> (n, dim) float32``, rows
    L2-normalised; ``name`` identifies the model (vectors of another model are rebuilt)."""

    def encode(self, texts: list[str]) -> np.ndarray: ...


def encoder_name(encoder: TextEncoder | None) -> str:
    """What identifies the encoder's vectors: its ``name``, else its class ("edge.models.embed.Encoder")."""
    if encoder is None:
        return ""
    return str(getattr(encoder, "name", "") or f"{type(encoder).__module__}.{type(encoder).__name__}")


def embed_text(c: Chunk, summary: str = "") -> str:
    """What is embedded for a chunk: its document's title (and summary) and headings give the
    passage its topic."""
    return f"{summary or c.title}. {' / '.join(c.path)}. {c.text}"


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass
class AddReport:
    """What one add or reindex did: files ``added``, ``updated``, ``unchanged``, ``removed``
    (paths), ``failed`` ``[(path, reason)]``, ``skipped`` (files in a folder no reader fits),
    ``chunks`` written, ``seconds``."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    skipped: int = 0
    chunks: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {"added": self.added, "updated": self.updated, "unchanged": len(self.unchanged),
                "removed": self.removed, "failed": [{"path": p, "reason": r} for p, r in self.failed],
                "skipped": self.skipped, "chunks": self.chunks, "seconds": round(self.seconds, 2)}


@dataclass(frozen=True)
class StoredChunk:
    """A chunk as stored: its row ``id``, the file's ``source`` path and ``kind``, and the chunk."""

    id: int
    source: str
    kind: str
    chunk: Chunk


def expand(paths: Iterable[str | Path]) -> tuple[list[Path], list[tuple[str, str]], int]:
    """``(files to read, [(path, reason)] for named paths that cannot be, files skipped in folders)``.
    A folder is walked recursively; its files that no reader fits are skipped, not failed."""
    files: list[Path] = []
    failed: list[tuple[str, str]] = []
    skipped = 0
    for p in map(Path, paths):
        if p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_symlink() and not f.exists():  # a broken link is named, not skipped silently
                    failed.append((str(f), f"a broken link (to {os.readlink(f)})"))
                    continue
                if not f.is_file():
                    continue
                if kind_of(f) is None:
                    skipped += 1
                else:
                    files.append(f.resolve())
        elif p.is_file():
            if kind_of(p) is None:
                failed.append((str(p), "not a document kind edge reads (PDF, Markdown, HTML, text, man page)"))
            else:
                files.append(p.resolve())
        else:
            failed.append((str(p), _not_a_file(p)))
    return list(dict.fromkeys(files)), failed, skipped


#: what a path that is neither a file nor a folder is, by its stat type
_SPECIAL = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
            (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def _not_a_file(p: Path) -> str:
    """Why ``p`` (neither a regular file nor a folder) cannot be indexed, with the fix."""
    try:
        st = p.stat()
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "a loop of symbolic links (it never reaches a file); fix: point it at the document itself"
        if p.is_symlink():
            return f"a broken link (to {os.readlink(p)}); fix: point it at the document itself"
        return f"no such file or folder ({e.strerror or e})"
    kind = next((what for test, what in _SPECIAL if test(st.st_mode)), "not a regular file")
    return f"{kind}, not a document file; fix: save the document as a regular file and add that"


class DocsIndex:
    """The index in the SQLite file ``path`` (created with its folder). ``encoder`` (a
    :class:`TextEncoder`) adds vectors; without it the index is BM25 only. Thread-safe for the
    HTTP API (one connection behind a lock).

    Raises:
        DocsIndexError: the file cannot be opened or is not an index.
    """

    def __init__(self, path: str | Path, encoder: TextEncoder | None = None):
        self.path = Path(path)
        self.encoder = encoder
        self.lock = threading.RLock()
        self._vectors: tuple[str, np.ndarray, np.ndarray] | None = None  # (write counter, ids, matrix)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, check_same_thread=False)
            self.db.execute("PRAGMA foreign_keys = ON")
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.executescript(SCHEMA)
        except (sqlite3.Error, OSError) as e:
            raise DocsIndexError(f"docs index {self.path}: cannot be opened ({e}); fix: set docs.index to a "
                              f"writable file, or remove a damaged one and run 'edge docs reindex'") from None

    def close(self) -> None:
        self.db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---------------------------------------------------------------- writing

    def _meta(self, key: str, default: str = "") -> str:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def _bump(self) -> None:
        n = int(self._meta("writes", "0")) + 1
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('writes', ?)", (str(n),))

    def _delete_file(self, file_id: int) -> None:
        self.db.execute("DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE file_id = ?)", (file_id,))
        self.db.execute("DELETE FROM chunks WHERE file_id = ?", (file_id,))
        self.db.execute("DELETE FROM files WHERE id = ?", (file_id,))

    def _write(self, path: Path, sha: str, doc: Document, chunks: list[Chunk],
               on_batch: Callable[[int, int], None] | None = None) -> None:
        vecs = None
        if self.encoder is not None and chunks:
            texts = [embed_text(c, doc.summary) for c in chunks]
            parts = []
            for i in range(0, len(texts), EMBED_BATCH):
                parts.append(np.asarray(self.encoder.encode(texts[i:i + EMBED_BATCH]), dtype=np.float32))
                if on_batch:
                    on_batch(min(i + EMBED_BATCH, len(texts)), len(texts))
            vecs = np.concatenate(parts)
        with self.db:
            row = self.db.execute("SELECT id FROM files WHERE path = ?", (str(path),)).fetchone()
            if row:
                self._delete_file(row[0])
            cur = self.db.execute("INSERT INTO files(path, sha256, kind, title, chunks, indexed_at, format, encoder) "
                                  "VALUES (?,?,?,?,?,?,?,?)", (str(path), sha, doc.kind, doc.title, len(chunks),
                                                               time.time(), FORMAT, encoder_name(self.encoder)))
            fid = cur.lastrowid
            for i, c in enumerate(chunks):
                blob = vecs[i].tobytes() if vecs is not None else None
                cid = self.db.execute("INSERT INTO chunks(file_id, ord, title, path, page, text, vec) VALUES (?,?,?,?,?,?,?)",
                                      (fid, i, c.title, json.dumps(list(c.path)), c.page, c.text, blob)).lastrowid
                self.db.execute("INSERT INTO chunks_fts(rowid, title, section, text) VALUES (?,?,?,?)",
                                (cid, f"{c.title} {doc.summary}".strip(), " / ".join(c.path), c.text))
            self._bump()

    def add(self, paths: Iterable[str | Path], progress: Callable[[int, int, str], None] | None = None,
            force: bool = False) -> AddReport:
        """Index files and folders; a file whose SHA-256 is already indexed is skipped unless
        ``force``, it was read by another :data:`FORMAT`, or an encoder is given and its vectors
        are of another (or no) encoder. ``progress(done, total, what)`` is called after each file
        (``what``: its path) and after each batch of embeddings (``what``: "PATH: i/n chunks embedded").
        Files that cannot be parsed are reported in ``failed`` (and a previous version of them is
        removed from the index: its text no longer matches the file)."""
        t0 = time.perf_counter()
        files, failed, skipped = expand(paths)
        rep = AddReport(failed=failed, skipped=skipped)
        enc = encoder_name(self.encoder)
        with self.lock:
            known = {p: (i, s if (f == FORMAT and (not enc or e == enc)) else "")
                     for i, p, s, f, e in self.db.execute("SELECT id, path, sha256, format, encoder FROM files")}
            for n, f in enumerate(files, 1):
                def batch(done: int, total: int, n=n, f=f) -> None:  # embedding a long file takes a while
                    if progress:
                        progress(n - 1, len(files), f"{f}: {done}/{total} chunks embedded")

                self._add_one(f, known.get(str(f)), rep, force, batch)
                if progress:
                    progress(n, len(files), str(f))
        rep.seconds = time.perf_counter() - t0
        return rep

    def _add_one(self, f: Path, known: tuple[int, str] | None, rep: AddReport, force: bool,
                 on_batch: Callable[[int, int], None] | None = None) -> None:
        try:
            sha = file_sha256(f)
        except OSError as e:
            rep.failed.append((str(f), f"cannot be read ({e.strerror or e})"))
            return
        if known and known[1] == sha and not force:
            rep.unchanged.append(str(f))
            return
        try:
            doc = parse_file(f)
        except DocParseError as e:
            rep.failed.append((str(f), e.reason))
            if known:
                with self.db:
                    self._delete_file(known[0])
                    self._bump()
                rep.removed.append(str(f))
            return
        chunks = chunk_document(doc)
        self._write(f, sha, doc, chunks, on_batch)
        rep.chunks += len(chunks)
        (rep.updated if known else rep.added).append(str(f))

    def remove(self, paths: Iterable[str | Path]) -> list[str]:
        """Forget files (a folder: every indexed file under it); the paths removed."""
        removed: list[str] = []
        with self.lock, self.db:
            for p in paths:
                full = str(Path(p).resolve())
                rows = self.db.execute("SELECT id, path FROM files WHERE path = ? OR path LIKE ? ESCAPE '\\'",
                                       (full, full.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                                        .rstrip("/") + "/%")).fetchall()
                for fid, fp in rows:
                    self._delete_file(fid)
                    removed.append(fp)
            if removed:
                self._bump()
        return removed

    def reindex(self, progress: Callable[[int, int, str], None] | None = None, force: bool = False) -> AddReport:
        """Check every indexed file again: changed ones are read again, missing ones removed."""
        with self.lock:
            paths = [p for (p,) in self.db.execute("SELECT path FROM files ORDER BY path")]
        gone = [p for p in paths if not Path(p).is_file()]
        removed = self.remove(gone) if gone else []
        rep = self.add([p for p in paths if p not in gone], progress, force)
        rep.removed = removed + rep.removed
        return rep

    # ---------------------------------------------------------------- reading

    def files(self) -> list[dict]:
        """The indexed files: ``{path, kind, title, chunks, sha256, indexed_at}``, by path."""
        with self.lock:
            rows = self.db.execute("SELECT path, kind, title, chunks, sha256, indexed_at FROM files ORDER BY path").fetchall()
        return [dict(zip(("path", "kind", "title", "chunks", "sha256", "indexed_at"), r, strict=True)) for r in rows]

    def count(self) -> int:
        """Chunks in the index."""
        with self.lock:
            return self.db.execute("SELECT count(*) FROM chunks").fetchone()[0]

    def chunks(self, ids: list[int]) -> dict[int, StoredChunk]:
        """The chunks with these row ids."""
        if not ids:
            return {}
        q = ",".join("?" * len(ids))
        with self.lock:
            rows = self.db.execute(f"SELECT c.id, f.path, f.kind, c.title, c.path, c.page, c.text FROM chunks c "
                                   f"JOIN files f ON f.id = c.file_id WHERE c.id IN ({q})", ids).fetchall()
        return {r[0]: StoredChunk(r[0], r[1], r[2], Chunk(r[3], tuple(json.loads(r[4])), r[5], r[6])) for r in rows}

    def vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """``(ids (n,) int64, matrix (n, dim) float32)`` of every chunk with a vector; cached
        until the index is written (by this or another process)."""
        with self.lock:
            writes = self._meta("writes", "0")
            if self._vectors is None or self._vectors[0] != writes:
                rows = self.db.execute("SELECT id, vec FROM chunks WHERE vec IS NOT NULL ORDER BY id").fetchall()
                ids = np.array([r[0] for r in rows], dtype=np.int64)
                mat = (np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
                       if rows else np.zeros((0, 0), np.float32))
                self._vectors = (writes, ids, mat)
            return self._vectors[1], self._vectors[2]


def load_encoder() -> TextEncoder | None:
    """The shared sentence encoder (all-MiniLM-L6-v2, :mod:`edge.models.embed`), or None when it
    is not installed here (the index is then BM25 only; a warning on stderr says so)."""
    try:
        return Encoder.shared()
    except EmbedError as e:
        print(f"edge docs: BM25 only, no sentence embeddings: {e}", file=sys.stderr)
        return None


def open_index(settings: Settings, encoder: bool = True) -> DocsIndex:
    """The index named by ``settings.docs`` (next to the store by default), with the sentence
    encoder when ``encoder`` and ``docs.embeddings`` are true and it is installed.

    Raises:
        DocsIndexError: the index file cannot be opened.
    """
    enc = load_encoder() if encoder and settings.docs.embeddings else None
    return DocsIndex(settings.docs.index_path(settings.store.path), enc)
