"""A turn during which the live capture dropped audio (its ring buffer overflowed while the loop
was busy, e.g. with a partial decode on a starved CPU) is not acted on: what the recognizer got is
not what was said ("how many M8 bolts are in bin twelve" became "How many, m eight?" with a 100 ms
ring on two busy cores), so the box writes nothing and asks for the command again.

The real stages on a shared session; the frame source drops frames in the middle of the command
and counts them, as :class:`drivers.audio.capture.Capture` drops the oldest chunks and counts
``overflows`` (what ``edge run`` gives :func:`edge.loop.build.run_frames` as ``lost_audio``)."""
from __future__ import annotations

from drivers.audio import wav_frames
from edge.loop.build import run_frames
from edge.stages import reply
from tests.helpers import SESSIONS

WAV = SESSIONS / "log_drill_bits_used.wav"


def wake_index(stages, frames) -> int:
    stages.wake.flush()
    try:
        return next(i for i, f in enumerate(frames) if stages.wake.process(f))
    finally:
        stages.wake.flush()


def run(stages, settings, out, frames, drop: range) -> tuple[list, int]:
    """The session through the loop with the frames of ``drop`` dropped and counted; its events
    (turn states left out) and the count."""
    lost = [0]

    def ring():
        for i, f in enumerate(frames):
            if i in drop:
                lost[0] += 1
                continue
            yield f

    events: list = []
    stages.wake.flush()
    run_frames(ring(), stages, settings, out, events.append, lost_audio=lambda: lost[0])
    return [e for e in events if e.type != "state"], lost[0]


def test_a_turn_whose_capture_dropped_audio_writes_nothing_and_asks_again(rig_grammar, inventory_store, tmp_path):
    settings, stages = rig_grammar
    stages.store = inventory_store
    frames = list(wav_frames(WAV))
    at = wake_index(stages, frames)
    events, lost = run(stages, settings, tmp_path / "a", frames, range(at + 8, at + 14))  # ~0.5 s of the command
    assert lost == 6
    kinds = [e.type for e in events]
    assert "intent" not in kinds and inventory_store.records() == [], kinds
    replies = [e.text for e in events if e.type == "reply"]
    assert replies == [reply.text("missed_audio")], replies

    events, lost = run(stages, settings, tmp_path / "b", frames, range(0))  # nothing dropped: logged
    assert lost == 0 and [r.sku for r in inventory_store.records()] == ["DRL-BIT-6"], events
