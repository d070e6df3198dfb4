"""Answers compared as integer codes, and models computed on several threads, give exactly what
the plain computations give: both exist for speed (docs/performance.md, "Analysis"), so any
difference would be a change of output."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itemscale.analysis.measures import analyze_responses, build_matrices, text_overwrite_counts
from itemscale.analysis.measures._bootstrap import bca_intervals, percentile_intervals
from itemscale.analysis.measures._same_input import same_input
from itemscale.analysis.measures._threads import thread_count, thread_map
from itemscale.core.responses import normalise_responses

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from analysis import make_table  # the benchmark's own table, small

ANSWER = st.sampled_from([None, "A", "B", "C", "", "noanswer"])


def _codes(*columns: list[str | None]) -> tuple[list[np.ndarray], np.ndarray]:
    """Integer codes of the columns into one vocabulary (last entry None, for code -1), as the
    matrix builds them from the table's factorised answers."""
    values = sorted({a for col in columns for a in col if a is not None})
    vocab = np.array([*values, None], dtype=object)
    index = {a: i for i, a in enumerate(values)}
    return [
        np.array([-1 if a is None else index[a] for a in col], dtype=np.int32) for col in columns
    ], vocab


@settings(max_examples=200)
@given(st.lists(st.tuples(ANSWER, ANSWER), min_size=0, max_size=40))
def test_same_input_on_codes_equals_same_input_on_strings(pairs: list[tuple]) -> None:
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    (ca, cb), _ = _codes(a, b)
    tokens = np.full(len(pairs), 100.0)
    for kwargs in ({}, {"visual_tokens_from": tokens, "visual_tokens_to": tokens}):
        plain = same_input(np.array(a, dtype=object), np.array(b, dtype=object), **kwargs)
        coded = same_input(ca, cb, **kwargs)
        assert (plain is None) == (coded is None)
        if plain is not None and coded is not None:
            assert plain.model_dump() == coded.model_dump()


def test_same_input_on_codes_by_hand() -> None:
    # 60 items (the rule's minimum is 50) answered on both sides, all identical
    verdict = same_input(np.array([0, 1, 1, 2] * 15), np.array([0, 1, 1, 2] * 15))
    assert verdict is not None and verdict.basis == "identical_answers"
    assert (verdict.identical, verdict.answered) == (60, 60)
    # one code differs: no longer identical answers
    other = np.array([0, 1, 1, 2] * 15)
    other[0] = 3
    verdict = same_input(np.array([0, 1, 1, 2] * 15), other)
    assert verdict is None or verdict.basis != "identical_answers"
    # a missing answer (-1) is not an answered item
    verdict = same_input(
        np.array([0, -1]), np.array([0, -1]), visual_tokens_from=[9, 9], visual_tokens_to=[9, 9]
    )
    assert verdict is not None and (verdict.identical, verdict.answered) == (1, 1)


@settings(max_examples=100)
@given(
    st.integers(1, 12).flatmap(
        lambda n: st.tuples(
            st.lists(
                st.lists(st.sampled_from([0.0, 1.0]), min_size=3, max_size=3),
                min_size=n,
                max_size=n,
            ),
            st.lists(st.lists(ANSWER, min_size=3, max_size=3), min_size=n, max_size=n),
            st.lists(ANSWER, min_size=n, max_size=n),
        )
    )
)
def test_text_overwrite_counts_on_codes_equal_the_strings(case: tuple) -> None:
    y_rows, answer_rows, text = case
    y = np.array(y_rows)
    answers = np.array(answer_rows, dtype=object)
    flat, vocab = _codes(*answer_rows, text)
    cells, text_codes = np.stack(flat[:-1]), flat[-1]
    want = text_overwrite_counts(y, answers, np.array(text, dtype=object))
    got = text_overwrite_counts(y, cells, text_codes, vocab=vocab)
    assert np.array_equal(want[0], got[0]) and np.array_equal(want[1], got[1])


def test_the_matrix_codes_its_answers_and_keeps_them_through_subset_and_chain() -> None:
    df = normalise_responses(make_table(1, 30, 3, seed=4))
    (m,) = build_matrices(df)
    codes = m.answer_codes
    assert codes is not None
    assert np.array_equal(codes.vocab[codes.cells], m.answers.astype(object))
    assert list(codes.vocab[codes.text]) == list(m.text_answer)
    sub = m.subset(np.arange(m.n_items) % 2 == 0)
    assert sub.answer_codes is not None
    assert np.array_equal(sub.answer_codes.vocab[sub.answer_codes.cells], sub.answers)
    line = m.chain((0, 2))
    assert line.answer_codes is not None
    assert np.array_equal(line.answer_codes.vocab[line.answer_codes.cells], line.answers)


def test_intervals_of_undefined_columns_are_nan_without_a_warning() -> None:
    samples = np.array([[np.nan, 1.0, 2.0], [np.nan, 3.0, np.nan], [np.nan, 2.0, 4.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ci = percentile_intervals(samples)
        jack = np.array([[np.nan, 1.0, 2.0], [np.nan, 2.0, 3.0], [np.nan, 1.5, 2.5]])
        bca = bca_intervals(np.array([np.nan, 2.0, 3.0]), samples, jack)
    assert np.isnan(ci[0]).all() and np.isfinite(ci[1:]).all()
    # the defined columns equal nanquantile of each column alone
    assert np.array_equal(ci[2], np.nanquantile(samples[:, 2], [0.025, 0.975]))
    assert np.isnan(bca[0]).all() and np.isfinite(bca[1]).all()


def test_thread_map_keeps_the_order_and_raises_a_pieces_error() -> None:
    assert thread_map(lambda x: x * x, list(range(9)), 3) == [x * x for x in range(9)]
    assert thread_count(None, 1) == 1 and thread_count(4, 2) == 2 and thread_count(1, 9) == 1

    def fail(x: int) -> int:
        if x == 4:
            raise ValueError("piece 4")
        return x

    with pytest.raises(ValueError, match="piece 4"):
        thread_map(fail, list(range(6)), 2)


@pytest.fixture(scope="module")
def three_models() -> pd.DataFrame:
    return normalise_responses(make_table(3, 240, 4, seed=7))


@pytest.mark.parametrize("ci", ["bca", "percentile"])
def test_the_analysis_does_not_depend_on_the_threads(three_models: pd.DataFrame, ci: str) -> None:
    filters = list(warnings.filters)
    one = analyze_responses(three_models, bootstrap=60, seed=2, ci=ci, workers=1).to_json()
    many = analyze_responses(three_models, bootstrap=60, seed=2, ci=ci, workers=3).to_json()
    assert json.dumps(one) == json.dumps(many)
    assert len(one["models"]) == 3
    # no thread left the process's warning filters changed
    assert list(warnings.filters) == filters


def test_workers_must_be_at_least_one(three_models: pd.DataFrame) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="at least one worker"):
        analyze_responses(three_models, bootstrap=0, workers=0)
