"""The interval methods (docs/measures.md, "Uncertainty"): BCa by hand, the widening of
selected maxima, and a seeded coverage simulation that would catch a regression."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from scipy.stats import norm

from _support.paths import REPO
from itemscale.measures import (
    BIAS_EXTENSION,
    GAP_SHIFT,
    analyze_responses,
    bca_intervals,
    intervals,
    percentile_intervals,
)
from itemscale.responses import normalise_responses

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


def test_a_selected_maximum_is_widened_on_the_optimistic_side_only() -> None:
    samples = np.linspace(0.5, 0.7, 1001)[:, None]  # mean 0.6: bias +0.05 over the estimate
    point = np.array([0.55])
    plain = percentile_intervals(samples)[0]
    best = intervals(point, samples, None, "bca", "max")[0]
    assert best[1] == pytest.approx(plain[1])
    assert best[0] == pytest.approx(plain[0] - BIAS_EXTENSION * 0.05)
    gap = intervals(np.array([0.65]), samples, None, "bca", "gap")[0]  # bias -0.05
    assert gap[0] == pytest.approx(plain[0] + GAP_SHIFT * 0.05)
    assert gap[1] == pytest.approx(plain[1] + (GAP_SHIFT + BIAS_EXTENSION) * 0.05)
    assert intervals(point, samples, None, "percentile", "max")[0] == pytest.approx(plain)
    with pytest.raises(ValueError, match="unknown interval method"):
        intervals(point, samples, None, "studentized")


def test_analyze_records_its_method_and_percentile_is_the_old_behaviour() -> None:
    table = normalise_responses(population(400, seed=3))
    bca = analyze_responses(table, n_boot=200, seed=1)
    pct = analyze_responses(table, n_boot=200, seed=1, ci="percentile")
    assert bca["bootstrap"]["interval"] == "bca" and pct["bootstrap"]["interval"] == "percentile"
    b, p = bca["models"]["population"], pct["models"]["population"]
    assert b["oracle_headroom"]["value"] == p["oracle_headroom"]["value"]  # points unchanged
    assert b["oracle_headroom"]["ci"][1] >= p["oracle_headroom"]["ci"][1]


@pytest.mark.slow
def test_coverage_of_best_fixed_and_headroom_holds() -> None:
    """A seeded, smaller run of benchmarks/coverage.py: 200 samples of 80 videos."""
    table = normalise_responses(population(4000, seed=0))
    result = coverage(table, n_samples=200, n_videos=80, n_boot=300, seed=11)
    for name in (
        "best_fixed",
        "oracle_headroom",
        "grid_with_text.oracle_headroom",
        "continuous.oracle_gap",
    ):
        assert result[name]["coverage"] >= 0.9, (name, result[name])
