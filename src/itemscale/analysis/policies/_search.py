"""Gated threshold cascades: where each item stops, and thresholds fitted at minimal cost.

Every stopping rule here is one family: stage k (all but the last) answers when
`gate[i, k] and score[i, k] >= tau[k]`; the first stage that answers stops the item, the last
always answers. With `skip_silent`, a stage whose threshold is +inf never runs and costs
nothing, so the fit also chooses *which* budgets the cascade visits.

Fitting is a coordinate search: with the other thresholds fixed, sorting the items that reach
stage k by score turns the accuracy and cost of every candidate tau[k] into one cumulative sum
(O(n log n) per stage, no loop over candidates). It starts from the terminal alone, the best
shared threshold and the optima of cost - price * accuracy along a ladder of prices (which
escape the one-threshold-at-a-time walls), and keeps the cheapest result. A heuristic: on random
3-12 item instances it matches exhaustive search in 98-99% of cases (tests pin exactness for
two stages, where one sweep is exhaustive).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

#: Cumulative cost [items, stages] when exactly the flagged stages run.
CostFn = Callable[[tuple[bool, ...]], FloatArray]

#: Slack when comparing sums of 0/1 correctness to a target (they are integers in float64).
_TOL = 1e-9
#: Candidate count of the shared-threshold start (quantiles of the scores).
_SHARED_CANDIDATES = 256
_MAX_PASSES = 25
_PRICE_LADDER = np.geomspace(0.01, 100.0, 17)
#: What a coordinate search compares moves by: (correct sum, cost sum), or a priced objective.
_Score = TypeVar("_Score", tuple[float, float], float)


@dataclass(frozen=True)
class ThresholdFit:
    """Thresholds for stages 0..K-2 and what they achieve on the items they were fitted on."""

    thresholds: FloatArray
    accuracy: float
    mean_cost: float
    feasible: bool


def active_stages(thresholds: FloatArray, skip_silent: bool) -> tuple[bool, ...]:
    """Stages that run: all of them, or (skip_silent) those that can answer plus the last."""
    if not skip_silent:
        return (True,) * (len(thresholds) + 1)
    flags: list[bool] = np.append(~np.isposinf(thresholds), True).tolist()
    return tuple(flags)


def fixed_cost(matrix: FloatArray) -> CostFn:
    """A cost that ignores which stages run (every earlier stage is always paid)."""
    frozen = np.asarray(matrix, dtype=np.float64)

    def cost(active: tuple[bool, ...]) -> FloatArray:
        return frozen

    return cost


def _check_shapes(gate: BoolArray, score: FloatArray, correct: FloatArray) -> None:
    if correct.ndim != 2 or correct.shape[1] < 2:
        raise ValueError(f"correct must be [items, stages>=2], got shape {correct.shape}")
    n, k = correct.shape
    if gate.shape != (n, k - 1) or score.shape != (n, k - 1):
        raise ValueError(
            f"gate {gate.shape} and score {score.shape} must be [items, stages-1] = {(n, k - 1)}"
        )


def stopping_stage(gate: BoolArray, score: FloatArray, thresholds: FloatArray) -> IntArray:
    """Stage at which each item stops: the first open gate whose score clears its threshold (a
    NaN score never does)."""
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


class _Problem:
    def __init__(
        self,
        gate: BoolArray,
        score: FloatArray,
        correct: FloatArray,
        cost: CostFn,
        skip_silent: bool,
    ) -> None:
        self.gate = np.asarray(gate, dtype=bool)
        self.score = np.asarray(score, dtype=np.float64)
        self.correct = np.asarray(correct, dtype=np.float64)
        _check_shapes(self.gate, self.score, self.correct)
        self.cost = cost
        self.skip_silent = skip_silent
        self.n, self.k = self.correct.shape
        self._costs: dict[tuple[bool, ...], FloatArray] = {}

    def cost_matrix(self, thresholds: FloatArray) -> FloatArray:
        active = active_stages(thresholds, self.skip_silent)
        cached = self._costs.get(active)
        if cached is None:
            cached = self._costs[active] = np.asarray(self.cost(active), dtype=np.float64)
        return cached

    def evaluate(self, thresholds: FloatArray) -> tuple[float, float]:
        """(correct sum, cost sum) of a threshold set."""
        stop = stopping_stage(self.gate, self.score, thresholds)
        return (
            float(outcome_at(stop, self.correct).sum()),
            float(outcome_at(stop, self.cost_matrix(thresholds)).sum()),
        )

    def stage_sweep(
        self, thresholds: FloatArray, stage: int
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Every candidate threshold of one stage with the others fixed: (candidates, correct
        sums, cost sums), candidates descending from +inf (the stage never answers)."""
        gate, score, correct = self.gate, self.score, self.correct
        n_open = gate.shape[1]
        with np.errstate(invalid="ignore"):
            passes = gate & (score >= thresholds[None, :])
        reached = ~passes[:, :stage].any(axis=1)
        later = passes[:, stage + 1 :]
        if later.shape[1]:
            downstream = np.where(later.any(axis=1), stage + 1 + later.argmax(axis=1), n_open)
        else:
            downstream = np.full(self.n, n_open, dtype=np.int64)
        if stage > 0:
            earlier = passes[:, :stage].argmax(axis=1)
        else:
            earlier = np.zeros(self.n, dtype=np.int64)
        fallback = np.asarray(np.where(reached, downstream, earlier), dtype=np.int64)
        silent = thresholds.copy()
        silent[stage] = np.inf
        speaking = thresholds.copy()
        speaking[stage] = 0.0  # any finite value: the stage runs
        cost_silent = self.cost_matrix(silent)
        cost_speaking = self.cost_matrix(speaking)
        base_correct = float(outcome_at(fallback, correct).sum())

        s = score[:, stage]
        eligible = reached & gate[:, stage] & ~np.isnan(s)
        idx = np.flatnonzero(eligible)
        gain = correct[idx, stage] - correct[idx, downstream[idx]]
        extra = cost_speaking[idx, stage] - cost_speaking[idx, downstream[idx]]
        order = np.argsort(-s[idx], kind="stable")
        sorted_scores = s[idx][order]
        cum_gain = np.cumsum(gain[order])
        cum_extra = np.cumsum(extra[order])
        # A threshold equal to a score admits every item with that score: last of each tie.
        last_of_tie = np.flatnonzero(np.r_[sorted_scores[1:] != sorted_scores[:-1], True])
        if not sorted_scores.size:
            last_of_tie = np.zeros(0, dtype=np.int64)
        candidates = np.r_[np.inf, sorted_scores[last_of_tie]]
        correct_sums = base_correct + np.r_[0.0, cum_gain[last_of_tie]]
        cost_sums = np.r_[
            float(outcome_at(fallback, cost_silent).sum()),
            float(outcome_at(fallback, cost_speaking).sum()) + cum_extra[last_of_tie],
        ]
        return candidates, correct_sums, cost_sums


def _pick(correct_sums: FloatArray, cost_sums: FloatArray, target_sum: float) -> int | None:
    """Cheapest feasible candidate; ties go to higher accuracy, then to the earlier (higher,
    more conservative) threshold. None when nothing reaches the target."""
    feasible = correct_sums >= target_sum - _TOL
    if not feasible.any():
        return None
    pos = np.flatnonzero(feasible)
    best = np.lexsort((pos, -correct_sums[pos], cost_sums[pos]))[0]
    return int(pos[best])


def _better(candidate: tuple[float, float], current: tuple[float, float]) -> bool:
    """Strictly cheaper, or as cheap and strictly more accurate."""
    cheaper = candidate[1] < current[1] - _TOL
    as_cheap = abs(candidate[1] - current[1]) <= _TOL
    return cheaper or (as_cheap and candidate[0] > current[0] + _TOL)


def _descend(
    problem: _Problem,
    thresholds: FloatArray,
    current: _Score,
    move: Callable[[FloatArray, FloatArray, _Score], tuple[int, _Score] | None],
) -> FloatArray:
    """Coordinate descent over the stage thresholds: `move` picks a stage's candidate (with its
    new score) or None; it accepts only strict improvements, so the search terminates."""
    for _ in range(_MAX_PASSES):
        changed = False
        for stage in range(problem.k - 1):
            candidates, correct_sums, cost_sums = problem.stage_sweep(thresholds, stage)
            taken = move(correct_sums, cost_sums, current)
            if taken is not None:
                best, current = taken
                thresholds[stage] = candidates[best]
                changed = True
        if not changed:
            break
    return thresholds


def _coordinate_search(problem: _Problem, target_sum: float, start: FloatArray) -> FloatArray:
    """Minimise cost subject to the target, from a feasible start."""

    def move(
        correct_sums: FloatArray, cost_sums: FloatArray, current: tuple[float, float]
    ) -> tuple[int, tuple[float, float]] | None:
        best = _pick(correct_sums, cost_sums, target_sum)
        if best is None:
            return None
        proposal = (float(correct_sums[best]), float(cost_sums[best]))
        return (best, proposal) if _better(proposal, current) else None

    thresholds = start.astype(np.float64).copy()
    return _descend(problem, thresholds, problem.evaluate(thresholds), move)


def _penalised_search(problem: _Problem, price: float) -> FloatArray:
    """Coordinate descent on cost - price * correct, unconstrained: the constrained search can
    be walled in (lowering an early threshold may cost accuracy only a later one wins back), so
    the results along a ladder of prices seed it."""

    def move(
        correct_sums: FloatArray, cost_sums: FloatArray, current: float
    ) -> tuple[int, float] | None:
        objective = cost_sums - price * correct_sums
        best = int(np.argmin(objective))
        return (best, float(objective[best])) if objective[best] < current - _TOL else None

    thresholds = np.full(problem.k - 1, np.inf)
    correct_sum, cost_sum = problem.evaluate(thresholds)
    return _descend(problem, thresholds, cost_sum - price * correct_sum, move)


def _most_accurate(problem: _Problem, start: FloatArray) -> FloatArray:
    """Coordinate ascent on accuracy (lower cost breaks ties), for a start that misses the
    target."""

    def move(
        correct_sums: FloatArray, cost_sums: FloatArray, current: tuple[float, float]
    ) -> tuple[int, tuple[float, float]] | None:
        best = int(np.lexsort((cost_sums, -correct_sums))[0])
        proposal = (float(correct_sums[best]), float(cost_sums[best]))
        more = proposal[0] > current[0] + _TOL
        same_cheaper = abs(proposal[0] - current[0]) <= _TOL and proposal[1] < current[1] - _TOL
        return (best, proposal) if more or same_cheaper else None

    thresholds = start.astype(np.float64).copy()
    return _descend(problem, thresholds, problem.evaluate(thresholds), move)


def shared_threshold_sweep(
    gate: BoolArray,
    score: FloatArray,
    correct: FloatArray,
    cost: CostFn,
    candidates: FloatArray,
    *,
    skip_silent: bool = True,
) -> tuple[FloatArray, FloatArray]:
    """(accuracy, mean cost) of one threshold used at every stage, for every candidate at once
    (an [items, stages, candidates] boolean tensor). A +inf candidate runs the terminal alone
    when `skip_silent`."""
    gate = np.asarray(gate, dtype=bool)
    score = np.asarray(score, dtype=np.float64)
    correct = np.asarray(correct, dtype=np.float64)
    _check_shapes(gate, score, correct)
    t = np.asarray(candidates, dtype=np.float64)
    n_open = gate.shape[1]
    with np.errstate(invalid="ignore"):
        passes = gate[:, :, None] & (score[:, :, None] >= t[None, None, :])
    stops = passes.any(axis=1)
    stop = np.where(stops, passes.argmax(axis=1), n_open)  # [n, m]
    acc = np.take_along_axis(correct, stop, axis=1).mean(axis=0)
    everything = cost((True,) * (n_open + 1))
    mean_cost = np.take_along_axis(everything, stop, axis=1).mean(axis=0)
    silent = np.isposinf(t)
    if silent.any():
        alone = cost(active_stages(np.full(n_open, np.inf), skip_silent))
        mean_cost[silent] = alone[:, -1].mean()
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
    cost: CostFn,
    *,
    skip_silent: bool = True,
    target_accuracy: float | None = None,
) -> ThresholdFit:
    """Thresholds reaching `target_accuracy` (default: the terminal budget's accuracy on these
    items) at minimal mean cost; above anything the search reaches, the most accurate thresholds
    it found, `feasible=False`."""
    correct = np.asarray(correct, dtype=np.float64)
    target = float(correct[:, -1].mean()) if target_accuracy is None else float(target_accuracy)
    return fit_threshold_path(gate, score, correct, cost, [target], skip_silent=skip_silent)[0]


def fit_threshold_path(
    gate: BoolArray,
    score: FloatArray,
    correct: FloatArray,
    cost: CostFn,
    target_accuracies: Sequence[float],
    *,
    skip_silent: bool = True,
) -> list[ThresholdFit]:
    """`fit_thresholds` for several targets at once (a cost-accuracy frontier): the starting
    points that do not depend on the target are computed once."""
    problem = _Problem(gate, score, correct, cost, skip_silent)
    n, k = problem.n, problem.k
    if n == 0:
        raise ValueError("cannot fit thresholds on zero items")

    terminal_alone = np.full(k - 1, np.inf)
    scale = max(float(problem.cost_matrix(terminal_alone)[:, -1].mean()), _TOL)
    ladder: list[tuple[float, float, FloatArray]] = []  # (correct sum, cost sum, thresholds)
    seen_ladder: set[bytes] = set()
    for price in scale * _PRICE_LADDER:
        found = _penalised_search(problem, float(price))
        if found.tobytes() not in seen_ladder:
            seen_ladder.add(found.tobytes())
            ladder.append((*problem.evaluate(found), found))
    candidates = score_quantiles(problem.score)
    shared_acc, shared_cost = shared_threshold_sweep(
        problem.gate, problem.score, problem.correct, cost, candidates, skip_silent=skip_silent
    )

    fits: list[ThresholdFit] = []
    for target in target_accuracies:
        # Accuracy is a multiple of 1/n: aim at the smallest reachable value >= target.
        target_sum = float(np.ceil(float(target) * n - _TOL))
        # Starts: the terminal alone, the cheapest ladder point that reaches the target and the
        # most accurate one that misses it (the target lies between them), the best shared
        # threshold. Searching from every ladder point finds the same optima far more slowly.
        starts = [terminal_alone]
        reaching = [p for p in ladder if p[0] >= target_sum - _TOL]
        missing = [p for p in ladder if p[0] < target_sum - _TOL]
        if reaching:
            starts.append(min(reaching, key=lambda p: (p[1], -p[0]))[2])
        if missing:
            starts.append(max(missing, key=lambda p: (p[0], -p[1]))[2])
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
            if problem.evaluate(thresholds)[0] < target_sum - _TOL:
                thresholds = _most_accurate(problem, thresholds)
            if problem.evaluate(thresholds)[0] >= target_sum - _TOL:
                thresholds = _coordinate_search(problem, target_sum, thresholds)
            correct_sum, cost_sum = problem.evaluate(thresholds)
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
