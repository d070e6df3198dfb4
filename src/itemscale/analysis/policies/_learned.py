"""A learned stopping rule: a small logistic model on confidence and agreement features.

Raw confidence is a poor stopping signal when a model is confidently wrong at small budgets; the
answer's stability across budgets carries what confidence misses. The model predicts, per stage,
whether stopping there loses nothing against the terminal budget (y_k >= y_K): items both wrong
at k and at the terminal are free savings, which "is stage k correct" would not count. It is
fitted on one fold and applied to the other, like every threshold here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.special import expit

from ...core.responses import NOANSWER

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

FEATURE_NAMES: tuple[str, ...] = (
    "confidence",
    "confidence_missing",
    "agrees_with_previous",
    "agreeing_run_length",
    "confidence_change",
    "noanswer",
    "stage_position",
)
_RIDGE = 1.0
_MAX_ITER = 50


def agreement_matrix(answers: npt.NDArray[np.object_]) -> BoolArray:
    """agree[i, k]: stage k gave the same answer as stage k-1 (never true at stage 0, never for a
    missing answer or NOANSWER: two non-answers agreeing say nothing about the item)."""
    n, k = answers.shape
    agree = np.zeros((n, k), dtype=bool)
    if k < 2:
        return agree
    cur = answers[:, 1:]
    prev = answers[:, :-1]
    valid = np.vectorize(lambda a: a is not None and a == a and a != NOANSWER, otypes=[bool])
    agree[:, 1:] = (cur == prev) & valid(cur) & valid(prev)
    return agree


def agreeing_run(agree: BoolArray) -> FloatArray:
    """run[i, k]: how many stages before k in a row gave stage k's (real) answer."""
    run = np.zeros(agree.shape)
    for k in range(1, agree.shape[1]):
        run[:, k] = np.where(agree[:, k], run[:, k - 1] + 1.0, 0.0)
    return run


def stopping_features(
    confidence: FloatArray, answers: npt.NDArray[np.object_]
) -> npt.NDArray[np.float64]:
    """Features [items, stages-1, len(FEATURE_NAMES)] for every stage that may stop."""
    n, k = confidence.shape
    agree = agreement_matrix(answers)
    missing = np.isnan(confidence)
    conf = np.where(missing, 0.0, confidence)
    run = agreeing_run(agree)
    change = np.zeros((n, k))
    change[:, 1:] = np.where(missing[:, 1:] | missing[:, :-1], 0.0, conf[:, 1:] - conf[:, :-1])
    noanswer = np.vectorize(lambda a: a == NOANSWER, otypes=[bool])(answers)
    position = np.broadcast_to(np.arange(k) / max(k - 1, 1), (n, k))
    stacked = np.stack([conf, missing, agree, run, change, noanswer, position], axis=-1).astype(
        np.float64
    )
    return np.asarray(stacked[:, : k - 1, :], dtype=np.float64)


@dataclass(frozen=True)
class StoppingModel:
    """Logistic model on standardised features (ridge-penalised; the intercept only
    lightly, so a one-class fold stays finite)."""

    mean: FloatArray
    scale: FloatArray
    weights: FloatArray  # [1 + n_features], intercept first

    def predict(self, features: FloatArray) -> FloatArray:
        z = (features - self.mean) / self.scale
        logits = self.weights[0] + z @ self.weights[1:]
        return np.asarray(expit(logits), dtype=np.float64)


def fit_stopping_model(features: FloatArray, targets: FloatArray) -> StoppingModel:
    """Newton-Raphson (IRLS) on the penalised log-likelihood; the ridge keeps it finite when a
    fold is separable or has one class only."""
    x = features.reshape(-1, features.shape[-1])
    y = np.asarray(targets, dtype=np.float64).reshape(-1)
    if x.shape[0] != y.shape[0]:
        raise ValueError("features and targets disagree on the number of rows")
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    design = np.c_[np.ones(x.shape[0]), (x - mean) / scale]
    penalty = np.full(design.shape[1], _RIDGE)
    penalty[0] = 1e-3
    weights = np.zeros(design.shape[1])
    for _ in range(_MAX_ITER):
        p = expit(design @ weights)
        grad = design.T @ (y - p) - penalty * weights
        hess = (
            (design * (p * (1 - p))[:, None]).T @ design
            + np.diag(penalty)
            + 1e-9 * np.eye(design.shape[1])
        )
        step = np.linalg.solve(hess, grad)
        weights = weights + step
        if np.max(np.abs(step)) < 1e-8:
            break
    return StoppingModel(mean=mean, scale=scale, weights=weights)


def stopping_targets(correct: FloatArray) -> FloatArray:
    """1 where stopping at stage k loses nothing against the terminal: y_k >= y_K."""
    return np.asarray(correct[:, :-1] >= correct[:, -1:], dtype=np.float64)
