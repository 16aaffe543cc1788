"""``POST /api/docs/ask``: an answer from the site's documents, with the passages and their sources.

Request ``{"question": str}``; response ``{"answer", "found", "mode", "sources": [...],
"passages": [{"text", "source": {title, section, headings, page, file}, "confidence", "score"}]}``
— the same answer ``edge ask --docs`` gives (:func:`edge.stages.docs.answer.answer_question`,
answer budget ``llm.max_tokens``).
A generated answer (``docs.answer``) runs through the API's one generation queue like every
other request. The index is ``docs.index`` of the settings ``edge serve`` runs with; ``503`` when
it holds no documents yet, ``400`` for an empty question.
"""
from __future__ import annotations

import threading
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from edge.llm.base import ContextOverflow
from edge.service.api.deps import ApiContext, api_context
from edge.stages.docs.answer import generates, generation_request, prepare, shown_in, with_generated
from edge.stages.docs.index import DocsIndex, open_index
from edge.stages.docs.retrieve import Retriever
from edge.stages.utterance import too_long

router = APIRouter()
PATH = "/api/docs/ask"
_LOCK = threading.Lock()


class DocsQuestion(BaseModel):
    question: str = Field(min_length=1)  # its length: checked by the handler (edge.stages.utterance)


def docs_retriever(request: Request) -> tuple[Retriever | None, object]:
    """The app's retriever over the settings' index (opened once, kept in ``app.state.docs``) and
    the settings; ``(None, settings)`` when the app was built without settings."""
    console = getattr(request.app.state, "console", None)
    settings = getattr(console, "settings", None)
    if settings is None:
        return None, None
    with _LOCK:
        r = getattr(request.app.state, "docs", None)
        if r is None:
            index: DocsIndex = open_index(settings)
            r = request.app.state.docs = Retriever(index)
    return r, settings


@router.post(PATH)
async def ask(body: DocsQuestion, request: Request, ctx: Annotated[ApiContext, Depends(api_context)]):
    if not body.question.strip():
        return ctx.error(PATH, 400, "question is empty", openai=False)
    refusal = too_long(body.question)
    if refusal is not None:
        return ctx.error(PATH, 400, f"question: {refusal}", openai=False)
    retriever, settings = await run_in_threadpool(docs_retriever, request)
    if retriever is None:
        return ctx.error(PATH, 503, "documents are not configured on this server", openai=False)
    if not await run_in_threadpool(retriever.index.count):
        return ctx.error(PATH, 503, f"no documents indexed in {retriever.index.path}; add them with "
                                    f"'edge docs add FILE|DIR'", openai=False)
    prep = await run_in_threadpool(prepare, body.question, retriever, settings.docs, settings.language)
    answer = prep.answer
    if answer.found and generates(settings.docs.answer, settings.llm.model):
        budget = settings.llm.max_tokens  # the answer budget edge ask and the voice loop give
        try:
            req = await run_in_threadpool(generation_request, body.question, prep.hits, ctx.engine, budget)
            prep.shown = shown_in(req)
        except ContextOverflow:
            req = None
        if req is not None:
            job, first, err = await ctx.start(PATH, req, request)
            if err is not None and err.status_code == 499:  # the client left
                return err
            got = await ctx.whole(job, first, request) if err is None else None
            if err is None and got is None:
                return ctx.gone(PATH)
            if got is not None:
                text, stats = got
                answer = with_generated(prep, None if isinstance(stats, Exception) else text)
    ctx.count(PATH, 200)
    return JSONResponse(answer.to_dict())
