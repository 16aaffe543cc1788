"""C20 text the speech engine chokes on: decomposed accents, another script before an English
sentence, emoji, zero-width joiners, right-to-left marks, no-break spaces, "°C", "½", a lone
surrogate from model output; under LANG=C and C.UTF-8 (Python's UTF-8 mode and locale coercion off).

The text is NFC-normalized and cleaned before synthesis (NFC and NFD give the same audio), symbols
are spoken as words or dropped, and nothing fails with a UnicodeError under any locale: the real
espeak-ng worker synthesizes every text, and a real ``edge run`` whose reply names such an item
writes its events and reply audio."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata

import pytest
import soundfile as sf

from edge.stages.tts.clean import for_speech
from tests.helpers import REPO, SESSION_WAKE, SESSIONS

ZOE_NFC = "Zo\u00eb has 12 boxes."
ZOE_NFD = unicodedata.normalize("NFD", ZOE_NFC)
assert ZOE_NFC != ZOE_NFD

TEXTS = [
    ZOE_NFC, ZOE_NFD,
    "Д There are 140 M8 bolts in bin 12.",                 # another script first
    "Logged 3 drill bits used 👍🏽 🎉",                    # emoji with a skin-tone modifier
    "The family 👨\u200d👩\u200d👧 of washers.",           # zero-width joiners
    "\u200fThere are \u202e8 goggles\u202c on shelf B.",   # right-to-left marks and overrides
    "There are\u00a012\u202fboxes.",                       # no-break spaces
    "The freezer is at -18 °C.",
    "½ a box of gloves is left.",
    "The model said \udce9t\ud800 here.",                  # lone surrogates (broken UTF-8 from a model)
    "👍",                                                  # nothing left to say
]

LOCALES = {
    "C": {"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0", "PYTHONIOENCODING": ""},
    "C.UTF-8": {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0",
                "PYTHONIOENCODING": ""},
}


def env(locale: str) -> dict:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "PYTHONIO"))}
    e.update({k: v for k, v in LOCALES[locale].items() if v})
    e["PYTHONPATH"] = str(REPO)
    return e


def test_cleaning_gives_one_spelling_and_words_for_symbols():
    assert for_speech(ZOE_NFD) == for_speech(ZOE_NFC) == ZOE_NFC
    assert for_speech("-18 °C") == "-18 degrees Celsius"
    assert for_speech("½ a box") == "one half a box"
    assert for_speech("There are\u00a012\u202fboxes.") == "There are 12 boxes."
    assert for_speech("The family 👨\u200d👩\u200d👧 of washers.") == "The family of washers."
    assert for_speech("\u200fThere are \u202e8 goggles\u202c.") == "There are 8 goggles."
    assert for_speech("said \udce9t\ud800 here") == "said t here"
    assert for_speech("👍🏽") == ""
    assert for_speech("18°C", "zh") == "十八摄氏度"  # numbers are spoken as Chinese words
    cleaned = [for_speech(t) for t in TEXTS]
    assert all(unicodedata.is_normalized("NFC", c) for c in cleaned)
    assert not any(unicodedata.category(ch) in ("So", "Sk", "Cs", "Cf", "Cc") for c in cleaned for ch in c)


SYNTH = """
import json, sys
import soundfile as sf
from edge.stages.tts.engine import WatchdogTts
texts = json.loads(sys.stdin.read())
tts = WatchdogTts("en")
out = []
for i, t in enumerate(texts):
    p = tts.synthesize(t, sys.argv[1] + f"/t{i}.wav")
    out.append([str(p), sf.info(str(p)).frames])
tts.close()
print(json.dumps(out))
"""


@pytest.mark.parametrize("locale", list(LOCALES))
def test_every_text_is_spoken_under_any_locale_and_nfc_nfd_sound_the_same(tmp_path, locale):
    texts = json.dumps(TEXTS)  # \\ud800 escapes carry the lone surrogates through the pipe
    r = subprocess.run([sys.executable, "-c", SYNTH, str(tmp_path)], input=texts, cwd=REPO, capture_output=True,
                       text=True, timeout=240, env=env(locale))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "UnicodeError" not in r.stderr and "UnicodeEncodeError" not in r.stderr, r.stderr
    results = json.loads(r.stdout)
    assert len(results) == len(TEXTS)
    assert all(frames > 0 for _, frames in results), results
    assert all(frames > 22050 // 4 for _, frames in results[:-1]), results  # real speech, > 0.25 s
    # the decomposed and the composed spelling sound the same: espeak-ng says "Zoe" + U+0308 about
    # 2.6 % shorter than "Zoë", while one text said twice through pyttsx3 varies by a few samples
    nfc, nfd = (sf.info(results[i][0]).frames for i in (0, 1))
    assert abs(nfc - nfd) <= nfc * 0.005, (nfc, nfd)


@pytest.mark.parametrize("locale", list(LOCALES))
def test_a_voice_turn_about_such_an_item_runs_under_any_locale(tmp_path, locale):
    inv = tmp_path / "stock.csv"
    name = unicodedata.normalize("NFD", "Zoë's safety goggles") + " 👓\u200d"
    inv.write_text("sku,item,location,quantity,unit,aliases\n"
                   f"GOG-SAF,{name},shelf B,8,pcs,goggles;safety goggles\n", encoding="utf-8")
    cfg = tmp_path / "edge.yaml"
    cfg.write_text(f"board: x86-dev\n{SESSION_WAKE}store: {{path: {tmp_path / 'edge.db'}}}\nllm: {{engine: none}}\n")
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "edge.cli", "run", "--input", str(SESSIONS / "query_goggles_shelf.wav"),
                        "--config", str(cfg), "--inventory", str(inv), "--output-dir", str(out), "--json"],
                       cwd=REPO, capture_output=True, timeout=300, env=env(locale))
    stderr = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 0, stderr[-3000:]
    assert "UnicodeError" not in stderr and "UnicodeEncodeError" not in stderr, stderr
    events = [json.loads(x) for x in r.stdout.decode("utf-8").splitlines()]  # stdout is UTF-8 under any locale
    reply = next(e for e in events if e["type"] == "reply")
    assert name in reply["text"] and "8" in reply["text"], reply
    assert (out / os.path.basename(reply["audio"])).stat().st_size > 10_000
