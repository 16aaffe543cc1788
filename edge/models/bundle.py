"""Offline model bundles: carry a board's models to a site without internet and switch to them safely.

    edge models bundle --board NAME OUT.tar [--model ID ...]   # on a machine that has the models
    edge models install BUNDLE.tar [--models-dir DIR]          # on the device

A bundle is a plain (uncompressed: the weights do not compress) tar with

``bundle.yaml``   ``schema``, ``id`` (``bundle-<board>-<12 hex>``, from the checksums), ``board``, ``models``
``manifest.yaml`` an :mod:`edge.models.manifest` manifest of the bundled models; each entry's ``root:`` is
                  ``models/<id>`` (relative to the manifest), so ``EDGE_MANIFEST=<dir>/manifest.yaml``
                  makes :func:`edge.models.manifest.resolve` find the bundled files
``SHA256SUMS``    ``<sha256>  <member>`` for every other member (``sha256sum -c`` reads it)
``models/<id>/...`` the files, at their manifest paths

:func:`install_bundle` refuses, before anything is written, any member that is not a regular file or
folder (symlinks, hard links, devices) or whose name is absolute or climbs out with ``..``; then it
unpacks into a staging folder under the models dir while hashing, and checks every member's size and
SHA-256 against ``SHA256SUMS`` and the manifest (and every model file's magic via
:func:`edge.models.manifest.verify`). Only then is the staging folder renamed to ``<models dir>/<bundle id>`` and
the smoke inference run on it (LLM: one token through llama.cpp for a GGUF; ONNX models: an
onnxruntime session loads). Only when that passes does ``<models dir>/current`` (a symlink) switch
to the new folder, atomically (``os.replace`` of a fresh symlink over the old one). On any failure the
new folder is removed and ``current`` still points at the old set.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import io
import os
import shutil
import tarfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Callable

import yaml

from edge.boards import load_board
from edge.errors import UserError
from edge.llm.llamacpp import LlamaCppEngine
from edge.models import manifest as models

SCHEMA = 1
CURRENT = "current"
SUMS = "SHA256SUMS"
MANIFEST = "manifest.yaml"
INFO = "bundle.yaml"
CHUNK = 1 << 20  # bytes per read while hashing


class BundleError(UserError):
    """A bundle that cannot be built or installed; ``check`` names what failed (``member``,
    ``checksums``, ``size``, ``sha256``, ``manifest``, ``verify``, ``smoke``, ``source``, ``file``: the
    bundle file or the models folder cannot be read or written)."""

    def __init__(self, check: str, message: str):
        self.check = check
        super().__init__(f"{check}: {message}")


@dataclass
class Installed:
    """Outcome of :func:`install_bundle`: ``bundle_id``, its ``path``, the ``previous`` target of
    ``current`` (None on a first install), ``smoke`` lines, and ``already`` when it was current."""

    bundle_id: str
    path: Path
    previous: str | None
    smoke: list[str] = field(default_factory=list)
    already: bool = False


# ------------------------------------------------------------------------------------------------
# building

def _entry_dict(entry: models.ModelEntry) -> dict:
    d = {"id": entry.id, "kind": entry.kind, "package": f"{entry.package}=={entry.version}", "module": entry.module,
         "path": entry.path, "licence": entry.licence, "source": entry.source,
         "root": f"models/{entry.id}",
         "files": [{"path": f.path, "size": f.size, "sha256": f.sha256, "format": f.format} for f in entry.files]}
    for k in ("licence_source", "publisher", "note"):
        if getattr(entry, k):
            d[k] = getattr(entry, k)
    return d


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    info.mtime = 0
    tar.addfile(info, io.BytesIO(data))


def build_bundle(board: str, out: str | os.PathLike, model_ids: list[str] | None = None,
                 manifest_path: str | os.PathLike | None = None) -> dict:
    """Write the bundle for ``board`` (its ``models.recommended``, or ``model_ids``) to ``out``.

    The source files are verified first (size, SHA-256, magic): a damaged model is never bundled.
    Returns the ``bundle.yaml`` content.

    Raises:
        BundleError(check="source"): a source model is missing or damaged (the message has the fix).
        BoardError / ModelError: unknown board or model id.
    """
    spec = load_board(board)
    ids = list(model_ids or spec.models.recommended)
    manifest = models.load_manifest(manifest_path)
    entries = [manifest.get(i) for i in ids]
    bad = [c for c in models.verify(ids, manifest) if not c.ok]
    if bad:
        raise BundleError("source", "; ".join(c.message for c in bad[:5]))
    manifest_text = yaml.safe_dump({"schema": 1, "models": [_entry_dict(e) for e in entries]}, sort_keys=False)
    sums: dict[str, str] = {MANIFEST: hashlib.sha256(manifest_text.encode()).hexdigest()}
    for e in entries:
        for f in e.files:
            sums[f"models/{e.id}/{f.path}"] = f.sha256
    bundle_id = f"bundle-{board}-{hashlib.sha256(''.join(sorted(sums.values())).encode()).hexdigest()[:12]}"
    info = {"schema": SCHEMA, "id": bundle_id, "board": board, "models": ids,
            "created": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    info_text = yaml.safe_dump(info, sort_keys=False)
    sums[INFO] = hashlib.sha256(info_text.encode()).hexdigest()
    out = Path(out)
    tmp = out.with_name(out.name + ".part")
    try:
        _write_tar(tmp, info_text, manifest_text, entries, sums)
        os.replace(tmp, out)
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise BundleError("file", f"{out}: cannot write the bundle ({e.strerror or e}); give a writable file "
                          f"path with enough free space") from e
    return info


def _write_tar(tmp: Path, info_text: str, manifest_text: str, entries: list, sums: dict[str, str]) -> None:
    tmp.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as tar:
        _add_bytes(tar, INFO, info_text.encode())
        _add_bytes(tar, MANIFEST, manifest_text.encode())
        for e in entries:
            base = models.package_dir(e)
            for f in e.files:
                ti = tar.gettarinfo(str(base / f.path), arcname=f"models/{e.id}/{f.path}")
                ti.uid = ti.gid = 0
                ti.uname = ti.gname = ""
                ti.mode = 0o644
                with open(base / f.path, "rb") as fh:
                    tar.addfile(ti, fh)
        _add_bytes(tar, SUMS, "".join(f"{h}  {n}\n" for n, h in sorted(sums.items())).encode())


# ------------------------------------------------------------------------------------------------
# installing

def _safe_name(name: str) -> str:
    """A member name that stays inside the destination: relative, no ``..``, no backslash."""
    p = PurePosixPath(name)
    if name.startswith("/") or p.is_absolute() or ".." in p.parts or "\\" in name or not p.parts:
        raise BundleError("member", f"member {name!r} would be written outside the bundle folder "
                          f"(absolute or '..'); the bundle is refused")
    return str(p)


def _check_members(tar: tarfile.TarFile) -> dict[str, tarfile.TarInfo]:
    files: dict[str, tarfile.TarInfo] = {}
    try:
        members = tar.getmembers()
    except tarfile.TarError as e:
        raise BundleError("member", f"the tar is damaged or truncated ({e}); copy the bundle again") from None
    for m in members:
        name = _safe_name(m.name)
        if m.isdir():
            continue
        if not m.isfile():
            kind = "symlink" if m.issym() else "hard link" if m.islnk() else "device or fifo"
            raise BundleError("member", f"member {name!r} is a {kind}; bundles hold regular files only")
        if name in files:
            raise BundleError("member", f"member {name!r} appears twice")
        files[name] = m
    return files


def _read_member(tar: tarfile.TarFile, m: tarfile.TarInfo) -> bytes:
    fh = tar.extractfile(m)
    return fh.read() if fh else b""


def _parse_sums(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        h, sep, name = line.partition("  ")
        if not sep or len(h) != 64:
            raise BundleError("checksums", f"{SUMS}: bad line {line!r} (want '<sha256>  <path>')")
        out[_safe_name(name.strip())] = h.lower()
    return out


def smoke_models(manifest_path: Path, log: Callable[[str], None] = lambda s: None) -> list[str]:
    """Load each bundled model the way the service would: GGUF → one token through llama.cpp;
    ONNX → an onnxruntime session. Returns one line per model tried.

    Raises:
        BundleError(check="smoke"): a model does not load or generate.
    """
    m = models.load_manifest(manifest_path)
    lines = []
    for e in m.models:
        fmts = {f.format for f in e.files}
        path = models.resolve(e.id, m)
        try:
            if "gguf" in fmts:
                eng = LlamaCppEngine(str(path), n_ctx=256, threads=2)
                try:
                    eng.smoke()
                finally:
                    eng.close()
                lines.append(f"{e.id}: llama.cpp generated 1 token")
            elif fmts == {"onnx"}:
                import onnxruntime  # its native runtime is only needed for this smoke test

                onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
                lines.append(f"{e.id}: onnxruntime session loaded")
            else:
                lines.append(f"{e.id}: no smoke test for {sorted(fmts)} (verified only)")
        except Exception as ex:
            raise BundleError("smoke", f"{e.id} ({path}) failed its smoke inference: {type(ex).__name__}: {ex}") from ex
        log(lines[-1])
    return lines


def current_target(models_dir: str | os.PathLike) -> str | None:
    """What ``<models_dir>/current`` points at (a bundle id), or None."""
    link = Path(models_dir) / CURRENT
    return os.readlink(link) if link.is_symlink() else None


def _switch(models_dir: Path, bundle_id: str) -> None:
    tmp = models_dir / f".{CURRENT}.{os.getpid()}"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(bundle_id)  # relative: the folder can be moved or mounted elsewhere
    os.replace(tmp, models_dir / CURRENT)
    fd = os.open(models_dir, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _read_index(tar: tarfile.TarFile, bundle) -> tuple[dict[str, tarfile.TarInfo], dict[str, str], str]:
    """The bundle's regular members, its ``SHA256SUMS`` and its id, checked against each other."""
    files = _check_members(tar)
    for need in (SUMS, MANIFEST, INFO):
        if need not in files:
            raise BundleError("checksums" if need == SUMS else "manifest", f"{bundle} has no {need}")
    sums = _parse_sums(_read_member(tar, files[SUMS]).decode("utf-8", "replace"))
    listed, present = set(sums), set(files) - {SUMS}
    if listed != present:
        extra, missing = sorted(present - listed), sorted(listed - present)
        raise BundleError("checksums", f"{SUMS} does not match the members (not listed: {extra}; "
                          f"listed but absent: {missing})")
    info = yaml.safe_load(_read_member(tar, files[INFO])) or {}
    bundle_id = str(info.get("id", ""))
    if not bundle_id.startswith("bundle-") or "/" in bundle_id or bundle_id in (".", ".."):
        raise BundleError("manifest", f"{INFO}: bad or missing id {bundle_id!r}")
    return files, sums, bundle_id


def _unpack(tar: tarfile.TarFile, files: dict[str, tarfile.TarInfo], sums: dict[str, str], staging: Path) -> None:
    """Write every member under ``staging`` while hashing it; each must match ``SHA256SUMS`` and its
    tar header's size."""
    for name, m in sorted(files.items()):
        dest = staging / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        h, n = hashlib.sha256(), 0
        src = tar.extractfile(m)
        with open(dest, "wb") as out:
            try:
                while chunk := src.read(CHUNK):
                    h.update(chunk)
                    n += len(chunk)
                    out.write(chunk)
            except (tarfile.TarError, EOFError) as e:
                raise BundleError("size", f"member {name}: cannot be read whole ({e}); copy the bundle again") from None
        if name != SUMS and h.hexdigest() != sums[name]:
            raise BundleError("sha256", f"member {name}: SHA-256 {h.hexdigest()} != {sums[name]} in "
                              f"{SUMS}; the bundle is damaged, copy it again")
        if n != m.size:
            raise BundleError("size", f"member {name}: {n} bytes read, tar header says {m.size}")


def _check_manifest(staging: Path, files: dict[str, tarfile.TarInfo], sums: dict[str, str]) -> None:
    """The unpacked manifest lists exactly what the bundle holds (sizes, SHA-256), and every model
    file passes :func:`edge.models.manifest.verify` (magic, size, SHA-256)."""
    try:
        manifest = models.load_manifest(staging / MANIFEST)
    except models.ModelError as e:
        raise BundleError("manifest", str(e)) from None
    for e in manifest.models:
        for f in e.files:
            name = f"models/{e.id}/{f.path}"
            if name not in files:
                raise BundleError("manifest", f"{e.id}: {name} is in the manifest but not in the bundle")
            if files[name].size != f.size:
                raise BundleError("size", f"{name}: {files[name].size} bytes, manifest says {f.size}")
            if sums[name] != f.sha256:
                raise BundleError("sha256", f"{name}: {SUMS} and the manifest disagree")
    bad = [c for c in models.verify(None, manifest) if not c.ok]
    if bad:
        raise BundleError("verify", "; ".join(c.message for c in bad[:5]))


def install_bundle(bundle: str | os.PathLike, models_dir: str | os.PathLike,
                   smoke: bool = True, log: Callable[[str], None] = lambda s: None) -> Installed:
    """Verify, unpack, smoke-test and switch to ``bundle`` (see the module docstring).

    Raises:
        BundleError: the bundle is refused (``check`` says which check failed; ``file``: the bundle
            cannot be read or the models dir cannot be written); ``current`` is unchanged.
    """
    models_dir = Path(models_dir)
    try:
        models_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise BundleError("file", f"{models_dir}: cannot create the models folder ({e.strerror or e}); "
                          f"choose a writable --models-dir (settings models.dir)") from e
    previous = current_target(models_dir)
    try:
        tar = tarfile.open(bundle, "r:*")
    except tarfile.TarError as e:
        raise BundleError("member", f"{bundle} is not a tar file ({str(e).splitlines()[0].rstrip(':')}); "
                          f"give the .tar that 'edge models bundle' wrote, copied whole") from None
    except OSError as e:
        raise BundleError("file", f"{bundle}: cannot read the bundle ({e.strerror or e}); give the path of "
                          f"the bundle .tar written by 'edge models bundle'") from e
    with tar:
        files, sums, bundle_id = _read_index(tar, bundle)
        final = models_dir / bundle_id
        if previous == bundle_id and final.is_dir():
            return Installed(bundle_id, final, previous, [], already=True)
        staging = models_dir / f".staging-{bundle_id}-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        switched = False
        try:
            try:
                staging.mkdir()
                _unpack(tar, files, sums, staging)
            except OSError as e:
                raise BundleError("file", f"{e.filename or staging}: cannot unpack the bundle ({e.strerror or e}); "
                                  f"free space in {models_dir} or choose another --models-dir") from e
            _check_manifest(staging, files, sums)
            log(f"verified {len(files)} members of {bundle_id}")
            if final.exists():
                shutil.rmtree(final)
            os.replace(staging, final)
            lines = smoke_models(final / MANIFEST, log) if smoke else []
            _switch(models_dir, bundle_id)
            switched = True
            return Installed(bundle_id, final, previous, lines)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            if not switched and final.exists() and current_target(models_dir) != bundle_id:
                shutil.rmtree(final, ignore_errors=True)
