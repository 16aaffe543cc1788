"""Sections → chunks: the passages retrieval ranks and answers quote.

A chunk never crosses a section boundary; inside one it packs whole blocks (paragraphs, list
items, table rows) up to :data:`MAX_WORDS`; a longer block is cut at sentence ends. A short label
block (an option name, a step title: no full stop, a few words) is glued to the block after it
("acl_file file path: Set the path to an access control list file …"), so a term and its
explanation stay in one passage. A section that is a list of entries (a man page's options, a
configuration file's settings: :data:`MIN_ENTRIES` or more "term: explanation" blocks) gets one
chunk per entry, so a question about one option finds that option's passage, not the first one
packed next to it. Every chunk keeps its document title, section path and page.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from edge.stages.docs.parse import Block, Document, Section

#: Words per chunk at most (all-MiniLM-L6-v2 reads 256 word pieces: ~150 words of English).
MAX_WORDS = 110
#: A block this short without a full stop is a label for the next block.
LABEL_WORDS = 8
#: "term: explanation" blocks that make a section a list of entries, each chunked on its own.
MIN_ENTRIES = 3
#: The term of an entry block: an option ("-s <integer>", "-h, --help", "-s | --server=SERVER") or a
#: setting name with an underscore, dot or dollar ("max_queued_messages count", "$SYS/broker/uptime").
_ENTRY = re.compile(r"^(?P<term>(?:-{1,2}[A-Za-z0-9?#][^\s:]*|[A-Za-z$][\w$]*[_.$/][\w$./<>-]*)"
                    r"(?:[ ,|=][^:\n]{0,60})?):\s")


@dataclass(frozen=True)
class Chunk:
    """One passage: ``title`` (document), ``path`` (section headings from the top), ``page``
    (1-based PDF page of its first block, else None), ``text``; ``section`` is the last heading."""

    title: str
    path: tuple[str, ...]
    page: int | None
    text: str

    @property
    def section(self) -> str:
        return self.path[-1] if self.path else ""


def is_label(block: Block) -> bool:
    """A short block that names what the next block explains."""
    t = block.text.strip()
    return (block.kind in {"para", "item"} and len(t.split()) <= LABEL_WORDS and "\n" not in t
            and not t.endswith((".", "!", "?", ";")))


def glue_labels(blocks: list[Block]) -> list[tuple[str, Block]]:
    """``[(label, block)]``: each run of label blocks (see :func:`is_label`; "-b", "--blobs")
    joined to the block that follows it ("-b, --blobs: Include large objects …"); ``label`` is
    that run's text ("" for a block without one), repeated on the pieces of a long block."""
    out: list[tuple[str, Block]] = []
    labels: list[Block] = []
    for b in blocks:
        if is_label(b) and b.kind != "row":
            labels.append(b)
            continue
        if labels and b.kind != "row":
            label = ", ".join(x.text.strip().rstrip(":") for x in labels)
            out.append((label, Block(f"{label}: {b.text}", b.kind, labels[0].page or b.page)))
        else:
            out.extend(("", x) for x in labels)
            out.append(("", b))
        labels = []
    out.extend(("", x) for x in labels)
    return out


def entry_term(text: str) -> str | None:
    """The term an entry block explains ("-s <integer>" of "-s <integer>: Speed in words per
    minute …"), None for other text."""
    m = _ENTRY.match(text)
    if m is None or len(m.group("term").split()) > LABEL_WORDS:
        return None
    return m.group("term")


def split_long(text: str, limit: int = MAX_WORDS) -> list[str]:
    """``text`` cut at sentence ends into pieces of at most ``limit`` words (a sentence longer
    than that is cut between words)."""
    if len(text.split()) <= limit:
        return [text]
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'])", text)
    pieces: list[str] = []
    cur: list[str] = []
    for s in sentences:
        words = s.split()
        while len(words) > limit:
            if cur:
                pieces.append(" ".join(cur))
                cur = []
            pieces.append(" ".join(words[:limit]))
            words = words[limit:]
        if len(cur) + len(words) > limit and cur:
            pieces.append(" ".join(cur))
            cur = []
        cur.extend(words)
    if cur:
        pieces.append(" ".join(cur))
    return pieces


def chunk_section(title: str, section: Section, limit: int = MAX_WORDS) -> list[Chunk]:
    """The chunks of one section: whole blocks packed up to ``limit`` words; in a list of entries
    (:data:`MIN_ENTRIES` or more labelled or "term: explanation" blocks) each entry starts a chunk."""
    chunks: list[Chunk] = []
    cur: list[str] = []
    page: int | None = None
    n = 0
    glued = glue_labels(section.blocks)
    starts = [bool(label) or entry_term(b.text) is not None for label, b in glued]
    per_entry = sum(starts) >= MIN_ENTRIES
    for (label, block), start in zip(glued, starts, strict=True):
        if per_entry and start and cur:
            chunks.append(Chunk(title, section.path, page, "\n".join(cur)))
            cur, n = [], 0
        for i, piece in enumerate(split_long(block.text, limit)):
            if i and label:  # the continuation of a long option text keeps the option's name
                piece = f"{label} (continued): {piece}"
            words = len(piece.split())
            if n and n + words > limit:
                chunks.append(Chunk(title, section.path, page, "\n".join(cur)))
                cur, n = [], 0
            if not cur:
                page = block.page
            cur.append(piece)
            n += words
    if cur:
        chunks.append(Chunk(title, section.path, page, "\n".join(cur)))
    return chunks


def chunk_document(doc: Document, limit: int = MAX_WORDS) -> list[Chunk]:
    """The chunks of a parsed document, in document order."""
    return [c for s in doc.sections for c in chunk_section(doc.title, s, limit)]
