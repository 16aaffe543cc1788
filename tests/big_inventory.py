"""A realistic large stock-room inventory for scale tests and benches: the shared 10-item session
inventory first, then sized families (bolts and screws by diameter × length, nuts and washers by
size, drill bits by diameter, fuses by rating, gloves by size, paint by colour, pipe fittings…),
deterministic for a seed."""
from __future__ import annotations

import csv
import random
from pathlib import Path

from edge.stock.store import Item

try:
    from nlu_helpers import sample_items
except ImportError:
    from tests.nlu_helpers import sample_items

METRIC = (3, 4, 5, 6, 8, 10, 12, 16, 20)
LENGTHS = (10, 12, 16, 20, 25, 30, 35, 40, 50, 60, 70, 80, 100)
COLOURS = ("black", "white", "red", "blue", "green", "yellow", "grey", "orange", "brown", "silver",
           "cream", "navy", "purple", "pink", "beige")
SIZES = ("small", "medium", "large", "extra large")
WORDS = {3: "three", 4: "four", 5: "five", 6: "six", 8: "eight", 10: "ten", 12: "twelve", 16: "sixteen", 20: "twenty"}


Row = tuple[str, str, tuple[str, ...], str]


def _families() -> list[Row]:
    """(sku, name, aliases, unit) for every generated item, in family order."""
    return _fasteners() + _fixings() + _bits_and_electrics() + _wear_and_plumbing() + _tools_and_parts()


def _fasteners() -> list[Row]:
    out: list[Row] = []
    for steel, prefix in (("", ""), ("stainless ", "S")):
        for kind, code in (("hex bolt", "HB"), ("socket cap screw", "SC"), ("countersunk screw", "CS"),
                           ("button head screw", "BH")):
            for d in METRIC:
                for L in LENGTHS:
                    out.append((f"{prefix}{code}-M{d}-{L}", f"M{d} x {L} {steel}{kind}",
                                (f"m {WORDS[d]} {steel}{kind}s {L} mm", f"M{d} {L} mm {steel}{kind}"), "pcs"))
        for kind, code in (("hex nut", "HN"), ("nyloc nut", "NN"), ("wing nut", "WN"), ("flange nut", "FN"),
                           ("dome nut", "DN"), ("flat washer", "FW"), ("spring washer", "SW"), ("penny washer", "PW")):
            for d in METRIC:
                out.append((f"{prefix}{code}-M{d}", f"M{d} {steel}{kind}", (f"m {WORDS[d]} {steel}{kind}s",), "pcs"))
    for d in (6, 8, 10, 12):
        for L in LENGTHS[3:]:
            out.append((f"CB-M{d}-{L}", f"M{d} x {L} coach bolt", (f"m {WORDS[d]} coach bolts {L} mm",), "pcs"))
    return out


def _fixings() -> list[Row]:
    out: list[Row] = []
    for kind, code in (("wood screw", "WS"), ("chipboard screw", "CHS"), ("self tapping screw", "STS")):
        for g in ("3.5", "4", "4.5", "5", "6"):
            for L in (16, 20, 25, 30, 40, 50, 60, 70, 80, 100):
                out.append((f"{code}-{g}-{L}", f"{g} x {L} {kind}", (f"{g} by {L} {kind}s",), "pcs"))
    for metal in ("aluminium", "steel"):
        for d in ("3.2", "4", "4.8", "5"):
            for grip in (6, 8, 10, 12, 16):
                out.append((f"RV-{metal[:2].upper()}-{d}-{grip}", f"{d} x {grip} {metal} rivet",
                            (f"{metal} rivets {d} by {grip}",), "pcs"))
    for d in (5, 6, 7, 8, 10, 12):
        for kind, code in (("wall plug", "WP"), ("sleeve anchor", "SA"), ("frame fixing", "FFX")):
            out.append((f"{code}-{d}", f"{d} mm {kind}", (f"{d} millimetre {kind}s",), "pcs"))
    return out


def _bits_and_electrics() -> list[Row]:
    out: list[Row] = []
    for kind, code, sizes in (("HSS drill bit", "DB", [x / 2 for x in range(2, 27)]),
                              ("masonry drill bit", "MB", range(4, 17)), ("wood drill bit", "WB", range(4, 17)),
                              ("hole saw", "HS", (20, 25, 32, 38, 44, 51, 57, 64, 76, 89))):
        for x in sizes:
            s = f"{x:g}"
            out.append((f"{code}-{s}", f"{s} mm {kind}", (f"{s} millimetre {kind}s",), "pcs"))
    for kind, code in (("glass fuse", "GF"), ("blade fuse", "BF"), ("ceramic fuse", "CF")):
        for a in (1, 2, 3, 5, 7.5, 10, 13, 15, 20, 25, 30):
            out.append((f"{code}-{a:g}A", f"{a:g} amp {kind}", (f"{a:g} A {kind}s",), "pcs"))
    for L in (100, 150, 200, 250, 300, 370, 450, 500):
        for c in ("black", "white", "red", "blue"):
            out.append((f"CT-{L}-{c[:3].upper()}", f"{L} mm {c} cable tie", (f"{c} zip ties {L}",), "pcs"))
    for kind, code in (("twin and earth cable", "TE"), ("flex cable", "FX"), ("heat shrink", "HS2"),
                       ("ring terminal", "RT"), ("butt connector", "BC"), ("spade terminal", "ST")):
        for s in ("0.5", "0.75", "1", "1.5", "2.5", "4", "6", "10", "16"):
            out.append((f"{code}-{s}", f"{s} mm {kind}", (f"{s} square {kind}",), "m" if "cable" in kind else "pcs"))
    return out


def _wear_and_plumbing() -> list[Row]:
    out: list[Row] = []
    for kind, code in (("nitrile gloves", "NG"), ("cut resistant gloves", "CG"), ("rigger gloves", "RG"),
                       ("latex gloves", "LG"), ("hi-vis vest", "HV"), ("coverall", "CO")):
        for s in SIZES:
            out.append((f"{code}-{s[:2].upper()}{len(s)}", f"{kind} {s}", (f"{s} {kind}",), "box" if "gloves" in kind else "pcs"))
    for kind, code in (("gloss paint", "GP"), ("emulsion paint", "EP"), ("spray paint", "SP"),
                       ("marking paint", "MP"), ("electrical tape", "ET"), ("duct tape", "DT"),
                       ("hard hat", "HH")):
        for c in COLOURS:
            out.append((f"{code}-{c[:3].upper()}{len(c)}", f"{c} {kind}", (f"{kind} {c}",), "pcs"))
    for kind, code in (("copper pipe", "CP"), ("PVC pipe", "PV"), ("compression elbow", "CE"),
                       ("compression tee", "CTE"), ("ball valve", "BV"), ("pipe clip", "PC"),
                       ("hose clamp", "HC"), ("pipe coupling", "PCO")):
        for d in (8, 10, 12, 15, 22, 28, 35, 42, 54):
            out.append((f"{code}-{d}", f"{d} mm {kind}", (f"{d} millimetre {kind}",), "pcs"))
    return out


def _tools_and_parts() -> list[Row]:
    out: list[Row] = []
    for kind, code, vals in (("sanding disc", "SD", (40, 60, 80, 100, 120, 150, 180, 240, 320, 400)),
                             ("sandpaper sheet", "SPS", (40, 60, 80, 100, 120, 150, 180, 240, 320, 400)),
                             ("cutting disc", "CDS", (76, 100, 115, 125, 180, 230, 300)),
                             ("grinding disc", "GDS", (100, 115, 125, 180, 230))):
        for v in vals:
            unit = "grit" if "sand" in kind else "mm"
            out.append((f"{code}-{v}", f"{v} {unit} {kind}", (f"{kind} {v}",), "pcs"))
    for kind, code, vals in (("combination spanner", "CSP", range(6, 33)), ("socket", "SK", range(6, 33)),
                             ("hex key", "HK", ("1.5", "2", "2.5", "3", "4", "5", "6", "8", "10", "12")),
                             ("torx bit", "TX", (10, 15, 20, 25, 27, 30, 40, 45, 50))):
        for v in vals:
            out.append((f"{code}-{v}", f"{v} mm {kind}" if code != "TX" else f"T{v} {kind}",
                        (f"{v} {kind}",), "pcs"))
    for b in range(6000, 6011):
        for suffix in ("ZZ", "2RS"):
            out.append((f"BRG-{b}{suffix}", f"{b} {suffix} bearing", (f"bearing {b} {suffix}",), "pcs"))
    for d in range(6, 61, 2):
        for w in (1, 1.5, 2, 2.5, 3, 3.5):
            out.append((f"OR-{d}-{w:g}", f"{d} x {w:g} o-ring", (f"o ring {d} by {w:g}",), "pcs"))
    for kind, code in (("AA battery", "BAA"), ("AAA battery", "BAAA"), ("C battery", "BC2"), ("D battery", "BD"),
                       ("9 volt battery", "B9V"), ("LED tube 4 ft", "LT4"), ("LED tube 5 ft", "LT5"),
                       ("ear plugs", "EPL"), ("dust mask FFP2", "DM2"), ("dust mask FFP3", "DM3"),
                       ("first aid kit", "FAK"), ("spill kit", "SPK"), ("wire brush", "WBR"),
                       ("paint brush 2 inch", "PB2"), ("paint roller", "PR"), ("silicone sealant", "SIL"),
                       ("wood glue", "WG"), ("epoxy glue", "EG"), ("WD-40", "WD40"), ("grease cartridge", "GC")):
        out.append((f"{code}-1", kind, (f"{kind}s",), "pcs"))
    return out


def big_inventory(n: int = 2000, seed: int = 1) -> list[Item]:
    """``n`` items: the 10 session items, then generated family items (at random places), the first
    ``n - 10`` of a seeded shuffle of all families. Raises ValueError if ``n`` is more than there are."""
    base = sample_items()
    fam = _families()
    if n > len(base) + len(fam):
        raise ValueError(f"only {len(base) + len(fam)} items can be generated, asked for {n}")
    rng = random.Random(seed)
    rng.shuffle(fam)
    places = ([f"bin {k}" for k in range(1, 401)] + [f"drawer {k}" for k in range(1, 61)]
              + [f"shelf {c}" for c in "ABCDEFGHJKLMNPRSTUVWXYZ"])
    out = list(base)
    for sku, name, aliases, unit in fam[:n - len(base)]:
        out.append(Item(sku, name, rng.choice(places), rng.randint(0, 400), unit, aliases))
    return out


def write_csv(path: Path, items: list[Item]) -> Path:
    """``items`` as an inventory CSV (for ``Store.import_csv``)."""
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["sku", "item", "location", "quantity", "unit", "aliases"])
        for it in items:
            w.writerow([it.sku, it.item, it.location, it.quantity, it.unit, ";".join(it.aliases)])
    return path
