"""The interval text every command summary prints."""

from __future__ import annotations

from itemscale.cli._format import number_text, points_text


def test_points_scale_rates_and_their_interval() -> None:
    assert points_text({"value": 0.612, "ci": [0.58, 0.641]}) == "61.2 [58.0, 64.1]"
    assert points_text({"value": -0.05, "ci": None}) == "-5.0"


def test_numbers_keep_their_unit() -> None:
    assert number_text({"value": 3.46, "ci": (3.1, 3.94)}) == "3.5 [3.1, 3.9]"
    assert number_text({"value": 2}) == "2.0"


def test_missing_values_print_as_not_available() -> None:
    for text in (points_text, number_text):
        assert text(None) == "n/a"
        assert text({}) == "n/a"
        assert text({"value": None, "ci": [0.1, 0.2]}) == "n/a"


def test_a_noanswer_share_is_never_printed_as_zero() -> None:
    from itemscale.cli.cmd_analyze import noanswer_text

    assert noanswer_text(1 / 2700, 2700) == "1 of 2700"  # 0.04 points: not "0.0"
    assert noanswer_text(13 / 786, 786) == "1.7 (13 of 786)"
    assert noanswer_text(0.5, 2) == "50.0 (1 of 2)"
