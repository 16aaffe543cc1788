"""edge.llm.llamacpp with the real SmolLM2-135M GGUF: streaming, stats, cancel, JSON schema, stop
strings, context trimming (C10), explicit n_ctx (C11), KV-cache size from GGUF metadata, and the
system-prompt state cache."""
from __future__ import annotations

import json

import jsonschema
import pytest

from edge.config import ConfigError, load_settings
from edge.governor.admission import model_shape
from edge.llm.base import CancelToken, ContextOverflow, EngineError, GenerationRequest, fit_messages, generate
from edge.llm.chain import specs_from_settings
from edge.llm.llamacpp import LlamaCppEngine
from edge.llm.shape import ModelShape, kv_cache_bytes
from edge.models.manifest import resolve
from edge.stages.nlu.understand import TOO_LONG, Understanding

MODEL = "smollm2-135m-instruct-q4_1"
SYSTEM = ("You are the voice assistant of a workshop stock room. Answer in at most two short, plain sentences "
          "that are easy to speak aloud. No lists, no markdown. ") * 4


@pytest.fixture(scope="module")
def engine():
    e = LlamaCppEngine(MODEL, n_ctx=2048)
    yield e
    e.close()


def ask(text: str, system: str = SYSTEM) -> list[dict]:
    return [{"role": "system", "content": system}, {"role": "user", "content": text}]


def test_stream_yields_pieces_and_stats(engine):
    req = GenerationRequest(ask("What is a screwdriver used for?"), max_tokens=24, temperature=0.0)
    pieces = list(engine.stream(req))
    s = engine.last_stats
    assert len(pieces) > 1 and "".join(pieces).strip()
    assert s.prompt_tokens == len(engine.prompt_tokens(req.messages))
    assert 1 <= s.completion_tokens <= 24
    assert s.ttft_ms > 0 and s.total_ms >= s.ttft_ms
    assert s.finish_reason in ("stop", "length")
    if s.completion_tokens > 1:
        assert s.tokens_per_s > 0


def test_max_tokens_ends_with_length(engine):
    text, s = generate(engine, GenerationRequest(ask("Tell me a long story about a dragon."), max_tokens=5,
                                                 temperature=0.0))
    assert s.completion_tokens == 5 and s.finish_reason == "length" and text


def test_cancel_stops_at_the_next_token(engine):
    cancel = CancelToken()
    got = []
    for piece in engine.stream(GenerationRequest(ask("Count slowly from one to fifty."), max_tokens=60), cancel):
        got.append(piece)
        if len(got) == 2:
            cancel.cancel()
    s = engine.last_stats
    assert s.cancelled and s.finish_reason == "cancelled"
    assert s.completion_tokens <= 3  # at most the token sampled while cancel was being set
    assert len(got) <= 3


def test_json_schema_constrains_the_output(engine):
    schema = {"type": "object", "properties": {"item": {"type": "string"}, "quantity": {"type": "integer"}},
              "required": ["item", "quantity"], "additionalProperties": False}
    text, s = generate(engine, GenerationRequest(
        [{"role": "user", "content": "Extract item and quantity as JSON: 'we took five hammers'"}],
        max_tokens=32, json_schema=schema, temperature=0.0))
    jsonschema.validate(json.loads(text), schema)
    assert s.finish_reason == "stop"


def test_stop_string_ends_and_is_not_returned(engine):
    text, s = generate(engine, GenerationRequest([{"role": "user", "content": "Count from 1 to 10 with commas."}],
                                                 max_tokens=40, temperature=0.0, stop=("5",)))
    assert "5" not in text and s.finish_reason == "stop"
    assert "4" in text  # it got as far as the stop string


# ------------------------------------------------------------------------------------ case C10


def test_c10_too_long_question_raises_context_overflow(engine):
    question = "Please remember this part number list: " + " ".join(f"part {i} bin {i % 40}" for i in range(350))
    n = engine.count_tokens(question)
    assert 2800 <= n <= 3600, n  # ~3,000 tokens against n_ctx 2048
    with pytest.raises(ContextOverflow) as ei:
        generate(engine, GenerationRequest(ask(question), max_tokens=48))
    err = ei.value
    assert isinstance(err, EngineError)
    assert err.prompt_tokens > err.budget == 2048 - 48
    assert "llm.n_ctx" in str(err)


def test_c10_understanding_answers_too_long_instead_of_raising(engine):
    question = "what about " + " ".join(f"widget {i} on shelf {i % 9}" for i in range(350))
    intent = Understanding([], engine, max_tokens=48).understand(question)
    assert intent.intent == "other" and intent.answer == TOO_LONG


def conversation(turns: int, words: int) -> list[dict]:
    history = []
    for i in range(turns):
        history.append({"role": "user", "content": f"Turn {i}: " + f"tell me about bin {i} and its contents. " * words})
        history.append({"role": "assistant", "content": f"Answer {i}: " + f"bin {i} holds screws and nuts. " * words})
    return [{"role": "system", "content": SYSTEM}] + history + [{"role": "user", "content": "Which bin has nails?"}]


def test_c10_twenty_turns_are_trimmed_oldest_first(engine):
    messages = conversation(20, 8)
    assert len(engine.prompt_tokens(messages)) > 2048  # the whole conversation does not fit
    kept, tokens, dropped = engine.fit(messages, max_tokens=48)
    assert dropped > 0 and len(tokens) <= 2048 - 48
    assert kept[0] == messages[0]  # the system prompt stays
    assert kept[1:] == messages[-(len(kept) - 1):]  # the newest turns, in order
    assert kept[1]["role"] == "user"  # never starts mid-exchange
    assert len(engine.prompt_tokens(messages[:1] + messages[-(len(kept) + 1):])) > 2048 - 48  # one more would not fit


def test_c10_a_history_of_more_turns_than_the_budget_is_trimmed_without_rendering_it_whole():
    """10,000 short turns in a 1,000-token budget: the turns beyond the budget's count are dropped
    unmeasured (each is a token at least), and the bisection finds the same fewest drops as trying
    every count in turn would."""
    def measure(msgs):  # a stand-in tokenizer: 3 tokens of template per turn, one per word
        sizes.append(len(msgs))
        n = sum(3 + len(m["content"].split()) for m in msgs)
        return "", n

    history = [{"role": "system", "content": "Be brief."}]
    for i in range(5_000):
        history += [{"role": "user", "content": f"how many in bin {i}"}, {"role": "assistant", "content": f"{i} fuses"}]
    history.append({"role": "user", "content": "Which bin has nails?"})
    for budget in (1_000, 60, 12):
        sizes: list[int] = []
        kept, _, n, dropped = fit_messages(history, budget + 8, 8, measure)
        assert max(sizes) <= budget and n <= budget and len(sizes) <= 14
        fewest = None  # every count of drops tried, from the most: the fewest that fit and start with a question
        for k in range(len(history) - 2, -1, -1):
            if measure([history[0]] + history[1 + k:])[1] > budget:
                break
            fewest = k if history[1 + k]["role"] == "user" else fewest
        assert dropped == fewest and kept == [history[0]] + history[1 + fewest:]


def test_c10_trimmed_conversation_generates(tmp_path):
    small = LlamaCppEngine(MODEL, n_ctx=512)  # a small window keeps the prompt decode short
    try:
        messages = conversation(20, 2)
        text, s = generate(small, GenerationRequest(messages, max_tokens=8, temperature=0.0))
        assert s.trimmed_messages > 0 and s.prompt_tokens <= 512 - 8 and text
        assert s.trimmed_messages == small.fit(messages, 8)[2]
    finally:
        small.close()


# ------------------------------------------------------------------------------------ case C11


@pytest.mark.parametrize("n_ctx", [0, -1])
def test_c11_engine_refuses_non_positive_n_ctx(n_ctx):
    with pytest.raises(ValueError, match=r"llm\.n_ctx"):
        LlamaCppEngine(MODEL, n_ctx=n_ctx)


def test_c11_config_refuses_n_ctx_zero():
    with pytest.raises(ConfigError, match=r"llm\.n_ctx"):
        load_settings(overrides={"llm": {"n_ctx": 0}})
    with pytest.raises(ConfigError, match=r"llm\.chain\.0.*n_ctx"):
        load_settings(overrides={"llm": {"chain": [{"engine": "rkllm", "model": "x.rkllm"}]}})
    with pytest.raises(ConfigError, match=r"llm\.chain\.0\.n_ctx"):
        load_settings(overrides={"llm": {"chain": [{"engine": "llamacpp", "model": MODEL, "n_ctx": 0}]}})
    # a llama.cpp step without one follows llm.n_ctx, which is always explicit: never 0
    s = load_settings(overrides={"llm": {"n_ctx": 1024, "chain": [{"engine": "llamacpp", "model": MODEL}]}})
    assert [spec.n_ctx for spec in specs_from_settings(s)] == [1024]


def test_kv_cache_estimate_matches_llama_cpp_state_growth(engine):
    shape = model_shape(MODEL)  # the governor's reading of the GGUF header, used for memory admission
    assert (shape.n_layers, shape.n_kv_heads, shape.head_dim, shape.head_dim_v) == (30, 3, 64, 64)
    assert shape.n_ctx_train == 8192
    assert engine.shape == ModelShape(30, 3, 64, 64, 8192, engine.shape.source)  # the loaded engine reads the same
    assert kv_cache_bytes(shape, 2048) == 2 * 2048 * 30 * 3 * 64 * 2 == 47_185_920
    # llama.cpp serializes the KV cells in use: the state grows by the KV bytes of each token
    # (plus a few bytes of cell metadata).
    import llama_cpp

    llm = engine.llm
    toks = llm.tokenize(b"stock room inventory " * 100, add_bos=False)
    sizes = []
    for n in (64, 192):
        llm.reset()
        llm.eval(toks[:n])
        sizes.append(llama_cpp.llama_state_get_size(llm.ctx))
    assert len(toks) >= 192
    per_token = (sizes[1] - sizes[0]) / 128
    assert per_token == pytest.approx(kv_cache_bytes(shape, 1), rel=0.01)
    with pytest.raises(ValueError, match="n_ctx"):
        kv_cache_bytes(shape, 0)


# ------------------------------------------------------------------------------ prompt caching


def test_system_prompt_state_is_reused_and_restored_exactly(engine):
    other = "You are a poet. You answer every question with a short rhyme about the sea. " * 5
    a = GenerationRequest(ask("What is a hammer?"), max_tokens=6, temperature=0.0)
    b = GenerationRequest(ask("What is a hammer?", system=other), max_tokens=2, temperature=0.0)
    engine.clear_prefix_states()
    engine.llm.reset()
    first, s1 = generate(engine, a)
    assert s1.extra["prefix_cache"] == "saved"
    again, s2 = generate(engine, a)
    assert s2.extra["prefix_cache"] == "reused" and again == first
    _, s3 = generate(engine, b)  # another system prompt evicts the KV cache ...
    assert s3.extra["prefix_cache"] == "saved"
    restored, s4 = generate(engine, a)  # ... and the saved state brings it back
    assert s4.extra["prefix_cache"] == "restored"
    assert restored == first  # the restored state is the same state: same greedy answer


def test_broken_gguf_fails_to_load_with_engine_error(tmp_path):
    src = resolve(MODEL)
    half = tmp_path / "half.gguf"
    with open(src, "rb") as fin, open(half, "wb") as fout:
        fout.write(fin.read(src.stat().st_size // 2))
    with pytest.raises(EngineError, match="cannot load"):
        LlamaCppEngine(str(half), n_ctx=512)


def test_missing_model_names_the_fix(tmp_path):
    with pytest.raises(FileNotFoundError, match="not an existing file"):
        LlamaCppEngine("no-such-model", n_ctx=512, models_dir=tmp_path)
