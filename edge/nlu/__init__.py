"""Understanding: text → :class:`Intent`. The grammar path first, the LLM for the rest."""
from edge.nlu.types import INTENTS, Intent

__all__ = ["INTENTS", "Intent"]
