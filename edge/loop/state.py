"""The turn state: one enum, changed only by :class:`edge.loop.pipeline.Pipeline`.

Every change is an :class:`edge.events.StateChange` event (``state``, ``previous``: the values
below) on the event stream; the service's ``STATUS=`` line, its state file and ``edge status``
show the state from those events. The changes (:data:`TRANSITIONS`):

* listening → awake: a wake word;
* awake → transcribing: the command ended (endpoint); → listening: no speech;
* transcribing → understanding: a transcript; → listening: an empty one, or recognition failed;
* understanding → speaking: the reply; → listening: filler only, or a stage failed;
* speaking → listening: the reply was said; → follow_up: it was a question; → awake: a barge-in
  (a wake word over the reply, with echo cancellation);
* follow_up → transcribing: the answer ended; → listening: no answer within the window.

Wake words are ignored while the speaker plays whatever the state (the sentences of a turn that
failed half-way may still be playing while the state is back at listening).
"""
from __future__ import annotations

import enum


class TurnState(enum.Enum):
    LISTENING = "listening"  # waiting for a wake word
    AWAKE = "awake"  # a wake word was heard: endpointing the command (VAD)
    TRANSCRIBING = "transcribing"  # the command ended: the final transcript
    UNDERSTANDING = "understanding"  # intent, store, reply text (an LLM answer may already be spoken)
    SPEAKING = "speaking"  # the reply is synthesized and played
    FOLLOW_UP = "follow_up"  # the box asked a question: endpointing the answer, no wake word needed

    @property
    def status(self) -> str:
        """The words for systemd's ``STATUS=`` line (the service adds the device to ``listening``)."""
        return self.value.replace("_", "-")


S = TurnState
#: Every change the pipeline makes: ``{from: {to, ...}}``.
TRANSITIONS: dict[TurnState, frozenset[TurnState]] = {
    S.LISTENING: frozenset({S.AWAKE}),
    S.AWAKE: frozenset({S.TRANSCRIBING, S.LISTENING}),
    S.TRANSCRIBING: frozenset({S.UNDERSTANDING, S.LISTENING}),
    S.UNDERSTANDING: frozenset({S.SPEAKING, S.LISTENING}),
    S.SPEAKING: frozenset({S.LISTENING, S.FOLLOW_UP, S.AWAKE}),  # awake: a barge-in
    S.FOLLOW_UP: frozenset({S.TRANSCRIBING, S.LISTENING, S.AWAKE}),  # awake: a wake word instead of the answer
}
del S
