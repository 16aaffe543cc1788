"""Which transcripts of Whisper's short encoder window stand without the full-window recheck
(:func:`edge.loop.speculation.windowed_stands`, used by the voice loop and the Wyoming asr
service): a whole command that names its item. The misheard transcript below is what tiny.en wrote
in the 10 s window for the box's own voice saying "How many Quorvex brackets are in bin four?"
(tests/test_wyoming_asr_worker.py); the grammar takes it as a whole query about the M8 bolt by
the one word "m8", so before this rule the full window (which hears "quorvex brackets") never ran."""
from __future__ import annotations

import pytest

from edge.loop.speculation import windowed_stands
from edge.stages.nlu.understand import Understanding
from tests.helpers import INVENTORY, csv_store

QUORVEX = "QRV-4,Quorvex bracket,bin 4,12,pcs,quorvex brackets\n"


@pytest.fixture
def und(tmp_path):
    with csv_store(tmp_path, INVENTORY.read_text() + QUORVEX) as store:
        yield Understanding(store.items(), None)


@pytest.mark.parametrize("text", ["How many, one, m8, sprockets, I'm in bin 4,",  # M8 by one word
                                  "How many m8 sprockets"])
def test_a_command_whose_item_is_found_by_one_word_is_decoded_again(und, text):
    verdict, intent = und.completeness(text)
    assert intent is not None and intent.explain.get("item_via") == "word", (verdict, intent)
    assert not windowed_stands(verdict, intent)


@pytest.mark.parametrize("text", ["How many quorvex brackets are in bin 4?", "How many M8 bolts do we have?",
                                  "We used 3 drill bits."])
def test_a_command_that_names_its_item_stands(und, text):
    assert windowed_stands(*und.completeness(text)), und.completeness(text)


def test_an_incomplete_command_is_decoded_again(und):
    assert not windowed_stands(*und.completeness("How many"))
