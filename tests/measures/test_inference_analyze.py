"""The tests between budgets and churn as `analyze_responses` reports them: keys beside the
existing ones, Holm over the adjacent family, requested pairs, the heterogeneity block on both
grids, and churn between two sampling phases computed by hand."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from _support.tables import table
from itemscale.analysis.measures import (
    MAX_BUDGETS,
    UnknownConfigError,
    analyze_responses,
    build_matrices,
    holm,
    paired_tests,
)
from itemscale.core.responses import normalise_responses


def analyze(df: pd.DataFrame, **kw: object) -> dict:
    return analyze_responses(normalise_responses(df), **kw).to_json()  # type: ignore[arg-type]


def _run(n_items: int = 30, seed: int = 0) -> pd.DataFrame:
    """Three budgets and a text-only answer, two items per video."""
    rng = np.random.default_rng(seed)
    ability = rng.normal(0, 1, n_items)
    matrix = {
        f"q{i:02d}": [float(ability[i] + 0.4 * k + rng.normal(0, 0.7) > 0) for k in range(3)]
        for i in range(n_items)
    }
    text = {item: (float(rng.random() < 0.3), "A") for item in matrix}
    answers = {item: ["A" if y else "B" for y in ys] for item, ys in matrix.items()}
    videos = {item: f"v{i // 2}" for i, item in enumerate(matrix)}
    return table(matrix, answers=answers, text=text, videos=videos)


def test_analyze_adds_the_tests_beside_the_existing_keys() -> None:
    res = analyze(_run(), bootstrap=200, seed=3)["models"]["m"]
    for key in ("mcnemar_p", "flip_down", "flip_up", "adjacent", "harmful_rate"):
        assert key in res  # unchanged
    tests = res["paired_tests"]
    assert tests["default"] == "clustered_mcnemar" and tests["family"] == "adjacent"
    assert list(tests["adjacent"]) == res["adjacent"] and tests["n_family"] == 2
    clustered = [t["clustered_mcnemar_p"] for t in tests["adjacent"].values()]
    assert [t["holm_p"] for t in tests["adjacent"].values()] == pytest.approx(holm(clustered))
    for arrow, t in tests["adjacent"].items():
        # the exact McNemar p is the block's own; the difference is flip up minus flip down
        assert t["exact_mcnemar_p"] == res["mcnemar_p"][arrow]
        assert t["difference"]["value"] == pytest.approx(
            res["flip_up"][arrow]["value"] - res["flip_down"][arrow]["value"]
        )
        assert t["significant_after_holm"] == (t["holm_p"] < 0.05)
        assert t["bootstrap_p"] is not None and t["n_videos"] == 15
    power = res["power"]
    assert power["n_videos"] == 15 and power["items_per_video"] == 2.0
    assert set(power["axes"]) == {"axis"} and set(power["pairs"]) == set(res["adjacent"])
    het = res["heterogeneity"]
    assert het["observed"]["value"] == pytest.approx(res["harmful_rate"]["value"])
    assert het["oracle_headroom"]["observed"] == pytest.approx(res["oracle_headroom"]["value"])
    assert set(het["trajectories"]) == {"increasing", "decreasing", "mixed"}
    assert het["n_null"] == 200 and het["p_value"] is not None
    with_text = res["grid_with_text"]["heterogeneity"]
    assert with_text["observed"]["value"] == pytest.approx(
        res["grid_with_text"]["harmful_rate"]["value"]
    )
    assert list(with_text["budget_effects"]) == res["grid_with_text"]["configs"]


def test_analyze_is_the_same_bit_for_bit_on_rerun() -> None:
    first = analyze(_run(), bootstrap=150, seed=5)
    again = analyze(_run(), bootstrap=150, seed=5)
    assert json.dumps(first, sort_keys=True) == json.dumps(again, sort_keys=True)


def test_requested_pairs_are_a_family_of_their_own() -> None:
    res = analyze(
        _run(), bootstrap=0, test_pairs=[("8f", "32f"), ("32f", "8f")], heterogeneity_draws=0
    )["models"]["m"]
    requested = res["paired_tests"]["requested"]
    assert list(requested) == ["8f->32f", "32f->8f"]
    forward, backward = requested.values()
    assert forward["difference"]["value"] == pytest.approx(-backward["difference"]["value"])
    assert forward["holm_p"] == pytest.approx(min(1.0, 2 * forward["clustered_mcnemar_p"]))
    assert res["heterogeneity"]["p_value"] is None  # no resamples: no null distribution
    with pytest.raises(UnknownConfigError, match="the run's configurations: 16f, 32f, 8f"):
        analyze(_run(), bootstrap=0, test_pairs=[("8f", "64f")])


def test_the_json_tests_are_those_of_the_functions() -> None:
    df = normalise_responses(_run())
    (m,) = [x for x in build_matrices(df) if x.kind == "binary"]
    res = analyze_responses(df, bootstrap=0).to_json()["models"]["m"]["paired_tests"]["adjacent"]
    direct = paired_tests(m.y, m.video_ids, m.budget_order.adjacent, list(m.labels))
    assert [res[t.pair]["clustered_mcnemar_p"] for t in direct] == [t.clustered_p for t in direct]


def test_more_budgets_than_the_test_enumerates_are_skipped_with_the_reason() -> None:
    labels = [f"{k + 1}f" for k in range(MAX_BUDGETS + 1)]
    rng = np.random.default_rng(0)
    matrix = {f"q{i}": list(rng.integers(0, 2, len(labels)).astype(float)) for i in range(6)}
    res = analyze(table(matrix, labels=labels), bootstrap=0)["models"]["m"]
    assert "up to K = 12" in res["heterogeneity"]["skipped"]
    assert res["paired_tests"]["n_family"] == MAX_BUDGETS


def _two_phases(with_repeat: bool = False) -> pd.DataFrame:
    lin = {"i1": [1, 1, 1], "i2": [0, 1, 0], "i3": [0, 0, 1], "i4": [1, 0, 1]}
    lin_answers = {
        "i1": ["A"] * 3,
        "i2": ["B", "A", "C"],
        "i3": ["C", "B", "A"],
        "i4": ["A", "D", "A"],
    }
    ctr = {"i1": [1, 1, 1], "i2": [0, 1, 0], "i3": [0, 1, 1], "i4": [0, 0, 1]}
    ctr_answers = {
        "i1": ["A"] * 3,
        "i2": ["C", "A", "C"],
        "i3": ["C", "A", "A"],
        "i4": ["B", "D", "A"],
    }
    videos = {"i1": "v1", "i2": "v1", "i3": "v2", "i4": "v3"}
    parts = [
        table(lin, answers=lin_answers, videos=videos, series="linspace/cached"),
        table(
            ctr,
            answers=ctr_answers,
            videos=videos,
            series="centre/cached",
            labels=["8f/centre", "16f/centre", "32f/centre"],
        ),
    ]
    if with_repeat:  # linspace again: i2 answers differently at 8f
        again = dict(lin, i2=[1, 1, 0])
        parts.append(
            table(again, answers=lin_answers, videos=videos, series="linspace/cached", repeat=1)
        )
    return pd.concat(parts, ignore_index=True)


def test_churn_between_two_phases_by_hand() -> None:
    res = analyze(_two_phases(), bootstrap=0)["models"]["m"]
    (key,) = res["churn"]
    first = key.removeprefix("series:").split("|")[0]
    churn = res["churn"][key]
    assert churn["n_common_items"] == 4 and churn["n_videos"] == 3
    sign = 1.0 if first == "linspace/cached" else -1.0  # differences are second minus first
    at8 = churn["budgets"]["8f"]
    assert {at8["config_p"], at8["config_q"]} == {"8f", "8f/centre"}  # named by what they share
    # 8f: answers B->C (i2) and A->B (i4) change; accuracy 2/4 -> 1/4; i4 right then wrong
    assert at8["answer_change"]["value"] == pytest.approx(0.5)
    assert at8["accuracy_difference"]["value"] == pytest.approx(sign * -0.25)
    assert (at8["flip_down"] if sign > 0 else at8["flip_up"])["value"] == pytest.approx(0.25)
    at16 = churn["budgets"]["16f"]
    # 16f: i3 B->A changes and becomes right; accuracy the same otherwise
    assert at16["answer_change"]["value"] == pytest.approx(0.25)
    assert at16["accuracy_difference"]["value"] == pytest.approx(sign * 0.25)
    at32 = churn["budgets"]["32f"]
    assert at32["answer_change"]["value"] == 0.0
    assert "noise_floor_p" not in at8 and "noise_floor_q" not in at8


def test_churn_shows_the_noise_floor_of_a_series_with_repeats() -> None:
    res = analyze(_two_phases(with_repeat=True), bootstrap=100)["models"]["m"]
    (churn,) = res["churn"].values()
    budgets = list(churn["budgets"].values())
    side = "noise_floor_p" if "noise_floor_p" in budgets[0] else "noise_floor_q"
    # linspace's two repeats disagree on 1 of 4 items at 8f, on none at 16f and 32f
    assert [b[side]["value"] for b in budgets] == pytest.approx([0.25, 0.0, 0.0])
    assert budgets[0]["answer_change"]["ci"] is not None
