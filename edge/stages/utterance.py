"""The longest utterance the box takes as one turn, and what it says to a longer one.

Every entry that hands words to the understanding checks :func:`too_long` before any work:
``edge ask``, the HTTP API's documents question, Wyoming's ``handle`` (a transcript from Home
Assistant) and the console's search boxes. The voice loop's own utterances are bounded by
``endpoint.max_utterance_ms`` already. Without a bound a 100 kB "utterance" kept the understanding
busy for over a minute (its passes over the words are not all linear) and was echoed back whole.
"""
from __future__ import annotations

#: characters: ten seconds of speech (``endpoint.max_utterance_ms``) is some 30 words, ~200
#: characters; typed text gets five times that.
MAX_UTTERANCE_CHARS = 1000

_TEXT = {
    "en": "That is {n:,} characters; I take at most {cap:,} characters at a time, so nothing was done. "
          "Please say it in shorter parts.",
    "zh": "这段话有{n}个字符；我一次最多处理{cap}个字符，所以什么也没做。请分几次说。",
}


def too_long(text: str, language: str = "en", cap: int = MAX_UTTERANCE_CHARS) -> str | None:
    """The reply to ``text`` when it is over ``cap`` characters (what was wrong, that nothing was
    done, and the fix), else None. The text itself is not echoed."""
    if len(text) <= cap:
        return None
    return _TEXT.get(language, _TEXT["en"]).format(n=len(text), cap=cap)
