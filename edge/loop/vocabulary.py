"""What the loop's recognizer and understanding know of the inventory, kept in step with it turn by turn.

At each wake word (:meth:`Vocabulary.refresh`): when the inventory's items changed (an import by
another process), the grammar and the LLM shortlist are rebuilt; when they or this box's most used
items changed, the recognizer's biasing phrases. One read of the store's item version per turn
(:class:`edge.loop.inventory.InventoryWatch`), not the item list. After a turn that asked a question
(:meth:`Vocabulary.bias_answer`), the recognizer is biased toward what answers it until the next turn.
A stage failing here is reported; the turn goes on with what it had.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable

from edge.loop.inventory import InventoryWatch, same_items
from edge.loop.steps import StageFailed, stage
from edge.stages import dialog

if TYPE_CHECKING:
    from edge.loop.stages import Stages

log = logging.getLogger("edge.loop.pipeline")


class Vocabulary:
    """The recognizer's phrases and the understanding's items of one loop.

    Args:
        stages: the loop's stages (``store``, ``understanding``, ``asr``).
        report: called with a :class:`~edge.loop.steps.StageFailed` when a stage fails here.

    ``rebuilds`` counts the turns that rebuilt the grammar after the inventory changed; ``bias``
    (``asr.bias``) False: the recognizer is never given phrases, only the grammar follows the inventory.
    """

    def __init__(self, stages: Stages, report: Callable[[StageFailed], None]):
        self.s = stages
        self.report = report
        self.rebuilds = 0
        self.bias = True
        self._watch = InventoryWatch(stages.store)
        self._phrases: list[str] | None = None  # the recognizer's phrases as last set from the inventory
        # the recognizer is biased toward the pending question's answers; True at first, so the
        # first turn clears answers another loop over the same recognizer left behind
        self._answer_bias = True

    def refresh(self) -> None:
        """At a wake word: rebuild what changed in the inventory since the last turn (see the module)."""
        try:
            with stage("store"):
                items = self._watch.changed_items()
                if items is not None and same_items(items, self.s.understanding.items):
                    items = None  # the version moved but the names did not (e.g. a first look)
                phrases = self._watch.vocabulary_if_changed(items is not None) if self.bias else None
            if phrases is not None:
                self._phrases = phrases
            elif self._answer_bias:  # a question's answers are not the next command's words
                phrases = self._phrases
            if self._answer_bias:
                with stage("asr"):
                    self.s.asr.expect(None)
            self._answer_bias = False
            if items is not None:
                with stage("nlu"):
                    self.s.understanding.rebuild(items)
            if phrases is not None:
                with stage("asr"):
                    self.s.asr.set_vocabulary(phrases)
        except StageFailed as e:
            self.report(e)
            return
        if items is not None:
            self.rebuilds += 1
            log.info("inventory changed: grammar, LLM prompt and recognition vocabulary rebuilt (%d items)", len(items))

    def bias_answer(self, pending: dialog.Pending | None) -> None:
        """While the box waits for the answer to its question (``pending``), the recognizer is biased
        toward what answers it (the options it read out, "80" for "eighty"), then back to the
        inventory's phrases. A recognizer failing here is reported; the answer is still heard."""
        if not self.bias or self._phrases is None or (pending is None and not self._answer_bias):
            return
        phrases, answers = self._phrases, None
        if pending is not None:
            answers = dialog.answer_phrases(pending)
            phrases = answers + phrases
        try:
            with stage("asr"):
                self.s.asr.set_vocabulary(phrases)
                self.s.asr.expect(answers if pending is not None and dialog.offers(pending) else None)
        except StageFailed as e:
            self.report(e)
        self._answer_bias = pending is not None
