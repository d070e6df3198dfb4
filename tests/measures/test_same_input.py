"""The one "same input" rule (docs/measures.md, "Budgets that add nothing"), hand-made cases."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binom

from itemscale.measures import (
    DEFAULT_RERUN_FLOOR,
    SAME_INPUT_MIN_ITEMS,
    RerunFloor,
    grade_answers,
    rerun_bound,
    same_input,
)


def test_identical_answers_need_enough_items() -> None:
    answers = ["A", "B", "C"] * 20  # 60 items
    verdict = same_input(answers, list(answers))
    assert verdict is not None
    assert (verdict.basis, verdict.identical, verdict.items) == ("identical_answers", 60, 60)
    # 49 identical items are too few to call it one input
    assert same_input(answers[:49], answers[:49]) is None
    # one differing answer of 60 is what a rerun moves (bound 1 at the default floor); two
    # are beyond it: different inputs
    changed = list(answers)
    changed[7] = "D"
    rerun = same_input(answers, changed)
    assert rerun is not None and rerun.basis == "rerun_answers"
    assert (rerun.answers, rerun.differ, rerun.answered, rerun.rerun_bound) == ("rerun", 1, 60, 1)
    changed[8] = "D"
    assert same_input(answers, changed) is None


def test_missing_answers_are_not_identical() -> None:
    answers: list[str | None] = ["A"] * 60
    other: list[str | None] = ["A"] * 59 + [None]
    assert same_input(answers, other) is None


def test_recorded_tokens_win_over_answers() -> None:
    answers = ["A"] * 60
    # tokens grow on one item: different inputs although every answer agrees
    grow = same_input(
        answers, answers, visual_tokens_from=[100] * 60, visual_tokens_to=[100] * 59 + [130]
    )
    assert grow is None
    # tokens flat on every item, with only 3 items: the same input (recorded evidence needs no 50)
    flat = same_input(
        ["A", "B", "C"], ["A", "C", "C"], visual_tokens_from=[8, 8, 8], visual_tokens_to=[8, 8, 8]
    )
    assert flat is not None
    assert (flat.basis, flat.identical, flat.items, flat.recorded) == ("visual_tokens", 2, 3, 3)
    assert flat.median_from == 8 and flat.median_to == 8
    assert "visual tokens do not grow on any of 3 items" in flat.sentence("8f", "16f")


def test_effective_frames_only_on_a_frame_step() -> None:
    answers = ["A", "B"]
    kwargs = {"effective_frames_from": [8, 8], "effective_frames_to": [8, math.nan]}
    verdict = same_input(answers, answers, **kwargs)
    assert verdict is not None and verdict.basis == "effective_frames" and verdict.recorded == 1
    # a pixel step keeps the frame count by design: frames say nothing there
    assert same_input(answers, answers, frame_step=False, **kwargs) is None


def test_misaligned_columns_are_refused() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        same_input(["A"], ["A", "B"])
    with pytest.raises(ValueError, match="aligned"):
        same_input(["A"], ["A"], visual_tokens_from=[1, 2], visual_tokens_to=[1])


@given(st.lists(st.sampled_from(["A", "B", "C", "D", None]), min_size=0, max_size=120))
def test_answers_rule_is_exactly_identical_on_every_item(answers: list[str | None]) -> None:
    verdict = same_input(answers, answers)
    full = all(a is not None for a in answers) and len(answers) >= SAME_INPUT_MIN_ITEMS
    assert (verdict is not None) == full
    assert verdict is None or (verdict.answers, verdict.differ) == ("identical", 0)


def test_the_rerun_bound_is_the_exact_binomial_quantile() -> None:
    # hand-computed: at rate 7/2700, P(X = 0 | n = 60) = (1 - 7/2700)^60 = 0.8559 < 0.95 and
    # P(X <= 1) = 0.8559 + 60 * (7/2700) * (1 - 7/2700)^59 = 0.9893 >= 0.95: the bound is 1
    p = 7 / 2700
    p0 = (1 - p) ** 60
    p1 = p0 + 60 * p * (1 - p) ** 59
    assert p0 < 0.95 <= p1 and rerun_bound(60) == 1
    # 2,700 answers: the bound is the smallest k whose cumulative probability reaches 0.95
    k = rerun_bound(2700)
    assert binom.cdf(k, 2700, p) >= 0.95 > binom.cdf(k - 1, 2700, p)
    assert k == 12
    # the cases: 5 of 2,700 within a rerun, 15 of 80 beyond it
    assert grade_answers(5, 2700) == "rerun" and grade_answers(15, 80) == "different"
    assert grade_answers(0, 80) == "identical"
    # a floor measured at zero (deterministic reruns) leaves no room
    exact = RerunFloor(rate=0.0, source="measured: 0 of 400", measured=True)
    assert rerun_bound(10_000, exact) == 0 and grade_answers(1, 10_000, exact) == "different"
    assert DEFAULT_RERUN_FLOOR.rate == pytest.approx(0.0025926, abs=1e-6)


def test_recorded_same_input_with_answers_beyond_a_rerun_says_something_unrecorded() -> None:
    a = ["A", "B", "C", "D"] * 20
    b = list(a)
    for i in range(15):
        b[i] = "A" if a[i] != "A" else "B"
    verdict = same_input(a, b, visual_tokens_from=[100] * 80, visual_tokens_to=[100] * 80)
    assert verdict is not None and verdict.basis == "visual_tokens"
    assert (verdict.answers, verdict.differ, verdict.answered) == ("different", 15, 80)
    sentence = verdict.sentence("A", "B")
    assert "answers differ beyond a rerun (15 of 80): something unrecorded differs" in sentence
