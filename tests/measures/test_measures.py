"""Measures of MEASURES.md on hand-computed matrices, and their invariants."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _support.tables import LABELS, table
from itemscale.analysis.measures import (
    VideoBootstrap,
    analyze_responses,
    build_matrices,
    expected_harmful,
    greedy_cover,
    mcnemar_exact_p,
    resample_counts,
)
from itemscale.core.responses import normalise_responses


def analyze(df: pd.DataFrame, **kw: object) -> dict:
    return analyze_responses(normalise_responses(df), **kw).to_json()  # type: ignore[arg-type]


HAND = {
    "i1": [1, 0, 1],  # harmful (8->16), beneficial (16->32)
    "i2": [0, 1, 1],  # beneficial
    "i3": [1, 1, 0],  # harmful twice, terminal regression
    "i4": [0, 0, 0],
    "i5": [1, 1, 1],
}


def test_binary_measures_match_hand_computation() -> None:
    answers = {
        "i1": ["A", "C", "A"],
        "i2": ["B", "A", "A"],
        "i3": ["A", "A", "D"],
        "i4": ["B", "B", "NOANSWER"],
        "i5": ["A", "A", "A"],
    }
    text = {
        "i1": (0.0, "C"),  # the wrong answer at 16f equals the text-only answer
        "i2": (1.0, "A"),
        "i3": (0.0, "B"),  # wrong answer at 32f is D: not an overwrite
        "i4": (0.0, "NOANSWER"),
        "i5": (1.0, "A"),
    }
    res = analyze(table(HAND, answers=answers, text=text), bootstrap=0)["models"]["m"]
    assert res["n_items"] == 5 and res["n_dropped"] == 0
    assert [res["accuracy"][c]["value"] for c in LABELS] == [0.6, 0.6, 0.6]
    assert res["best_fixed"] == {
        "config": "8f",
        "value": 0.6,
        "ci": None,
        "count": {"k": 3, "n": 5},
    }
    # every share carries the count it is computed from, k of n items
    assert [res["accuracy"][c]["count"] for c in LABELS] == [{"k": 3, "n": 5}] * 3
    assert res["oracle"]["count"] == {"k": 4, "n": 5}
    assert res["harmful_rate"]["count"] == {"k": 2, "n": 5}
    assert res["terminal_regression_rate"]["count"] == {"k": 1, "n": 5}
    assert res["flip_down"]["16f->32f"]["count"] == {"k": 1, "n": 5}
    assert res["oracle"]["value"] == pytest.approx(0.8)
    assert res["oracle_headroom"]["value"] == pytest.approx(0.2)
    assert res["harmful_rate"]["value"] == pytest.approx(0.4)
    assert res["beneficial_rate"]["value"] == pytest.approx(0.4)
    assert res["terminal_regression_rate"]["value"] == pytest.approx(0.2)
    assert res["flip_down"]["8f->16f"]["value"] == pytest.approx(0.2)  # i1
    assert res["flip_up"]["8f->16f"]["value"] == pytest.approx(0.2)  # i2
    assert res["flip_down"]["8f->32f"]["value"] == pytest.approx(0.2)  # i3
    assert res["flip_up"]["16f->32f"]["value"] == pytest.approx(0.2)  # i1
    assert res["flip_down"]["16f->32f"]["value"] == pytest.approx(0.2)  # i3
    # complementarity 8f|16f: max(y8, y16) right for i1,i2,i3,i5 = 0.8; minus 0.6
    assert res["complementarity"]["8f|16f"]["value"] == pytest.approx(0.2)
    assert res["complementarity"]["16f|32f"]["value"] == pytest.approx(0.2)
    assert res["text_answerable_rate"]["value"] == pytest.approx(0.4)
    # harmful transitions: i1 (8->16), i3 (8->32, 16->32): 3; overwrites: i1 only.
    assert res["text_overwrite_counts"] == {
        "harmful_transitions": 3,
        "overwrite_transitions": 1,
        "harmful_items": 2,
        "overwrite_items": 1,
    }
    assert res["text_overwrite_rate"]["value"] == pytest.approx(1 / 3)
    assert res["text_overwrite_item_rate"]["value"] == pytest.approx(0.5)
    assert res["noanswer_rate"]["32f"]["value"] == pytest.approx(0.2)
    assert res["greedy_cover"] == [
        {"config": "8f", "gain": 0.6, "oracle": 0.6},
        {"config": "16f", "gain": 0.2, "oracle": 0.8},
    ]


def test_mcnemar_exact_p_by_hand() -> None:
    # 1 vs 5 discordant: two-sided exact p = 2 * P(X <= 1), X ~ Bin(6, 0.5) = 2 * 7/64
    assert mcnemar_exact_p(1, 5) == pytest.approx(14 / 64)
    assert mcnemar_exact_p(0, 0) == 1.0
    assert mcnemar_exact_p(3, 3) == pytest.approx(1.0)


def test_matched_grid_drops_failures_with_reasons() -> None:
    status = {("i1", 1): "media_error", ("i2", 2): "timeout", ("i3", 2): "timeout"}
    df = table(HAND, status=status)
    df = df[~((df["item_id"] == "i4") & (df["config_label"] == "32f"))]
    res = analyze(df, bootstrap=0)["models"]["m"]
    assert res["n_items"] == 1  # only i5 is left
    assert res["n_dropped"] == 4
    assert res["drop_reasons"] == {"media_error": 1, "timeout": 2, "missing": 1}
    assert res["accuracy"]["8f"]["value"] == 1.0


def test_noanswer_is_an_answered_wrong_response() -> None:
    df = table({"a": [1, 0], "b": [0, 1]}, labels=["8f", "16f"], status={("a", 1): "noanswer"})
    df.loc[(df["item_id"] == "a") & (df["config_label"] == "16f"), "correct"] = 0.0
    res = analyze(df, bootstrap=0)["models"]["m"]
    assert res["n_items"] == 2
    assert res["harmful_rate"]["value"] == 0.5


def test_repeats_noise_floor_and_rates() -> None:
    r0 = table({"a": [1, 0], "b": [1, 1], "c": [0, 1]}, labels=["8f", "16f"], repeat=0)
    r1 = table({"a": [1, 1], "b": [0, 1], "c": [0, 1]}, labels=["8f", "16f"], repeat=1)
    res = analyze(pd.concat([r0, r1]), bootstrap=0)["models"]["m"]
    assert res["n_repeats"] == 2
    # disagreement at 8f: only b; at 16f: only a
    assert res["noise_floor"]["8f"]["value"] == pytest.approx(1 / 3)
    assert res["noise_floor"]["16f"]["value"] == pytest.approx(1 / 3)
    # p: a = [1, .5], b = [.5, 1], c = [0, 1]; item-rate harmful (delta .5): only a
    assert res["item_rate_harmful_rate"]["value"] == pytest.approx(1 / 3)
    # expected harmful: a: 1 - P(0,0 or 0,1 or 1,1) = 1 - (0 + 0 + .5) = .5; b, c: 0
    assert res["expected_harmful_rate"]["value"] == pytest.approx(0.5 / 3)
    assert "repeat:default:0|1" in res["membership"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.floats(0, 1), min_size=1, max_size=5), min_size=1, max_size=6))
def test_expected_harmful_equals_enumeration(rows: list[list[float]]) -> None:
    k = len(rows[0])
    p = np.array([(r * k)[:k] for r in rows])
    exact = []
    for probs in p:
        total = 0.0
        for seq in itertools.product([0, 1], repeat=k):
            weight = np.prod([q if s else 1 - q for q, s in zip(probs, seq, strict=True)])
            harmful = any(seq[j] == 1 and seq[m] == 0 for j in range(k) for m in range(j + 1, k))
            total += weight * harmful
        exact.append(total)
    np.testing.assert_allclose(expected_harmful(p), exact, atol=1e-12)


def test_continuous_measures_by_hand() -> None:
    scores = {"a": [0.2, 0.8, 0.5], "b": [0.6, 0.6, 0.7], "c": [0.0, 0.1, 0.4]}
    res = analyze(table(scores, kind="open_qa"), bootstrap=0)["models"]["m"]["continuous"]
    means = [res["mean_score"][c]["value"] for c in LABELS]
    np.testing.assert_allclose(means, [0.8 / 3, 1.5 / 3, 1.6 / 3])
    # oracle: mean of item maxima (0.8 + 0.7 + 0.4) / 3, minus the best mean 1.6 / 3
    assert res["oracle_gap"]["value"] == pytest.approx((1.9 - 1.6) / 3)
    # harmful with eps .1: a drops .8 -> .5
    assert res["harmful_rate_eps"]["value"] == pytest.approx(1 / 3)


def test_membership_across_series() -> None:
    a = table({"x": [1, 0], "y": [1, 0], "z": [0, 1]}, labels=["8f", "16f"], series="cached")
    b = table({"x": [1, 0], "y": [1, 1], "z": [1, 0]}, labels=["8f", "16f"], series="raw")
    res = analyze(pd.concat([a, b]), bootstrap=0)["models"]["m"]
    overlap = res["membership"]["series:cached|raw"]["harmful"]
    assert overlap == {"n_p": 2, "n_q": 2, "n_both": 1, "jaccard": 1 / 3, "kept_share": 0.5}
    assert res["series"] == "cached" and "raw" in res["other_series"]


def test_by_attribute_breakdown() -> None:
    df = table(HAND)
    df["attributes"] = df["item_id"].map(
        lambda i: '{"duration": "long"}' if i in ("i1", "i3") else '{"duration": "short"}'
    )
    res = analyze(df, bootstrap=0, by=["duration"])["models"]["m"]
    groups = res["by"]["duration"]["groups"]
    assert groups["long"]["harmful_rate"]["value"] == 1.0
    assert groups["short"]["harmful_rate"]["value"] == 0.0
    assert groups["short"]["n_items"] == 3


def test_bootstrap_resamples_whole_videos() -> None:
    # Two items per video with opposite values: a video resample keeps each pair together, so
    # every resampled accuracy is exactly 0.5.
    df = table(
        {"a1": [1, 1], "a2": [0, 0], "b1": [1, 1], "b2": [0, 0]},
        labels=["8f", "16f"],
        videos={"a1": "A", "a2": "A", "b1": "B", "b2": "B"},
    )
    res = analyze(df, bootstrap=300, seed=3)["models"]["m"]
    assert res["accuracy"]["8f"]["ci"] == [0.5, 0.5]


def test_bootstrap_counts_independent_of_chunk_split() -> None:
    whole = resample_counts(50, 350, seed=11)
    parts = np.vstack(
        [resample_counts(50, 350, 11, range(0, 2)), resample_counts(50, 350, 11, range(2, 4))]
    )
    assert whole.shape == (350, 50)
    assert np.array_equal(whole, parts)
    assert np.all(whole.sum(axis=1) == 50)


def test_same_seed_same_interval_other_seed_differs() -> None:
    rng = np.random.default_rng(0)
    matrix = {f"i{i}": list(rng.integers(0, 2, 4).astype(float)) for i in range(60)}
    labels = ["a", "b", "c", "d"]
    one = analyze(table(matrix, labels=labels), bootstrap=200, seed=5)
    two = analyze(table(matrix, labels=labels), bootstrap=200, seed=5)
    three = analyze(table(matrix, labels=labels), bootstrap=200, seed=6)
    assert one == two
    assert one["models"]["m"]["accuracy"] != three["models"]["m"]["accuracy"]


def test_video_bootstrap_means_match_direct_weighting() -> None:
    videos = np.array(["v1", "v1", "v2", "v3"], dtype=object)
    values = np.array([[1.0], [0.0], [1.0], [0.0]])
    boot = VideoBootstrap(videos, bootstrap=20, seed=2)
    weights = boot.counts[:, boot.codes]  # per item
    direct = (weights @ values)[:, 0] / weights.sum(axis=1)
    np.testing.assert_allclose(boot.means(values)[:, 0], direct)


def test_greedy_cover_reaches_oracle() -> None:
    y = np.array([[1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 0, 0]], dtype=float)
    steps = greedy_cover(y, ["a", "b", "c"])
    assert [s.config for s in steps] == ["b", "a"]
    assert steps[-1].oracle == 0.75


binary_matrices = st.integers(2, 5).flatmap(
    lambda k: st.lists(st.lists(st.integers(0, 1), min_size=k, max_size=k), min_size=1, max_size=25)
)


@settings(max_examples=40, deadline=None)
@given(binary_matrices, st.randoms(use_true_random=False))
def test_invariants(rows: list[list[int]], rnd: object) -> None:
    k = len(rows[0])
    labels = [f"c{j}" for j in range(k)]
    matrix = {f"i{i}": [float(v) for v in r] for i, r in enumerate(rows)}
    res = analyze(table(matrix, labels=labels), bootstrap=30, seed=1)["models"]["m"]
    acc = [res["accuracy"][c]["value"] for c in labels]
    for j in range(k):
        for m in range(j + 1, k):
            arrow = f"c{j}->c{m}"
            change = res["flip_up"][arrow]["value"] - res["flip_down"][arrow]["value"]
            assert change == pytest.approx(acc[m] - acc[j])
    assert res["oracle"]["value"] >= res["best_fixed"]["value"] - 1e-12
    assert res["oracle_headroom"]["value"] >= -1e-12
    assert res["oracle_headroom"]["ci"][0] >= -1e-12
    assert res["terminal_regression_rate"]["value"] <= res["harmful_rate"]["value"] + 1e-12
    # item order does not matter
    items = list(matrix.items())
    rnd.shuffle(items)  # type: ignore[attr-defined]
    shuffled = analyze(table(dict(items), labels=labels), bootstrap=30, seed=1)["models"]["m"]
    assert shuffled == res


def test_build_matrices_orders_axis_by_axis_order() -> None:
    df = table(HAND)
    df["axis_order"] = df["config_label"].map({"8f": 2.0, "16f": 0.0, "32f": 1.0})
    (m,) = build_matrices(normalise_responses(df))
    assert m.labels == ("16f", "32f", "8f")
