"""The ``.rknn`` model file, checked before it ever reaches ``RKNNLite.load_rknn``: Rockchip's runtime
does not check it there (``load_rknn`` returns 0 for any file, and a model for another chip fails
only later, or on the NPU), so the product does.

Layout (rknn-toolkit2 2.x output; as read by ``rknncli`` 0.3.3, MIT, ``rknncli/parser.py``; the
runtime's own ``RKNN Model Information: version: %d, toolkit version: %s, target: %s, target
platform: %s`` message reads the same fields)::

    bytes 0..3    b"RKNN"                     magic
    bytes 4..7    zero padding
    bytes 8..15   uint64 LE file format       (6 for rknn-toolkit2 2.x; <= 1: a 24-byte header)
    bytes 16..23  uint64 LE model length      the FlatBuffers graph that follows the header
    64 + length   uint64 LE JSON length, then the model information as JSON:
                  {"target_platform": ["rk3588"], "version": "2.3.2", ...}

    read_rknn_info(path) -> RknnInfo                    # raises RknnFileError naming file and field
    check_rknn_file(path, soc="rk3588", size=..., sha256=..., model_version="2.3.2") -> RknnInfo
    check_runtime(path="/usr/lib/librknnrt.so", model_version="2.3.2") -> "2.3.2"
"""
from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass, field
from pathlib import Path

from drivers import system

RKNN_MAGIC = b"RKNN"
HEADER_BYTES = 64
V1_HEADER_BYTES = 24  # file format <= 1: three uint64 only
MAX_JSON_BYTES = 16 << 20  # the model information is a few KiB; more means a damaged length field
RUNTIME_PATH = "/usr/lib/librknnrt.so"  # the only path RKNNLite 2.5.0 loads (LIBRKNNRT_PATH is ignored)

#: SoCs whose RKNN models are interchangeable (same NPU): the board config's ``soc`` → toolkit target.
#: RK3588S and RK3582 are RK3588 dies (rknn-toolkit2 has only ``rk3588``); RK3566 and RK3568 share
#: one NPU and the toolkit accepts either name.
SOC_TARGET = {"rk3588s": "rk3588", "rk3582": "rk3588", "rk3568": "rk3566"}


class RknnFileError(ValueError):
    """A ``.rknn`` file or runtime library that must not be handed to RKNNLite; the message names the
    file, what was expected, what was found and the fix."""


@dataclass(frozen=True)
class RknnInfo:
    """What the file says about itself. ``size`` in bytes; ``target_platforms`` as the toolkit wrote
    them (lower case); ``toolkit_version`` the rknn-toolkit2 version that converted it (None if absent)."""

    path: Path
    size: int
    file_format: int
    target_platforms: list[str] = field(default_factory=list)
    toolkit_version: str | None = None


def _target(soc: str) -> str:
    soc = soc.lower()
    return SOC_TARGET.get(soc, soc)


def read_rknn_info(path: str | Path) -> RknnInfo:
    """Parse the header and the model-information JSON of ``path``.

    Raises:
        RknnFileError: unreadable, too short, no ``RKNN`` magic, a length that runs past the end of
            the file, or model information that is not JSON.
    """
    p = Path(path)
    fix = f"replace {p} with the .rknn file converted for this board (edge models verify)"
    try:
        size = p.stat().st_size
        with open(p, "rb") as fh:
            head = fh.read(HEADER_BYTES)
            if head[:4] != RKNN_MAGIC:
                raise RknnFileError(f"{p}: not an RKNN model: first bytes {head[:8]!r}, expected b'RKNN'; {fix}")
            if len(head) < V1_HEADER_BYTES:
                raise RknnFileError(f"{p}: {size} bytes, shorter than the {V1_HEADER_BYTES}-byte RKNN header "
                                    f"(truncated download?); {fix}")
            fmt, length = struct.unpack_from("<QQ", head, 8)
            header = V1_HEADER_BYTES if (fmt & 0xFF) <= 1 else HEADER_BYTES
            json_at = header + length
            if json_at + 8 > size:
                raise RknnFileError(f"{p}: the header says the model is {length} bytes but the file has {size} "
                                    f"(truncated); {fix}")
            fh.seek(json_at)
            (json_len,) = struct.unpack("<Q", fh.read(8))
            if not 0 < json_len <= min(MAX_JSON_BYTES, size - json_at - 8):
                raise RknnFileError(f"{p}: model information length {json_len} does not fit the file "
                                    f"({size} bytes; truncated or damaged); {fix}")
            raw = fh.read(json_len)
    except OSError as e:
        raise RknnFileError(f"{p}: cannot read the .rknn file ({e.strerror or e}); {fix}") from e
    try:
        meta = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RknnFileError(f"{p}: the model information is not JSON ({e}); {fix}") from None
    if not isinstance(meta, dict):
        raise RknnFileError(f"{p}: the model information is {json.dumps(meta)[:40]}, not a JSON object; {fix}")
    targets = meta.get("target_platform") or []
    if isinstance(targets, str):
        targets = [targets]
    if not isinstance(targets, list) or not all(isinstance(t, str) for t in targets):
        raise RknnFileError(f"{p}: target_platform in the model information is {targets!r}, not a list of chip "
                            f"names; {fix}")
    version = meta.get("version")
    if version is not None and not isinstance(version, str):
        raise RknnFileError(f"{p}: version in the model information is {version!r}, not a toolkit version; {fix}")
    return RknnInfo(p, size, fmt, [t.lower() for t in targets], version or None)


def _same_series(a: str, b: str) -> bool:
    return system.version_tuple(a)[:2] == system.version_tuple(b)[:2]


def check_rknn_file(path: str | Path, soc: str | None = None, size: int | None = None,
                    sha256: str | None = None, model_version: str | None = None) -> RknnInfo:
    """:func:`read_rknn_info`, then what the board expects: ``size`` (bytes) and ``sha256`` (hex) from
    the model manifest, ``soc`` (board config ``board.soc``) among the file's target platforms, and
    the converting toolkit's major.minor equal to ``model_version`` (board config
    ``board.npu.runtimes[librknnrt].model_version``). Checks given as ``None`` are skipped.

    Raises:
        RknnFileError: the first check that fails, naming file, expected, found and the fix.
    """
    p = Path(path)
    try:
        actual = p.stat().st_size
    except OSError as e:
        raise RknnFileError(f"{p}: no .rknn file ({e.strerror or e}); copy the board's models (edge models install)") from e
    if size is not None and actual != size:
        raise RknnFileError(f"{p}: {actual} bytes, the manifest says {size} (truncated or another file); "
                            f"reinstall it (edge models install BUNDLE.tar)")
    if sha256 is not None:
        h = hashlib.sha256()
        try:
            with open(p, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
        except OSError as e:
            raise RknnFileError(f"{p}: cannot read the .rknn file ({e.strerror or e}); make it readable by the "
                                f"service user (edge install sets the models' owner)") from e
        if h.hexdigest() != sha256.lower():
            raise RknnFileError(f"{p}: SHA-256 {h.hexdigest()[:12]}…, the manifest says {sha256[:12]}… (damaged or "
                                f"another model); reinstall it (edge models install BUNDLE.tar)")
    info = read_rknn_info(p)
    if soc is not None and _target(soc) not in [_target(t) for t in info.target_platforms]:
        raise RknnFileError(f"{p}: converted for {', '.join(info.target_platforms) or 'no target platform'}, "
                            f"this board is {soc}; convert the model with rknn-toolkit2 "
                            f"target_platform='{_target(soc)}'")
    if model_version is not None and info.toolkit_version and not _same_series(info.toolkit_version, model_version):
        raise RknnFileError(f"{p}: converted with rknn-toolkit2 {info.toolkit_version}, the board config names "
                            f"{model_version}; reconvert it with toolkit {model_version}, or change "
                            f"board.npu.runtimes model_version with the runtime")
    return info


def check_runtime(path: str | Path = RUNTIME_PATH, model_version: str | None = None) -> str:
    """The version of the librknnrt at ``path`` (read from its bytes, ``librknnrt version: X.Y.Z``),
    checked against ``model_version`` (major.minor) when given.

    Raises:
        RknnFileError: no library, no version string in it, or another major.minor.
    """
    try:
        found = system.library_version(path, "librknnrt")
    except OSError as e:
        raise RknnFileError(f"{path}: no RKNN runtime ({e.strerror or e}); install librknnrt.so "
                            f"{model_version or ''} there (rknn-toolkit2 release, rknpu2/runtime/Linux)") from e
    if found is None:
        raise RknnFileError(f"{path}: no 'librknnrt version' string in the library; replace it with the "
                            f"librknnrt.so of release {model_version or 'the models were converted with'}")
    if model_version is not None and not _same_series(found, model_version):
        raise RknnFileError(f"{path}: librknnrt {found}, but the board config names {model_version} (the "
                            f"models' toolkit); install librknnrt.so {model_version} there, or reconvert the "
                            f"models with toolkit {found}")
    return found
