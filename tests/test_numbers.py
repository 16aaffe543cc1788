"""Spoken numbers → digits (edge.stages.nlu.numbers)."""
import pytest

from edge.stages.nlu.numbers import normalize_numbers, words_to_number


@pytest.mark.parametrize("words, expected", [
    ("three", (3, 1)),
    ("twenty", (20, 1)),
    ("twelve", (12, 1)),
    ("twenty three", (23, 2)),
    ("one hundred and five", (105, 4)),
    ("one hundred five", (105, 3)),
    ("a hundred", (100, 2)),
    ("a thousand two hundred", (1200, 4)),
    ("a thousand and five", (1005, 4)),
    ("two thousand and twenty three", (2023, 5)),
    ("one million two hundred thousand and three", (1200003, 7)),
    ("nineteen hundred", (1900, 2)),
    ("zero", (0, 1)),
    ("12", (12, 1)),
    ("2,023", (2023, 1)),
    ("5 hundred", (500, 2)),
    ("a dozen", (12, 2)),
    ("two dozen", (24, 2)),
    ("half a dozen", (6, 3)),
    ("a couple of", (2, 3)),
    ("a couple", (2, 2)),
    ("a pair of", (2, 3)),
    ("twelfth", (12, 1)),
    ("twenty first", (21, 2)),
    ("one hundred and fifth", (105, 4)),
    ("12th", (12, 1)),
    ("two oh two three", (2023, 4)),
    ("one oh five", (105, 3)),
    ("TWENTY", (20, 1)),
])
def test_words_to_number(words, expected):
    assert words_to_number(words.split()) == expected


@pytest.mark.parametrize("words, code, expected", [
    ("one two", True, (12, 2)),
    ("one two", False, (1, 1)),           # no code context: two separate numbers
    ("two zero two three", True, (2023, 4)),
    ("four", True, (4, 1)),               # a single digit is just a number
    ("twelve", True, (12, 1)),
    ("three four washers", False, (3, 1)),
    ("one hundred and five washers", False, (105, 4)),
])
def test_words_to_number_code(words, code, expected):
    assert words_to_number(words.split(), code=code) == expected


@pytest.mark.parametrize("words", ["", "the", "a", "oh", "oh no", "and five", "washers", "first!"])
def test_words_to_number_none(words):
    assert words_to_number(words.split()) is None


@pytest.mark.parametrize("text, expected", [
    ("add one hundred and five washers to bin two oh two three", "add 105 washers to bin 2023"),
    ("Add 105 washers to bin 2,023.", "Add 105 washers to bin 2023."),
    ("How many M8 bolts are in bin twelve?", "How many M8 bolts are in bin 12?"),
    ("we used three drill bits from drawer four", "we used 3 drill bits from drawer 4"),
    ("bin one two", "bin 12"),
    ("shelf two three", "shelf 23"),
    ("bin oh seven", "bin 07"),
    ("bin 2 0 2 3", "bin 2023"),
    ("log twenty boxes", "log 20 boxes"),
    ("twenty-five", "25"),
    ("a thousand two hundred", "1200"),
    ("a couple of fuses", "2 fuses"),
    ("a pair of goggles", "1 goggles"),        # goggles come as a pair: one pair
    ("a pair of extra large leather gloves", "1 extra large leather gloves"),
    ("a pair of fuses", "2 fuses"),
    ("half a dozen fuses", "6 fuses"),
    ("two dozen bolts", "24 bolts"),
    ("the twelfth bin", "the 12 bin"),
    ("three four", "3 4"),
    ("one, two", "1, 2"),                 # punctuation splits numbers
    ("wait a second", "wait a second"),   # lone first/second stay words
    ("oh no", "oh no"),
    ("a fuse", "a fuse"),
    ("M8 bolts", "M8 bolts"),
    ("", ""),
])
def test_normalize_numbers(text, expected):
    assert normalize_numbers(text) == expected
