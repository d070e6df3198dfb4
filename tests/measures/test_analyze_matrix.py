"""`analyze` over the combinations a run can have: interval method x repeats x grid shape x
text-only baseline, and a property test that no valid response table makes it raise (issue 23:
repeats under BCa on a frames x pixels grid crashed with an IndexError from a NaN quantile)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from itemscale.analysis.measures import CI_METHODS, analyze_responses
from itemscale.core.responses import normalise_responses

#: (label, frames, pixels per frame): one axis, frames x pixels (two chains each way), and an
#: allocation axis (more frames at fewer pixels each).
GRIDS: dict[str, list[tuple[str, int, int]]] = {
    "frames": [("2f", 2, 3136), ("4f", 4, 3136), ("8f", 8, 3136)],
    "frames x pixels": [(f"{f}f@{s}", f, s * s) for f in (2, 4, 8) for s in (56, 112)],
    "allocation": [("2f@tok", 2, 12544), ("4f@tok", 4, 6272), ("8f@tok", 8, 3136)],
}


def _table(
    grid: list[tuple[str, int, int]],
    correct: np.ndarray,
    *,
    videos: list[str],
    text: np.ndarray | None = None,
    status: np.ndarray | None = None,
) -> pd.DataFrame:
    """Rows for correct[item, config, repeat] (and text[item, repeat] at frames 0)."""
    n_items, _, n_repeats = correct.shape
    rows: list[dict[str, Any]] = []
    ordered = sorted(grid, key=lambda g: (g[1], g[2]))
    for i in range(n_items):
        for r in range(n_repeats):
            for k, (label, frames, pixels) in enumerate(grid):
                failed = status is not None and bool(status[i, k, r])
                rows.append(
                    {
                        "model": "m",
                        "item_id": f"q{i}",
                        "video_id": videos[i],
                        "task_kind": "mcqa",
                        "series": "linspace/cached",
                        "config_id": label,
                        "config_label": label,
                        "axis_order": float(ordered.index((label, frames, pixels)) + 1),
                        "frames": frames,
                        "pixels": pixels,
                        "repeat": r,
                        "status": "model_error" if failed else "ok",
                        "correct": None if failed else float(correct[i, k, r]),
                    }
                )
            if text is not None:
                rows.append(
                    {
                        "model": "m",
                        "item_id": f"q{i}",
                        "video_id": videos[i],
                        "task_kind": "mcqa",
                        "series": "text-only",
                        "config_id": "text",
                        "config_label": "text-only",
                        "axis_order": 0.0,
                        "frames": 0,
                        "repeat": r,
                        "status": "ok",
                        "correct": float(text[i, r]),
                    }
                )
    return normalise_responses(pd.DataFrame(rows))


def _stats(value: Any) -> list[dict[str, Any]]:
    """Every {"value", "ci"} statistic in an analyze result."""
    found: list[dict[str, Any]] = []
    if isinstance(value, dict):
        if set(value) == {"value", "ci"}:
            return [value]
        for inner in value.values():
            found += _stats(inner)
    elif isinstance(value, list):
        for inner in value:
            found += _stats(inner)
    return found


def _check_intervals(result: dict[str, Any]) -> int:
    stats = _stats(result)
    for s in stats:
        if s["ci"] is not None:
            low, high = s["ci"]
            assert math.isfinite(low) and math.isfinite(high) and low <= high + 1e-12, s
    return len(stats)


@pytest.mark.parametrize("ci", CI_METHODS)
@pytest.mark.parametrize("repeats", [1, 2, 3])
@pytest.mark.parametrize("grid", list(GRIDS))
@pytest.mark.parametrize("with_text", [False, True])
def test_every_interval_method_repeats_and_grid_shape(
    ci: str, repeats: int, grid: str, with_text: bool
) -> None:
    rng = np.random.default_rng(repeats * 7 + len(grid))
    configs = GRIDS[grid]
    n_items = 12
    correct = rng.integers(0, 2, size=(n_items, len(configs), repeats))
    text = rng.integers(0, 2, size=(n_items, repeats)) if with_text else None
    videos = [f"v{i // 2}" for i in range(n_items)]
    df = _table(configs, correct, videos=videos, text=text)
    result = analyze_responses(df, bootstrap=200, seed=1, ci=ci).to_json()
    block = result["models"]["m"]
    assert block["n_items"] == n_items
    assert _check_intervals(result) > 10
    accuracy = block["accuracy"]
    for k, (label, _, _) in enumerate(configs):
        assert accuracy[label]["value"] == pytest.approx(correct[:, k, 0].mean())
    if repeats > 1:
        assert block["n_repeats"] == repeats
        mean = block["repeat_mean_accuracy"]
        for k, (label, _, _) in enumerate(configs):
            assert mean[label]["value"] == pytest.approx(correct[:, k, :].mean())
        multi = block["order"]["multi_axis"]
        assert (block["expected_harmful_rate"]["value"] is None) == multi
        if multi:  # read per chain: each chain has its own, defined value
            chains = block["chains"]
            assert chains and all(
                c["expected_harmful_rate"]["value"] is not None for c in chains.values()
            )
    else:
        assert "n_repeats" not in block


def test_the_reported_case_repeats_2_under_bca_on_frames_x_short_side() -> None:
    """repeats = 2, seeds [5, 6], frames [2, 4, 8] x short_side [56, 112], BCa: it raised
    `IndexError: index -9223372036854775808` from expected_harmful_rate's NaN quantile."""
    rng = np.random.default_rng(0)
    configs = GRIDS["frames x pixels"]
    correct = rng.integers(0, 2, size=(16, len(configs), 2))
    df = _table(configs, correct, videos=[f"v{i // 2}" for i in range(16)])
    result = analyze_responses(df, bootstrap=300, seed=0, ci="bca").to_json()
    block = result["models"]["m"]
    assert block["expected_harmful_rate"] == {"value": None, "ci": None}
    assert block["item_rate_harmful_rate"]["ci"] is not None


@st.composite
def response_tables(draw: st.DrawFn) -> pd.DataFrame:
    grid = GRIDS[draw(st.sampled_from(sorted(GRIDS)))]
    k = draw(st.integers(1, len(grid)))
    configs = grid[:k]
    n_items = draw(st.integers(1, 8))
    repeats = draw(st.integers(1, 3))
    correct = np.array(
        draw(
            st.lists(
                st.integers(0, 1), min_size=n_items * k * repeats, max_size=n_items * k * repeats
            )
        )
    ).reshape(n_items, k, repeats)
    # ties: every item the same; empty blocks: every cell of a configuration failed
    if draw(st.booleans()):
        correct[:] = correct[:1]
    status = np.zeros_like(correct, dtype=bool)
    if draw(st.booleans()):
        status[:, draw(st.integers(0, k - 1)), :] = True
    if draw(st.booleans()):
        status[draw(st.integers(0, n_items - 1)), :, 0] = True
    n_videos = draw(st.integers(1, n_items))
    videos = [f"v{i % n_videos}" for i in range(n_items)]
    text = (
        np.array(
            draw(
                st.lists(st.integers(0, 1), min_size=n_items * repeats, max_size=n_items * repeats)
            )
        ).reshape(n_items, repeats)
        if draw(st.booleans())
        else None
    )
    return _table(configs, correct, videos=videos, text=text, status=status)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(df=response_tables(), ci=st.sampled_from(CI_METHODS), bootstrap=st.sampled_from([0, 1, 30]))
def test_analyze_never_raises_on_a_valid_table(df: pd.DataFrame, ci: str, bootstrap: int) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # "Mean of empty slice" came first
        result = analyze_responses(df, bootstrap=bootstrap, seed=3, ci=ci).to_json()
    _check_intervals(result)
    block = result["models"]["m"]
    assert block["n_items"] + block["n_dropped"] == df["item_id"].nunique()
