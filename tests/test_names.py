"""Item names compare Unicode-aware: no two scripts or accents collapse into one key."""
from edge.stages.names import name_key


def test_accents_and_scripts_stay_apart():
    assert name_key("Schrauben Ä") != name_key("Schrauben Ö")
    assert name_key("болт М8") != name_key("гайка М8")
    assert name_key("螺栓") != name_key("螺母")
    assert name_key("螺栓") == "螺栓"


def test_forms_that_mean_the_same_fold_together():
    assert name_key("ＭＳ８ Bolt") == name_key("ms8 bolt")
    assert name_key("Straße") == name_key("STRASSE")
    assert name_key("Schrauben A\u0308") == name_key("schrauben ä")
    assert name_key("O-Ring, 30 mm") == "o ring 30 mm"
    assert name_key("worker's gloves") == "workers gloves"
    assert name_key("1,000 washers") == "1000 washers"
    assert name_key("  ...  ") == ""
