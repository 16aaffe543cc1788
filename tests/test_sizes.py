"""Sizes written in item names: family and attributes, and how a reply says them."""
import pytest

from edge.stages.sizes import Size, split_size, spoken_size


@pytest.mark.parametrize("name, family, size", [
    ("hex bolt M12 x 80 mm", "hex bolt", Size("M12", (80.0,), None, "M12 x 80 mm")),
    ("hex bolt M12x80", "hex bolt", Size("M12", (80.0,), None, "M12x80")),
    ("M8 bolt", "bolt", Size("M8", (), None, "M8")),
    ("drill bit 6 mm", "drill bit", Size(None, (6.0,), None, "6 mm")),
    ("cutting disc 12.5cm", "cutting disc", Size(None, (125.0,), None, "12.5cm")),
    ("nitrile gloves L", "nitrile gloves", Size(None, (), "L", "L")),
    ("work gloves size XL", "work gloves", Size(None, (), "XL", "XL")),
    ("work gloves large", "work gloves", Size(None, (), "L", "L")),
    ("safety goggles", "safety goggles", Size()),
    ("o-ring 30 mm", "o-ring", Size(None, (30.0,), None, "30 mm")),
])
def test_split_size(name, family, size):
    assert split_size(name) == (family, size)


def test_a_thread_is_not_a_garment_size():
    family, size = split_size("hex nut M10")
    assert (family, size.thread, size.garment) == ("hex nut", "M10", None)


def test_spoken_size_en_and_zh():
    _, s = split_size("hex bolt M12 x 80 mm")
    assert spoken_size(s) == "M12, 80 millimetre"
    assert spoken_size(s, "zh") == "M12，80毫米"
    assert spoken_size(split_size("cable 2.5 mm")[1]) == "2.5 millimetre"
    assert spoken_size(split_size("gloves L")[1], "zh") == "大号"
    assert spoken_size(Size()) == ""
    assert not Size() and split_size("drill bit 6 mm")[1]
    assert split_size("hex bolt M12 x 80 mm")[1].attributes() == {"thread": "M12", "millimetre": 80.0}


def test_a_current_rating_is_a_size():
    assert split_size("fuse 13 A") == ("fuse", Size(None, (), None, "13 A", 13.0))
    assert split_size("circuit breaker 10A")[1].attributes() == {"amp": 10.0}
    assert spoken_size(split_size("fuse 3 A")[1]) == "3 amp"
    assert split_size("paper A4") == ("paper A4", Size())  # no number before the A


@pytest.mark.parametrize("name, family, bearing, seal, text", [
    ("bearing 6205 2RS", "bearing", "6205", "2RS", "6205 2RS"),
    ("6304 ZZ bearing", "bearing", "6304", "ZZ", "6304 ZZ"),
    ("608-2Z bearing", "bearing", "608", "2Z", "608-2Z"),
    ("deep groove bearing 6001", "deep groove bearing", "6001", None, "6001"),
])
def test_a_bearing_designation_is_a_variant(name, family, bearing, seal, text):
    got_family, size = split_size(name)
    assert (got_family, size.bearing, size.seal, size.text) == (family, bearing, seal, text)
    assert size.attributes() == {"bearing": bearing, **({"seal": seal} if seal else {})}
    assert spoken_size(size) == text.replace("-", " ")
    for other in ("V belt SPB 1700", "hydraulic oil 46", "gasket GSK047"):  # a bare number only in a bearing's name
        assert split_size(other) == (other, Size())
