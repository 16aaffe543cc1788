"""The ``edge`` command line (argparse).

    edge run [--input FILE.wav] [--config FILE] [--board NAME] [--output-dir DIR] [--json] [--inventory CSV]
    edge ask "TEXT" [--json]
    edge inventory import FILE.csv
    edge records export --csv
    edge models list|verify [--json]
    edge models add FILE [--id ID] [--trust-on-first-use]
    edge serve [--config FILE] [--host H] [--port P]
    edge doctor|install|uninstall, edge models bundle|install   (edge/deploy_cli.py)
    edge bench [--model NAME] [--runs N] [--json] [--out DIR] [--no-loop]   (edge/bench.py)
    edge status [--json] [--interval S]
    edge site init|sync|status [--json]   (edge/site/cli.py)
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from edge.config import ConfigError, load_settings


def _settings(args, overrides=None):
    return load_settings(getattr(args, "config", None), getattr(args, "board", None), overrides)


def _store(settings):
    from edge.stages.store import Store

    return Store(settings.store.path, box=settings.site.box if settings.site else None)


def _output_dir(settings) -> Path:
    out = Path(settings.output_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / ".write-test").touch()
        (out / ".write-test").unlink()
    except OSError as e:
        raise ConfigError(f"output_dir: cannot write into {out} ({e.strerror or e}); "
                          f"choose a writable folder with --output-dir or output_dir in the config") from None
    return out


def cmd_run(args) -> int:
    import time

    from drivers.audio import wav_frames
    from edge.loop.build import build_stages, preflight, printer, run_frames, stderr

    overrides = {"output_dir": args.output_dir} if args.output_dir else None
    settings = _settings(args, overrides)
    first, frames = None, iter(())
    if args.input:
        frames = wav_frames(args.input)  # the file is checked before anything is changed or loaded
        first = next(frames, None)
        if first is None:
            stderr(f"warning: {args.input} holds no audio samples; nothing to do")
    preflight(settings)  # every configured model resolves, before the store changes or models load
    out = _output_dir(settings)
    store = _store(settings)
    if args.inventory:
        n = store.import_csv(args.inventory)
        stderr(f"imported {n} items from {args.inventory} into {settings.store.path}")
    if not store.items():
        stderr(f"warning: the store {settings.store.path} has no items; load them with "
               f"'edge inventory import FILE.csv' (or --inventory FILE.csv)")
    emit = printer(args.json, out / "events.jsonl")
    if args.input:
        if first is None:
            return 0
        stages = build_stages(settings, store)

        def all_frames():
            yield first
            yield from frames

        t0 = time.perf_counter()
        p = run_frames(all_frames(), stages, settings, out, emit)
        wall = time.perf_counter() - t0
        stderr(f"{args.input}: {p.t_ms / 1000:.1f} s of audio in {wall:.1f} s "
               f"(real-time factor {wall / max(p.t_ms / 1000, 1e-9):.2f}), {p.turns} turn(s); events in {out / 'events.jsonl'}")
        return 0
    # live: READY/WATCHDOG/STATUS to systemd, waits for a late microphone
    from edge.service.supervisor import run_service

    return run_service(settings, store, out, emit)


def cmd_ask(args) -> int:
    import uuid

    from edge import events as ev
    from edge.loop.build import build_llm, build_understanding, printer
    from edge.stages.dialog import act

    if not args.text.strip():
        raise ValueError('edge ask: give the words to understand, e.g. edge ask "how many M8 bolts are in bin twelve"')
    settings = _settings(args)
    store = _store(settings)
    if not store.items():
        print(f"warning: the store {settings.store.path} has no items; load them with "
              f"'edge inventory import FILE.csv'", file=sys.stderr)
    und = build_understanding(settings, store, build_llm(settings))
    emit = printer(args.json)
    turn = uuid.uuid4().hex[:12]
    intent = und.understand(args.text)
    if intent is None:
        emit(ev.NoSpeech(0, turn, 0))
    else:
        emit(ev.IntentEvent(0, turn, intent.intent, intent.slots(), intent.source))
        emit(ev.Reply(0, turn, act(intent, store, args.text, turn, language=settings.language).text, None))
    emit(ev.TurnEnd(0, turn, {}))
    return 0


def cmd_inventory_import(args) -> int:
    settings = _settings(args)
    with _store(settings) as store:
        n = store.import_csv(args.file)
    print(f"imported {n} items from {args.file} into {settings.store.path}")
    return 0


def cmd_records_export(args) -> int:
    settings = _settings(args)
    with _store(settings) as store:
        store.export_csv(sys.stdout)
    return 0


def cmd_models_verify(args) -> int:
    from edge.models import manifest as models
    checks = models.verify(args.model)
    bad = [c for c in checks if not c.ok]
    for c in checks:
        print(json.dumps(c.to_dict()) if args.json else str(c))
    if not args.json:
        print(f"{len(checks) - len(bad)} ok, {len(bad)} failed")
    return 1 if bad else 0


def cmd_models_list(args) -> int:
    from edge.models import manifest as models
    m = models.load_manifest()
    rows = [{"id": e.id, "kind": e.kind, "size_mib": round(sum(f.size for f in e.files) / 2**20, 1),
             "licence": e.licence, "source": e.requirement, "note": e.note} for e in m.models]
    if args.json:
        for r in rows:
            print(json.dumps(r))
        return 0
    print(f"{'id':<30} {'kind':<10} {'MiB':>7}  {'licence':<18} source")
    for r in rows:
        print(f"{r['id']:<30} {r['kind']:<10} {r['size_mib']:>7}  {r['licence']:<18} {r['source']}")
    return 0


def cmd_models_add(args) -> int:
    from edge.models import local as model_install
    settings = _settings(args)
    models_dir = Path(args.models_dir) if args.models_dir else settings.models.dir
    try:
        res = model_install.add(args.file, args.id, models_dir, trust_on_first_use=args.trust_on_first_use)
    except model_install.ModelAddError as e:
        print(f"edge: {args.file}: not installed: {e}", file=sys.stderr)
        return 1
    pin = f"; SHA-256 pinned in {models_dir / model_install.PINS_FILE}" if res.pinned_now else ""
    print(f"installed {res.entry.id} as {res.path} ({res.size} bytes, sha256 {res.sha256}){pin}; "
          f"checks: {', '.join(res.checks)}")
    return 0


def cmd_serve(args) -> int:
    from edge.service.api.app import serve

    api = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    settings = _settings(args, {"api": api} if api else None)  # a non-loopback host without api.token is refused here
    return serve(settings)


def cmd_status(args) -> int:
    import logging
    import time

    from edge.governor import Governor, format_status
    from edge.service.runstate import format_service, read_state, state_path

    settings = _settings(args)
    gov = Governor(settings)
    lg = logging.getLogger("edge.governor")
    level = lg.level
    lg.setLevel(logging.ERROR)  # the status itself lists every reason; no duplicate warnings on stderr
    try:
        gov.sample()
        if args.interval > 0:  # CPU load is the difference of two /proc/stat readings
            time.sleep(args.interval)
            gov.sample()
        gov.admit()
        st = gov.status()
    finally:
        lg.setLevel(level)
    st["service"] = read_state(state_path(settings))  # the running daemon's capture counters and turns
    lines = [format_status(st), *format_service(st["service"])]
    if settings.site is not None and Path(settings.store.path).exists():
        from edge.site.status import format_site, site_status

        with _store(settings) as store:  # the sync loop's state is in the store: no network needed
            st["site"] = site_status(store)
        lines += format_site(st["site"])
    text = "\n".join(lines)
    print(json.dumps(st, indent=2, ensure_ascii=False) if args.json else text)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="edge", description="Offline voice assistant for NPU boards.")
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(p):
        p.add_argument("--config", help="YAML settings file (validated at start)")
        p.add_argument("--board", help="board config name from board-configs/, e.g. x86-dev")

    p = sub.add_parser("run", help="run the voice loop over a WAV recording or the microphone")
    common(p)
    p.add_argument("--input", help="WAV file (any PCM format); without it: the default microphone")
    p.add_argument("--output-dir", help="where reply WAVs and events.jsonl go (default: settings output_dir)")
    p.add_argument("--json", action="store_true", help="one JSON event per line on stdout")
    p.add_argument("--inventory", help="import this inventory CSV into the store first")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("ask", help="understanding, store and reply for a text, without audio")
    common(p)
    p.add_argument("text")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("inventory", help="manage the item table")
    isub = p.add_subparsers(dest="sub", required=True)
    q = isub.add_parser("import", help="load items from a CSV (sku,item,location,quantity,unit,aliases)")
    common(q)
    q.add_argument("file")
    q.set_defaults(func=cmd_inventory_import)

    p = sub.add_parser("records", help="the stock change history")
    rsub = p.add_subparsers(dest="sub", required=True)
    q = rsub.add_parser("export", help="write all records")
    common(q)
    q.add_argument("--csv", action="store_true", required=True, help="as CSV on stdout")
    q.set_defaults(func=cmd_records_export)

    p = sub.add_parser("models", help="model files")
    msub = p.add_subparsers(dest="sub", required=True)
    q = msub.add_parser("list", help="the models in models/manifest.yaml with size and licence")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_models_list)
    q = msub.add_parser("verify", help="check every installed model file against models/manifest.yaml")
    q.add_argument("model", nargs="?", help="one manifest id (default: all)")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_models_verify)

    q = msub.add_parser("add", help="install a model from local media (USB, SD card) after checking magic, size, SHA-256")
    common(q)
    q.add_argument("file", help="the .gguf or .rkllm file")
    q.add_argument("--id", help="local_models id in models/manifest.yaml (default: matched by file name)")
    q.add_argument("--models-dir", help="default: models.dir of the settings")
    q.add_argument("--trust-on-first-use", action="store_true",
                   help="install an entry without a published SHA-256 and pin the file's SHA-256")
    q.set_defaults(func=cmd_models_add)

    from edge.ops.cli import register as _register_deploy

    _register_deploy(sub, msub, common)  # doctor, install, uninstall, models bundle|install

    from edge.ops.bench.cli import register as _register_bench

    _register_bench(sub, common)  # edge bench (edge/bench.py)

    from edge.site.cli import register as _register_site

    _register_site(sub, common)  # edge site init|sync|status

    p = sub.add_parser("serve", help="local HTTP API: Ollama /api/chat, /api/generate; OpenAI /v1/chat/completions")
    common(p)
    p.add_argument("--host", help="bind address (default api.host, 127.0.0.1); off loopback api.token is required")
    p.add_argument("--port", type=int, help="TCP port (default api.port)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("status", help="resource governor (thermal level, signals, memory admission, threads) and the running service (capture overflows, xruns, device losses)")
    common(p)
    p.add_argument("--json", action="store_true", help="one JSON document")
    p.add_argument("--interval", type=float, default=0.5, help="s between the two readings for CPU load (0 = one)")
    p.set_defaults(func=cmd_status)

    args = ap.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except Exception as e:
        if _is_user_error(e):
            print(f"edge: {e}", file=sys.stderr)
            return 2
        raise  # a bug: the traceback is wanted


def _is_user_error(e: Exception) -> bool:
    """Errors caused by input, settings, files or devices: shown as one clear line, exit 2."""
    from drivers.audio.device import AudioDeviceError
    from edge.errors import UserError
    from edge.models.manifest import ModelError
    from edge.stages.store import StoreError
    from edge.stages.tts.engine import TtsError

    return isinstance(e, (ConfigError, ValueError, OSError, StoreError, ModelError, AudioDeviceError, TtsError,
                          UserError))


if __name__ == "__main__":
    sys.exit(main())
