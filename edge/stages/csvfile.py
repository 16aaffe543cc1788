"""CSV files in and out of the store, made safe (a leaf module).

In (an inventory a user or a spreadsheet wrote): :func:`read_text` reads at most
:data:`MAX_CSV_BYTES` and decodes UTF-8 (with or without BOM) or BOM-marked UTF-16/UTF-32, and
names the line and the likely encoding of anything else; :func:`check_field` refuses NUL bytes,
control characters and fields over :data:`MAX_FIELD_CHARS`; :func:`parse_quantity` accepts ASCII
digits from 0 to :data:`MAX_IMPORT_QUANTITY`. The store allows at most :data:`MAX_CSV_ROWS` rows.

Out (a history someone opens in a spreadsheet): :func:`safe_cell` neutralises text cells that a
spreadsheet would run as a formula (those starting with ``=``, ``+``, ``-``, ``@``, tab or carriage
return, as OWASP's "CSV Injection" page recommends) by prefixing a single quote.

Every refusal is a ``ValueError`` whose message starts with the place (``line N, column 'x'``);
the store adds the file name and raises its own error.
"""
from __future__ import annotations

import codecs
import csv
import re
import unicodedata
from pathlib import Path
from typing import Iterator, TextIO

#: The largest inventory CSV read, bytes (a 10,000-item inventory is about 1 MiB).
#: Columns an inventory CSV must have (in any order; extra columns are ignored).
CSV_COLUMNS = ("sku", "item", "location", "quantity", "unit", "aliases")
MAX_CSV_BYTES = 16 * 2**20
#: The most item rows one import takes.
MAX_CSV_ROWS = 100_000
#: The longest field, characters (names, places, alias lists).
MAX_FIELD_CHARS = 1_000
#: The largest quantity an import accepts, in the item's unit. With at most
#: ``edge.stages.dialog.MAX_QUANTITY`` (10^6) per spoken log, sums stay far inside SQLite's 64-bit INTEGER.
MAX_IMPORT_QUANTITY = 10**9

_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_DIGITS = re.compile(r"[0-9]+")
#: the first characters that make a spreadsheet evaluate a cell
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def read_text(path: Path) -> str:
    """The text of the CSV file ``path``.

    Raises:
        OSError: the file cannot be read.
        ValueError: larger than :data:`MAX_CSV_BYTES`, or not in a detectable Unicode encoding (the
            message names the line, the byte and the encoding it looks like).
    """
    with path.open("rb") as f:
        data = f.read(MAX_CSV_BYTES + 1)
    if len(data) > MAX_CSV_BYTES:
        raise ValueError(f"larger than {MAX_CSV_BYTES // 2**20} MiB; fix: split it into smaller files")
    encoding = next((enc for bom, enc in _BOMS if data.startswith(bom)), "utf-8")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise ValueError(f"line {line}: not {encoding.upper().replace('-SIG', '')} text (byte 0x{data[e.start]:02X} "
                         f"at byte {e.start}); it looks like {_guess(data)}; fix: save it as 'CSV UTF-8'") from e


def _guess(data: bytes) -> str:
    """The encoding ``data`` probably is, for the error message."""
    head = data[:4096]
    if head.count(0) > len(head) // 4:
        return "UTF-16 without a byte-order mark"
    try:
        head.decode("cp1252")
        return "Windows-1252 or Latin-1 (a spreadsheet's 'CSV' export)"
    except UnicodeDecodeError:
        return "a legacy 8-bit code page"


def check_field(value: str, where: str) -> str:
    """``value`` if it is at most :data:`MAX_FIELD_CHARS` long and holds no NUL or control character;
    ``where`` (``line 3, column 'item'``) starts the ``ValueError`` otherwise."""
    if len(value) > MAX_FIELD_CHARS:
        raise ValueError(f"{where}: {len(value)} characters, more than {MAX_FIELD_CHARS}; fix: shorten it")
    for i, ch in enumerate(value):
        if unicodedata.category(ch) == "Cc":
            name = "a NUL byte" if ch == "\0" else f"control character U+{ord(ch):04X}"
            raise ValueError(f"{where}: {name} at character {i + 1}; fix: remove it (a line break inside a "
                             f"quoted value counts too)")
    return value


def parse_quantity(value: str, where: str) -> int:
    """The whole number ``value`` (ASCII digits, 0 … :data:`MAX_IMPORT_QUANTITY`), or ``ValueError``."""
    v = value.strip()
    if not _DIGITS.fullmatch(v):
        raise ValueError(f"{where}: {value[:40]!r} is not a non-negative integer; fix: write a whole number "
                         f"such as 12")
    q = int(v) if len(v) <= 20 else MAX_IMPORT_QUANTITY + 1
    if q > MAX_IMPORT_QUANTITY:
        raise ValueError(f"{where}: {v[:40]} is more than {MAX_IMPORT_QUANTITY:,}, the largest quantity the store takes; "
                         f"fix: check the cell (a spreadsheet may have filled it), or count in a larger unit")
    return q


def safe_cell(value: object) -> object:
    """``value`` for a CSV export: text starting with one of :data:`FORMULA_START` gets a leading
    ``'`` so a spreadsheet shows it as text; numbers and other text are unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def split_aliases(text: str) -> tuple[str, ...]:
    """The ``;``-separated aliases of an inventory row, stripped, empty ones dropped."""
    return tuple(a.strip() for a in (text or "").split(";") if a.strip())


def parse_inventory(f: TextIO) -> list[tuple[str, str, str, int, str, str]]:
    """The rows of an inventory CSV read from ``f``: ``(sku, item, location, quantity, unit, aliases)``.

    Raises:
        ValueError: the first problem, starting with its line (and column), with the fix.
    """
    reader = csv.reader(f)
    try:
        header = next(reader, None)
    except csv.Error as e:
        raise ValueError(f"line 1: malformed CSV: {e}") from e
    if header is None:
        raise ValueError(
            f"line 1: file is empty; fix: add the header row {','.join(CSV_COLUMNS)}"
        )
    names = [h.strip().lower() for h in header]
    for col in CSV_COLUMNS:
        if col not in names:
            raise ValueError(
                f"line 1: missing column {col!r} (header is {','.join(header)!r}); "
                f"fix: the header row must contain {','.join(CSV_COLUMNS)}"
            )
    index = {col: names.index(col) for col in CSV_COLUMNS}
    rows: list[tuple[str, str, str, int, str, str]] = []
    seen: dict[str, int] = {}
    for col, name in enumerate(header):
        check_field(name, f"line 1, column {col + 1}")
    for fields in _rows(reader):
        line = reader.line_num
        if not fields or all(not x.strip() for x in fields):
            continue  # blank line
        if len(rows) >= MAX_CSV_ROWS:
            raise ValueError(f"line {line}: more than {MAX_CSV_ROWS:,} items; fix: split the "
                             f"file and import the parts one after the other")
        if len(fields) != len(header):
            raise ValueError(
                f"line {line}: {len(fields)} fields but the header has {len(header)}; "
                "fix: give every row one value per column (quote values containing commas)"
            )
        for col, value in enumerate(fields):
            check_field(value, f"line {line}, column {header[col].strip()!r}")
        v = {col: fields[i].strip() for col, i in index.items()}
        if not v["sku"]:
            raise ValueError(f"line {line}, column 'sku': empty; fix: give the row a SKU")
        for col in ("item", "location", "unit"):
            if not v[col]:
                raise ValueError(f"line {line}, column {col!r}: empty; fix: give {v['sku']} "
                                 f"{'a name' if col == 'item' else 'a ' + col} (e.g. "
                                 f"{ {'item': 'M8 bolt', 'location': 'bin 12', 'unit': 'pcs'}[col]!r})")
        if v["sku"] in seen:
            raise ValueError(
                f"line {line}, column 'sku': {v['sku']!r} already appears on line "
                f"{seen[v['sku']]}; fix: keep one row per SKU"
            )
        seen[v["sku"]] = line
        quantity = parse_quantity(v["quantity"], f"line {line}, column 'quantity'")
        aliases = ";".join(split_aliases(v["aliases"]))
        rows.append((v["sku"], v["item"], v["location"], quantity, v["unit"], aliases))
    return rows

def _rows(reader) -> Iterator[list[str]]:
    """The rows of ``reader``; a CSV syntax error names its line."""
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise ValueError(f"line {reader.line_num}: malformed CSV: {e}; fix: check the "
                             f"quotes on that line") from e
        yield fields
