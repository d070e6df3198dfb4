"""Threshold search: hand-computed fits, exhaustive checks for two stages, and the invariants
of the gated cascade."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from itemscale.analysis.policies import (
    fit_thresholds,
    frame_union_costs,
    stage_value_costs,
    stopping_stage,
)
from itemscale.analysis.policies._cost import frame_counts_matrix
from itemscale.analysis.policies._search import (
    active_stages,
    fixed_cost,
    outcome_at,
    pareto_front,
    shared_threshold_sweep,
)

# Four items, two stages (2 then 4 frames; running both costs 6):
#   a: right at both, confidence 0.9      b: wrong then right, 0.8
#   c: right then wrong, 0.7              d: wrong then right, 0.6
# Terminal accuracy 3/4. Stopping at tau: inf -> 3 right; 0.9 -> 3; 0.8 -> 2; 0.7 -> 3; 0.6 -> 2.
# The cheapest threshold that keeps 3 right is 0.7: a, b, c stop (2 frames), d runs on (6).
CORRECT = np.array([[1, 1], [0, 1], [1, 0], [0, 1]], dtype=float)
CONF = np.array([[0.9], [0.8], [0.7], [0.6]])
GATE = np.ones((4, 1), dtype=bool)


def test_two_stage_fit_hand_computed() -> None:
    costs = stage_value_costs(frame_counts_matrix([2, 4], n_items=4), "none")
    fit = fit_thresholds(GATE, CONF, CORRECT, costs.cumulative)
    assert fit.feasible
    np.testing.assert_array_equal(fit.thresholds, [0.7])
    assert fit.accuracy == 0.75
    assert fit.mean_cost == (2 + 2 + 2 + 6) / 4


def test_lower_target_buys_a_cheaper_threshold() -> None:
    costs = stage_value_costs(frame_counts_matrix([2, 4], n_items=4), "none")
    fit = fit_thresholds(GATE, CONF, CORRECT, costs.cumulative, target_accuracy=0.5)
    np.testing.assert_array_equal(fit.thresholds, [0.6])
    assert (fit.accuracy, fit.mean_cost) == (0.5, 2.0)


def test_unreachable_target_is_reported_not_faked() -> None:
    costs = stage_value_costs(frame_counts_matrix([2, 4], n_items=4), "none")
    fit = fit_thresholds(GATE, CONF, CORRECT, costs.cumulative, target_accuracy=1.0)
    assert not fit.feasible
    # the best the family reaches is 3/4 (c's stage-0 answer and d's stage-1 answer cannot
    # both be had with b's wrong stage-0 answer at higher confidence than c)
    assert fit.accuracy == 0.75


def test_a_useless_middle_stage_is_skipped() -> None:
    """Stage 1 is always wrong: the fit keeps it silent (+inf) and, because a silent stage is not
    run, the items that go on pay 4 + 16 frames instead of 4 + 8 + 16."""
    correct = np.array([[1, 0, 1], [0, 0, 1], [0, 0, 1], [1, 0, 1]], dtype=float)
    conf = np.array([[0.9, 0.5], [0.2, 0.5], [0.2, 0.5], [0.9, 0.5]])
    gate = np.ones((4, 2), dtype=bool)
    costs = stage_value_costs(frame_counts_matrix([4, 8, 16], n_items=4), "none")
    fit = fit_thresholds(gate, conf, correct, costs.cumulative)
    np.testing.assert_array_equal(fit.thresholds, [0.9, np.inf])
    assert fit.accuracy == 1.0
    assert fit.mean_cost == (4 + 20 + 20 + 4) / 4
    # without skipping (a policy that must run every stage) the same thresholds cost 16 / item
    fit_all = fit_thresholds(gate, conf, correct, costs.cumulative, skip_silent=False)
    assert fit_all.mean_cost == (4 + 28 + 28 + 4) / 4


def test_stopping_rules() -> None:
    gate = np.array([[True, True], [False, True], [True, True], [True, True]])
    score = np.array([[0.5, 0.9], [0.99, 0.9], [np.nan, 0.95], [0.7, 0.1]])
    stop = stopping_stage(gate, score, np.array([0.5, 0.9]))
    # ties admit (0.5 >= 0.5); a closed gate never stops; NaN never stops; nothing -> last
    np.testing.assert_array_equal(stop, [0, 1, 1, 0])
    stop = stopping_stage(gate, score, np.array([0.8, 0.95]))
    np.testing.assert_array_equal(stop, [2, 2, 1, 2])
    np.testing.assert_array_equal(
        outcome_at(stop, np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9], [0, 0, 1]], dtype=float)),
        [3, 6, 8, 1],
    )


def test_shared_threshold_sweep_hand_computed() -> None:
    costs = stage_value_costs(frame_counts_matrix([2, 4], n_items=4), "none")
    acc, mean_cost = shared_threshold_sweep(
        GATE, CONF, CORRECT, costs.cumulative, np.array([np.inf, 0.8, 0.6])
    )
    np.testing.assert_allclose(acc, [0.75, 0.5, 0.5])
    # +inf runs the terminal alone: 4 frames, not 2 + 4
    np.testing.assert_allclose(mean_cost, [4.0, (2 + 2 + 6 + 6) / 4, 2.0])


def test_pareto_front() -> None:
    costs = np.array([5.0, 1.0, 3.0, 3.0, 4.0])
    accs = np.array([0.9, 0.5, 0.7, 0.6, 0.7])
    np.testing.assert_array_equal(pareto_front(costs, accs), [1, 2, 0])


index_sets = st.lists(st.integers(0, 40), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 4).flatmap(
        lambda k: st.tuples(
            st.lists(st.lists(index_sets, min_size=k, max_size=k), min_size=1, max_size=8),
            st.lists(st.lists(st.booleans(), min_size=k, max_size=k), min_size=8, max_size=8),
            arrays(np.float64, (8, k - 1), elements=st.floats(0, 1)),
        )
    )
)
def test_silent_cascade_is_the_terminal_budget(
    case: tuple[list[list[list[int]]], list[list[bool]], np.ndarray],
) -> None:
    """tau = +inf everywhere but the last stage: the terminal's accuracy and the terminal's cost
    (no earlier stage runs, so none is paid)."""
    rows, right, conf = case
    n, k = len(rows), len(rows[0])
    cells = np.empty((n, k), dtype=object)
    for i, row in enumerate(rows):
        for j, cell in enumerate(row):
            cells[i, j] = np.asarray(cell)
    correct = np.asarray(right[:n], dtype=float)
    costs = frame_union_costs(cells)
    thresholds = np.full(k - 1, np.inf)
    stop = stopping_stage(np.ones((n, k - 1), bool), conf[:n], thresholds)
    cost = outcome_at(stop, costs.cumulative(active_stages(thresholds, True)))
    assert outcome_at(stop, correct).mean() == correct[:, -1].mean()
    np.testing.assert_array_equal(cost, costs.terminal)
    np.testing.assert_array_equal(cost, [len(set(row[-1])) for row in rows])


@settings(max_examples=80, deadline=None)
@given(
    arrays(np.float64, (7, 2), elements=st.sampled_from([0.0, 1.0])),
    arrays(np.float64, (7, 1), elements=st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.9])),
    st.tuples(st.integers(1, 8), st.integers(1, 8)),
)
def test_two_stage_fit_is_exhaustive(
    correct: np.ndarray, conf: np.ndarray, frames: tuple[int, int]
) -> None:
    """With two stages one sweep is exhaustive: the fit is the cheapest feasible threshold."""
    costs = stage_value_costs(frame_counts_matrix(list(frames), n_items=7), "none")
    gate = np.ones((7, 1), dtype=bool)
    fit = fit_thresholds(gate, conf, correct, costs.cumulative)
    target = correct[:, -1].sum()
    best = np.inf
    for tau in [np.inf, *np.unique(conf)]:
        th = np.array([tau])
        stop = stopping_stage(gate, conf, th)
        if outcome_at(stop, correct).sum() >= target:
            best = min(best, outcome_at(stop, costs.cumulative(active_stages(th, True))).mean())
    assert fit.feasible
    assert fit.accuracy >= correct[:, -1].mean()
    assert abs(fit.mean_cost - best) < 1e-12


@settings(max_examples=40, deadline=None)
@given(
    st.integers(3, 4).flatmap(
        lambda k: st.tuples(
            arrays(np.float64, (9, k), elements=st.sampled_from([0.0, 1.0])),
            arrays(np.float64, (9, k - 1), elements=st.sampled_from([0.2, 0.4, 0.6, 0.8])),
        )
    )
)
def test_fit_never_loses_to_the_terminal_or_a_shared_threshold(
    case: tuple[np.ndarray, np.ndarray],
) -> None:
    correct, conf = case
    n, k = correct.shape
    costs = stage_value_costs(frame_counts_matrix([2**j for j in range(k)], n_items=n), "none")
    gate = np.ones((n, k - 1), dtype=bool)
    fit = fit_thresholds(gate, conf, correct, costs.cumulative)
    assert fit.feasible and fit.accuracy >= correct[:, -1].mean()
    assert fit.mean_cost <= costs.terminal.mean()
    for tau in np.unique(conf):
        th = np.full(k - 1, tau)
        stop = stopping_stage(gate, conf, th)
        if outcome_at(stop, correct).sum() >= correct[:, -1].sum():
            shared = outcome_at(stop, costs.cumulative(active_stages(th, True))).mean()
            assert fit.mean_cost <= shared + 1e-12


def test_fixed_cost_ignores_skipping() -> None:
    matrix = np.array([[1.0, 3.0]])
    assert fixed_cost(matrix)((False, True)) is not None
    np.testing.assert_array_equal(fixed_cost(matrix)((False, True)), matrix)


def test_small_exhaustive_three_stage_case() -> None:
    """A three-stage case small enough to enumerate: the fit reaches the exhaustive optimum."""
    correct = np.array([[0, 1, 1], [1, 1, 1], [0, 0, 1], [1, 0, 0], [0, 1, 0]], dtype=float)
    conf = np.array([[0.3, 0.8], [0.9, 0.2], [0.4, 0.4], [0.8, 0.9], [0.1, 0.7]])
    gate = np.ones((5, 2), dtype=bool)
    costs = stage_value_costs(frame_counts_matrix([1, 2, 4], n_items=5), "none")
    fit = fit_thresholds(gate, conf, correct, costs.cumulative)
    best = np.inf
    for combo in itertools.product(*[[np.inf, *np.unique(conf[:, j])] for j in range(2)]):
        th = np.array(combo)
        stop = stopping_stage(gate, conf, th)
        if outcome_at(stop, correct).sum() >= correct[:, -1].sum():
            best = min(best, outcome_at(stop, costs.cumulative(active_stages(th, True))).mean())
    assert fit.mean_cost == best
