"""Reply text made safe for the speech engine (a leaf module).

:func:`for_speech` runs before every synthesis: the text is NFC-normalized (so "ë" typed as
``e`` + U+0308 and as one character give the same audio), symbols are spoken as words ("°C" →
"degrees Celsius", "½" → "one half") and what espeak-ng would read aloud or choke on is dropped
or replaced: emoji and other pictographs, zero-width characters and joiners, bidirectional marks,
variation selectors, control characters, lone surrogates (from a model's broken UTF-8); no-break
and other odd spaces become plain spaces. Mandarin (``zh``): numbers are written as Chinese number
words (``140个`` → ``一百四十个``, ``2卷`` → ``两卷``, ``2.5卷`` → ``二点五卷``, ``M8`` → ``M八``; ``cn2an``), which a
Mandarin voice reads as a person would say them.
"""
from __future__ import annotations

import re
import unicodedata

#: Symbols said as words, by language (checked in this order, so "°C" before "°").
SYMBOLS = {
    "en": (("°C", " degrees Celsius"), ("°F", " degrees Fahrenheit"), ("°", " degrees"), ("½", " one half"),
           ("¼", " one quarter"), ("¾", " three quarters"), ("⅓", " one third"), ("⅔", " two thirds"),
           ("%", " percent"), ("&", " and "), ("€", " euros"), ("£", " pounds"), ("×", " times ")),
    "zh": (("°C", "摄氏度"), ("°F", "华氏度"), ("°", "度"), ("½", "二分之一"), ("¼", "四分之一"), ("¾", "四分之三"),
           ("⅓", "三分之一"), ("⅔", "三分之二"), ("&", "和"), ("€", "欧元"), ("×", "乘")),
}

# invisible format characters: zero-width space/joiners, word joiner, BOM, bidi marks and isolates
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ufe00-\ufe0f\u00ad]")
_DIGIT = re.compile(r"\d")
#: a lone 二 before a measure word is said 两 (两卷, not 二卷); 十二, 二十 and 一百零二 keep 二
_LIANG = re.compile(r"(?<![零〇一二三四五六七八九十百千万点])二(?=[个只支把盒箱包卷罐桶张件根条片套对双副瓶袋台块颗粒枚捆托])")
_SPACES = re.compile(r"[\s\u00a0\u2000-\u200a\u202f\u205f\u3000]+")


def _drop(ch: str) -> bool:
    """Pictographs (emoji: category So), modifier symbols, surrogates, private use, unassigned and
    control characters are not spoken."""
    return unicodedata.category(ch) in ("So", "Sk", "Cs", "Co", "Cn", "Cc", "Cf")


def for_speech(text: str, language: str = "en") -> str:
    """``text`` as the speech engine should get it (see the module docstring); may be empty."""
    text = "".join(" " if ch in "\n\r\t" else ch for ch in text if not 0xD800 <= ord(ch) <= 0xDFFF)
    text = unicodedata.normalize("NFC", _INVISIBLE.sub("", text))
    for symbol, words in SYMBOLS.get(language, SYMBOLS["en"]):
        text = text.replace(symbol, words)
    text = "".join(" " if _drop(ch) else ch for ch in text)
    if language == "zh" and _DIGIT.search(text):
        import cn2an  # only a Mandarin reply with a number needs it

        text = _LIANG.sub("两", cn2an.transform(text, "an2cn"))
    return _SPACES.sub(" ", text).strip()
