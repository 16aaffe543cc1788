"""A generated stock room of thousands of items with sized families, for the understanding tests and
``bench/nlu_speed.py``: hex bolts M6–M12 in several lengths, drill bits by diameter, cutting discs,
o-rings, nitrile gloves by size, plus the shared sample inventory and filler items up to ``n``.

Deterministic (no random numbers): the same ``n`` gives the same items.
"""
from __future__ import annotations

from edge.stock.store import Item
from tests.nlu_helpers import sample_items

THREADS = (6, 8, 10, 12)
BOLT_LENGTHS = (20, 30, 40, 50, 60, 80, 100)
DRILL_MM = (2, 3, 4, 5, 6, 8, 10, 12)
DISC_MM = (115, 125, 230)
ORING_MM = (10, 20, 30, 40)
GLOVE_SIZES = ("S", "M", "L", "XL")
_FILLER_WORDS = ("bracket", "hinge", "clamp", "coupling", "flange", "gasket", "grommet", "spring", "pulley",
                 "bushing", "fitting", "valve", "sleeve", "collar", "shim", "rivet", "anchor", "hook", "latch",
                 "handle", "knob", "caster", "strap", "buckle", "cable", "hose", "nozzle", "filter", "bearing")
_FILLER_KINDS = ("steel", "brass", "nylon", "zinc", "copper", "rubber", "aluminium", "plastic", "stainless",
                 "galvanized", "black", "white", "heavy", "light", "round", "square", "flat", "angled")
_GREEK = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu",
          "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega")


def sized_families() -> list[Item]:
    """The families with sizes written in their names (about 70 items)."""
    out = []
    for t in THREADS:
        for n in BOLT_LENGTHS:
            if t == 6 and n == 100:
                continue
            out.append(Item(f"HXB-M{t}-{n}", f"hex bolt M{t} x {n} mm", f"bin {t * 10 + n // 10}", 50 + n, "pcs", ()))
    for d in DRILL_MM:
        out.append(Item(f"DRB-{d}", f"HSS drill bit {d} mm", f"drawer {10 + d}", 20, "pcs", ()))
    for d in DISC_MM:
        out.append(Item(f"CDS-{d}", f"cutting disc {d} mm", f"shelf G{d}", 30, "pcs", ()))
    for d in ORING_MM:
        out.append(Item(f"ORG-{d}", f"O-ring {d} mm", f"drawer {60 + d // 10}", 100, "pcs", ()))
    for s in GLOVE_SIZES:
        out.append(Item(f"GLV-NTR-{s}", f"nitrile work gloves {s}", "shelf H", 12, "box", ()))
    out.append(Item("CBL-CU-25", "copper cable 2.5 mm", "rack 3", 250, "m", ()))
    out.append(Item("SCR-AE", "Schrauben Ä", "bin 901", 40, "pcs", ()))
    out.append(Item("SCR-OE", "Schrauben Ö", "bin 902", 40, "pcs", ()))
    out.append(Item("ZH-SPANNER", "活动扳手", "shelf K", 7, "pcs", ()))
    return out


def stockroom(n: int = 2000) -> list[Item]:
    """``n`` items (at least the sample inventory and :func:`sized_families`): the rest are
    distinct filler items ("zinc hinge beta 7") in bins 1000 and up."""
    items = sample_items() + sized_families()
    k = 0
    while len(items) < n:
        word = _FILLER_WORDS[k % len(_FILLER_WORDS)]
        kind = _FILLER_KINDS[(k // len(_FILLER_WORDS)) % len(_FILLER_KINDS)]
        tag = _GREEK[(k // (len(_FILLER_WORDS) * len(_FILLER_KINDS))) % len(_GREEK)]
        num = k // (len(_FILLER_WORDS) * len(_FILLER_KINDS) * len(_GREEK))
        items.append(Item(f"FIL-{k:05d}", f"{kind} {word} {tag} {num}", f"bin {1000 + k}", 10 + k % 90, "pcs", ()))
        k += 1
    return items
