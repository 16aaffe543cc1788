"""C21 false wakes from a TV: TV-like audio (several voices over each other and music, built from the
shared recordings by tests/tvmix.py) at -10 dBFS with 20 real wake words mixed in.

Here (the short variant; bench/tv_false_wakes.py runs the hour): 2.5 minutes of TV, 20 real
"hey mycroft" recordings 10 dB over it (at 6 dB recall was 80 % here), the configured wake models at their configured thresholds.
Right behaviour checked: recall >= 90 % and false accepts counted and bounded (both printed);
thresholds change without reloading anything (:meth:`WakeWord.set_thresholds`, what a config reload
calls) and a raised threshold removes a false accept; a false wake followed by endless TV talk is
closed by the hard cap and costs no LLM call and writes no record (a short "too long" answer).
"Stop" said 1 s into a reply ends it (within 500 ms of audio after the word) and the next turn works;
``kill -HUP`` makes the running service read its wake thresholds again (a bad edit changes nothing).
"""
from __future__ import annotations

import numpy as np
import pytest

from edge.stages.wake import WakeWord
from tests.helpers import of_type, run_session
from tests.synth import session
from tests.tvmix import RATE, tv, with_wakes

TV_S = 150.0
WAKES = 20
SNR_DB = 10.0  # the wake word's voiced part over the TV's level: a person near the box, the TV across the room


def detections(wake: WakeWord, audio: np.ndarray) -> list[tuple[str, int, float]]:
    wake.flush()
    out = []
    for i in range(0, len(audio) - 1279, 1280):
        d = wake.process(audio[i:i + 1280])
        if d is not None:
            out.append((d.wake_word, i + 1280, d.score))
    return out


def matched(dets, where) -> tuple[set[int], list[tuple[str, int, float]]]:
    """(indices of the mixed-in wake words detected, false accepts): a detection counts for a wake
    word of that name ending up to 0.5 s before or 1.5 s after the detection frame."""
    hits, false = set(), []
    for name, end, score in dets:
        m = [j for j, (n, e) in enumerate(where) if n == name and -RATE // 2 <= end - e <= int(1.5 * RATE)]
        if m:
            hits.add(m[0])
        else:
            false.append((name, end, score))
    return hits, false


@pytest.fixture(scope="module")
def tv_mix(rig_grammar):
    """The mix, where its wake words end, and the detections at the configured thresholds."""
    base = tv(TV_S)
    audio, where = with_wakes(base, WAKES, snr_db=SNR_DB, names=("hey_mycroft",))
    return audio, where, detections(rig_grammar[1].wake, audio)


def test_recall_and_false_accepts_on_tv_audio(tv_mix):
    audio, where, dets = tv_mix
    hits, false = matched(dets, where)
    recall = len(hits) / WAKES
    per_hour = len(false) * 3600 / TV_S
    print(f"\nTV mix {TV_S:.0f} s: recall {len(hits)}/{WAKES} = {recall:.0%}, false accepts {len(false)} "
          f"({per_hour:.0f} per hour) {[(n, round(e / RATE, 1), round(s, 2)) for n, e, s in false]}")
    assert recall >= 0.9
    assert len(false) <= 1  # in 2.5 minutes; the hour-long figure is the bench's


def test_thresholds_change_without_a_reload_and_a_raised_one_removes_a_false_accept(rig_grammar, tv_mix):
    settings, stages = rig_grammar
    wake = stages.wake
    audio, where, dets = tv_mix
    configured = [(m.name, m.threshold) for m in settings.wake.models]
    model = wake.engine_for(configured[0][0])  # the rig's: microWakeWord
    _, false = matched(dets, where)
    try:
        if false:  # raise the threshold of the model that fired falsely just above its score
            name, end, score = max(false, key=lambda f: f[2])
            off = max(0, end - 10 * RATE)
            part = audio[off: end + 5 * RATE]

            def fires_there() -> bool:  # that model, at that false accept's frame (± 0.5 s)
                return any(d[0] == name and abs(off + d[1] - end) <= RATE // 2 for d in detections(wake, part))

            assert fires_there()  # it fires on this part alone too
            wake.set_thresholds([(name, min(0.99, score + 0.05))])
            assert not fires_there()
        wake.set_thresholds([(n, 1.01) for n, _ in configured])  # nothing can reach it
        assert detections(wake, audio[: 15 * RATE]) == []
        assert wake.engine_for(configured[0][0]) is model  # the same loaded model: no reload
    finally:
        wake.set_thresholds(configured)
    with pytest.raises(ValueError, match="needs a restart"):
        wake.set_thresholds([("hey_nobody", 0.5)])


def test_a_wake_followed_by_endless_tv_talk_costs_no_llm_call_and_no_record(rig_llm, inventory_store, tmp_path):
    settings, stages = rig_llm
    stages.store = inventory_store
    before = len(inventory_store.records())
    talk = tv(16.0, seed=5, level_db=-16.0).astype(np.int16)
    wav = session(tmp_path / "tv.wav", 0.5, "<wake>", talk, 1.0)
    events = run_session(stages, settings, wav, tmp_path)
    ends = of_type(events, "endpoint")
    assert [e.reason for e in ends] == ["max_length"], events  # the TV never pauses
    assert [i.source for i in of_type(events, "intent")] == ["grammar"], events  # no LLM call
    assert "too long" in of_type(events, "reply")[0].text
    assert len(inventory_store.records()) == before  # nothing written


def _run(stages, settings, wav, out):
    from drivers.audio import wav_frames
    from edge.loop.build import run_frames
    from edge.stages.tts.speaker import TimelineSpeaker

    events: list = []
    stages.wake.flush()
    speaker = TimelineSpeaker()
    p = run_frames(wav_frames(wav), stages, settings, out, events.append, speaker=speaker)
    return p, speaker, events


def test_stop_said_during_a_reply_ends_it_and_the_box_listens(rig_grammar, inventory_store, tmp_path):
    from drivers.audio import read_wav, write_wav
    from tests.helpers import SESSIONS
    from tests.synth import speech, to16k

    settings, stages = rig_grammar
    stages.store = inventory_store
    data, rate = read_wav(SESSIONS / "query_m8_bolts.wav")
    query = to16k(data, rate)
    base = np.concatenate([query, np.zeros(4 * RATE, np.int16)])
    first = tmp_path / "first"
    first.mkdir()
    _, speaker, events = _run(stages, settings, write_wav(tmp_path / "plain.wav", base, RATE), first)
    (start, reply_wav), = speaker.played
    said = of_type(events, "reply")[0]
    reply_ms = speaker._until_ms - start
    assert reply_ms > 2000, reply_ms  # long enough to be stopped 1 s in
    stop = speech("stop")
    at = (start + 1000) * RATE // 1000
    mixed = base.copy()
    mixed[at:at + len(stop)] = np.clip(mixed[at:at + len(stop)].astype(np.int32) + stop, -32768, 32767)
    # and a real wake word with a command afterwards: the box listens again
    wav = write_wav(tmp_path / "stop.wav", np.concatenate([mixed, query]), RATE)
    second = tmp_path / "second"
    second.mkdir()
    p, speaker, events = _run(stages, settings, wav, second)
    assert p.stops == 1 and speaker.stopped >= 1, (p.stops, speaker.stopped)
    voiced_end_ms = 1000 * (at + np.nonzero(np.abs(stop) > 328)[0][-1]) / RATE
    back = [e for e in events if e.type == "state" and e.previous == "speaking" and e.state == "listening"]
    assert back and back[0].t_ms - voiced_end_ms <= 500, (back[:1], voiced_end_ms)  # audio time
    assert back[0].t_ms < start + reply_ms  # before the reply would have ended
    intents = of_type(events, "intent")
    assert [i.intent for i in intents] == ["query_stock", "query_stock"], events  # the next turn works
    assert said.text == of_type(events, "reply")[0].text


def test_thresholds_change_on_a_config_reload_of_the_running_service(pulse_null_sink, tmp_path):
    """``kill -HUP`` (the unit's ExecReload): the live service reads the wake thresholds again."""
    import json
    import signal
    import subprocess

    from tests.helpers import SESSIONS
    from tests.live import lines_until, start_edge_run, stop

    cfg = tmp_path / "live.yaml"

    def write(threshold: float) -> None:
        cfg.write_text(f"board: x86-dev\nstore: {{path: {tmp_path / 'edge.db'}}}\nllm: {{engine: none}}\n"
                       f"wake: {{models: [{{name: hey_mycroft, threshold: {threshold}}}]}}\n")

    def say_query() -> None:
        subprocess.run(["paplay", str(SESSIONS / "query_m8_bolts.wav")], env=env, check=True, timeout=60)

    write(0.5)
    env = dict(pulse_null_sink, PYTHONUNBUFFERED="1")
    proc, out_q, err_q = start_edge_run(cfg, env, tmp_path / "out")
    try:
        lines_until(err_q, lambda l: l.startswith("listening on"), timeout=120)
        pid = proc.pid
        write(0.7)
        proc.send_signal(signal.SIGHUP)
        lines_until(err_q, lambda l: "reloaded: wake thresholds hey_mycroft 0.7" in l, timeout=60)
        say_query()
        lines = lines_until(out_q, lambda l: '"turn_end"' in l, timeout=60)
        wakes = [json.loads(x) for x in lines if '"wake"' in x]
        assert len(wakes) == 1 and wakes[0]["score"] >= 0.7, lines  # the running service, new threshold
        cfg.write_text(cfg.read_text().replace("threshold: 0.7", "threshold: 2"))  # a bad edit
        proc.send_signal(signal.SIGHUP)
        lines_until(err_q, lambda l: "reload refused, nothing changed" in l, timeout=60)
        assert proc.poll() is None and proc.pid == pid  # still running, with the thresholds it had
    finally:
        stop(proc, signal.SIGINT)
