"""C23 big and little cores: a fake sysfs CPU tree of 4 little cores at 1.8 GHz and 4 big at 2.4 GHz
(and the RK3576 4+4 variant); then the big cores throttled to 1.2 GHz and the cpufreq governor set
to powersave; a cgroup ``cpu.max`` limit.

Right behaviour: LLM and recognition threads = the number of big cores, on them, audio on a little
core; never all cores by default; throttling lowers the level (warm: fewer threads, shorter answers)
instead of adding threads; a lower explicit setting wins; the plan is logged. The governor reads the
fake trees through the board config's ``sensors:`` block (tests/fakesys.py). That the process really
pins its stages' threads to these sets is tests/test_governed_loop.py.
"""
from __future__ import annotations

import logging

import pytest

from tests.fakesys import rk3588, sampled_governor

BOARDS = {"rk3588-rock5b": {"little": ([0, 1, 2, 3], 1_800_000), "big": ([4, 5, 6, 7], 2_400_000)},
          "rk3576-rock4d": {"little": ([0, 1, 2, 3], 1_800_000), "big": ([4, 5, 6, 7], 2_200_000)}}
POLICIES = "sys/devices/system/cpu/cpufreq"


def tree(tmp_path, board: str):
    """The board's 4 + 4 cpufreq policies (one per cluster) under a fake root."""
    fs = rk3588(tmp_path / board)
    for n in (0, 4, 6):
        for f in ("related_cpus", "affected_cpus", "cpuinfo_max_freq", "scaling_max_freq", "scaling_min_freq",
                  "scaling_cur_freq", "scaling_governor"):
            fs.remove(f"{POLICIES}/policy{n}/{f}")
    for cpus, khz in BOARDS[board].values():
        fs.add_policy(cpus[0], cpus, max_khz=khz)
    return fs


governor = sampled_governor


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_llm_and_recognition_threads_are_the_big_cores_and_audio_a_little_one(tmp_path, board, caplog):
    fs = tree(tmp_path, board)
    gov = governor(fs, board)
    big, little = BOARDS[board]["big"][0], BOARDS[board]["little"][0]
    with caplog.at_level(logging.INFO, logger="edge.governor"):
        lim = gov.limits()
    assert lim.llm_threads == len(big) and list(lim.llm_cpus) == big, lim
    assert len(lim.audio_cpus) == 1 and lim.audio_cpus[0] in little
    assert gov.settings.asr.whisper.threads == len(big)  # recognition: the board's figure, the big cores
    assert lim.llm_threads < len(big + little)  # never all cores
    assert any(f"{len(big)} LLM threads on CPUs {big}" in r.getMessage() for r in caplog.records)  # the plan is logged
    assert gov.level == "normal"


@pytest.mark.parametrize("board", sorted(BOARDS))
@pytest.mark.parametrize("how", ["scaling_max_freq", "powersave"])
def test_throttled_big_cores_lower_the_level_instead_of_adding_threads(tmp_path, board, how, caplog):
    fs = tree(tmp_path, board)
    gov = governor(fs, board)
    before = gov.limits()
    big = BOARDS[board]["big"][0]
    p = f"{POLICIES}/policy{big[0]}"
    if how == "scaling_max_freq":
        fs.write(f"{p}/scaling_max_freq", "1200000\n")
        fs.write(f"{p}/scaling_cur_freq", "1200000\n")
    else:
        fs.write(f"{p}/scaling_governor", "powersave\n")
        fs.write(f"{p}/scaling_min_freq", "1200000\n")
    with caplog.at_level(logging.INFO, logger="edge.governor"):
        gov.sample()
        after = gov.limits()
    assert gov.level == "warm" and after.level == "warm", gov.reasons()
    assert after.llm_threads < before.llm_threads and after.max_tokens < before.max_tokens  # fewer, shorter
    assert "1.20 of" in after.reason and "cpufreq" in after.reason, after.reason
    assert any("capped at 1.20" in r.getMessage() for r in caplog.records)
    # back to full speed: back to normal, the threads come back
    fs.write(f"{p}/scaling_max_freq", f"{BOARDS[board]['big'][1]}\n")
    fs.write(f"{p}/scaling_governor", "schedutil\n")
    fs.write(f"{p}/scaling_min_freq", "408000\n")
    gov.sample()
    assert gov.level == "normal" and gov.limits().llm_threads == before.llm_threads


def test_an_x86_powersave_governor_is_not_throttling(tmp_path):
    from tests.fakesys import x86_dev

    fs = x86_dev(tmp_path / "x86", cpus=4)  # intel_pstate's powersave is its normal dynamic governor
    gov = governor(fs, "x86-dev")
    assert gov.level == "normal" and gov.throttle == 0


@pytest.mark.parametrize("quota,period,threads", [("150000", "100000", 1), ("250000", "100000", 2),
                                                  ("max", "100000", 4)])
def test_a_cgroup_cpu_max_caps_the_threads(tmp_path, quota, period, threads):
    fs = tree(tmp_path, "rk3588-rock5b")
    fs.write("proc/self/cgroup", "0::/system.slice/edge.service\n")
    fs.write("sys/fs/cgroup/system.slice/edge.service/cpu.max", f"{quota} {period}\n")
    fs.write("sys/fs/cgroup/system.slice/cpu.max", "max 100000\n")
    gov = governor(fs, "rk3588-rock5b")
    plan = gov.plan()
    assert plan.llm_threads == threads and gov.limits().llm_threads == threads, plan.reason
    if quota != "max":
        assert "cgroup cpu.max" in plan.reason
    # a parent's limit counts as well
    fs.write("sys/fs/cgroup/system.slice/cpu.max", "100000 100000\n")
    gov.sample()
    assert gov.plan().llm_threads == 1


def test_a_lower_explicit_thread_setting_wins(tmp_path):
    fs = tree(tmp_path, "rk3588-rock5b")
    gov = governor(fs, "rk3588-rock5b", llm={"threads": 3})
    assert gov.limits().llm_threads == 3
    gov = governor(fs, "rk3588-rock5b", llm={"threads": 16})  # never more than the big cores
    assert gov.limits().llm_threads == 4
