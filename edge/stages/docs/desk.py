"""The documents as a turn uses them: one open index, a question routed to it, the answer spoken.

:meth:`DocsDesk.open` gives None when no documents are indexed (then an ``ask_docs`` question is
answered "no documents are indexed" by the dialog, never by a guessing LLM).
:meth:`DocsDesk.finds` tells the understanding whether the documents answer a free question (above
``docs.threshold``) before it goes to the LLM; :meth:`DocsDesk.answer` is the dialog's ``docs``
callable (:func:`edge.stages.dialog.act`). A turn that asked :meth:`~DocsDesk.finds` and then
:meth:`~DocsDesk.answer` for the same words retrieves once.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from edge.stages.docs.answer import Prepared, answer_question, generates, prepare
from edge.stages.docs.index import DocsIndex, open_index
from edge.stages.docs.retrieve import Retriever

if TYPE_CHECKING:
    from edge.config import Settings


class DocsDesk:
    """An open :class:`edge.stages.docs.index.DocsIndex` with its :class:`Retriever`; thread-safe
    (the index serializes its reads). ``llm``: used only when ``docs.answer`` generates.

    ``max_tokens``: the generated answer's budget in tokens; ``llm.max_tokens`` until the governor
    sets it for a turn (:func:`edge.loop.pipeline.apply_limits`: shorter when warm). The passages
    in the prompt fit the LLM's ``n_ctx`` as loaded with this budget."""

    def __init__(self, index: DocsIndex, settings: Settings, llm=None):
        self.index = index
        self.settings = settings
        self.retriever = Retriever(index)
        self.llm = llm if generates(settings.docs.answer, settings.llm.model) else None
        self.max_tokens = settings.llm.max_tokens
        self.last = None  # the last DocsAnswer (passages and sources, for the events)
        self._lock = threading.Lock()
        self._found: tuple[str, Prepared] | None = None  # finds()'s retrieval, for answer() on the same words

    @classmethod
    def open(cls, settings: Settings, llm=None) -> DocsDesk | None:
        """The desk over the configured index, or None when the index file is missing or empty.

        Raises:
            edge.stages.docs.index.DocsIndexError: the index exists but cannot be opened."""
        if not Path(settings.docs.index_path(settings.store.path)).exists():
            return None
        index = open_index(settings)
        if not index.count():
            index.close()
            return None
        return cls(index, settings, llm)

    def finds(self, text: str) -> bool:
        """Whether the best passage for ``text`` clears ``docs.threshold`` (one retrieval, ≤ 50 ms at
        10,000 chunks). Raises nothing for any text."""
        prep = prepare(text, self.retriever, self.settings.docs, self.settings.language)
        with self._lock:
            self._found = (text, prep)
        return prep.answer.found

    def answer(self, text: str) -> str:
        """The spoken answer with its source ("From the … manual page, section …: …"; Mandarin:
        "根据《…》手册，第…节：…"), or the sentence that the documents do not say."""
        with self._lock:
            found, self._found = self._found, None
        prep = found[1] if found is not None and found[0] == text else None
        self.last = answer_question(text, self.retriever, self.settings.docs, self.llm, self.settings.language,
                                    max_tokens=self.max_tokens, prepared=prep)
        return self.last.text

    def close(self) -> None:
        self.retriever.close()
        self.index.close()
