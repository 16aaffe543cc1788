"""What the loop tells the recognizer: the inventory's units of measure beside the command words
(so "two and a half metres" is not written "2.5 mm" next to names full of "1.5 mm"), and Whisper's
vulgar fractions as one decimal number ("2 ½ meters" → "2.5 meters")."""
from __future__ import annotations

from edge.loop.inventory import with_units
from edge.stages.asr.base import COMMAND_WORDS, vocabulary
from edge.stages.asr.bias import focus
from edge.stages.asr.whisper import decimal_fractions
from edge.stock.store import Item


def test_units_of_measure_come_right_after_the_command_words():
    items = [Item("CBL", "flex cable 1.5 mm", "shelf E", 150, "m", ()), Item("OIL", "cutting oil", "shelf F", 12, "l", ()),
             Item("GLV", "nitrile gloves", "shelf A", 3, "box", ()), Item("CBL2", "flex cable 2.5 mm", "bin 250", 20, "m", ())]
    phrases = with_units(vocabulary(items), items)
    k = len(COMMAND_WORDS)
    assert phrases[:k] == list(COMMAND_WORDS) and phrases[k:k + 2] == ["metres", "litres"]
    assert "boxes" not in phrases and phrases[k + 2] == "flex cable 1.5 mm"  # a count unit needs no help
    assert focus(phrases, "we used 2.5 meters of 1.5 mm flex cable")[k] == "metres"
    assert focus(phrases, "five nitrile gloves")[k] == "nitrile gloves"  # only a unit heard moves up


def test_vulgar_fractions_become_one_decimal_number():
    assert decimal_fractions("We used 2 ½ meters of 1.5 mm flex cable") == "We used 2.5 meters of 1.5 mm flex cable"
    assert decimal_fractions("3¼ metres") == "3.25 metres" and decimal_fractions("½ a box") == "0.5 a box"
    assert decimal_fractions("bin 12") == "bin 12"
