"""The site's figures on ``/metrics`` (Prometheus), read from the box's store at every scrape: the
sync loop (another process) keeps its state there, so no network is needed.

* ``edge_site_online``: 1 while the site sync reports the site reachable, else 0;
* ``edge_site_records_waiting``: this box's records not yet on the site (count);
* ``edge_site_records{box}``: the highest record number held per box (count);
* ``edge_stock_negative_items``: SKUs whose stock is below zero (count);
* ``edge_stock_negative{sku,location}``: the (negative) quantity of each such SKU, in its unit.
"""
from __future__ import annotations

import logging
from pathlib import Path

from prometheus_client.core import GaugeMetricFamily

from edge.stock.store import Store, StoreError

__all__ = ["SiteCollector"]

log = logging.getLogger(__name__)


class SiteCollector:
    """A ``prometheus_client`` collector for the store at ``path`` (never created here). Never
    raises: a missing or unreadable store leaves the site figures out of the scrape."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def collect(self):
        if not self.path.exists():
            return
        try:
            with Store(self.path) as store:
                state, waiting = store.meta("site_state"), store.unpushed()
                boxes, negative = store.cursors(), store.negatives()
        except StoreError as e:
            log.warning("site metrics: %s", e)
            return
        yield GaugeMetricFamily("edge_site_online", "1 while the site database is reachable",
                                value=1.0 if state == "online" else 0.0)
        yield GaugeMetricFamily("edge_site_stopped", "1 while the site sync is stopped (another box uses this box id)",
                                value=1.0 if state == "stopped" else 0.0)
        yield GaugeMetricFamily("edge_site_records_waiting", "this box's records not yet on the site",
                                value=float(waiting))
        held = GaugeMetricFamily("edge_site_records", "highest record number held, per box", labels=["box"])
        for box, seq in sorted(boxes.items()):
            held.add_metric([box], float(seq))
        yield held
        yield GaugeMetricFamily("edge_stock_negative_items", "SKUs whose stock is below zero (count them)",
                                value=float(len(negative)))
        neg = GaugeMetricFamily("edge_stock_negative", "stock below zero, in the item's unit", labels=["sku", "location"])
        for item in negative:
            neg.add_metric([item.sku, item.location], float(item.quantity))
        yield neg
