"""Command-line front ends of the field-deployment commands (registered into ``edge`` by :func:`register`).

    edge doctor [--json] [--root DIR] [--board NAME] [--config FILE] [--user NAME] [--no-audio-probe]
                [--check NAME ...] [--min-free-disk-mib N]
    edge install --board NAME [--root DIR] [--exec PATH] [--force]
    edge uninstall [--purge] [--root DIR]
    edge models bundle --board NAME OUT.tar [--model ID ...] [--manifest FILE]
    edge models install BUNDLE.tar [--models-dir DIR] [--config FILE] [--board NAME] [--no-smoke]

A refusal (:class:`edge.errors.UserError`) propagates to :func:`edge.cli.main`, which prints it as one
``edge: <command>: <message>`` line with exit status 2.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from edge.config import load_settings
from edge.errors import UserError
from edge.models.bundle import BundleError, build_bundle, install_bundle
from edge.ops import doctor
from edge.ops.install import InstallError, install, uninstall


def cmd_doctor(args) -> int:
    probe = False if args.no_audio_probe else (True if args.audio_probe else None)
    return doctor.main(root=args.root, board=args.board, user=args.user, as_json=args.json, probe_audio=probe,
                       only=args.check or None, config=args.config, min_free_disk_mib=args.min_free_disk_mib)


def cmd_install(args) -> int:
    try:
        steps = install(args.board, args.root, exec_path=args.exec_path, force=args.force)
    except InstallError as e:
        raise UserError(f"install: {e}") from e
    for s in steps:
        print(s.line())
    changed = [s for s in steps if s.result in ("created", "changed")]
    print(f"{len(changed)} step(s) changed something" if changed else "nothing to do: already installed")
    return 0


def cmd_uninstall(args) -> int:
    try:
        steps = uninstall(args.root, purge=args.purge)
    except InstallError as e:
        raise UserError(f"uninstall: {e}") from e
    for s in steps:
        print(s.line())
    return 0


def cmd_models_bundle(args) -> int:
    try:
        info = build_bundle(args.board, args.out, args.model or None, args.manifest)
    except BundleError as e:
        raise UserError(f"models bundle: {e}") from e
    size = Path(args.out).stat().st_size
    print(json.dumps({"out": str(args.out), "bytes": size, **info}) if args.json else
          f"wrote {args.out} ({size / 2**20:.1f} MiB): {info['id']}, {len(info['models'])} models")
    return 0


def cmd_models_install(args) -> int:
    models_dir = args.models_dir
    if models_dir is None:
        models_dir = load_settings(args.config, args.board).models.dir
    try:
        res = install_bundle(args.bundle, models_dir, smoke=not args.no_smoke,
                             log=lambda s: print(s, file=sys.stderr, flush=True))
    except BundleError as e:
        raise UserError(f"models install: refused, nothing switched: {e}") from e
    if res.already:
        print(f"{res.bundle_id} is already the current model set in {models_dir}")
    else:
        print(f"installed {res.bundle_id} in {models_dir}; current -> {res.bundle_id} (was {res.previous or 'none'})")
    return 0


def register(sub, msub, common) -> None:
    """Add ``doctor``, ``install``, ``uninstall`` to ``sub`` and ``bundle``, ``install`` to ``msub``
    (the ``models`` sub-commands). ``common`` adds ``--config``/``--board``."""
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
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser("install", help="install the systemd service for a board (user, data folder, config, unit)")
    p.add_argument("--board", required=True, help="board config name from board-configs/")
    p.add_argument("--root", default="/", help="install into this root folder instead of / (staging, image)")
    p.add_argument("--exec", dest="exec_path", help="ExecStart program (default: this installation's edge)")
    p.add_argument("--force", action="store_true", help="rewrite /etc/edge/edge.yaml even if it was edited")
    p.set_defaults(func=cmd_install)

    p = sub.add_parser("uninstall", help="remove the service (keeps /var/lib/edge unless --purge)")
    p.add_argument("--purge", action="store_true", help="also remove /var/lib/edge (store, models)")
    p.add_argument("--root", default="/", help="root folder (default /)")
    p.set_defaults(func=cmd_uninstall)

    q = msub.add_parser("bundle", help="write an offline bundle of a board's models (models, manifest, SHA256SUMS)")
    q.add_argument("--board", required=True)
    q.add_argument("out", help="the .tar to write")
    q.add_argument("--model", action="append", help="bundle only this manifest id (repeatable)")
    q.add_argument("--manifest", help="source manifest (default: $EDGE_MANIFEST or models/manifest.yaml)")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_models_bundle)

    q = msub.add_parser("install", help="verify a bundle, unpack it, smoke-test it, switch to it atomically")
    common(q)
    q.add_argument("bundle", help="the bundle .tar")
    q.add_argument("--models-dir", help="default: models.dir of the settings")
    q.add_argument("--no-smoke", action="store_true", help="skip the smoke inference (not recommended)")
    q.set_defaults(func=cmd_models_install)
