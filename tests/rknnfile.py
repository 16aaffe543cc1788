"""``.rknn`` files laid out as rknn-toolkit2 2.x writes them (see drivers/npu/rknn_file.py): the ``RKNN``
header, a graph payload, the model-information JSON with ``target_platform`` and ``version``. The
payload is whatever the test needs (a stand-in RKNNLite reads an ONNX path from it); the real
runtime never gets to run one, since there is no NPU here."""
from __future__ import annotations

import json
import struct
from pathlib import Path

FILE_FORMAT = 6  # rknn-toolkit2 2.x


def rknn_bytes(targets=("rk3588",), toolkit: str | None = "2.3.2", graph: bytes = b"graph", extra: dict | None = None,
               info: bytes | None = None) -> bytes:
    """``info``: the model-information bytes as they are (a damaged or hostile file), instead of the
    JSON built from ``targets``, ``toolkit`` and ``extra``."""
    meta = {"target_platform": list(targets), **({"version": toolkit} if toolkit else {}), **(extra or {})}
    info = json.dumps(meta).encode() if info is None else info
    header = b"RKNN" + b"\0" * 4 + struct.pack("<QQ", FILE_FORMAT, len(graph))
    return header.ljust(64, b"\0") + graph + struct.pack("<Q", len(info)) + info


def write_rknn(path: Path, targets=("rk3588",), toolkit: str | None = "2.3.2", graph: bytes = b"graph") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(rknn_bytes(targets, toolkit, graph))
    return path
