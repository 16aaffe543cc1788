"""The API's request bodies (pydantic) and what the route modules read out of them.

Extra fields are accepted and ignored, as clients send many; a field the API reads must have its
type and range (floats finite: no NaN or infinity), else the request is ``400`` naming the field
(:func:`edge.service.api.app.invalid_request`). How many messages, how many characters and how many
tokens a request may ask for are settings, checked by :func:`check_prompt` and :func:`check_budget`.
The body classes carry comments, not docstrings: pydantic would put a docstring into /openapi.json.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import HTTPException
from pydantic import BaseModel, ConfigDict, Field, FiniteFloat

if TYPE_CHECKING:
    from edge.config import ApiSettings


class LooseModel(BaseModel):
    """A request body that accepts (and ignores) fields it does not name."""

    model_config = ConfigDict(extra="allow")


# One chat turn: role and content (a string, or OpenAI content parts).
class ChatMessage(LooseModel):
    role: str
    content: str | list | None = ""


Temperature = FiniteFloat | None


# Ollama's options: the ones honoured, typed; the others (num_ctx is fixed by the config) ignored.
class OllamaOptions(LooseModel):
    temperature: Temperature = Field(None, ge=0.0, le=2.0)
    num_predict: int | None = Field(None, ge=-2)  # -1 (and -2, "fill the context"): the API default
    stop: str | list[str] | None = None


# POST /api/chat
class OllamaChat(LooseModel):
    model: str = ""
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = True
    format: str | dict | None = None
    options: OllamaOptions = OllamaOptions()


# POST /api/generate
class OllamaGenerate(LooseModel):
    model: str = ""
    prompt: str = ""
    system: str | None = None
    stream: bool = True
    format: str | dict | None = None
    options: OllamaOptions = OllamaOptions()


# POST /v1/chat/completions
class OpenAIChat(LooseModel):
    model: str = ""
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    temperature: Temperature = Field(None, ge=0.0, le=2.0)
    stop: str | list[str] | None = None
    response_format: dict | None = None
    stream_options: dict | None = None


def text_of(content) -> str:
    """A message's text: OpenAI content parts keep their text parts; ``None`` is ``""``."""
    if isinstance(content, list):
        return "".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return content or ""


def messages_of(msgs: list[ChatMessage]) -> list[dict]:
    """``[{role, content}]`` with plain-text contents, as :class:`edge.llm.base.GenerationRequest` takes."""
    return [{"role": m.role, "content": text_of(m.content)} for m in msgs]


def stops_of(stop) -> tuple[str, ...]:
    """A stop string, a list of them, or ``None`` as a tuple."""
    if stop is None:
        return ()
    return (stop,) if isinstance(stop, str) else tuple(str(s) for s in stop)


def check_prompt(settings: ApiSettings, messages: list[dict]) -> None:
    """Raise HTTPException 413 for more than ``api.max_messages`` messages or more than
    ``api.max_prompt_chars`` characters of content in all of them (before any tokenizing)."""
    if len(messages) > settings.max_messages:
        raise HTTPException(413, f"messages: {len(messages)} messages, at most {settings.max_messages} "
                                 f"(api.max_messages); send fewer turns of history")
    chars = sum(len(m["content"]) for m in messages)
    if chars > settings.max_prompt_chars:
        raise HTTPException(413, f"messages: {chars} characters in all, at most {settings.max_prompt_chars} "
                                 f"(api.max_prompt_chars); send a shorter prompt or less history")


def check_budget(settings: ApiSettings, field: str, n: int | None, default: int) -> int:
    """Tokens to generate: ``n`` (``None`` or negative: ``default``). Raises HTTPException 400
    naming ``field`` for 0 or more than ``api.max_predict``."""
    if n is None or n < 0:
        return default
    if n == 0 or n > settings.max_predict:
        raise HTTPException(400, f"{field}: {n} tokens asked for; give 1 to {settings.max_predict} "
                                 f"(api.max_predict), or -1 for the default")
    return n
