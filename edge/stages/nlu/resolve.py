"""Which inventory item the words of a command name: names, aliases, families and sizes.

:class:`ItemIndex` is built once per inventory (dict lookups only, so a lookup costs the same with
20,000 items as with 20) and :meth:`ItemIndex.find` tries, in order:

1. a whole name or alias (longest n-gram of the tokens; names compared by
   :func:`edge.stages.names.name_key`, so "Schrauben Ä" and "Schrauben Ö" stay two items and a Chinese
   name said in an English sentence is found, also inside a longer Chinese token);
2. a family (the name without its size, :func:`edge.stages.sizes.split_size`: "hex bolt", "drill
   bit"), by its whole words or its head word ("bolts"), narrowed by the size said ("M10", "80 mm",
   "six mil" = 6 mm, "5 centimetre" = 50 mm, "large"): one item left → that SKU; several → their SKUs
   as candidates and ``variant_missing`` the attribute that tells them apart (``thread``,
   ``millimetre``, ``size``); a said size no item of the family has → ``heard_variant`` with the
   family (or its nearest part) as candidates. A variant is never guessed;
   A family said as such ("drill bits") is that family before the longer ones ending in it
   ("masonry drill bit"), when it has the size said; a bare number beside the name is a size
   when such a variant exists and it is no count ("the 380 cable ties", "two 125 discs"); "ten by
   eighty" is M10 × 80; the place said keeps the candidates stocked there; a word no item has right
   before a generic name ("*welding* goggles") makes it another kind: asked, never this one;
3. a fuzzy name from the bounded shortlist (:class:`edge.stages.nlu.shortlist.Shortlist`);
4. one word of names ("m8" → every M8 item: candidates); a word alone that heads no name ("cables" of
   "cable ties") is another thing, unknown;
5. the only item stocked at the place said;
6. else the content words are an unknown item.

Candidates left are narrowed by the words said compared without accents ("Alva" → "Älva").
A name heard that sounds like another item's (:func:`edge.stages.names.spoken_key`: "Muller clamp"
and "Müller clamp", two SKUs) is never taken as the one spelled as heard: both are candidates,
narrowed by the place said, else asked by place or SKU.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from rapidfuzz import fuzz

from edge.stages.names import name_key, spoken_key
from edge.stages.nlu.filler import has_cjk
from edge.stages.nlu.lexicon import (
    NOT_ITEM,
    STOP_WORDS,
    UNITS,
    common_words,
    fold,
    head_words,
    is_name_word,
    normalize_location,
    normalize_text,
    proper_words,
    singular,
)
from edge.stages.nlu.shortlist import Shortlist
from edge.stages.nlu.spoken_size import (
    ATTRIBUTES,
    GARMENT_SPOKEN,
    NUMBER,
    TIMES_X,
    SpokenSize,
    fits,
    fmt,
    has_attr,
    spoken_size,
)
from edge.stages.nlu.types import ItemMatch
from edge.stages.sizes import GARMENT_WORDS, Size, split_size

#: rapidfuzz ratio an n-gram needs against a shortlisted name to count as that name
FUZZY_CUTOFF = 85
#: words said before an item's name that do not make it another kind of item
HARMLESS_MODIFIERS = frozenset("new old spare usual same other big little small long short good bad broken worn "
                               "damaged last next first remaining extra those these few several odd loose "
                               "single spare whole full empty clean dirty plain standard normal regular ordinary "
                               "basic".split())
#: words said beside an item's name that say when or how, not what ("3 o-rings yesterday")
_NOT_KIND = frozenset("yesterday tonight morning afternoon evening week month earlier later monday tuesday wednesday "
                      "thursday friday saturday sunday actually again please altogether each ish maybe around "
                      "roughly approximately wait sorry uh um er erm hmm or nor over across away along through into onto out "
                      "move moved moving transfer transferred transferring shift shifted put bring brought came come "
                      "went gone taken take took use used as well was is tube bottle jar drum spool reel coil carton case crate tub bucket "
                      "pail sachet".split())
_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")


@dataclass(frozen=True)
class Found:
    """An :class:`ItemMatch` plus the variant facts of :class:`edge.stages.nlu.types.Intent`."""

    match: ItemMatch
    variant_missing: str | None = None
    heard_variant: str | None = None


def name_tokens(name: str) -> tuple[str, ...]:
    """A name or alias in the resolver's token form (normalized, each word singular)."""
    return tuple(singular(t) for t in normalize_text(name).split())


class ItemIndex:
    """The lookup tables of one inventory (``items``: ``sku``, ``item``, ``location``, ``aliases``;
    places from ``stock`` when the items have it)."""

    def __init__(self, items: Iterable):
        self.items = list(items)
        self.by_sku = {it.sku: it for it in self.items}
        self.phrases: dict[tuple[str, ...], set[str]] = {}
        self.words: dict[str, set[str]] = {}
        self.cjk: dict[str, set[str]] = {}
        self.sizes: dict[str, Size] = {}
        self.families: dict[tuple[str, ...], list[str]] = {}
        self.heads: dict[str, set[tuple[str, ...]]] = {}
        self.suffixes: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
        self.by_location: dict[str, list[str]] = {}
        #: every word of an item's name and aliases (singular), for words said that no pick explains; the heads
        self.name_words: dict[str, set[str]] = {}
        self.heads_of: dict[str, set[str]] = {}  # (lexicon.head_words: "tie" of "cable tie")
        #: a head word of an alias → {sku: the aliases it heads}: "tape" of "blue insulating tape" (not a family)
        self.alias_heads: dict[str, dict[str, set[tuple[str, ...]]]] = {}
        self.proper_of: dict[str, set[str]] = {}  # words written capitalized in a name: a brand said alone
        spoken: dict[str, dict[str, str]] = {}  # spoken key of a name → {sku: its written key}
        places: dict[str, str] = {}  # as written → normal form (many items share a place)
        for it in self.items:
            family, size = split_size(it.item)
            self.sizes[it.sku] = size
            fam = name_tokens(family)
            # a grade written without a unit ("hydraulic oil 46", "engine oil 10W-40", "bearing 6204 2RS") is a
            # variant too: "hydraulic oil" is the family of 32, 46 and 68, "engine oil" of 10W-40
            for f in _families_of(fam):
                if f:
                    self.families.setdefault(f, []).append(it.sku)
                    self.heads.setdefault(f[-1], set()).add(f)
                    for k in range(1, len(f) + 1):  # "drill bit" is also said of "HSS drill bit"
                        self.suffixes.setdefault(f[-k:], set()).add(f)
            for name in (it.item, *it.aliases):
                norm = normalize_text(name)
                toks = tuple(singular(t) for t in norm.split())
                if toks and name is not it.item:
                    for h in head_words(toks):
                        self.alias_heads.setdefault(h, {}).setdefault(it.sku, set()).add(toks)
                if toks:
                    self.phrases.setdefault(toks, set()).add(it.sku)
                    self.name_words.setdefault(it.sku, set()).update(toks)
                    self.heads_of.setdefault(it.sku, set()).update(head_words(common_words(name, toks)))
                    self.proper_of.setdefault(it.sku, set()).update(proper_words(name))
                    spoken.setdefault(spoken_key(norm), {}).setdefault(it.sku, name_key(norm))
                for t in toks:
                    if is_name_word(t):
                        self.words.setdefault(t, set()).add(it.sku)
                for run in _CJK_RUN.findall(norm):
                    if len(run) >= 2:
                        self.cjk.setdefault(run, set()).add(it.sku)
            for place in places_of(it):
                if place not in places:
                    places[place] = normalize_location(place) or place
                self.by_location.setdefault(places[place], []).append(it.sku)
        #: the items whose names sound like one of this item's (same spoken key, spelled otherwise)
        self.alike: dict[str, set[str]] = _alike(spoken)
        self.max_phrase = max((len(p) for p in self.phrases), default=1)
        self.max_family = max((len(f) for f in self.families), default=1)
        self.shortlist = Shortlist(self.items)

    # -- the steps -------------------------------------------------------------------------------

    def find(self, toks: list[str], skip: set[int], location: str | None = None, strict: bool = True) -> Found:
        """The item ``toks`` (normalized, singular) names; ``skip``: token indices of places and
        counts. ``strict``: a word said beside the name that the pick does not explain makes it
        unknown or asked (:meth:`_unexplained`; what is written needs it, a question's answer not);
        not ``strict`` (a question) any bare number beside the name may be its size. Raises nothing."""
        size = spoken_size(toks, skip, question=not strict)
        by_name, by_family = self._by_name(toks, skip, size), self._by_family(toks, skip, size)
        if by_name and by_family:  # the longer match wins: "nitrile work gloves" over the alias "gloves"
            words = [len(f.match.tokens - size.tokens) for f in (by_name, by_family)]
            named = (by_family if words[1] > words[0] or self._size_fits_better(by_family, by_name, size)
                     else by_name)
        else:
            named = by_name or by_family
        if named:
            found = self._by_folded(self._at_place(self._sound_alike(self._kind_said(named, toks, skip, size), toks, size),
                                                   location), toks, skip)
        else:
            heard = (self._by_cjk(toks, skip) or self._by_fuzzy(toks, skip, size)
                     or self._unknown_beside(self._by_word(toks, skip, size), toks, skip, size))
            found = self._by_folded(self._sound_alike(heard, toks, size) or self._at_location(toks, skip, location, size),
                                    toks, skip)
        return self._unexplained(found, toks, skip, size) if strict else found

    def _unexplained(self, found: Found, toks: list[str], skip: set[int], size: SpokenSize) -> Found:
        """``found`` unless a content word said beside the name heard is in no picked item's name
        ("3 cable *ties*" for red cable, "*blue* gloves", "fuse *holders*"): then the items whose
        names hold every word said are the candidates, or none does and the words are an unknown
        item. Never the item that matches a subset of the words."""
        m = found.match
        if (not (m.sku or m.candidates) or found.heard_variant is not None or not m.tokens
                or m.via not in ("name", "family", "fuzzy", "word")):
            return found
        span = set(m.tokens)
        for step in (-1, 1):  # the run of words around the name, up to a stop word, a place or the count
            k, run = (min(span) if step < 0 else max(span)) + step, []
            while 0 <= k < len(toks) and k not in skip and toks[k] not in STOP_WORDS and not NUMBER.match(toks[k]):
                run.append(k)
                k += step
            if step > 0 or k >= 0:  # words before the name count after the count or "of" ("5 *blue* gloves"),
                span.update(run)    # not at the start ("chuck …", "dave needs …" are the command's)
        picked = (m.sku,) if m.sku else m.candidates
        extra = [i for i in sorted(span - set(m.tokens) - size.tokens) if self._content(toks[i])
                 and not any(self._holds(s, toks[i]) for s in picked)]
        if not extra:
            return found
        said = {toks[i] for i in span - size.tokens if self._content(toks[i])}
        holders = [s for s in self.by_sku if all(self._holds(s, t) for t in said)]
        tokens = frozenset(span)
        if len(holders) == 1:
            return Found(ItemMatch(holders[0], tokens, via=m.via))
        if holders:
            return Found(ItemMatch(None, tokens, candidates=tuple(sorted(holders)), via=m.via))
        return Found(ItemMatch(None, frozenset(i for i in span if self._content(toks[i]) or i in m.tokens),
                               via="unknown"))

    def _sound_alike(self, found: Found | None, toks: list[str], size: SpokenSize) -> Found | None:
        """``found`` unless its item's name sounds like another item's and the words heard fit that
        one too ("Muller clamp" heard, "Müller clamp" also stocked; any fuzzy hit on such a name):
        then both are candidates, never the one spelled as heard."""
        if found is None or found.match.sku not in self.alike or found.heard_variant is not None:
            return found
        m = found.match
        said = {spoken_key(toks[i]) for i in m.tokens - size.tokens}
        same = self.alike[m.sku] if m.via == "fuzzy" else {
            s for s in self.alike[m.sku] if said <= {spoken_key(w) for w in self.name_words.get(s, ())}}
        if not same:
            return found  # a word only this item's name has ("MC clamp") tells them apart
        return Found(ItemMatch(None, m.tokens, candidates=tuple(sorted({m.sku, *same})), via=m.via))

    def _holds(self, sku: str, word: str) -> bool:
        """The item's name or an alias has ``word`` (also compared without accents: "Ölva" → "Älva")."""
        words = self.name_words.get(sku, set())
        return word in words or fold(word) in {fold(w) for w in words}

    @staticmethod
    def _content(t: str) -> bool:
        """A word that may tell what item is meant (not a count, unit, filler, command or time word)."""
        return (any(c.isalpha() for c in t) and t not in NOT_ITEM and t not in UNITS and t not in _NOT_KIND
                and t not in HARMLESS_MODIFIERS and t not in GARMENT_SPOKEN and t not in TIMES_X and t != "extra")

    def _unknown_beside(self, found: Found | None, toks: list[str], skip: set[int], size: SpokenSize) -> Found | None:
        """A match by one word of names that stands beside a word no item has ("hammer drills": no
        drill is stocked, only drill bits) is no match: the words are an unknown item."""
        if found is None:
            return None
        said = self._kind_said(found, toks, skip, size)
        if said is found:
            return found
        return Found(ItemMatch(None, said.match.tokens, via="unknown"))

    def _by_folded(self, found: Found, toks: list[str], skip: set[int]) -> Found:
        """Candidates narrowed by a word said without its accents ("hyllclips Alva" → "Älva"): the
        one candidate whose name (or alias) has every word said, compared without diacritics."""
        m = found.match
        if not m.candidates or found.heard_variant is not None:
            return found
        said = {fold(t) for i, t in enumerate(toks) if i not in skip and t not in NOT_ITEM and t.isalpha()}
        if not said:
            return found
        hits = [c for c in m.candidates
                if said <= {fold(w) for w in name_tokens(self.by_sku[c].item)} | {fold(w) for a in self.by_sku[c].aliases
                                                                                  for w in name_tokens(a)}]
        if len(hits) != 1:
            return found
        return Found(ItemMatch(hits[0], m.tokens | {i for i, t in enumerate(toks) if fold(t) in said}, via=m.via))

    def _at_place(self, found: Found, location: str | None) -> Found:
        """Candidates narrowed to those stocked at the place said ("M8 bolts from bin 16": the one
        M8 bolt kept there); unchanged when none or all are kept there, or a variant was misheard."""
        m = found.match
        if not location or not m.candidates or found.heard_variant is not None:
            return found
        here = set(self.by_location.get(location, ()))
        kept = [c for c in m.candidates if c in here]
        if not kept or len(kept) == len(m.candidates):
            return found
        if len(kept) == 1:
            return Found(ItemMatch(kept[0], m.tokens, via=m.via))
        return Found(ItemMatch(None, m.tokens, candidates=tuple(kept), via=m.via), variant_missing=found.variant_missing)

    def _kind_said(self, found: Found, toks: list[str], skip: set[int], size: SpokenSize) -> Found:
        """``found`` unless a word no item's name has stands right before the name heard ("*welding*
        goggles" when the inventory has safety goggles): then another kind was meant, the named
        items are candidates and the words are ``heard_variant`` (asked, never guessed)."""
        m = found.match
        name = sorted(m.tokens - size.tokens)
        if len(name) != 1 or m.via not in ("name", "family", "word"):  # a generic word: goggles, bolts, plugs
            return found
        k = name[0] - 1
        if k < 0 or k in skip or k in size.tokens:
            return found
        t = toks[k]
        if (not t.isalpha() or len(t) < 3 or t in self.words or t in NOT_ITEM or t in HARMLESS_MODIFIERS
                or t in GARMENT_SPOKEN or t in TIMES_X or t == "extra"):
            return found
        skus = (m.sku,) if m.sku else m.candidates
        said = " ".join([t, *(toks[i] for i in name)])
        return Found(ItemMatch(None, m.tokens | {k}, candidates=tuple(skus), via=m.via), heard_variant=said)

    def _size_fits_better(self, family: Found, name: Found, size: SpokenSize) -> bool:
        """The size said ("12 mm drill bits") fits the family's pick but none of the named item's
        attributes (the unsized "drill bit"): the family's pick is meant."""
        if not size.said or name.match.sku is None or family.match.sku is None:
            return False
        named, picked = self.sizes[name.match.sku], self.sizes[family.match.sku]
        return (not any(has_attr(named, a) for a, _ in size.said)
                and all(has_attr(picked, a) for a, _ in size.said))

    def _size_order(self, sku: str) -> tuple:
        z = self.sizes[sku]
        thread = float(z.thread[1:]) if z.thread else -1.0
        garment = list(GARMENT_WORDS).index(z.garment) if z.garment in GARMENT_WORDS else -1
        return thread, z.mm, garment, z.amp or -1.0, int(z.bearing or -1), z.seal or "", sku

    def _narrow(self, skus: Iterable[str], size: SpokenSize, span: frozenset[int], via: str) -> Found:
        """``skus`` narrowed by the size said; candidates in size order (M6 before M10, 20 before
        100 mm, S before XL)."""
        cur = sorted(set(skus), key=self._size_order)
        for attr, value, words in size.checks():
            if not any(has_attr(self.sizes[s], attr) for s in cur):
                continue  # not a variant of these items ("large" said of an unsized item)
            nxt = [s for s in cur if fits(self.sizes[s], attr, value)]
            if not nxt:
                return Found(ItemMatch(None, span, candidates=tuple(cur), via=via), heard_variant=words)
            cur = nxt
        for attr, soft in (("millimetre", size.soft), ("bearing", size.soft_bearing)):
            if len(cur) > 1 and soft and any(has_attr(self.sizes[s], attr) for s in cur):
                for idx, value in soft:
                    nxt = [s for s in cur if fits(self.sizes[s], attr, value)]
                    if nxt:
                        cur, span = nxt, span | {idx}
                        break
        if len(cur) == 2 and size.extreme is not None and "millimetre" not in dict(size.said):
            cur, span = self._by_extreme(cur, size.extreme, span)
        if len(cur) > 1:  # a grade or code said ("P240 sheets", "6004 bearings") picks the items named with it
            for idx, word in (*size.codes, *((i, fmt(v)) for i, v in size.soft)):
                nxt = [s for s in cur if word in self.name_words.get(s, ())]
                if nxt:
                    cur, span = nxt, span | {idx}
        if len(cur) == 1:
            return Found(ItemMatch(cur[0], span, via=via))
        missing = None
        for attr in ATTRIBUTES:
            values = {(z.thread, z.mm[:1], z.garment, z.amp, z.seal, z.bearing)[ATTRIBUTES.index(attr)]
                      for z in (self.sizes[s] for s in cur)}
            if len(values) > 1:
                missing = attr
                break
        return Found(ItemMatch(None, span, candidates=tuple(cur), via=via), variant_missing=missing)

    def _by_extreme(self, cur: list[str], extreme: tuple[int, int], span: frozenset[int]):
        """Two variants of one length or diameter apart and "the long/short ones" said: the longer
        or the shorter one (``(skus, span)``, unchanged when they differ otherwise)."""
        a, b = (self.sizes[s] for s in cur)
        if not (a.mm and b.mm and a.mm[0] != b.mm[0] and (a.thread, a.garment, a.amp, a.bearing, a.seal)
                == (b.thread, b.garment, b.amp, b.bearing, b.seal)):
            return cur, span
        ranked = sorted(cur, key=lambda s: self.sizes[s].mm[0])
        return [ranked[-1] if extreme[1] > 0 else ranked[0]], span | {extreme[0]}

    def _by_name(self, toks: list[str], skip: set[int], size: SpokenSize) -> Found | None:
        for n in range(min(self.max_phrase, len(toks)), 0, -1):
            for i in range(len(toks) - n + 1):
                span = range(i, i + n)
                if skip.intersection(span):
                    continue
                skus = self.phrases.get(tuple(toks[i:i + n]))
                if skus and not (n == 1 and toks[i] in NOT_ITEM):
                    return self._narrow(skus, size, frozenset(span) | size.tokens, "name")
        return None

    def _by_family(self, toks: list[str], skip: set[int], size: SpokenSize) -> Found | None:
        free = [i for i in range(len(toks)) if i not in skip and i not in size.tokens]
        for n in range(min(self.max_family, len(free)), 0, -1):
            for k in range(len(free) - n + 1):
                idx = free[k:k + n]
                if idx[-1] - idx[0] != n - 1:
                    continue
                fam = tuple(toks[j] for j in idx)
                if fam in self.families:
                    exact = self._narrow(self.families[fam], size, frozenset(idx) | size.tokens, "family")
                    sized = all(any(has_attr(self.sizes[s], a) for s in self.families[fam]) for a, _ in size.said)
                    if sized and (exact.match.sku or (exact.match.candidates and exact.heard_variant is None)):
                        return exact  # "drill bits" are the drill bits, not also the masonry ones
                    # "bolts" is every family it ends ("bolt", "hex bolt"); "drill bit" also "HSS drill bit"
                    fams = self.suffixes.get(fam, {fam})
                    skus = [s for f in fams for s in self.families[f]]
                    return self._narrow(skus, size, frozenset(idx) | size.tokens, "family")
        heads = [(i, self.heads[toks[i]]) for i in free if toks[i] in self.heads and is_name_word(toks[i])]
        if not heads:
            return None
        i, fams = heads[-1]
        skus = [s for f in fams for s in self.families[f]]
        # an item whose alias this word heads is one too ("tape": duct tape, and "blue insulating tape")
        aliased = {s: a for s, a in self.alias_heads.get(toks[i], {}).items() if s not in skus}
        # other words said narrow the families ("hex" of hex bolts and carriage bolts) and those aliases
        said = {toks[j] for j in free}
        narrowed = [f for f in fams if said.intersection(f[:-1])]
        by_alias = [s for s, names in aliased.items() if any(said.intersection(a[:-1]) for a in names)]
        if narrowed or by_alias:
            skus = [s for f in narrowed for s in self.families[f]] + by_alias
        else:
            skus += sorted(aliased)
        return self._narrow(skus, size, frozenset({i}) | size.tokens, "family")

    def _by_cjk(self, toks: list[str], skip: set[int]) -> Found | None:
        best: tuple[int, set[str], int] | None = None
        for i, t in enumerate(toks):
            if i in skip or not has_cjk(t):
                continue
            for a in range(len(t)):
                for b in range(len(t), a + 1, -1):
                    skus = self.cjk.get(t[a:b])
                    if skus and (best is None or b - a > best[0]):
                        best = b - a, skus, i
        if best is None:
            return None
        skus = sorted(best[1])
        if len(skus) == 1:
            return Found(ItemMatch(skus[0], frozenset({best[2]}), via="name"))
        return Found(ItemMatch(None, frozenset({best[2]}), candidates=tuple(skus), via="name"))

    def _by_fuzzy(self, toks: list[str], skip: set[int], size: SpokenSize) -> Found | None:
        content = [t for i, t in enumerate(toks) if i not in skip and t not in NOT_ITEM and not t.isdigit()]
        if not content:
            return None
        choices: dict[str, set[str]] = {}
        for it in self.shortlist.shortlist(" ".join(content), 8):
            for name in (it.item, *it.aliases):
                choices.setdefault(" ".join(name_tokens(name)), set()).add(it.sku)
        if not choices:
            return None
        best: tuple[float, set[str], range] | None = None
        for n in range(1, 5):
            for i in range(len(toks) - n + 1):
                gram, span = toks[i:i + n], range(i, i + n)
                if (skip.intersection(span) or gram[0] in STOP_WORDS or gram[-1] in STOP_WORDS
                        or len(" ".join(gram)) < 5):
                    continue
                text = " ".join(gram)
                for choice, skus in choices.items():
                    score = fuzz.ratio(text, choice)
                    if score < FUZZY_CUTOFF:
                        continue
                    if best is None or score > best[0]:
                        best = score, set(skus), span
                    elif score == best[0] and span == best[2]:
                        best[1].update(skus)
        if best is None:
            return None
        return self._narrow(best[1], size, frozenset(best[2]) | size.tokens, "fuzzy")

    def _by_word(self, toks: list[str], skip: set[int], size: SpokenSize) -> Found | None:
        """Items a word of whose names is said. One word alone (letters) heading none of their names, no other
        word of them beside it, names another thing ("cables" where "cable ties" are stocked): unknown."""
        hits = [(i, self.words[t]) for i, t in enumerate(toks) if i not in skip and t in self.words]
        if not hits:
            return None
        common = set.intersection(*(h for _, h in hits))
        skus = common or set.union(*(h for _, h in hits))
        i, beside = hits[0][0], set(toks[max(0, hits[0][0] - 1):hits[0][0]] + toks[hits[0][0] + 1:hits[0][0] + 2])
        if len(hits) == 1 and toks[i].isalpha() and not any(toks[i] in self.heads_of[s] or toks[i] in self.proper_of[s]
                                                            or beside & self.name_words[s] for s in skus):
            return Found(ItemMatch(None, frozenset({i}), via="unknown"))
        return self._narrow(skus, size, frozenset(i for i, _ in hits) | size.tokens, "word")

    def _at_location(self, toks: list[str], skip: set[int], location: str | None, size: SpokenSize) -> Found:
        at = self.by_location.get(location or "", [])
        content = [i for i, t in enumerate(toks)  # "a tub of grease": grease is the unknown, not the tub
                   if i not in skip and i not in size.tokens and t not in NOT_ITEM and not t.isdigit()
                   and not (t in _NOT_KIND and toks[i + 1:i + 2] == ["of"])]
        # only when nothing else was said of the item: "we used 3 sprockets from bin 12" is not bin 12's item
        if len(at) == 1 and not content:
            return Found(ItemMatch(at[0], frozenset(), via="location"))
        if len(at) > 1 and not content:
            return Found(ItemMatch(None, frozenset(), candidates=tuple(sorted(at)), via="location"))
        return Found(ItemMatch(None, frozenset(content), via="unknown"))


def _alike(spoken: dict[str, dict[str, str]]) -> dict[str, set[str]]:
    """``{sku: the other SKUs with a name of the same sound}`` from ``{spoken key: {sku: written key}}``."""
    out: dict[str, set[str]] = {}
    for group in spoken.values():
        if len(set(group.values())) > 1:  # one sound, several spellings of several items
            for sku, key in group.items():
                out.setdefault(sku, set()).update(o for o, k in group.items() if k != key)
    return out


def _families_of(fam: tuple[str, ...]) -> list[tuple[str, ...]]:
    """``fam`` and the family it names without a grade at its end: without the last word when that is a
    number, and without a code from its first word with a digit on ("engine oil 10w 40" → "engine oil",
    "bearing 6004 zz" → "bearing"; not "wd 40 spray": a word follows the code)."""
    out = [fam]
    if len(fam) > 1 and fam[-1].isdigit():
        out.append(fam[:-1])
    k = next((i for i in range(1, len(fam)) if any(c.isdigit() for c in fam[i])), len(fam))
    if k < len(fam) and all(any(c.isdigit() for c in t) or len(t) <= 3 for t in fam[k:]) and fam[:k] not in out:
        out.append(fam[:k])
    return out


def places_of(item) -> tuple[str, ...]:
    """The places ``item`` is stocked at: its ``stock`` places when it has them, else its ``location``."""
    stock = getattr(item, "stock", ()) or ()
    places = tuple(p for p, _ in stock)
    return places or ((item.location,) if item.location else ())
