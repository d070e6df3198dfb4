"""The 2PL fit recovers known parameters; anchors, their file and their prediction."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from itemscale.analysis.measures import (
    IrtError,
    IrtFit,
    anchor_text,
    choose_anchors,
    fit_irt,
    predict_accuracy,
    read_anchors,
    simulate_2pl,
)
from itemscale.analysis.measures._anchors import pooled_corrections, stratified_estimate
from itemscale.analysis.measures._irt import fit_matrix, standard_errors, theta_for


def _table(y: np.ndarray) -> pd.DataFrame:
    """A response table holding `y` (respondents x items) as one model's configurations."""
    rows = []
    for r in range(y.shape[0]):
        for i in range(y.shape[1]):
            rows.append(
                {
                    "model": "m",
                    "series": "s",
                    "config_id": f"c{r:02d}",
                    "config_label": f"{r}f",
                    "frames": r + 1,
                    "item_id": f"i{i:04d}",
                    "status": "ok",
                    "correct": y[r, i],
                }
            )
    return pd.DataFrame(rows)


def test_recovers_simulated_difficulty_at_30_by_2000() -> None:
    """The issue's check: seed 48, 30 respondents x 2,000 items, corr(b, b_hat) >= 0.95."""
    y, theta, a, b = simulate_2pl(30, 2000, seed=48)
    th, a_hat, b_hat, info = fit_matrix(y)
    assert info["converged"] == 1.0
    assert np.corrcoef(b, b_hat)[0, 1] >= 0.95
    assert np.corrcoef(theta, th)[0, 1] >= 0.95
    assert np.corrcoef(a, a_hat)[0, 1] > 0.3  # 30 respondents pin a down only loosely
    se_t, se_a, se_b = standard_errors(th, a_hat, b_hat)
    assert np.all(se_t > 0)
    # the latent scale is set by the priors, not the simulation's: compare by correlation only
    assert np.all(se_b > 0) and np.all(se_a > 0)


def test_theta_of_a_new_respondent_rises_with_its_answers() -> None:
    a, b = np.ones(5), np.zeros(5)
    y = np.array([[0, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], float)
    th, se = theta_for(y, a, b)
    assert list(np.argsort(th)) == [0, 1, 2, 3] and abs(th[2] + th[1]) < 1e-3
    assert np.all(se > 0)


def test_fit_record_round_trips_and_refuses_another_schema(tmp_path: Path) -> None:
    y, *_ = simulate_2pl(6, 40, seed=1)
    fit = fit_irt(_table(y))
    assert len(fit.respondents) == 6 and len(fit.items) == 40
    again = IrtFit.from_json(fit.to_json())
    assert again == fit
    with pytest.raises(IrtError, match="schema_version 99"):
        IrtFit.from_json(fit.to_json().replace('"schema_version": 2', '"schema_version": 99'))
    with pytest.raises(IrtError, match="at least 3"):
        fit_irt(_table(y[:2]))


def test_anchor_file_round_trips_and_the_design_holds(tmp_path: Path) -> None:
    y, *_ = simulate_2pl(20, 300, seed=2)
    fit = fit_irt(_table(y))
    anchors = choose_anchors(fit, 40, strata=5, seed=3)
    assert anchors.k == 40 and len(set(anchors.items)) == 40
    assert sum(size for size, _ in anchors.strata) == 300
    assert all(len(g) >= 2 for _, g in anchors.strata)
    assert choose_anchors(fit, 40, strata=5, seed=3) == anchors  # seeded
    path = tmp_path / "a.txt"
    path.write_text(anchor_text(anchors))
    assert read_anchors(path) == anchors
    plain = tmp_path / "plain.txt"
    plain.write_text("i0001\ni0002\n")
    assert read_anchors(plain).data_digest is None
    plain.write_text("i0001\ni0001\n")
    with pytest.raises(IrtError, match="line 2: item 'i0001' repeats line 1"):
        read_anchors(plain)


def test_prediction_is_exact_when_every_item_is_an_anchor() -> None:
    """With K = N the stratified residual term makes the estimate the observed accuracy and
    the finite-population correction makes its variance zero (a hand-checkable case)."""
    y, *_ = simulate_2pl(10, 60, seed=4)
    fit = fit_irt(_table(y))
    anchors = choose_anchors(fit, 60, strata=3, seed=0)
    est, se, _ = predict_accuracy(fit, anchors, y, np.ones_like(y, bool), fit.item_ids())
    assert np.allclose(est, y.mean(axis=1)) and np.allclose(se, 0.0)
    groups = ["a"] * 5 + ["b"] * 5  # pooling leaves no item unanswered to pool for
    est, se, _ = predict_accuracy(fit, anchors, y, np.ones_like(y, bool), fit.item_ids(), groups)
    assert np.allclose(est, y.mean(axis=1)) and np.allclose(se, 0.0)


def test_pooling_one_configuration_is_the_stratified_estimate() -> None:
    """A model with one configuration keeps its own residuals: the correction and variance are
    `stratified_estimate`'s, and its pooling weight is 1."""
    rng = np.random.default_rng(3)
    resid = rng.normal(0.0, 0.4, (1, 12))
    bounds, sizes = np.array([0, 4, 8, 12]), np.array([30.0, 40.0, 50.0])
    est, var, lam = pooled_corrections(resid, np.ones_like(resid, bool), bounds, sizes)
    groups = [resid[0, lo:hi] for lo, hi in itertools.pairwise(bounds)]
    expected = stratified_estimate(groups, sizes)
    assert lam[0] == 1.0
    assert np.isclose(est[0], expected[0]) and np.isclose(var[0], expected[1])


def test_pooling_shrinks_toward_the_model_when_its_configurations_misfit_alike() -> None:
    """Configurations sharing one residual pattern plus small noise: their corrections are
    pulled together (weights near 0) and their variance is below each one's own; configurations
    whose residuals differ by a large shift keep their own (weights near 1)."""
    rng = np.random.default_rng(4)
    bounds, sizes = np.array([0, 20, 40]), np.array([200.0, 200.0])
    shared = rng.normal(0.1, 0.4, 40)
    alike = shared + rng.normal(0.0, 0.05, (4, 40))
    seen = np.ones_like(alike, bool)
    est, var, lam = pooled_corrections(alike, seen, bounds, sizes)
    _, own_var, _ = pooled_corrections(alike[:1], seen[:1], bounds, sizes)
    assert np.all(lam < 0.3) and np.ptp(est) < 0.01 and var[0] < own_var[0]
    apart = shared + np.array([[-0.6], [-0.2], [0.2], [0.6]]) + rng.normal(0.0, 0.05, (4, 40))
    est, _, lam = pooled_corrections(apart, seen, bounds, sizes)
    assert np.all(lam > 0.9) and list(np.argsort(est)) == [0, 1, 2, 3]


def test_the_ability_prior_moves_a_new_respondent() -> None:
    """`theta_for`'s prior: a prior centred higher gives a higher mode for the same answers."""
    a, b = np.ones(6), np.zeros(6)
    y = np.array([[1, 1, 1, 0, 0, 0]], float)
    low, _ = theta_for(y, a, b, prior=(-1.0, 1.0))
    high, _ = theta_for(y, a, b, prior=(1.0, 1.0))
    assert low[0] < 0.0 < high[0]


def test_simulated_held_out_respondents_are_covered() -> None:
    """Respondents simulated from a known 2PL: the anchors' 95% interval covers their
    accuracy on all items about 95% of the time (seeded; the band the issue asks for)."""
    from itemscale.analysis.measures import simulated_coverage

    y, *_ = simulate_2pl(30, 800, seed=5)
    fit = fit_irt(_table(y))
    share = simulated_coverage(fit, 100, range(4), respondents=300)
    assert 0.90 <= share <= 0.98


@pytest.mark.slow
def test_leave_one_model_out_on_the_release_beats_random_items(tmp_path: Path) -> None:
    """The shipped release, K = 100, 20 seeds (docs/anchors.md): the anchors' median-over-models
    error is at most 2.3 points, below random items', and their intervals cover at least 27 of
    29 cases on average."""
    from itemscale.analysis.measures import leave_one_model_out, summary_rows
    from itemscale.core.responses import read_run
    from itemscale.workflows._paper import import_release

    import_release(tmp_path / "release")
    df, _ = read_run(tmp_path / "release", slim=True)
    rows = {r["method"]: r for r in summary_rows(leave_one_model_out(df, [100], range(20)))}
    anchors, random = rows["anchors"], rows["random"]
    assert anchors["cases"] == 29
    assert anchors["mae_points_mean"] < random["mae_points_mean"] - 0.3
    assert anchors["mae_points_mean"] <= 2.3  # the target set for this feature
    assert anchors["covered_mean"] >= 27


_FIT_ON_THE_RELEASE = """
import sys, numpy as np
from pathlib import Path
from itemscale.analysis.measures import choose_anchors, fit_irt
from itemscale.core.responses import read_run
from itemscale.workflows import import_release
import_release(Path(sys.argv[1]))
df, _ = read_run(Path(sys.argv[1]), slim=True)
fit = fit_irt(df[df["model"] != "Qwen3-VL-8B"])
print(" ".join(f"{it.difficulty:.6f}" for it in fit.items[:50]))
print(" ".join(choose_anchors(fit, 100, seed=0).items))
"""


@pytest.mark.skipif(
    __import__("platform").machine() not in ("x86_64", "AMD64"), reason="x86 BLAS kernels"
)
def test_the_fit_does_not_depend_on_the_blas_kernels(tmp_path: Path) -> None:
    """numpy's OpenBLAS picks its kernels by CPU; the docs' walk-through gave 183 iterations on
    one and 255 on another, and another set of anchors. Converged to the optimum, two kernels
    (forced with OPENBLAS_CORETYPE, as two CPUs would pick them) give the same difficulties to
    1e-5 and the same anchors."""
    import os
    import subprocess
    import sys

    out = {}
    for core in ("Prescott", "Haswell"):
        done = subprocess.run(
            [sys.executable, "-c", _FIT_ON_THE_RELEASE, str(tmp_path / core)],
            env={**os.environ, "OPENBLAS_CORETYPE": core, "OMP_NUM_THREADS": "1"},
            capture_output=True,
            text=True,
            timeout=600,
            check=True,
        )
        out[core] = done.stdout.splitlines()
    first = np.array(out["Prescott"][0].split(), dtype=float)
    second = np.array(out["Haswell"][0].split(), dtype=float)
    np.testing.assert_allclose(first, second, atol=1e-5)
    assert out["Prescott"][1] == out["Haswell"][1]
