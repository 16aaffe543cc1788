"""``edge bench`` (issue 8): one real run of the command on the small default model, plus the
pieces it is built from (throttle flag, telemetry on fake sysfs trees, procfs parsing).

The bench run uses the real SmolLM2-135M GGUF, the real voice-loop models over two of the shared
sessions, and a fake RK3588 sysfs tree (tests/fakesys.py) for temperature and power, so that the
"where a sensor exists" branch is exercised on this x86 machine too. It checks the result file's
structure and that the figures are positive, never their size (no wall-clock asserts).
"""
from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from drivers.sensors.procinfo import parse_cpu_model, parse_status_kib, peak_rss_bytes
from edge.config import BoardSettings
from edge.ops.bench.machine import Telemetry
from edge.ops.bench.stats import THROTTLE_DROP, halves, throttle_check
from tests.fakesys import rk3588, x86_dev
from tests.helpers import REPO, SESSION_WAKE_MODELS, SESSIONS

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
EDGE = [sys.executable, "-m", "edge.cli"]


def _edge(*args, timeout=900):
    return subprocess.run([*EDGE, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory):
    """``edge bench --runs 4`` over two sessions (one grammar-path, one LLM-path) with a fake RK3588
    sensor tree at 45 °C and a 4.2 W power channel; returns (stdout JSON, result file, out dir, root)."""
    tmp = tmp_path_factory.mktemp("bench")
    sessions = tmp / "sessions"
    sessions.mkdir()
    for name in ("query_m8_bolts.wav", "chitchat_joke.wav", "inventory.csv"):
        (sessions / name).symlink_to(SESSIONS / name)
    fs = rk3588(tmp / "sys", temp_c=45.0, power_w=4.2)
    cfg = tmp / "bench.yaml"
    cfg.write_text(yaml.safe_dump({"board": {"name": "fake-rk3588", "sensors": fs.sensors_settings()},
                                   "llm": {"max_tokens": 16, "threads": 1},
                                   "wake": {"models": SESSION_WAKE_MODELS}}))  # short LLM-path answers in the loop
    # one LLM thread: two llama.cpp threads on a busy 2-core machine meet at a spinning barrier
    # after every step and run many times slower (the governor plans 1 under CPU pressure too)
    out = tmp / "results"
    p = _edge("bench", "--runs", "4", "--max-tokens", "8", "--sessions", str(sessions), "--llm-turns", "1",
              "--out", str(out), "--config", str(cfg), "--json")
    assert p.returncode == 0, p.stderr[-3000:]
    files = sorted(out.glob("*.json"))
    assert len(files) == 1, files
    return json.loads(p.stdout), json.loads(files[0].read_text()), files[0], out


def _positive(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0


def test_result_file_is_named_and_carries_machine_model_commit(bench_run):
    stdout, res, path, _ = bench_run
    assert stdout["llm"]["ours"]["runs"] == res["llm"]["ours"]["runs"]
    assert re.fullmatch(r"bench-\d{4}-\d\d-\d\dT\d{4}-x86_64-.+-smollm2-135m-instruct-q4_1\.json", path.name), path.name
    m = res["machine"]
    assert m["platform"] and m["machine"] and m["cpu_model"]
    assert _positive(m["cores"]) and _positive(m["ram_mib"])
    gguf = Path(res["model"]["path"])
    assert res["model"]["id"] == "smollm2-135m-instruct-q4_1"
    assert res["model"]["bytes"] == gguf.stat().st_size
    assert re.fullmatch(r"[0-9a-f]{16}", res["model"]["sha256_prefix"])
    assert re.fullmatch(r"[0-9a-f]{40}", res["commit"])  # the repository is a git checkout
    assert isinstance(res["dirty"], bool)
    s = res["settings"]
    assert (s["runs"], s["max_tokens"], s["loop"], s["llm_turns"]) == (4, 8, True, 1)
    assert s["runs_below_issue_minimum"] is True


def test_llm_figures_for_both_sides_and_ratios(bench_run):
    _, res, _, _ = bench_run
    llm = res["llm"]
    for side in ("ours", "plain"):
        runs = llm[side]["runs"]
        assert [r["run"] for r in runs] == [0, 1, 2, 3]
        for r in runs:
            assert _positive(r["ttft_ms"]) and _positive(r["decode_tokens_per_s"]), r
            assert r["completion_tokens"] >= 2 and _positive(r["peak_rss_bytes"])
        for k in ("load_ms", "ttft_ms", "ttft_cold_ms", "decode_tokens_per_s", "decode_tokens_per_s_first_half",
                  "peak_rss_mib"):
            assert _positive(llm[side][k]), (side, k, llm[side][k])
    # the headline decode rate is the median of the second half (runs 2 and 3)
    second = sorted(r["decode_tokens_per_s"] for r in llm["ours"]["runs"][2:])
    assert llm["ours"]["decode_tokens_per_s"] == pytest.approx(sum(second) / 2, abs=0.01)
    for k in ("ttft_ms", "decode_tokens_per_s", "peak_rss_mib", "load_ms"):
        assert _positive(llm["ratio"][k])
        assert llm["ratio"][k] == pytest.approx(llm["ours"][k] / llm["plain"][k], rel=0.01, abs=0.002)
    st = llm["settings"]
    assert (st["n_ctx"], st["threads"], st["max_tokens"]) == (2048, 1, 8)


def test_temperature_and_power_from_the_board_sensors(bench_run):
    _, res, _, _ = bench_run
    t = res["llm"]["temperature_c"]
    assert t["before"] == 45.0 and t["after"] == 45.0  # the fake tree's zones
    p = res["llm"]["power_w"]
    assert p["mean_w"] == pytest.approx(4.2) and p["samples"] >= 1
    assert _positive(p["joules_per_token"])


def test_bandwidth_ceiling_and_throttle_flag(bench_run):
    _, res, _, _ = bench_run
    bw = res["memory_bandwidth"]
    assert _positive(bw["gb_per_s"]) and len(bw["runs_gb_per_s"]) == bw["repeats"]
    assert bw["threads"] == os.cpu_count() and _positive(bw["single_thread_gb_per_s"])  # all cores copy at once
    assert bw["model_bytes"] == res["model"]["bytes"]
    assert bw["ceiling_tokens_per_s"] == pytest.approx(bw["gb_per_s"] * 1e9 / bw["model_bytes"], rel=0.01)
    assert _positive(bw["decode_fraction_of_ceiling"])
    th = res["llm"]["throttling"]
    assert th["threshold"] == THROTTLE_DROP
    assert isinstance(th["ours"]["throttled"], bool) and res["throttled"] is th["ours"]["throttled"]


def test_voice_loop_per_stage_for_grammar_and_llm_paths(bench_run):
    _, res, _, _ = bench_run
    loop = res["loop"]
    assert [s["session"] for s in loop["sessions"]] == ["chitchat_joke", "query_m8_bolts"]
    for s in loop["sessions"]:
        assert _positive(s["rtf"]) and _positive(s["frames"]) and s["turns"] == 1
    w = loop["wake_cpu_ms_per_frame"]
    assert _positive(w["mean"]) and _positive(w["p95"]) and w["frames"] == sum(s["frames"] for s in loop["sessions"])
    g, l = loop["paths"]["grammar"], loop["paths"]["llm"]
    assert g["turns"] == 1 and l["turns"] == 2  # chitchat_joke + one text turn
    for path, p in (("grammar", g), ("llm", l)):
        assert _positive(p["asr_rtf"]["median"]) and _positive(p["total_ms"]["median"]), path
        # semantic endpointing decodes and prepares the reply during the silence, so a part of
        # the turn measured from the endpoint may be 0 ms, never negative
        for stage in ("endpoint_to_transcript_ms", "transcript_to_intent_ms", "intent_to_first_audio_ms"):
            v = p[stage]["median"]
            assert isinstance(v, (int, float)) and v >= 0, (path, stage, v)
    assert l["transcript_to_intent_ms"]["n"] == 2 and l["total_ms"]["n"] == 1  # the text turn has no audio
    text = [t for t in loop["turns"] if t["origin"] == "text"]
    assert len(text) == 1 and text[0]["source"] == "llm" and text[0]["asr_rtf"] is None
    assert _positive(loop["peak_rss_mib"])


def test_chart_is_a_png_next_to_the_result(bench_run):
    _, res, path, out = bench_run
    png = out / res["chart"]
    assert png == path.with_suffix(".png")
    head = png.read_bytes()[:24]
    assert head[:8] == PNG_MAGIC and head[12:16] == b"IHDR"
    width, height = struct.unpack(">II", head[16:24])
    assert width > 0 and height > 0


# -- the pieces ----------------------------------------------------------------------------------

def test_throttle_flag_is_the_second_half_median_more_than_15_percent_below():
    assert halves([1, 2, 3, 4, 5]) == ([1, 2], [3, 4, 5])
    hot = throttle_check([10.0, 10.0, 10.0, 8.0, 8.0, 8.0])  # 20 % slower
    assert hot["throttled"] is True and hot["drop_fraction"] == pytest.approx(0.2)
    ok = throttle_check([10.0, 10.0, 9.0, 9.0])  # 10 % slower
    assert ok["throttled"] is False and ok["drop_fraction"] == pytest.approx(0.1)
    assert throttle_check([10.0])["throttled"] is None


def _board(fs) -> BoardSettings:
    return BoardSettings.model_validate({"name": "fake", "sensors": fs.sensors_settings()})


def test_telemetry_reads_hottest_zone_and_power(tmp_path):
    fs = rk3588(tmp_path, temp_c=50.0, power_w=3.5)
    fs.set_temp("bigcore0-thermal", 71.5)
    tel = Telemetry(_board(fs))
    assert tel.temperature_c() == 71.5
    assert tel.power_w() == pytest.approx(3.5)


def test_telemetry_without_sensors_is_null_not_an_error(tmp_path):
    x86 = x86_dev(tmp_path / "x86")  # zones but no power monitor
    tel = Telemetry(_board(x86))
    assert tel.temperature_c() == 40.0 and tel.power_w() is None
    empty = tmp_path / "empty"  # no /sys at all
    empty.mkdir()
    tel = Telemetry(BoardSettings.model_validate({"sensors": {"root": str(empty)}}))
    assert tel.temperature_c() is None and tel.power_w() is None
    tel.sample()
    assert tel.power_summary() is None and tel.problems  # the reasons are kept


def test_cpu_model_from_cpuinfo():
    x86 = "processor\t: 0\nmodel name\t: AMD EPYC 7B13\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n"
    assert parse_cpu_model(x86) == "AMD EPYC 7B13"
    # RK3588: CPUs 0-3 Cortex-A55 (part 0xd05), 4-7 Cortex-A76 (0xd0b)
    arm = "".join(f"processor\t: {i}\nCPU implementer\t: 0x41\nCPU part\t: {'0xd05' if i < 4 else '0xd0b'}\n\n"
                  for i in range(8))
    assert parse_cpu_model(arm) == "4x Cortex-A55 + 4x Cortex-A76"
    assert parse_cpu_model("garbage\n") is None


def test_peak_rss_from_status(tmp_path):
    status = tmp_path / "status"
    status.write_text("Name:\tpython\nVmHWM:\t  215640 kB\nVmRSS:\t  200000 kB\nThreads:\t3\n")
    assert parse_status_kib(status.read_text()) == {"VmHWM": 215640 * 1024, "VmRSS": 200000 * 1024}
    assert peak_rss_bytes(status) == 215640 * 1024
    assert peak_rss_bytes(tmp_path / "missing") is None
    assert peak_rss_bytes() > 0  # this process, from /proc/self/status


def test_bad_arguments_are_refused_with_the_fix(tmp_path):
    p = _edge("bench", "--runs", "1", "--no-loop", "--out", str(tmp_path), timeout=120)
    assert p.returncode == 2 and "--runs must be at least 2" in p.stderr
    p = _edge("bench", "--sessions", str(tmp_path), "--out", str(tmp_path), timeout=120)
    assert p.returncode == 2 and "--sessions DIR" in p.stderr and str(tmp_path) in p.stderr
    assert not list(tmp_path.glob("*.json"))
