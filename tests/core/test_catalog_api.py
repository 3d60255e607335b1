"""The catalog's selection logic and the one Finding type."""

import pytest

from trainwell.catalog import CATALOG, RUNTIME, STATIC, enabled_codes, lookup, validate_patterns
from trainwell.diagnostic import Edit, Finding, Fix


def test_default_selection_leaves_out_opt_in_rules():
    codes = enabled_codes()
    assert "TW101" in codes
    assert "TW503" not in codes
    assert codes == {c for c, e in CATALOG.items() if e.default_enabled}


def test_prefix_selects_a_family_but_not_opt_in_rules():
    assert enabled_codes(select=["TW5"]) == {"TW501", "TW502"}
    assert enabled_codes(select=["TW5", "TW503"]) == {"TW501", "TW502", "TW503"}


def test_ignore_wins_over_select():
    assert enabled_codes(select=["TW1"], ignore=["TW10", "TW11"]) == set()
    assert "TW102" not in enabled_codes(ignore=["tw102"])


def test_detector_filter():
    static = enabled_codes(detector=STATIC)
    runtime = enabled_codes(detector=RUNTIME)
    assert "TW107" in static and "TW107" not in runtime
    assert "TW601" in runtime and "TW601" not in static


def test_unknown_pattern_is_named():
    validate_patterns(["TW1", "TW601", "all"])
    with pytest.raises(ValueError, match="'TX9'"):
        validate_patterns(["TX9"])


def test_lookup_is_case_insensitive():
    assert lookup("tw105").name == "scheduler-before-optimizer"


def test_finding_rejects_unknown_codes_and_serialises():
    with pytest.raises(ValueError):
        Finding("TW999", "nope", "x.py", 1)
    fix = Fix("add weights_only=True", (Edit(3, 10, 3, 10, ", weights_only=True"),))
    data = Finding("TW502", "unsafe load", "x.py", 3, 4, fix=fix).to_dict()
    assert data["name"] == "unsafe-torch-load"
    assert (data["line"], data["column"], data["end_line"]) == (3, 4, 3)  # 1-based in the API and in JSON alike
    assert data["fix"]["edits"][0]["content"] == ", weights_only=True"
