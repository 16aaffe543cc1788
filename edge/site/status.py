"""What the box knows about its site, from its own store (no network): for ``edge status`` and
``edge site status``.

The sync loop (:mod:`edge.site.sync`) keeps its state in the store's ``meta`` table, so any
process can report it: online or offline (and since when), the records waiting to be pushed, the
last successful sync, the last error, per-box cursors, and the items whose stock is negative.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from edge.site.sync import kept_note, waiting
from edge.stages.reply import clock_time

if TYPE_CHECKING:
    from edge.stock.store import Store

__all__ = ["site_status", "format_site", "step_back_line"]


def site_status(store: Store) -> dict:
    """The site state of ``store`` as a JSON-ready dict.

    Keys: ``box``; ``state`` ("online", "offline", "error", "stopped": another store file uses
    this box id, :mod:`edge.site.identity`; or "never" before the first sync);
    ``offline_since`` and ``last_sync`` (ISO 8601 UTC or None); ``error`` (text or None);
    ``waiting`` (this box's records not yet on the site, a count); ``boxes`` ({box: highest seq
    held}); ``negative`` ([{sku, item, location, quantity}] for stock below zero); ``kept_aside``
    ([{sku, box, records}]: other boxes' movements for SKUs this box does not know, kept until the
    item is imported here); ``clock_step_back`` (None, or the latest step of the wall clock back:
    ``{at, from, back_s}``, see :mod:`edge.stock.order`); ``mqtt`` (None before the sync has used a
    broker, else ``{state, error}``: state one of :data:`edge.site.mqtt.MQTT_STATES`, error why it is not connected, with the fix).
    """
    state = store.meta("site_state") or "never"
    return {
        "box": store.box,
        "state": state,
        "offline_since": store.meta("site_offline_since") if state in ("offline", "error", "stopped") else None,
        "last_sync": store.meta("site_last_sync"),
        "error": store.meta("site_error") or None,
        "waiting": waiting(store),
        "boxes": store.cursors(),
        "negative": [{"sku": i.sku, "item": i.item, "location": i.location, "quantity": i.quantity}
                     for i in store.negatives()],
        "kept_aside": store.kept_aside(),
        "mqtt": {"state": store.meta("mqtt_state"), "error": store.meta("mqtt_error") or None}
        if store.meta("mqtt_state") else None,
        "clock_step_back": store.clock_step_back(),
    }


def step_back_line(step: dict | None) -> list[str]:
    """The status line for :meth:`edge.stock.store.Store.clock_step_back` (none for None)."""
    if not step:
        return []
    back = float(step.get("back_s") or 0)
    size = f"{back / 3600:.1f} h" if back >= 3600 else f"{back / 60:.0f} min" if back >= 60 else f"{back:.0f} s"
    return [f"clock: the wall clock stepped back {size} at {clock_time(step.get('at'))} "
            f"({step.get('from')} -> {step.get('at')}); records keep their order by sequence, times are labels"]


def format_site(st: dict) -> list[str]:
    """Human lines for :func:`site_status`'s dict, e.g. ``site offline since 10:42, 12 records waiting``."""
    n = st["waiting"]
    records = f"{n} record{'' if n == 1 else 's'} waiting"
    if st["state"] == "stopped":  # the error starts "site sync stopped: another box uses the id goods-in"
        lines = [f"{st['error']} ({records}, since {clock_time(st['offline_since'])})"]
    elif st["state"] == "online":
        lines = [f"site online (box {st['box']}), last sync {clock_time(st['last_sync'])}, {records}"]
    elif st["state"] in ("offline", "error"):
        lines = [f"site {'offline' if st['state'] == 'offline' else 'sync failing'} since "
                 f"{clock_time(st['offline_since'])}, {records}"]
        if st["error"]:
            lines.append(f"  last error: {st['error']}")
    else:
        lines = [f"site not synced yet (box {st['box']}), {records}"]
    if st["mqtt"] and st["mqtt"]["state"] != "connected":
        lines.append(f"  MQTT {st['mqtt']['state']}: {st['mqtt']['error']}")
    for k in st["kept_aside"]:
        lines.append(kept_note(k))
    lines += step_back_line(st.get("clock_step_back"))
    for neg in st["negative"]:
        lines.append(f"  negative stock: {neg['sku']} ({neg['item']}, {neg['location']}): the records say "
                     f"{neg['quantity']}; please count them")
    return lines
