"""Independent review of the intervention rates (MEASURES.md): recovered_rate = share of terminal
regressions that become correct, broken_rate = share of previously correct (control) items the
same change makes wrong, counted by hand on a table that also holds rows that must not count."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from itemscale.measures import build_matrices
from itemscale.policies import intervention_outcomes, plan_intervention
from itemscale.protocol import Configuration
from itemscale.responses import NOANSWER, normalise_responses

FRAMES = (4, 8)


def _row(model: str, item: str, config: Configuration, right: float | None, **extra: object):  # type: ignore[no-untyped-def]
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
    configs = {f: Configuration(frames=f) for f in FRAMES}
    rows = [
        _row("m", item, configs[f], float(y))
        for item, pattern in GRID.items()
        for f, y in zip(FRAMES, pattern, strict=True)
    ]
    grid = normalise_responses(pd.DataFrame(rows))
    (matrix,) = build_matrices(grid)
    plan = plan_intervention(
        matrix,
        policy="phase-shift",
        terminal=configs[8],
        rng=np.random.default_rng(0),
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
    extra_rows = [_row("m", item, changed, right, series=series) for item, right in rerun.items()]
    extra_rows[3]["answer"] = NOANSWER  # r4
    extra_rows.append(_row("m", "r5", changed, None, series=series, status="timeout"))
    # rows that must not count: another model's re-run of the same configuration, and a second
    # repeat that would flip r4 and c1
    extra_rows.append(_row("other", "r4", changed, 1.0, series=series))
    extra_rows.append(_row("m", "r4", changed, 1.0, series=series, repeat=1))
    extra_rows.append(_row("m", "c1", changed, 0.0, series=series, repeat=1))
    table = normalise_responses(pd.concat([grid, pd.DataFrame(extra_rows)], ignore_index=True))

    result = intervention_outcomes(table, plan, n_boot=0)
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
