"""Understanding: text → :class:`Intent`. The template path first (hassil templates in
``templates/*.yaml`` and a site's ``<config dir>/intents/*.yaml``, guards, resolvers by name, family
and size, a bounded FTS5 shortlist), the LLM for the rest.

Helpers for the follow-up turns (:mod:`edge.stages.nlu.followup`): :func:`yes_no`, :func:`resolve_choice`,
:func:`ask_back_text`; and :func:`is_filler` (case C09).
"""
from edge.stages.nlu.filler import is_filler
from edge.stages.nlu.followup import ask_back_text, resolve_choice, yes_no
from edge.stages.nlu.types import INTENTS, Intent

__all__ = ["INTENTS", "Intent", "ask_back_text", "is_filler", "resolve_choice", "yes_no"]
