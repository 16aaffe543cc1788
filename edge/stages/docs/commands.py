"""The handlers of ``edge docs add|list|remove|reindex`` (registered by :mod:`edge.stages.docs.cli`)
and of ``edge ask`` for a question about the documents (:func:`ask_turn`).

    edge docs add FILE|DIR ... [--force] [--json]   index documents (unchanged files are skipped by SHA-256)
    edge docs list [--json]                         the indexed files with their chunk counts
    edge docs remove FILE|DIR ...                   forget files (a folder: all under it)
    edge docs reindex [--force] [--json]            read changed files again, drop missing ones

Files that cannot be parsed are listed with the reason on stderr and the exit status is 1; the
others are indexed. Progress goes to stderr on long runs (every second).
"""
from __future__ import annotations

import json
import sys
import time
import uuid

from edge import events as ev
from edge.config import Settings, load_settings
from edge.stages.docs.answer import answer_question, generates, looks_like_docs_question
from edge.stages.docs.index import AddReport, DocsIndex, open_index
from edge.stages.docs.retrieve import Retriever

__all__ = ["ask_turn", "cmd_add", "cmd_list", "cmd_reindex", "cmd_remove"]


def _settings(args) -> Settings:
    return load_settings(getattr(args, "config", None), getattr(args, "board", None))


class Progress:
    """``progress(done, total, path)`` for :meth:`DocsIndex.add`: one stderr line a second at most."""

    def __init__(self, every_s: float = 1.0):
        self.every_s = every_s
        self.last = time.monotonic()

    def __call__(self, done: int, total: int, path: str) -> None:
        now = time.monotonic()
        if now - self.last >= self.every_s or (done == total and total > 20):
            self.last = now
            print(f"edge docs: {done}/{total} files done ({path})", file=sys.stderr, flush=True)


def report(args, rep: AddReport, index: DocsIndex) -> int:
    """Print what an add or reindex did; 1 when a file failed."""
    if args.json:
        print(json.dumps({**rep.to_dict(), "index": str(index.path), "total_chunks": index.count()}, indent=2))
    else:
        print(f"{len(rep.added)} added, {len(rep.updated)} updated, {len(rep.unchanged)} unchanged, "
              f"{len(rep.removed)} removed, {len(rep.failed)} failed; {rep.chunks} chunks written in "
              f"{rep.seconds:.1f} s; {index.count()} chunks in {index.path}")
    for path, reason in rep.failed:
        print(f"edge docs: not indexed: {path}: {reason}", file=sys.stderr)
    return 1 if rep.failed else 0


def cmd_add(args) -> int:
    with open_index(_settings(args)) as index:
        return report(args, index.add(args.paths, Progress(), force=args.force), index)


def cmd_reindex(args) -> int:
    with open_index(_settings(args)) as index:
        return report(args, index.reindex(Progress(), force=args.force), index)


def cmd_list(args) -> int:
    with open_index(_settings(args), encoder=False) as index:
        files = index.files()
        if args.json:
            print(json.dumps(files, indent=2, ensure_ascii=False))
        else:
            for f in files:
                print(f"{f['chunks']:6d}  {f['kind']:8s}  {f['title'][:40]:40s}  {f['path']}")
            print(f"{len(files)} files, {index.count()} chunks in {index.path}")
    return 0


def cmd_remove(args) -> int:
    with open_index(_settings(args), encoder=False) as index:
        removed = index.remove(args.paths)
    for p in removed:
        print(f"removed {p}")
    if not removed:
        print("edge docs: nothing indexed under " + ", ".join(args.paths), file=sys.stderr)
        return 1
    return 0


def ask_turn(args, settings: Settings, llm_factory) -> int | None:
    """``edge ask`` for a question about the documents: with ``--docs``, or when the words look
    like one (:func:`looks_like_docs_question`) and documents are indexed; None otherwise (the
    stock dialog answers). Prints the ``intent`` (``ask_docs``), ``reply`` and ``turn_end`` events;
    with ``--json`` the reply's passages and sources follow as one ``docs`` JSON line.
    ``llm_factory()`` builds the LLM only when the answer mode may generate."""
    wanted = getattr(args, "docs", False)
    if not wanted and not looks_like_docs_question(args.text):
        return None
    with open_index(settings, encoder=False) as index:  # no encoder loaded for an empty index
        empty, where = not index.count(), index.path
    if empty:
        if wanted:
            print(f"edge: no documents indexed in {where}; add them with 'edge docs add FILE|DIR'", file=sys.stderr)
            return 2
        return None
    with open_index(settings) as index:
        llm = llm_factory() if generates(settings.docs.answer, settings.llm.model) else None
        ans = answer_question(args.text, Retriever(index), settings.docs, llm, settings.language,
                              max_tokens=settings.llm.max_tokens)
    turn = uuid.uuid4().hex[:12]
    for e in (ev.IntentEvent(0, turn, "ask_docs", {"question": args.text}, "docs"), ev.Reply(0, turn, ans.text, None),
              ev.TurnEnd(0, turn, {})):
        print(e.to_json() if args.json else e.human(), flush=True)
    if args.json:
        print(json.dumps({"type": "docs", **ans.to_dict()}, ensure_ascii=False))
    return 0
