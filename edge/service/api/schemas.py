"""The API's request bodies (pydantic) and what the route modules read out of them.

Extra fields are accepted and ignored, as clients send many. A malformed body is ``422`` (FastAPI).
The body classes carry comments, not docstrings: pydantic would put a docstring into /openapi.json.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class LooseModel(BaseModel):
    """A request body that accepts (and ignores) fields it does not name."""

    model_config = ConfigDict(extra="allow")


# One chat turn: role and content (a string, or OpenAI content parts).
class ChatMessage(LooseModel):
    role: str
    content: str | list | None = ""


# POST /api/chat
class OllamaChat(LooseModel):
    model: str = ""
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = True
    format: str | dict | None = None
    options: dict[str, Any] = {}


# POST /api/generate
class OllamaGenerate(LooseModel):
    model: str = ""
    prompt: str = ""
    system: str | None = None
    stream: bool = True
    format: str | dict | None = None
    options: dict[str, Any] = {}


# POST /v1/chat/completions
class OpenAIChat(LooseModel):
    model: str = ""
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    stop: str | list[str] | None = None
    response_format: dict | None = None
    stream_options: dict | None = None


def text_of(content) -> str:
    """A message's text: OpenAI content parts keep their text parts; ``None`` is ``""``."""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def messages_of(msgs: list[ChatMessage]) -> list[dict]:
    """``[{role, content}]`` with plain-text contents, as :class:`edge.llm.base.GenerationRequest` takes."""
    return [{"role": m.role, "content": text_of(m.content)} for m in msgs]


def stops_of(stop) -> tuple[str, ...]:
    """A stop string, a list of them, or ``None`` as a tuple."""
    if stop is None:
        return ()
    return (stop,) if isinstance(stop, str) else tuple(str(s) for s in stop)
