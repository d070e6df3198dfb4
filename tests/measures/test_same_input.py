"""The one "same input" rule (docs/measures.md, "Budgets that add nothing"), hand-made cases.

The rule grades answers against a rerun floor from evidence only (measured or stated): without
one, a pair whose answers are not identical cannot be told apart from a rerun, and thin
evidence (a floor on few answers, or above a few percent; a recorded field on few items; no
answer on both sides) decides nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import beta, binom

from itemscale.analysis.measures import (
    FLOOR_MIN_ANSWERS,
    SAME_INPUT_MIN_ITEMS,
    RerunFloor,
    answer_agreement,
    grade_answers,
    rerun_bound,
    same_input,
)
from itemscale.core.responses import NOANSWER

#: a floor measured on enough answers: 7 of 2,700 (0.26%)
MEASURED = RerunFloor.of_counts(7, 2700, "between the run's own repeats (2700)")


def test_identical_answers_need_enough_items() -> None:
    answers = ["A", "B", "C"] * 20  # 60 items
    verdict = same_input(answers, list(answers))
    assert verdict is not None
    assert (verdict.basis, verdict.identical, verdict.items) == ("identical_answers", 60, 60)
    assert verdict.floor is None and verdict.rerun_bound is None
    # 49 identical items are too few to call it one input
    assert same_input(answers[:49], answers[:49]) is None
    changed = list(answers)
    changed[7] = "D"
    # without a floor one differing answer of 60 cannot be told from a rerun: not one input
    assert same_input(answers, changed) is None
    assert answer_agreement(answers, changed).answers == "cannot_tell"
    # at a measured floor of 7 of 2,700 a rerun moves at most 1 of 60; two are beyond it
    rerun = same_input(answers, changed, floor=MEASURED)
    assert rerun is not None and rerun.basis == "rerun_answers"
    assert (rerun.answers, rerun.differ, rerun.answered, rerun.rerun_bound) == ("rerun", 1, 60, 1)
    changed[8] = "D"
    assert same_input(answers, changed, floor=MEASURED) is None
    assert answer_agreement(answers, changed, floor=MEASURED).answers == "different"


def test_missing_answers_are_not_identical() -> None:
    answers: list[str | None] = ["A"] * 60
    other: list[str | None] = ["A"] * 59 + [None]
    assert same_input(answers, other) is None
    assert answer_agreement(answers, other).missing == 1


def test_no_answer_on_both_sides_is_cannot_tell_never_identical() -> None:
    # table 5 of the issue: 60 items answering NOANSWER at both budgets
    nothing = [NOANSWER] * 60
    assert same_input(nothing, list(nothing)) is None
    agreement = answer_agreement(nothing, list(nothing))
    assert (agreement.answered, agreement.identical, agreement.no_answer) == (0, 0, 60)
    assert agreement.answers == "cannot_tell"
    # 60 identical answers beside 10 no-answers: one input on the 60, the 10 said apart
    mixed = ["A", "B", "C"] * 20 + [NOANSWER] * 10
    verdict = same_input(mixed, list(mixed))
    assert verdict is not None and verdict.basis == "identical_answers"
    assert (verdict.identical, verdict.answered, verdict.no_answer) == (60, 60, 10)
    sentence = verdict.sentence("8f", "16f")
    assert "identical answers on 60 of 60 items" in sentence
    assert "10 items where neither side gave an answer cannot tell" in sentence
    # 40 answered items and 30 no-answers: too few compared items for one input
    assert same_input(mixed[:40] + [NOANSWER] * 30, mixed[:40] + [NOANSWER] * 30) is None
    # one side without an answer is a differing answer, not a no-answer pair
    one_side = answer_agreement(["A"] * 60, ["A"] * 59 + [NOANSWER])
    assert (one_side.differ, one_side.no_answer) == (1, 0)


def test_no_answer_as_an_answer_code() -> None:
    codes = np.array([0, 1, 2] * 20 + [3] * 10)  # 3 is NOANSWER's code
    verdict = same_input(codes, codes.copy(), no_answer=3)
    assert verdict is not None and (verdict.identical, verdict.no_answer) == (60, 10)
    # told nothing about the code, the rule counts the 10 as identical answers
    assert answer_agreement(codes, codes.copy()).identical == 70


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
    sentence = flat.sentence("8f", "16f")
    assert "visual tokens do not grow on any of 3 items" in sentence
    assert "no rerun floor is measured" in sentence  # 1 of 3 differ: cannot tell, said so


def test_tokens_on_one_item_decide_nothing() -> None:
    # table 3 of the issue: tokens recorded (flat) on 1 of 100 items, answers 45% vs 90% right
    gold = ["A"] * 100
    at_8 = ["A"] * 45 + ["B"] * 55
    at_16 = ["A"] * 90 + ["B"] * 10
    tokens: list[float | None] = [100.0] + [None] * 99
    assert gold != at_8
    verdict = same_input(
        at_8, at_16, visual_tokens_from=tokens, visual_tokens_to=tokens, floor=MEASURED
    )
    assert verdict is None  # the answers rule decides: 45 of 100 differ, beyond the floor
    # recorded on 51 of 100 items (most of them), flat: the record decides
    most: list[float | None] = [100.0] * 51 + [None] * 49
    recorded = same_input(at_8, at_16, visual_tokens_from=most, visual_tokens_to=most)
    assert recorded is not None and (recorded.basis, recorded.recorded) == ("visual_tokens", 51)
    # on exactly half (50 of 100): not most, the answers rule decides again
    half: list[float | None] = [100.0] * 50 + [None] * 50
    assert same_input(at_8, at_16, visual_tokens_from=half, visual_tokens_to=half) is None


def test_effective_frames_only_on_a_frame_step() -> None:
    answers = ["A", "B", "C"]
    kwargs = {"effective_frames_from": [8, 8, 8], "effective_frames_to": [8, 8, math.nan]}
    verdict = same_input(answers, answers, **kwargs)
    assert verdict is not None and verdict.basis == "effective_frames" and verdict.recorded == 2
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


@given(
    st.integers(min_value=0, max_value=3000),
    st.integers(min_value=1, max_value=3000),
    st.floats(min_value=0.0, max_value=100.0),
)
def test_without_a_floor_nothing_is_a_rerun(differ: int, n: int, percent: float) -> None:
    differ = min(differ, n)
    grade = grade_answers(differ, n)
    assert grade == ("identical" if differ == 0 else "cannot_tell")
    # a stated floor decides (when it is a few percent at most): never "cannot tell"
    stated = grade_answers(differ, n, RerunFloor.of_percent(percent))
    assert stated != "cannot_tell" or percent > 5.0


def test_the_rerun_bound_is_the_exact_binomial_quantile() -> None:
    # hand-computed: at rate 7/2700, P(X = 0 | n = 60) = (1 - 7/2700)^60 = 0.8559 < 0.95 and
    # P(X <= 1) = 0.8559 + 60 * (7/2700) * (1 - 7/2700)^59 = 0.9893 >= 0.95: the bound is 1
    p = 7 / 2700
    p0 = (1 - p) ** 60
    p1 = p0 + 60 * p * (1 - p) ** 59
    assert p0 < 0.95 <= p1 and rerun_bound(60, MEASURED) == 1
    k = rerun_bound(2700, MEASURED)
    assert k is not None and binom.cdf(k, 2700, p) >= 0.95 > binom.cdf(k - 1, 2700, p)
    assert k == 12
    # no floor, no bound
    assert rerun_bound(2700) is None
    assert grade_answers(5, 2700) == "cannot_tell" and grade_answers(0, 80) == "identical"
    assert grade_answers(5, 2700, MEASURED) == "rerun"
    assert grade_answers(15, 80, MEASURED) == "different"
    # a floor measured at zero (deterministic reruns) leaves no room
    exact = RerunFloor.of_counts(0, 400, "between the run's own repeats (400)")
    assert rerun_bound(10_000, exact) == 0 and grade_answers(1, 10_000, exact) == "different"


def test_a_stated_floor() -> None:
    stated = RerunFloor.of_percent(0.3)
    assert stated.stated and not stated.measured and stated.rate == pytest.approx(0.003)
    assert stated.source == "stated: 0.3% per answer (--rerun-floor 0.3)"
    assert stated.line() == "stated, 0.3% per answer (--rerun-floor 0.3)"
    # 7 of 2,700 within a stated 0.3%: P(X <= 12) < 0.95 <= P(X <= 13) at n 2,700, p 0.003
    assert binom.cdf(12, 2700, 0.003) < 0.95 <= binom.cdf(13, 2700, 0.003)
    assert rerun_bound(2700, stated) == 13 and grade_answers(7, 2700, stated) == "rerun"
    for bad in (-1.0, 100.5, math.nan, math.inf):
        with pytest.raises(ValueError, match="percent of answers"):
            RerunFloor.of_percent(bad)


def test_one_disagreeing_repeat_sets_no_floor() -> None:
    # table 2 of the issue: one repeat row answering otherwise, 100 of 100 answers differ
    thin = RerunFloor.of_counts(1, 1, "between A's own repeats (1)")
    assert thin.weakness() == f"it rests on 1 answer, fewer than {FLOOR_MIN_ANSWERS}"
    assert thin.interval == (pytest.approx(0.025), 1.0)
    assert grade_answers(100, 100, thin) == "cannot_tell"  # never "rerun"
    assert same_input(["A"] * 100, ["B"] * 100, floor=thin) is None
    line = thin.line()
    assert line.startswith("measured, 1 of 1 answers moved between A's own repeats (1)")
    assert "95% CI 2.50% to 100.00%" in line and "too thin to call any gap a rerun" in line
    # a thin floor still says "different" beyond what its interval's upper end moves
    zero_of_10 = RerunFloor.of_counts(0, 10, "between A's own repeats (10)")
    upper = float(beta.ppf(0.975, 1, 10))
    assert zero_of_10.upper == pytest.approx(upper)  # 0.308
    bound = int(binom.ppf(0.95, 100, upper))
    assert grade_answers(bound, 100, zero_of_10) == "cannot_tell"
    assert grade_answers(bound + 1, 100, zero_of_10) == "different"


def test_a_floor_above_a_few_percent_decides_nothing() -> None:
    high = RerunFloor.of_counts(300, 1000, "between cells and their reruns (1000)")
    assert high.weakness() is not None and "above 5.00%" in str(high.weakness())
    assert grade_answers(20, 100, high) == "cannot_tell"
    assert RerunFloor.of_percent(6).weakness() is not None
    assert RerunFloor.of_percent(5).weakness() is None


def test_recorded_same_input_with_answers_beyond_a_rerun_says_something_unrecorded() -> None:
    a = ["A", "B", "C", "D"] * 20
    b = list(a)
    for i in range(15):
        b[i] = "A" if a[i] != "A" else "B"
    verdict = same_input(
        a, b, visual_tokens_from=[100] * 80, visual_tokens_to=[100] * 80, floor=MEASURED
    )
    assert verdict is not None and verdict.basis == "visual_tokens"
    assert (verdict.answers, verdict.differ, verdict.answered) == ("different", 15, 80)
    sentence = verdict.sentence("A", "B")
    assert "answers differ beyond a rerun (15 of 80): something unrecorded differs" in sentence
