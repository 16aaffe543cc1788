"""Sections → chunks: the passages retrieval ranks and answers quote.

A chunk never crosses a section boundary; inside one it packs whole blocks (paragraphs, list
items, table rows) up to :data:`MAX_WORDS`; a longer block is cut at sentence ends. A short label
block (an option name, a step title: no full stop, a few words) is glued to the block after it
("acl_file file path: Set the path to an access control list file …"), so a term and its
explanation stay in one passage. Every chunk keeps its document title, section path and page.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from edge.stages.docs.parse import Block, Document, Section

#: Words per chunk at most (all-MiniLM-L6-v2 reads 256 word pieces: ~150 words of English).
MAX_WORDS = 110
#: A block this short without a full stop is a label for the next block.
LABEL_WORDS = 8


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
    """The chunks of one section: whole blocks packed up to ``limit`` words."""
    chunks: list[Chunk] = []
    cur: list[str] = []
    page: int | None = None
    n = 0
    for label, block in glue_labels(section.blocks):
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
