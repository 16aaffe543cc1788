"""A busy CPU: other work holds the cores (a compile, another service, the test suite beside a
benchmark). llama.cpp's threads meet at a barrier after every matrix step and spin there, so with
one of them descheduled the others wait: on this 2-core machine under load, 2 threads decoded ~12×
slower than 1. The governor reads the kernel's CPU pressure (``/proc/pressure/cpu``, PSI
``some avg10``) and plans one LLM thread while it is at or above ``governor.cpu_pressure_pct``;
a model already loaded is switched at the next turn's limits (``apply_limits``), a later load is
admitted with it, and ``edge serve`` loads through the same admission.

Fake sysfs/procfs trees (tests/fakesys.py) for the signal; the real SmolLM2 engine for the switch.
"""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from drivers.sensors.cpu import parse_pressure
from edge.llm.base import GenerationRequest
from edge.llm.chain import EngineChain, StepSpec
from edge.llm.loader import governed_factory
from edge.loop.pipeline import apply_limits
from tests.fakesys import rk3588, sampled_governor

PSI = "proc/pressure/cpu"


def psi(some_avg10: float) -> str:
    return (f"some avg10={some_avg10:.2f} avg60=10.00 avg300=3.00 total=11711299\n"
            "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")


governor = sampled_governor


@pytest.mark.parametrize("text,want", [
    (psi(17.64), 17.64),
    ("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", 0.0),
    ("full avg10=90.00 avg60=0 avg300=0 total=0\n", None),  # no "some" line
    ("some avg10=abc avg60=0\n", None),
    ("some avg10=250.0\n", None),  # not a share
    ("", None),
])
def test_the_psi_line_is_read_or_refused(text, want):
    assert parse_pressure(text) == want


@pytest.mark.parametrize("pressure,threads", [(72.0, 1), (50.0, 1), (49.9, 4), (5.0, 4)])
def test_cpu_pressure_at_or_above_the_limit_plans_one_llm_thread(tmp_path, pressure, threads):
    fs = rk3588(tmp_path / "sys")
    fs.write(PSI, psi(pressure))
    gov = governor(fs, "rk3588-rock5b")
    plan = gov.plan()
    assert plan.llm_threads == threads and gov.limits().llm_threads == threads, plan.reason
    assert ("CPU pressure" in plan.reason) == (threads == 1), plan.reason
    assert gov.snapshot.to_dict()["cpu"]["pressure_pct"] == pressure
    # the pressure goes: the threads come back at the next sample
    fs.write(PSI, psi(0.0))
    gov.sample()
    assert gov.limits().llm_threads == 4


def test_the_limit_is_a_setting(tmp_path):
    fs = rk3588(tmp_path / "sys")
    fs.write(PSI, psi(30.0))
    assert governor(fs, "rk3588-rock5b", governor={"cpu_pressure_pct": 25.0}).limits().llm_threads == 1
    assert governor(fs, "rk3588-rock5b").limits().llm_threads == 4


def test_a_kernel_without_psi_is_not_a_problem_but_a_bad_file_is_named(tmp_path):
    fs = rk3588(tmp_path / "sys")
    gov = governor(fs, "rk3588-rock5b")  # no /proc/pressure: CONFIG_PSI off or psi=0
    assert gov.snapshot.cpu_pressure is None and gov.limits().llm_threads == 4
    assert not [p for p in gov.snapshot.problems if "pressure" in p]
    fs.write(PSI, "garbage\n")
    gov.sample()
    assert gov.limits().llm_threads == 4
    assert [p for p in gov.snapshot.problems if str(fs.path(PSI)) in p and "avg10" in p], gov.snapshot.problems


def test_a_loaded_model_drops_to_one_thread_at_the_next_turn_and_still_answers(tmp_path):
    """An RK3588 tree with ``llm.threads: 2`` (plan: 2 LLM threads on the big cores); the real
    SmolLM2 loaded through the governor's admission; then the CPU gets busy: the next turn's limits
    switch the loaded engine to 1 thread and it answers; when the pressure goes, the next turn gives
    it 2 again."""
    fs = rk3588(tmp_path / "sys")
    fs.write(PSI, psi(0.0))
    gov = governor(fs, "rk3588-rock5b", llm={"threads": 2})
    chain = EngineChain([StepSpec("llamacpp", "smollm2-135m-instruct-q4_1", 512, threads=4)],
                        factory=governed_factory(gov)).start()
    try:
        engine = chain.active_engine
        assert engine.threads == 2  # admitted with the plan's threads, not the step's 4
        stages = SimpleNamespace(governor=gov, docs=None,
                                 understanding=SimpleNamespace(llm=chain, withheld=None, max_tokens=64))
        fs.write(PSI, psi(88.0))
        lim = apply_limits(stages)
        assert lim.llm_threads == 1 and engine.threads == 1, lim.reason
        text = "".join(chain.stream(GenerationRequest([{"role": "user", "content": "Say hi"}], max_tokens=4,
                                                      temperature=0.0)))
        assert text.strip() and chain.last_stats.completion_tokens >= 1
        fs.write(PSI, psi(1.0))
        apply_limits(stages)
        assert engine.threads == 2
    finally:
        chain.close()
