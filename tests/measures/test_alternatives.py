"""Configurations that ask one budget are alternatives, not an axis: hand-computed selector
records, the all-pairs verdicts, `--control`, series named as alternatives, and the warning on an
axis whose budgets repeat."""

from __future__ import annotations

import io
import re

import pandas as pd
import pytest

from _support.tables import table
from itemscale.analysis.measures import (
    AlternativesSeries,
    BinarySeries,
    UnknownConfigError,
    analyze_responses,
    pair_grade,
    pair_verdict_text,
)
from itemscale.cli.cmd_analyze import print_summary

#: a console line of a measure along an order of budgets
BUDGET_LINES = re.compile(
    r"^\s*(best fixed|harmful rate|beneficial rate|terminal regression|adjacent flips|"
    r"additive model|oracle headroom)\b",
    re.MULTILINE,
)
N = 60
#: right (1) or wrong (0) per item under each configuration, all asking 16 frames:
#: ctl right on items 0-29; sel right on 0-24 and 30-39 (breaks 25-29, fixes 30-39);
#: copy answers exactly as ctl
CTL = [1.0 if i < 30 else 0.0 for i in range(N)]
SEL = [1.0 if i < 25 or 30 <= i < 40 else 0.0 for i in range(N)]


def _one_budget(labels: list[str], columns: list[list[float]], **kw: object) -> pd.DataFrame:
    matrix = {f"q{i:02d}": [col[i] for col in columns] for i in range(N)}
    answers = {item: ["A" if y else "B" for y in ys] for item, ys in matrix.items()}
    df = table(matrix, labels=labels, answers=answers, **kw)  # type: ignore[arg-type]
    df["frames"] = 16  # every configuration asks the same budget
    return df


def test_alternatives_are_measured_pair_by_pair_not_along_an_order() -> None:
    df = _one_budget(["ctl", "sel", "copy"], [CTL, SEL, CTL])
    result = analyze_responses(df, bootstrap=50, seed=1, control="ctl")
    entry = result.models["m"]
    assert isinstance(entry, AlternativesSeries)
    assert (entry.budget, entry.frames, entry.pixels) == ("16 frames", 16, None)
    assert entry.control == "ctl" and entry.members == "configurations"
    assert entry.accuracy["sel"].value == pytest.approx(35 / N)
    assert entry.oracle.value == pytest.approx(40 / N)  # items 0-39 right somewhere
    # the control's pairs first, then the others in the table's order
    assert list(entry.pairs) == ["ctl|sel", "ctl|copy", "sel|copy"]
    sel = entry.pairs["ctl|sel"]
    assert (sel.n_fixed, sel.n_broken, sel.n_headroom) == (10, 5, 10)
    assert sel.headroom_share.value == pytest.approx(1.0)  # it fixes all of ctl's headroom
    assert sel.accuracy_difference.value == pytest.approx(5 / N)
    assert (sel.answered, sel.differ) == (N, 15)
    # 15 of 60 answers differ, and no rerun floor is measured or stated: not identical, and
    # whether beyond a rerun cannot be told
    assert (sel.answers, sel.floor, pair_grade(sel)) == ("cannot_tell", None, "?")
    assert pair_verdict_text(sel).startswith("not identical: 15 of 60 answers differ")
    stated = analyze_responses(df, bootstrap=0, seed=1, control="ctl", rerun_floor=1.0)
    graded = stated.models["m"].pairs["ctl|sel"]  # type: ignore[union-attr]
    # at a stated 1% per answer a rerun moves at most 2 of 60: 15 is beyond it
    assert (graded.answers, graded.rerun_bound, pair_grade(graded)) == ("different", 2, "x")
    copy = entry.pairs["ctl|copy"]
    assert (copy.n_fixed, copy.n_broken, copy.headroom_share.value) == (0, 0, 0.0)
    assert pair_grade(copy) == "="
    other = entry.pairs["sel|copy"]  # headroom over sel: items 25-29, which copy gets right
    assert (other.n_headroom, other.n_fixed, other.n_broken) == (5, 5, 10)
    dumped = entry.model_dump(mode="json")
    for budget_measure in ("best_fixed", "harmful_rate", "terminal_regression_rate", "flip_down"):
        assert budget_measure not in dumped

    out = io.StringIO()
    print_summary(result, out)
    text = out.getvalue()
    assert "3 configurations ask one budget (16 frames)" in text
    assert "against the control ctl" in text
    assert not BUDGET_LINES.search(text), BUDGET_LINES.search(text)


def test_without_a_control_every_pair_is_listed_and_a_wrong_control_is_named() -> None:
    df = _one_budget(["ctl", "sel", "copy"], [CTL, SEL, CTL])
    entry = analyze_responses(df, bootstrap=0).models["m"]
    assert isinstance(entry, AlternativesSeries) and entry.control is None
    assert list(entry.pairs) == ["ctl|sel", "ctl|copy", "sel|copy"]
    with pytest.raises(UnknownConfigError, match=r"--control nope: not among .*m: ctl, sel, copy"):
        analyze_responses(df, bootstrap=0, control="nope")


def test_series_of_one_configuration_each_are_alternatives_named_by_series() -> None:
    parts = [
        _one_budget(["16f"], [col], series=name)
        for name, col in (("zero", CTL), ("aks", SEL), ("uniform", CTL))
    ]
    result = analyze_responses(pd.concat(parts, ignore_index=True), bootstrap=0, control="zero")
    entry = result.models["m"]
    assert isinstance(entry, AlternativesSeries) and entry.members == "series"
    assert sorted(entry.configs) == ["aks", "uniform", "zero"]
    aks = entry.pairs["zero|aks"]
    assert (aks.n_fixed, aks.n_broken) == (10, 5)


def test_an_axis_whose_budgets_repeat_stays_an_axis_with_a_warning() -> None:
    matrix = {f"q{i:02d}": [CTL[i], SEL[i], CTL[i]] for i in range(N)}
    df = table(matrix, labels=["8f", "16f", "aks16"])
    df.loc[df["config_label"] == "aks16", "frames"] = 16
    entry = analyze_responses(df, bootstrap=0).models["m"]
    assert isinstance(entry, BinarySeries)
    (warning,) = entry.axis_warnings or []
    assert warning.startswith("16f, aks16 ask the same budget (16 frames)")
    assert "--configs 16f,aks16" in warning
    out = io.StringIO()
    print_summary(analyze_responses(df, bootstrap=0), out)
    assert "warning: 16f, aks16 ask the same budget" in out.getvalue()
    # the budgets that do grow keep their axis and its measures
    assert entry.axis == ["8f", "16f", "aks16"] and entry.best_fixed.config is not None
