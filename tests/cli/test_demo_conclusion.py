"""The demo ends with its finding in words, every number read from what it computed (not a
raw JSON blob)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from _support.runs import make_run
from itemscale.analysis.measures import (
    BinarySeries,
    ComparisonRecord,
    Estimate,
    Heterogeneity,
    HeterogeneitySkipped,
    SmallSample,
    analyze_responses,
)
from itemscale.analysis.policies import (
    BestMatch,
    CascadeReport,
    CascadeSettings,
    InterventionResult,
    cascade_report,
)
from itemscale.cli.cmd_demo import demo_conclusion


def _intervention(recovered: int, of: int, broken: int, controls: int) -> InterventionResult:
    def group(answered: int, changed: int) -> dict[str, object]:
        return {
            "n_planned": answered, "n_answered": answered, "n_changed": changed, "n_failed": 0,
            "failed_by_status": {}, "n_missing": 0, "reference_frames_kept": None,
            "reference_frames_kept_before": None, "terminal_frames_changed": None,
        }  # fmt: skip

    return InterventionResult.model_validate(
        {
            "model": "m", "source_series": "default", "policy": "nested", "description": "",
            "series": "intervention:nested", "configs": {}, "config_series": {},
            "terminal_label": "32f", "seed": 0, "n_items": 60, "n_regressions": of,
            "n_terminal_right": 30, "intervals": {}, "net_accuracy_change_note": "",
            "recovered_rate": {"value": recovered / of, "ci": None},
            "broken_rate": {"value": broken / controls, "ci": None},
            "net_accuracy_change_estimate": {"value": -0.09, "ci": [-0.265, 0.045]},
            "regressions": group(of, recovered), "controls": group(controls, broken),
            "bootstrap": {"bootstrap": 0, "seed": 0}, "items": [],
        }
    )  # fmt: skip


def _cascade(df: object, best: BestMatch | None) -> CascadeReport:
    """The run's own cascade, its first block's cost model and best match set as given."""
    report = cascade_report(df, CascadeSettings(bootstrap=0))  # type: ignore[arg-type]
    block = report.results[0]
    cost = block.cost.model_copy(update={"sharing": "union"})
    block = block.model_copy(update={"cost": cost, "best_match": best})
    return report.model_copy(update={"results": (block,)})


def test_the_conclusion_says_what_the_numbers_say(tmp_path: Path) -> None:
    df, _ = make_run(tmp_path / "run", models=("m",), with_audit=False)
    measures = analyze_responses(df, bootstrap=20, seed=0)
    block = measures.models["m"]
    assert isinstance(block, BinarySeries)
    n = block.n_items
    assert block.harmful_rate.value is not None
    assert block.terminal_regression_rate.value is not None
    harmful = round(block.harmful_rate.value * n)
    terminal = round(block.terminal_regression_rate.value * n)
    cascade = _cascade(df, None)
    text = " ".join(
        demo_conclusion(
            measures,
            _intervention(4, 15, 3, 15),
            cascade,
            {"reproduced": 53, "published": 54},
        ).split()
    )
    first, last = block.axis[0], block.axis[-1]
    low, high = block.accuracy[first].value, block.accuracy[last].value
    assert low is not None and high is not None
    assert text.startswith(
        f"The accuracy curve rises from {100 * low:.1f} at {first} to {100 * high:.1f} at {last}"
    )
    assert f"of the {n} items ({harmful}) are right at some budget and wrong at a larger" in text
    assert f"and {terminal} end wrong at the largest budget" in text
    assert "4 of 15 terminal regressions recover and 3 of 15 items that were right break" in text
    assert "most regressions are not sampling accidents" in text  # 4 of 15 is under half
    assert "No stopping policy both matches the terminal budget and saves frames (union" in text
    assert "53 of 54 published numbers are reproduced" in text
    # a saving that matches the terminal is named with its numbers
    stat = Estimate(value=0.5, ci=None)
    best = BestMatch(
        policy="learned",
        accuracy=stat,
        accuracy_change=Estimate(value=0.0, ci=None),
        cost_reduction=stat,
        mean_cost=stat,
    )
    cascade = _cascade(df, best)
    text = " ".join(demo_conclusion(measures, _intervention(9, 15, 1, 15), cascade, {}).split())
    assert "The best stopping policy (learned) saves 50.0% of the terminal's frames" in text
    assert "not sampling accidents" not in text and "published" not in text


def _het(
    obs: float, add: float, ci: list[float], dec: tuple[float, float, list[float]]
) -> SimpleNamespace:
    """A block holding only the additive-model test's estimates the sentence reads."""

    def s(v: float, c: list[float] | None = None) -> Estimate:
        return Estimate(v, *(c or (None, None)))

    def comparison(o: float, a: float, c: list[float]) -> ComparisonRecord:
        return ComparisonRecord(observed=s(o), additive=s(a), difference=s(o - a, c), p_value=None)

    test = Heterogeneity.model_construct(
        observed=s(obs),
        additive=s(add),
        difference=s(obs - add, ci),
        trajectories={"decreasing": comparison(*dec)},
    )
    return SimpleNamespace(heterogeneity=test, small_sample=None)


def test_the_headline_sets_the_harmful_rate_beside_the_additive_world() -> None:
    from itemscale.analysis.measures import additive_sentence

    fewer = additive_sentence(_het(0.425, 0.665, [-0.3, -0.1], (0.05, 0.02, [0.01, 0.05])))
    assert fewer is not None
    assert "gives 66.5% against the observed 42.5%" in fewer
    assert "fewer flips than chance" in fewer and "no evidence" in fewer
    assert "5.0% against 2.0% additive (more than chance: these are the items to audit)" in fewer
    tie = additive_sentence(_het(0.30, 0.31, [-0.05, 0.03], (0.02, 0.02, [-0.01, 0.01])))
    assert tie is not None and "no more than chance" in tie and "(within chance)" in tie
    more = additive_sentence(_het(0.40, 0.20, [0.1, 0.3], (0.1, 0.02, [0.05, 0.1])))
    assert more is not None and "some items are hurt by a larger budget itself" in more
    skipped = HeterogeneitySkipped(skipped="needs two budgets")
    assert additive_sentence(SimpleNamespace(heterogeneity=skipped)) is None
    assert additive_sentence(SimpleNamespace(heterogeneity=None)) is None
    small = _het(0.40, 0.20, [0.1, 0.3], (0.1, 0.02, [0.05, 0.1]))
    small.small_sample = SmallSample(n_videos=3, min_videos=10, not_estimable={})
    assert additive_sentence(small) is None


def test_the_demo_conclusion_reconciles_the_harmful_rate(tmp_path: Path) -> None:
    df, _ = make_run(tmp_path / "run", models=("m",), with_audit=False)
    measures = analyze_responses(df, bootstrap=20, seed=0)
    block = measures.models["m"]
    assert isinstance(block, BinarySeries) and isinstance(block.heterogeneity, Heterogeneity)
    text = " ".join(demo_conclusion(measures, _intervention(1, 2, 0, 2), None, {}).split())
    add = block.heterogeneity.additive.value
    assert add is not None
    assert "An additive world with the same margins" in text
    assert f"gives {100 * add:.1f}% against the observed" in text
