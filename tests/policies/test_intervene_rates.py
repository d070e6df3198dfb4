"""The sampling intervention's pure part: which items are re-run, with which configuration, and
the recovered and broken rates computed from a hand-written response table."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from itemscale.analysis.measures import build_matrices
from itemscale.analysis.policies import (
    InterventionError,
    InterventionPlan,
    intervention_configuration,
    intervention_outcomes,
    plan_intervention,
)
from itemscale.collect.protocol import Configuration, SamplingPolicy
from itemscale.core.responses import NOANSWER, normalise_responses

LABELS = ("2f", "4f", "8f")
FRAMES = (2, 4, 8)
INDICES = {2: [0, 35], 4: [0, 20, 40, 60], 8: [0, 10, 20, 30, 40, 50, 60, 70]}
# correctness at 2f, 4f, 8f
PATTERNS = {
    "i0": (1, 0, 0),  # regression, right at 2f
    "i1": (1, 1, 0),  # regression, largest right budget 4f
    "i2": (0, 1, 0),  # regression
    "i3": (0, 0, 0),  # wrong everywhere: not a regression
    "i4": (1, 1, 1),  # right at the terminal: control candidates from here on
    "i5": (0, 0, 1),
    "i6": (1, 0, 1),
    "i7": (0, 1, 1),
}
TERMINAL = Configuration(frames=8)


def _row(item: str, frames: int, right: float, **extra: object) -> dict[str, object]:
    config = Configuration(frames=frames)
    row: dict[str, object] = {
        "model": "m",
        "item_id": item,
        "video_id": f"v{item[1:]}",
        "task_kind": "mcqa",
        "series": config.series,
        "config_id": config.config_id,
        "config_label": config.label,
        "axis_order": config.axis_order,
        "frames": frames,
        "repeat": 0,
        "status": "ok",
        "answer": "A" if right else "B",
        "correct": right,
        "frame_indices": np.asarray(INDICES[frames]),
    }
    row.update(extra)
    return row


def _grid() -> pd.DataFrame:
    rows = [
        _row(item, f, float(y))
        for item, pattern in PATTERNS.items()
        for f, y in zip(FRAMES, pattern, strict=True)
    ]
    return normalise_responses(pd.DataFrame(rows))


def _plan(seed: int = 0, n_control: int | None = None, policy: str = "nested") -> InterventionPlan:
    (matrix,) = build_matrices(_grid())
    return plan_intervention(
        matrix,
        intervention=policy,  # type: ignore[arg-type]
        terminal=TERMINAL,
        seed=seed,
        n_control=n_control,
    )


def _random_grid(n_items: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for i in range(n_items):
        pattern = rng.integers(0, 2, size=3)
        rows += [_row(f"i{i}", f, float(y)) for f, y in zip(FRAMES, pattern, strict=True)]
    return normalise_responses(pd.DataFrame(rows))


@pytest.mark.parametrize(
    ("seed", "controls"),
    [
        (1, ["i11", "i17", "i24", "i26", "i28", "i31", "i42", "i5", "i50", "i57"]),
        (7, ["i11", "i22", "i26", "i36", "i4", "i46", "i5", "i53", "i55", "i57"]),
    ],
)
def test_the_control_sample_of_a_seed_is_pinned(seed: int, controls: list[str]) -> None:
    # golden values from commit 237dd1c (before plan_intervention took one source of
    # randomness): a plan.json written then is the plan a rerun with its seed draws again
    (matrix,) = build_matrices(_random_grid())
    plan = plan_intervention(
        matrix,
        intervention="phase-shift",
        terminal=TERMINAL,
        seed=seed,
        n_control=10,
    )
    assert [i.item_id for i in plan.items if i.group == "control"] == controls
    assert plan.seed == seed
    # the generator it took beside the seed until issue 27: the same plan, with a warning
    with pytest.deprecated_call(match=r"plan_intervention\(rng=\.\.\., seed=\.\.\.\)"):
        old = plan_intervention(
            matrix,
            intervention="phase-shift",
            terminal=TERMINAL,
            rng=np.random.default_rng(seed),
            seed=seed,
            n_control=10,
        )
    assert old == plan


def test_plan_takes_every_terminal_regression_with_its_lower_budget() -> None:
    plan = _plan(n_control=4)
    regressions = {i.item_id: i.reference_label for i in plan.items if i.group == "regression"}
    assert regressions == {"i0": "2f", "i1": "4f", "i2": "4f"}
    controls = {i.item_id: i.reference_label for i in plan.items if i.group == "control"}
    # every item right at the terminal; i5 was right nowhere below, so it keeps 4f (K-1)
    assert controls == {"i4": "4f", "i5": "4f", "i6": "2f", "i7": "4f"}
    assert (plan.n_items, plan.n_regressions, plan.n_terminal_right) == (8, 3, 4)
    # one configuration per kept lower budget, each on its own series
    keep = {
        cid: Configuration.model_validate(c).sampling.keep_frames for cid, c in plan.configs.items()
    }
    assert sorted(keep.values()) == [2, 4]
    assert sorted(plan.config_series.values()) == [
        "intervention:nested:keep2",
        "intervention:nested:keep4",
    ]
    by_item = {i.item_id: keep[i.config_id] for i in plan.items}
    assert by_item["i0"] == 2 and by_item["i1"] == 4 and by_item["i6"] == 2


def test_control_sample_is_seeded_and_drawn_from_correct_items() -> None:
    a, b = _plan(seed=5, n_control=2), _plan(seed=5, n_control=2)
    assert a == b
    controls = {i.item_id for i in a.items if i.group == "control"}
    assert len(controls) == 2 and controls <= {"i4", "i5", "i6", "i7"}
    draws = {
        frozenset(i.item_id for i in _plan(seed=s, n_control=2).items if i.group == "control")
        for s in range(12)
    }
    assert len(draws) > 1
    # default: as many controls as regressions; more than there are: all of them
    assert sum(i.group == "control" for i in _plan().items) == 3
    assert sum(i.group == "control" for i in _plan(n_control=50).items) == 4
    # the plan survives a JSON round trip (it is stored beside the results)
    text = json.dumps(a.model_dump(mode="json"))
    assert InterventionPlan.model_validate_json(text) == a


def test_changed_configurations() -> None:
    nested = intervention_configuration(TERMINAL, "nested", keep_frames=4)
    assert nested.frames == 8 and nested.sampling == SamplingPolicy(keep_frames=4)
    assert nested.config_id != TERMINAL.config_id
    shifted = intervention_configuration(
        Configuration(frames=8, short_side=224, sampling=SamplingPolicy(name="centre", phase=0.75)),
        "phase-shift",
    )
    assert shifted.sampling == SamplingPolicy(name="centre", phase=0.25)
    assert shifted.short_side == 224
    with pytest.raises(InterventionError, match="no phase to shift"):
        intervention_configuration(
            Configuration(frames=8, sampling=SamplingPolicy(name="random")), "phase-shift"
        )
    with pytest.raises(InterventionError, match="already samples nested"):
        intervention_configuration(
            Configuration(frames=8, sampling=SamplingPolicy(name="nested")), "nested", keep_frames=2
        )
    with pytest.raises(InterventionError, match="below 8"):
        intervention_configuration(TERMINAL, "nested", keep_frames=8)
    with pytest.raises(InterventionError, match="unknown intervention"):
        intervention_configuration(TERMINAL, "zoom")
    selected = Configuration(frames=8, sampling=SamplingPolicy(name="selection", selection="s"))
    for intervention in ("nested", "phase-shift"):
        with pytest.raises(InterventionError, match="replays a frame selection"):
            intervention_configuration(selected, intervention, keep_frames=4)


def _with_reruns(plan: InterventionPlan) -> pd.DataFrame:
    cfg = {i.item_id: i.config_id for i in plan.items}
    label = {cid: Configuration.model_validate(c).label for cid, c in plan.configs.items()}
    rerun = {
        # regressions: i0 recovered (its new grid keeps 35), i1 still wrong, i2 failed
        "i0": (1.0, "ok", [0, 10, 20, 35, 40, 50, 60, 70]),
        "i1": (0.0, "ok", INDICES[8]),
        "i2": (None, "model_error", None),
        # controls: i4 and i6 stay right, i5 breaks, i7 has no re-run yet
        "i4": (1.0, "ok", INDICES[8]),
        "i5": (0.0, "ok", INDICES[8]),
        "i6": (1.0, "ok", INDICES[8]),
    }
    rows = []
    for item, (right, status, idx) in rerun.items():
        rows.append(
            _row(
                item,
                8,
                0.0,
                series=plan.config_series[cfg[item]],
                config_id=cfg[item],
                config_label=label[cfg[item]],
                status=status,
                correct=right,
                answer=None if right is None else ("A" if right else "B"),
                frame_indices=None if idx is None else np.asarray(idx),
            )
        )
    return normalise_responses(pd.concat([_grid(), pd.DataFrame(rows)], ignore_index=True))


def test_rates_hand_computed() -> None:
    plan = _plan(n_control=4)
    result = intervention_outcomes(_with_reruns(plan), plan, bootstrap=0).as_json()
    # i0 of i0, i1: the count is the rate's own numerator and denominator
    assert result["recovered_rate"] == {"value": 0.5, "ci": None, "count": {"k": 1, "n": 2}}
    assert result["broken_rate"]["value"] == pytest.approx(1 / 3)  # i5 of i4, i5, i6
    assert result["broken_rate"]["count"] == {"k": 1, "n": 3}
    assert result["regressions"]["n_failed"] == 1
    assert result["regressions"]["failed_by_status"] == {"model_error": 1}
    assert result["controls"]["n_missing"] == 1 and result["controls"]["n_answered"] == 3
    # i0 kept 1 of its 2 reference frames before (0 but not 35), both after; i1 all of 4f
    assert result["regressions"]["reference_frames_kept_before"] == pytest.approx(0.75)
    assert result["regressions"]["reference_frames_kept"] == 1.0
    assert result["regressions"]["terminal_frames_changed"] == pytest.approx(0.0625)
    assert result["net_accuracy_change_estimate"]["value"] == pytest.approx(
        0.5 * 3 / 8 - (1 / 3) * 4 / 8
    )
    records = {r["item_id"]: r for r in result["items"]}
    assert records["i2"]["status"] == "model_error" and records["i2"]["after"] is None
    assert records["i7"]["status"] == "missing"
    assert records["i0"]["answer_before"] == "B" and records["i0"]["answer_after"] == "A"
    json.dumps(result)


def test_intervals_are_bit_identical_for_a_seed() -> None:
    plan = _plan(n_control=4)
    df = _with_reruns(plan)
    a = intervention_outcomes(df, plan, bootstrap=300, seed=9).as_json()
    b = intervention_outcomes(df, plan, bootstrap=300, seed=9).as_json()
    assert a["recovered_rate"] == b["recovered_rate"] and a["broken_rate"] == b["broken_rate"]
    for key in ("recovered_rate", "broken_rate"):
        low, high = a[key]["ci"]
        assert 0.0 <= low <= a[key]["value"] <= high <= 1.0


def test_intervals_change_with_the_seed_on_a_larger_run() -> None:
    rng = np.random.default_rng(0)
    rows = []
    for i in range(60):
        pattern = rng.integers(0, 2, size=3)
        rows += [_row(f"i{i}", f, float(y)) for f, y in zip(FRAMES, pattern, strict=True)]
    grid = normalise_responses(pd.DataFrame(rows))
    (matrix,) = build_matrices(grid)
    plan = plan_intervention(matrix, intervention="phase-shift", terminal=TERMINAL, seed=1)
    (cid,) = plan.configs
    reruns = [
        _row(
            i.item_id,
            8,
            float(rng.random() < 0.4),
            series=plan.config_series[cid],
            config_id=cid,
            config_label="8f/linspace+0.5",
        )
        for i in plan.items
    ]
    df = normalise_responses(pd.concat([grid, pd.DataFrame(reruns)], ignore_index=True))
    a = intervention_outcomes(df, plan, bootstrap=400, seed=1).as_json()
    b = intervention_outcomes(df, plan, bootstrap=400, seed=2).as_json()
    assert a["recovered_rate"]["value"] == b["recovered_rate"]["value"]
    assert a["recovered_rate"]["ci"] != b["recovered_rate"]["ci"]
    assert intervention_outcomes(df, plan, bootstrap=400, seed=1).as_json() == a


def test_nothing_run_yet_reports_missing_not_zero() -> None:
    plan = _plan(n_control=4)
    result = intervention_outcomes(_grid(), plan, bootstrap=50).as_json()
    assert result["recovered_rate"]["value"] is None
    assert result["broken_rate"]["value"] is None
    assert result["regressions"]["n_missing"] == 3 and result["controls"]["n_missing"] == 4


# ---- Review: recovered and broken rates counted by hand, beside rows that must not count


HAND_FRAMES = (4, 8)


def _hand_row(model: str, item: str, config: Configuration, right: float | None, **extra: object):  # type: ignore[no-untyped-def]
    row: dict[str, object] = {
        "model": model,
        "item_id": item,
        "video_id": f"v{item}",
        "task_kind": "mcqa",
        "series": config.series,
        "config_id": config.config_id,
        "config_label": config.label,
        "axis_order": config.axis_order,
        "frames": config.frames,
        "repeat": 0,
        "status": "ok",
        "answer": None if right is None else ("A" if right else "B"),
        "correct": right,
    }
    row.update(extra)
    return row


# (right at 4f, right at 8f): r* are terminal regressions, c* are right at the terminal,
# w is wrong everywhere and takes part in nothing
GRID = {
    "r1": (1, 0),
    "r2": (1, 0),
    "r3": (1, 0),
    "r4": (1, 0),
    "r5": (1, 0),
    "c1": (1, 1),
    "c2": (0, 1),
    "c3": (1, 1),
    "c4": (0, 1),
    "c5": (1, 1),
    "w": (0, 0),
}


def test_rates_by_hand() -> None:
    configs = {f: Configuration(frames=f) for f in HAND_FRAMES}
    rows = [
        _hand_row("m", item, configs[f], float(y))
        for item, pattern in GRID.items()
        for f, y in zip(HAND_FRAMES, pattern, strict=True)
    ]
    grid = normalise_responses(pd.DataFrame(rows))
    (matrix,) = build_matrices(grid)
    plan = plan_intervention(
        matrix,
        intervention="phase-shift",
        terminal=configs[8],
        seed=0,
        n_control=5,
    )
    groups = {i.item_id: i.group for i in plan.items}
    assert groups == {f"r{i}": "regression" for i in range(1, 6)} | {
        f"c{i}": "control" for i in range(1, 6)
    }
    (cid,) = plan.configs
    changed = Configuration.model_validate(plan.configs[cid])
    series = plan.config_series[cid]
    rerun = {
        # regressions: r1, r2, r3 recovered; r4 answers NOANSWER (answered, wrong); r5 timed out
        "r1": 1.0,
        "r2": 1.0,
        "r3": 1.0,
        "r4": 0.0,
        "c1": 1.0,
        "c2": 0.0,  # broken
        "c3": 1.0,
        "c4": 1.0,
        "c5": 1.0,
    }
    extra_rows = [
        _hand_row("m", item, changed, right, series=series) for item, right in rerun.items()
    ]
    extra_rows[3]["answer"] = NOANSWER  # r4
    extra_rows.append(_hand_row("m", "r5", changed, None, series=series, status="timeout"))
    # rows that must not count: another model's re-run of the same configuration, and a second
    # repeat that would flip r4 and c1
    extra_rows.append(_hand_row("other", "r4", changed, 1.0, series=series))
    extra_rows.append(_hand_row("m", "r4", changed, 1.0, series=series, repeat=1))
    extra_rows.append(_hand_row("m", "c1", changed, 0.0, series=series, repeat=1))
    table = normalise_responses(pd.concat([grid, pd.DataFrame(extra_rows)], ignore_index=True))

    result = intervention_outcomes(table, plan, bootstrap=0).as_json()
    # 3 of the 4 answered regressions recovered (r5's timeout is out of the denominator)
    assert result["recovered_rate"]["value"] == pytest.approx(3 / 4)
    # 1 of the 5 controls broken
    assert result["broken_rate"]["value"] == pytest.approx(1 / 5)
    assert result["regressions"]["n_answered"] == 4
    assert result["regressions"]["failed_by_status"] == {"timeout": 1}
    assert result["controls"]["n_answered"] == 5
    assert (result["n_items"], result["n_regressions"], result["n_terminal_right"]) == (11, 5, 5)
    # no frame indices were recorded (as in imported runs): the frame shares are unknown, not 0
    assert result["regressions"]["reference_frames_kept"] is None
    assert result["controls"]["terminal_frames_changed"] is None
    # net: 0.75 * 5/11 - 0.2 * 5/11
    assert result["net_accuracy_change_estimate"]["value"] == pytest.approx(
        0.75 * 5 / 11 - 0.2 * 5 / 11
    )


def test_a_rate_every_rerun_agrees_on_gets_an_exact_interval() -> None:
    """0 of 2 recovered: every bootstrap resample gives 0, so [0, 0] would read as certainty;
    the exact binomial interval for 0 of 2 is [0, 1 - 0.025 ** (1 / 2)] = [0, 0.8419]."""
    plan = _plan(n_control=4)
    df = _with_reruns(plan)
    df.loc[df["item_id"] == "i0", ["correct", "answer"]] = [0.0, "B"]  # i0 stays wrong too
    result = intervention_outcomes(df, plan, bootstrap=200, seed=0).as_json()
    rate = result["recovered_rate"]
    assert rate["value"] == 0.0
    assert rate["ci"] == [0.0, pytest.approx(1 - 0.025**0.5)]
    assert result["intervals"]["recovered_rate"].startswith("exact binomial (Clopper-Pearson)")
    assert result["regressions"]["n_changed"] == 0
    # the controls disagree (1 of 3 broken): their interval stays the bootstrap's
    assert result["intervals"]["broken_rate"] == "video bootstrap"
    assert result["controls"]["n_changed"] == 1


def test_clopper_pearson_by_hand() -> None:
    from itemscale.analysis.policies._intervention import clopper_pearson

    assert clopper_pearson(0, 4) == [0.0, pytest.approx(1 - 0.025**0.25)]  # 0.6024
    assert clopper_pearson(4, 4) == [pytest.approx(0.025**0.25), 1.0]
    low, high = clopper_pearson(5, 10)
    assert (low, high) == (pytest.approx(0.1871, abs=1e-4), pytest.approx(0.8129, abs=1e-4))
