"""An inventory CSV into the store's SQLite file, and what the file leaves out or makes hard to hear.

:func:`import_inventory` checks the names (two SKUs that compare equal are refused,
:func:`edge.stock.csvfile.check_names`), writes the rows (:func:`edge.stock.places.import_rows`)
and returns an :class:`ImportReport`:

* the items the store holds that the file does not list (``missing``). They are kept, as stock
  tools' imports keep what a file does not name (Odoo, InvenTree and Snipe-IT update and add, and
  never delete from an import); the report names them so a shortened file is not mistaken for the
  whole inventory. ``prune=True`` removes those of them that no record names (never logged, moved
  or counted: nothing in the append-only history refers to them); one with records stays, its
  history intact;
* the items whose names differ only by accents (:func:`edge.stock.csvfile.sound_alikes`: "Muller
  clamp" and "Müller clamp"): two items in writing, one when spoken. Not refused; the box asks which
  one by place or SKU when it hears such a name.

Every function takes an open connection inside the caller's transaction; a ``ValueError`` is a
refusal of the file (the store adds the file name).
"""
from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Callable

from edge.stock import places
from edge.stock.csvfile import InventoryRow, check_names, sound_alikes, split_aliases

#: SKUs an import summary names before "and N more"
MAX_NAMED = 5


@dataclass(frozen=True)
class ImportReport:
    """What one inventory import did. ``rows``: rows of the file (one per SKU and place);
    ``items``: SKUs in the file; ``missing``: SKUs the store held that the file does not list, by
    SKU; ``removed``: those of them removed (``prune``, never named by a record); ``sound_alike``:
    ``(sku, name, other sku, other name)`` of items whose names sound the same."""

    rows: int
    items: int
    missing: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    sound_alike: tuple[tuple[str, str, str, str], ...] = ()

    @property
    def kept(self) -> tuple[str, ...]:
        """The missing SKUs still in the store."""
        gone = set(self.removed)
        return tuple(s for s in self.missing if s not in gone)

    def notes(self, pruned: bool = False) -> list[str]:
        """The lines an import prints after its count: the items kept or removed that the file does
        not list, and the names that sound alike. ``pruned``: the import was asked to prune."""
        out = []
        if self.removed:
            out.append(f"removed {_count(self.removed)} in the store that {_are(self.removed)} not in this file "
                       f"and never moved: {_named(self.removed)}")
        if self.kept:
            n, are = _count(self.kept), _are(self.kept)
            out.append(f"{n} in the store {are} not in this file but {'has' if are == 'is' else 'have'} stock "
                       f"records: kept: {_named(self.kept)}" if pruned else
                       f"{n} in the store {are} not in this file: kept (--prune removes those with no stock "
                       f"records): {_named(self.kept)}")
        for sku, name, other, other_name in self.sound_alike[:MAX_NAMED]:
            out.append(f"warning: {sku} {name!r} and {other} {other_name!r} sound the same when spoken; "
                       "the box will ask which one by place or SKU")
        if len(self.sound_alike) > MAX_NAMED:
            out.append(f"warning: {len(self.sound_alike) - MAX_NAMED} more pairs of names sound the same")
        return out


def _count(skus: tuple[str, ...]) -> str:
    return f"{len(skus)} item{'' if len(skus) == 1 else 's'}"


def _are(skus: tuple[str, ...]) -> str:
    return "is" if len(skus) == 1 else "are"


def _named(skus: tuple[str, ...]) -> str:
    shown = ", ".join(skus[:MAX_NAMED])
    return shown + (f" and {len(skus) - MAX_NAMED} more" if len(skus) > MAX_NAMED else "")


def import_inventory(conn: sqlite3.Connection, rows: list[InventoryRow],
                     write_count: Callable[[str, int | float, str, int | float], int], prune: bool = False) -> ImportReport:
    """Write ``rows`` into the store (``write_count`` as :func:`edge.stock.places.import_rows`
    takes it) and report what the file leaves out; ``prune``: remove the left-out items no record
    names (their places too).

    Raises:
        ValueError: a name or alias equals another SKU's (:func:`edge.stock.csvfile.check_names`).
    """
    skus = {r.sku for r in rows}
    held = [(sku, n, i == 0) for sku, item, aliases in conn.execute("SELECT sku, item, aliases FROM items")
            if sku not in skus for i, n in enumerate((item, *split_aliases(aliases)))]
    check_names(rows, held)
    missing = tuple(sorted({sku for sku, _n, _is_name in held}))
    places.import_rows(conn, rows, write_count)
    removed: tuple[str, ...] = ()
    if prune and missing:
        named = {s for (s,) in conn.execute("SELECT DISTINCT sku FROM records WHERE sku IN "
                                            "(SELECT value FROM json_each(?))", (json.dumps(missing),))}
        removed = tuple(s for s in missing if s not in named)
        gone = json.dumps(removed)
        conn.execute("DELETE FROM stock WHERE sku IN (SELECT value FROM json_each(?))", (gone,))
        conn.execute("DELETE FROM items WHERE sku IN (SELECT value FROM json_each(?))", (gone,))
        places.bump_items_version(conn)
    kept = [h for h in held if h[0] not in set(removed)]
    return ImportReport(len(rows), len(skus), missing, removed, tuple(sound_alikes(rows, kept)))
