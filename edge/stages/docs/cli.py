"""``edge docs add|list|remove|reindex`` on the command line: :func:`register` adds the parsers to
``edge``; the handlers are in :mod:`edge.stages.docs.commands`.

    edge docs add FILE|DIR ... [--force] [--json]   index documents (unchanged files are skipped by SHA-256)
    edge docs list [--json]                         the indexed files with their chunk counts
    edge docs remove FILE|DIR ...                   forget files (a folder: all under it)
    edge docs reindex [--force] [--json]            read changed files again, drop missing ones
"""
from __future__ import annotations

from collections.abc import Callable


def register(sub, common, handler: Callable[[str], Callable]) -> None:
    """Add ``edge docs …`` to the ``edge`` sub-command parser ``sub``; ``common(parser)`` adds
    ``--config``/``--board``; ``handler(name)`` gives the function that runs the command
    ``edge.stages.docs.commands.<name>`` (imported when it runs: it loads the encoder and pypdf)."""
    p = sub.add_parser("docs", help="the site's documents: manuals, procedures, man pages (answers with their source)")
    dsub = p.add_subparsers(dest="sub", required=True)
    q = dsub.add_parser("add", help="index PDF, Markdown, HTML, text files and man pages (files or folders)")
    common(q)
    q.add_argument("paths", nargs="+", metavar="FILE|DIR")
    q.add_argument("--force", action="store_true", help="read files again even when their SHA-256 is unchanged")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=handler("cmd_add"))
    q = dsub.add_parser("list", help="the indexed files")
    common(q)
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=handler("cmd_list"))
    q = dsub.add_parser("remove", help="forget files (a folder: every file under it)")
    common(q)
    q.add_argument("paths", nargs="+", metavar="FILE|DIR")
    q.set_defaults(func=handler("cmd_remove"))
    q = dsub.add_parser("reindex", help="read changed files again (by SHA-256), drop files that are gone")
    common(q)
    q.add_argument("--force", action="store_true", help="read every file again")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=handler("cmd_reindex"))
