"""Models installed from local media (``edge models add FILE [--id ID]``) and model lookup by id.

The board's recommended models (Qwen2.5 GGUF and ``.rkllm`` files, 1–4 GB each) are not on the
package registries, so they cannot ship inside a pip package like the default models. They are
listed under ``local_models:`` in ``models/manifest.yaml`` (size, licence, Hugging Face repo and
file, SHA-256 where one is published) and copied from a USB stick or SD card into the models
directory (config ``models.dir``, default ``data/models``) by :func:`add`, which checks the file
*before* anything loads it, in this order (:data:`ADD_CHECKS`):

``missing``     a regular, readable file;
``lfs-pointer`` not a Git LFS pointer (what ``git clone`` without git-lfs leaves);
``html``        not an HTML page (what a failed browser download saves);
``magic``       GGUF: ``b"GGUF"`` and version 1–3 (GGUF spec, ggml docs/gguf.md); ``.rkllm``: the
                first 64 bytes are not all zero (Rockchip does not publish the header layout; a
                ``magic:`` hex string in the entry, or the pin from a first install, is compared too);
``size``        the manifest's (or the pin's) byte count;
``structure``   GGUF only: the tensor table parses and every tensor's data lies inside the file
                (:func:`gguf_data_end`), so a truncated file is caught even without a known size;
``sha256``      the manifest's (or the pin's) SHA-256, hashed while copying.

An entry with ``sha256: null`` (none published) is only installed with
``trust_on_first_use=True`` (``--trust-on-first-use``): its size, SHA-256 and first bytes are then
pinned in ``<models.dir>/pins.yaml`` and every later install of that id must match them. The file
is copied to a temporary name in the models directory, synced, and renamed into place, so a
failed or interrupted install never leaves a half-written model under the final name.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import os
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

from edge.models.manifest import (
    HEAD_BYTES,
    LFS_PREFIX,
    ModelError,
    ModelNotFoundError,
    default_manifest_path,
    is_html,
    lfs_info,
    load_manifest,
    resolve,
)

DEFAULT_MODELS_DIR = Path("data/models")
PINS_FILE = "pins.yaml"
LOCAL_FORMATS = ("gguf", "rkllm")
#: The checks :func:`add` performs, in order; :attr:`ModelAddError.check` is one of these.
ADD_CHECKS = ("id", "missing", "lfs-pointer", "html", "magic", "size", "structure", "sha256", "trust")
#: GGUF versions llama.cpp reads (GGUF spec: v1 legacy, v2, v3 current).
GGUF_VERSIONS = (1, 2, 3)
RKLLM_HEADER_BYTES = 64
COPY_CHUNK_BYTES = 4 * 1024 * 1024
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")


class ModelAddError(ModelError):
    """``edge models add`` refused a file; ``check`` names the failed check (:data:`ADD_CHECKS`)."""

    def __init__(self, check: str, message: str):
        self.check = check
        super().__init__(f"{check} check failed: {message}")


@dataclass(frozen=True)
class LocalModel:
    """A ``local_models:`` entry of the manifest.

    ``filename``: the file's name in the models directory (and on the Hugging Face repo).
    ``size`` (bytes) and ``sha256`` are None when no value was published ("pin on first install").
    ``repo``/``revision``: where to get it (Hugging Face repo name, commit); ``platform``: the SoC a
    ``.rkllm`` file was built for; ``quantization``: e.g. ``Q4_K_M``, ``w8a8``.
    """

    id: str
    format: str
    filename: str
    size: int | None
    sha256: str | None
    licence: str
    repo: str
    kind: str = "llm"
    source: str = "local media"
    installed: bool = False
    revision: str = ""
    hash_source: str = ""
    licence_source: str = ""
    publisher: str = ""
    platform: str = ""
    quantization: str = ""
    magic: str = ""
    note: str = ""
    commercial_use: bool | None = None  # True: the licence lets a product ship it; None: unknown
    extra: dict = field(default_factory=dict)

    @property
    def pinned(self) -> bool:
        """True when the manifest itself carries size and SHA-256."""
        return self.size is not None and self.sha256 is not None


def load_local_models(manifest_path: str | os.PathLike[str] | None = None) -> list[LocalModel]:
    """The ``local_models:`` list of the manifest (default :func:`edge.models.manifest.default_manifest_path`).

    Raises:
        ModelError: unreadable manifest or a malformed entry (names the entry and key).
    """
    p = Path(manifest_path) if manifest_path is not None else default_manifest_path()
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as e:
        raise ModelError(f"cannot read model manifest {p}: {e}") from e
    out: list[LocalModel] = []
    errors: list[str] = []
    known = set(LocalModel.__dataclass_fields__) - {"extra"}
    for i, raw in enumerate(data.get("local_models") or []):
        where = f"model manifest {p}: local_models[{i}]"
        try:
            if not isinstance(raw, dict):
                raise ValueError("entry is not a mapping")
            for key in ("id", "format", "filename", "licence", "repo"):
                if not raw.get(key):
                    raise ValueError(f"missing key {key!r}")
            if raw["format"] not in LOCAL_FORMATS:
                raise ValueError(f"format {raw['format']!r} not one of {LOCAL_FORMATS}")
            size, sha = raw.get("size"), raw.get("sha256")
            if size is not None and (not isinstance(size, int) or size <= 0):
                raise ValueError(f"size must be a positive int (bytes) or null, got {size!r}")
            if sha is not None and not _SHA256_RE.match(str(sha).lower()):
                raise ValueError(f"sha256 must be 64 hex digits or null, got {sha!r}")
            kw = {k: v for k, v in raw.items() if k in known}
            kw["sha256"] = str(sha).lower() if sha is not None else None
            kw["extra"] = {k: v for k, v in raw.items() if k not in known}
            out.append(LocalModel(**kw))
        except (TypeError, ValueError) as e:
            errors.append(f"{where}: {e}")
    ids = [m.id for m in out]
    errors += [f"model manifest {p}: duplicate local model id {i!r}" for i in sorted({i for i in ids if ids.count(i) > 1})]
    if errors:
        raise ModelError(errors)
    return out


def get_local(model_id: str, manifest_path: str | os.PathLike[str] | None = None) -> LocalModel:
    """The ``local_models:`` entry ``model_id``. Raises :class:`ModelError` listing the ids."""
    entries = load_local_models(manifest_path)
    for m in entries:
        if m.id == model_id:
            return m
    raise ModelError(f"unknown local model id {model_id!r}; known: {', '.join(m.id for m in entries)}")


def models_dir_path(models_dir: str | os.PathLike[str] | None = None) -> Path:
    """``models_dir`` or :data:`DEFAULT_MODELS_DIR` (relative to the working directory)."""
    return Path(models_dir) if models_dir is not None else DEFAULT_MODELS_DIR


def find_model(model: str, models_dir: str | os.PathLike[str] | None = None,
               manifest_path: str | os.PathLike[str] | None = None) -> Path:
    """A path, a pip-packaged manifest id, or an installed local model id → the model file.

    Raises:
        ModelNotFoundError: nothing found (a ``FileNotFoundError`` too); the message names what was
            tried and the fix.
    """
    p = Path(model).expanduser()
    if p.is_file():
        return p
    try:
        m = load_manifest(manifest_path)
        if model in m.ids:
            return resolve(model, m)
    except ModelError as e:
        raise ModelNotFoundError(f"model {model!r}: {e}") from None
    try:
        entry = get_local(model, manifest_path)
    except ModelError:
        raise ModelNotFoundError(
            f"model {model!r}: not an existing file and not a model id of {m.path} "
            f"(known: {', '.join(m.ids + [e.id for e in load_local_models(manifest_path)])})") from None
    path = models_dir_path(models_dir) / entry.filename
    if not path.is_file():
        raise ModelNotFoundError(
            f"model {model!r} ({entry.filename}) is not installed in {models_dir_path(models_dir)}; get it from "
            f"Hugging Face {entry.repo} and install it with: edge models add /path/to/{entry.filename} --id {entry.id}")
    return path


# --------------------------------------------------------------------------------------------
# checks


def check_gguf_header(head: bytes) -> tuple[bool, str]:
    """(ok, what was found) for a GGUF header: magic ``b"GGUF"`` then uint32 LE version 1–3."""
    if len(head) < 8:
        return False, f"{len(head)} bytes, too short for a GGUF header"
    if head[:4] != b"GGUF":
        return False, f"first bytes {head[:8]!r}, not b'GGUF'"
    (version,) = struct.unpack_from("<I", head, 4)
    if version not in GGUF_VERSIONS:
        return False, f"GGUF version {version}, not one of {GGUF_VERSIONS}"
    return True, f"GGUF v{version}"


def check_rkllm_header(head: bytes, magic_hex: str = "") -> tuple[bool, str]:
    """(ok, what was found) for a ``.rkllm`` header: the first 64 bytes are not all zero, and start
    with ``magic_hex`` when one is known (manifest ``magic:`` or a first-install pin)."""
    first = head[:RKLLM_HEADER_BYTES]
    if len(first) < RKLLM_HEADER_BYTES:
        return False, f"{len(head)} bytes, too short for an .rkllm header"
    if not any(first):
        return False, f"the first {RKLLM_HEADER_BYTES} bytes are all zero (a zeroed or wiped header)"
    if magic_hex:
        want = bytes.fromhex(magic_hex)
        if first[: len(want)] != want:
            return False, f"first bytes {first[:len(want)].hex()} differ from the pinned {magic_hex}"
    return True, f"header starts {first[:8].hex()}"


#: Byte sizes of GGUF scalar value types (GGUF spec; gguf.constants.GGUFValueType 0-12).
_GGUF_SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_GGUF_STRING, _GGUF_ARRAY = 8, 9


class _Truncated(Exception):
    pass


class _GgufReader:
    """Little-endian reads of a GGUF header from an open binary file (GGUF spec, ggml docs/gguf.md)."""

    def __init__(self, fh):
        self.fh = fh

    def read(self, n: int) -> bytes:
        b = self.fh.read(n)
        if len(b) != n:
            raise _Truncated(f"the file ends inside the GGUF header, at byte {self.fh.tell()}")
        return b

    def u32(self) -> int:
        return struct.unpack("<I", self.read(4))[0]

    def u64(self) -> int:
        return struct.unpack("<Q", self.read(8))[0]

    def string(self) -> bytes:
        n = self.u64()
        if n > 1 << 24:
            raise ValueError(f"a metadata string of {n} bytes at byte {self.fh.tell()}: not a GGUF header")
        return self.read(n)

    def skip_value(self, t: int) -> None:
        """Read past one metadata value of GGUF value type ``t``."""
        if t in _GGUF_SCALAR:
            self.read(_GGUF_SCALAR[t])
        elif t == _GGUF_STRING:
            self.string()
        elif t == _GGUF_ARRAY:
            et, n = self.u32(), self.u64()
            if et in _GGUF_SCALAR:
                self.read(_GGUF_SCALAR[et] * n)
            else:
                for _ in range(n):
                    self.skip_value(et)
        else:
            raise ValueError(f"unknown GGUF value type {t} at byte {self.fh.tell()}")

    def metadata_alignment(self, n_kv: int) -> int:
        """Read past ``n_kv`` metadata pairs; ``general.alignment`` (bytes, default 32)."""
        alignment = 32
        for _ in range(n_kv):
            key, t = self.string(), self.u32()
            if key == b"general.alignment" and t == 4:
                alignment = self.u32()
            else:
                self.skip_value(t)
        return alignment

    def tensor_ends(self, n_tensors: int) -> list[int]:
        """Read the tensor table: each tensor's data end, relative to the data section (bytes)."""
        # imported here: gguf's constants take ~0.4 s to import, and only a structure check reads them
        from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

        ends = []
        for _ in range(n_tensors):
            name = self.string()
            dims = [self.u64() for _ in range(self.u32())]
            ggml_type, offset = self.u32(), self.u64()
            try:
                block, type_bytes = GGML_QUANT_SIZES[GGMLQuantizationType(ggml_type)]
            except (ValueError, KeyError):
                raise ValueError(f"tensor {name.decode(errors='replace')}: unknown ggml type {ggml_type}") from None
            n = 1
            for d in dims:
                n *= d
            ends.append(offset + n // block * type_bytes)
        return ends


def gguf_data_end(path: Path) -> tuple[int, int]:
    """(number of tensors, byte offset where the last tensor's data ends) of a GGUF file, from its
    header, metadata and tensor table (GGUF spec, ggml docs/gguf.md; tensor byte sizes from the
    ``gguf`` package's ``GGML_QUANT_SIZES``). Reads only the header part of the file.

    Raises:
        ValueError: the header or tensor table is cut off or malformed (the message says where).
    """
    with open(path, "rb", buffering=1 << 20) as fh:
        r = _GgufReader(fh)
        try:
            if r.read(4) != b"GGUF":
                raise ValueError("no GGUF magic")
            version = r.u32()
            n_tensors, n_kv = r.u64(), r.u64()
            alignment = r.metadata_alignment(n_kv)
            tensors = r.tensor_ends(n_tensors)
            data_start = -(-fh.tell() // alignment) * alignment
        except _Truncated as e:
            raise ValueError(str(e)) from None
    if version not in GGUF_VERSIONS:
        raise ValueError(f"GGUF version {version}")
    return n_tensors, data_start + max(tensors, default=0)


def check_gguf_structure(path: Path) -> tuple[bool, str]:
    """(ok, what was found): the GGUF tensor table parses and each tensor's data lies in the file."""
    size = path.stat().st_size
    try:
        n, end = gguf_data_end(path)
    except (ValueError, OSError) as e:
        return False, f"the tensor table cannot be read ({e}); the file is truncated or damaged"
    if end > size:
        return False, f"tensor data ends at byte {end} but the file has {size} bytes (truncated)"
    return True, f"{n} tensors, data ends at byte {end} of {size}"


# --------------------------------------------------------------------------------------------
# pins


def load_pins(models_dir: str | os.PathLike[str] | None = None) -> dict[str, dict]:
    """``<models_dir>/pins.yaml``: ``{id: {file, size, sha256, head, pinned_at}}`` ({} when absent)."""
    p = models_dir_path(models_dir) / PINS_FILE
    if not p.is_file():
        return {}
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as e:
        raise ModelError(f"{p}: not valid YAML ({e}); fix or delete it") from e
    return data if isinstance(data, dict) else {}


def _write_pins(models_dir: Path, pins: dict) -> None:
    tmp = models_dir / f".{PINS_FILE}.tmp"
    tmp.write_text("# SHA-256 pins of models installed with --trust-on-first-use (edge models add)\n"
                   + yaml.safe_dump(pins, sort_keys=True), encoding="utf-8")
    os.replace(tmp, models_dir / PINS_FILE)


# --------------------------------------------------------------------------------------------
# install


@dataclass(frozen=True)
class Installed:
    """The result of :func:`add`: the entry, the installed path, size (bytes), SHA-256, whether it
    was pinned now (trust on first use) and every check passed, in order."""

    entry: LocalModel
    path: Path
    size: int
    sha256: str
    pinned_now: bool
    checks: tuple[str, ...]


def _pick_entry(file: Path, model_id: str | None, manifest_path) -> LocalModel:
    entries = load_local_models(manifest_path)
    if model_id is not None:
        for m in entries:
            if m.id == model_id:
                return m
        raise ModelAddError("id", f"unknown local model id {model_id!r}; known: {', '.join(m.id for m in entries)}")
    matches = [m for m in entries if m.filename.lower() == file.name.lower()]
    if len(matches) == 1:
        return matches[0]
    raise ModelAddError("id", f"cannot tell which model {file.name} is from its name; pass --id, one of: "
                             f"{', '.join(m.id for m in entries)}")


def _copy_hashing(src: Path, tmp: Path, mdir: Path, size: int, progress: Callable[[int, int], None] | None) -> str:
    """Copy ``src`` to ``tmp`` (synced) while hashing it; its SHA-256 (hex).

    Raises:
        ModelError: the models folder cannot be written or the source not read (names the path).
    """
    if mdir.exists() and not mdir.is_dir():
        raise ModelError(f"{mdir}: a file, not a folder; --models-dir (settings models.dir) names the folder the "
                         f"models go in")
    h = hashlib.sha256()
    copied = 0
    try:
        mdir.mkdir(parents=True, exist_ok=True)
        with open(src, "rb") as fin, open(tmp, "wb") as fout:
            while chunk := fin.read(COPY_CHUNK_BYTES):
                h.update(chunk)
                fout.write(chunk)
                copied += len(chunk)
                if progress:
                    progress(copied, size)
            fout.flush()
            os.fsync(fout.fileno())
    except OSError as e:
        raise ModelError(f"{e.filename or mdir}: cannot copy the model into {mdir} ({e.strerror or e}); choose a "
                         f"writable folder with enough free space (--models-dir, settings models.dir)") from e
    return h.hexdigest()


def add(file: str | os.PathLike[str], model_id: str | None = None, models_dir: str | os.PathLike[str] | None = None,
        trust_on_first_use: bool = False, manifest_path: str | os.PathLike[str] | None = None,
        progress: Callable[[int, int], None] | None = None) -> Installed:
    """Check ``file`` against its ``local_models:`` entry and install it as ``<models_dir>/<filename>``.

    ``model_id`` defaults to the entry whose ``filename`` matches the file's name. ``progress``
    is called with (bytes copied, total bytes). See the module docstring for the checks.

    Raises:
        ModelAddError: a check failed; ``.check`` names it and the message says what was expected,
            what was found and the fix. Nothing is left in ``models_dir`` then.
        ModelError: the models folder cannot be written (names it).
    """
    src = Path(file).expanduser()
    entry = _pick_entry(src, model_id, manifest_path)
    done: list[str] = ["id"]
    if not src.is_file():
        raise ModelAddError("missing", f"{src}: {'a directory' if src.is_dir() else 'no such file'}; "
                                      f"pass the path of {entry.filename}")
    done.append("missing")
    try:
        size = src.stat().st_size
        with open(src, "rb") as fh:
            head = fh.read(max(HEAD_BYTES, RKLLM_HEADER_BYTES))
    except OSError as e:
        raise ModelAddError("missing", f"{src}: cannot read it ({e.strerror or e}); check the medium is mounted "
                                      f"and readable") from e
    fix = f"get {entry.filename} again from Hugging Face {entry.repo}" + (f" (revision {entry.revision})" if entry.revision else "")
    if head.startswith(LFS_PREFIX):
        raise ModelAddError("lfs-pointer", f"{src} is {lfs_info(head)}, {size} bytes, not the model itself; "
                                          f"fetch the real file (git lfs pull, or download it) and {fix}")
    done.append("lfs-pointer")
    if is_html(head):
        raise ModelAddError("html", f"{src} is an HTML page ({size} bytes) starting {head[:24]!r}, not a "
                                   f"{entry.format} file; the download failed: {fix}")
    done.append("html")
    mdir = models_dir_path(models_dir)
    pins = load_pins(mdir)
    pin = pins.get(entry.id) if not entry.pinned else None
    exp_size = entry.size if entry.size is not None else (pin or {}).get("size")
    exp_sha = entry.sha256 if entry.sha256 is not None else (pin or {}).get("sha256")
    magic_hex = entry.magic or (pin or {}).get("head", "")
    if size == 0:
        raise ModelAddError("magic", f"{src} is an empty file (0 bytes); {fix}")
    ok, found = (check_gguf_header(head) if entry.format == "gguf" else check_rkllm_header(head, magic_hex))
    if not ok:
        raise ModelAddError("magic", f"{src}: expected a {entry.format} header, found {found}; {fix}")
    done.append("magic")
    if exp_size is not None and size != exp_size:
        raise ModelAddError("size", f"{src}: expected {exp_size} bytes, got {size} bytes "
                                   f"({'truncated' if size < exp_size else 'larger'}); {fix}")
    done.append("size")
    if entry.format == "gguf":
        ok, found = check_gguf_structure(src)
        if not ok:
            raise ModelAddError("structure", f"{src}: {found}; {fix}")
        done.append("structure")
    if exp_sha is None and not trust_on_first_use:
        raise ModelAddError("trust", f"the manifest has no published SHA-256 for {entry.id} ({entry.filename}); "
                                    f"check where the file came from and run again with --trust-on-first-use to "
                                    f"pin its SHA-256 in {mdir / PINS_FILE}")
    dst = mdir / entry.filename
    tmp = mdir / f".{entry.filename}.part-{os.getpid()}"
    try:
        digest = _copy_hashing(src, tmp, mdir, size, progress)
        if exp_sha is not None and digest != exp_sha:
            raise ModelAddError("sha256", f"{src}: expected SHA-256 {exp_sha}, got {digest} (a different or "
                                         f"corrupted file); {fix}")
        done.append("sha256")
        try:
            os.replace(tmp, dst)
        except OSError as e:
            raise ModelError(f"{dst}: cannot install the model under this name ({e.strerror or e}); move away "
                             f"what is there") from e
    finally:
        with contextlib.suppress(OSError):  # a models "folder" that is a file has no tmp to remove
            tmp.unlink(missing_ok=True)
    pinned_now = False
    if exp_sha is None:
        pins[entry.id] = {"file": entry.filename, "size": size, "sha256": digest, "head": head[:16].hex(),
                          "pinned_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
        _write_pins(mdir, pins)
        pinned_now = True
        done.append("trust")
    return Installed(entry, dst, size, digest, pinned_now, tuple(done))


def describe(entry: LocalModel) -> dict[str, Any]:
    """A JSON-ready summary of an entry (for ``edge models list``-style output)."""
    return {"id": entry.id, "format": entry.format, "file": entry.filename, "size": entry.size,
            "sha256": entry.sha256, "licence": entry.licence, "commercial_use": entry.commercial_use, "repo": entry.repo, "platform": entry.platform,
            "quantization": entry.quantization}
