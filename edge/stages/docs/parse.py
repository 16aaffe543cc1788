"""Documents in: one reader per format, each giving a :class:`Document` of :class:`Section` s along
the document's own structure (headings, numbered sections, man-page sections, PDF outline),
each block of text (paragraph, list item, code, table row) with its page.

Formats: PDF (pypdf; the outline's entries, else numbered headings, start sections), Markdown
(ATX and setext headings, fenced code, pipe tables as rows), HTML (stdlib ``html.parser``;
``h1``–``h6``, paragraphs, list items, table rows), man pages (:mod:`edge.stages.docs.roff`) and
plain text (underlined, numbered or upper-case headings). ``.gz`` files are read through gzip.
A file that cannot be read raises :class:`DocParseError` with the reason.
"""
from __future__ import annotations

import gzip
import io
import logging
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING

# pypdf logs repairs of broken files ("EOF marker not found") on its own; a file that cannot be
# read is reported once, by name, with the reason, so its own lines are kept quiet
logging.getLogger("pypdf").setLevel(logging.ERROR)

from edge.errors import UserError
from edge.stages.docs.roff import read_roff

if TYPE_CHECKING:
    import pypdf

#: The largest file read, bytes (after gunzip): a manual is far smaller.
MAX_FILE_BYTES = 64 * 2**20
MAN_SUFFIX = re.compile(r"\.[1-9][a-z]*$")


class DocParseError(UserError):
    """A document could not be read; ``reason`` says why (encrypted, no text layer, broken …)."""

    def __init__(self, path: str | Path, reason: str):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{path}: {reason}")


@dataclass
class Block:
    """One unit of text: ``kind`` is ``para``, ``item``, ``code`` or ``row`` (a table row);
    ``page`` is the 1-based PDF page, None for other formats."""

    text: str
    kind: str = "para"
    page: int | None = None


@dataclass
class Section:
    """A part of a document under one heading: ``path`` is the heading path from the top
    (``("CONFIGURATION VARIABLES", "General Options")``); ``heading`` its last part ("" before
    the first heading)."""

    path: tuple[str, ...]
    blocks: list[Block] = field(default_factory=list)

    @property
    def heading(self) -> str:
        return self.path[-1] if self.path else ""


@dataclass
class Document:
    """A parsed file: ``kind`` (pdf, markdown, html, man, text), ``title``, its sections and a
    one-line ``summary`` (a man page's NAME line; "" for the others)."""

    path: str
    kind: str
    title: str
    sections: list[Section]
    summary: str = ""


def kind_of(path: str | Path) -> str | None:
    """The reader for a file name (``.gz`` looked through), None when no reader fits."""
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if name.endswith(".pdf"):
        return "pdf"
    if name.endswith((".md", ".markdown")):
        return "markdown"
    if name.endswith((".html", ".htm", ".xhtml")):
        return "html"
    if MAN_SUFFIX.search(name):
        return "man"
    if name.endswith((".txt", ".text", ".rst")) or name.startswith(("readme", "news", "faq", "install")):
        return "text"
    return None


def read_bytes(path: Path) -> bytes:
    """The file's bytes, gunzipped for ``.gz``. Raises DocParseError (unreadable, too big, bad gzip)."""
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as f:
                data = f.read(MAX_FILE_BYTES + 1)
        else:
            with open(path, "rb") as f:
                data = f.read(MAX_FILE_BYTES + 1)
    except (OSError, EOFError) as e:
        raise DocParseError(path, f"cannot be read ({getattr(e, 'strerror', None) or e})") from None
    if len(data) > MAX_FILE_BYTES:
        raise DocParseError(path, f"larger than {MAX_FILE_BYTES // 2**20} MiB")
    return data


#: C0 control bytes that text does not hold (tab, line feed, form feed and carriage return it does)
_CONTROL_BYTES = bytes([*range(0, 9), 11, *range(14, 32), 127])
#: the share of control bytes above which a file is binary data (random bytes have ~11 %)
MAX_CONTROL_SHARE = 0.01


def decode(path: Path, data: bytes) -> str:
    """Text of a text format: UTF-8, else Latin-1. Raises DocParseError for binary data (a NUL,
    or more than :data:`MAX_CONTROL_SHARE` control bytes in the first 64 KiB)."""
    head = data[:65536]
    if b"\x00" in head:
        raise DocParseError(path, "binary data, not text")
    control = len(head) - len(head.translate(None, _CONTROL_BYTES))
    if head and control > MAX_CONTROL_SHARE * len(head):
        raise DocParseError(path, f"binary data, not text ({100 * control / len(head):.0f} % of its first bytes are "
                                  f"control characters); fix: add the document itself, not a file renamed to "
                                  f"{path.suffix or 'a text name'}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def parse_file(path: str | Path) -> Document:
    """Read one document with the reader its name calls for.

    Raises:
        DocParseError: no reader for this kind of file, or the file cannot be parsed (the reason
        names it: encrypted, no text layer, truncated, binary, empty).
    """
    path = Path(path)
    kind = kind_of(path)
    if kind is None:
        raise DocParseError(path, "not a document kind edge reads (PDF, Markdown, HTML, text, man page)")
    data = read_bytes(path)
    if kind == "pdf":
        doc = parse_pdf(path, data)
    else:
        text = decode(path, data)
        reader = {"markdown": parse_markdown, "html": parse_html, "man": parse_man, "text": parse_text}[kind]
        try:
            doc = reader(path, text)
        except ValueError as e:
            raise DocParseError(path, str(e)) from None
    doc.sections = [s for s in doc.sections if s.blocks]
    if not doc.sections:
        raise DocParseError(path, "no text in it")
    return doc


_GENERIC_NAMES = re.compile(r"^(readme|news|install|faq|changes|todo|copying)", re.I)


def default_title(path: Path) -> str:
    """A title from the file name; a generic name (README, NEWS …) is prefixed with its folder's
    name, which under /usr/share/doc is the package ("mosquitto README.Debian")."""
    name = path.name
    if _GENERIC_NAMES.match(name):
        return f"{path.parent.name} {name.removesuffix('.gz')}"
    for suffix in (".gz", ".md", ".markdown", ".html", ".htm", ".txt", ".pdf"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name


# --------------------------------------------------------------------------------------------
# Markdown

_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MD_MARKS = re.compile(r"(\*\*|__|`|<[^>]+>)")
_LIST_ITEM = re.compile(r"^\s*([-*+]|\d+[.)])\s+")
_MD_TOC_ITEM = re.compile(r"^\s*([-*+]|\d+[.)])\s+\[[^\]]*\]\(#[^)]*\)\s*$")


def md_inline(text: str) -> str:
    """Markdown inline marks removed: links keep their text, ``**``/``__``/backticks/tags dropped."""
    return " ".join(_MD_MARKS.sub("", _MD_LINK.sub(r"\1", text)).split())


def table_row(cells: list[str], header: list[str] | None) -> str:
    """A table row as text: ``header: cell; …`` when the table has a header of the same width."""
    if header and len(header) == len(cells) and any(header):
        return "; ".join(f"{h}: {c}" if h else c for h, c in zip(header, cells, strict=True) if c)
    return " | ".join(c for c in cells if c)


class _Sections:
    """Builds the section list: headings by level, blocks under the current one."""

    def __init__(self) -> None:
        self.sections = [Section(())]
        self.levels: list[tuple[int, str]] = []

    def heading(self, level: int, text: str) -> None:
        while self.levels and self.levels[-1][0] >= level:
            self.levels.pop()
        self.levels.append((level, text))
        self.sections.append(Section(tuple(t for _, t in self.levels)))

    def block(self, text: str, kind: str = "para", page: int | None = None) -> None:
        text = text.strip()
        if text:
            self.sections[-1].blocks.append(Block(text, kind, page))


def md_heading(line: str, nxt: str, in_para: bool) -> tuple[int, str, bool] | None:
    """``(level, text, underlined)`` when ``line`` is an ATX heading, or a setext heading
    underlined by ``nxt`` (``underlined``: the next line is used up)."""
    m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
    if m:
        return len(m.group(1)), md_inline(m.group(2)), False
    if line.strip() and not in_para and re.match(r"^(=+|-+)\s*$", nxt) and not _LIST_ITEM.match(line):
        return (1 if nxt.startswith("=") else 2), md_inline(line.strip()), True
    return None


def parse_markdown(path: Path, text: str) -> Document:
    """Markdown (CommonMark's headings, fences, lists; GitHub pipe tables as rows; a table of
    contents of links into the page and thematic breaks are dropped)."""
    out = _Sections()
    lines = text.replace("\r\n", "\n").split("\n")
    para: list[str] = []
    title = ""
    header: list[str] | None = None

    def flush() -> None:
        if para:
            m = _LIST_ITEM.match(para[0])
            if not (m and _MD_TOC_ITEM.match(" ".join(para))):  # a table of contents repeats the headings
                out.block(md_inline(" ".join(para)), "item" if m else "para")
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.lstrip().startswith(("```", "~~~")):
            flush()
            fence, code = line.lstrip()[:3], []
            while i < len(lines) and not lines[i].lstrip().startswith(fence):
                code.append(lines[i])
                i += 1
            i += 1
            out.block("\n".join(code), "code")
            continue
        nxt = lines[i] if i < len(lines) else ""
        h = md_heading(line, nxt, bool(para))
        if h:
            flush()
            i += h[2]
            title = title or (h[1] if h[0] == 1 else "")
            out.heading(h[0], h[1])
            header = None
        elif line.strip().startswith("|"):
            flush()
            cells = [md_inline(c) for c in line.strip().strip("|").split("|")]
            if all(re.fullmatch(r":?-{2,}:?", c.strip()) for c in cells if c.strip()):
                continue
            if header is None and re.match(r"^\s*\|?[\s:|-]+$", nxt) and "-" in nxt:
                header = cells
                continue
            out.block(table_row(cells, header), "row")
        elif not line.strip() or re.fullmatch(r"([-*_]\s*){3,}", line.strip()):  # blank line, thematic break
            header = None
            flush()
        else:
            if _LIST_ITEM.match(line) and para:
                flush()
            para.append(line.strip())
    flush()
    return Document(str(path), "markdown", title or default_title(path), out.sections)


# --------------------------------------------------------------------------------------------
# HTML

_HTML_BLOCKS = {"p", "li", "pre", "dd", "dt", "blockquote", "div", "section", "article", "br", "table",
                "ul", "ol", "dl", "figcaption", "caption", "main", "header", "footer", "body"}
_HTML_SKIP = {"script", "style", "noscript", "template", "svg", "nav"}


class _HtmlReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out = _Sections()
        self.text: list[str] = []
        self.kind = "para"
        self.skip = 0
        self.title = ""
        self.in_title = False
        self.heading_level = 0
        self.row: list[str] | None = None
        self.row_th = True  # every cell of the row so far was a <th>
        self.cell: list[str] | None = None
        self.header: list[str] | None = None
        self.pre = False
        self.anchor: list[str] | None = None  # text of an <a href="#…"> being read
        self.anchors: list[str] = []  # such link texts of the current block

    def flush(self) -> None:
        text = "".join(self.text)
        text = text.strip("\n") if self.pre else " ".join(text.split())
        if not (self.kind == "item" and text and text == " ".join(" ".join(self.anchors).split())):
            self.out.block(text, self.kind)  # an item that is only a link into the page: a table of contents
        self.text, self.kind, self.anchors = [], "para", []

    def handle_starttag(self, tag, attrs):
        if tag == "a" and (dict(attrs).get("href") or "").startswith("#"):
            self.anchor = []
        if tag in _HTML_SKIP:
            self.skip += 1
        elif tag == "title":
            self.in_title = True
        elif re.fullmatch(r"h[1-6]", tag):
            self.flush()
            self.heading_level = int(tag[1])
        elif tag == "tr":
            self.flush()
            self.row, self.row_th = [], True
        elif tag in {"td", "th"} and self.row is not None:
            self.cell = []
            self.row_th = self.row_th and tag == "th"
        elif tag in _HTML_BLOCKS and self.row is None:
            self.flush()
            self.kind = {"li": "item", "pre": "code", "dt": "item"}.get(tag, "para")
            self.pre = tag == "pre"

    def end_heading(self) -> None:
        heading = " ".join("".join(self.text).split())
        self.text = []
        if heading:
            self.title = self.title or heading
            self.out.heading(self.heading_level, heading)
        self.heading_level = 0

    def end_row(self) -> None:
        if self.row and self.row_th and self.header is None:
            self.header = self.row
        elif self.row:
            self.out.block(table_row(self.row, self.header), "row")
        self.row, self.text = None, []

    def handle_endtag(self, tag):
        if tag == "a" and self.anchor is not None:
            self.anchors.append("".join(self.anchor))
            self.anchor = None
        if tag in _HTML_SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag == "title":
            self.in_title = False
        elif re.fullmatch(r"h[1-6]", tag) and self.heading_level:
            self.end_heading()
        elif tag in {"td", "th"} and self.cell is not None and self.row is not None:
            self.row.append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.end_row()
        elif tag == "table":
            self.header = None
        elif tag in _HTML_BLOCKS and self.row is None:
            self.flush()
            self.pre = False

    def handle_startendtag(self, tag, attrs):
        if tag == "br":
            self.text.append("\n" if self.pre else " ")

    def handle_data(self, data):
        if self.skip:
            return
        if self.in_title:
            self.title += " ".join(data.split())
        elif self.cell is not None:
            self.cell.append(data)
        else:
            self.text.append(data)
            if self.anchor is not None:
                self.anchor.append(data)


def parse_html(path: Path, text: str) -> Document:
    """HTML: ``<title>`` (else the first heading) as title, ``h1``–``h6`` as sections; paragraphs,
    list items, ``pre`` and table rows (with their ``th`` header) as blocks; scripts, styles and
    ``nav`` skipped."""
    r = _HtmlReader()
    r.feed(text)
    r.close()
    r.flush()
    return Document(str(path), "html", r.title or default_title(path), r.out.sections)


# --------------------------------------------------------------------------------------------
# man pages, plain text


#: Man-page sections that hold no instructions: NAME becomes the document's summary (the title
#: column of every chunk), the others are references, credits and licences.
MAN_BOILERPLATE = frozenset({"NAME", "SEE ALSO", "AUTHOR", "AUTHORS", "THANKS", "COLOPHON", "COPYRIGHT",
                             "REPORTING BUGS", "LICENSE", "LICENCE", "HISTORY"})


def parse_man(path: Path, text: str) -> Document:
    """A man page (roff): ``.SH``/``.SS`` as sections, paragraphs and ``.TP`` items as blocks;
    the NAME line is the summary and :data:`MAN_BOILERPLATE` sections are left out.
    Raises ValueError for a page that is only a ``.so`` link or has no text."""
    page = read_roff(text)
    title = page.title or MAN_SUFFIX.sub("", default_title(path))
    sections = [Section(p, [Block(t, "row" if " | " in t else "para") for t in paras]) for p, paras in page.sections
                if not p or p[0].upper() not in MAN_BOILERPLATE]
    return Document(str(path), "man", title, sections, page.name_line)


_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*\.?|[A-Z]\.|[IVX]+\.)\s+[A-Z][^\n]{1,70}$")


def text_heading(para: list[str]) -> tuple[int, str] | None:
    """``(level, heading)`` when a one-line paragraph is a heading: underlined (=== level 1,
    --- level 2), numbered ("4.2 Pressure relief", level = depth) or short upper case."""
    if len(para) == 2 and re.fullmatch(r"(=+|-+|~+|\*+)", para[1].strip()) and len(para[0].strip()) > 1:
        return (1 if para[1].strip()[0] in "=*" else 2), para[0].strip()
    if len(para) != 1:
        return None
    line = para[0].strip()
    if _NUMBERED.match(line) and not line.endswith((".", ",", ";", ":")) and "," not in line and len(line.split()) <= 9:
        number = line.split()[0].rstrip(".")
        return number.count(".") + 1, line
    letters = re.sub(r"[^A-Za-z]", "", line)
    if 3 <= len(letters) and line.upper() == line and len(line) <= 60 and not line.endswith("."):
        return 1, line
    return None


def parse_text(path: Path, text: str) -> Document:
    """Plain text: paragraphs at blank lines; headings are underlined, numbered or upper-case
    one-line paragraphs (:func:`text_heading`); a level-1 heading that opens the file is the title,
    else :func:`default_title`."""
    out = _Sections()
    blocks = re.split(r"\n[ \t]*\n", text.replace("\r\n", "\n").replace("\f", "\n\n"))
    title = ""
    first_seen = False  # a level-1 heading that opens the file is its title
    for raw in blocks:
        lines = [ln for ln in raw.split("\n") if ln.strip()]
        if not lines:
            continue
        h = text_heading(lines[:2])
        if h:
            if not title and not first_seen and h[0] == 1:
                title = h[1]
            first_seen = True
            out.heading(*h)
            lines = lines[2:] if len(lines) > 1 and re.fullmatch(r"[=~*-]+", lines[1].strip()) else lines[1:]
            if not lines:
                continue
        first_seen = True
        item = _LIST_ITEM.match(lines[0])
        if item and all(_LIST_ITEM.match(ln) or ln.startswith((" ", "\t")) for ln in lines):
            items: list[str] = []
            for ln in lines:
                if _LIST_ITEM.match(ln) or not items:
                    items.append(ln.strip())
                else:
                    items[-1] += " " + ln.strip()
            for it in items:
                out.block(it, "item")
        else:
            out.block(" ".join(ln.strip() for ln in lines))
    return Document(str(path), "text", title or default_title(path), out.sections)


# --------------------------------------------------------------------------------------------
# PDF

_BULLET = re.compile(r"^\s*([•●▪◦‣∙·*-]|\d+[.)]|[a-z][.)])\s+")


def pdf_outline(reader: pypdf.PdfReader) -> list[tuple[int, int, str]]:
    """The outline flattened: ``[(page index, level, title)]`` in reading order ([] when absent or broken)."""
    out: list[tuple[int, int, str]] = []

    def walk(items, level: int) -> None:
        for it in items:
            if isinstance(it, list):
                walk(it, level + 1)
                continue
            try:
                out.append((reader.get_destination_page_number(it), level, " ".join(str(it.title).split())))
            except Exception:  # noqa: BLE001 - a broken destination costs its bookmark only
                continue

    try:
        walk(reader.outline, 1)
    except Exception:  # noqa: BLE001 - a broken outline: fall back to numbered headings
        return []
    return out


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def pdf_paragraphs(lines: list[str]) -> list[str]:
    """Text lines of a page joined into paragraphs: a line that ends a sentence and is clearly
    shorter than the page's long lines ends its paragraph; a bullet starts one."""
    width = max((len(ln) for ln in lines), default=0)
    paras: list[str] = []
    cur: list[str] = []
    for ln in lines:
        if cur and _BULLET.match(ln):
            paras.append(" ".join(cur))
            cur = []
        cur.append(ln.strip())
        if ln.rstrip().endswith((".", ":", "!", "?")) and len(ln) < 0.8 * width:
            paras.append(" ".join(cur))
            cur = []
    if cur:
        paras.append(" ".join(cur))
    return [re.sub(r"(\w)- (\w)", r"\1\2", p) for p in paras]


def open_pdf(path: Path, data: bytes) -> pypdf.PdfReader:
    """A pypdf reader over ``data``, decrypted when an empty user password opens it.
    Raises DocParseError (not a PDF, truncated, encrypted with a password)."""
    import pypdf  # ~0.3 s to import: only when a PDF is read, not on every `edge` command

    if not data.lstrip()[:5].startswith(b"%PDF"):
        raise DocParseError(path, "not a PDF (no %PDF header)")
    try:
        reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise DocParseError(path, "encrypted: it needs a password; save an unencrypted copy to index it")
        len(reader.pages)
    except DocParseError:
        raise
    except Exception as e:  # noqa: BLE001 - pypdf raises many kinds for a damaged file
        raise DocParseError(path, f"broken or truncated PDF ({type(e).__name__}: {e})") from None
    return reader


def parse_pdf(path: Path, data: bytes) -> Document:
    """A PDF through pypdf: the outline (bookmarks) gives the sections and their pages, else
    numbered heading lines do; paragraphs are rebuilt from the text lines of each page
    (:func:`pdf_paragraphs`).

    Raises:
        DocParseError: encrypted with a password, no text layer (scanned), or not a readable PDF.
    """
    reader = open_pdf(path, data)
    outline = pdf_outline(reader)
    marks: dict[int, list[tuple[int, str]]] = {}
    for page, level, title in outline:
        marks.setdefault(page, []).append((level, title))
    out = _Sections()
    chars = 0
    for n, page in enumerate(reader.pages):
        try:
            text = page.extract_text() or ""
        except Exception as e:  # noqa: BLE001 - one damaged page
            raise DocParseError(path, f"page {n + 1} cannot be read ({type(e).__name__}: {e})") from None
        chars += len(text.strip())
        pending = list(marks.get(n, []))
        body: list[str] = []
        for ln in (x for x in text.split("\n") if x.strip()):
            h = None
            if pending and _norm(ln).startswith(_norm(pending[0][1])[:40]) and _norm(pending[0][1]):
                h = pending.pop(0)
            elif not outline:
                hd = text_heading([ln])
                h = hd if hd and _NUMBERED.match(ln.strip()) else None
            if h:
                for p in pdf_paragraphs(body):
                    out.block(p, "para", n + 1)
                body = []
                out.heading(*h)
            else:
                body.append(ln)
        for level, title in pending:  # bookmarks whose heading line was not found: still a section
            out.heading(level, title)
        for p in pdf_paragraphs(body):
            out.block(p, "para", n + 1)
    if chars < 20 * max(1, len(reader.pages)) // 10 and chars < 200:
        raise DocParseError(path, "no text layer (a scanned PDF?): run OCR on it first, e.g. ocrmypdf")
    meta = reader.metadata or {}
    title = str(meta.get("/Title") or "").strip()
    if not title:
        first = next((ln.strip() for ln in (reader.pages[0].extract_text() or "").split("\n") if ln.strip()), "")
        title = first[:80] if first else default_title(path)
    return Document(str(path), "pdf", title, out.sections)
