"""``edge wyoming`` as a user runs it (a child process driven by the wyoming package's own client),
the settings it refuses, and a handle turn decided by the governor on a hot board."""
from __future__ import annotations

import csv
import io
import json
import re
import signal
import subprocess
import sys
import threading

from wyoming.asr import Transcript
from wyoming.client import AsyncTcpClient
from wyoming.handle import Handled
from wyoming.info import Describe, Info

from edge.config import load_settings
from edge.governor.governor import Governor
from edge.loop.build import build_stages
from edge.service.wyoming.box import Box
from edge.service.wyoming.server import BackgroundServer
from edge.stock.store import Store
from tests.fakesys import rk3588
from tests.helpers import INVENTORY, REPO
from tests.test_cli import edge
from tests.test_wyoming import TIMEOUT_S, handle, run

# --------------------------------------------------------------------------------------------
# edge wyoming, as a user runs it


def test_edge_wyoming_refuses_a_lan_address_without_allow_lan(tmp_path):
    cfg = tmp_path / "edge.yaml"
    cfg.write_text(f"board: x86-dev\nstore: {{path: {tmp_path / 'edge.db'}}}\n")
    r = edge("wyoming", "--config", cfg, "--uri", "tcp://0.0.0.0:10700", check=False)
    assert r.returncode == 2
    assert "wyoming.allow_lan" in r.stderr and "no authentication" in r.stderr
    assert not (tmp_path / "edge.db").exists()  # refused before anything was opened or loaded
    r = edge("wyoming", "--config", cfg, "--uri", "http://127.0.0.1:10700", check=False)
    assert r.returncode == 2 and "tcp://HOST:PORT" in r.stderr


def test_edge_wyoming_serves_home_assistant_and_stops_on_sigterm(tmp_path):
    out = tmp_path / "out"
    cfg = tmp_path / "edge.yaml"
    cfg.write_text(f"board: x86-dev\nstore: {{path: {tmp_path / 'edge.db'}}}\noutput_dir: {out}\n"
                   f"llm: {{engine: none}}\n")
    edge("inventory", "import", INVENTORY, "--config", cfg)
    proc = subprocess.Popen([sys.executable, "-m", "edge.cli", "wyoming", "--config", cfg, "--uri",
                             "tcp://127.0.0.1:0", "--json"], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    lines, listening = [], threading.Event()
    port: list[int] = []

    def read_stderr():
        for line in proc.stderr:
            lines.append(line)
            m = re.search(r"Wyoming services .* on tcp://127\.0\.0\.1:(\d+)", line)
            if m:
                port.append(int(m.group(1)))
                listening.set()

    threading.Thread(target=read_stderr, daemon=True).start()
    try:
        assert listening.wait(300), "".join(lines)
        c = AsyncTcpClient("127.0.0.1", port[0], connect_timeout=10, read_timeout=TIMEOUT_S)

        async def talk():
            async with c:
                await c.write_event(Describe().event())
                info = await c.read_event()
                await c.write_event(Transcript("log twenty boxes of nitrile gloves received").event())
                return info, await c.read_event()

        info, reply = run(talk())
        assert Info.from_event(info).handle and reply.type == "handled" and "32" in reply.data["text"]
        proc.send_signal(signal.SIGTERM)
        stdout, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 0, "".join(lines)
    events = [json.loads(line) for line in stdout.splitlines()]
    assert [e["type"] for e in events] == ["intent", "reply", "turn_end"]
    assert events[0]["slots"]["sku"] == "GLV-NIT-L" and events[1]["text"] == reply.data["text"]
    kept = [json.loads(line) for line in (out / "wyoming-events.jsonl").read_text().splitlines()]
    assert kept == events
    assert any("turn " + events[0]["turn_id"] in line for line in lines)  # and logged, as the voice loop logs
    r = edge("records", "export", "--csv", "--config", cfg)  # durable in the store the config names
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [(row["sku"], row["delta"], row["turn_id"]) for row in rows] == [("GLV-NIT-L", "20", events[0]["turn_id"])]


# --------------------------------------------------------------------------------------------
# the governor decides a handle turn as it decides a voice turn


def test_a_hot_board_answers_handle_from_the_grammar_and_says_it_is_cooling(tmp_path):
    fs = rk3588(tmp_path / "sys", temp_c=45.0)
    settings = load_settings(board="rk3588-rock5b", overrides={
        "store": {"path": str(tmp_path / "x.db")}, "output_dir": str(tmp_path),
        "board": {"sensors": fs.sensors_settings()}, "governor": {"power_mode": "performance", "dwell_s": 0},
        "llm": {"engine": "llamacpp", "model": "smollm2-135m-instruct-q4_1", "n_ctx": 2048},
        "wyoming": {"uri": "tcp://127.0.0.1:0"}})
    store = Store(tmp_path / "e.db")
    store.import_csv(INVENTORY)
    stages = build_stages(settings, store, governor=Governor(settings))
    box = Box(settings, stages)
    bg = BackgroundServer(box, settings).start()
    try:
        cool = Handled.from_event(handle(bg.server, "tell me a short joke about hammers"))
        fs.set_all_temps(90.0)  # above the 85 °C trip
        hot = handle(bg.server, "tell me a short joke about hammers")
        stock = handle(bg.server, "how many M8 bolts are in bin twelve")  # commands still work
    finally:
        bg.stop()
        box.close()
        stages.tts.close()
    assert cool.text and "cooling down" not in cool.text  # the LLM's answer
    assert hot.type == "handled" and "cooling down" in hot.data["text"]
    assert stock.type == "handled" and "140" in stock.data["text"]
