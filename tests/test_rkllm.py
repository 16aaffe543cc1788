"""drivers.npu.rkllm + edge.llm.rkllm against a stand-in librkllmrt.so written in C
(tests/rkllm_stub/), compiled with gcc once per session: struct layouts, streaming, init failure,
RKLLM_RUN_ERROR, hang → abort → unhealthy, version and SoC refusal, one NPU job at a time, smoke.
"""
from __future__ import annotations

import ctypes
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from drivers.npu import rkllm as rk
from edge.llm.base import CancelToken, ContextOverflow, EngineError, GenerationRequest, generate
from edge.llm.npulock import DEFAULT as NPU
from edge.llm.rkllm import ChatTemplate, RkllmEngine, estimate_tokens
from edge.models.manifest import resolve

STUB_DIR = Path(__file__).resolve().parent / "rkllm_stub"
HANG_GUARD_S = 20  # hang detection only: a test stuck this long has failed


@pytest.fixture(scope="session")
def stub_libs(tmp_path_factory) -> dict[str, Path]:
    """``{"1.3.0": librkllmrt.so, "1.2.0": ...}``: the stand-in compiled with each version literal."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is not installed (apt-get install build-essential)")
    out = tmp_path_factory.mktemp("rkllm_stub")
    libs = {}
    for version in ("1.3.0", "1.2.0"):
        so = out / f"librkllmrt-{version}.so"
        r = subprocess.run([gcc, "-shared", "-fPIC", "-O1", "-std=gnu11", "-Wall", "-Wextra", "-Werror",
                            f'-DRKLLM_STUB_VERSION="{version}"', "-o", str(so), str(STUB_DIR / "rkllm_stub.c")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        libs[version] = so
    return libs


@pytest.fixture
def stub(stub_libs) -> Path:
    return stub_libs["1.3.0"]


@pytest.fixture
def model(tmp_path) -> Path:
    p = tmp_path / "qwen2.5-3b-instruct-w8a8-rk3588.rkllm"
    p.write_bytes(b"stand-in model: the stub only checks that the file opens\n")
    return p


@pytest.fixture(autouse=True)
def _stub_env(monkeypatch):
    for k in ("RKLLM_STUB_MODE", "RKLLM_STUB_TOKENS", "RKLLM_STUB_DELAY_MS", "EDGE_RKLLM_LIB"):
        monkeypatch.delenv(k, raising=False)
    yield
    assert not NPU.held, "a test left the NPU job lock held"


def make_engine(monkeypatch, lib, model, mode="stream", tokens=None, delay_ms=None, **kw) -> RkllmEngine:
    """An engine on the stand-in; the stub reads its behaviour from the environment in rkllm_init."""
    monkeypatch.setenv("RKLLM_STUB_MODE", mode)
    if tokens is not None:
        monkeypatch.setenv("RKLLM_STUB_TOKENS", tokens)
    if delay_ms is not None:
        monkeypatch.setenv("RKLLM_STUB_DELAY_MS", str(delay_ms))
    kw.setdefault("soc", "rk3588")
    kw.setdefault("n_ctx", 1024)
    return RkllmEngine(model, library=lib, **kw)


def described(engine: RkllmEngine) -> dict[str, str]:
    """What the stand-in received in rkllm_init and the last rkllm_run, as a dict."""
    fn = engine.lib.cdll.rkllm_stub_describe
    fn.restype, fn.argtypes = ctypes.c_char_p, [ctypes.c_void_p]
    text = fn(engine.handle).decode()
    head, _, prompt = text.partition("\nrun.prompt=")
    out = dict(line.split("=", 1) for line in head.splitlines())
    out["run.prompt"] = prompt
    return out


def ask(text: str, **kw) -> GenerationRequest:
    return GenerationRequest(messages=[{"role": "user", "content": text}], **kw)


# ---------------------------------------------------------------- layouts

# sizeof/offsetof in bytes derived by hand from rkllm.h 1.3.0 for LP64 (x86_64 and aarch64 Linux):
# natural alignment, pointers and size_t 8 bytes, int/int32_t/float/enums 4, bool/int8_t 1; a struct
# is padded to its largest member's alignment; the anonymous union of RKLLMInput starts at 16
# (role 8 + bool 1 + 3 padding + enum 4) and is as large as RKLLMMultiModalInput (8 + 64 + 72).
HEADER_LAYOUT_LP64 = {
    "RKLLMExtendParam": 120, "RKLLMExtendParam.base_domain_id": 0, "RKLLMExtendParam.embed_flash": 4,
    "RKLLMExtendParam.enabled_cpus_num": 5, "RKLLMExtendParam.enabled_cpus_mask": 8,
    "RKLLMExtendParam.n_batch": 12, "RKLLMExtendParam.use_cross_attn": 13, "RKLLMExtendParam.reserved": 14,
    "RKLLMParam": 184, "RKLLMParam.model_path": 0, "RKLLMParam.max_context_len": 8,
    "RKLLMParam.max_new_tokens": 12, "RKLLMParam.top_k": 16, "RKLLMParam.n_keep": 20, "RKLLMParam.top_p": 24,
    "RKLLMParam.temperature": 28, "RKLLMParam.repeat_penalty": 32, "RKLLMParam.frequency_penalty": 36,
    "RKLLMParam.presence_penalty": 40, "RKLLMParam.mirostat": 44, "RKLLMParam.mirostat_tau": 48,
    "RKLLMParam.mirostat_eta": 52, "RKLLMParam.skip_special_token": 56, "RKLLMParam.ignore_eos_token": 57,
    "RKLLMParam.is_async": 58, "RKLLMParam.extend_param": 60,
    "RKLLMLoraAdapter": 24, "RKLLMLoraAdapter.lora_adapter_path": 0, "RKLLMLoraAdapter.lora_adapter_name": 8,
    "RKLLMLoraAdapter.scale": 16,
    "RKLLMEmbedInput": 16, "RKLLMEmbedInput.embed": 0, "RKLLMEmbedInput.n_tokens": 8,
    "RKLLMTokenInput": 16, "RKLLMTokenInput.input_ids": 0, "RKLLMTokenInput.n_tokens": 8,
    "RKLLMMultiModalInput": 144, "RKLLMMultiModalInput.prompt": 0,
    "RKLLMMultiModalInput.image": 8, "RKLLMMultiModalInput.image.image_embed": 8,
    "RKLLMMultiModalInput.image.n_image_tokens": 16, "RKLLMMultiModalInput.image.n_image": 24,
    "RKLLMMultiModalInput.image.image_start": 32, "RKLLMMultiModalInput.image.image_end": 40,
    "RKLLMMultiModalInput.image.image_content": 48, "RKLLMMultiModalInput.image.image_width": 56,
    "RKLLMMultiModalInput.image.image_height": 64,
    "RKLLMMultiModalInput.video": 72, "RKLLMMultiModalInput.video.video_embed": 72,
    "RKLLMMultiModalInput.video.n_frame_tokens": 80, "RKLLMMultiModalInput.video.n_frame_per_video": 88,
    "RKLLMMultiModalInput.video.n_video": 96, "RKLLMMultiModalInput.video.video_start": 104,
    "RKLLMMultiModalInput.video.video_end": 112, "RKLLMMultiModalInput.video.video_content": 120,
    "RKLLMMultiModalInput.video.frame_width": 128, "RKLLMMultiModalInput.video.frame_height": 136,
    "RKLLMInput": 160, "RKLLMInput.role": 0, "RKLLMInput.enable_thinking": 8, "RKLLMInput.input_type": 12,
    "RKLLMInput.prompt_input": 16, "RKLLMInput.embed_input": 16, "RKLLMInput.token_input": 16,
    "RKLLMInput.multimodal_input": 16,
    "RKLLMLoraParam": 8, "RKLLMLoraParam.lora_adapter_name": 0,
    "RKLLMPromptCacheParam": 16, "RKLLMPromptCacheParam.save_prompt_cache": 0,
    "RKLLMPromptCacheParam.prompt_cache_path": 8,
    "RKLLMCrossAttnParam": 40, "RKLLMCrossAttnParam.encoder_k_cache": 0, "RKLLMCrossAttnParam.encoder_v_cache": 8,
    "RKLLMCrossAttnParam.encoder_mask": 16, "RKLLMCrossAttnParam.encoder_pos": 24,
    "RKLLMCrossAttnParam.num_tokens": 32,
    "RKLLMSamplingParam": 36, "RKLLMSamplingParam.top_k": 0, "RKLLMSamplingParam.top_p": 4,
    "RKLLMSamplingParam.temperature": 8, "RKLLMSamplingParam.repeat_penalty": 12,
    "RKLLMSamplingParam.frequency_penalty": 16, "RKLLMSamplingParam.presence_penalty": 20,
    "RKLLMSamplingParam.mirostat": 24, "RKLLMSamplingParam.mirostat_tau": 28, "RKLLMSamplingParam.mirostat_eta": 32,
    "RKLLMInferParam": 40, "RKLLMInferParam.mode": 0, "RKLLMInferParam.lora_params": 8,
    "RKLLMInferParam.prompt_cache_params": 16, "RKLLMInferParam.sampling_params": 24,
    "RKLLMInferParam.keep_history": 32, "RKLLMInferParam.max_new_tokens": 36,
    "RKLLMResultLastHiddenLayer": 16, "RKLLMResultLastHiddenLayer.hidden_states": 0,
    "RKLLMResultLastHiddenLayer.embd_size": 8, "RKLLMResultLastHiddenLayer.num_tokens": 12,
    "RKLLMResultLogits": 16, "RKLLMResultLogits.logits": 0, "RKLLMResultLogits.vocab_size": 8,
    "RKLLMResultLogits.num_tokens": 12,
    "RKLLMPerfStat": 20, "RKLLMPerfStat.prefill_time_ms": 0, "RKLLMPerfStat.prefill_tokens": 4,
    "RKLLMPerfStat.generate_time_ms": 8, "RKLLMPerfStat.generate_tokens": 12, "RKLLMPerfStat.memory_usage_mb": 16,
    "RKLLMResult": 72, "RKLLMResult.text": 0, "RKLLMResult.token_id": 8, "RKLLMResult.last_hidden_layer": 16,
    "RKLLMResult.logits": 32, "RKLLMResult.perf": 48,
    "RKLLMCallback": 48, "RKLLMCallback.result_callback": 0, "RKLLMCallback.result_userdata": 8,
    "RKLLMCallback.tokenizer_callback": 16, "RKLLMCallback.tokenizer_userdata": 24,
    "RKLLMCallback.embed_callback": 32, "RKLLMCallback.embed_userdata": 40,
}


def test_ctypes_layout_matches_the_c_stand_in(stub):
    c = ctypes.CDLL(str(stub))
    c.rkllm_stub_layout.restype, c.rkllm_stub_layout.argtypes = ctypes.c_size_t, [ctypes.c_char_p]
    c.rkllm_stub_layout_names.restype = ctypes.c_char_p
    names = c.rkllm_stub_layout_names().decode().split()
    ours = rk.layout()
    assert sorted(names) == sorted(ours)  # every struct and member of the header, on both sides
    mismatched = {n: (ours[n], c.rkllm_stub_layout(n.encode())) for n in names
                  if ours[n] != c.rkllm_stub_layout(n.encode())}
    assert mismatched == {}


@pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8 or ctypes.sizeof(ctypes.c_long) != 8,
                    reason="the hand-derived table is for LP64 (x86_64/aarch64 Linux)")
def test_ctypes_layout_matches_values_derived_from_the_header():
    assert rk.layout() == HEADER_LAYOUT_LP64


def test_enums_have_the_header_values():
    assert [int(s) for s in rk.LLMCallState] == [0, 1, 2, 3]
    assert rk.LLMCallState.RKLLM_RUN_FINISH == 2 and rk.LLMCallState.RKLLM_RUN_ERROR == 3
    assert rk.RKLLMInputType.RKLLM_INPUT_MULTIMODAL == 3 and rk.RKLLMInferMode.RKLLM_INFER_GET_LOGITS == 2
    assert (rk.CPU0, rk.CPU4, rk.CPU7) == (0x01, 0x10, 0x80)


def test_struct_values_cross_into_c_intact(monkeypatch, stub, model):
    """RKLLMParam (by value and by pointer), RKLLMInput's union and RKLLMInferParam's sampling
    pointer read back on the C side with the values set in Python."""
    eng = make_engine(monkeypatch, stub, model, n_ctx=2048, max_new_tokens=99, top_k=7, cpu_mask=0xF0)
    try:
        generate(eng, ask("What is in box 3?", max_tokens=5, temperature=0.25))
        got = described(eng)
    finally:
        eng.close()
    assert got["init.model_path"] == str(model)
    assert (got["init.max_context_len"], got["init.max_new_tokens"], got["init.top_k"]) == ("2048", "99", "7")
    assert (got["init.skip_special_token"], got["init.is_async"]) == ("1", "0")
    assert (got["init.enabled_cpus_num"], got["init.enabled_cpus_mask"]) == ("4", str(0xF0))
    assert got["init.n_batch"] == "1"  # a default of rkllm_createDefaultParam, returned by value, kept
    assert (got["run.role"], got["run.input_type"], got["run.keep_history"]) == ("user", "0", "0")
    assert (got["run.sampling"], got["run.top_k"], got["run.temperature"]) == ("1", "7", "0.250")
    assert got["run.max_new_tokens"] == "5"
    assert got["run.chat_template"] == "[][][]"  # the runtime's own chat wrapping is switched off
    assert got["run.prompt"] == "<|im_start|>user\nWhat is in box 3?<|im_end|>\n<|im_start|>assistant\n"


# ---------------------------------------------------------------- versions and SoCs


def test_runtime_version_is_read_from_the_library_bytes(stub_libs):
    assert rk.read_runtime_version(stub_libs["1.3.0"]) == "1.3.0"
    assert rk.read_runtime_version(stub_libs["1.2.0"]) == "1.2.0"


def test_version_reader_refuses_files_without_or_with_ambiguous_versions(tmp_path):
    none = tmp_path / "none.so"
    none.write_bytes(b"\x7fELF\x00no version here\x000.9.8\x00")
    with pytest.raises(rk.RkllmVersionError, match="no RKLLM runtime version string"):
        rk.read_runtime_version(none)
    two = tmp_path / "two.so"
    two.write_bytes(b"\x00" + b"1.2.0" + b"\x00junk\x00" + b"1.3.0" + b"\x00")
    with pytest.raises(rk.RkllmVersionError, match=r"1\.2\.0, 1\.3\.0"):
        rk.read_runtime_version(two)
    with pytest.raises(rk.RkllmError, match="cannot read"):
        rk.read_runtime_version(tmp_path / "missing.so")


def test_a_1_2_runtime_is_refused_before_any_call(monkeypatch, stub_libs, model):
    with pytest.raises(rk.RkllmVersionError) as e:
        rk.RkllmLibrary(stub_libs["1.2.0"])
    msg = str(e.value)
    assert "1.2.0 found" in msg and "1.3.x required" in msg and str(stub_libs["1.2.0"]) in msg
    with pytest.raises(EngineError) as e:
        make_engine(monkeypatch, stub_libs["1.2.0"], model)
    assert isinstance(e.value.__cause__, rk.RkllmVersionError)
    # a version given by hand is checked too
    with pytest.raises(rk.RkllmVersionError, match="1.1.2 found"):
        rk.RkllmLibrary(stub_libs["1.3.0"], runtime_version="1.1.2")
    assert rk.RkllmLibrary(stub_libs["1.3.0"], runtime_version="1.3.1").version == "1.3.1"


def test_socs_that_cannot_run_rkllm_are_refused(monkeypatch, stub, model):
    for soc in ("RK3566", "rk3568"):
        with pytest.raises(EngineError) as e:
            make_engine(monkeypatch, stub, model, soc=soc)
        assert isinstance(e.value.__cause__, rk.RkllmSocError)
        assert soc in str(e.value) and "llama.cpp" in str(e.value)
    with pytest.raises(rk.RkllmSocError, match="x86_64"):
        rk.check_soc("x86_64")
    assert rk.check_soc("RK3588") == "rk3588" and rk.check_soc("rk3576") == "rk3576"


def test_missing_library_names_the_places_searched(monkeypatch, tmp_path):
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path))
    with pytest.raises(rk.RkllmError, match=str(tmp_path)):
        rk.find_library()


# ---------------------------------------------------------------- generation


def test_streaming_yields_tokens_in_order_and_perf_figures(monkeypatch, stub, model):
    eng = make_engine(monkeypatch, stub, model, tokens="The| blue| box| is| on| shelf| 3|.")
    try:
        pieces = list(eng.stream(ask("Where is the blue box?", max_tokens=32)))
        stats = eng.last_stats
    finally:
        eng.close()
    assert pieces == ["The", " blue", " box", " is", " on", " shelf", " 3", "."]
    assert stats.completion_tokens == 8 and stats.finish_reason == "stop"
    assert stats.prompt_tokens > 0 and stats.ttft_ms > 0 and stats.tokens_per_s > 0
    assert stats.extra["generate_tokens"] == 8 and stats.extra["memory_mib"] > 0


def test_max_tokens_reaches_the_runtime_and_sets_length(monkeypatch, stub, model):
    eng = make_engine(monkeypatch, stub, model, tokens="a|b|c|d|e")
    try:
        text, stats = generate(eng, ask("count", max_tokens=2))
    finally:
        eng.close()
    assert text == "ab" and stats.finish_reason == "length"


def test_stop_string_ends_the_answer_before_it(monkeypatch, stub, model):
    # the stop string arrives split over two tokens: the held-back " EN" must not be yielded
    eng = make_engine(monkeypatch, stub, model, tokens="Shelf| 3|.| EN|D| garbage")
    try:
        text, stats = generate(eng, ask("where?", stop=(" END",)))
    finally:
        eng.close()
    assert text == "Shelf 3." and stats.finish_reason == "stop"


def test_init_failure_is_an_engine_error_with_the_reason(monkeypatch, stub, model):
    with pytest.raises(EngineError, match=r"rkllm_init failed \(status -1\)") as e:
        make_engine(monkeypatch, stub, model, mode="fail_init")
    assert str(model) in str(e.value)
    with pytest.raises(EngineError, match="neither an existing .rkllm file"):
        RkllmEngine(model.parent / "nope.rkllm", 1024, library=stub)


def test_error_callback_raises_and_marks_the_engine_unhealthy(monkeypatch, stub, model):
    eng = make_engine(monkeypatch, stub, model, mode="error")
    try:
        assert eng.healthy
        with pytest.raises(EngineError, match="RKLLM_RUN_ERROR"):
            generate(eng, ask("hi"))
        assert not eng.healthy
    finally:
        eng.close()


def test_a_refused_run_is_an_error_but_not_a_sick_engine(monkeypatch, stub, model):
    eng = make_engine(monkeypatch, stub, model, mode="reject")
    try:
        with pytest.raises(EngineError, match="rkllm_run returned -1"):
            generate(eng, ask("hi"))
        assert eng.healthy
    finally:
        eng.close()


@pytest.mark.timeout(HANG_GUARD_S)
def test_a_hung_run_is_aborted_at_its_timeout_and_the_engine_marked_unhealthy(monkeypatch, stub, model):
    eng = make_engine(monkeypatch, stub, model, mode="hang", timeout_s=0.3)
    try:
        with pytest.raises(EngineError, match="exceeded its timeout of 0.3 s; aborted"):
            generate(eng, ask("hi"))
        assert not eng.healthy
        assert not eng.lib.is_running(eng.handle)  # rkllm_abort made rkllm_run return
    finally:
        eng.close()


@pytest.mark.timeout(HANG_GUARD_S)
def test_cancel_aborts_the_run_without_an_error(monkeypatch, stub, model):
    eng = make_engine(monkeypatch, stub, model, tokens="|".join("abcdefghij"), delay_ms=20)
    cancel = CancelToken()
    got = []
    try:
        for piece in eng.stream(ask("go", max_tokens=64), cancel):
            got.append(piece)
            cancel.cancel()
        stats = eng.last_stats
    finally:
        eng.close()
    assert got[0] == "a" and len(got) < 10
    assert stats.cancelled and stats.finish_reason == "cancelled"


@pytest.mark.timeout(HANG_GUARD_S)
def test_one_npu_job_at_a_time_the_second_waits(monkeypatch, stub, model):
    """Two threads on one engine: the second generation waits for the first (both finish whole);
    the stand-in never sees two rkllm_run calls at once."""
    eng = make_engine(monkeypatch, stub, model, tokens="a|b|c|d|e", delay_ms=15)
    eng.lib.cdll.rkllm_stub_reset_counters()
    first_token = threading.Event()
    results: dict[str, str] = {}

    def job(name, signal=None):
        out = []
        for piece in eng.stream(ask(name)):
            out.append(piece)
            if signal is not None:
                signal.set()
        results[name] = "".join(out)

    try:
        a = threading.Thread(target=job, args=("A", first_token))
        a.start()
        assert first_token.wait(HANG_GUARD_S)
        b = threading.Thread(target=job, args=("B",))
        b.start()
        a.join(HANG_GUARD_S)
        b.join(HANG_GUARD_S)
    finally:
        eng.close()
    assert results == {"A": "abcde", "B": "abcde"}
    assert eng.lib.cdll.rkllm_stub_max_concurrent() == 1


@pytest.mark.timeout(HANG_GUARD_S)
def test_one_npu_job_at_a_time_refused_when_the_wait_runs_out(monkeypatch, stub, model):
    busy = make_engine(monkeypatch, stub, model, mode="hang", timeout_s=HANG_GUARD_S)
    other = make_engine(monkeypatch, stub, model, mode="stream", wait_s=0)
    cancel = CancelToken()
    t = threading.Thread(target=lambda: list(busy.stream(ask("long"), cancel)))
    try:
        t.start()
        while not busy.lib.is_running(busy.handle):  # the hung run has started
            time.sleep(0.005)
        with pytest.raises(EngineError, match="NPU busy"):
            generate(other, ask("hi"))
        cancel.cancel()
        t.join(HANG_GUARD_S)
        assert busy.last_stats.cancelled
        assert generate(other, ask("hi"))[0] == "Hello world."  # the NPU is free again
    finally:
        busy.close()
        other.close()


def test_smoke_passes_on_a_working_runtime_and_fails_on_the_first_token(monkeypatch, stub, model):
    good = make_engine(monkeypatch, stub, model)
    bad = make_engine(monkeypatch, stub, model, mode="fail_first_token")
    try:
        stats = good.smoke(timeout_s=5)
        assert good.healthy and stats.completion_tokens == 1
        assert bad.healthy  # rkllm_init succeeded (case C13) ...
        with pytest.raises(EngineError, match="smoke inference failed"):
            bad.smoke(timeout_s=5)
        assert not bad.healthy and "RKLLM_RUN_ERROR" in bad.last_error  # ... the first token did not
    finally:
        good.close()
        bad.close()


def test_json_schema_requests_are_refused(monkeypatch, stub, model):
    eng = make_engine(monkeypatch, stub, model)
    try:
        with pytest.raises(EngineError, match="JSON schema"):
            generate(eng, ask("json", json_schema={"type": "object"}))
        assert eng.healthy
    finally:
        eng.close()


# ---------------------------------------------------------------- context (case C10)


def test_oldest_turns_are_trimmed_to_fit_and_an_oversized_question_refused(monkeypatch, stub, model):
    eng = make_engine(monkeypatch, stub, model, n_ctx=96)
    old = "turn one about the red crate " * 6
    msgs = [{"role": "system", "content": "Be brief."},
            {"role": "user", "content": old}, {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "Where is the blue box?"}]
    try:
        generate(eng, GenerationRequest(messages=msgs, max_tokens=16))
        assert eng.last_stats.trimmed_messages == 2
        prompt = described(eng)["run.prompt"]
        assert "Be brief." in prompt and "blue box" in prompt and "red crate" not in prompt
        with pytest.raises(ContextOverflow):
            generate(eng, ask("x" * 1000, max_tokens=16))
    finally:
        eng.close()


def test_token_estimate_never_undercounts_a_real_bpe_tokenizer():
    """Without a tokenizer.json the engine over-estimates; checked against SmolLM2's tokenizer."""
    from llama_cpp import Llama

    llm = Llama(model_path=str(resolve("smollm2-135m-instruct-q4_1")), vocab_only=True, verbose=False)
    texts = ["Where is the blue box? It is on shelf 3 in aisle B.",
             "The quick brown fox jumps over the lazy dog near the riverbank every morning.",
             "蓝色的盒子在哪里？在B通道的三号架子上。", "我们的仓库有三百个箱子，其中一半是空的。",
             "Inventory: 12 x M8 bolts, 4 x 2.5 mm drill bits, 1 roll of tape.",
             "Order 1234567890 shipped 2024-05-01.",
             "<|im_start|>user\nWhere is it?<|im_end|>\n<|im_start|>assistant\n"]
    for t in texts:
        real = len(llm.tokenize(t.encode(), add_bos=False, special=False))
        assert real <= estimate_tokens(t) <= 3 * real, t


def test_chat_template_is_configurable():
    t = ChatTemplate(message="<{role}>{content}</{role}>", generation_prompt="<assistant>", default_system="S")
    assert t.render([{"role": "user", "content": "hi"}]) == "<system>S</system><user>hi</user><assistant>"
    with pytest.raises(ValueError, match="message 0"):
        ChatTemplate().render([{"role": "user"}])
