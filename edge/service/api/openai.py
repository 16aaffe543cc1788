"""The OpenAI routes:

``POST /v1/chat/completions``  a ``chat.completion`` object, or with ``stream: true`` server-sent
                               events ``data: {chat.completion.chunk}`` then ``data: [DONE]``
                               (a last chunk with ``usage`` and no choices when
                               ``stream_options.include_usage``).
``GET /v1/models``             the model served, and the box's grounded dialog
                               (``api.stock_model_name``, :mod:`edge.service.api.stock`) when served.

Honoured: ``temperature``, ``max_completion_tokens``/``max_tokens``, ``stop``, ``response_format``
(``json_object`` or ``json_schema``). Errors are ``{error: {message, type, code}}``.
"""
from __future__ import annotations

import json
import time
import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import JSONResponse, StreamingResponse

from edge.llm.base import GenerationRequest, GenerationStats
from edge.service.api.deps import ApiContext, api_context
from edge.service.api.queue import Job, error_status
from edge.service.api.schemas import OpenAIChat, check_budget, check_prompt, messages_of, stops_of
from edge.service.api.stock import answer_request

router = APIRouter()


def schema_of_response_format(rf: dict | None) -> dict | None:
    """OpenAI ``response_format``: ``{"type": "json_object"}`` or ``{"type": "json_schema",
    "json_schema": {"name", "schema"}}``; ``{"type": "text"}`` = none. Raises HTTPException 400."""
    if not rf or rf.get("type") in (None, "text"):
        return None
    if rf.get("type") == "json_object":
        return {"type": "object"}
    if rf.get("type") == "json_schema":
        schema = (rf.get("json_schema") or {}).get("schema")
        if not isinstance(schema, dict):
            raise HTTPException(400, "response_format.json_schema.schema must be a JSON schema object")
        return schema
    raise HTTPException(400, f"response_format.type must be text, json_object or json_schema, got {rf.get('type')!r}")


def finish_reason(stats: GenerationStats) -> str:
    return "length" if stats.finish_reason == "length" else "stop"


def usage(stats: GenerationStats) -> dict:
    return {"prompt_tokens": stats.prompt_tokens, "completion_tokens": stats.completion_tokens,
            "total_tokens": stats.prompt_tokens + stats.completion_tokens}


class Completion:
    """One completion's identity (``id``, ``created`` in s since the epoch, ``model``) and its bodies."""

    def __init__(self, model: str):
        self.id, self.created, self.model = f"chatcmpl-{uuid.uuid4().hex}", int(time.time()), model

    def whole(self, text: str, stats: GenerationStats) -> dict:
        """The ``chat.completion`` object."""
        return {"id": self.id, "object": "chat.completion", "created": self.created, "model": self.model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": finish_reason(stats)}],
                "usage": usage(stats)}

    def chunk(self, delta: dict, finish: str | None) -> str:
        """One ``chat.completion.chunk`` event."""
        return "data: " + json.dumps({"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                                      "model": self.model, "choices": [{"index": 0, "delta": delta,
                                                                        "finish_reason": finish}]}) + "\n\n"

    def usage_chunk(self, stats: GenerationStats) -> str:
        """The last chunk when ``stream_options.include_usage``: no choices, the usage."""
        return "data: " + json.dumps({"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                                      "model": self.model, "choices": [], "usage": usage(stats)}) + "\n\n"

    async def events(self, job: Job, first, include_usage: bool):
        """The SSE stream from event ``first`` on; leaving it (done, or the client went away)
        cancels the generation."""
        item = first
        try:
            yield self.chunk({"role": "assistant", "content": ""}, None)
            while True:
                kind, val = item
                if kind == "piece":
                    yield self.chunk({"content": val}, None)
                elif kind == "done":
                    yield self.chunk({}, finish_reason(val))
                    if include_usage:
                        yield self.usage_chunk(val)
                    yield "data: [DONE]\n\n"
                    return
                else:
                    yield "data: " + json.dumps({"error": {"message": error_status(val)[1]}}) + "\n\n"
                    yield "data: [DONE]\n\n"
                    return
                item = await job.events.get()
        finally:
            job.cancel.cancel()


@router.post("/v1/chat/completions")
async def openai_chat(body: OpenAIChat, request: Request, ctx: Annotated[ApiContext, Depends(api_context)]):
    path = "/v1/chat/completions"
    messages = messages_of(body.messages)
    check_prompt(ctx.settings, messages)
    if ctx.is_stock(body.model):
        return await stock_completion(ctx, request, messages, body)
    field = "max_completion_tokens" if body.max_completion_tokens is not None else "max_tokens"
    budget = check_budget(ctx.settings, field, body.max_completion_tokens or body.max_tokens, ctx.settings.max_tokens)
    req = GenerationRequest(messages, max_tokens=budget,
                            json_schema=schema_of_response_format(body.response_format), stop=stops_of(body.stop),
                            temperature=ctx.default_temperature if body.temperature is None else body.temperature)
    job, first, failed = await ctx.start(path, req, request, openai=True)
    if failed is not None:
        return failed
    completion = Completion(ctx.name_of(body.model))
    if not body.stream:
        got = await ctx.whole(job, first, request)
        if got is None:
            return ctx.gone(path)
        text, end = got
        if isinstance(end, Exception):
            return ctx.error(path, *error_status(end), True)
        ctx.count(path, 200)
        return JSONResponse(completion.whole(text, end))
    include_usage = bool((body.stream_options or {}).get("include_usage"))
    ctx.count(path, 200)
    return StreamingResponse(completion.events(job, first, include_usage), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache"})


async def stock_completion(ctx: ApiContext, request: Request, messages: list[dict], body: OpenAIChat):
    """The grounded dialog's answer (:mod:`edge.service.api.stock`) as a completion, or as one content
    chunk, the finishing chunk and ``[DONE]`` when streamed."""
    turn = await answer_request(ctx.stock, request, messages, bool(ctx.settings.token))
    ctx.count("/v1/chat/completions", 200)
    completion = Completion(body.model)
    stats = GenerationStats(finish_reason="stop")
    if not body.stream:
        return JSONResponse(completion.whole(turn.text, stats))

    async def events():
        yield completion.chunk({"role": "assistant", "content": turn.text}, None)
        yield completion.chunk({}, "stop")
        if (body.stream_options or {}).get("include_usage"):
            yield completion.usage_chunk(stats)
        yield "data: [DONE]\n\n"
    return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})


@router.get("/v1/models")
async def models(ctx: Annotated[ApiContext, Depends(api_context)]):
    ctx.count("/v1/models", 200)
    names = [ctx.settings.model_name] + ([ctx.settings.stock_model_name] if ctx.stock is not None else [])
    return {"object": "list", "data": [{"id": name, "object": "model", "created": 0, "owned_by": "edge"}
                                       for name in names]}
