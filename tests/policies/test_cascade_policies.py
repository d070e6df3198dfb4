"""Cross-fitted policies: folds by video, held-out evaluation hand-computed, the agreement and
learned policies, determinism of folds and intervals, and the report built from a response
table."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from itemscale.analysis.policies import (
    CascadeInputs,
    CascadeSettings,
    UnavailableRule,
    cascade_report,
    cross_fit,
    frame_union_costs,
    run_stopping_rules,
    stage_value_costs,
    stopping_stage,
    video_folds,
)
from itemscale.analysis.policies._cost import frame_counts_matrix
from itemscale.analysis.policies._learned import (
    agreement_matrix,
    fit_stopping_model,
    stopping_features,
    stopping_targets,
)
from itemscale.analysis.policies._search import outcome_at
from itemscale.core.responses import NOANSWER, normalise_responses


def test_folds_split_videos_deterministically() -> None:
    videos = np.array(["v1", "v2", "v1", "v3", "v4", "v5", "v3"])
    a = video_folds(videos, np.random.default_rng(7))
    b = video_folds(videos, np.random.default_rng(7))
    np.testing.assert_array_equal(a, b)
    # items of one video share a fold; five videos -> three in fold 0, two in fold 1
    assert a[0] == a[2] and a[3] == a[6]
    per_video = {v: f for v, f in zip(videos, a, strict=True)}
    assert sorted(per_video.values()) == [0, 0, 0, 1, 1]
    # the row order of the table does not matter
    perm = np.array([6, 5, 4, 3, 2, 1, 0])
    c = video_folds(videos[perm], np.random.default_rng(7))
    assert {v: f for v, f in zip(videos[perm], c, strict=True)} == per_video
    seeds = {tuple(video_folds(videos, np.random.default_rng(s))) for s in range(20)}
    assert len(seeds) > 1


def test_folds_need_two_videos() -> None:
    with pytest.raises(ValueError, match="at least two videos"):
        video_folds(np.array(["v", "v"]), np.random.default_rng(0))


def _two_fold_inputs() -> tuple[CascadeInputs, np.ndarray]:
    # Costs: 2f alone 2, 4f alone 4, both 6 (stage 2f is only run when its threshold is finite).
    # Fold 0 (v0..v3) fits tau = 0.7 (test_cascade_search): 3 right at 2+2+2+6 = 12 < 16.
    # Fold 1 (v4..v7): e right/right 0.95, f right/right 0.5, g right/right 0.45,
    #   h wrong/right 0.3; terminal 4/4 at 16; tau 0.95 -> 20, 0.5 -> 16, 0.45 -> 12 (4 right),
    #   0.3 loses h -> fold 1 fits tau = 0.45.
    correct = np.array(
        [[1, 1], [0, 1], [1, 0], [0, 1], [1, 1], [1, 1], [1, 1], [0, 1]], dtype=float
    )
    conf = np.array(
        [[0.9, 1], [0.8, 1], [0.7, 1], [0.6, 1], [0.95, 1], [0.5, 1], [0.45, 1], [0.3, 1]]
    )
    inputs = CascadeInputs(
        model="m",
        series="default",
        labels=("2f", "4f"),
        item_ids=np.array([f"i{j}" for j in range(8)], dtype=object),
        video_ids=np.array([f"v{j}" for j in range(8)], dtype=object),
        correct=correct,
        confidence=conf,
        answers=np.full((8, 2), "A", dtype=object),
        costs={
            "frames": stage_value_costs(frame_counts_matrix([2, 4], n_items=8), "none"),
            "tokens": stage_value_costs(np.tile([100.0, 300.0], (8, 1)), "none"),
        },
    )
    folds = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    return inputs, folds


def test_cross_fit_reports_each_fold_with_the_other_folds_thresholds() -> None:
    inputs, folds = _two_fold_inputs()
    (held,) = cross_fit("confidence", inputs, folds, "frames")
    fit0, fit1 = held.fold_fits
    assert fit0.fitted_on_fold == 0 and fit0.thresholds == {"2f": 0.7}
    assert fit1.fitted_on_fold == 1 and fit1.thresholds == {"2f": 0.45}
    assert fit0.stages_run == ("2f", "4f")
    # fold 0 items under tau 0.45: all stop at 2f; fold 1 items under 0.7: only e stops
    np.testing.assert_array_equal(held.stop, [0, 0, 0, 0, 0, 1, 1, 1])
    np.testing.assert_array_equal(held.cost("frames"), [2, 2, 2, 2, 2, 6, 6, 6])
    assert "tokens" in held.paid
    np.testing.assert_array_equal(held.cost("tokens"), [100] * 5 + [400] * 3)


def test_held_out_summary_matches_cross_fit() -> None:
    """run_stopping_rules draws its folds from the seed; its summary is the held-out cross_fit."""
    inputs, _ = _two_fold_inputs()
    report = run_stopping_rules(inputs, CascadeSettings(bootstrap=0, seed=0)).as_json()
    cascade = report["cascade"]
    folds = video_folds(inputs.video_ids, np.random.default_rng(0))
    (held,) = cross_fit("confidence", inputs, folds, "frames")
    right = inputs.correct[np.arange(8), held.stop]
    assert cascade["accuracy"]["value"] == pytest.approx(right.mean())
    assert cascade["mean_cost"]["value"] == pytest.approx(held.cost("frames").mean())
    assert cascade["cost_reduction"]["value"] == pytest.approx(1 - held.cost("frames").mean() / 4)
    assert cascade["terminal_accuracy"]["value"] == 7 / 8
    assert cascade["accuracy"]["ci"] is None  # bootstrap = 0


def test_held_out_numbers_for_the_hand_folds() -> None:
    """The fold split of _two_fold_inputs: 6/8 right (below the terminal's 7/8: fold 0's items
    stop too early under fold 1's threshold), 3.5 frames per item, cost reduction 1 - 3.5/4."""
    inputs, folds = _two_fold_inputs()
    (held,) = cross_fit("confidence", inputs, folds, "frames")
    right = inputs.correct[np.arange(8), held.stop]
    assert right.mean() == 6 / 8
    assert held.cost("frames").mean() == 3.5
    assert 1 - held.cost("frames").mean() / inputs.cost("frames").terminal.mean() == 0.125


def test_agreement_gate() -> None:
    answers = np.array(
        [["A", "A", "B"], ["A", "B", "B"], [NOANSWER, NOANSWER, "A"], [None, None, "C"]],
        dtype=object,
    )
    np.testing.assert_array_equal(
        agreement_matrix(answers),
        [[False, True, False], [False, False, True], [False, False, False], [False] * 3],
    )


def test_learned_stopping_model_ranks_informative_features() -> None:
    rng = np.random.default_rng(0)
    n, k = 400, 3
    correct = (rng.random((n, k)) < 0.5).astype(float)
    correct[:, -1] = 1.0
    # confidence tells whether a stage is right
    conf = np.clip(0.2 + 0.6 * correct + rng.normal(0, 0.05, (n, k)), 0, 1)
    answers = np.where(correct > 0, "A", "B").astype(object)
    features = stopping_features(conf, answers)
    assert features.shape == (n, k - 1, 7)
    targets = stopping_targets(correct)
    np.testing.assert_array_equal(targets, correct[:, :-1] >= 1)
    model = fit_stopping_model(features, targets)
    p = model.predict(features)
    assert p[targets > 0].mean() > 0.8 > 0.2 > p[targets < 1].mean()
    # one-class folds stay finite
    flat = fit_stopping_model(features, np.ones_like(targets))
    assert np.all(np.isfinite(flat.weights))


def _table(n_items: int = 60, seed: int = 0, *, with_indices: bool = True) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frames = [4, 8, 16]
    rows = []
    ability = rng.random(n_items)
    for i in range(n_items):
        for k, f in enumerate(frames):
            right = float(rng.random() < 0.3 + 0.5 * ability[i] + 0.05 * k)
            rows.append(
                {
                    "model": "m",
                    "item_id": f"i{i:03d}",
                    "video_id": f"v{i // 2:03d}",
                    "task_kind": "mcqa",
                    "series": "default",
                    "config_id": f"c{f}",
                    "config_label": f"{f}f",
                    "axis_order": float(f),
                    "frames": f,
                    "repeat": 0,
                    "status": "ok",
                    "answer": "A" if right else "B",
                    "correct": right,
                    "confidence": float(np.clip(0.3 + 0.4 * right + rng.normal(0, 0.15), 0, 1)),
                    "visual_tokens": f * 16,
                    "frame_indices": np.arange(0, 64, 64 // f) if with_indices else None,
                }
            )
    return normalise_responses(pd.DataFrame(rows))


def test_report_is_deterministic_and_json_ready() -> None:
    df = _table()
    typed = cascade_report(df, CascadeSettings(bootstrap=200, seed=3))
    a = typed.as_json()
    b = cascade_report(df, CascadeSettings(bootstrap=200, seed=3)).as_json()
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    (block,) = a["results"]
    assert block["cost"]["frames_basis"] == "union"
    for name in ("confidence", "agreement", "learned"):
        policy = block["policies"][name]
        assert policy["available"]
        low, high = policy["accuracy"]["ci"]
        assert low <= policy["accuracy"]["value"] <= high
        assert policy["cost_reduction_tokens"]["value"] is not None
        assert sum(policy["stop_share"].values()) == pytest.approx(1.0)
        assert [f["fitted_on_fold"] for f in policy["folds"]] == [0, 1]
    assert typed.results[0].cascade is typed.results[0].policies["confidence"]
    assert block["frontier"] and any(p["pareto"] for p in block["frontier"])
    c = cascade_report(df, CascadeSettings(bootstrap=200, seed=4)).as_json()
    assert json.dumps(a, sort_keys=True) != json.dumps(c, sort_keys=True)


def test_nested_budgets_share_frames() -> None:
    """Nested indices (4f in 8f in 16f): an item that stops at a stage pays exactly that stage's
    frames, whichever earlier stages ran; the sum-of-counts fallback pays them again."""
    (block,) = cascade_report(_table(), CascadeSettings(bootstrap=0)).as_json()["results"]
    frames = {"4f": 4, "8f": 8, "16f": 16}
    for name in ("confidence", "agreement", "learned"):
        policy = block["policies"][name]
        expected = sum(share * frames[label] for label, share in policy["stop_share"].items())
        assert policy["mean_cost_frames"]["value"] == pytest.approx(expected)
    assert block["terminal"]["mean_cost_frames"]["value"] == 16.0
    # without indices, auto pays every stage in full (nothing recorded shows the sharing);
    # prefix, asked for, pays what each stage adds (the stop stage's frames) with nothing
    # shared (every stage that ran paid in full) beside it
    (auto,) = cascade_report(_table(with_indices=False), CascadeSettings(bootstrap=0)).as_json()[
        "results"
    ]
    assert auto["cost"]["frames_basis"] == "none" and auto["cost"]["unshared_bound"] is None
    (fallback,) = cascade_report(
        _table(with_indices=False), CascadeSettings(bootstrap=0, sharing="prefix")
    ).as_json()["results"]
    assert fallback["cost"]["frames_basis"] == "prefix"
    assert fallback["cost"]["unshared_bound"] == "none"
    agreement = fallback["policies"]["agreement"]  # runs every stage
    shares = agreement["stop_share"].items()
    assert agreement["mean_cost_frames"]["value"] == pytest.approx(
        sum(share * frames[label] for label, share in shares)
    )
    paid = {"4f": 4, "8f": 12, "16f": 28}  # 4 + 8 (+ 16)
    assert agreement["unshared"]["mean_cost_frames"]["value"] == pytest.approx(
        sum(share * paid[label] for label, share in shares)
    )
    (none,) = cascade_report(
        _table(with_indices=False), CascadeSettings(bootstrap=0, sharing="none")
    ).as_json()["results"]
    assert none["cost"]["frames_basis"] == "none" and none["cost"]["unshared_bound"] is None
    with pytest.raises(ValueError, match="no recorded indices"):
        cascade_report(_table(with_indices=False), CascadeSettings(bootstrap=0, sharing="union"))


def test_tokens_as_the_fitted_currency() -> None:
    (block,) = cascade_report(_table(), CascadeSettings(bootstrap=0, cost="tokens")).as_json()[
        "results"
    ]
    assert block["cost"]["primary"] == "tokens"
    assert block["cascade"]["mean_cost"] == block["cascade"]["mean_cost_tokens"]
    assert block["terminal"]["mean_cost"]["value"] == 16 * 16


def test_tokens_missing_is_a_clear_error() -> None:
    df = _table()
    df["visual_tokens"] = None
    df = normalise_responses(df)
    with pytest.raises(
        ValueError, match=r"cannot be counted in tokens \(180 cell\(s\) lack a count"
    ):
        cascade_report(df, CascadeSettings(bootstrap=0, cost="tokens"))


def test_skipped_axes_are_named() -> None:
    df = _table(20)
    extra = df[df["config_id"] == "c16"].copy()
    extra["series"] = "intervention:nested"
    extra["config_id"] = "x16"
    single = df[df["config_id"] == "c4"].copy()
    single["series"] = "one-budget"
    single["config_id"] = "s4"
    report = cascade_report(
        normalise_responses(pd.concat([df, extra, single], ignore_index=True)),
        CascadeSettings(bootstrap=0),
    )
    reasons = {s.series: s.reason for s in report.skipped}
    assert "not a budget axis" in reasons["intervention:nested"]
    assert reasons["one-budget"] == "fewer than two budgets"
    assert [r.series for r in report.results] == ["default"]


def test_no_confidence_leaves_the_other_policies() -> None:
    df = _table(30)
    df["confidence"] = None
    (block,) = cascade_report(normalise_responses(df), CascadeSettings(bootstrap=0)).results
    assert isinstance(block.cascade, UnavailableRule)
    assert "no prob score recorded" in block.cascade.reason
    assert block.policies["agreement"].available
    assert block.policies["learned"].available
    assert block.threshold_sweep == ()


# ---- Review: a 4-item, 3-stage cascade by hand, and cross-fitted runs whatever the folds


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
    costs = frame_union_costs(_indices([NESTED, NESTED, NESTED, SHIFTED]))
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
    costs = frame_union_costs(_indices([NESTED, NESTED, NESTED, SHIFTED]))
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
        costs={"frames": frame_union_costs(_indices([NESTED] * n))},
    )
    for seed in (0, 1, 2):
        report = run_stopping_rules(inputs, CascadeSettings(bootstrap=0, seed=seed)).as_json()
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
    from itemscale.analysis.policies import video_folds

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
        costs={"frames": frame_union_costs(_indices([NESTED] * n))},
    )
    cascade = run_stopping_rules(inputs, CascadeSettings(bootstrap=0, seed=0)).as_json()["cascade"]
    assert cascade["accuracy"]["value"] == pytest.approx(0.5)
    assert cascade["mean_cost"]["value"] == pytest.approx(3.0)
    assert cascade["cost_reduction"]["value"] == pytest.approx(1 - 3 / 8)
    assert cascade["matches_terminal"] is False
    assert cascade["stop_share"] == {"2f": 0.5, "4f": 0.5, "8f": 0.0}
