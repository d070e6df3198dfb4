"""Stopping policies on the response matrix, cross-fitted and reported on held-out folds.

Every policy is fitted on the items of one half of the videos and reported on the other half,
then the halves swap, so each item's reported outcome comes from thresholds that never saw it.
Intervals resample videos of those held-out outcomes (thresholds are not refitted per resample:
the interval is the sampling uncertainty of the held-out evaluation). All policies share the
folds and the resamples, so their differences are paired.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from ..measures import INTERVENTION_SERIES_PREFIX as MEASURED_APART
from ..measures import (
    ResponseMatrix,
    VideoBootstrap,
    build_matrices,
    main_chain,
    percentile_intervals,
    stat,
)
from ._cost import StageCosts, shared_frame_costs, visual_token_costs
from ._folds import video_folds
from ._learned import (
    agreement_matrix,
    fit_stopping_model,
    stopping_features,
    stopping_targets,
)
from ._search import (
    active_stages,
    fit_threshold_path,
    outcome_at,
    pareto_front,
    score_quantiles,
    shared_threshold_sweep,
    stopping_stage,
)

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

CASCADE_SCHEMA_VERSION: Final[int] = 1
#: Series written by `itemscale intervene`; they are single re-runs, not budget axes.
INTERVENTION_SERIES_PREFIX: Final[str] = MEASURED_APART

PolicyName = Literal["confidence", "agreement", "learned"]
POLICY_NAMES: Final[tuple[PolicyName, ...]] = ("confidence", "agreement", "learned")
POLICY_DESCRIPTIONS: Final[dict[str, str]] = {
    "confidence": (
        "confidence cascade (docs/policies.md): stage k answers when its option confidence >= tau_k; "
        "the last stage always answers; a stage with tau = +inf is never run"
    ),
    "agreement": (
        "stage k answers when it gives the same answer as stage k-1 and its confidence clears a "
        "fitted floor (no floor where confidence is absent)"
    ),
    "learned": (
        "stage k answers when a logistic stopping model on confidence and agreement features, "
        "fitted on the other fold, predicts that stopping loses nothing against the terminal "
        "budget with probability >= tau_k"
    ),
}


class CascadeSettings(BaseModel):
    """How `itemscale cascade` fits and reports its policies."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_boot: int = Field(default=1000, ge=0)
    seed: int = 0
    cost: Literal["frames", "tokens"] = "frames"
    #: Frontier targets: held-out accuracy offsets from the terminal budget's fit-fold accuracy.
    frontier_offsets: tuple[float, ...] = tuple(
        float(x) for x in np.round(np.linspace(-0.15, 0.05, 21), 4)
    )


@dataclass(frozen=True)
class CascadeInputs:
    """The arrays a policy needs, stripped of everything else in a response matrix."""

    model: str
    series: str
    labels: tuple[str, ...]
    item_ids: npt.NDArray[np.object_]
    video_ids: npt.NDArray[np.object_]
    correct: FloatArray
    confidence: FloatArray
    answers: npt.NDArray[np.object_]
    frame_costs: StageCosts
    token_costs: StageCosts | None

    @property
    def n_items(self) -> int:
        return int(self.correct.shape[0])

    def costs(self, currency: Literal["frames", "tokens"]) -> StageCosts:
        if currency == "frames":
            return self.frame_costs
        if self.token_costs is None:
            raise ValueError(
                f"model {self.model!r}, series {self.series!r}: visual token counts are missing "
                "for some cells, so cost cannot be counted in tokens (use --cost frames)"
            )
        return self.token_costs


def inputs_from_matrix(matrix: ResponseMatrix) -> CascadeInputs:
    """Policy inputs of one binary response matrix (repeat 0, matched grid)."""
    if matrix.kind != "binary":
        raise ValueError(f"{matrix.model}/{matrix.series}: policies need binary correctness")
    n = matrix.n_items
    return CascadeInputs(
        model=matrix.model,
        series=matrix.series,
        labels=tuple(matrix.labels),
        item_ids=np.asarray(matrix.item_ids, dtype=object),
        video_ids=np.asarray(matrix.video_ids, dtype=object),
        correct=np.asarray(matrix.y, dtype=np.float64),
        confidence=np.asarray(matrix.confidence, dtype=np.float64),
        answers=np.asarray(matrix.answers, dtype=object),
        frame_costs=shared_frame_costs(matrix.frame_indices, matrix.frames, n),
        token_costs=visual_token_costs(np.asarray(matrix.visual_tokens, dtype=np.float64)),
    )


#: Policies whose gate or features read the previous stage must run every stage; the
#: confidence cascade may skip a stage that can never answer.
SKIPS_SILENT_STAGES: Final[dict[str, bool]] = {
    "confidence": True,
    "agreement": False,
    "learned": False,
}


@dataclass(frozen=True)
class HeldOut:
    """Where each item stopped, and what it paid, under thresholds fitted on the other fold."""

    stop: IntArray
    cost_frames: FloatArray
    cost_tokens: FloatArray | None
    fold_fits: tuple[dict[str, Any], ...]

    def cost(self, currency: Literal["frames", "tokens"]) -> FloatArray:
        if currency == "tokens":
            if self.cost_tokens is None:
                raise ValueError("token cost requested but visual token counts are missing")
            return self.cost_tokens
        return self.cost_frames


def _policy_scores(
    policy: PolicyName, inputs: CascadeInputs, fit_items: BoolArray
) -> tuple[BoolArray, FloatArray, dict[str, Any]]:
    """(gate, score, extra report) of a policy; `fit_items` is the only data a learned part
    may see."""
    n, k = inputs.correct.shape
    conf = inputs.confidence[:, : k - 1]
    if policy == "confidence":
        return np.ones((n, k - 1), dtype=bool), conf.copy(), {}
    if policy == "agreement":
        gate = agreement_matrix(inputs.answers)[:, : k - 1]
        return gate, np.where(np.isnan(conf), -np.inf, conf), {}
    features = stopping_features(inputs.confidence, inputs.answers)
    targets = stopping_targets(inputs.correct)
    model = fit_stopping_model(features[fit_items], targets[fit_items])
    score = model.predict(features)
    return np.ones((n, k - 1), dtype=bool), score, {"weights": model.weights.tolist()}


def _threshold_json(value: float) -> float | str:
    if np.isposinf(value):
        return "never"
    if np.isneginf(value):
        return "always"
    return float(value)


def cross_fit(
    policy: PolicyName,
    inputs: CascadeInputs,
    folds: IntArray,
    currency: Literal["frames", "tokens"],
    target_offsets: tuple[float, ...] = (0.0,),
) -> list[HeldOut]:
    """Held-out stops and costs for each target (the terminal budget's accuracy on the fitting
    fold plus an offset), fitted on each fold and reported on the other."""
    n, k = inputs.correct.shape
    primary = inputs.costs(currency)
    skip = SKIPS_SILENT_STAGES[policy]
    m = len(target_offsets)
    stops = [np.full(n, k - 1, dtype=np.int64) for _ in range(m)]
    frames = [np.zeros(n) for _ in range(m)]
    tokens = [np.zeros(n) for _ in range(m)] if inputs.token_costs is not None else None
    fold_reports: list[list[dict[str, Any]]] = [[] for _ in range(m)]
    for fit_fold in (0, 1):
        fit_items = folds == fit_fold
        held = ~fit_items
        gate, score, extra = _policy_scores(policy, inputs, fit_items)
        terminal_acc = float(inputs.correct[fit_items, -1].mean())
        targets = [terminal_acc + off for off in target_offsets]

        def fold_cost(active: tuple[bool, ...], rows: BoolArray = fit_items) -> FloatArray:
            return np.asarray(primary.cumulative(active)[rows], dtype=np.float64)

        fits = fit_threshold_path(
            gate[fit_items],
            score[fit_items],
            inputs.correct[fit_items],
            fold_cost,
            targets,
            skip_silent=skip,
        )
        for t, fit in enumerate(fits):
            stop = stopping_stage(gate[held], score[held], fit.thresholds)
            active = active_stages(fit.thresholds, skip)
            stops[t][held] = stop
            frames[t][held] = outcome_at(stop, inputs.frame_costs.cumulative(active)[held])
            if tokens is not None and inputs.token_costs is not None:
                tokens[t][held] = outcome_at(stop, inputs.token_costs.cumulative(active)[held])
            fold_reports[t].append(
                {
                    "fitted_on_fold": fit_fold,
                    "reported_on_fold": 1 - fit_fold,
                    "target_accuracy": targets[t],
                    "fit_accuracy": fit.accuracy,
                    "fit_mean_cost": fit.mean_cost,
                    "target_reached": fit.feasible,
                    "thresholds": {
                        inputs.labels[s]: _threshold_json(float(fit.thresholds[s]))
                        for s in range(k - 1)
                    },
                    "stages_run": [inputs.labels[s] for s in range(k) if active[s]],
                    **extra,
                }
            )
    return [
        HeldOut(
            stop=stops[t],
            cost_frames=frames[t],
            cost_tokens=tokens[t] if tokens is not None else None,
            fold_fits=tuple(fold_reports[t]),
        )
        for t in range(m)
    ]


def _summarise(
    held: HeldOut,
    inputs: CascadeInputs,
    primary: Literal["frames", "tokens"],
    boot: VideoBootstrap | None,
) -> dict[str, Any]:
    """Accuracy, cost and cost reduction (both currencies where available) with intervals."""
    correct = outcome_at(held.stop, inputs.correct)
    terminal_correct = inputs.correct[:, -1]
    currencies: list[tuple[str, FloatArray, FloatArray]] = [
        ("frames", held.cost_frames, inputs.frame_costs.terminal)
    ]
    if inputs.token_costs is not None and held.cost_tokens is not None:
        currencies.append(("tokens", held.cost_tokens, inputs.token_costs.terminal))
    columns = [correct, terminal_correct]
    for _, paid, terminal_cost in currencies:
        columns += [paid, terminal_cost]
    values = np.column_stack(columns)
    point = values.mean(axis=0)
    samples = boot.means(values) if boot is not None and boot.n_boot > 0 else None

    def derived(fn: Any) -> dict[str, Any]:
        interval = None
        if samples is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                column = np.asarray(fn(samples.T), dtype=np.float64)
            interval = percentile_intervals(column[:, None])[0]
        with np.errstate(invalid="ignore", divide="ignore"):
            value = float(fn(point))
        return stat(value, interval)

    out: dict[str, Any] = {
        "accuracy": derived(lambda m: m[0]),
        "terminal_accuracy": derived(lambda m: m[1]),
        "accuracy_change": derived(lambda m: m[0] - m[1]),
    }
    for c, (name, _, _) in enumerate(currencies):
        p, t = 2 + 2 * c, 3 + 2 * c
        out[f"mean_cost_{name}"] = derived(lambda m, p=p: m[p])
        out[f"terminal_cost_{name}"] = derived(lambda m, t=t: m[t])
        out[f"cost_reduction_{name}"] = derived(lambda m, p=p, t=t: 1.0 - m[p] / m[t])
    out["mean_cost"] = out[f"mean_cost_{primary}"]
    out["cost_reduction"] = out[f"cost_reduction_{primary}"]
    out["matches_terminal"] = bool(point[0] >= point[1] - 1e-12)
    counts = np.bincount(held.stop, minlength=len(inputs.labels)) / max(len(held.stop), 1)
    out["stop_share"] = {label: float(counts[s]) for s, label in enumerate(inputs.labels)}
    return out


def _frontier(
    inputs: CascadeInputs,
    held: list[HeldOut],
    offsets: tuple[float, ...],
    currency: Literal["frames", "tokens"],
) -> list[dict[str, Any]]:
    accs = np.array([outcome_at(h.stop, inputs.correct).mean() for h in held])
    costs = np.array([h.cost(currency).mean() for h in held])
    terminal_cost = float(inputs.costs(currency).terminal.mean())
    front = set(pareto_front(costs, accs).tolist())
    return [
        {
            "target_offset": float(offsets[j]),
            "accuracy": float(accs[j]),
            "mean_cost": float(costs[j]),
            "cost_reduction": 1.0 - float(costs[j]) / terminal_cost if terminal_cost else None,
            "pareto": j in front,
        }
        for j in np.argsort(costs, kind="stable")
    ]


def _threshold_sweep(inputs: CascadeInputs, costs: StageCosts) -> list[dict[str, Any]]:
    """Pareto points of one threshold shared by every stage; nothing is fitted, so every item
    counts."""
    k = inputs.correct.shape[1]
    gate = np.ones((inputs.n_items, k - 1), dtype=bool)
    score = inputs.confidence[:, : k - 1]
    candidates = np.r_[score_quantiles(score, 128), np.inf]
    acc, mean_cost = shared_threshold_sweep(
        gate, score, inputs.correct, costs.cumulative, candidates
    )
    terminal_cost = float(costs.terminal.mean())
    return [
        {
            "threshold": _threshold_json(float(candidates[j])),
            "accuracy": float(acc[j]),
            "mean_cost": float(mean_cost[j]),
            "cost_reduction": 1.0 - float(mean_cost[j]) / terminal_cost if terminal_cost else None,
        }
        for j in pareto_front(mean_cost, acc)
    ]


def run_policies(inputs: CascadeInputs, settings: CascadeSettings) -> dict[str, Any]:
    """Every policy on one matrix: held-out accuracy, cost, cost reduction, frontier."""
    n, k = inputs.correct.shape
    if k < 2:
        raise ValueError(f"{inputs.model}/{inputs.series}: a cascade needs at least two budgets")
    folds = video_folds(inputs.video_ids, np.random.default_rng(settings.seed))
    primary = inputs.costs(settings.cost)
    boot = VideoBootstrap(inputs.video_ids, settings.n_boot, settings.seed) if n else None
    has_confidence = bool(np.isfinite(inputs.confidence[:, : k - 1]).any())

    policies: dict[str, Any] = {}
    frontier: list[dict[str, Any]] = []
    for name in POLICY_NAMES:
        if name == "confidence" and not has_confidence:
            policies[name] = {
                "available": False,
                "reason": "no option confidence recorded below the terminal budget",
                "description": POLICY_DESCRIPTIONS[name],
            }
            continue
        offsets = (0.0, *settings.frontier_offsets) if name == "confidence" else (0.0,)
        held = cross_fit(name, inputs, folds, settings.cost, offsets)
        block = {
            "available": True,
            "description": POLICY_DESCRIPTIONS[name],
            **_summarise(held[0], inputs, settings.cost, boot),
            "folds": list(held[0].fold_fits),
        }
        policies[name] = block
        if name == "confidence":
            frontier = _frontier(inputs, held[1:], settings.frontier_offsets, settings.cost)

    terminal_held = HeldOut(
        stop=np.full(n, k - 1, dtype=np.int64),
        cost_frames=inputs.frame_costs.terminal,
        cost_tokens=inputs.token_costs.terminal if inputs.token_costs else None,
        fold_fits=(),
    )
    terminal = _summarise(terminal_held, inputs, settings.cost, boot)
    fold_sizes = [int((folds == f).sum()) for f in (0, 1)]
    fold_videos = [len(set(inputs.video_ids[folds == f].tolist())) for f in (0, 1)]
    return {
        "model": inputs.model,
        "series": inputs.series,
        "labels": list(inputs.labels),
        "n_items": n,
        "n_videos": len(set(inputs.video_ids.tolist())),
        "cost": {
            "primary": settings.cost,
            "frames_basis": inputs.frame_costs.basis,
            "frames_note": inputs.frame_costs.note,
            "tokens_basis": inputs.token_costs.basis if inputs.token_costs else None,
            "tokens_note": (
                inputs.token_costs.note
                if inputs.token_costs
                else "visual token counts missing for some cells"
            ),
        },
        "folds": {"seed": settings.seed, "n_items": fold_sizes, "n_videos": fold_videos},
        "terminal": {
            "label": inputs.labels[-1],
            "accuracy": terminal["accuracy"],
            "mean_cost": terminal["mean_cost"],
            "mean_cost_frames": terminal["mean_cost_frames"],
            "mean_cost_tokens": terminal.get("mean_cost_tokens"),
        },
        "cascade": policies["confidence"],
        "policies": policies,
        "frontier": frontier,
        "threshold_sweep": _threshold_sweep(inputs, primary) if has_confidence else [],
    }


def cascade_report(df: pd.DataFrame, settings: CascadeSettings) -> dict[str, Any]:
    """Policies for every (model, series) budget axis of a response table, in the
    `cascade --json` layout."""
    results: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    for matrix in build_matrices(df):
        where = {"model": matrix.model, "series": matrix.series}
        if matrix.series.startswith(INTERVENTION_SERIES_PREFIX):
            skipped.append({**where, "reason": "intervention re-runs are not a budget axis"})
            continue
        if matrix.kind != "binary":
            skipped.append({**where, "reason": "policies need 0/1 correctness (mcqa items)"})
            continue
        if matrix.n_configs < 2:
            skipped.append({**where, "reason": "fewer than two budgets"})
            continue
        n_videos = len(set(np.asarray(matrix.video_ids).tolist()))
        if n_videos < 2:
            skipped.append({**where, "reason": f"{n_videos} video(s): cannot cross-fit"})
            continue
        chain = main_chain(matrix.budget_order, matrix.frames)
        if chain is not None:  # a grid of frames x resolutions: stages climb one chain of it
            matrix = matrix.chain(chain[1])
        block = run_policies(inputs_from_matrix(matrix), settings)
        if chain is not None:
            block["chain"] = chain[0]
        block["n_dropped"] = matrix.n_dropped
        block["drop_reasons"] = dict(matrix.drop_reasons)
        results.append(block)
    return {
        "schema_version": CASCADE_SCHEMA_VERSION,
        "settings": settings.model_dump(mode="json"),
        "results": results,
        "skipped": skipped,
    }
