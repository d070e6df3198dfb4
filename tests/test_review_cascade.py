"""Independent review of the confidence cascade: a 4-item, 3-stage example worked out by hand
(explicit frame index sets and confidences), then an end-to-end cross-fitted run whose outcome
does not depend on the folds."""

from __future__ import annotations

import numpy as np
import pytest

from itemscale.policies import (
    CascadeInputs,
    CascadeSettings,
    outcome_at,
    run_policies,
    shared_frame_costs_from_indices,
    stopping_stage,
)

NESTED = ([0, 50], [0, 25, 50, 75], [0, 12, 25, 37, 50, 62, 75, 87])
# item d's first stage is phase-shifted: none of its frames is reused later
SHIFTED = ([10, 60], [0, 25, 50, 75], [0, 12, 25, 37, 50, 62, 75, 87])


def _indices(rows: list[tuple[list[int], ...]]) -> np.ndarray:
    out = np.empty((len(rows), 3), dtype=object)
    for i, row in enumerate(rows):
        for k, cell in enumerate(row):
            out[i, k] = np.asarray(cell, dtype=np.int64)
    return out


CORRECT = np.array(
    [
        [1, 1, 1],  # a
        [0, 1, 0],  # b
        [0, 0, 1],  # c
        [0, 0, 1],  # d
    ],
    dtype=np.float64,
)
CONFIDENCE = np.array(
    [
        [0.90, 0.50, np.nan],
        [0.60, 0.95, np.nan],
        [0.30, 0.40, np.nan],
        [0.50, 0.30, np.nan],
    ]
)


def test_hand_cascade_all_stages_run() -> None:
    costs = shared_frame_costs_from_indices(_indices([NESTED, NESTED, NESTED, SHIFTED]))
    gate = np.ones((4, 2), dtype=bool)
    thresholds = np.array([0.8, 0.9])
    stop = stopping_stage(gate, CONFIDENCE[:, :2], thresholds)
    # a: 0.90 >= 0.8 stops at 0; b: 0.60 < 0.8, 0.95 >= 0.9 stops at 1; c, d: the last answers
    assert stop.tolist() == [0, 1, 2, 2]
    accuracy = outcome_at(stop, CORRECT).mean()
    assert accuracy == 1.0  # a right at 0, b right at 1, c and d right at 2
    paid = outcome_at(stop, costs.cumulative((True, True, True)))
    # a: {0, 50} = 2; b: {0, 25, 50, 75} = 4; c: the 8 nested frames; d: {10, 60} + 8 = 10
    assert paid.tolist() == [2.0, 4.0, 8.0, 10.0]
    assert costs.terminal.tolist() == [8.0, 8.0, 8.0, 8.0]
    mean_cost = paid.mean()
    assert mean_cost == 6.0
    assert 1.0 - mean_cost / costs.terminal.mean() == pytest.approx(0.25)


def test_hand_cascade_skipped_stage_is_not_paid() -> None:
    costs = shared_frame_costs_from_indices(_indices([NESTED, NESTED, NESTED, SHIFTED]))
    gate = np.ones((4, 2), dtype=bool)
    thresholds = np.array([np.inf, 0.45])  # stage 0 can never answer, so it never runs
    stop = stopping_stage(gate, CONFIDENCE[:, :2], thresholds)
    assert stop.tolist() == [1, 1, 2, 2]
    assert outcome_at(stop, CORRECT).tolist() == [1.0, 1.0, 1.0, 1.0]
    paid = outcome_at(stop, costs.cumulative((False, True, True)))
    # stage 1 pays 4; stage 2 adds the 4 new nested frames; d's {10, 60} were never decoded
    assert paid.tolist() == [4.0, 4.0, 8.0, 8.0]
    # with stage 0 run as well, d's detour costs its two phase-shifted frames on top
    assert outcome_at(stop, costs.cumulative((True, True, True))).tolist() == [4, 4, 8, 10]


def test_nan_confidence_never_stops_and_last_stage_answers() -> None:
    gate = np.ones((2, 2), dtype=bool)
    score = np.array([[np.nan, np.nan], [0.0, 0.0]])
    assert stopping_stage(gate, score, np.array([0.0, 0.0])).tolist() == [2, 0]
    assert stopping_stage(gate, score, np.array([np.inf, np.inf])).tolist() == [2, 2]


def test_cross_fitted_run_by_hand() -> None:
    """Four videos, each with one 'easy' item (confident and right at every budget) and one
    'hard' item (unconfident, right only at the terminal budget). Whatever the folds, each fold
    holds both kinds, so matching terminal accuracy forces tau_0 into (0, 1]: on the held-out
    half, easy items stop at stage 0 (2 frames) and hard items reach the terminal (8 nested
    frames). Mean cost (4*2 + 4*8) / 8 = 5, reduction 1 - 5/8 = 0.375, accuracy 1 = terminal."""
    n = 8
    easy = np.arange(n) % 2 == 0
    correct = np.where(easy[:, None], 1.0, np.array([0.0, 0.0, 1.0])[None, :])
    confidence = np.where(easy[:, None], 1.0, 0.0) * np.ones((n, 3))
    confidence[:, 2] = np.nan
    inputs = CascadeInputs(
        model="m",
        series="s",
        labels=("2f", "4f", "8f"),
        item_ids=np.array([f"i{i}" for i in range(n)], dtype=object),
        video_ids=np.array([f"v{i // 2}" for i in range(n)], dtype=object),
        correct=correct,
        confidence=confidence,
        answers=np.where(correct > 0, "A", "B").astype(object),
        frame_costs=shared_frame_costs_from_indices(_indices([NESTED] * n)),
        token_costs=None,
    )
    for seed in (0, 1, 2):
        report = run_policies(inputs, CascadeSettings(n_boot=0, seed=seed))
        cascade = report["cascade"]
        assert report["folds"]["n_videos"] == [2, 2]
        assert cascade["accuracy"]["value"] == 1.0
        assert cascade["terminal_accuracy"]["value"] == 1.0
        assert cascade["mean_cost"]["value"] == pytest.approx(5.0)
        assert cascade["terminal_cost_frames"]["value"] == pytest.approx(8.0)
        assert cascade["cost_reduction"]["value"] == pytest.approx(0.375)
        assert cascade["stop_share"] == {"2f": 0.5, "4f": 0.0, "8f": 0.5}
        assert cascade["matches_terminal"] is True
        assert report["terminal"]["mean_cost"]["value"] == pytest.approx(8.0)


def test_thresholds_are_applied_to_the_other_fold() -> None:
    """Fold 0's items are right and confident (0.7) at stage 0; fold 1's are equally confident
    but wrong there. Fitted on fold 0, tau_0 <= 0.7 sends fold 1 home wrong at stage 0 (2
    frames); fitted on fold 1, stage 0 never answers and fold 0 stops at stage 1 (4 frames).
    Held out: accuracy 1/2, mean cost 3. Fitting and reporting on the same fold would give 1."""
    from itemscale.policies import video_folds

    n = 4
    video_ids = np.array([f"v{i}" for i in range(n)], dtype=object)
    folds = video_folds(video_ids, np.random.default_rng(0))
    assert sorted(folds.tolist()) == [0, 0, 1, 1]
    fold0 = folds == 0
    correct = np.where(fold0[:, None], 1.0, np.array([0.0, 1.0, 1.0])[None, :])
    confidence = np.tile(np.array([0.7, 0.0, np.nan]), (n, 1))
    inputs = CascadeInputs(
        model="m",
        series="s",
        labels=("2f", "4f", "8f"),
        item_ids=np.array([f"i{i}" for i in range(n)], dtype=object),
        video_ids=video_ids,
        correct=correct,
        confidence=confidence,
        answers=np.where(correct > 0, "A", "B").astype(object),
        frame_costs=shared_frame_costs_from_indices(_indices([NESTED] * n)),
        token_costs=None,
    )
    cascade = run_policies(inputs, CascadeSettings(n_boot=0, seed=0))["cascade"]
    assert cascade["accuracy"]["value"] == pytest.approx(0.5)
    assert cascade["mean_cost"]["value"] == pytest.approx(3.0)
    assert cascade["cost_reduction"]["value"] == pytest.approx(1 - 3 / 8)
    assert cascade["matches_terminal"] is False
    assert cascade["stop_share"] == {"2f": 0.5, "4f": 0.5, "8f": 0.0}
