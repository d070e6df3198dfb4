"""`analyze` states each series' multiple-choice scoring rule and warns when series (or models)
compared with each other use different rules."""

from __future__ import annotations

import io

import pandas as pd

from _support.tables import table
from itemscale.analysis.measures import analyze_responses
from itemscale.cli.cmd_analyze import print_summary

MATRIX = {f"q{i}": [float(i % 2), float(i % 3 == 0), 1.0] for i in range(8)}


def _series(series: str, rule: str | None, model: str = "m") -> pd.DataFrame:
    df = table(MATRIX, series=series, model=model)
    df["scoring_rule"] = rule
    return df


def test_one_rule_per_series_is_stated_and_different_rules_warned() -> None:
    df = pd.concat([_series("a", "likelihood"), _series("b", "letter")], ignore_index=True)
    result = analyze_responses(df, bootstrap=0).to_json()
    block = result["models"]["m"]
    assert block["scoring_rules"] == ["likelihood"]
    assert block["other_series"]["b"]["scoring_rules"] == ["letter"]
    assert block["scoring_rule_warnings"] == [
        "series scored by different rules (a: likelihood, b: letter): comparing them compares "
        "the rules too"
    ]
    out = io.StringIO()
    print_summary(result, out)
    text = out.getvalue()
    assert "multiple choice scored by likelihood" in text
    assert "multiple choice scored by letter" in text
    assert "warning: m: series scored by different rules (a: likelihood, b: letter)" in text


def test_a_series_that_mixes_rules_and_models_that_differ() -> None:
    mixed = _series("default", "letter")
    mixed.loc[mixed["item_id"] == "q0", "scoring_rule"] = "likelihood"
    other = _series("default", "likelihood", model="n")
    result = analyze_responses(pd.concat([mixed, other], ignore_index=True), bootstrap=0).to_json()
    assert result["models"]["m"]["scoring_rule_warnings"] == [
        "series default mixes scoring rules (letter, likelihood): its budgets are not "
        "compared on one rule"
    ]
    assert "scoring_rule_warnings" not in result["models"]["n"]
    # m records two rules, so only n has one: nothing to compare across models
    assert "scoring_rule_warnings" not in result


def test_unknown_rules_say_nothing() -> None:
    result = analyze_responses(
        pd.concat([_series("a", None), _series("b", "letter")], ignore_index=True), bootstrap=0
    ).to_json()
    block = result["models"]["m"]
    assert block["scoring_rules"] == [] and "scoring_rule_warnings" not in block
    both = pd.concat([_series("a", "letter"), _series("a", "likelihood", model="n")])
    assert analyze_responses(both, bootstrap=0).to_json()["scoring_rule_warnings"] == [
        "models scored by different rules (m: letter, n: likelihood): comparing them "
        "compares the rules too"
    ]
