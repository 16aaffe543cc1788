"""Mandarin Chinese numbers → integers, for the Chinese grammar path.

Numerals are converted by ``cn2an`` (MIT, PyPI; ``cn2an.cn2an(text, "smart")``), which reads
place-value numbers (``十二`` → 12, ``一百零五`` → 105, ``一百二`` → 120, ``两千`` → 2000) and
digit-by-digit codes (``二零二三`` → 2023). On top of it:

* ``打`` (dozen) after a number multiplies by 12 (``一打`` → 12, ``两打`` → 24); ``半打`` → 6.
* A lone ``一`` or ``两`` is a number only before a measure word, ``号`` or ``打``
  (``一个`` → 1个, ``两盒`` → 2盒), or before ``点`` and a numeral (``一点五`` → 1点5, a decimal the
  guards read as 1.5, never 5), so words that merely contain the character stay as they are
  (``统一``, ``一下``, ``一共``, ``万一``, ``一点儿``, ``差一点``).
* Arabic digits and full-width digits pass through (``１２`` → 12, NFKC).
* ``俩`` and ``仨`` are ``两个`` and ``三个`` (``用了俩保险丝`` → 用了2个保险丝), not after a pronoun (``我们俩``).
"""
from __future__ import annotations

import re
import unicodedata
import warnings

#: the numeral characters cn2an reads (``〇`` and ``零`` both zero, ``两`` = 2)
NUMERAL_CHARS = "零〇一二两三四五六七八九十百千万亿"
#: measure words (量词) that follow a count; a lone 一/两 before one of these is a number
MEASURE_WORDS = "个只支把盒箱包卷罐桶张件根条片套对双副瓶袋台块颗粒枚捆托号次份米升斤克"
#: 俩 and 仨 are 两个 and 三个 said as one syllable (用了俩保险丝); 我们俩, 咱仨 are people
_PAIR_TRIO = re.compile(r"(?<![们咱你我他她哥])[俩仨]")
_RUN = re.compile(rf"(半打|[{NUMERAL_CHARS}]+打?)")


def _convert(run: str) -> int | None:
    import cn2an  # imported on first use: it takes ~0.3 s, and English sites never need it

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # cn2an warns on text it cannot read; we return None instead
        try:
            return int(cn2an.cn2an(run, "smart"))
        except (ValueError, TypeError, KeyError):
            return None


def zh_to_number(text: str) -> int | None:
    """A whole Chinese (or digit) number → int: ``"十二"`` → 12, ``"一百零五"`` → 105,
    ``"两"`` → 2, ``"二零二三"`` → 2023, ``"一打"`` → 12, ``"半打"`` → 6, ``"12"`` → 12.

    Returns None when ``text`` (surrounding whitespace ignored) is not one number. Raises nothing.
    """
    t = unicodedata.normalize("NFKC", text or "").strip()
    if not t:
        return None
    if t.isdigit():
        return int(t)
    if t == "半打":
        return 6
    dozen = t.endswith("打")
    core = t[:-1] if dozen else t
    if not core or any(c not in NUMERAL_CHARS for c in core):
        return None
    value = _convert(core)
    if value is None:
        return None
    return value * 12 if dozen else value


def _decimal_after(text: str, end: int) -> bool:
    """Whether ``text`` says ``点`` and a numeral or digit at ``end`` (the decimal point of ``一点五``)."""
    after = text[end:end + 2]
    return len(after) == 2 and after[0] == "点" and (after[1] in NUMERAL_CHARS or after[1].isdigit())


def normalize_numbers_zh(text: str) -> str:
    """Rewrite every Chinese number in ``text`` as Arabic digits, the rest unchanged (after NFKC:
    full-width letters and digits become ASCII).

    ``"十二号箱有多少个M8螺栓"`` → ``"12号箱有多少个M8螺栓"``; ``"收到一打手套"`` → ``"收到12手套"``;
    ``"看一下"`` → ``"看一下"``; ``"用了俩保险丝"`` → ``"用了2个保险丝"``. Raises nothing.
    """
    text = _PAIR_TRIO.sub(lambda m: {"俩": "两个", "仨": "三个"}[m.group(0)], unicodedata.normalize("NFKC", text or ""))
    out, pos = [], 0
    for m in _RUN.finditer(text):
        run = m.group(0)
        nxt = text[m.end():m.end() + 1]
        if run in ("一", "两") and (not nxt or nxt not in MEASURE_WORDS) and not _decimal_after(text, m.end()):
            continue
        value = zh_to_number(run)
        if value is None and run.endswith("打"):  # "打" not as dozen: convert the numeral alone
            value, run_end = zh_to_number(run[:-1]), m.end() - 1
        else:
            run_end = m.end()
        if value is None:
            continue
        out += [text[pos:m.start()], str(value)]
        pos = run_end
    out.append(text[pos:])
    return "".join(out)
