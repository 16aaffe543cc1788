"""A deterministic stock room of over 2,000 items for the understanding evaluation.

    .venv/bin/python bench/eval/make_inventory.py [--out bench/eval/inventory.csv] [--check]

Writes ``sku,item,location,quantity,unit,aliases,reorder_level``: one row per SKU and place, so an
item stocked in two or three places has two or three rows with the same SKU (``quantity`` is the
stock at that place; ``reorder_level`` is the item's, repeated on each of its rows). The same
output every run (a fixed seed, no clock): ``--check`` exits 1 when the file on disk differs.

Sized families are written the way ``edge/stages/sizes.py`` parses them: ``hex bolt M8 x 30 mm``,
``hex nut M8``, ``drill bit 6.5 mm``, ``o-ring 12 mm``, ``nitrile gloves L``, ``flex cable 1.5 mm``
(unit ``m``), liquids by the litre (unit ``l``). Places: ``bin 1``–``bin 300``, ``drawer 1``–
``drawer 40``, ``shelf A``–``shelf H``. The items the evaluation set (``bench/eval/nlu.jsonl``)
names have their places, quantities and reorder levels pinned in :data:`PINNED`, so the cases can
say what the store must hold afterwards; everything else is drawn from the seeded generator, with
stock well above its reorder level (only pinned items are low).

Unicode cases: two items that differ only by Ä/Ö (``hyllclips Älva`` / ``hyllclips Ölva``),
Cyrillic names (``изолента синяя``, ``герметик``), a Chinese name with English aliases (``生料带``,
thread seal tape).
"""
from __future__ import annotations

import argparse
import csv
import io
import random
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "inventory.csv"
COLUMNS = ("sku", "item", "location", "quantity", "unit", "aliases", "reorder_level")
SEED = 20261201

#: sku → ([(place, quantity), ...], reorder_level): what the evaluation cases rely on.
PINNED: dict[str, tuple[list[tuple[str, int]], int]] = {
    # hex bolts: M8 x 30 in two places, M10 x 80 in one
    "HB-M8-30": ([("bin 12", 140), ("bin 47", 60)], 50),
    "HB-M8-40": ([("bin 13", 90)], 40),
    "HB-M8-80": ([("bin 16", 35)], 20),
    "HB-M10-80": ([("bin 22", 48)], 20),
    "HB-M10-50": ([("bin 20", 75)], 30),
    "HB-M12-100": ([("bin 31", 12), ("shelf C", 40)], 30),
    "HB-M6-20": ([("bin 5", 200)], 50),
    "NUT-M8": ([("bin 60", 800)], 200),
    "NUT-M10": ([("bin 61", 450)], 200),
    "NUT-M12": ([("bin 62", 150)], 200),           # low: 150 ≤ 200
    "WSH-M8": ([("bin 204", 500)], 200),
    "WSH-M10": ([("bin 205", 320)], 100),
    "SWS-M8": ([("bin 206", 240)], 100),
    # drill bits: 6 mm in two places, 6.5 mm, 8 mm, 10 mm
    "DB-6": ([("drawer 4", 25), ("bin 118", 10)], 10),
    "DB-6.5": ([("drawer 4", 12)], 5),
    "DB-8": ([("drawer 4", 18)], 5),
    "DB-10": ([("drawer 5", 3)], 5),               # low
    "DB-3": ([("drawer 3", 40)], 10),
    "MDB-8": ([("drawer 6", 14)], 4),
    # cutting discs
    "CD-115": ([("shelf D", 30)], 10),
    "CD-125": ([("shelf D", 45), ("drawer 12", 20)], 15),
    "CD-230": ([("shelf D", 8)], 10),              # low
    # o-rings
    "OR-12": ([("drawer 20", 60)], 20),
    "OR-20": ([("drawer 20", 45)], 20),
    "OR-25": ([("drawer 21", 15)], 20),            # low
    # gloves (unit box)
    "GLV-NIT-S": ([("shelf A", 6)], 3),
    "GLV-NIT-M": ([("shelf A", 10)], 4),
    "GLV-NIT-L": ([("shelf A", 12), ("shelf B", 4)], 5),
    "GLV-NIT-XL": ([("shelf A", 2)], 3),           # low
    "GLV-LTH-L": ([("shelf B", 9)], 3),
    "GLV-LTH-XL": ([("shelf B", 5)], 3),
    # cable by the metre, liquids by the litre
    "CBL-FLX-1.5": ([("shelf E", 150)], 50),
    "CBL-FLX-2.5": ([("shelf E", 80), ("bin 250", 20)], 50),
    "HOSE-AIR-10": ([("shelf H", 40)], 20),
    "OIL-HYD-46": ([("shelf F", 60)], 20),
    "OIL-CUT": ([("shelf F", 12)], 15),            # low
    "DEGR": ([("shelf F", 25)], 10),
    # cable ties: a two-length family ("the long ones")
    "CT-200": ([("drawer 7", 300)], 100),
    "CT-380": ([("drawer 7", 120), ("drawer 8", 100)], 100),
    # hose clamps: a two-size family ("the big ones")
    "HC-20": ([("drawer 9", 80)], 20),
    "HC-40": ([("drawer 9", 35)], 20),
    # plain items
    "FUS-5A": ([("bin 30", 60)], 20),
    "GOG-SAF": ([("shelf B", 8)], 4),
    "TAPE-DUCT": ([("shelf G", 14)], 6),
    "PNT-WHT": ([("shelf C", 0)], 2),              # low: none left
    "EAR-PLG": ([("shelf A", 30)], 10),
    "WD-40": ([("shelf F", 9)], 4),
    "MASK-FFP2": ([("shelf A", 25)], 10),
    "SPN-13": ([("drawer 30", 6)], 2),
    "SPN-10": ([("drawer 30", 5)], 2),
    "HEXK-SET": ([("drawer 31", 4)], 1),
    "BRG-6204": ([("drawer 35", 16)], 4),
    "BRG-6205": ([("drawer 35", 9)], 4),
    "RIV-4": ([("bin 290", 400)], 100),
    "SAND-P120": ([("shelf G", 50)], 20),
    "SAND-P80": ([("shelf G", 40)], 20),
    "WS-5-50": ([("bin 150", 250)], 100),
    # Unicode
    "CLIP-AELVA": ([("drawer 40", 30)], 10),
    "CLIP-OELVA": ([("drawer 40", 22)], 10),
    "TAPE-ISO-RU": ([("drawer 38", 20)], 5),
    "SEAL-RU": ([("shelf G", 7)], 3),
    "PTFE-ZH": ([("drawer 39", 35)], 10),
    "BRUSH-DE": ([("shelf H", 11)], 4),
}

#: sku → (item name, unit, aliases) for the hand-named items (sized families are generated).
NAMED = {
    "FUS-5A": ("fuse 5 A", "pcs", "5 amp fuse"),
    "GOG-SAF": ("safety goggles", "pcs", "goggles;safety glasses"),
    "TAPE-DUCT": ("duct tape", "roll", "gaffer tape"),
    "PNT-WHT": ("white paint", "can", "paint"),
    "EAR-PLG": ("ear plugs", "box", "earplugs"),
    "WD-40": ("WD-40 spray", "can", "WD40;wd forty"),
    "MASK-FFP2": ("FFP2 dust mask", "box", "dust masks;FFP2 masks"),
    "HEXK-SET": ("hex key set", "set", "allen keys;allen key set"),
    "BRG-6204": ("bearing 6204 2RS", "pcs", "6204 bearing"),
    "BRG-6205": ("bearing 6205 2RS", "pcs", "6205 bearing"),
    "DEGR": ("degreaser", "l", "parts cleaner"),
    "OIL-CUT": ("cutting oil", "l", "cutting fluid"),
    "CLIP-AELVA": ("hyllclips Älva", "pcs", ""),
    "CLIP-OELVA": ("hyllclips Ölva", "pcs", ""),
    "TAPE-ISO-RU": ("изолента синяя", "roll", "blue insulating tape"),
    "SEAL-RU": ("герметик", "tube", "silicone sealant"),
    "PTFE-ZH": ("生料带", "roll", "thread seal tape;PTFE tape"),
    "BRUSH-DE": ("Drahtbürste", "pcs", "wire brush"),
}

HEX_BOLT_LENGTHS = {5: (10, 16, 20, 25, 30), 6: (12, 16, 20, 25, 30, 40, 50, 60),
                    8: (16, 20, 25, 30, 40, 50, 60, 80), 10: (20, 25, 30, 40, 50, 60, 80, 100),
                    12: (25, 30, 40, 50, 60, 80, 100, 120), 16: (40, 50, 60, 80, 100, 120, 150)}
THREADS = (3, 4, 5, 6, 8, 10, 12, 14, 16, 20)
GARMENTS = ("XS", "S", "M", "L", "XL", "XXL")


def _n(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


Row = tuple[str, str, str, str]


def families() -> list[Row]:
    """``(sku, item, unit, aliases)`` of every item, in a fixed order."""
    out: list[Row] = []
    for part in (_fasteners, _drilling, _safety_and_cable, _spares):
        part(out.append)
    for sku, (name, unit, aliases) in NAMED.items():
        if not any(r[0] == sku for r in out):
            out.append((sku, name, unit, aliases))
    return out


def _fasteners(add) -> None:
    for t, lengths in HEX_BOLT_LENGTHS.items():
        for ln in lengths:
            add((f"HB-M{t}-{ln}", f"hex bolt M{t} x {ln} mm", "pcs", f"M{t} bolt"))
    for fam, code, lengths in (("socket cap screw", "SCS", (8, 10, 12, 16, 20, 25, 30, 40)),
                               ("countersunk screw", "CSK", (10, 12, 16, 20, 25, 30)),
                               ("set screw", "SET", (4, 6, 8, 10, 12))):
        for t in (3, 4, 5, 6, 8, 10, 12):
            for ln in lengths:
                add((f"{code}-M{t}-{ln}", f"{fam} M{t} x {ln} mm", "pcs", ""))
    for fam, code, alias in (("hex nut", "NUT", "nut"), ("nyloc nut", "NYL", "lock nut"),
                             ("flange nut", "FLN", ""), ("wing nut", "WNG", ""), ("dome nut", "DOM", ""),
                             ("flat washer", "WSH", "washer"), ("spring washer", "SWS", ""),
                             ("fender washer", "FWS", ""), ("threaded rod", "ROD", "threaded bar")):
        for t in THREADS:
            add((f"{code}-M{t}", f"{fam} M{t}", "pcs", f"M{t} {alias}" if alias else ""))
    for d in (3.2, 4.0, 4.8):
        for ln in (6, 8, 10, 12, 16):
            add((f"RIV-{_n(d)}-{ln}", f"blind rivet {_n(d)} x {ln} mm", "pcs", ""))
    add(("RIV-4", "blind rivet 4 mm", "pcs", "pop rivet"))
    for d in (3.5, 4.0, 4.5, 5.0, 6.0):
        for ln in (16, 20, 25, 30, 40, 50, 60, 70, 80, 100):
            add((f"WS-{_n(d)}-{ln}", f"wood screw {_n(d)} x {ln} mm", "pcs", ""))


def _drilling(add) -> None:
    for d in [x / 2 for x in range(2, 27)]:  # 1 mm … 13 mm in half millimetres
        add((f"DB-{_n(d)}", f"drill bit {_n(d)} mm", "pcs", "HSS drill bit"))
    for d in (4, 5, 6, 8, 10, 12, 14, 16):
        add((f"MDB-{d}", f"masonry drill bit {d} mm", "pcs", ""))
    for d in (6, 8, 10, 12, 16, 20, 25):
        add((f"WDB-{d}", f"wood drill bit {d} mm", "pcs", "spade bit"))
    for t in (3, 4, 5, 6, 8, 10, 12):
        add((f"TAP-M{t}", f"tap M{t}", "pcs", f"M{t} tap"))
        add((f"DIE-M{t}", f"die M{t}", "pcs", ""))
    for d in (115, 125, 230):
        add((f"CD-{d}", f"cutting disc {d} mm", "pcs", "cut-off wheel"))
        add((f"GD-{d}", f"grinding disc {d} mm", "pcs", ""))
        for grit in (40, 60, 80, 120):
            add((f"FD-{d}-{grit}", f"flap disc P{grit} {d} mm", "pcs", ""))


def _safety_and_cable(add) -> None:
    for mat, code in (("o-ring", "OR"), ("viton o-ring", "VOR")):
        for d in range(3, 61):
            add((f"{code}-{d}", f"{mat} {d} mm", "pcs", ""))
    for fam, code in (("nitrile gloves", "NIT"), ("leather gloves", "LTH"), ("latex gloves", "LTX"),
                      ("cut-resistant gloves", "CUT")):
        for g in GARMENTS:
            add((f"GLV-{code}-{g}", f"{fam} {g}", "box" if code in ("NIT", "LTX") else "pair", ""))
    for fam, code in (("flex cable", "FLX"), ("earth cable", "ERT"), ("armoured cable", "SWA")):
        for s in (0.75, 1.0, 1.5, 2.5, 4.0, 6.0):
            add((f"CBL-{code}-{_n(s)}", f"{fam} {_n(s)} mm", "m", ""))
    for d in (6, 8, 10, 13, 19):
        add((f"HOSE-AIR-{d}", f"air hose {d} mm", "m", "airline"))
    add(("CT-200", "cable tie 200 mm", "pcs", "zip tie"))
    add(("CT-380", "cable tie 380 mm", "pcs", "zip tie"))
    add(("HC-20", "hose clamp 20 mm", "pcs", "jubilee clip"))
    add(("HC-40", "hose clamp 40 mm", "pcs", "jubilee clip"))
    for grade in (32, 46, 68):
        add((f"OIL-HYD-{grade}", f"hydraulic oil {grade}", "l", "hydraulic fluid" if grade == 46 else ""))
    for name, code in (("engine oil 10W-40", "OIL-ENG"), ("gear oil", "OIL-GEAR"), ("coolant", "COOL"),
                       ("brake fluid", "BRK"), ("isopropyl alcohol", "IPA"), ("acetone", "ACE")):
        add((code, name, "l", ""))
    for grit in (40, 60, 80, 120, 180, 240, 320, 400, 600, 800, 1000, 1200):
        add((f"SAND-P{grit}", f"sanding sheet P{grit}", "pcs", f"P{grit} sandpaper"))
    for mm in (6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 21, 22, 24, 27, 30, 32):
        add((f"SPN-{mm}", f"spanner {mm} mm", "pcs", f"{mm} mil spanner"))
        add((f"SKT-{mm}", f"socket {mm} mm", "pcs", ""))


def _spares(add) -> None:
    for series in ("60", "62", "63"):
        for bore in range(0, 13):
            code = f"{series}{bore:02d}"
            for seal in ("2RS", "ZZ"):
                add((f"BRG-{code}" if seal == "2RS" else f"BRG-{code}-ZZ", f"bearing {code} {seal}", "pcs", ""))
    for prof in ("SPZ", "SPA", "SPB"):
        for ln in range(800, 3201, 100):
            add((f"VB-{prof}-{ln}", f"v-belt {prof} {ln}", "pcs", ""))
    for amps in (1, 2, 3, 5, 10, 13, 15, 20, 25, 30):
        code = f"FUS-{amps}A"
        if code != "FUS-5A":
            add((code, f"fuse {amps} A", "pcs", ""))
        add((f"MCB-{amps}A", f"circuit breaker {amps} A", "pcs", ""))
    for d in (1.6, 2.4, 3.2, 4.8, 6.4, 9.5, 12.7, 19.0):
        add((f"HS-{_n(d)}", f"heat shrink {_n(d)} mm", "m", "heat shrink tube"))
    for mat in ("copper", "brass"):
        for part in ("elbow", "tee", "coupling", "reducer", "end cap", "compression fitting"):
            for d in (15, 22, 28, 35):
                add((f"PF-{mat[:2].upper()}-{part[:4].upper().strip()}-{d}", f"{mat} {part} {d} mm", "pcs", ""))
    for kind, code in (("filter cartridge", "FLT"), ("spring", "SPR"), ("gasket", "GSK"), ("shim", "SHM"),
                       ("grommet", "GRM"), ("spacer", "SPC"), ("cable gland", "GLD")):
        for k in range(1, 171):
            add((f"{code}-{k:03d}", f"{kind} {code}{k:03d}", "pcs", ""))


def _place(rng: random.Random) -> str:
    # the shelves hold pinned items only: their contents stay a short, known list
    return f"bin {rng.randint(1, 300)}" if rng.random() < 0.8 else f"drawer {rng.randint(1, 40)}"


def rows() -> list[dict]:
    """The inventory rows (see module doc), in SKU-family order."""
    rng = random.Random(SEED)
    seen: set[str] = set()
    out: list[dict] = []
    for sku, item, unit, aliases in families():
        if sku in seen:
            raise ValueError(f"duplicate SKU {sku}")
        seen.add(sku)
        if sku in PINNED:
            stock, reorder = PINNED[sku]
        else:
            n = 1 if rng.random() < 0.88 else (2 if rng.random() < 0.75 else 3)
            places: list[str] = []
            while len(places) < n:
                p = _place(rng)
                if p not in places and p not in PINNED_PLACES:
                    places.append(p)
            reorder = rng.choice((2, 5, 10, 20, 50))
            stock = [(p, reorder * rng.randint(2, 6) + rng.randint(1, 9)) for p in places]
        for place, qty in stock:
            out.append({"sku": sku, "item": item, "location": place, "quantity": qty, "unit": unit,
                        "aliases": aliases, "reorder_level": reorder})
    missing = set(PINNED) - seen
    if missing:
        raise ValueError(f"pinned SKUs with no item: {sorted(missing)}")
    return out


#: places only pinned items use, so "what is in drawer 4" has a short, known answer
PINNED_PLACES = {p for stock, _ in PINNED.values() for p, _ in stock}


def render() -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows())
    return buf.getvalue()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--check", action="store_true", help="exit 1 if the file differs from what would be written")
    args = ap.parse_args()
    text, out = render(), Path(args.out)
    if args.check:
        same = out.exists() and out.read_text(encoding="utf-8") == text
        print(f"{out}: {'up to date' if same else 'differs'}", file=sys.stderr)
        return 0 if same else 1
    out.write_text(text, encoding="utf-8")
    r = rows()
    print(f"wrote {out}: {len({x['sku'] for x in r})} items, {len(r)} rows", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
