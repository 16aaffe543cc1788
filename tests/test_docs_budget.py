"""A generated documents answer fits the LLM as the governor runs it: the answer budget is the
governor's ``max_tokens`` for the turn (powersave halves ``llm.max_tokens``), the passages in the
prompt fit the engine's ``n_ctx`` as loaded with that budget, counted on the prompt the engine
renders — a long passage set is cut, never sent "too long". One short generation with the real
small GGUF model (smollm2-135m) through the chain the loop builds."""
from __future__ import annotations

import pytest

from edge.config import load_settings
from edge.llm.loader import build_governor, build_llm
from edge.loop.pipeline import apply_limits
from edge.loop.stages import Stages
from edge.stages.docs.answer import fit_passages, passage_prompt, prepare, prompt_size
from edge.stages.docs.desk import DocsDesk
from edge.stages.docs.index import DocsIndex
from edge.stages.nlu.understand import Understanding
from tests.docs_helpers import MAN_CONF, MAN_PGCTL, skip_without_documents

QUESTION = "Which shutdown modes can pg_ctl stop use?"


def test_long_passages_fit_the_governed_n_ctx_and_answer_budget(tmp_path):
    skip_without_documents((MAN_CONF, MAN_PGCTL))
    settings = load_settings(board="x86-dev", overrides={
        "store": {"path": str(tmp_path / "edge.db")}, "llm": {"n_ctx": 320, "threads": 1, "max_tokens": 24},
        "governor": {"power_mode": "powersave"}, "docs": {"answer": "generated", "embeddings": False}})
    gov = build_governor(settings)
    llm = build_llm(settings, gov)
    if llm is None or not llm.n_ctx:
        pytest.skip("the small GGUF model is not installed: run scripts/setup.sh")
    index = DocsIndex(tmp_path / "docs.db")
    index.add([MAN_PGCTL, MAN_CONF])
    desk = DocsDesk(index, settings, llm)
    try:
        lim = apply_limits(Stages(None, None, None, Understanding([], llm), None, None, governor=gov, docs=desk))
        assert lim is not None and lim.max_tokens == 12 and desk.max_tokens == 12  # powersave: half of 24
        n_ctx = llm.n_ctx  # as the governor admitted the model
        prep = prepare(QUESTION, desk.retriever, settings.docs)
        assert len(prep.hits) >= 2
        messages = fit_passages(QUESTION, prep.hits, llm, desk.max_tokens)
        kept = next(n for n in range(1, len(prep.hits) + 1) if passage_prompt(QUESTION, prep.hits[:n]) == messages)
        assert 1 <= kept < len(prep.hits)  # the long set was cut to what fits
        assert prompt_size(llm, messages) + desk.max_tokens <= n_ctx
        assert prompt_size(llm, passage_prompt(QUESTION, prep.hits[:kept + 1])) + desk.max_tokens > n_ctx
        said = desk.answer(QUESTION)
        stats = llm.last_stats
        # 12 tokens rarely finish the reply's JSON and a sentence: then the extractive answer is said
        assert desk.last.mode in ("generated", "cited", "extractive")
        assert said.startswith("From the pg_ctl manual page, section ")
        # the engine saw exactly the prompt that was counted: nothing trimmed, no overflow
        assert stats.prompt_tokens == prompt_size(llm, messages) and stats.trimmed_messages == 0
        assert stats.prompt_tokens + desk.max_tokens <= n_ctx and 0 < stats.completion_tokens <= 12
    finally:
        desk.close()
        llm.close()
