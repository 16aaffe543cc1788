"""Low stock: the one rule every surface uses (the voice, ``edge status``, the console).

An item is low when it is **below zero** (more went out than the records had: count it), **out of
stock** (0 left), or **at or below its reorder level** when it has one. An item without a reorder
level is low only when none is left. :func:`why` says which; :func:`low` finds them in the store
(indexed: the reorder-level index and the one on quantity); :func:`low_among` picks them from items
already read (an item or a place asked about).
"""
from __future__ import annotations

import sqlite3

__all__ = ["why", "low", "low_among", "report", "LOW_WHERE", "order_key"]

#: The SQL condition of :func:`why` on the ``items`` table.
LOW_WHERE = "(quantity <= 0 OR (reorder_level IS NOT NULL AND quantity - reorder_level <= 0))"


def why(item, language: str = "en") -> str | None:
    """Why ``item`` (:class:`edge.stock.store.Item`) is low: "below zero", "out of stock", "reorder at
    10" (at or below its reorder level; Mandarin: 低于零, 缺货, 补货线10), or None when it is not."""
    q, level = item.quantity, item.reorder_level
    if q < 0:
        return "低于零" if language == "zh" else "below zero"
    if q == 0:
        return "缺货" if language == "zh" else "out of stock"
    if level is not None and q <= level:
        lv = int(level) if float(level).is_integer() else level
        return f"补货线{lv}" if language == "zh" else f"reorder at {lv}"
    return None


def order_key(item) -> tuple:
    """None left first (below zero before out of stock), then the smallest margin over the reorder level, then SKU."""
    margin = item.quantity - item.reorder_level if item.reorder_level is not None else 0
    return (item.quantity > 0, item.quantity if item.quantity <= 0 else margin, item.sku)


def low(conn: sqlite3.Connection, limit: int) -> tuple[list[str], int]:
    """Up to ``limit`` SKUs that are low (:func:`why`), in :func:`order_key` order, and how many in all."""
    total = conn.execute(f"SELECT COUNT(*) FROM items WHERE {LOW_WHERE}").fetchone()[0]
    skus = [r[0] for r in conn.execute(
        f"SELECT sku FROM items WHERE {LOW_WHERE} ORDER BY quantity > 0, "
        "CASE WHEN quantity <= 0 THEN quantity ELSE quantity - reorder_level END, sku LIMIT ?", (int(limit),))]
    return skus, int(total)


def low_among(items: list, limit: int) -> tuple[list, int]:
    """The low ones of ``items`` (:func:`why`), ordered by :func:`order_key`: up to ``limit`` and how many."""
    found = sorted((i for i in items if why(i) is not None), key=order_key)
    return found[:limit], len(found)


def report(store, limit: int = 5) -> tuple[dict, str]:
    """The low items of ``store`` (:class:`edge.stock.store.Store`) as ``edge status`` and the
    console's ``/console/inventory/low.json`` give them: ``({"total", "items": [{"sku", "quantity",
    "unit", "why"}]}, one line)``, at most ``limit`` items in :func:`order_key` order."""
    items, total = store.low_stock(limit)
    listed = [{"sku": i.sku, "quantity": i.quantity, "unit": i.unit, "why": why(i)} for i in items]
    said = ", ".join(f"{x['sku']} {x['quantity']} {x['unit']} ({x['why']})" for x in listed)
    more = f" and {total - len(listed)} more" if total > len(listed) else ""
    return {"total": total, "items": listed}, f"low stock: {said}{more}" if total else "low stock: none"
