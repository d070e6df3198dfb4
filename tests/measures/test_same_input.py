"""The one "same input" rule (docs/measures.md, "Budgets that add nothing"), hand-made cases."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from itemscale.measures import SAME_INPUT_MIN_ITEMS, same_input


def test_identical_answers_need_enough_items() -> None:
    answers = ["A", "B", "C"] * 20  # 60 items
    verdict = same_input(answers, list(answers))
    assert verdict is not None
    assert (verdict.basis, verdict.identical, verdict.items) == ("identical_answers", 60, 60)
    # 49 identical items are too few to call it one input
    assert same_input(answers[:49], answers[:49]) is None
    # one differing answer of 60: different inputs
    changed = list(answers)
    changed[7] = "D"
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
