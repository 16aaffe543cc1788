"""Filler: words that are not a command (case C09).

Whisper writes a few stock phrases when it hears silence, hum or breath ("you", "Thank you.",
"Thanks for watching!", "[BLANK_AUDIO]", in Chinese "谢谢观看" or subtitle credits): its training
data is subtitles, and these are what subtitles say over silence (openai/whisper discussions #679
and #928, "hallucinations on silence"). A hesitation ("uh", "um", "嗯") alone is not a command
either. :func:`is_filler` says a transcript is nothing but such words, so the caller treats it as
no speech; :func:`strip_leading_fillers` drops hesitations before a command ("um, how many M8
bolts…", "the how many…") so they do not break it.
"""
from __future__ import annotations

import re
import unicodedata

#: Whole-transcript phrases that are filler on their own (lowercase, punctuation removed). English:
#: hesitations, and Whisper's silence hallucinations (openai/whisper discussions #679, #928).
FILLER_PHRASES_EN = frozenset({
    "the", "a", "uh", "um", "umm", "uhm", "uh huh", "er", "erm", "ah", "ahh", "eh", "hm", "hmm", "mm",
    "mhm", "oh", "you", "so", "well", "and", "i", "thank you", "thanks", "thank you very much",
    "thanks for watching", "thank you for watching", "thanks for watching and see you next time",
    "please subscribe", "subscribe", "like and subscribe", "bye", "bye bye", "goodbye",
    "see you next time", "you you", "blank audio", "music", "silence", "applause", "laughter",
    "inaudible", "sigh",
})
#: Chinese: hesitations and Whisper's silence hallucinations in Mandarin (subtitle credits).
FILLER_PHRASES_ZH = frozenset({
    "嗯", "呃", "额", "啊", "哦", "噢", "唔", "嗯嗯", "那个", "这个", "谢谢", "谢谢观看", "谢谢大家",
    "谢谢收看", "感谢观看", "请不吝点赞订阅转发打赏支持明镜与点点栏目", "字幕由amaraorg社区提供",
    "明镜需要您的支持欢迎订阅明镜", "点赞订阅", "订阅", "拜拜", "再见",
})
#: Hesitation words dropped from the start of a command (English).
LEADING_FILLERS_EN = ("uh", "um", "umm", "uhm", "er", "erm", "ah", "eh", "hm", "hmm", "mm", "the",
                      "so", "well", "okay", "ok", "you")
#: ... and Chinese.
LEADING_FILLERS_ZH = ("嗯", "呃", "额", "啊", "哦", "那个", "这个", "就是")

_BRACKETED = re.compile(r"\[[^\]]*\]|\([^)]*\)|\*[^*]*\*|[♪♫🎵]")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LEAD_EN = re.compile(r"^\s*(?:(?:%s)\b[\s,.!?;:…-]*)+" % "|".join(LEADING_FILLERS_EN), re.I)
_LEAD_ZH = re.compile(r"^\s*(?:(?:%s)[\s,，。.!！?？;；:：、…-]*)+" % "|".join(LEADING_FILLERS_ZH))


def has_cjk(text: str) -> bool:
    """True when ``text`` contains a CJK ideograph (Unicode blocks U+3400–U+9FFF, U+F900–U+FAFF)."""
    return bool(_CJK.search(text or ""))


def _plain(text: str) -> str:
    text = unicodedata.normalize("NFKC", text or "").lower().replace("'", "").replace("\u2019", "")
    # letters, digits and ideographs kept; everything else is a space
    return " ".join(re.sub(r"[^\w]+|_", " ", text).split())


def is_filler(text: str) -> bool:
    """True when ``text`` holds no command: empty, only punctuation, a bracketed annotation
    (``[BLANK_AUDIO]``, ``(music)``, ``♪``), or only filler phrases from :data:`FILLER_PHRASES_EN` /
    :data:`FILLER_PHRASES_ZH`, each possibly repeated ("um, uh", "Thank you. Thank you.").

    Both languages are checked whatever the configured language (Whisper sometimes answers silence
    in the other one). Raises nothing.
    """
    raw = unicodedata.normalize("NFKC", text or "")
    words = _plain(_BRACKETED.sub(" ", raw)).split()
    if not words:
        return True
    joined = "".join(words) if has_cjk(raw) else None
    if joined is not None:
        while joined:
            for p in sorted(FILLER_PHRASES_ZH, key=len, reverse=True):
                if joined.startswith(p):
                    joined = joined[len(p):]
                    break
            else:
                return False
        return True
    i = 0
    longest = max(len(p.split()) for p in FILLER_PHRASES_EN)
    while i < len(words):
        for n in range(min(longest, len(words) - i), 0, -1):
            if " ".join(words[i:i + n]) in FILLER_PHRASES_EN:
                i += n
                break
        else:
            return False
    return True


def strip_leading_fillers(text: str) -> str:
    """``text`` without hesitation words at its start: ``"Um, how many M8 bolts?"`` →
    ``"how many M8 bolts?"``, ``"嗯，M8螺栓还有多少"`` → ``"M8螺栓还有多少"``. The rest is unchanged
    (case, punctuation). Returns ``text`` as it was when nothing would be left. Raises nothing."""
    out = _LEAD_ZH.sub("", _LEAD_EN.sub("", text or ""))
    return out if out.strip() else (text or "")
