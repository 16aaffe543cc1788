"""What the voice loop needs of each stage: one small protocol per stage, and :class:`Stages`.

The real stages (:mod:`edge.stages`) satisfy these structurally; so do the stand-ins of the fast
test harness (``tests/standins.py``). Frames are ``(1280,)`` int16 at 16 kHz (80 ms); times
``t_ms`` are ms of audio from the start of the stream.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol

import numpy as np

from edge.stages.asr.base import Recognizer

if TYPE_CHECKING:
    from edge.governor.thermal import Limits
    from edge.llm.base import LlmEngine
    from edge.stages.nlu.types import Intent
    from edge.stages.wake import Detection
    from edge.stock.store import Item, Record


class WakeDetector(Protocol):
    """Scores every frame (:class:`edge.stages.wake.WakeWord`)."""

    def process(self, frame: np.ndarray) -> Detection | None:
        """A detection when a wake word ends in this frame, else None."""

    def flush(self) -> None:
        """Forget the audio so far (a new stream starts)."""


class VoiceActivity(Protocol):
    """Speech probability per frame (:class:`edge.stages.vad.SileroVad`)."""

    def probability(self, frame: np.ndarray) -> float:
        """0..1."""

    def reset(self) -> None:
        """Forget the state (a new utterance starts)."""


class Understander(Protocol):
    """Text to intent (:class:`edge.stages.nlu.understand.Understanding`). The governor sets
    ``withheld`` (the notice said instead of an LLM answer, or None) and ``max_tokens``."""

    items: list[Item]
    llm: LlmEngine | None
    withheld: str | None
    max_tokens: int

    def rebuild(self, items: list[Item]) -> None:
        """The inventory changed: rebuild the grammar and the LLM prompt."""

    def completeness(self, text: str) -> tuple[str, Intent | None]:
        """``(verdict, grammar intent or None)``: ``complete``, ``incomplete`` or ``unclear``
        (:meth:`edge.stages.nlu.grammar.Grammar.completeness`); never calls the LLM."""

    def understand(self, text: str, confidence: float | None = None,
                   on_sentence: Callable[[str], None] | None = None, llm: bool = True) -> Intent | None:
        """The intent of ``text``, or None when it is only filler (``llm=False``: also what the
        grammar does not understand; the LLM is not called); ``on_sentence`` gets each
        sentence of an LLM answer as soon as it is complete."""


class Inventory(Protocol):
    """The store as the turn uses it (:class:`edge.stock.store.Store`; :mod:`edge.stages.dialog`
    acts on it)."""

    def items(self) -> list[Item]: ...

    def items_version(self) -> int:
        """Changes whenever the item list does (one read)."""

    def records(self, last: int | None = None) -> list[Record]:
        """The history, or its ``last`` records, oldest first."""

    def get(self, sku: str) -> Item | None: ...

    def log(self, sku: str, delta: int | float, utterance: str, turn_id: str,
            location: str | None = None) -> tuple[Record, Item]: ...

    def undo(self, utterance: str, turn_id: str, sku: str | None = None) -> tuple[Record, Item] | None: ...

    def site_offline(self) -> tuple[str, int, str] | None:
        """``(since, records waiting, why the sync stopped or "")`` when this box is on a site and
        cannot reach it or its sync stopped, else None."""


class Documents(Protocol):
    """The site's documents (:class:`edge.stages.docs.desk.DocsDesk`), or None when none are indexed."""

    max_tokens: int  # a generated answer's budget in tokens, set per turn by the governor

    def finds(self, text: str) -> bool:
        """The documents answer ``text`` above the decline threshold."""

    def answer(self, text: str) -> str:
        """The spoken answer with its source, or that the documents do not say."""


class Synthesizer(Protocol):
    """Text to a WAV file (:class:`edge.stages.tts.engine.WatchdogTts`)."""

    def synthesize(self, text: str, path: str | Path) -> Path:
        """Write ``text`` spoken into ``path``; returns the path. Raises on failure."""

    def close(self) -> None: ...


class Speaker(Protocol):
    """Plays replies (:mod:`edge.stages.tts.speaker`). ``realtime``: it plays in wall-clock time
    while the loop may be busy with a turn (a device), not in the input's audio time."""

    realtime: bool

    def start(self, wav: Path, t_ms: int) -> None:
        """Stop what plays and play ``wav``."""

    def queue(self, wav: Path, t_ms: int) -> None:
        """Play ``wav`` after what is playing."""

    def busy(self, t_ms: int) -> bool:
        """Whether the box is speaking at ``t_ms``."""

    def stop(self) -> None:
        """Stop playing and drop the queue (a barge-in)."""


class ResourceGovernor(Protocol):
    """What the LLM may do now (:class:`edge.governor.governor.Governor`)."""

    def sample(self) -> object:
        """Read the board's signals (temperatures, memory) and update the level."""

    def limits(self) -> Limits: ...

    def cpu_sets(self) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """``(audio_cpus, turn_cpus)`` on a big.LITTLE board, else None."""


@dataclass
class Stages:
    """The stages, in the order a turn passes them. ``governor``: thermal level and memory → what
    the LLM may do (None: no limits)."""

    wake: WakeDetector
    vad: VoiceActivity
    asr: Recognizer
    understanding: Understander
    store: Inventory
    tts: Synthesizer
    governor: ResourceGovernor | None = None
    docs: Documents | None = None


def cpu_sets(governor: ResourceGovernor | None) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None]:
    """``(audio_cpus, turn_cpus)`` from the governor on a big.LITTLE board, else ``(None, None)``."""
    sets = governor.cpu_sets() if governor is not None else None
    return sets if sets else (None, None)
