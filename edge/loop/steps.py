"""The named steps of a turn: what one of them raises comes out as :class:`StageFailed` naming it,
so the loop reports the step (an ``error`` event) and goes on listening."""
from __future__ import annotations

import contextlib
from typing import Iterator

from edge.errors import EdgeError


class StageFailed(EdgeError):
    """A step of a turn raised: ``stage`` names the step (``asr``, ``nlu``, ``store``, ``tts``, or
    ``pipeline`` for the loop's own code), ``error`` is what it raised."""

    def __init__(self, stage: str, error: Exception):
        super().__init__(f"{type(error).__name__}: {error}")
        self.stage = stage
        self.error = error


@contextlib.contextmanager
def stage(name: str) -> Iterator[None]:
    """Run the block as the step ``name``: an exception from it comes out as :class:`StageFailed`."""
    try:
        yield
    except StageFailed:
        raise
    except Exception as e:
        raise StageFailed(name, e) from e
