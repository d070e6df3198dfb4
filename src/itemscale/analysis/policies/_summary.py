"""Held-out (or fixed-rule) stops summarised in every currency from one set of video resamples,
so a rule's accuracy change and its saving are paired with each other and with the terminal's.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from ..measures import Count, Estimate, VideoBootstrap, percentile_intervals, stat
from ._cascade_report import StopSummary, UnsharedCost
from ._inputs import CascadeInputs
from ._search import outcome_at

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def summarise_stops(
    stop: IntArray,
    paid: dict[str, FloatArray],
    paid_unshared: dict[str, FloatArray],
    inputs: CascadeInputs,
    primary: str,
    boot: VideoBootstrap | None,
) -> StopSummary:
    """Accuracy, cost and cost reduction in every currency (and with nothing shared, beside a
    `prefix` cost) with intervals, all from one set of resamples so they are paired; each
    accuracy carries the count it comes from (`count`: k right of n items)."""
    correct = outcome_at(stop, inputs.correct)
    terminal_correct = inputs.correct[:, -1]
    columns = [correct, terminal_correct]
    where: dict[tuple[str, str], int] = {}
    for group, costs in (("shared", paid), ("unshared", paid_unshared)):
        for c in costs:
            where[(group, c)] = len(columns)
            columns.append(costs[c])
    for c in paid:
        where[("terminal", c)] = len(columns)
        columns.append(inputs.cost(c).terminal)
    values = np.column_stack(columns)
    point = values.mean(axis=0)
    samples = boot.means(values) if boot is not None and boot.bootstrap > 0 else None

    def derived(fn: Callable[[FloatArray], FloatArray | float]) -> Estimate:
        interval = None
        if samples is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                column = np.asarray(fn(samples.T), dtype=np.float64)
            interval = percentile_intervals(column[:, None])[0]
        with np.errstate(invalid="ignore", divide="ignore"):
            value = float(fn(point))
        return stat(value, interval)

    n = len(stop)

    def share(fn: Callable[[FloatArray], FloatArray | float], right: FloatArray) -> Estimate:
        """A share of items, with the k right of the n it is over."""
        count = Count(k=round(float(right.sum())), n=n)
        return derived(fn).model_copy(update={"count": count})

    per_currency: dict[str, Estimate] = {}
    for c in paid:
        p, t = where[("shared", c)], where[("terminal", c)]
        per_currency[f"mean_cost_{c}"] = derived(_column(p))
        per_currency[f"terminal_cost_{c}"] = derived(_column(t))
        per_currency[f"cost_reduction_{c}"] = derived(_reduction(p, t))
    unshared = None
    if paid_unshared:
        bound: dict[str, Estimate] = {}
        for c in paid_unshared:
            p, t = where[("unshared", c)], where[("terminal", c)]
            bound[f"mean_cost_{c}"] = derived(_column(p))
            bound[f"cost_reduction_{c}"] = derived(_reduction(p, t))
        unshared = UnsharedCost(sharing="none", **bound)
    change = derived(lambda m: m[0] - m[1])
    reach = change.ci[1] if change.ci is not None else change.value
    stops = np.bincount(stop, minlength=len(inputs.labels))
    return StopSummary(
        accuracy=share(lambda m: m[0], correct),
        terminal_accuracy=share(lambda m: m[1], terminal_correct),
        accuracy_change=change,
        **per_currency,
        unshared=unshared,
        mean_cost=per_currency[f"mean_cost_{primary}"],
        cost_reduction=per_currency[f"cost_reduction_{primary}"],
        matches_terminal=bool(reach is not None and reach >= -1e-12),
        at_or_above_terminal=bool(point[0] >= point[1] - 1e-12),
        stop_share={label: float(stops[s] / max(n, 1)) for s, label in enumerate(inputs.labels)},
        stop_counts={label: int(stops[s]) for s, label in enumerate(inputs.labels)},
    )


Derived = Callable[[FloatArray], "FloatArray | float"]


def _column(p: int) -> Derived:
    """The mean of column p (of the point, or of every resample)."""
    return lambda m: m[p]


def _reduction(p: int, t: int) -> Derived:
    """1 - the mean of column p over the mean of column t."""
    return lambda m: 1.0 - m[p] / m[t]
