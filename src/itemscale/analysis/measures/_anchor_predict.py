"""`analyze --anchors FILE --irt FIT`: what a model swept on the anchors alone says about the
whole item set, as a typed record.

Accuracy at every configuration comes from the 2PL plus the anchors' residuals
(`predict_accuracy`); the item-level rates are estimated from the anchors as a stratified
sample, with intervals from resampling anchors within their groups, wider than a full sweep's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ._anchors import Z95, AnchorSet, predict_accuracy
from ._irt import IrtError, IrtFit, binary_matrix
from ._result_models import Estimate

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

#: Version of the record `analyze --anchors --json` writes; bump on any change of its fields.
#: 2: each interval is an `Estimate`, `{"value", "ci": [low, high]}` as in the analysis (it was
#: `{"value", "low", "high"}`). 3: `warnings`, and no interval (`ci` null) where the anchor
#: answers it would rest on are all alike.
ANCHOR_PREDICTION_SCHEMA_VERSION: Final[int] = 3

_FROZEN = ConfigDict(extra="forbid", frozen=True)


class PredictedConfiguration(BaseModel):
    """One configuration swept on the anchors: its predicted accuracy on all items, with CI."""

    model_config = _FROZEN
    model: str
    series: str
    config_id: str
    config_label: str
    frames: int
    anchors_answered: int
    anchor_accuracy: float = Field(description="share right over the anchors it answered")
    theta: float
    predicted_accuracy: Estimate


class EstimatedRates(BaseModel):
    """Item-level rates of one (model, series) on the whole item set, estimated from anchors."""

    model_config = _FROZEN
    model: str
    series: str
    configurations: tuple[str, ...] = Field(description="text-only first, then the axis")
    anchors: int
    harmful_rate: Estimate
    oracle: Estimate
    best_fixed: Estimate
    oracle_headroom: Estimate
    note: str = "estimated from the anchors (a stratified sample of the items), not measured"


class AnchorPrediction(BaseModel):
    model_config = _FROZEN
    schema_version: int = ANCHOR_PREDICTION_SCHEMA_VERSION
    fit_digest: str
    items: int = Field(description="items of the fit: the full set predicted")
    anchors: int
    bootstrap: int
    seed: int
    configurations: tuple[PredictedConfiguration, ...]
    rates: tuple[EstimatedRates, ...]
    warnings: tuple[str, ...] = Field(
        default=(),
        description="what limits these numbers: the fit's caveats, configurations that "
        "answered few anchors or answered them all alike",
    )

    def to_json(self) -> str:
        return self.model_dump_json(indent=1)


def _weights(anchors: AnchorSet, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """(group of each anchor, N_h / n_h weight of each anchor)."""
    group = np.concatenate([np.full(len(g), h) for h, (_, g) in enumerate(anchors.strata)])
    size = np.array([s if s else n_items for s, _ in anchors.strata], dtype=float)
    count = np.array([len(g) for _, g in anchors.strata], dtype=float)
    return group, (size / count)[group]


def _rates(y: np.ndarray, less: np.ndarray, w: np.ndarray) -> np.ndarray:
    """[4]: weighted harmful rate, oracle, best fixed accuracy and oracle headroom of anchors
    answers `y` [n, K] (columns in budget order `less`)."""
    from ._binary import harmful_indicator

    total = w.sum()
    harmful = float(w @ harmful_indicator(y, less)) / total
    oracle = float(w @ (y.max(axis=1) >= 1)) / total
    best = float((w @ y).max()) / total
    return np.array([harmful, oracle, best, oracle - best])


def estimate_rates(
    df: pd.DataFrame, anchors: AnchorSet, n_items: int, *, bootstrap: int, seed: int
) -> list[EstimatedRates]:
    """The rates of every (model, series) of `df`'s anchor rows, text-only as the smallest
    budget when present (the `grid_with_text` convention of docs/measures.md)."""
    from ._matrix import build_matrices
    from ._order import budget_order

    group, weight = _weights(anchors, n_items)
    position = {item: j for j, item in enumerate(anchors.items)}
    out = []
    for m in build_matrices(df[df["item_id"].isin(position)], text_on_axis=False):
        if m.kind != "binary":
            continue
        idx = np.array([position[str(i)] for i in m.item_ids])
        y = m.values[:, :, 0]
        less = budget_order(m.frames, m.pixels, m.labels).less
        labels = list(m.labels)
        if m.text_label and not np.isnan(m.text_value).any():
            y = np.column_stack([m.text_value, y])
            grown = np.zeros((len(labels) + 1, len(labels) + 1), dtype=bool)
            grown[0, 1:] = True
            grown[1:, 1:] = less
            less, labels = grown, [m.text_label, *labels]
        point = _rates(y, less, weight[idx])
        rng = np.random.default_rng(seed)
        draws = np.empty((bootstrap, 4))
        for r in range(bootstrap):
            pick = np.concatenate(
                [
                    rng.choice(np.flatnonzero(group[idx] == h), size=int((group[idx] == h).sum()))
                    for h in np.unique(group[idx])
                ]
            )
            draws[r] = _rates(y[pick], less, weight[idx][pick])
        low, high = np.percentile(draws, [2.5, 97.5], axis=0) if bootstrap else (point, point)
        alike = bool((y == y.flat[0]).all()) if y.size else True
        values = [  # answers all alike: no resample can vary, the interval says nothing
            Estimate(float(p), None if alike else float(lo), None if alike else float(hi))
            for p, lo, hi in zip(point, low, high, strict=True)
        ]
        out.append(
            EstimatedRates(
                model=m.model,
                series=m.series,
                configurations=tuple(labels),
                anchors=len(idx),
                harmful_rate=values[0],
                oracle=values[1],
                best_fixed=values[2],
                oracle_headroom=values[3],
            )
        )
    return out


def predict_from_anchors(
    df: pd.DataFrame, fit: IrtFit, anchors: AnchorSet, *, bootstrap: int = 1000, seed: int = 0
) -> AnchorPrediction:
    """Predicted accuracy at every configuration of `df` and the estimated item-level rates;
    anchors the fit does not hold, or a fit the anchors were not drawn from, are refused."""
    fit_items = set(fit.item_ids())
    unknown = [i for i in anchors.items if i not in fit_items]
    if unknown:
        raise IrtError(f"anchors not in the fit's items: {', '.join(unknown[:5])}")
    if anchors.data_digest is not None and anchors.data_digest != fit.data_digest:
        raise IrtError(
            "the anchors were drawn from another fit (their header's digest "
            f"{anchors.data_digest[:12]}... is not this fit's {fit.data_digest[:12]}...)"
        )
    meta, items, y, observed = binary_matrix(df)
    missing = [i for i in anchors.items if i not in set(items)]
    if len(missing) == len(anchors.items):
        raise IrtError("the run answered none of the anchors")
    if missing:  # never answered: unobserved columns
        items = [*items, *missing]
        y = np.column_stack([y, np.zeros((len(y), len(missing)))])
        observed = np.column_stack([observed, np.zeros((len(y), len(missing)), dtype=bool)])
    groups = (meta["model"].astype(str) + "/" + meta["series"].astype(str)).tolist()
    est, se, theta = predict_accuracy(fit, anchors, y, observed, items, groups=groups)
    cols = [items.index(i) for i in anchors.items]
    answered = observed[:, cols].sum(axis=1)
    right = (y[:, cols] * observed[:, cols]).sum(axis=1)
    alike = (right == 0) | (right == answered)  # every anchor answer right, or every one wrong
    configs = tuple(
        PredictedConfiguration(
            model=str(row.model),
            series=str(row.series),
            config_id=str(row.config_id),
            config_label=str(row.config_label),
            frames=int(str(row.frames)),
            anchors_answered=int(answered[k]),
            anchor_accuracy=float(y[k, cols].sum() / max(answered[k], 1)),
            theta=float(theta[k]),
            predicted_accuracy=Estimate(
                float(est[k]),
                None if alike[k] else float(max(0.0, est[k] - Z95 * se[k])),
                None if alike[k] else float(min(1.0, est[k] + Z95 * se[k])),
            ),
        )
        for k, row in enumerate(meta.itertuples())
    )
    configs = tuple(sorted(configs, key=lambda c: (c.model, c.series, c.frames, c.config_label)))
    rates = estimate_rates(df, anchors, len(fit_items), bootstrap=bootstrap, seed=seed)
    return AnchorPrediction(
        warnings=tuple(fit.caveats() + prediction_caveats(configs, rates, anchors.k)),
        fit_digest=fit.data_digest,
        items=len(fit_items),
        anchors=anchors.k,
        bootstrap=bootstrap,
        seed=seed,
        configurations=configs,
        rates=tuple(rates),
    )


def prediction_caveats(
    configs: Sequence[PredictedConfiguration], rates: Sequence[EstimatedRates], k: int
) -> list[str]:
    """Which predictions rest on little: a configuration that answered fewer than the `k`
    anchors, one whose anchor answers are all alike (no interval: the residuals' spread cannot
    be estimated from answers that never vary), rates whose anchor answers are all alike."""
    out = []
    for c in configs:
        name = f"{c.model} {c.config_label}"
        if c.anchors_answered < k:
            out.append(
                f"{name}: predicted from {c.anchors_answered} of {k} anchors (the others "
                "unanswered or failed): the prediction rests on those answers alone"
            )
        if c.predicted_accuracy.ci is None and c.anchors_answered > 0:
            word = "right" if c.anchor_accuracy == 1 else "wrong"
            out.append(
                f"{name}: all {c.anchors_answered} anchor answers are {word}, so how far the "
                "full set's accuracy is from the prediction cannot be told from them "
                "(no interval); sweep more anchors"
            )
    for r in rates:
        if r.harmful_rate.ci is None:
            out.append(
                f"{r.model} {r.series}: every anchor answer is alike at every configuration, so "
                "the estimated rates have no interval (cannot tell); sweep more anchors"
            )
    return out
