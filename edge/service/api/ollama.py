"""The Ollama routes (shapes follow docs.ollama.com/api):

``POST /api/chat``      ``{model, messages, stream=true, format, options}`` → NDJSON lines
                        ``{model, created_at, message{role, content}, done}``, the last with
                        ``done: true``, ``done_reason`` and the usage figures (``total_duration``,
                        ``load_duration``, ``prompt_eval_count``, ``prompt_eval_duration``,
                        ``eval_count``, ``eval_duration``; ns); one JSON object when ``stream`` is false.
``POST /api/generate``  ``{model, prompt, system, stream, format, options}`` → the same with
                        ``response`` instead of ``message``.
``GET /api/tags``       the model served, and the box's grounded dialog (``api.stock_model_name``,
                        :mod:`edge.service.api.stock`) when the store is served.

A request for ``api.stock_model_name`` is answered by the box's dialog, not the raw model: its last
user message is one turn; the answer comes whole (one line, then the ``done`` line).

Options honoured: ``temperature``, ``num_predict``, ``stop``; ``format`` is ``"json"`` or a JSON schema.
Errors are ``{error: message}``.
"""
from __future__ import annotations

import datetime as dt
import json
import time
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import JSONResponse, StreamingResponse

from edge.llm.base import GenerationRequest, GenerationStats
from edge.service.api.deps import ApiContext, api_context
from edge.service.api.metrics import active_label
from edge.service.api.queue import Job, error_status
from edge.service.api.schemas import (
    OllamaChat,
    OllamaGenerate,
    check_budget,
    check_prompt,
    messages_of,
    stops_of,
)
from edge.service.api.stock import answer_request

router = APIRouter()


def now_rfc3339() -> str:
    """The current UTC time as RFC 3339 with a ``Z`` suffix (Ollama's ``created_at``)."""
    return dt.datetime.now(dt.timezone.utc).isoformat().replace("+00:00", "Z")


def schema_of_format(fmt) -> dict | None:
    """Ollama ``format``: ``"json"`` (any JSON object) or a JSON schema. Raises HTTPException 400."""
    if fmt in (None, ""):
        return None
    if fmt == "json":
        return {"type": "object"}
    if isinstance(fmt, dict):
        return fmt
    raise HTTPException(400, f"format must be 'json' or a JSON schema object, got {fmt!r}")


def usage(stats: GenerationStats) -> dict:
    """The final line's ``done_reason`` and durations (ns; the prompt's is the time to first token)."""
    total_ns = int(stats.total_ms * 1e6)
    prompt_ns = int(stats.ttft_ms * 1e6)
    return {"done_reason": "length" if stats.finish_reason == "length" else "stop", "total_duration": total_ns,
            "load_duration": 0, "prompt_eval_count": stats.prompt_tokens, "prompt_eval_duration": prompt_ns,
            "eval_count": stats.completion_tokens, "eval_duration": max(0, total_ns - prompt_ns)}


def wrap(key: str, text: str) -> dict:
    """``text`` as ``/api/chat``'s ``message`` (``key == "message"``) or ``/api/generate``'s ``response``."""
    return {"message": {"role": "assistant", "content": text}} if key == "message" else {"response": text}


def request_of(ctx: ApiContext, messages: list[dict], body: OllamaChat | OllamaGenerate) -> GenerationRequest:
    """The generation ``body`` asks for. Raises HTTPException 413 (too many messages or
    characters) or 400 (``options.num_predict`` 0 or over ``api.max_predict``, a bad ``format``)."""
    o = body.options
    check_prompt(ctx.settings, messages)
    return GenerationRequest(messages, max_tokens=check_budget(ctx.settings, "options.num_predict", o.num_predict,
                                                               ctx.settings.max_tokens),
                             json_schema=schema_of_format(body.format), stop=stops_of(o.stop),
                             temperature=ctx.default_temperature if o.temperature is None else o.temperature)


async def lines(job: Job, first, model: str, key: str):
    """The NDJSON stream from event ``first`` on; leaving it (done, or the client went away)
    cancels the generation."""
    item = first
    try:
        while True:
            kind, val = item
            if kind == "piece":
                yield json.dumps({"model": model, "created_at": now_rfc3339(), **wrap(key, val),
                                  "done": False}) + "\n"
            elif kind == "done":
                yield json.dumps({"model": model, "created_at": now_rfc3339(), **wrap(key, ""),
                                  "done": True, **usage(val)}) + "\n"
                return
            else:
                yield json.dumps({"error": error_status(val)[1]}) + "\n"
                return
            item = await job.events.get()
    finally:
        job.cancel.cancel()


async def answer(ctx: ApiContext, request: Request, req: GenerationRequest, model: str, stream: bool, key: str):
    """Generate ``req``: one JSON object, or an NDJSON stream when ``stream``."""
    path = request.url.path
    job, first, failed = await ctx.start(path, req, request)
    if failed is not None:
        return failed
    if not stream:
        got = await ctx.whole(job, first, request)
        if got is None:
            return ctx.gone(path)
        text, end = got
        if isinstance(end, Exception):
            return ctx.error(path, *error_status(end), False)
        ctx.count(path, 200)
        return JSONResponse({"model": ctx.name_of(model), "created_at": now_rfc3339(), **wrap(key, text),
                             "done": True, **usage(end)})
    ctx.count(path, 200)
    return StreamingResponse(lines(job, first, ctx.name_of(model), key), media_type="application/x-ndjson")


async def stock_answer(ctx: ApiContext, request: Request, messages: list[dict], model: str, stream: bool, key: str):
    """The grounded dialog's answer (:mod:`edge.service.api.stock`): one JSON object, or the answer as
    one NDJSON line and the final ``done`` line."""
    check_prompt(ctx.settings, messages)
    started = now_ns()
    turn = await answer_request(ctx.stock, request, messages, bool(ctx.settings.token))
    ctx.count(request.url.path, 200)
    end = {"done": True, "done_reason": "stop", "total_duration": now_ns() - started, "load_duration": 0,
           "prompt_eval_count": 0, "prompt_eval_duration": 0, "eval_count": 0, "eval_duration": 0}
    if not stream:
        return JSONResponse({"model": model, "created_at": now_rfc3339(), **wrap(key, turn.text), **end})

    async def body():
        yield json.dumps({"model": model, "created_at": now_rfc3339(), **wrap(key, turn.text), "done": False}) + "\n"
        yield json.dumps({"model": model, "created_at": now_rfc3339(), **wrap(key, ""), **end}) + "\n"
    return StreamingResponse(body(), media_type="application/x-ndjson")


def now_ns() -> int:
    return time.monotonic_ns()


@router.post("/api/chat")
async def api_chat(body: OllamaChat, request: Request, ctx: Annotated[ApiContext, Depends(api_context)]):
    if ctx.is_stock(body.model):
        return await stock_answer(ctx, request, messages_of(body.messages), body.model, body.stream, "message")
    req = request_of(ctx, messages_of(body.messages), body)
    return await answer(ctx, request, req, body.model, body.stream, "message")


@router.post("/api/generate")
async def api_generate(body: OllamaGenerate, request: Request, ctx: Annotated[ApiContext, Depends(api_context)]):
    msgs = ([{"role": "system", "content": body.system}] if body.system else []) + \
        [{"role": "user", "content": body.prompt}]
    if ctx.is_stock(body.model):
        return await stock_answer(ctx, request, msgs, body.model, body.stream, "response")
    return await answer(ctx, request, request_of(ctx, msgs, body), body.model, body.stream, "response")


@router.get("/api/tags")
async def tags(ctx: Annotated[ApiContext, Depends(api_context)]):
    ctx.count("/api/tags", 200)
    names = [ctx.settings.model_name] + ([ctx.settings.stock_model_name] if ctx.stock is not None else [])
    return {"models": [{"name": name, "model": name, "modified_at": now_rfc3339(), "size": 0, "digest": "",
                        "details": {"format": "gguf", "family": active_label(ctx.engine)}} for name in names]}
