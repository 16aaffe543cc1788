"""The governor inside the voice loop, on a fake RK3588 sysfs tree: a hot board answers from the
grammar path only and says it is cooling down; memory admission decides the LLM before it loads."""
from __future__ import annotations

import os
import threading

import pytest

from drivers.audio import wav_frames
from edge.config import ConfigError, load_settings
from edge.governor.governor import Governor
from edge.llm.loader import build_llm
from edge.loop.build import build_stages, run_frames
from edge.stock.store import Store
from tests.fakesys import rk3588
from tests.helpers import INVENTORY, SESSION_WAKE_MODELS, SESSIONS, of_type, run_session


def _settings(fs, tmp_path, **governor):
    return load_settings(board="rk3588-rock5b", overrides={
        "store": {"path": str(tmp_path / "x.db")}, "output_dir": str(tmp_path),
        "board": {"sensors": fs.sensors_settings()}, "wake": {"models": SESSION_WAKE_MODELS},
        "governor": {"power_mode": "performance", "dwell_s": 0, **governor},
        # the CPU step alone: the board's RKLLM step is tested in test_llm_chain.py and test_rkllm.py
        "llm": {"engine": "llamacpp", "model": "smollm2-135m-instruct-q4_1", "n_ctx": 2048, "chain": []}})


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    d = tmp_path_factory.mktemp("gov")
    fs = rk3588(d / "sys", temp_c=45.0)
    settings = _settings(fs, d)
    store = Store(d / "boot.db")
    store.import_csv(INVENTORY)
    gov = Governor(settings)
    return fs, settings, build_stages(settings, store, governor=gov), gov


def test_hot_board_answers_from_the_grammar_and_says_it_is_cooling(rig, tmp_path):
    fs, settings, stages, gov = rig
    store = Store(tmp_path / "e.db")
    store.import_csv(INVENTORY)
    stages.store = store
    fs.set_all_temps(45.0)
    cool = run_session(stages, settings, SESSIONS / "chitchat_joke.wav", tmp_path)
    assert of_type(cool, "intent")[0].source == "llm"
    fs.set_all_temps(90.0)  # above the 85 °C trip
    hot = run_session(stages, settings, SESSIONS / "chitchat_joke.wav", tmp_path)
    (intent,), (reply,) = of_type(hot, "intent"), of_type(hot, "reply")
    assert intent.source == "grammar" and "cooling down" in reply.text
    stock = run_session(stages, settings, SESSIONS / "query_m8_bolts.wav", tmp_path)  # commands still work
    assert "140" in of_type(stock, "reply")[0].text
    assert gov.status()["level"] == "hot"
    fs.set_all_temps(45.0)


def test_admission_refuses_the_llm_before_loading_when_memory_is_short(tmp_path):
    fs = rk3588(tmp_path / "sys", total_mib=512, available_mib=300)
    settings = _settings(fs, tmp_path, idle_unload_s=0)  # the chain itself, not the idle wrapper
    gov = Governor(settings)
    chain = build_llm(settings, gov)
    assert not gov.decision.admitted and "MiB" in gov.decision.reason
    (step, grammar) = chain.status()
    assert step["engine"] == "llamacpp" and step["state"] == "unhealthy" and "admission" in step["reason"]
    assert grammar["active"]  # the grammar path serves


def test_idle_llm_is_unloaded_and_the_reload_shows_in_the_turn_latency(tmp_path):
    fs = rk3588(tmp_path / "sys")
    settings = _settings(fs, tmp_path, idle_unload_s=0.001)
    store = Store(tmp_path / "e.db")
    store.import_csv(INVENTORY)
    stages = build_stages(settings, store, governor=Governor(settings))
    llm = stages.understanding.llm
    assert not llm.loaded  # nothing is loaded at start: the first turn that needs the model loads it
    llm.smoke()  # such a turn: it loads the chain
    assert llm.loaded and llm.take_reload_ms() > 0  # taken here, so the turn below shows only its own reload
    events = run_session(stages, settings, SESSIONS / "chitchat_joke.wav", tmp_path)
    (end,) = of_type(events, "turn_end")
    assert of_type(events, "intent")[0].source == "llm"
    assert end.latency_ms["llm_reload_ms"] > 0  # unloaded while idle before the turn, reloaded for it
    assert llm.unloader.unloads >= 1 and llm.unloader.loads >= 2


def test_the_idle_reload_passes_the_same_admission_and_thread_cap_with_the_board_of_that_moment(tmp_path):
    """The LLM is loaded at start on an idle, roomy board; each reload after an idle unload is
    admitted again by the governor and gets the threads of the level at that moment."""
    fs = rk3588(tmp_path / "sys", temp_c=45.0)
    settings = _settings(fs, tmp_path, idle_unload_s=60)
    now = [1000.0]
    gov = Governor(settings, clock=lambda: now[0])
    gov.sample()
    llm = build_llm(settings, gov)
    first = llm.inner.active_engine
    assert (first.n_ctx, first.threads) == (2048, 4)  # rk3588: 4 LLM threads on the big cores

    def reload():
        now[0] += 61
        assert llm.tick() and not llm.loaded
        return llm.inner  # loaded again on demand

    # warm (80 °C ≥ the 75 °C trip) and 840 MiB: 2048 tokens (598.8 MiB) > 70 % = 588 MiB, 1024 fit
    fs.set_all_temps(80.0)
    fs.set_meminfo(total_mib=840, available_mib=800)
    gov.sample()
    chain = reload()
    assert gov.level == "warm" and gov.decision.admitted and gov.decision.degraded
    assert (chain.active_engine.n_ctx, chain.active_engine.threads) == (1024, 2)
    # nothing fits: the reloaded chain's step is refused before it loads, the grammar path serves
    fs.set_meminfo(total_mib=512, available_mib=300)
    chain = reload()
    (step, grammar) = chain.status()
    assert not gov.decision.admitted and step["state"] == "unhealthy"
    assert "memory admission refused smollm2-135m-instruct-q4_1: refused: no configuration fits" in step["reason"]
    assert grammar["active"] and llm.unloader.loads == 3 and llm.unloader.unloads == 2
    llm.close()


def _mask(tid: int | str) -> set[int]:
    return set(os.sched_getaffinity(int(tid)))


def _threads() -> set[str]:
    return set(os.listdir("/proc/self/task"))


def test_on_a_big_little_board_audio_runs_on_the_little_core_and_turns_on_the_big_one(tmp_path, inventory_store):
    """A board config declaring one little and one big core (two of this machine's CPUs): the
    runtimes' worker threads started while loading keep their stage's core, the audio loop (wake
    word) runs on the little core, recognition, understanding and the reply on the big one, and the
    caller's own mask is back afterwards."""
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip("needs two CPUs")
    little, big = allowed[:2]
    settings = load_settings(board="x86-dev", overrides={
        "board": {"cpu_clusters": [{"name": "little", "cores": [little], "kind": "little"},
                                   {"name": "big", "cores": [big], "kind": "big"}]},
        "store": {"path": str(tmp_path / "x.db")}, "output_dir": str(tmp_path), "llm": {"engine": "none"},
        "wake": {"models": SESSION_WAKE_MODELS}})
    before = _threads()
    stages = build_stages(settings, inventory_store)
    started = {t: _mask(t) for t in _threads() - before if os.path.exists(f"/proc/self/task/{t}")}
    assert started, "the runtimes started no worker threads"
    assert all(m in ({little}, {big}) for m in started.values()), started
    assert {big} in started.values()  # recognition's worker pool (CTranslate2) on the big core
    seen: dict[str, list[set[int]]] = {}
    out: list = []

    def emit(e):
        seen.setdefault(e.type, []).append(_mask(threading.get_native_id()))
        out.append(e)

    mine = _mask(0)

    def loop():
        run_frames(wav_frames(SESSIONS / "two_turns_log_then_undo.wav"), stages, settings, tmp_path, emit)
        seen["after"] = [_mask(0)]

    t = threading.Thread(target=loop)
    t.start()
    t.join(300)
    stages.tts.close()
    assert [e.intent for e in of_type(out, "intent")] == ["log_record", "undo"]
    assert seen["wake"] == [{little}, {little}]  # the second wake word: back on the little core
    assert seen["transcript"] == seen["intent"] == seen["reply"] == seen["turn_end"] == [{big}, {big}]
    assert seen["after"] == [mine] and mine == set(allowed)


def test_a_board_config_naming_cpus_this_machine_lacks_is_not_pinned_and_says_so_once(caplog):
    """rk3588-rock5b (LLM on CPUs 4-7) on a machine without them: no pinning at all (never the
    whole turn squeezed onto the audio core), one warning."""
    allowed = set(os.sched_getaffinity(0))
    if {4, 5, 6, 7} <= allowed:
        pytest.skip("this machine has CPUs 4-7")
    gov = Governor(load_settings(board="rk3588-rock5b"))
    assert gov.cpu_sets() is None and gov.cpu_sets() is None
    assert caplog.text.count("not pinning") == 1


def test_a_negative_or_huge_cpu_number_is_a_config_error():
    for bad in (-1, 100_000):
        with pytest.raises(ConfigError, match=r"board\.cpu_clusters\.0\.cores\.0"):
            load_settings(board="x86-dev", overrides={"board": {"cpu_clusters": [{"name": "a", "cores": [bad]}]}})
