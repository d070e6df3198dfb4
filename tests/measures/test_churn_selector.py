"""The churn block's selector record: a frame selector's series against uniform sampling at each
shared budget, computed by hand on six items (fixed, broken, the oracle headroom it takes)."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy.stats import chi2

from _support.tables import table
from itemscale.analysis.measures import analyze_responses
from itemscale.core.responses import normalise_responses

UNIFORM = {
    "i1": [1, 1, 1],
    "i2": [0, 0, 0],  # wrong at every uniform budget
    "i3": [0, 0, 0],  # wrong at every uniform budget
    "i4": [1, 0, 1],
    "i5": [0, 1, 0],
    "i6": [0, 0, 0],  # wrong at every uniform budget
}
SELECTOR = {
    "i1": [1, 0],
    "i2": [1, 1],
    "i3": [0, 1],
    "i4": [0, 0],
    "i5": [1, 1],
    "i6": [0, 0],
}
VIDEOS = {"i1": "v1", "i2": "v1", "i3": "v2", "i4": "v3", "i5": "v4", "i6": "v4"}


def _answers(matrix: dict[str, list[int]]) -> dict[str, list[str]]:
    return {item: ["A" if y else "B" for y in ys] for item, ys in matrix.items()}


def _selector_block(
    uniform: dict,
    selector: dict,
    videos: dict,
    bootstrap: int = 0,
    rerun_floor: float | None = None,
) -> dict:
    df = pd.concat(
        [
            table(uniform, answers=_answers(uniform), videos=videos, series="linspace/cached"),
            table(
                selector,
                answers=_answers(selector),
                videos=videos,
                series="selection:s/cached",
                labels=["8f/selection:s", "16f/selection:s"],
            ),
        ],
        ignore_index=True,
    )
    res = analyze_responses(
        normalise_responses(df), bootstrap=bootstrap, rerun_floor=rerun_floor
    ).to_json()["models"]["m"]
    (churn,) = res["churn"].values()
    return churn


def test_the_selector_against_uniform_by_hand() -> None:
    churn = _selector_block(UNIFORM, SELECTOR, VIDEOS)
    assert set(churn["budgets"]) == {"8f", "16f"}  # 32f: the selector has none
    at8 = churn["budgets"]["8f"]["selector"]
    assert at8["selector_series"] == "selection:s/cached"
    assert at8["uniform_series"] == "linspace/cached"
    assert at8["accuracy_selector"]["value"] == pytest.approx(3 / 6)
    assert at8["accuracy_uniform"]["value"] == pytest.approx(2 / 6)
    assert at8["accuracy_difference"]["value"] == pytest.approx(1 / 6)
    assert (at8["n_fixed"], at8["n_broken"]) == (2, 1)  # i2, i5 fixed; i4 broken
    # per-video (fixed - broken): v1 +1, v2 0, v3 -1, v4 +1 -> X^2 = 1^2 / 3
    assert at8["clustered_mcnemar_p"] == pytest.approx(float(chi2.sf(1 / 3, 1)))
    assert (at8["n_uniform_wrong_everywhere"], at8["n_headroom_fixed"]) == (3, 1)
    assert at8["headroom_share"]["value"] == pytest.approx(1 / 3)
    assert at8["same_input"] is None
    at16 = churn["budgets"]["16f"]["selector"]
    assert (at16["n_fixed"], at16["n_broken"]) == (2, 1)  # i2, i3 fixed; i1 broken
    assert (at16["n_headroom_fixed"], at16["headroom_share"]["value"]) == (2, pytest.approx(2 / 3))


def test_a_selection_that_changed_nothing_is_flagged() -> None:
    """Sixty items answered identically by both series: the shared same-input rule says the
    selection looks like uniform's input."""
    uniform = {f"i{i}": [i % 2, (i // 2) % 2] for i in range(60)}
    videos = {f"i{i}": f"v{i // 3}" for i in range(60)}
    selector = {item: list(ys) for item, ys in uniform.items()}
    churn = _selector_block(uniform, selector, videos)
    for budget in ("8f", "16f"):
        v = churn["budgets"][budget]["selector"]
        assert (v["n_fixed"], v["n_broken"]) == (0, 0)
        assert v["same_input"]["basis"] == "identical_answers"
        assert v["same_input"]["identical"] == 60
    # one changed answer of 60: without a rerun floor it is no longer one input; at a stated
    # floor of 0.26% (bound 1 at 60) it is, graded as within a rerun; a second one and the
    # flag goes
    selector["i0"] = [1, 0]
    churn = _selector_block(uniform, selector, videos)
    assert churn["budgets"]["8f"]["selector"]["same_input"] is None
    churn = _selector_block(uniform, selector, videos, rerun_floor=0.26)
    rerun = churn["budgets"]["8f"]["selector"]["same_input"]
    assert rerun["basis"] == "rerun_answers" and rerun["answers"] == "rerun"
    assert (rerun["differ"], rerun["answered"], rerun["rerun_bound"]) == (1, 60, 1)
    assert rerun["floor"]["stated"] is True
    selector["i1"] = [0, 0]
    churn = _selector_block(uniform, selector, videos, rerun_floor=0.26)
    assert churn["budgets"]["8f"]["selector"]["same_input"] is None


def test_two_formula_series_have_no_selector_record() -> None:
    df = pd.concat(
        [
            table(UNIFORM, answers=_answers(UNIFORM), videos=VIDEOS, series="linspace/cached"),
            table(
                UNIFORM,
                answers=_answers(UNIFORM),
                videos=VIDEOS,
                series="centre/cached",
                labels=["8f/centre", "16f/centre", "32f/centre"],
            ),
        ],
        ignore_index=True,
    )
    res = analyze_responses(normalise_responses(df), bootstrap=0).to_json()["models"]["m"]
    (churn,) = res["churn"].values()
    assert all("selector" not in b for b in churn["budgets"].values())


def _adaptive_block(used: dict[str, int]) -> dict:
    """The selector at a cap of 16 frames (`<=16f`), each item's cell having used `used`
    frames, against uniform sampling at 8, 16 and 32 frames (which records no count)."""
    chosen = {item: [ys[1]] for item, ys in SELECTOR.items()}
    sel = table(
        chosen,
        answers=_answers(chosen),
        videos=VIDEOS,
        series="selection:s/cached",
        labels=["<=16f/selection:s"],
    )
    sel["frames"] = 16
    sel["axis_order"] = 1.0
    sel["effective_frames"] = sel["item_id"].map(used)
    uniform = table(UNIFORM, answers=_answers(UNIFORM), videos=VIDEOS, series="linspace/cached")
    df = pd.concat([uniform, sel], ignore_index=True)
    res = analyze_responses(normalise_responses(df), bootstrap=0).to_json()["models"]["m"]
    (churn,) = res["churn"].values()
    assert set(churn["budgets"]) == {"16f"}  # the cap's place on the axis: 16 frames
    return churn["budgets"]["16f"]["selector"]


def test_an_adaptive_selector_is_charged_the_frames_it_used() -> None:
    at16 = _adaptive_block({"i1": 8, "i2": 16, "i3": 12, "i4": 12, "i5": 8, "i6": 16})
    assert at16["frames_cap"] == 16
    assert at16["frames_used_mean"] == pytest.approx(12.0)
    assert (at16["frames_used_min"], at16["frames_used_max"]) == (8, 16)
    assert at16["uniform_frames_used_mean"] == pytest.approx(16.0)
    assert at16["accuracy_selector"]["value"] == pytest.approx(3 / 6)
    # 12 frames lies halfway between uniform's 8 (right on i1, i4) and 16 (right on i1, i5):
    # per item 0.5 * y8 + 0.5 * y16 = 1, 0, 0, .5, .5, 0 -> 2/6
    matched = at16["matched_cost"]
    assert (matched["uniform_below"], matched["uniform_above"]) == ("8f", "16f")
    assert matched["weight_above"] == pytest.approx(0.5) and matched["nearest"] is False
    assert matched["accuracy_uniform"]["value"] == pytest.approx(2 / 6)
    assert matched["accuracy_difference"]["value"] == pytest.approx(3 / 6 - 2 / 6)


def test_a_mean_below_the_uniform_grid_takes_the_nearest_budget() -> None:
    at16 = _adaptive_block(dict.fromkeys(SELECTOR, 4))
    matched = at16["matched_cost"]
    assert matched["nearest"] is True and matched["frames"] == pytest.approx(4.0)
    assert matched["uniform_below"] == matched["uniform_above"] == "8f"
    assert matched["accuracy_uniform"]["value"] == pytest.approx(2 / 6)  # uniform at 8 frames
