"""Live mode: ``edge run`` without ``--input`` captures from the default microphone through
pyaudio and plays the reply on the default speaker.

There is no sound card here, so a private PulseAudio server with a null sink stands in: the test
plays a shared session into the sink, ``edge run`` captures from its monitor (the default source),
and its reply is played back into the same sink.

While it runs, ``edge status`` (another process) shows the service's capture counters, and the
same on ``/metrics``. The capture ring buffer is the default (256 chunks, ~5.9 s at 44.1 kHz): a
100 ms ring, as this test once set, drops audio in the middle of the command whenever a partial
decode outlasts it (on two busy cores it heard "how many M8 bolts are in bin twelve" as "How many,
m eight?" after 138 dropped chunks, and once answered about the drill bits); the box now asks again
when its capture dropped audio during a turn (tests/test_lost_audio.py), and dropping and counting
is case C04's test (tests/test_c04_slow_consumer.py).
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from edge.service.api.metrics import ServiceStateCollector
from tests.helpers import REPO, SESSION_WAKE, SESSIONS
from tests.live import lines_until, start_edge_run, stop


def test_edge_run_captures_from_the_microphone_and_answers(pulse_null_sink, tmp_path):
    cfg = tmp_path / "live.yaml"
    cfg.write_text(f"board: x86-dev\n{SESSION_WAKE}store: {{path: {tmp_path / 'edge.db'}}}\n")
    env = dict(pulse_null_sink, PYTHONUNBUFFERED="1")
    proc, out_q, err_q = start_edge_run(cfg, env, tmp_path / "out")
    try:
        lines_until(err_q, lambda l: l.startswith("listening on"), timeout=120)
        subprocess.run(["paplay", str(SESSIONS / "query_m8_bolts.wav")], env=env, check=True, timeout=60)
        lines = lines_until(out_q, lambda l: '"turn_end"' in l, timeout=60)
        status = subprocess.run([sys.executable, "-m", "edge.cli", "status", "--json", "--interval", "0",
                                 "--config", str(cfg)], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    finally:
        stop(proc, signal.SIGINT)
    events = [json.loads(l) for l in lines]
    by_type = {e["type"]: e for e in events}
    assert by_type["wake"]["wake_word"] == "hey_mycroft"
    assert by_type["intent"]["intent"] == "query_stock"
    assert by_type["intent"]["slots"]["sku"] == "BLT-M8-30"
    assert "140" in by_type["reply"]["text"]
    assert Path(by_type["reply"]["audio"]).stat().st_size > 1000
    assert proc.returncode == 0

    assert status.returncode == 0, status.stderr
    svc = json.loads(status.stdout)["service"]
    cap = svc["capture"]
    assert svc["running"] is True and svc["turns"] == 1 and svc["path"] == str(tmp_path / "service-state.json")
    assert cap["state"] == "ok" and cap["device"] == "default" and cap["lost_events"] == 0
    assert cap["overflows"] == 0  # nothing of the command was dropped (else the box would have asked again)
    reg = CollectorRegistry()
    reg.register(ServiceStateCollector(tmp_path / "service-state.json"))
    metrics = {x.name: x.value for f in text_string_to_metric_families(generate_latest(reg).decode()) for x in f.samples}
    assert metrics["edge_capture_overflows_total"] >= cap["overflows"]  # the service may have written since
    assert metrics["edge_service_up"] == 0.0  # it has stopped by now
