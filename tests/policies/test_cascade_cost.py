"""Shared frame cost and token cost, hand-computed on overlapping, nested and duplicated index
sets, for every set of stages that run."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itemscale.analysis.policies import frame_union_costs, stage_value_costs
from itemscale.analysis.policies._cost import frame_counts_matrix
from itemscale.analysis.policies._inputs import resolve_sharing


def _cells(rows: list[list[list[int]]]) -> np.ndarray:
    out = np.empty((len(rows), len(rows[0])), dtype=object)
    for i, row in enumerate(rows):
        for k, cell in enumerate(row):
            out[i, k] = np.asarray(cell, dtype=np.int64)
    return out


OVERLAP = _cells(
    [
        # linspace-like budgets that share only some frames
        [[0, 50], [0, 25, 50, 75], [10, 30, 50, 70]],
        # nested: each budget contains the previous one
        [[0], [0, 50], [0, 25, 50, 75]],
        # duplicated indices inside a cell count once
        [[3, 3], [3, 4], [4, 4, 5]],
    ]
)


def test_union_cost_all_stages_hand_computed() -> None:
    costs = frame_union_costs(OVERLAP)
    np.testing.assert_array_equal(costs.cumulative(), [[2, 4, 7], [1, 2, 4], [1, 2, 3]])
    np.testing.assert_array_equal(costs.terminal, [4, 4, 2])
    assert costs.basis == "union"


@pytest.mark.parametrize(
    ("active", "expected"),
    [
        # stage 0 skipped: stage 1 pays its 4 frames, stage 2 adds 10, 30, 70
        ((False, True, True), [[0, 4, 7], [0, 2, 4], [0, 2, 3]]),
        # stage 1 skipped: stage 2 adds 10, 30, 70 to {0, 50}
        ((True, False, True), [[2, 2, 5], [1, 1, 4], [1, 1, 3]]),
        # terminal alone costs exactly the terminal budget
        ((False, False, True), [[0, 0, 4], [0, 0, 4], [0, 0, 2]]),
    ],
)
def test_union_cost_with_skipped_stages(
    active: tuple[bool, ...], expected: list[list[int]]
) -> None:
    costs = frame_union_costs(OVERLAP)
    np.testing.assert_array_equal(costs.cumulative(active), expected)


def test_none_pays_every_running_stage_in_full() -> None:
    costs = stage_value_costs(frame_counts_matrix([2, 4, 8], n_items=2), "none")
    np.testing.assert_array_equal(costs.cumulative(), [[2, 6, 14], [2, 6, 14]])
    np.testing.assert_array_equal(costs.cumulative((False, True, True)), [[0, 4, 12]] * 2)
    np.testing.assert_array_equal(costs.terminal, [8, 8])
    assert costs.basis == "none"
    assert "pays in full" in costs.note


def test_prefix_pays_what_each_stage_adds_beyond_the_previous_one_that_ran() -> None:
    """The seed paper's shared cost: sum over the stages visited of max(0, c_k - c_prev)."""
    costs = stage_value_costs(frame_counts_matrix([0, 2, 4, 8], n_items=1), "prefix")
    np.testing.assert_array_equal(costs.cumulative(), [[0, 2, 4, 8]])
    # stage 1 skipped: stage 2 pays 4 - 0, the previous stage that ran being the text-only one
    np.testing.assert_array_equal(costs.cumulative((True, False, True, True)), [[0, 0, 4, 8]])
    np.testing.assert_array_equal(costs.cumulative((False, False, False, True)), [[0, 0, 0, 8]])
    # per-item costs that fall (latency, say) add nothing: max(0, .) per step
    latency = stage_value_costs(np.array([[1.0, 3.0, 2.5, 4.0]]), "prefix")
    np.testing.assert_array_equal(latency.cumulative(), [[1.0, 3.0, 3.0, 4.5]])
    assert costs.basis == "prefix" and "previous stage" in costs.note


def test_auto_sharing_is_union_with_indices_and_none_without() -> None:
    """The default claims only what the record supports: the recorded union (which is the
    prefix cost where frames are nested), and without indices nothing shared."""
    assert resolve_sharing("auto", True) == "union"
    assert resolve_sharing("auto", False) == "none"
    assert resolve_sharing("prefix", False) == "prefix"
    assert resolve_sharing("none", False) == "none"
    with pytest.raises(ValueError, match="no recorded indices"):
        resolve_sharing("union", False)


def test_negative_index_is_named() -> None:
    cells = _cells([[[0, 1], [-1, 2]]])
    with pytest.raises(ValueError, match=r"frame_indices\[0, 1\]: negative frame index -1"):
        frame_union_costs(cells)


def test_token_cost_is_a_running_sum_of_stages_that_ran() -> None:
    costs = stage_value_costs(np.array([[10.0, 20.0, 40.0], [5.0, 5.0, 5.0]]), "none")
    np.testing.assert_array_equal(costs.cumulative(), [[10, 30, 70], [5, 10, 15]])
    np.testing.assert_array_equal(costs.cumulative((True, False, True)), [[10, 10, 50], [5, 5, 10]])
    np.testing.assert_array_equal(costs.terminal, [40, 5])
    with pytest.raises(ValueError, match="finite for every cell"):
        stage_value_costs(np.array([[10.0, np.nan]]), "none")


def test_cost_rejects_a_wrong_number_of_flags() -> None:
    with pytest.raises(ValueError, match="2 flags for 3 stages"):
        stage_value_costs(frame_counts_matrix([1, 2, 3], 1), "none").cumulative((True, True))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.lists(st.integers(0, 30), min_size=1, max_size=8), min_size=3, max_size=3),
        min_size=1,
        max_size=6,
    ),
    st.lists(st.booleans(), min_size=2, max_size=2),
)
def test_union_cost_equals_python_sets(rows: list[list[list[int]]], flags: list[bool]) -> None:
    """The vectorised attribution agrees with plain set unions for any running set."""
    active = (*flags, True)
    got = frame_union_costs(_cells(rows)).cumulative(active)
    for i, row in enumerate(rows):
        seen: set[int] = set()
        for k, cell in enumerate(row):
            if active[k]:
                seen |= set(cell)
            assert got[i, k] == len(seen)


def test_a_cascade_is_charged_the_frames_each_cell_used() -> None:
    """An adaptive selection's frame count is a cap: a stage costs what its cells recorded
    (`effective_frames`), not the cap; cells without a count pay the configuration's."""
    import pandas as pd

    from _support.tables import table
    from itemscale.analysis.measures import build_matrices
    from itemscale.analysis.policies._inputs import inputs_from_matrix
    from itemscale.core.responses import normalise_responses

    df = table({"a": [1, 1], "b": [0, 1], "c": [1, 0]}, labels=["<=8f", "<=16f"])
    df["effective_frames"] = pd.array([3, 8, 8, 11, None, 16], dtype="Int64")
    (matrix,) = build_matrices(normalise_responses(df))
    inputs = inputs_from_matrix(matrix, sharing="none")
    order = [list(matrix.item_ids).index(i) for i in ("a", "b", "c")]
    paid = inputs.cost("frames").cumulative(inputs.cost("frames").all_stages)[order]
    assert paid.tolist() == [[3.0, 11.0], [8.0, 19.0], [8.0, 24.0]]
