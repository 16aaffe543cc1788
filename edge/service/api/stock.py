"""The box's grounded dialog as a model of its own (``api.stock_model_name``, ``edge-stock``) on the
Ollama and OpenAI chat endpoints: Home Assistant's Ollama integration, or any OpenAI client, asks
the stock in words and gets the answer the box would say.

The last user message is one turn: templates, paraphrase matcher, documents, then the grounded
answers (:mod:`edge.stages.grounded`) — the model never writes. A turn that would write (a log, a
transfer, a count, an undo) is refused with a sentence unless ``api.stock_writes`` is on and the
request carried ``api.token``; then it goes through the same dialog (guards, read-backs) as a voice
turn. A read-back's or ask-back's question waits :data:`FOLLOW_UP_S` for the same client's next
message.
"""
from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass

from edge.loop.build import attach_grounded, build_understanding, open_docs
from edge.stages.dialog import Pending, act, follow_up
from edge.stock.periods import Calendar
from edge.stock.store import Store, StoreError

#: intents that write a record
WRITES = ("log_record", "transfer", "stock_count", "undo")
#: s a question the dialog asked waits for the same client's answer
FOLLOW_UP_S = 60.0
READ_ONLY = ("I can only look things up through this connection, so nothing was logged. "
             "Say it to the box, or use a connection that may log.")


@dataclass
class Turn:
    """One answered message: the ``text``, the ``intent`` understood and whether a record was written."""

    text: str
    intent: str | None
    wrote: bool = False


class StockDesk:
    """One store, understanding and documents for the API's ``edge-stock`` model. ``writes``:
    ``api.stock_writes``. Turns run one at a time (a lock); the engine is the API's."""

    def __init__(self, settings, engine, writes: bool = False):
        self.settings = settings
        self.writes = writes
        self.store = Store(settings.store.path, calendar=Calendar.from_settings(settings.store))
        self.und = build_understanding(settings, self.store, engine)
        self.und.docs = open_docs(settings, engine)
        attach_grounded(settings, self.und, self.store)
        self._version = self.store.items_version()
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[Pending, float]] = {}

    def ask(self, text: str, client: str, authorized: bool) -> Turn:
        """Answer ``text`` from ``client`` (a key for its pending question). ``authorized``: the
        request carried ``api.token``. Raises nothing for a store that refuses a write (said)."""
        may_write = self.writes and authorized
        turn_id = f"api-{uuid.uuid4().hex[:12]}"
        lang = self.settings.language
        with self._lock:
            if self.store.items_version() != self._version:  # an import or a new place: the names follow
                self._version = self.store.items_version()
                self.und.rebuild(self.store.items())
            waiting = self._pending.pop(client, None)
            try:
                if waiting is not None and time.monotonic() - waiting[1] < FOLLOW_UP_S and may_write:
                    out = follow_up(waiting[0], text, self.store, turn_id, lang)
                    intent_name = waiting[0].intent.intent
                else:
                    intent = self.und.understand(text)
                    if intent is None:
                        return Turn("Sorry, I didn't catch any words.", None)
                    if (intent.intent in WRITES or intent.parts) and not may_write:
                        return Turn(READ_ONLY, intent.intent)
                    docs = self.und.docs.answer if self.und.docs is not None else None
                    out = act(intent, self.store, text, turn_id, language=lang, docs=docs)
                    intent_name = intent.intent
            except StoreError as e:
                return Turn(f"Nothing was logged: {e}", None)
            if out.pending is not None and may_write:
                self._pending[client] = (out.pending, time.monotonic())
            return Turn(out.text, intent_name, out.record is not None)

    def close(self) -> None:
        self.store.close()


async def answer_request(desk: StockDesk, request, messages: list[dict], token_set: bool) -> Turn:
    """One turn for an HTTP ``request`` (its last user message), run on a worker thread. The client
    key is its address and token; ``token_set``: ``api.token`` is set (the guard has checked it)."""
    from starlette.concurrency import run_in_threadpool

    client = f"{request.client.host if request.client else '?'}|{hash(request.headers.get('authorization', ''))}"
    return await run_in_threadpool(desk.ask, last_user_text(messages), client, token_set)


def last_user_text(messages: list[dict]) -> str:
    """The text of the last user message ("" when there is none)."""
    for m in reversed(messages):
        if m.get("role") == "user":
            return str(m.get("content") or "")
    return ""
