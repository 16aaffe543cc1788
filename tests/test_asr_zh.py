"""The Mandarin recognizer's prompt (edge/stages/asr/bias_zh.py): Simplified-Chinese head, the
inventory's Chinese names and places within Whisper's 223-token budget, counted with the real
multilingual Whisper base tokenizer; and an English-only model refused for Mandarin."""
import csv

import pytest

from edge.models.manifest import ModelNotFoundError, resolve
from edge.stages.asr import vocabulary
from edge.stages.asr.bias import PROMPT_TOKENS, build_prompt, prompt_token_count, whisper_tokenizer
from edge.stages.asr.bias_zh import ZH_HEAD, zh_phrases
from edge.stock.store import Item
from tests.test_zh_voice import INVENTORY


@pytest.fixture(scope="module")
def count():
    try:
        tok = whisper_tokenizer(resolve("whisper-base"))
    except ModelNotFoundError as e:
        pytest.fail(f"{e} (scripts/setup.sh installs it: edge models install whisper-base)")
    return lambda p: prompt_token_count(tok, p)


def items() -> list[Item]:
    with INVENTORY.open(encoding="utf-8", newline="") as f:
        return [Item(r["sku"], r["item"], r["location"], int(r["quantity"]), r["unit"],
                     tuple(a for a in r["aliases"].split(";") if a)) for r in csv.DictReader(f)]


def test_the_mandarin_phrases_are_the_chinese_names_then_the_places_as_said():
    got = zh_phrases(vocabulary(items()))
    assert got[:4] == ["M8螺栓", "M8螺丝", "丁腈手套", "手套"]
    assert "12号箱" in got and "4号抽屉" in got and "B号架" in got
    assert got.index("扳手") < got.index("12号箱")  # names before places
    assert not any(p.isascii() for p in got)  # no English name, no English command word


def test_the_whole_test_inventory_fits_the_budget(count):
    prompt, n, total = build_prompt(vocabulary(items()), count, language="zh")
    assert prompt.startswith(ZH_HEAD) and n == total == len(zh_phrases(vocabulary(items())))
    assert count(prompt) <= PROMPT_TOKENS


def test_a_large_inventory_is_cut_to_the_budget_keeping_the_head(count):
    many = [Item(f"P{i}", f"part {i}", f"bin {i}", 1, "pcs", (f"零件{i}号螺母垫片",)) for i in range(300)]
    prompt, n, total = build_prompt(vocabulary(many), count, language="zh")
    assert prompt.startswith(ZH_HEAD) and 0 < n < total == 600
    assert PROMPT_TOKENS - 12 <= count(prompt) <= PROMPT_TOKENS  # the most that fit


def test_no_phrases_still_gives_the_simplified_head(count):
    assert build_prompt([], count, language="zh")[0].startswith(ZH_HEAD)
    assert build_prompt([], count)[0] is None  # English: no prompt, as before


def test_the_recognizer_refuses_an_english_only_model_for_mandarin():
    from edge.stages.asr.whisper import WhisperRecognizer

    with pytest.raises(ValueError, match="English-only"):
        WhisperRecognizer("whisper-tiny-en", language="zh")
