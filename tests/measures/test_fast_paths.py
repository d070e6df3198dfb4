"""The analysis' fast paths give exactly what the plain computations they replace give: they
exist for speed (docs/performance.md), so any difference would be a change of output."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from itemscale.analysis.measures import _bootstrap
from itemscale.analysis.measures._binary import _valid_answer, _valid_answers
from itemscale.analysis.measures._blocks import _flip_counts
from itemscale.analysis.measures._bootstrap import VideoBootstrap
from itemscale.analysis.measures._matrix import _first_index, _parse_all_attributes, _unique_inverse

codes = arrays(np.int64, st.integers(0, 60), elements=st.integers(0, 40))
wide = arrays(np.int64, st.integers(0, 30), elements=st.integers(-(2**40), 2**40))


@given(st.one_of(codes, wide))
def test_unique_inverse_and_first_index_equal_numpy_unique(values: np.ndarray) -> None:
    uniques, inverse = _unique_inverse(values)
    want_u, want_i = np.unique(values, return_inverse=True)
    assert uniques.dtype == want_u.dtype and inverse.dtype == want_i.dtype
    assert np.array_equal(uniques, want_u) and np.array_equal(inverse, want_i)
    first = _first_index(inverse, len(uniques))
    assert np.array_equal(first, np.unique(inverse, return_index=True)[1])


def test_first_index_by_hand() -> None:
    assert _first_index(np.array([2, 0, 2, 1, 0]), 3).tolist() == [1, 3, 0]


@given(
    arrays(
        np.float64,
        st.tuples(st.integers(0, 40), st.integers(2, 5)),
        elements=st.sampled_from([0.0, 1.0]),
    ),
    st.booleans(),
)
def test_flip_counts_equal_the_per_pair_sums(y: np.ndarray, fractional: bool) -> None:
    if fractional and y.size:
        y = y.copy()
        y[0, 0] = 0.5  # not 0/1: the plain sums are used
    k = y.shape[1]
    pairs = [(a, b) for a in range(k) for b in range(a + 1, k)]
    a_idx = np.array([a for a, _ in pairs])
    b_idx = np.array([b for _, b in pairs])
    down, up = _flip_counts(y, a_idx, b_idx)
    assert np.array_equal(down, (y[:, a_idx] * (1 - y[:, b_idx])).sum(axis=0))
    assert np.array_equal(up, ((1 - y[:, a_idx]) * y[:, b_idx]).sum(axis=0))


def test_flip_counts_by_hand() -> None:
    y = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    down, up = _flip_counts(y, np.array([0]), np.array([1]))
    assert (down.tolist(), up.tolist()) == ([2.0], [1.0])


def test_valid_answers_judge_each_value_as_valid_answer_does() -> None:
    answers = np.array(["A", None, "", "B", float("nan"), "A", 3, "[no answer]"], dtype=object)
    from itemscale.core.responses import NOANSWER

    answers[-1] = NOANSWER
    assert _valid_answers(answers).tolist() == [_valid_answer(a) for a in answers]
    assert _valid_answers(np.array([], dtype=object)).tolist() == []


def test_attributes_parsed_once_per_value_missing_ones_empty() -> None:
    raw = np.array(['{"a": 1}', None, float("nan"), '{"b": "x"}', '{"a": 1}', "[1]"], dtype=object)
    parsed = _parse_all_attributes(raw)
    assert parsed == ({"a": "1"}, {}, {}, {"b": "x"}, {"a": "1"}, {})
    assert parsed[0] is parsed[4]


@pytest.mark.parametrize("n_boot", [1, 7, 250])
def test_kept_float32_counts_give_the_blocked_products_bit_for_bit(
    n_boot: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(n_boot)
    videos = np.array([f"v{i % 37}" for i in range(200)], dtype=object)
    values = (rng.random((200, 3)) < 0.4).astype(float)
    kept = VideoBootstrap(videos, n_boot, seed=4)
    sums = kept.sums(values)
    assert kept.float32_counts() is not None and "float32" in kept.converted
    rows = kept.resampled(kept.cluster_sums(values), min(n_boot, 5), dtype=np.float32)
    monkeypatch.setattr(_bootstrap, "_KEPT_FLOAT32_BYTES", 0)
    blocked = VideoBootstrap(videos, n_boot, seed=4)
    assert blocked.float32_counts() is None
    assert np.array_equal(blocked.sums(values), sums)
    want = blocked.resampled(blocked.cluster_sums(values), min(n_boot, 5), dtype=np.float32)
    assert np.array_equal(want, rows)


@settings(max_examples=150)
@given(st.integers(0, 3000).flatmap(lambda n: st.tuples(st.integers(0, n // 2), st.just(n))))
def test_vectorised_mcnemar_equals_scipy_binomtest_bit_for_bit(case: tuple[int, int]) -> None:
    from scipy.stats import binomtest

    from itemscale.analysis.measures._mcnemar import two_sided_binomial_ps

    k, n = case
    want = 1.0 if n == 0 else float(binomtest(k, n, 0.5).pvalue)
    assert float(two_sided_binomial_ps(np.array([k]), np.array([n]))[0]) == want


def test_mcnemar_every_small_count_and_by_hand() -> None:
    from scipy.stats import binomtest

    from itemscale.analysis.measures import mcnemar_exact_p
    from itemscale.analysis.measures._mcnemar import mcnemar_exact_ps

    down = np.array([d for n in range(40) for d in range(n + 1)])
    up = np.array([n - d for n in range(40) for d in range(n + 1)])
    want = [
        1.0 if d + u == 0 else float(binomtest(min(d, u), d + u, 0.5).pvalue)
        for d, u in zip(down.tolist(), up.tolist(), strict=True)
    ]
    assert mcnemar_exact_ps(down, up).tolist() == want
    # 0 of 5 discordant pairs one way: 2 * 0.5^5
    assert mcnemar_exact_p(0, 5) == 2 * 0.5**5 and mcnemar_exact_p(0, 0) == 1.0
    assert mcnemar_exact_p(3, 3) == 1.0


@settings(max_examples=100)
@given(st.integers(0, 400), st.integers(1, 5), st.booleans(), st.integers(0, 2**32 - 1))
def test_bca_acceleration_without_nan_equals_nanmean_and_nansum(
    videos: int, m: int, view: bool, seed: int
) -> None:
    """The jackknife's plain mean and sums (no NaN) give the bits nanmean and nansum give, on
    a whole array and on a column slice of a wider one (what `Columns.resolve` hands over)."""
    from itemscale.analysis.measures._bootstrap import acceleration

    rng = np.random.default_rng(seed)
    wide = rng.normal(size=(videos, m + 3))
    jack = wide[:, 1 : 1 + m] if view else np.ascontiguousarray(wide[:, :m])
    centred = np.nanmean(jack, axis=0) - jack if videos else np.zeros((0, m))
    num = np.nansum(centred**3, axis=0)
    den = 6.0 * np.nansum(centred**2, axis=0) ** 1.5
    want = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
    assert np.array_equal(acceleration(jack, m), want)
    # an all-NaN column is 0 and leaves the others as they were
    holed = np.column_stack([jack, np.full(videos, np.nan)])
    got = acceleration(holed, m + 1)
    assert got[m] == 0.0 and np.isfinite(got).all()
