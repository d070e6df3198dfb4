"""The interval methods (docs/measures.md, "Uncertainty"): BCa by hand, the intervals of
selected maxima, and a seeded coverage simulation that would catch a regression."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from _support.paths import REPO
from itemscale.analysis.measures import (
    analyze_responses,
    bca_intervals,
    contender_kappa,
    intervals,
    percentile_intervals,
    selected_intervals,
    selected_max_intervals,
)
from itemscale.core.responses import normalise_responses

sys.path.insert(0, str(REPO / "benchmarks"))
from coverage import coverage, population


def test_bca_is_the_percentile_interval_without_bias_or_skew() -> None:
    samples = np.linspace(-1.0, 1.0, 2001)[:, None]
    jack = np.linspace(-1.0, 1.0, 41)[:, None]  # symmetric: no acceleration
    got = bca_intervals(np.array([0.0]), samples, jack)
    assert got == pytest.approx(percentile_intervals(samples), abs=2e-3)


def test_bca_follows_its_formula_by_hand() -> None:
    rng = np.random.default_rng(0)
    samples = rng.normal(0.2, 1.0, (4000, 1))  # the estimate sits below the resamples' centre
    jack = rng.gamma(2.0, 1.0, (50, 1))  # skewed: an acceleration
    point = np.array([0.0])
    z0 = norm.ppf(np.mean(samples[:, 0] < 0.0))
    d = jack[:, 0].mean() - jack[:, 0]
    a = (d**3).sum() / (6 * ((d**2).sum()) ** 1.5)
    levels = [
        norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z))) for z in (norm.ppf(0.025), norm.ppf(0.975))
    ]
    expected = np.quantile(samples[:, 0], levels)
    assert bca_intervals(point, samples, jack)[0] == pytest.approx(expected, abs=1e-9)


def _basic(point: float, resampled: np.ndarray) -> tuple[float, float]:
    errors = resampled - point
    return point - float(np.quantile(errors, 0.975)), point - float(np.quantile(errors, 0.025))


def test_one_configuration_gives_its_basic_interval_by_hand() -> None:
    resampled = np.linspace(0.5, 0.7, 1001)  # errors -0.05 .. 0.15 around 0.55
    got = selected_max_intervals(np.array([[0.55]]), resampled[:, None, None], 80)[0]
    # quantiles of the errors: 0.975 -> -0.05 + 0.975 * 0.2 = 0.145; 0.025 -> -0.045
    assert got == pytest.approx([0.55 - 0.145, 0.55 + 0.045])
    gap = selected_max_intervals(
        np.array([[0.55]]),
        resampled[:, None, None],
        80,
        oracle=np.array([0.8]),
        oracle_resampled=np.full((1001, 1), 0.8),  # a fixed oracle: the gap mirrors the best
    )[0]
    assert gap == pytest.approx([0.8 - 0.55 - 0.045, 0.8 - 0.55 + 0.145])


def _two_budgets(shortfall: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    values = np.array([[0.6, 0.6 - shortfall]])
    resampled = values[None, :, :] + rng.normal(0.0, 0.02, (2000, 1, 2))
    return values, resampled


def test_a_far_budget_is_ignored_and_a_tied_one_widens_the_optimistic_end() -> None:
    values, resampled = _two_budgets(0.5)  # 25 standard errors behind: never the best
    alone = selected_max_intervals(values[:, :1], resampled[:, :, :1], 80)[0]
    assert selected_max_intervals(values, resampled, 80)[0] == pytest.approx(alone)
    assert alone == pytest.approx(_basic(0.6, resampled[:, 0, 0]))

    values, resampled = _two_budgets(0.0)  # tied: the best of two is optimistic
    low, high = selected_max_intervals(values, resampled, 80)[0]
    errors = resampled[:, 0, :] - values[0]
    assert low == pytest.approx(0.6 - np.quantile(errors.max(axis=1), 0.975))
    assert high == pytest.approx(0.6 - np.quantile(resampled[:, 0, :].max(axis=1) - 0.6, 0.025))
    assert low < _basic(0.6, resampled[:, 0, 0])[0] - 0.005


def test_the_contender_threshold_is_sqrt_log_videos() -> None:
    assert contender_kappa(80) == pytest.approx(np.sqrt(np.log(80)))
    spread = 0.02 * np.sqrt(2)  # the standard error of the difference of the two budgets
    inside, _ = _two_budgets(0.9 * contender_kappa(250) * spread)
    outside, _ = _two_budgets(1.1 * contender_kappa(250) * spread)
    for values, joins in ((inside, True), (outside, False)):
        _, resampled = _two_budgets(0.6 - values[0, 1])
        low = selected_max_intervals(values, resampled, 250)[0, 0]
        alone = _basic(0.6, resampled[:, 0, 0])[0]
        assert bool(low < alone - 1e-9) is joins


def test_intervals_are_cut_to_the_range_a_share_can_take() -> None:
    resampled = np.linspace(0.9, 1.0, 1001)[:, None, None]  # errors skewed low around 0.99
    low, high = selected_max_intervals(np.array([[0.99]]), resampled, 80)[0]
    assert high == 1.0 and low == pytest.approx(0.99 - (0.9 + 0.975 * 0.1 - 0.99))
    gap = selected_max_intervals(
        np.array([[0.99]]),
        resampled,
        80,
        oracle=np.array([1.0]),
        oracle_resampled=np.ones((1001, 1)),
    )[0]
    assert gap[0] == 0.0  # a headroom is never negative, though the basic bound says -0.0775
    assert gap[1] == pytest.approx(0.01 + 0.975 * 0.1 - 0.09)


def test_percentile_is_the_plain_interval_of_the_reselected_statistic() -> None:
    values, resampled = _two_budgets(0.01)
    oracle, oracle_s = np.array([0.9]), 0.9 + resampled[:, :, 0] * 0.1
    got = selected_intervals("percentile", values, resampled, 80)
    assert got == pytest.approx(percentile_intervals(resampled.max(axis=2)))
    gap = selected_intervals(
        "percentile", values, resampled, 80, oracle=oracle, oracle_resampled=oracle_s
    )
    assert gap == pytest.approx(percentile_intervals(oracle_s - resampled.max(axis=2)))
    with pytest.raises(ValueError, match="unknown interval method"):
        selected_intervals("studentized", values, resampled, 80)
    with pytest.raises(ValueError, match="unknown interval method"):
        intervals(values[0], resampled[:, 0, :], None, "studentized")


@settings(max_examples=60, deadline=None)
@given(
    shift=st.floats(-0.2, 0.2),  # every bound stays inside [0, 1]
    gaps=st.lists(st.floats(0.0, 0.2), min_size=1, max_size=4),
    seed=st.integers(0, 2**16),
)
def test_selected_intervals_move_with_the_data(shift: float, gaps: list[float], seed: int) -> None:
    """Shifting every budget shifts best fixed and leaves the gap to a shifted oracle alone;
    a budget far below the rest changes nothing; more contenders never raise the lower end."""
    rng = np.random.default_rng(seed)
    values = 0.6 - np.array([[0.0, *gaps]])
    resampled = values[None] + rng.normal(0.0, 0.03, (400, 1, values.shape[1]))
    oracle = np.array([0.9])
    oracle_s = oracle + 0.5 * (resampled.mean(axis=2) - values.mean())
    best = selected_max_intervals(values, resampled, 100)
    gap = selected_max_intervals(values, resampled, 100, oracle=oracle, oracle_resampled=oracle_s)
    moved = selected_max_intervals(values + shift, resampled + shift, 100)
    assert moved == pytest.approx(best + shift, abs=1e-9)
    moved_gap = selected_max_intervals(
        values + shift,
        resampled + shift,
        100,
        oracle=oracle + shift,
        oracle_resampled=oracle_s + shift,
    )
    assert moved_gap == pytest.approx(gap, abs=1e-9)
    far = np.concatenate([values, [[-5.0]]], axis=1)
    far_s = np.concatenate([resampled, np.full((400, 1, 1), -5.0)], axis=2)
    assert selected_max_intervals(far, far_s, 100) == pytest.approx(best)
    alone = selected_max_intervals(values[:, :1], resampled[:, :, :1], 100)
    assert best[0, 0] <= alone[0, 0] + 1e-12


def test_analyze_records_its_method_and_percentile_is_the_old_behaviour() -> None:
    table = normalise_responses(population(400, seed=3))
    bca = analyze_responses(table, bootstrap=200, seed=1).to_json()
    pct = analyze_responses(table, bootstrap=200, seed=1, ci="percentile").to_json()
    assert bca["bootstrap"]["interval"] == "bca" and pct["bootstrap"]["interval"] == "percentile"
    b, p = bca["models"]["population"], pct["models"]["population"]
    for key in ("best_fixed", "oracle_headroom", "oracle"):
        assert b[key]["value"] == p[key]["value"]  # points do not depend on the method
    # percentile re-selects the best in each resample; bca moves the headroom up, off the
    # resamples' pessimism (docs/measures.md)
    assert b["oracle_headroom"]["ci"] != p["oracle_headroom"]["ci"]
    assert sum(b["oracle_headroom"]["ci"]) > sum(p["oracle_headroom"]["ci"])


@pytest.mark.slow
def test_coverage_of_best_fixed_and_headroom_holds() -> None:
    """A seeded, smaller run of benchmarks/coverage.py: 200 samples of 80 videos."""
    table = normalise_responses(population(4000, seed=0))
    result = coverage(table, n_samples=200, n_videos=80, bootstrap=300, seed=11)
    for name in (
        "best_fixed",
        "oracle_headroom",
        "grid_with_text.oracle_headroom",
        "continuous.oracle_gap",
    ):
        assert result[name]["coverage"] >= 0.9, (name, result[name])
