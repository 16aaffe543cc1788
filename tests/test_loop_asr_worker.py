"""The voice loop with its recognizer in a worker process (``asr.worker.loop: process``): the partial
re-decodes and the speculative decode during the silence go through the pipe (the streaming state
lives in the worker), the transcripts and intents are those of the recognizer in the loop's own
process, and a worker over its memory budget is recycled between utterances, no utterance dropped.

Real stages (wake word, Silero VAD, whisper tiny.en, grammar) on a shared session recording."""
from __future__ import annotations

import pytest

from edge.loop.build import build_recognizer
from edge.stages.asr.worker import AsrWorker
from edge.stock.store import Store
from tests.helpers import INVENTORY, SESSIONS, heard, of_type, run_session

WAV = SESSIONS / "log_washers_numbers.wav"  # long enough for partials (tests/test_semantic_sessions.py)


@pytest.fixture
def run(rig_grammar, tmp_path_factory):
    """``run(asr)`` → the events of the session with ``asr`` as the loop's recognizer, from a fresh store."""
    settings, stages = rig_grammar

    def go(asr):
        d = tmp_path_factory.mktemp("loop-worker")
        saved, stages.asr = stages.asr, asr
        stages.store = Store(d / "edge.db")
        stages.store.import_csv(INVENTORY)
        try:
            return run_session(stages, settings, WAV, d)
        finally:
            stages.store.close()
            stages.asr = saved

    return go


def said(events) -> tuple:
    return ([t.text for t in of_type(events, "transcript")],
            [(i.intent, i.slots["sku"], i.slots["quantity"]) for i in of_type(events, "intent")])


def test_the_loop_through_a_worker_hears_as_inline_and_recycles_between_utterances(rig_grammar, run):
    settings, stages = rig_grammar
    worker = build_recognizer(settings, "process")
    assert isinstance(worker, AsrWorker)
    try:
        inline, through = run(stages.asr), run(worker)
        assert said(through) == said(inline) and said(inline)[1], (heard(inline), heard(through))
        for events in (inline, through):
            assert of_type(events, "partial") and all(p.engine == "whisper" for p in of_type(events, "partial"))
            assert [e.reason for e in of_type(events, "endpoint")] == ["complete"]  # the speculation's verdict
        assert worker.calls == 1 and worker.recycles == 0
        # over its budget from now on: every utterance's worker is replaced once its transcript is out
        worker.watch.budget_bytes, worker.watch.warmup = 1, 0
        pids = [worker.pid]
        for k in (1, 2):
            events = run(worker)  # the second on a fresh worker: vocabulary, partials, speculation
            pids.append(worker.pid)
            assert said(events) == said(inline) and of_type(events, "partial"), heard(events)
            assert not of_type(events, "error") and worker.recycles == k, worker.reasons
        assert len(set(pids)) == 3 and "over its budget" in worker.reasons[0]
        assert worker.calls == 3 and worker.restarts == 0  # every utterance answered: none dropped
    finally:
        worker.close()
