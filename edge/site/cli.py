"""``edge site init|sync|status`` on the command line: :func:`register` adds them to ``edge``.

    edge site init [--json]            create or migrate the server schema (once per site)
    edge site sync [--once] [--json]   push and pull until stopped (SIGTERM/SIGINT), or one round
    edge site resync [--json]          rebuild this box's view from the site (a lost or replaced store)
    edge site status [--json]          local state, and per box lag when the server answers
"""
from __future__ import annotations

import json
import signal
import sys
import threading
from typing import TYPE_CHECKING

from edge.config import ConfigError, Settings, load_settings

if TYPE_CHECKING:
    from edge.stock.store import Store

# The commands import the server, MQTT and sync modules (psycopg, paho: ~0.5 s of imports on a board)
# themselves: every `edge` command registers these subcommands, and `edge ask` must not pay for them.

__all__ = ["register", "site_settings", "server_status"]


def site_settings(settings: Settings):
    """``settings.site``; :class:`ConfigError` with the fix when the config has no ``site:`` section."""
    if settings.site is None:
        raise ConfigError("site: not configured; fix: add a site: section with box and dsn to the config "
                          "(the keys are listed under site: in edge/defaults.yaml)")
    return settings.site


def _settings(args) -> Settings:
    return load_settings(getattr(args, "config", None), getattr(args, "board", None))


def _print(args, data: dict, lines: list[str]) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False) if args.json else "\n".join(lines))


def cmd_init(args) -> int:
    from edge.site.server import connect, init_schema

    site = site_settings(_settings(args))
    with connect(site) as conn:
        before, after = init_schema(conn)
    _print(args, {"before": before, "after": after},
           [f"site schema version {before} -> {after}" if before != after else f"site schema is at version {after}"])
    return 0


def cmd_sync(args) -> int:
    from edge.site.mqtt import MqttEvents
    from edge.site.server import SiteError
    from edge.site.status import format_site, site_status
    from edge.site.sync import SiteSync
    from edge.stock.store import Store

    settings = _settings(args)
    site = site_settings(settings)
    def tell(e: SiteError) -> None:
        print(f"edge site sync: {e}", file=sys.stderr, flush=True)

    with Store(settings.store.path, box=site.box) as store:
        events = MqttEvents(store, site, on_error=tell) if site.mqtt is not None else None
        sync = SiteSync(store, site, listener=events)
        try:
            if args.once:
                if events is not None:
                    events.connected.wait(site.mqtt.keepalive_s)  # bounded: the events may wait for the broker
                sent, got = sync.sync_once()
                _print(args, {"sent": sent, "received": got, **site_status(store)},
                       [f"sent {sent}, received {got}", *format_site(site_status(store))])
                return 0
            stop = threading.Event()
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, lambda *_: stop.set())
            sync.run(stop, on_error=tell)
        finally:
            sync.close()
            if events is not None:
                events.close()
    return 0


def cmd_resync(args) -> int:
    from edge.site.sync import SiteSync
    from edge.stock.store import Store

    settings = _settings(args)
    site = site_settings(settings)
    with Store(settings.store.path, box=site.box) as store:
        sync = SiteSync(store, site)
        try:
            out = sync.resync()
        finally:
            sync.close()
    _print(args, out, [f"restored {out['restored']} of this box's records from the site, pushed {out['pushed']}, "
                       f"pulled {out['pulled']}; {out['site_lacks']} records here that the site lacks"])
    return 0


def server_status(conn, store: Store) -> dict:
    """Per box on the server: ``{box: {"seq": highest seq, "last_received": ISO time, "lag": records
    the store lacks}}``; raises :class:`SiteError` when the schema is not this program's."""
    from edge.site.server import require_schema

    require_schema(conn)
    held = store.cursors()
    rows = conn.execute("SELECT box, MAX(seq), MAX(received) FROM edge_movements GROUP BY box ORDER BY box").fetchall()
    return {box: {"seq": int(seq), "last_received": received.isoformat(timespec="seconds"),
                  "lag": int(seq) - held.get(box, 0)} for box, seq, received in rows}


def cmd_status(args) -> int:
    from edge.site.server import SiteError, connect
    from edge.site.status import format_site, site_status
    from edge.stock.store import Store

    settings = _settings(args)
    site = site_settings(settings)
    with Store(settings.store.path, box=site.box) as store:
        st = site_status(store)
        lines = format_site(st)
        try:
            with connect(site) as conn:
                st["server"] = server_status(conn, store)
        except SiteError as e:
            st["server"], st["server_error"] = None, str(e)
            lines.append(f"server: {e}")
        else:
            for box, b in st["server"].items():
                lines.append(f"  box {box}: {b['seq']} records on the site, last at {b['last_received']}, "
                             f"{b['lag']} not yet here")
    _print(args, st, lines)
    return 0


def register(sub, common) -> None:
    """Add ``edge site`` to the ``edge`` command's subparsers (``common`` adds --config/--board)."""
    p = sub.add_parser("site", help="several boxes, one stock: sync with the site's PostgreSQL")
    ssub = p.add_subparsers(dest="sub", required=True)
    q = ssub.add_parser("init", help="create or migrate the site database schema (once per site)")
    common(q)
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_init)
    q = ssub.add_parser("sync", help="push this box's records and pull the others' until stopped")
    common(q)
    q.add_argument("--once", action="store_true", help="one push and pull, then exit")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_sync)
    q = ssub.add_parser("resync", help="rebuild this box's view from the site (restores a lost store's records)")
    common(q)
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_resync)
    q = ssub.add_parser("status", help="online/offline, records waiting, last sync, per box lag")
    common(q)
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_status)
