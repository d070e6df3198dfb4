"""Small response tables that between them reach every block of `analyze --json`: multiple
choice and open-ended series, the text-only answer (`grid_with_text`), a frames x resolution
grid (`chains`), repeats (`noise`), several series of one model (`other_series`, `membership`,
`churn` with a selector's record), intervention re-runs, `--by` groups, open-ended tasks,
scoring rules and their warnings, `--configs` with a model left out, requested test pairs, and
too few videos (`small_sample`). The typed-result tests read each through the models.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from _support.runs import make_grid_run, make_mixed_run, make_run
from _support.tables import table
from itemscale.core.responses import normalise_responses, read_run

#: resamples for every scenario: enough for intervals and tests, few enough to be quick
N_BOOT = 20


def _matrix(n: int, seed: int, k: int = 3) -> dict[str, list[float]]:
    rng = np.random.default_rng(seed)
    return {f"q{i}": [float(rng.random() < 0.3 + 0.2 * j) for j in range(k)] for i in range(n)}


def _answers(matrix: dict[str, list[float]]) -> dict[str, list[str]]:
    return {
        item: ["A" if y else "BC"[i % 2] for i, y in enumerate(ys)] for item, ys in matrix.items()
    }


def _videos(matrix: dict[str, list[float]], per: int = 2) -> dict[str, str]:
    return {item: f"v{i // per}" for i, item in enumerate(matrix)}


def repeats_and_groups() -> tuple[pd.DataFrame, dict[str, Any]]:
    """Two repeats of one series with a text-only answer and an item attribute for `--by`."""
    frames = []
    for repeat in (0, 1):
        matrix = _matrix(24, seed=repeat)
        text = {
            item: (float(i % 3 == 0), "A" if i % 3 == 0 else "B") for i, item in enumerate(matrix)
        }
        df = table(
            matrix, answers=_answers(matrix), videos=_videos(matrix), text=text, repeat=repeat
        )
        frames.append(df)
    df = pd.concat(frames, ignore_index=True)
    df["attributes"] = [
        json.dumps({"duration": "short" if int(i[1:]) % 2 else "long"}) if i != "q0" else None
        for i in df["item_id"]
    ]
    return df, {"by": ["duration"], "test_pairs": [("8f", "32f")]}


def series_selector_interventions() -> tuple[pd.DataFrame, dict[str, Any]]:
    """Uniform sampling, a selector's series at shared budgets, a second formula series, an
    intervention's re-runs, and scoring rules that differ between series and models."""
    uniform = _matrix(24, seed=3)
    selector = _matrix(24, seed=4, k=2)
    centre = _matrix(24, seed=5)
    videos = _videos(uniform, per=3)
    parts = [
        table(uniform, answers=_answers(uniform), videos=videos, series="linspace"),
        table(
            selector,
            answers=_answers(selector),
            videos=videos,
            series="selection:aks",
            labels=["8f/aks", "16f/aks"],
        ),
        table(
            centre,
            answers=_answers(centre),
            videos=videos,
            series="centre",
            labels=["8f/c", "16f/c", "32f/c"],
        ),
        table(
            {k: v[2:] for k, v in list(uniform.items())[:6]},
            videos=videos,
            series="intervention:crop",
            labels=["32f/crop"],
        ),
    ]
    for matrix, series, labels in (
        (uniform, "linspace", None),
        (centre, "centre", ["8f/c", "16f/c", "32f/c"]),
    ):
        again = {
            k: [1.0 - y if i % 5 == 0 else y for y in ys]
            for i, (k, ys) in enumerate(matrix.items())
        }
        parts.append(
            table(
                again,
                videos=videos,
                series=series,
                repeat=1,
                **({"labels": labels} if labels else {}),
            )
        )
    parts[0]["scoring_rule"] = "letter"
    parts[2]["scoring_rule"] = "likelihood"
    parts[4]["scoring_rule"] = "letter"
    parts[5]["scoring_rule"] = "likelihood"
    other = table(uniform, model="n", videos=videos, series="linspace")
    other["scoring_rule"] = "likelihood"
    parts.append(other)
    return pd.concat(parts, ignore_index=True), {}


def open_ended_tasks() -> tuple[pd.DataFrame, dict[str, Any]]:
    """Open-ended items of two tasks with a text-only score, beside multiple-choice items."""
    scores = {f"o{i}": [0.2 + 0.1 * ((i + j) % 4) for j in range(3)] for i in range(12)}
    text = {item: (0.5 if i % 2 else 0.1, "t") for i, item in enumerate(scores)}
    open_ = table(scores, videos=_videos(scores), text=text, kind="open_qa")
    open_["attributes"] = [
        json.dumps({"task_type": "summary" if int(i[1:]) % 2 else "subPlot"})
        for i in open_["item_id"]
    ]
    mcqa = _matrix(12, seed=7)
    return pd.concat(
        [open_, table(mcqa, answers=_answers(mcqa), videos=_videos(mcqa))], ignore_index=True
    ), {}


def configs_restricted() -> tuple[pd.DataFrame, dict[str, Any]]:
    """`--configs` on two models, one of which lacks a listed configuration."""
    full = _matrix(20, seed=8)
    short = {k: v[:2] for k, v in _matrix(20, seed=9).items()}
    df = pd.concat(
        [
            table(full, answers=_answers(full), videos=_videos(full)),
            table(
                short,
                answers=_answers(short),
                videos=_videos(short),
                model="short",
                labels=["8f", "16f"],
            ),
        ],
        ignore_index=True,
    )
    return df, {"configs": ["8f", "32f"], "ci": "percentile"}


def same_input_and_open_ended() -> tuple[pd.DataFrame, dict[str, Any]]:
    """A model whose two smallest budgets answer 60 items identically (`effective_budget`), and
    a model with open-ended items only (its entry has no binary keys)."""
    matrix = {f"q{i}": [float(i % 3 == 0), float(i % 3 == 0), float(i % 2 == 0)] for i in range(60)}
    answers = {item: [("A" if y else "B") for y in ys] for item, ys in matrix.items()}
    scores = {f"o{i}": [0.1 * (i % 5), 0.2 + 0.1 * (i % 3), 0.5] for i in range(12)}
    df = pd.concat(
        [
            table(matrix, answers=answers, videos=_videos(matrix, per=4), model="same"),
            table(scores, videos=_videos(scores), model="open", kind="open_qa"),
        ],
        ignore_index=True,
    )
    return df, {"eps": 0.15}


def _from_run(maker: Callable[[Path], object], tmp: Path) -> pd.DataFrame:
    run = tmp / "run"
    maker(run)
    df, _ = read_run(run, slim=True)
    return df


def scenarios(tmp: Path) -> Iterator[tuple[str, pd.DataFrame, dict[str, Any]]]:
    """(name, response table, `analyze_responses` keywords) of every scenario; `tmp` is an
    empty folder the run-directory scenarios write into."""
    (tmp / "two").mkdir()
    df, _ = make_run(tmp / "two" / "run", n_items=24, models=("a", "b"), with_audit=False)
    yield "two models, text-only", df, {}
    (tmp / "few").mkdir()
    df, _ = make_run(tmp / "few" / "run", n_items=2, models=("m",), with_audit=False)
    yield "one video", df, {}
    (tmp / "mixed").mkdir()
    yield "mixed", _from_run(make_mixed_run, tmp / "mixed"), {"heterogeneity_draws": 10}
    (tmp / "grid").mkdir()
    grid = _from_run(lambda run: make_grid_run(run, n_items=16), tmp / "grid")
    yield "grid", grid, {}
    yield "grid, one chain", grid, {"axis": "frames@112"}
    for name, build in (
        ("repeats and groups", repeats_and_groups),
        ("series, selector, interventions", series_selector_interventions),
        ("open-ended tasks", open_ended_tasks),
        ("configs", configs_restricted),
        ("same input, open-ended only", same_input_and_open_ended),
    ):
        df, kwargs = build()
        yield name, normalise_responses(df), kwargs
