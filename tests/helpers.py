"""Shared test paths and a runner that drives the real pipeline over a recording."""
from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
AUDIO = SHARED / "audio"
SESSIONS = AUDIO / "sessions"
INVENTORY = SESSIONS / "inventory.csv"
EXPECTED = json.loads((SESSIONS / "expected.json").read_text())
#: the shared session recordings (and tests/synth.wake()) say "hey mycroft", which is not the default
#: wake word (okay_nabu): a test that plays them configures it, as settings overrides or config-file YAML
SESSION_WAKE_MODELS = [{"name": "hey_mycroft", "engine": "micro", "threshold": 0.95}]
SESSION_WAKE = "wake: {models: [{name: hey_mycroft, engine: micro, threshold: 0.95}]}\n"


def run_session(stages, settings, wav: Path, out_dir: Path, chunk: int = 4000) -> list:
    """Run the loop over ``wav`` with ``stages``; returns the emitted events in order, the turn-state
    changes (``state`` events, tested in test_loop_harness.py) left out."""
    from drivers.audio import wav_frames
    from edge.loop.build import run_frames

    events: list = []
    stages.wake.flush()  # a new stream: no feature-buffer carry-over from the previous file
    run_frames(wav_frames(wav, chunk=chunk), stages, settings, out_dir, events.append)
    return [e for e in events if e.type != "state"]


def of_type(events, t: str) -> list:
    return [e for e in events if e.type == t]


def heard(events) -> str:
    """The transcripts of ``events``, for an assertion message (what the recogniser heard)."""
    return "heard: " + " | ".join(repr(e.text) for e in events if e.type == "transcript")


@contextmanager
def csv_store(folder: Path, csv_text: str) -> Iterator:
    """A real SQLite store in ``folder`` with the inventory ``csv_text`` imported (closed after)."""
    from edge.stock.store import Store

    p = folder / "inv.csv"
    p.write_text(csv_text, encoding="utf-8")
    with Store(folder / "edge.db") as s:
        s.import_csv(p)
        yield s


def say(box, text: str, turn: str = "t1"):
    """``text`` understood by ``box``'s understanding and acted on in its store, as a turn does
    (``box``: ``(store, understanding)``); the :class:`edge.stages.dialog.Outcome`."""
    from edge.stages import dialog

    store, nlu = box
    return dialog.act(nlu.understand(text), store, text, turn)


def say_to_store(store, text: str, language: str = "en"):
    """:func:`say` with an understanding built from ``store``'s items now, in ``language``."""
    from edge.stages import dialog
    from edge.stages.nlu.understand import Understanding

    intent = Understanding(store.items(), language=language).understand(text)
    return dialog.act(intent, store, text, "t1", language=language)
