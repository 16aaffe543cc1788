"""One lock per stage shared by the voice loop and the Wyoming server of one process.

The live service loads one recognizer, one speech engine, one store and one Understanding; with
``wyoming:`` configured its Wyoming server uses the same objects. None of them may be used by two
threads at once (a recognizer's utterance state, the store's one SQLite connection, the LLM's
context), so each has a :class:`StageLock`: a Wyoming request takes the locks of the stages it
uses, the voice loop's turn holds all of them from the wake word until it is back to listening.
Locks are always taken in :data:`ORDER`, so two holders never wait for each other in a circle.
"""
from __future__ import annotations

import contextlib
import logging
import threading
from collections import deque
from typing import Iterator

log = logging.getLogger("edge.service.wyoming")

#: The shared stages, in the order their locks are taken.
ORDER = ("asr", "understanding", "store", "tts")


class StageLock:
    """The lock of one stage, with its own counters: ``acquired`` (times taken), ``waited``
    (times a taker found it held and waited) and ``history``, the last 256 ``(who, what)`` steps
    (``what``: ``"waits"``, ``"takes"``, ``"releases"``), in the order they happened."""

    def __init__(self, name: str):
        self.name = name
        self._lock = threading.Lock()
        self._meta = threading.Lock()
        self.holder: str | None = None
        self.acquired = 0
        self.waited = 0
        self.history: deque[tuple[str, str]] = deque(maxlen=256)

    def acquire(self, who: str) -> None:
        """Take the lock for ``who`` (``"voice"``, ``"wyoming"``), waiting while another holds it."""
        if not self._lock.acquire(blocking=False):
            with self._meta:
                self.waited += 1
                holder = self.holder
                self.history.append((who, "waits"))
            log.info("stage %s: %s waits for %s", self.name, who, holder or "its holder")
            self._lock.acquire()
        with self._meta:
            self.holder = who
            self.acquired += 1
            self.history.append((who, "takes"))

    def release(self) -> None:
        """Give the lock back."""
        with self._meta:
            self.history.append((self.holder or "?", "releases"))
            self.holder = None
        self._lock.release()

    def counters(self) -> dict:
        """``{name, holder, acquired, waited}`` now."""
        with self._meta:
            return {"name": self.name, "holder": self.holder, "acquired": self.acquired, "waited": self.waited}


class StageLocks:
    """The :class:`StageLock` of each stage in :data:`ORDER`; ``locks[name]`` is one of them."""

    def __init__(self):
        self.locks = {name: StageLock(name) for name in ORDER}
        self._voice: list[StageLock] = []

    def __getitem__(self, name: str) -> StageLock:
        return self.locks[name]

    @contextlib.contextmanager
    def hold(self, who: str, names: tuple[str, ...]) -> Iterator[None]:
        """For the block, the locks of ``names`` (taken in :data:`ORDER`, given back in reverse).

        Raises:
            KeyError: a name not in :data:`ORDER`.
        """
        taken = []
        try:
            for lock in sorted((self.locks[n] for n in names), key=lambda lk: ORDER.index(lk.name)):
                lock.acquire(who)
                taken.append(lock)
            yield
        finally:
            for lock in reversed(taken):
                lock.release()

    def begin_turn(self, who: str = "voice") -> None:
        """Take every lock for a voice turn (no-op while the turn holds them already)."""
        if self._voice:
            return
        for name in ORDER:
            self.locks[name].acquire(who)
            self._voice.append(self.locks[name])

    def end_turn(self) -> None:
        """Give back what :meth:`begin_turn` took (no-op when nothing is held)."""
        while self._voice:
            self._voice.pop().release()
