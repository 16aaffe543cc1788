"""Recognition biased toward the site's vocabulary: vosk command mode and Whisper's prompt."""
from __future__ import annotations

import pytest

from drivers.audio import wav_frames
from edge.stages.asr import vocabulary
from edge.stock.store import Store
from tests.helpers import AUDIO, INVENTORY

DIGITS = AUDIO / "real" / "digits_vosk_test.wav"


@pytest.fixture(scope="module")
def items(tmp_path_factory):
    s = Store(tmp_path_factory.mktemp("inv") / "edge.db")
    s.import_csv(INVENTORY)
    return s.items()


def test_vocabulary_comes_from_the_inventory(items):
    v = vocabulary(items)
    for phrase in ("M8 bolt", "m eight bolts", "nitrile gloves", "bin 2023", "shelf B", "undo that"):
        assert phrase in v
    assert len(v) == len(set(v))


def _decode(rec, path):
    rec.start()
    for f in wav_frames(path):
        rec.accept(f)
    return rec.finish()


def test_vosk_command_mode_only_yields_the_phrase_list():
    from edge.stages.asr.vosk import VoskRecognizer

    open_vocab = VoskRecognizer("vosk-ko")
    free = _decode(open_vocab, DIGITS).text.split()
    allowed = sorted(set(free))[:3]  # words this (Korean) model knows, from its own open transcript
    cmd = VoskRecognizer("vosk-ko", command_mode=True)
    cmd.set_vocabulary(allowed)
    assert cmd.grammar == sorted(w.lower() for w in allowed) + ["[unk]"]
    words = _decode(cmd, DIGITS).text.split()
    assert words, "command mode recognised nothing"
    assert set(words) <= set(allowed) | {"[unk]"}
    assert set(free) - set(allowed), "the open transcript must have had other words for this to mean anything"


def test_whisper_prompt_names_items_and_places(items):
    from edge.stages.asr.whisper import WhisperRecognizer

    w = WhisperRecognizer("whisper-tiny-en")
    w.set_vocabulary(vocabulary(items))
    assert "nitrile gloves" in w.initial_prompt and "bin 2023" in w.initial_prompt
    assert w.initial_prompt.startswith("Stock room commands. Undo that.")
    w.set_vocabulary([])
    assert w.initial_prompt is None


def test_vocabulary_is_rebuilt_when_the_inventory_changes(tmp_path):
    """An item imported while the service runs is understood and biased for from the next turn."""
    from edge.config import load_settings
    from edge.loop.build import build_stages
    from tests.helpers import SESSION_WAKE_MODELS, SESSIONS, run_session

    settings = load_settings(board="x86-dev", overrides={"store": {"path": str(tmp_path / "x.db")},
                                                         "output_dir": str(tmp_path), "llm": {"engine": "none"},
                                                         "wake": {"models": SESSION_WAKE_MODELS}})
    store = Store(tmp_path / "e.db")
    store.import_csv(INVENTORY)
    stages = build_stages(settings, store)
    run_session(stages, settings, SESSIONS / "query_m8_bolts.wav", tmp_path)
    assert "hex keys" not in stages.asr.initial_prompt
    extra = tmp_path / "more.csv"
    extra.write_text(INVENTORY.read_text() + "HEX-5,hex key,drawer 9,15,pcs,allen keys;hex keys\n")
    store.import_csv(extra)
    run_session(stages, settings, SESSIONS / "query_m8_bolts.wav", tmp_path)
    assert "hex keys" in stages.asr.initial_prompt
    assert stages.understanding.grammar.parse("how many allen keys do we have").sku == "HEX-5"


# -- a 2,000-item inventory: the prompt within Whisper's budget ------------------------------------
@pytest.fixture(scope="module")
def whisper():
    from edge.stages.asr.whisper import WhisperRecognizer

    return WhisperRecognizer("whisper-tiny-en")


@pytest.fixture(scope="module")
def big():
    from tests.big_inventory import big_inventory

    return big_inventory(2000)


def test_prompt_fits_the_tokens_whisper_keeps(whisper, big):
    from edge.stages.asr.bias import PROMPT_TOKENS

    whisper.set_vocabulary(vocabulary(big))
    assert whisper.count_prompt_tokens(whisper.initial_prompt) <= PROMPT_TOKENS
    assert whisper.initial_prompt.startswith("Stock room commands. Undo that. How many")  # never cut off
    assert whisper.overflow and 0 < whisper.prompt_phrases
    # the whole phrase list would be ~170 times the budget: faster-whisper would keep only its end
    everything = ", ".join(vocabulary(big))
    assert whisper.count_prompt_tokens(everything) > 100 * PROMPT_TOKENS
    whisper.set_vocabulary(vocabulary(big[:10]))
    assert not whisper.overflow and "nitrile gloves" in whisper.initial_prompt


def test_items_used_first_get_into_the_prompt(whisper, big):
    whisper.set_vocabulary(vocabulary(big))
    assert "M6 x 30 hex bolt" not in whisper.initial_prompt  # item 1,964 of 2,000: no room for it
    whisper.set_vocabulary(vocabulary(big, first=["HB-M6-30"]))
    assert "Items and places: M6 x 30 hex bolt, " in whisper.initial_prompt


def test_focus_puts_the_heard_item_first(big):
    from edge.stages.asr.base import COMMAND_WORDS
    from edge.stages.asr.bias import focus

    phrases = vocabulary(big)
    got = focus(phrases, "we used four M6 by 30 hex bolts")
    assert got[:len(COMMAND_WORDS)] == list(COMMAND_WORDS) and sorted(got) == sorted(phrases)
    front = got[len(COMMAND_WORDS):len(COMMAND_WORDS) + 6]
    assert "M6 x 30 hex bolt" in front and "M8 x 30 hex bolt" not in front
    assert focus(phrases, "") == phrases


def test_a_final_decode_with_too_many_phrases_takes_a_second_pass(whisper, big):
    from drivers.audio import read_wav
    from edge.stages.nlu.grammar import Grammar
    from tests.helpers import SESSIONS
    from tests.synth import to16k

    data, rate = read_wav(SESSIONS / "query_m8_bolts.wav")
    audio = to16k(data, rate)
    whisper.set_vocabulary(vocabulary(big))
    before = whisper.second_passes
    heard = whisper.transcribe(audio)
    assert whisper.second_passes == before + 1
    assert Grammar(big).resolve_item(heard.text).sku == "BLT-M8-30", heard.text
    whisper.transcribe(audio, refine=False)  # a partial transcript: one pass
    assert whisper.second_passes == before + 1


def test_items_used_most_come_first_from_the_store(tmp_path):
    from edge.stages.asr.base import COMMAND_WORDS
    from edge.stages.asr.bias import used_first

    store = Store(tmp_path / "used.db")
    store.import_csv(INVENTORY)
    for k, sku in enumerate(["FUS-5A", "WSH-M8", "FUS-5A", "DRL-BIT-6", "GOG-SAF"]):
        store.log(sku, -1, "used one", f"t{k}")
    store.undo("undo that", "t9")  # takes back the goggles: they do not count
    assert used_first(store.records()) == ["FUS-5A", "DRL-BIT-6", "WSH-M8"]
    assert used_first(store.records(), limit=1) == ["FUS-5A"]
    v = vocabulary(store.items(), first=used_first(store.records()))
    names = [p for p in v if p not in COMMAND_WORDS]
    assert names[:2] == ["fuse", "fuses"]
    store.close()
