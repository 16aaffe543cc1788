"""The documents as a turn uses them: one open index, a question routed to it, the answer spoken.

:meth:`DocsDesk.open` gives None when no documents are indexed (then an ``ask_docs`` question is
answered "no documents are indexed" by the dialog, never by a guessing LLM).
:meth:`DocsDesk.finds` tells the understanding whether the documents answer a free question (above
``docs.threshold``) before it goes to the LLM; :meth:`DocsDesk.answer` is the dialog's ``docs``
callable (:func:`edge.stages.dialog.act`).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from edge.stages.docs.answer import answer_question, generates, prepare
from edge.stages.docs.index import DocsIndex, open_index
from edge.stages.docs.retrieve import Retriever

if TYPE_CHECKING:
    from edge.config import Settings


class DocsDesk:
    """An open :class:`edge.stages.docs.index.DocsIndex` with its :class:`Retriever`; thread-safe
    (the index serializes its reads). ``llm``: used only when ``docs.answer`` generates."""

    def __init__(self, index: DocsIndex, settings: Settings, llm=None):
        self.index = index
        self.settings = settings
        self.retriever = Retriever(index)
        self.llm = llm if generates(settings.docs.answer, settings.llm.model) else None
        self.last = None  # the last DocsAnswer (passages and sources, for the events)

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
        return prepare(text, self.retriever, self.settings.docs, self.settings.language).answer.found

    def answer(self, text: str) -> str:
        """The spoken answer with its source ("From the … manual page, section …: …"), or the
        sentence that the documents do not say."""
        self.last = answer_question(text, self.retriever, self.settings.docs, self.llm, self.settings.language)
        return self.last.text

    def close(self) -> None:
        self.index.close()
