"""Gated threshold cascades: where each item stops, and thresholds fitted at minimal cost.

Every policy of this package is one family: stage k (all but the last) answers when its gate is
open and its score clears a threshold, `gate[i, k] and score[i, k] >= tau[k]`; the first stage that
answers stops the item; the last stage always answers. The confidence cascade has an always-open
gate and the option confidence as score; the agreement policy opens the gate only when a stage
repeats the previous stage's answer; the learned policy scores with a fitted stopping model.

Fitting is a coordinate search. With every other threshold held fixed, moving tau[k] only changes
the items that reach stage k with an open gate, and each of those either stops at k or continues
to the stage the later thresholds send it to. Sorting those items by score turns the accuracy and
cost of *every* candidate threshold into one cumulative sum, so a whole stage is searched in
O(n log n) without a loop over candidates. Stages are revisited until no threshold changes; the
search starts from the terminal budget (every tau = +inf, feasible by construction), from the
best single threshold shared by all stages, and from the optima of cost - price * accuracy along a
ladder of prices (which escape the one-threshold-at-a-time walls), and keeps the cheapest result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

#: Slack when comparing sums of 0/1 correctness to a target (they are integers in float64).
_TOL = 1e-9
#: Candidate count of the shared-threshold start (quantiles of the scores).
_SHARED_CANDIDATES = 256
_MAX_PASSES = 25


@dataclass(frozen=True)
class ThresholdFit:
    """Thresholds for stages 0..K-2 and what they achieve on the items they were fitted on."""

    thresholds: FloatArray
    accuracy: float
    mean_cost: float
    feasible: bool


def _check_shapes(
    gate: BoolArray, score: FloatArray, correct: FloatArray, cost: FloatArray
) -> None:
    if correct.ndim != 2 or correct.shape[1] < 2:
        raise ValueError(f"correct must be [items, stages>=2], got shape {correct.shape}")
    n, k = correct.shape
    if cost.shape != (n, k):
        raise ValueError(f"cost shape {cost.shape} does not match correct {correct.shape}")
    if gate.shape != (n, k - 1) or score.shape != (n, k - 1):
        raise ValueError(
            f"gate {gate.shape} and score {score.shape} must be [items, stages-1] = {(n, k - 1)}"
        )


def stopping_stage(gate: BoolArray, score: FloatArray, thresholds: FloatArray) -> IntArray:
    """Stage at which each item stops: the first open gate whose score clears its threshold.

    A NaN score never clears a threshold, so a cell without confidence never stops the cascade.
    """
    n_open = gate.shape[1]
    with np.errstate(invalid="ignore"):
        passes = gate & (score >= np.asarray(thresholds, dtype=np.float64)[None, :])
    stops = passes.any(axis=1)
    first = passes.argmax(axis=1)
    return np.asarray(np.where(stops, first, n_open), dtype=np.int64)


def outcome_at(stop: IntArray, values: FloatArray) -> FloatArray:
    """values[i, stop[i]] for every item."""
    picked = np.take_along_axis(values, stop[:, None], axis=1)[:, 0]
    return np.asarray(picked, dtype=np.float64)


def _stage_sweep(
    gate: BoolArray,
    score: FloatArray,
    correct: FloatArray,
    cost: FloatArray,
    thresholds: FloatArray,
    stage: int,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Every candidate threshold of one stage with the others fixed: (candidates, correct sums,
    cost sums), candidates in descending order starting with +inf (the stage never answers)."""
    n_open = gate.shape[1]
    with np.errstate(invalid="ignore"):
        passes = gate & (score >= thresholds[None, :])
    reached = ~passes[:, :stage].any(axis=1)
    # Where an item goes if stage `stage` does not answer it.
    later = passes[:, stage + 1 :]
    if later.shape[1]:
        downstream = np.where(later.any(axis=1), stage + 1 + later.argmax(axis=1), n_open)
    else:
        downstream = np.full(len(gate), n_open, dtype=np.int64)
    earlier = passes[:, :stage].argmax(axis=1) if stage > 0 else np.zeros(len(gate), np.int64)
    fallback = np.where(reached, downstream, earlier).astype(np.int64)
    base_correct = float(outcome_at(fallback, correct).sum())
    base_cost = float(outcome_at(fallback, cost).sum())

    s = score[:, stage]
    eligible = reached & gate[:, stage] & ~np.isnan(s)
    idx = np.flatnonzero(eligible)
    gain = correct[idx, stage] - correct[idx, downstream[idx]]
    extra = cost[idx, stage] - cost[idx, downstream[idx]]
    order = np.argsort(-s[idx], kind="stable")
    sorted_scores = s[idx][order]
    cum_gain = np.cumsum(gain[order])
    cum_extra = np.cumsum(extra[order])
    # A threshold equal to a score admits every item with that score: take the last of each tie.
    if sorted_scores.size:
        last_of_tie = np.flatnonzero(np.r_[sorted_scores[1:] != sorted_scores[:-1], True])
    else:
        last_of_tie = np.zeros(0, dtype=np.int64)
    candidates = np.r_[np.inf, sorted_scores[last_of_tie]]
    correct_sums = base_correct + np.r_[0.0, cum_gain[last_of_tie]]
    cost_sums = base_cost + np.r_[0.0, cum_extra[last_of_tie]]
    return candidates, correct_sums, cost_sums


def _pick(correct_sums: FloatArray, cost_sums: FloatArray, target_sum: float) -> int | None:
    """Cheapest feasible candidate; ties go to higher accuracy, then to the earlier (higher,
    more conservative) threshold. None when nothing reaches the target."""
    feasible = correct_sums >= target_sum - _TOL
    if not feasible.any():
        return None
    pos = np.flatnonzero(feasible)
    # lexsort: last key is primary.
    best = np.lexsort((pos, -correct_sums[pos], cost_sums[pos]))[0]
    return int(pos[best])


def _evaluate(
    gate: BoolArray,
    score: FloatArray,
    correct: FloatArray,
    cost: FloatArray,
    thresholds: FloatArray,
) -> tuple[float, float]:
    stop = stopping_stage(gate, score, thresholds)
    return float(outcome_at(stop, correct).sum()), float(outcome_at(stop, cost).sum())


def _better(candidate: tuple[float, float], current: tuple[float, float]) -> bool:
    """(correct sum, cost sum): strictly cheaper, or as cheap and strictly more accurate."""
    cheaper = candidate[1] < current[1] - _TOL
    as_cheap = abs(candidate[1] - current[1]) <= _TOL
    return cheaper or (as_cheap and candidate[0] > current[0] + _TOL)


def _coordinate_search(
    gate: BoolArray,
    score: FloatArray,
    correct: FloatArray,
    cost: FloatArray,
    target_sum: float,
    start: FloatArray,
) -> FloatArray:
    """Minimise cost subject to the target, from a feasible start; every accepted move keeps
    feasibility and strictly improves (cost, then accuracy), so the search terminates."""
    thresholds = start.astype(np.float64).copy()
    current = _evaluate(gate, score, correct, cost, thresholds)
    for _ in range(_MAX_PASSES):
        changed = False
        for stage in range(gate.shape[1]):
            candidates, correct_sums, cost_sums = _stage_sweep(
                gate, score, correct, cost, thresholds, stage
            )
            best = _pick(correct_sums, cost_sums, target_sum)
            if best is None:
                continue
            proposal = (float(correct_sums[best]), float(cost_sums[best]))
            if _better(proposal, current):
                thresholds[stage] = candidates[best]
                current = proposal
                changed = True
        if not changed:
            break
    return thresholds


def _penalised_search(
    gate: BoolArray,
    score: FloatArray,
    correct: FloatArray,
    cost: FloatArray,
    price: float,
) -> FloatArray:
    """Coordinate descent on cost - price * correct, without the target constraint.

    The constrained search moves one threshold at a time and can be walled in: lowering an early
    threshold may cost accuracy that only a later threshold can win back. Pricing accuracy
    instead lets both move; the results along a ladder of prices seed the constrained search.
    """
    thresholds = np.full(gate.shape[1], np.inf)
    correct_sum, cost_sum = _evaluate(gate, score, correct, cost, thresholds)
    current = cost_sum - price * correct_sum
    for _ in range(_MAX_PASSES):
        changed = False
        for stage in range(gate.shape[1]):
            candidates, correct_sums, cost_sums = _stage_sweep(
                gate, score, correct, cost, thresholds, stage
            )
            objective = cost_sums - price * correct_sums
            best = int(np.argmin(objective))
            if objective[best] < current - _TOL:
                thresholds[stage] = candidates[best]
                current = float(objective[best])
                changed = True
        if not changed:
            break
    return thresholds


def _most_accurate(
    gate: BoolArray, score: FloatArray, correct: FloatArray, cost: FloatArray, start: FloatArray
) -> FloatArray:
    """Coordinate ascent on accuracy (lower cost breaks ties), used when a start misses the
    target: it either reaches the target (then cost is minimised from there) or shows the best
    the family can do."""
    thresholds = start.astype(np.float64).copy()
    current = _evaluate(gate, score, correct, cost, thresholds)
    for _ in range(_MAX_PASSES):
        changed = False
        for stage in range(gate.shape[1]):
            candidates, correct_sums, cost_sums = _stage_sweep(
                gate, score, correct, cost, thresholds, stage
            )
            best = int(np.lexsort((cost_sums, -correct_sums))[0])
            proposal = (float(correct_sums[best]), float(cost_sums[best]))
            more = proposal[0] > current[0] + _TOL
            same_cheaper = abs(proposal[0] - current[0]) <= _TOL and proposal[1] < current[1] - _TOL
            if more or same_cheaper:
                thresholds[stage] = candidates[best]
                current = proposal
                changed = True
        if not changed:
            break
    return thresholds


def shared_threshold_sweep(
    gate: BoolArray,
    score: FloatArray,
    correct: FloatArray,
    cost: FloatArray,
    candidates: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """(accuracy, mean cost) of a single threshold used at every stage, for each candidate,
    computed for all candidates at once ([items, stages, candidates] boolean tensor)."""
    _check_shapes(gate, score, correct, cost)
    t = np.asarray(candidates, dtype=np.float64)
    n_open = gate.shape[1]
    with np.errstate(invalid="ignore"):
        passes = gate[:, :, None] & (score[:, :, None] >= t[None, None, :])
    stops = passes.any(axis=1)
    stop = np.where(stops, passes.argmax(axis=1), n_open)  # [n, m]
    acc = np.take_along_axis(correct, stop, axis=1).mean(axis=0)
    mean_cost = np.take_along_axis(cost, stop, axis=1).mean(axis=0)
    return np.asarray(acc, dtype=np.float64), np.asarray(mean_cost, dtype=np.float64)


def score_quantiles(score: FloatArray, count: int = _SHARED_CANDIDATES) -> FloatArray:
    """Up to `count` distinct candidate thresholds spread over the finite scores, plus -inf."""
    finite = score[np.isfinite(score)]
    if finite.size == 0:
        return np.array([-np.inf])
    qs = np.unique(np.quantile(finite, np.linspace(0.0, 1.0, count)))
    return np.asarray(np.r_[-np.inf, qs], dtype=np.float64)


def fit_thresholds(
    gate: BoolArray,
    score: FloatArray,
    correct: FloatArray,
    cost: FloatArray,
    *,
    target_accuracy: float | None = None,
) -> ThresholdFit:
    """Thresholds reaching `target_accuracy` (default: the terminal budget's accuracy on these
    items) at minimal mean cost.

    When the target is above anything the family reaches, the fit returns the most accurate
    thresholds it found and says `feasible=False`.
    """
    correct = np.asarray(correct, dtype=np.float64)
    target = float(correct[:, -1].mean()) if target_accuracy is None else float(target_accuracy)
    return fit_threshold_path(gate, score, correct, cost, [target])[0]


def fit_threshold_path(
    gate: BoolArray,
    score: FloatArray,
    correct: FloatArray,
    cost: FloatArray,
    target_accuracies: Sequence[float],
) -> list[ThresholdFit]:
    """`fit_thresholds` for several targets at once (a cost-accuracy frontier): the starting
    points that do not depend on the target are computed once."""
    gate = np.asarray(gate, dtype=bool)
    score = np.asarray(score, dtype=np.float64)
    correct = np.asarray(correct, dtype=np.float64)
    cost = np.asarray(cost, dtype=np.float64)
    _check_shapes(gate, score, correct, cost)
    n, k = correct.shape
    if n == 0:
        raise ValueError("cannot fit thresholds on zero items")

    common = [np.full(k - 1, np.inf)]
    scale = max(float(cost[:, -1].mean()), _TOL)
    for price in scale * np.geomspace(0.01, 100.0, 17):
        common.append(_penalised_search(gate, score, correct, cost, float(price)))
    candidates = score_quantiles(score)
    shared_acc, shared_cost = shared_threshold_sweep(gate, score, correct, cost, candidates)

    fits: list[ThresholdFit] = []
    for target in target_accuracies:
        # Accuracy is a multiple of 1/n: aim at the smallest reachable value >= target.
        target_sum = float(np.ceil(float(target) * n - _TOL))
        starts = list(common)
        feasible = shared_acc * n >= target_sum - _TOL
        if feasible.any():
            pos = np.flatnonzero(feasible)
            best = pos[np.lexsort((-shared_acc[pos], shared_cost[pos]))[0]]
            starts.append(np.full(k - 1, candidates[best]))
        seen: set[bytes] = set()
        results: list[tuple[float, float, FloatArray]] = []
        for start in starts:
            key = start.tobytes()
            if key in seen:
                continue
            seen.add(key)
            thresholds = start
            if _evaluate(gate, score, correct, cost, thresholds)[0] < target_sum - _TOL:
                thresholds = _most_accurate(gate, score, correct, cost, thresholds)
            if _evaluate(gate, score, correct, cost, thresholds)[0] >= target_sum - _TOL:
                thresholds = _coordinate_search(gate, score, correct, cost, target_sum, thresholds)
            correct_sum, cost_sum = _evaluate(gate, score, correct, cost, thresholds)
            results.append((cost_sum / n, correct_sum / n, thresholds))
        reached = [r for r in results if r[1] * n >= target_sum - _TOL]
        if reached:
            mean_c, accuracy, thresholds = min(reached, key=lambda r: (r[0], -r[1]))
            fits.append(ThresholdFit(thresholds, accuracy, mean_c, True))
        else:
            mean_c, accuracy, thresholds = max(results, key=lambda r: (r[1], -r[0]))
            fits.append(ThresholdFit(thresholds, accuracy, mean_c, False))
    return fits


def pareto_front(costs: FloatArray, accuracies: FloatArray) -> IntArray:
    """Indices of the points no other point beats on both cost (lower) and accuracy (higher),
    ordered by cost."""
    order = np.lexsort((-accuracies, costs))
    keep: list[int] = []
    best = -np.inf
    for i in order:
        if accuracies[i] > best + _TOL:
            keep.append(int(i))
            best = float(accuracies[i])
    return np.asarray(keep, dtype=np.int64)
