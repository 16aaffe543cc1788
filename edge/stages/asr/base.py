"""The recognizer interface every speech engine implements."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from edge.models.manifest import resolve


@dataclass(frozen=True)
class Recognition:
    """A final transcript: ``text``; ``confidence`` 0..1 or None; ``audio_ms`` of speech decoded;
    ``decode_ms`` wall-clock time of the final decode; ``window_s``: the encoder window it was
    decoded in, s (None: an engine without one, or Whisper's own 30 s)."""

    text: str
    confidence: float | None
    audio_ms: float
    decode_ms: float
    window_s: float | None = None

    @property
    def real_time_factor(self) -> float:
        """decode time ÷ audio duration (< 1 is faster than real time)."""
        return self.decode_ms / self.audio_ms if self.audio_ms else 0.0


class Recognizer(Protocol):
    """One utterance at a time: ``start()``, ``accept(frame)`` per 80 ms frame ``(1280,)`` int16
    16 kHz (returns a new partial transcript or None), ``finish()`` → :class:`Recognition`."""

    name: str

    def start(self) -> None: ...

    def accept(self, frame: np.ndarray) -> str | None: ...

    def finish(self) -> Recognition: ...

    def speculate(self) -> Recognition:
        """The transcript of the audio accepted so far, as :meth:`finish` would give it, without
        ending the utterance (the voice loop decodes when silence starts); :meth:`finish` reuses it
        when no audio came after."""

    def recheck(self) -> Recognition | None:
        """The last decode (:meth:`speculate` or :meth:`finish`) done again in the engine's full
        window when it was decoded in a shorter one (``window_s`` set), replacing it (a later
        :meth:`finish` of the same audio returns this one); None when there is nothing to redo."""

    def set_partials(self, interval_ms: int, cpu_fraction: float) -> None:
        """Partial transcripts for the next utterance (the next :meth:`start`): at most one
        re-decode per ``interval_ms`` of audio, taking at most ``cpu_fraction`` (0..1) of the audio
        time; 0 = none (also without a call). An engine with native streaming partials (vosk)
        ignores it."""

    def set_vocabulary(self, phrases: list[str]) -> None:
        """Bias recognition toward the site's words (item names, aliases, locations, commands)."""

    def expect(self, answers: list[str] | None) -> None:
        """The next utterances answer the box's question, which offered ``answers`` ("20
        millimetre", "bin 118", "never mind"); None: no question any more."""


COMMAND_WORDS = ("undo that", "how many", "do we have", "log", "used", "add", "received", "took", "remove")
#: Units of measure as said, by the inventory's unit: with names full of "1.5 mm" a prompt without
#: them turns "two and a half metres" into "2.5 mm". Count units ("boxes") need no help.
UNIT_WORDS = {"m": "metres", "l": "litres", "kg": "kilograms", "g": "grams", "cm": "centimetres", "ml": "millilitres"}


def vocabulary(items, first: Iterable[str] = ()) -> list[str]:
    """Phrases to bias recognition toward, from the inventory (:class:`edge.stock.store.Item` list):
    the command words of the grammar path, then item names, aliases and locations.

    ``first``: SKUs whose phrases come before the rest, in that order (the items this box used most
    or most recently): a recognizer with a bounded prompt keeps the first phrases
    (:func:`edge.stages.asr.bias.build_prompt`)."""
    items = list(items)
    by_sku = {it.sku: it for it in items}
    front = [by_sku[s] for s in dict.fromkeys(first) if s in by_sku]
    seen: dict[str, None] = {}
    for it in front + items:
        for p in (it.item, *it.aliases, it.location):
            if p and p.strip():
                seen.setdefault(p.strip(), None)
    return list(COMMAND_WORDS) + list(seen)


def model_dir(model: str) -> Path:
    """A manifest id (e.g. ``whisper-tiny-en``) or a directory → the model directory.

    Raises:
        FileNotFoundError: neither an existing directory nor an installed manifest model.
    """
    p = Path(model).expanduser()
    if p.is_dir():
        return p
    return resolve(model)
