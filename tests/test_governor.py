"""The resource governor on fake RK3588 / x86 trees (tests/fakesys.py) whose values the tests change
over injected time: each thermal degrade and recovery step, no oscillation around a threshold,
unknown signals tolerated, memory admission with the real SmolLM2 GGUF metadata and a larger
hypothetical model (case C11), thread plans, idle unload + reload of the real model, ``edge status``."""
from __future__ import annotations

import gc
import json
import logging
import random
import weakref

import pytest
import yaml

from drivers.sensors import MemInfo
from edge.cli import main
from edge.config import BoardSettings, ConfigError, CpuCluster, load_settings
from edge.governor.admission import AdmissionError, admit, ctx_steps, estimate, model_shape
from edge.governor.governor import Governor
from edge.governor.idle import IdleUnloader
from edge.governor.threads import thread_plan
from edge.llm.loader import step_loader
from edge.llm.shape import KV_BYTES_PER_ELEMENT, ModelShapeError, kv_cache_bytes
from edge.models import manifest as models
from tests.fakesys import rk3588, x86_dev

MIB = 1024 * 1024
SMOL = "smollm2-135m-instruct-q4_1"
SMOL_BYTES = 98362432  # models/manifest.yaml files: size of the GGUF
BIG = "hypothetical-1.7b-q4"
BIG_WEIGHTS_MIB = 1000
BIG_ARCH = {"n_layers": 24, "n_kv_heads": 32, "head_dim": 64, "n_ctx_train": 8192}


class Clock:
    """Injected time (s): tests step it instead of sleeping."""

    def __init__(self):
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def make_settings(fs, board="rk3588-rock5b", llm=None, **governor):
    # the figures below are worked out with a 450 MiB pipeline overhead, whatever the default is
    over = {"store": {"path": str(fs.root / "unused.db")}, "board": {"sensors": fs.sensors_settings()},
            "governor": {"pipeline_overhead_mib": 450, **governor}}
    # the CPU step alone (the RK3588 board's chain starts with RKLLM: tests/test_llm_chain.py)
    over["llm"] = {"chain": [], **(llm or {})}
    return load_settings(board=board, overrides=over)


@pytest.fixture
def rk(tmp_path):
    return rk3588(tmp_path / "rk")


@pytest.fixture
def manifest(tmp_path):
    """The real manifest plus a larger hypothetical LLM (weights size from files:, shape from arch:)."""
    data = yaml.safe_load(models.default_manifest_path().read_text())
    data["models"].append({
        "id": BIG, "kind": "llm", "package": "hypothetical-llm==0.0", "module": "hypothetical_llm",
        "path": "big.gguf", "licence": "unknown", "source": "none (a test model that does not exist)",
        "files": [{"path": "big.gguf", "size": BIG_WEIGHTS_MIB * MIB, "sha256": "0" * 64, "format": "gguf"}],
        "arch": BIG_ARCH})
    p = tmp_path / "manifest.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return p


# ------------------------------------------------------------------------------------------------
# thermal levels


def step(gov, clock, fs, celsius, seconds=1.0, zone="soc-thermal"):
    clock.t += seconds
    fs.set_temp(zone, celsius)
    gov.sample()
    return gov.level


def test_each_degrade_and_recovery_step(rk, caplog):
    caplog.set_level(logging.INFO, logger="edge.governor")
    clock = Clock()
    gov = Governor(make_settings(rk, power_mode="performance", hysteresis_c=5.0, dwell_s=30.0), clock=clock)
    gov.sample()
    assert gov.level == "normal"
    lim = gov.limits()
    assert (lim.llm_allowed, lim.llm_threads, lim.max_tokens, lim.token_pacing_ms, lim.notice) == (True, 4, 48, 0, None)

    # normal -> warm as soon as soc-thermal reaches its first passive trip (75 °C)
    assert step(gov, clock, rk, 74.9) == "normal"
    assert step(gov, clock, rk, 75.0) == "warm"
    assert gov.thermal.reason == "normal → warm: soc-thermal 75.0 °C ≥ warm threshold 75.0 °C"
    lim = gov.limits()
    assert (lim.llm_allowed, lim.llm_threads, lim.max_tokens, lim.token_pacing_ms) == (True, 2, 24, 20)

    # warm -> hot at the second passive trip (85 °C): grammar only, the cooling-down notice
    assert step(gov, clock, rk, 86.0) == "hot"
    lim = gov.limits()
    assert (lim.llm_allowed, lim.llm_threads) == (False, 0)
    assert lim.notice == "I'm cooling down, so I can only do stock commands for now."

    # hot -> warm only below 85 - 5 = 80 °C, and only after 30 s there
    for _ in range(100):
        assert step(gov, clock, rk, 82.0) == "hot"  # under the trip, not under trip - hysteresis
    assert "soc-thermal 82.0 °C not below 80.0 °C" in gov.thermal.reason
    assert step(gov, clock, rk, 79.0) == "hot"       # dwell starts here
    for _ in range(29):
        assert step(gov, clock, rk, 79.0) == "hot"
    assert step(gov, clock, rk, 79.0) == "warm"       # 30 s below 80 °C
    assert "hot → warm: every zone below its hot threshold − 5 °C for 30 s ≥ dwell 30 s" in gov.thermal.reason

    # warm -> normal only below 75 - 5 = 70 °C for 30 s
    for _ in range(50):
        assert step(gov, clock, rk, 72.0) == "warm"
    assert step(gov, clock, rk, 69.0) == "warm"
    assert step(gov, clock, rk, 69.0, seconds=29.0) == "warm"
    assert step(gov, clock, rk, 69.0, seconds=1.0) == "normal"
    assert gov.limits().llm_threads == 4
    assert gov.thermal.changes == 4

    logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("thermal:")]
    assert logged == ["thermal: normal → warm: soc-thermal 75.0 °C ≥ warm threshold 75.0 °C",
                      "thermal: warm → hot: soc-thermal 86.0 °C ≥ hot threshold 85.0 °C",
                      "thermal: hot → warm: every zone below its hot threshold − 5 °C for 30 s ≥ dwell 30 s "
                      "(hottest soc-thermal 79.0 °C)",
                      "thermal: warm → normal: every zone below its warm threshold − 5 °C for 30 s ≥ dwell 30 s "
                      "(hottest soc-thermal 69.0 °C)"]
    ups = [r.levelno for r in caplog.records if "→ warm: soc" in r.getMessage() or "→ hot" in r.getMessage()]
    assert ups == [logging.WARNING, logging.WARNING]


def test_a_jump_to_hot_steps_back_one_level_per_dwell(rk):
    clock = Clock()
    gov = Governor(make_settings(rk, power_mode="performance", dwell_s=30.0), clock=clock)
    gov.sample()
    assert step(gov, clock, rk, 95.0) == "hot"
    levels = [step(gov, clock, rk, 50.0) for _ in range(70)]
    # below both thresholds from sample 0 on: warm after one dwell (30 s), normal after a second one
    assert levels.index("warm") == 30 and levels.index("normal") == 60
    assert set(levels[:30]) == {"hot"} and set(levels[30:60]) == {"warm"}


def test_every_zone_counts_and_zones_without_trips_use_the_configured_thresholds(rk):
    clock = Clock()
    gov = Governor(make_settings(rk, power_mode="performance", warm_c=72.0, hot_c=88.0), clock=clock)
    gov.sample()
    th = {t.zone: t for t in gov.thresholds}
    assert (th["soc-thermal"].warm_c, th["soc-thermal"].hot_c) == (75.0, 85.0)
    assert "passive trip 0" in th["soc-thermal"].source
    assert (th["npu-thermal"].warm_c, th["npu-thermal"].hot_c) == (72.0, 88.0)
    assert "governor.warm_c" in th["npu-thermal"].source
    assert step(gov, clock, rk, 73.0, zone="npu-thermal") == "warm"
    assert gov.thermal.reason == "normal → warm: npu-thermal 73.0 °C ≥ warm threshold 72.0 °C"
    # the npu zone at 66 (< 72 - 5) is not enough while bigcore0 stays at 68 (not < 67)
    rk.set_temp("bigcore0-thermal", 68.0)
    for _ in range(60):
        assert step(gov, clock, rk, 66.0, zone="npu-thermal") == "warm"
    assert "bigcore0-thermal 68.0 °C not below 67.0 °C" in gov.thermal.reason


def test_no_oscillation_around_a_threshold(rk):
    clock = Clock()
    gov = Governor(make_settings(rk, power_mode="performance", hysteresis_c=5.0, dwell_s=30.0), clock=clock)
    gov.sample()
    rng = random.Random(5)
    temps = [75.0 + rng.uniform(-1.5, 1.5) for _ in range(150)]
    naive_flips = sum((a >= 75.0) != (b >= 75.0) for a, b in zip(temps, temps[1:], strict=False))
    assert naive_flips > 30  # the sequence really crosses the trip point back and forth
    levels = [step(gov, clock, rk, t) for t in temps]
    assert gov.thermal.changes == 1 and levels[-1] == "warm"  # entered once, never left

    # hovering around the lower threshold (70 °C) does not leave warm either
    temps = [70.0 + rng.uniform(-1.5, 1.5) for _ in range(150)]
    assert sum((a < 70.0) != (b < 70.0) for a, b in zip(temps, temps[1:], strict=False)) > 30
    assert {step(gov, clock, rk, t) for t in temps} == {"warm"}
    assert gov.thermal.changes == 1


def test_a_noisy_cooling_curve_changes_level_once_per_step(rk):
    clock = Clock()
    gov = Governor(make_settings(rk, power_mode="performance"), clock=clock)
    gov.sample()
    rng = random.Random(11)
    curve = [90.0 - 40.0 * i / 200 + rng.uniform(-1.0, 1.0) for i in range(201)]
    levels = [step(gov, clock, rk, t) for t in curve]
    changes = [(a, b) for a, b in zip(["normal"] + levels, levels, strict=False) if a != b]
    assert changes == [("normal", "hot"), ("hot", "warm"), ("warm", "normal")]


def test_power_modes_change_thresholds_threads_and_answer_length(tmp_path):
    out = {}
    for mode in ("performance", "balanced", "powersave"):
        fs = rk3588(tmp_path / mode, temp_c=72.0)
        gov = Governor(make_settings(fs, power_mode=mode), clock=Clock())
        gov.sample()
        lim = gov.limits()
        out[mode] = (gov.level, gov.thresholds[0].warm_c, lim.llm_threads, lim.max_tokens)
    assert out == {"performance": ("normal", 75.0, 4, 48),    # floor(0.70 × 8) = 5 → 4 big cores
                   "balanced": ("warm", 70.0, 2, 24),         # 72 °C ≥ 75 − 5: warm halves 4 → 2
                   "powersave": ("warm", 65.0, 1, 12)}        # floor(0.25 × 8) = 2 → warm 1; 48 × 0.5 × 0.5


def test_hot_below_warm_is_refused_by_the_config():
    with pytest.raises(ConfigError, match=r"hot_c \(70.0 °C\) must be above warm_c \(75.0 °C\)"):
        load_settings(overrides={"store": {"path": "x.db"}, "governor": {"warm_c": 75, "hot_c": 70}})


def test_zones_sharing_a_type_get_distinct_labels(tmp_path):
    fs = x86_dev(tmp_path / "x86")
    fs.add_zone("acpitz", 55.0, ((105.0, "critical"),))
    fs.set_temp(0, 41.0)
    gov = Governor(make_settings(fs, board="x86-dev"), clock=Clock())
    gov.sample()
    m = gov.metrics()
    assert (m['edge_temperature_celsius{zone="acpitz/thermal_zone0"}'], m['edge_temperature_celsius{zone="x86_pkg_temp"}'],
            m['edge_temperature_celsius{zone="acpitz/thermal_zone2"}']) == (41.0, 40.0, 55.0)


# ------------------------------------------------------------------------------------------------
# unknown signals


def test_unknown_signals_are_tolerated_and_reported(rk, caplog):
    caplog.set_level(logging.INFO, logger="edge.governor")
    clock = Clock()
    gov = Governor(make_settings(rk, power_mode="performance"), clock=clock)
    gov.sample()
    assert step(gov, clock, rk, 80.0) == "warm"
    for z in range(7):
        rk.remove(f"sys/class/thermal/thermal_zone{z}/temp")
    rk.write("sys/kernel/debug/rknpu/load", "garbage")
    rk.write("proc/meminfo", "MemTotal: lots\n")
    for _ in range(100):
        clock.t += 1
        gov.sample()
    assert gov.level == "warm"  # no temperature known: the level is held, not reset to normal
    assert gov.thermal.reason == "warm: no zone temperature known; level held"
    st = gov.status()
    assert st["signals"]["mem"] == {"total_bytes": None, "available_bytes": None}
    assert any(r.startswith("signal unknown: ") and "thermal_zone0/temp: missing" in r for r in st["reasons"])
    assert any("rknpu/load: not an rknpu load line" in r for r in st["reasons"])
    m = gov.metrics()
    assert not any(k.startswith(("edge_temperature_celsius", "edge_npu_load_ratio", "edge_mem_total")) for k in m)
    assert m["edge_thermal_level"] == 1.0 and m["edge_signal_problems"] >= 9
    d = gov.admit()  # MemTotal unknown: the board's ram_mib (8192) stands in, MemAvailable not checked
    assert d.admitted and "≤ 5734.4 MiB (70 % of board ram_mib 8192.0 MiB)" in d.reason
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "signal unknown" in r.getMessage()]
    assert len(warned) == len(set(warned)) >= 9  # each problem logged once, not at every sample
    rk.set_all_temps(60.0)
    gov.sample()
    assert "signal back:" in caplog.text


def test_npu_load_both_forms_in_metrics(rk):
    gov = Governor(make_settings(rk), clock=Clock())
    rk.set_npu_load({0: 45, 1: 0, 2: 12})
    gov.sample()
    m = gov.metrics()
    assert (m['edge_npu_load_ratio{core="core0"}'], m['edge_npu_load_ratio{core="core1"}'],
            m['edge_npu_load_ratio{core="core2"}']) == (0.45, 0.0, 0.12)
    rk.set_npu_load("NPU load:  45%\n")
    gov.sample()
    m = gov.metrics()
    assert m['edge_npu_load_ratio{core="npu"}'] == 0.45 and 'edge_npu_load_ratio{core="core0"}' not in m


def test_metrics_carry_the_status_figures(rk):
    rk.set_meminfo(total_mib=8192, available_mib=5000)
    gov = Governor(make_settings(rk, power_mode="performance"), clock=Clock())
    gov.sample()
    rk.advance_cpu({4: 0.75})
    rk.set_temp("gpu-thermal", 51.5)
    gov.sample()
    gov.admit()
    m = gov.metrics()
    assert m["edge_mem_total_bytes"] == 8192 * MIB and m["edge_mem_available_bytes"] == 5000 * MIB
    assert m['edge_temperature_celsius{zone="gpu-thermal"}'] == 51.5
    assert m['edge_thermal_threshold_celsius{zone="soc-thermal",level="hot"}'] == 85.0
    assert m['edge_cpu_load_ratio{cpu="cpu4"}'] == 0.75 and m['edge_cpu_freq_hertz{policy="policy4"}'] == 2.4e9
    assert m["edge_npu_freq_hertz"] == 1e9 and m['edge_power_watts{sensor="ina226/power1"}'] == 4.2
    assert (m["edge_llm_threads"], m["edge_llm_admitted"], m["edge_llm_n_ctx"]) == (4.0, 1.0, 2048.0)
    assert m["edge_llm_estimate_bytes"] == gov.decision.estimate.total_bytes
    assert m['edge_power_mode{mode="performance"}'] == 1.0 and m['edge_power_mode{mode="balanced"}'] == 0.0


# ------------------------------------------------------------------------------------------------
# memory admission


def test_kv_cache_formula_matches_llama_cpp_for_smollm2():
    shape = model_shape(SMOL)  # read from the real GGUF
    assert (shape.n_layers, shape.n_kv_heads, shape.head_dim, shape.head_dim_v, shape.n_ctx_train) == (30, 3, 64, 64, 8192)
    assert "GGUF metadata" in shape.source
    # llama.cpp's own log for this model at n_ctx 2048: "llama_kv_cache: size = 45.00 MiB" (f16),
    # 23.91 MiB (type_k/type_v q8_0), 12.66 MiB (q4_0)
    assert {t: round(kv_cache_bytes(shape, 2048, t) / MIB, 2) for t in KV_BYTES_PER_ELEMENT} == {
        "f16": 45.00, "q8_0": 23.91, "q4_0": 12.66}
    est = estimate(SMOL, 2048, overhead_mib=450)
    assert (est.weights_bytes, est.kv_cache_bytes, est.overhead_bytes) == (SMOL_BYTES, 2 * 30 * 2048 * 3 * 64 * 2, 450 * MIB)
    assert est.describe() == ("weights 93.8 MiB + KV cache 45.0 MiB (f16, n_ctx 2048) + pipeline 450.0 MiB "
                              "= 588.8 MiB")


def big_total_mib(n_ctx):
    a = BIG_ARCH
    return BIG_WEIGHTS_MIB + 2 * a["n_layers"] * n_ctx * a["n_kv_heads"] * a["head_dim"] * 2 / MIB + 450


def test_a_large_model_is_refused_with_numbers_and_a_shorter_n_ctx_chosen(tmp_path, manifest, caplog):
    caplog.set_level(logging.INFO, logger="edge.governor")
    fs = rk3588(tmp_path / "rk", total_mib=4096, available_mib=3000)
    gov = Governor(make_settings(fs, llm={"model": BIG, "n_ctx": 8192}), clock=Clock(), manifest_path=manifest)
    d = gov.admit()
    assert big_total_mib(8192) == 2986.0 and big_total_mib(4096) == 2218.0  # budget: 0.70 × 4096 = 2867.2
    assert (d.admitted, d.model, d.n_ctx, d.degraded) == (True, BIG, 4096, True)
    assert [(a.n_ctx, a.fits) for a in d.attempts] == [(8192, False), (4096, True)]
    assert d.attempts[0].why == ("weights 1000.0 MiB + KV cache 1536.0 MiB (f16, n_ctx 8192) + pipeline 450.0 MiB = "
                                 "2986.0 MiB: 2986.0 MiB > 70 % of MemTotal 4096.0 MiB = 2867.2 MiB")
    assert d.reason.startswith(f"admitted {BIG} with n_ctx 4096 instead of {BIG} with n_ctx 8192: ")
    assert "chosen: weights 1000.0 MiB + KV cache 768.0 MiB (f16, n_ctx 4096) + pipeline 450.0 MiB = 2218.0 MiB " \
           "≤ 2867.2 MiB (70 % of MemTotal 4096.0 MiB) and < MemAvailable 3000.0 MiB" in d.reason
    assert d.estimate.shape.source.startswith(f"arch: block of {BIG}")
    assert any(r.levelno == logging.WARNING and r.getMessage() == f"admission: {d.reason}" for r in caplog.records)
    st = gov.status()
    assert (st["engines"]["llm"]["model"], st["engines"]["llm"]["n_ctx"]) == (BIG, 8192)  # configured
    assert (st["engines"]["llm"]["chosen_model"], st["engines"]["llm"]["chosen_n_ctx"]) == (BIG, 4096)  # admitted


def test_memavailable_too_low_falls_back_to_the_smaller_model(tmp_path, manifest):
    fs = rk3588(tmp_path / "rk", total_mib=4096, available_mib=1000)
    gov = Governor(make_settings(fs, llm={"model": BIG, "n_ctx": 8192}, smaller_models=[SMOL]), clock=Clock(),
                   manifest_path=manifest)
    d = gov.admit()
    assert [(a.model, a.n_ctx, a.fits) for a in d.attempts] == [
        (BIG, 8192, False), (BIG, 4096, False), (BIG, 2048, False), (BIG, 1024, False), (BIG, 512, False),
        (SMOL, 8192, True)]
    assert d.attempts[4].why.endswith("1546.0 MiB ≥ MemAvailable 1000.0 MiB")
    assert (d.model, d.n_ctx) == (SMOL, 8192)
    assert d.estimate.total_bytes == SMOL_BYTES + 2 * 30 * 8192 * 3 * 64 * 2 + 450 * MIB


def test_c11_an_n_ctx_larger_than_memory_allows_is_refused_before_loading(tmp_path):
    fs = rk3588(tmp_path / "rk", total_mib=2048, available_mib=1800)
    gov = Governor(make_settings(fs, llm={"model": SMOL, "n_ctx": 131072}), clock=Clock())
    d = gov.admit()
    assert [(a.n_ctx, a.fits) for a in d.attempts] == [(131072, False), (65536, False), (32768, True)]
    assert ("KV cache 2880.0 MiB (f16, n_ctx 131072) + pipeline 450.0 MiB = 3423.8 MiB: 3423.8 MiB > 70 % of "
            "MemTotal 2048.0 MiB = 1433.6 MiB; 3423.8 MiB ≥ MemAvailable 1800.0 MiB") in d.reason
    assert d.n_ctx == 32768 and round(d.estimate.total_bytes / MIB, 1) == 1263.8


def test_nothing_fits_the_loader_refuses_before_any_load(tmp_path):
    fs = rk3588(tmp_path / "rk", total_mib=512, available_mib=400)
    gov = Governor(make_settings(fs, llm={"model": SMOL, "n_ctx": 2048}), clock=Clock())
    unloader = gov.idle_unloader(step_loader(gov))
    with pytest.raises(AdmissionError) as err:
        with unloader.use():
            pass
    d = err.value.decision
    assert not d.admitted and [a.n_ctx for a in d.attempts] == [2048, 1024, 512]
    assert str(err.value).startswith("refused: no configuration fits (≤ 358.4 MiB (70 % of MemTotal 512.0 MiB) and "
                                     "< MemAvailable 400.0 MiB); tried smollm2-135m-instruct-q4_1 n_ctx 2048: ")
    assert "governor.smaller_models" in str(err.value)
    assert not unloader.loaded and unloader.loads == 0
    assert gov.status()["engines"]["llm"]["admitted"] is False


def test_models_whose_shape_is_unknown_are_skipped_with_a_reason(tmp_path):
    rkllm = tmp_path / "qwen.rkllm"
    rkllm.write_bytes(b"RKLLM" + b"\0" * 100)
    with pytest.raises(ModelShapeError, match=r"add arch: \{n_layers, n_kv_heads, head_dim\}"):
        model_shape(str(rkllm))
    d = admit([str(rkllm), "no-such-model", SMOL], 1024, MemInfo(4096 * MIB, 3000 * MIB), overhead_mib=450)
    assert [(a.model, a.total_bytes) for a in d.attempts][:2] == [(str(rkllm), None), ("no-such-model", None)]
    assert d.attempts[0].why.startswith("cannot estimate: ") and (d.model, d.n_ctx) == (SMOL, 1024)


def test_ctx_steps():
    assert ctx_steps(8192, 512) == [8192, 4096, 2048, 1024, 512]
    assert ctx_steps(3000, 512) == [3000, 1500, 750]
    assert ctx_steps(256, 512) == [256]


# ------------------------------------------------------------------------------------------------
# threads


def test_thread_plan_on_rk3588_big_little():
    board = load_settings(board="rk3588-rock5b").board
    p = thread_plan(board, "normal", "performance")
    # 70 % of 8 cores = 5.6 → 5, but only 4 big cores exist → 4, on CPUs 4-7; audio on little core 0
    assert (p.llm_threads, p.llm_cpus, p.audio_cpus) == (4, (4, 5, 6, 7), (0,))
    assert "floor(0.70 × 8) = 5" in p.reason and "→ 4" in p.reason
    assert thread_plan(board, "warm", "performance").llm_threads == 2
    assert thread_plan(board, "hot", "performance").llm_threads == 0
    assert thread_plan(board, "normal", "powersave").llm_threads == 2  # floor(0.25 × 8)


def test_thread_plan_budget_binds_when_there_are_more_big_cores():
    board = BoardSettings(name="hypothetical-2+6", cpu_clusters=[
        CpuCluster(name="little", kind="little", cores=[0, 1]), CpuCluster(name="big", kind="big", cores=[2, 3, 4, 5, 6, 7])])
    p = thread_plan(board, "normal", "performance")
    assert (p.llm_threads, p.llm_cpus, p.audio_cpus) == (5, (2, 3, 4, 5, 6, 7), (0,))


def test_thread_plan_on_uniform_boards():
    x86 = load_settings(board="x86-dev").board
    p = thread_plan(x86, "normal", "performance")
    assert (p.llm_threads, p.llm_cpus, p.audio_cpus) == (1, (1,), (0,))  # floor(0.70 × 2) = 1
    rk3566 = BoardSettings(name="rk3566", cpu_clusters=[CpuCluster(name="all", cores=[0, 1, 2, 3])])
    assert thread_plan(rk3566, "normal", "performance").llm_threads == 2  # floor(2.8)
    one = thread_plan(None, "warm", "balanced", online_cpus=[0])
    assert (one.llm_threads, one.llm_cpus, one.audio_cpus) == (1, (0,), (0,))
    with pytest.raises(ValueError):
        thread_plan(x86, "boiling")


# ------------------------------------------------------------------------------------------------
# idle unload and reload (the real SmolLM2 GGUF)


def test_idle_unload_and_reload_with_the_real_model(tmp_path):
    fs = x86_dev(tmp_path / "x86")
    clock = Clock()
    gov = Governor(make_settings(fs, board="x86-dev", idle_unload_s=600), clock=clock)
    gov.sample()
    un = gov.idle_unloader(step_loader(gov))
    with un.use() as (engine, reload_ms):
        assert reload_ms is not None and reload_ms > 0 and engine.n_ctx == 2048
        assert engine.threads == 1  # the x86-dev plan: 1 LLM thread
    with un.use() as (again, reload_ms):
        assert reload_ms is None and again is engine  # already loaded
    ref = weakref.ref(engine)
    del engine, again
    assert gov.status()["llm"]["loaded"] is True
    clock.t += 599
    assert not un.tick() and un.loaded
    with un.use():  # in use: never unloaded, however long
        clock.t += 10_000
        assert not un.tick()
    clock.t += 600
    assert un.tick() and not un.loaded
    gc.collect()
    assert ref() is None  # the engine (and its llama.cpp context) is gone
    assert gov.status()["llm"]["loaded"] is False and gov.metrics()["edge_llm_loaded"] == 0.0
    with un.use() as (engine, reload_ms):
        assert reload_ms is not None and engine is not None
    assert un.loads == 2 and un.unloads == 1
    assert gov.status()["llm"]["last_reload_ms"] == reload_ms == gov.metrics()["edge_llm_reload_ms"]


def test_idle_unload_zero_means_never(tmp_path):
    clock = Clock()
    un = IdleUnloader(lambda: object(), 0, clock=clock)
    un.acquire()
    clock.t += 1e9
    assert not un.tick() and un.loaded


# ------------------------------------------------------------------------------------------------
# edge status


def test_edge_status_json_and_readable(rk, tmp_path, capsys):
    rk.set_temp("soc-thermal", 80.0)
    rk.set_npu_load({0: 30, 1: 0, 2: 0})
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump({"board": {"sensors": rk.sensors_settings()}, "governor": {"power_mode": "performance"},
                                   "store": {"path": str(tmp_path / "e.db")}}))
    assert main(["status", "--json", "--board", "rk3588-rock5b", "--config", str(cfg), "--interval", "0"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert (st["board"], st["level"], st["level_value"], st["power_mode"]) == ("rk3588-rock5b", "warm", 1, "performance")
    assert st["reasons"][0] == "thermal: normal → warm: soc-thermal 80.0 °C ≥ warm threshold 75.0 °C"
    assert st["reasons"][1].startswith(f"memory: admitted {SMOL} with n_ctx 2048: ")
    assert len(st["signals"]["thermal"]) == 7 and st["signals"]["npu"]["load"]["core0"] == 0.3
    assert st["engines"]["llm"]["admitted"] is True and st["engines"]["asr"]["engine"] == "whisper"
    assert st["thread_plan"]["llm_threads"] == 2 and st["thread_plan"]["llm_cpus"] == [4, 5, 6, 7]
    assert st["limits"]["token_pacing_ms"] == 20
    assert main(["status", "--board", "rk3588-rock5b", "--config", str(cfg), "--interval", "0"]) == 0
    out = capsys.readouterr().out
    assert "level WARM" in out and "thermal soc-thermal: 80.0 °C (warm 75.0, hot 85.0 °C)" in out
    assert "threads: 2 LLM on CPUs [4, 5, 6, 7], audio on CPUs [0]" in out
