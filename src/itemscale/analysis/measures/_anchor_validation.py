"""Leave-one-model-out validation of anchor subsets, and coverage on simulated respondents.

An anchor subset is only worth its savings if a model it never saw is predicted well: each
model is held out, anchors drawn from the others' fit predict it, and the figure is the median
over models of the mean absolute error over configurations, per seed (docs/anchors.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ._anchors import Z95, choose_anchors, predict_accuracy
from ._irt import IrtFit, binary_matrix, fit_irt, probability

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd


@dataclass(frozen=True)
class SeedOutcome:
    """One (method, K, seed): per model the MAE over its configurations (points), and how many
    (model, configuration) intervals covered the full-item accuracy, of how many."""

    method: str
    k: int
    seed: int
    mae_by_model: dict[str, float]
    covered: int
    cases: int

    @property
    def median_mae(self) -> float:
        return float(np.median(list(self.mae_by_model.values())))


def _random_prediction(y: np.ndarray, k: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """The baseline: K items drawn uniformly, their mean, a simple-random-sample interval."""
    n = y.shape[1]
    cols = rng.choice(n, size=k, replace=False)
    ya = y[:, cols]
    est = ya.mean(axis=1)
    se = np.sqrt(ya.var(axis=1, ddof=1) / k * (1 - k / n))
    return est, se


def leave_one_model_out(
    df: pd.DataFrame, ks: Sequence[int], seeds: Sequence[int], *, strata: int = 10
) -> list[SeedOutcome]:
    """Every (method, K, seed) of the validation on `df` (methods `anchors` and `random`)."""
    meta, items, y, observed = binary_matrix(df)
    truth = (y * observed).sum(axis=1) / observed.sum(axis=1)
    models = sorted(set(meta["model"]))
    series = meta["series"].astype(str).to_numpy()
    fits: dict[str, IrtFit] = {m: fit_irt(df[df["model"] != m]) for m in models}
    out = []
    for k in ks:
        for seed in seeds:
            for method in ("anchors", "random"):
                rng = np.random.default_rng(seed)
                mae: dict[str, float] = {}
                covered = cases = 0
                for m in models:
                    rows = np.flatnonzero(meta["model"].to_numpy() == m)
                    if method == "anchors":
                        anchors = choose_anchors(fits[m], k, strata=strata, seed=seed)
                        est, se, _ = predict_accuracy(
                            fits[m],
                            anchors,
                            y[rows],
                            observed[rows],
                            items,
                            groups=list(series[rows]),
                        )
                    else:
                        est, se = _random_prediction(y[rows], k, rng)
                    err = np.abs(est - truth[rows])
                    mae[m] = 100.0 * float(err.mean())
                    covered += int((err <= Z95 * se).sum())
                    cases += len(rows)
                out.append(SeedOutcome(method, k, seed, mae, covered, cases))
    return out


def simulated_coverage(
    fit: IrtFit,
    k: int,
    seeds: Sequence[int],
    *,
    respondents: int = 500,
    strata: int = 10,
    per_model: int = 5,
) -> float:
    """Share of simulated held-out respondents whose accuracy on every item lies in the
    anchors' 95% interval: abilities drawn from a normal with the fit's respondents' mean and
    spread, outcomes from the fitted 2PL, fresh anchors (and respondents) per seed; every
    `per_model` consecutive respondents are predicted as one model's configurations (pooled)."""
    a, b = fit.arrays()
    thetas = np.array([r.theta for r in fit.respondents])
    ids = fit.item_ids()
    hits = total = 0
    for seed in seeds:
        rng = np.random.default_rng(10_000 + seed)
        theta = rng.normal(thetas.mean(), thetas.std(), respondents)
        y = (rng.random((respondents, len(ids))) < probability(theta, a, b)).astype(float)
        anchors = choose_anchors(fit, k, strata=strata, seed=seed)
        groups = [str(r // per_model) for r in range(respondents)]
        est, se, _ = predict_accuracy(
            fit, anchors, y, np.ones_like(y, dtype=bool), ids, groups=groups
        )
        hits += int((np.abs(est - y.mean(axis=1)) <= Z95 * se).sum())
        total += respondents
    return hits / total


def summary_rows(outcomes: Sequence[SeedOutcome]) -> list[dict[str, float | int | str]]:
    """One row per (method, K): the median-over-models MAE averaged over seeds (and its
    median), the mean covered cases per seed, and the share of seeds covering >= all but two."""
    rows: list[dict[str, float | int | str]] = []
    keys = sorted({(o.method, o.k) for o in outcomes}, key=lambda t: (t[1], t[0]))
    for method, k in keys:
        chosen = [o for o in outcomes if o.method == method and o.k == k]
        medians = np.array([o.median_mae for o in chosen])
        covered = np.array([o.covered for o in chosen])
        cases = chosen[0].cases
        rows.append(
            {
                "method": method,
                "k": k,
                "seeds": len(chosen),
                "mae_points_mean": round(float(medians.mean()), 2),
                "mae_points_median": round(float(np.median(medians)), 2),
                "covered_mean": round(float(covered.mean()), 1),
                "covered_min": int(covered.min()),
                "cases": cases,
                "seeds_covering_all_but_two": round(float((covered >= cases - 2).mean()), 2),
            }
        )
    return rows
