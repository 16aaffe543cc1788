"""A small reader of man pages as Debian ships them (roff, usually gzipped): the ``man(7)`` macros
``.TH .SH .SS .PP .LP .P .TP .IP .HP .B .I .BR …``, DocBook's generated pages, ``tbl`` tables
(``.TS``/``.TE``, each row kept as a row) and the headings of ``mdoc(7)`` (``.Dt .Sh .Ss .Pp .It``).
Font and size escapes are dropped, the common special characters mapped. It does not run groff:
macros a page defines itself and conditionals are skipped, which costs the odd word of layout,
never a section.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

#: roff special characters (``\(xx`` and ``\[xx]``) mapped to text; others are dropped.
SPECIALS = {"em": "—", "en": "–", "bu": "•", "aq": "'", "lq": '"', "rq": '"', "oq": "'", "cq": "'",
            "dq": '"', "hy": "-", "mi": "-", "pl": "+", "co": "©", "rg": "®", "tm": "™", "dg": "†",
            "<=": "≤", ">=": "≥", "!=": "≠", "->": "→", "<-": "←", "mu": "×", "de": "°", "ti": "~",
            "ha": "^", "rs": "\\", "sl": "/", "ba": "|", "or": "|", "fm": "'", "cq ": "'"}
_STRINGS = {"Aq": "'", "lq": '"', "rq": '"', "R": "®", "Tm": "™"}
_ESCAPE = re.compile(r"""\\(?:
      f(?:\(..|\[[^\]]*\]|.)          # font
    | s[-+]?(?:\d|\(\d\d|\[\d+\])     # size
    | [mMF](?:\(..|\[[^\]]*\]|.)      # colour, family
    | [hvwlLoxXbDRSNCZ]'[^']*'        # motions, width, drawing
    | \*(?:\(..|\[[^\]]*\]|.)         # strings
    | \((..)                          # special character \(xx
    | \[([^\]]*)\]                    # special character \[xx]
    | n(?:\(..|\[[^\]]*\]|.)          # number register
    | (.)                             # one-character escapes
)""", re.X)
_ONE = {"-": "-", "e": "\\", "\\": "\\", " ": " ", "~": " ", "0": " ", "|": "", "^": "", "&": "",
        "%": "", "c": "", "/": "", ",": "", ":": "", "'": "'", "`": "`", ".": ".", '"': ""}
_ALTERNATING = {"BR", "RB", "BI", "IB", "IR", "RI"}
_FONT = {"B", "I", "SM", "SB", "R"}
_BREAKS = {"PP", "LP", "P", "sp", "HP", "br", "Pp", "Lp", "PD", "TQ", "in", "RS", "RE", "Bl", "El", "Bd", "Ed"}


@dataclass
class RoffPage:
    """A man page read: ``title`` ("mosquitto.conf(5)"), ``name_line`` (the NAME section's
    text) and ``sections``: ``[(heading path, [paragraph texts])]`` in page order."""

    title: str = ""
    name_line: str = ""
    sections: list[tuple[tuple[str, ...], list[str]]] = field(default_factory=list)


def unescape(text: str) -> str:
    """``text`` with roff escapes removed or mapped (``\\fB``, ``\\-``, ``\\(em``, ``\\*(Aq`` …)."""
    def sub(m: re.Match) -> str:
        whole = m.group(0)
        if m.group(1) is not None:
            return SPECIALS.get(m.group(1), "")
        if m.group(2) is not None:
            return SPECIALS.get(m.group(2), "")
        if whole.startswith("\\*"):
            name = whole[2:].strip("([]")
            return _STRINGS.get(name, "")
        if m.group(3) is not None:
            return _ONE.get(m.group(3), m.group(3))
        return ""
    return _ESCAPE.sub(sub, text)


def split_args(rest: str) -> list[str]:
    """A request's arguments: space-separated, double quotes group."""
    return [m.group(1) if m.group(1) is not None else m.group(2)
            for m in re.finditer(r'"((?:[^"]|"")*)"|(\S+)', rest)]


def _text_of_request(name: str, rest: str) -> str | None:
    """The text a font or mdoc inline request stands for, None for layout requests."""
    args = split_args(rest)
    if name in _ALTERNATING:
        return "".join(args)
    if name in _FONT:
        return " ".join(args)
    if name in {"Nm", "Nd", "Ar", "Cm", "Pa", "Ev", "Va", "Dv", "Er", "Ic", "Li", "Em", "Sy", "Xr", "Ql", "Dq",
                "Sq", "Pq", "Op", "Oo", "Oc", "Ns", "No", "Fa", "Fn", "Ft", "Cd", "Ad", "An", "Lk", "Mt"}:
        return " ".join(a for a in args if a not in {"Ns", "Ar", "Cm", "Fl", "Op", "Ql", "Pa", "Ev"})
    if name == "Fl":
        return " ".join("-" + a for a in args)
    return None


class _Reader:
    def __init__(self) -> None:
        self.page = RoffPage()
        self.path: tuple[str, ...] = ()
        self.paras: list[str] = []
        self.cur: list[str] = []
        self.nofill = False
        self.tag_next = False

    def flush(self) -> None:
        text = ("\n" if self.nofill else " ").join(s for s in self.cur if s.strip())
        text = re.sub(r"[ \t]+", " ", text).strip()
        if text:
            self.paras.append(text)
        self.cur = []

    def heading(self, level: int, text: str) -> None:
        self.flush()
        if self.paras or self.path:
            self.page.sections.append((self.path, self.paras))
        self.paras = []
        text = " ".join(text.split())
        self.path = (text,) if level == 1 or not self.path else (self.path[0], text)

    def add(self, text: str) -> None:
        if self.tag_next:  # the tag line of a .TP item: "tag: body"
            self.tag_next = False
            self.cur.append(text.rstrip() + ":")
            return
        self.cur.append(text)

    def finish(self) -> RoffPage:
        self.heading(1, "")
        self.page.sections = [(p, ps) for p, ps in self.page.sections if ps]
        for path, paras in self.page.sections:
            if path and path[0].upper() == "NAME" and paras:
                self.page.name_line = paras[0]
        return self.page


def read_roff(source: str) -> RoffPage:
    """Parse a man page's roff source into a :class:`RoffPage`.

    Raises:
        ValueError: the page is only a link (``.so other.1``) or holds no section with text.
    """
    lines = source.replace("\r\n", "\n").split("\n")
    r = _Reader()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        while line.endswith("\\") and not line.endswith("\\\\") and i < len(lines):  # continuation
            line = line[:-1] + lines[i]
            i += 1
        if line.startswith(('.\\"', "'\\\"", '\\"', ".\\#")) or line in {".", "'"}:
            continue
        if not line.startswith((".", "'")):
            r.add(unescape(line))
            continue
        m = re.match(r"[.'][ \t]*(\S+)[ \t]*(.*)", line)
        if not m:
            continue
        name, rest = m.group(1), m.group(2)
        if name == "de" or name == "ig":  # a macro definition or ignored block: skip to ".."
            while i < len(lines) and lines[i].strip() != "..":
                i += 1
            i += 1
            continue
        if name == "so":
            raise ValueError(f"a link to another man page ({rest.strip()}), no text of its own")
        if name == "TS":
            i = _table(lines, i, r)
            continue
        _request(r, name, rest)
    page = r.finish()
    if not page.sections:
        raise ValueError("no section with text (not a man page?)")
    return page


def _request(r: _Reader, name: str, rest: str) -> None:
    if name == "TH" or name == "Dt":
        args = split_args(unescape(rest))
        if args:
            r.page.title = f"{args[0].lower()}({args[1].lower()})" if len(args) > 1 else args[0].lower()
    elif name in {"SH", "Sh"}:
        r.heading(1, unescape(" ".join(split_args(rest))))
    elif name in {"SS", "Ss"}:
        r.heading(2, unescape(" ".join(split_args(rest))))
    elif name in {"TP", "It"}:
        r.flush()
        if name == "It" and rest.strip():
            r.cur.append(unescape(_text_of_request("Fl", rest[3:]) if rest.startswith("Fl ") else rest) + ":")
        else:
            r.tag_next = True
    elif name == "IP":
        r.flush()
        args = split_args(unescape(rest))
        if args and args[0] not in {"•", "-", "*"}:
            r.cur.append(args[0])
    elif name in _BREAKS:
        r.flush()
    elif name == "nf" or name == "EX":
        r.flush()
        r.nofill = True
    elif name == "fi" or name == "EE":
        r.flush()
        r.nofill = False
    else:
        text = _text_of_request(name, rest)
        if text is not None:
            r.add(unescape(text))


def _table(lines: list[str], i: int, r: _Reader) -> int:
    """Read a tbl table from line ``i`` (after ``.TS``): each data row becomes one paragraph with
    its cells joined by " | "; returns the index after ``.TE``."""
    r.flush()
    tab = "\t"
    while i < len(lines) and not lines[i].rstrip().endswith("."):  # options; and format lines
        opt = re.search(r"tab\s*\((.)\)", lines[i])
        if opt:
            tab = opt.group(1)
        i += 1
    i += 1
    while i < len(lines) and lines[i].strip() != ".TE":
        row = lines[i]
        i += 1
        if row.startswith((".", "'")) or row.strip() in {"_", "=", "T{", "T}"}:
            continue
        cells = [unescape(c).strip() for c in row.split(tab)]
        cells = [c for c in cells if c and c not in {"T{", "T}"}]
        if cells:
            r.paras.append(" | ".join(cells))
    return i + 1
