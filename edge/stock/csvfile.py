"""CSV files in and out of the store, made safe (a leaf module).

In (an inventory a user or a spreadsheet wrote): :func:`read_text` reads at most
:data:`MAX_CSV_BYTES` and :func:`decode` decodes UTF-8 (with or without BOM) or BOM-marked UTF-16/UTF-32,
and names the line and the likely encoding of anything else (UTF-16 without a BOM included); :func:`check_field` refuses NUL bytes,
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
import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence, TextIO

from edge.stages.names import name_key, spoken_key

#: Columns an inventory CSV must have (in any order; extra columns are ignored).
CSV_COLUMNS = ("sku", "item", "location", "quantity", "unit", "aliases")
#: Columns an inventory CSV may have: ``reorder_level`` (low stock at or below it; empty = none).
OPTIONAL_COLUMNS = ("reorder_level",)
#: Units whose quantities may have decimals (metres, kilograms, grams, litres, millilitres); every
#: other unit is counted in whole units and refuses a fraction.
DECIMAL_UNITS = frozenset({"m", "kg", "g", "l", "ml"})
#: The largest inventory CSV read, bytes (a 10,000-item inventory is about 1 MiB).
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
#: Unicode category Cc (the C0 and C1 control characters and DEL)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]{1,6})?")
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
        return decode(f.read(MAX_CSV_BYTES + 1))


def decode(data: bytes) -> str:
    """The text of an inventory CSV's bytes ``data``: UTF-8 (with or without BOM) or BOM-marked
    UTF-16/UTF-32. The one decoding of ``edge inventory import`` and the console's file upload.

    Raises:
        ValueError: larger than :data:`MAX_CSV_BYTES`, UTF-16 without a byte-order mark, or not in a
            detectable Unicode encoding (the message names the line, the byte and the encoding it
            looks like, and the fix).
    """
    if len(data) > MAX_CSV_BYTES:
        raise ValueError(f"larger than {MAX_CSV_BYTES // 2**20} MiB; fix: split it into smaller files")
    encoding = next((enc for bom, enc in _BOMS if data.startswith(bom)), "utf-8")
    if encoding == "utf-8" and (order := _utf16_order(data)) is not None:
        # ASCII text in UTF-16 is valid UTF-8 with a NUL after (or before) every character
        raise ValueError(f"line 1: UTF-16 without a byte-order mark ({order}: every other byte is 0x00); "
                         f"fix: save it as 'CSV UTF-8' (or as UTF-16 with a byte-order mark)")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise ValueError(f"line {line}: not {encoding.upper().replace('-SIG', '')} text (byte 0x{data[e.start]:02X} "
                         f"at byte {e.start}); it looks like {_guess(data)}; fix: save it as 'CSV UTF-8'") from e


def _utf16_order(data: bytes) -> str | None:
    """``"little-endian"`` or ``"big-endian"`` when the first 4 KiB look like UTF-16 of mostly Latin text without a
    byte-order mark (NUL in at least 3 of 8 odd or even bytes), else None."""
    head = data[:4096]
    if len(head) < 4:
        return None
    odd, even = head[1::2], head[0::2]
    if odd.count(0) * 8 >= len(odd) * 3 and even.count(0) < len(even) // 8:
        return "little-endian"
    if even.count(0) * 8 >= len(even) * 3 and odd.count(0) < len(odd) // 8:
        return "big-endian"
    return None


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
    bad = _CONTROL.search(value)  # the Unicode category Cc, found at C speed
    if bad is not None:
        ch, i = bad.group(), bad.start()
        name = "a NUL byte" if ch == "\0" else f"control character U+{ord(ch):04X}"
        raise ValueError(f"{where}: {name} at character {i + 1}; fix: remove it (a line break inside a "
                         f"quoted value counts too)")
    return value


def parse_quantity(value: str, where: str, decimals: bool = False) -> int | float:
    """The whole number ``value`` (ASCII digits, 0 … :data:`MAX_IMPORT_QUANTITY`), or ``ValueError``;
    with ``decimals`` (a unit of :data:`DECIMAL_UNITS`) also ``12.5`` (a float, at most 6 decimals)."""
    v = value.strip()
    if decimals and _DECIMAL.fullmatch(v) and len(v) <= 20:
        q: int | float = float(v) if "." in v else int(v)
        if isinstance(q, float) and q.is_integer():
            q = int(q)
    elif not _DIGITS.fullmatch(v):
        raise ValueError(f"{where}: {value[:40]!r} is not a non-negative integer; fix: write a whole number "
                         f"such as 12{' or a decimal such as 2.5' if decimals else ''}")
    else:
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


def write_rows(fileobj: TextIO, header: Sequence[str], rows: list[Sequence[object]]) -> int:
    """Write ``header`` and ``rows`` as CSV, every cell through :func:`safe_cell`; returns the rows."""
    writer = csv.writer(fileobj)
    writer.writerow(header)
    for row in rows:
        writer.writerow([safe_cell(v) for v in row])
    return len(rows)


def split_aliases(text: str) -> tuple[str, ...]:
    """The ``;``-separated aliases of an inventory row, stripped, empty ones dropped."""
    return tuple(a.strip() for a in (text or "").split(";") if a.strip())


@dataclass(frozen=True)
class InventoryRow:
    """One row of an inventory CSV: one SKU at one place. ``quantity``: int, or float for a unit of
    :data:`DECIMAL_UNITS`; ``aliases``: ``;``-joined; ``reorder_level``: None when the cell is empty
    or the column absent; ``line``: the row's line in the file."""

    sku: str
    item: str
    location: str
    quantity: int | float
    unit: str
    aliases: str
    reorder_level: int | float | None
    line: int


def allows_decimals(unit: str) -> bool:
    """Whether quantities in ``unit`` may have decimals (:data:`DECIMAL_UNITS`: ``m``, ``kg`` …)."""
    return unit.strip().lower() in DECIMAL_UNITS


def parse_inventory(f: TextIO) -> list[InventoryRow]:
    """The rows of an inventory CSV read from ``f`` (:class:`InventoryRow`, in file order).

    One row per SKU and place: a SKU on several rows is stored in several places; its rows must
    agree on ``item`` and ``unit``, and a place may appear once per SKU. The optional column
    ``reorder_level`` (empty = none) is a quantity at or below which the item is low on stock.

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
    for name in names:  # an optional column misspelt would be ignored as an extra one: say so
        near = difflib.get_close_matches(name, OPTIONAL_COLUMNS, n=1, cutoff=0.8)
        if near and name not in OPTIONAL_COLUMNS:
            raise ValueError(f"line 1: column {name!r} is not known; fix: did you mean {near[0]!r}?")
    index = {col: names.index(col) for col in (*CSV_COLUMNS, *OPTIONAL_COLUMNS) if col in names}
    rows: list[InventoryRow] = []
    first: dict[str, InventoryRow] = {}
    places: dict[tuple[str, str], int] = {}
    keys: dict[str, str] = {}  # place → name key: a few hundred places serve thousands of rows
    for col, name in enumerate(header):
        check_field(name, f"line 1, column {col + 1}")
    for fields in _rows(reader):
        line = reader.line_num
        if not fields or all(not x.strip() for x in fields):
            continue  # blank line
        if len(rows) >= MAX_CSV_ROWS:
            raise ValueError(f"line {line}: more than {MAX_CSV_ROWS:,} rows; fix: split the "
                             f"file and import the parts one after the other")
        row = _row(fields, header, index, line)
        seen = first.get(row.sku)
        if seen is not None:
            _same_item(seen, row)
        key = keys.get(row.location)
        if key is None:
            key = keys[row.location] = name_key(row.location)
        place = (row.sku, key)
        if place in places:
            raise ValueError(f"line {line}, column 'location': {row.sku} is already listed at {row.location!r} "
                             f"on line {places[place]}; fix: one row per SKU and place")
        places[place] = line
        first.setdefault(row.sku, row)
        rows.append(row)
    return rows


def _row(fields: list[str], header: list[str], index: dict[str, int], line: int) -> InventoryRow:
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
    decimals = allows_decimals(v["unit"])
    quantity = parse_quantity(v["quantity"], f"line {line}, column 'quantity'", decimals)
    level = v.get("reorder_level", "")
    reorder = parse_quantity(level, f"line {line}, column 'reorder_level'", decimals) if level else None
    return InventoryRow(v["sku"], v["item"], v["location"], quantity, v["unit"], ";".join(split_aliases(v["aliases"])),
                        reorder, line)


def _same_item(seen: InventoryRow, row: InventoryRow) -> None:
    """A SKU's second row (another place) must name the same item in the same unit, with the same
    reorder level where both give one (it is the item's, not the place's; the first row's is kept)."""
    for col in ("item", "unit"):
        if getattr(seen, col) != getattr(row, col):
            raise ValueError(f"line {row.line}, column {col!r}: {row.sku} is {getattr(row, col)!r} here but "
                             f"{getattr(seen, col)!r} on line {seen.line}; fix: a SKU on several rows (several "
                             f"places) keeps one {'name' if col == 'item' else col}")
    if None not in (seen.reorder_level, row.reorder_level) and seen.reorder_level != row.reorder_level:
        raise ValueError(f"line {row.line}, column 'reorder_level': {row.sku} has {row.reorder_level} here but "
                         f"{seen.reorder_level} on line {seen.line}; fix: a SKU's reorder level is one number for "
                         "all its places (give it on its first row)")


def check_names(rows: list[InventoryRow], held: list[tuple[str, str, bool]] | None = None) -> None:
    """Refuse an item name that compares equal (under :func:`edge.stages.names.name_key`) to the
    name or an alias of another SKU. An alias shared by several SKUs is allowed: it names a group
    ("M8 bolt" for every length), and the dialog asks which one. ``held``: the names and aliases of
    items already stored and not in ``rows``, as ``(sku, text, is_name)``.

    Raises:
        ValueError: naming both lines (or the stored item) and both names.
    """
    names: dict[str, tuple[str, str, str]] = {}
    aliases: dict[str, tuple[str, str, str]] = {}
    entries = [(sku, text, is_name, "the store") for sku, text, is_name in held or ()]
    entries += [(row.sku, n, i == 0, f"line {row.line}") for row in rows
                for i, n in enumerate((row.item, *split_aliases(row.aliases)))]
    for sku, text, is_name, where in entries:
        k = name_key(text)
        if not k:
            continue
        clash = names.get(k) if not is_name else (names.get(k) or aliases.get(k))
        if clash is not None and clash[0] != sku:
            raise ValueError(f"{where}: {sku} {text!r} and {clash[0]} {clash[1]!r} ({clash[2]}) are the same name "
                             "when spoken or compared; fix: rename one or drop the alias")
        (names if is_name else aliases).setdefault(k, (sku, text, where))


def sound_alikes(rows: list[InventoryRow], held: list[tuple[str, str, bool]] | None = None) -> list[tuple[str, str, str, str]]:
    """Items whose names or aliases differ in writing but sound the same
    (:func:`edge.stages.names.spoken_key` equal, :func:`edge.stages.names.name_key` not: "Muller
    clamp" and "Müller clamp"): ``(sku, name, other sku, other name)``, each pair of SKUs once, the
    stored items (``held``, as in :func:`check_names`) first, then in file order. Not refused (they
    are two items in writing); a voice turn that hears such a name asks which one."""
    seen: dict[str, list[tuple[str, str, str]]] = {}  # spoken key → (sku, text, name key)
    pairs: set[frozenset[str]] = set()
    out: list[tuple[str, str, str, str]] = []
    entries = [(sku, text) for sku, text, _is_name in held or ()]
    entries += [(row.sku, n) for row in rows for n in (row.item, *split_aliases(row.aliases))]
    for sku, text in dict.fromkeys(entries):  # a SKU on several rows (places) says its names once
        spoken, key = spoken_key(text), name_key(text)
        if not spoken:
            continue
        for other, other_text, other_key in seen.get(spoken, ()):
            pair = frozenset((sku, other))
            if other != sku and other_key != key and pair not in pairs:
                pairs.add(pair)
                out.append((other, other_text, sku, text))
        seen.setdefault(spoken, []).append((sku, text, key))
    return out


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
