"""`compare --json` layout 3: every interval is the measures' one record, `Estimate`
(`{"value", "ci": [low, high]}`), and a layout-2 file (`{"value", "ci_low", "ci_high"}`) still
reads back, to the same result and the same page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _support.compare_rows import compare_row
from itemscale import CompareResult, Estimate, compare
from itemscale.core.responses import normalise_responses, write_run
from itemscale.report import render_compare_page

#: where a comparison holds an interval, by record
INTERVALS = {
    "answers": ("accuracy_a", "accuracy_b", "difference"),
    "repeats": ("noise_a", "noise_b", "between"),
}


def _row(item: str, video: str, correct: int, repeat: int = 0) -> dict[str, Any]:
    return compare_row(item, video, correct, repeat=repeat, answer="A" if correct else "B")


def _runs(tmp_path: Path) -> tuple[Path, Path]:
    """Two runs of eight items on four videos, each answered twice (so `repeats` is filled)."""
    sides = []
    for name, flip in (("a", 0), ("b", 3)):
        rows = [
            _row(f"i{i}", f"v{i // 2}", int((i * 7 + r + flip) % 3 == 0), r)
            for i in range(8)
            for r in range(2)
        ]
        write_run(tmp_path / name, normalise_responses(_frame(rows)), {})
        sides.append(tmp_path / name)
    return sides[0], sides[1]


def _frame(rows: list[dict[str, Any]]) -> Any:
    import pandas as pd

    return pd.DataFrame(rows)


def _as_layout_2(data: dict[str, Any]) -> dict[str, Any]:
    """A layout-4 document written as layout 2 wrote it (intervals apart, `n_boot`)."""
    old = json.loads(json.dumps(data))
    old["schema_version"] = 2
    old["bootstrap"] = {"n_boot" if k == "bootstrap" else k: v for k, v in old["bootstrap"].items()}
    blocks = [("answers", old["answers"]), ("repeats", old["repeats"])]
    blocks += [("answers", d) for d in old["outcomes"].values()]
    for kind, block in blocks:
        for key in INTERVALS[kind] if block else ():
            est = block[key]
            if est is not None:
                low, high = est["ci"] if est["ci"] is not None else (None, None)
                block[key] = {"value": est["value"], "ci_low": low, "ci_high": high}
    return old


def test_every_interval_is_an_estimate(tmp_path: Path) -> None:
    a, b = _runs(tmp_path)
    result = compare(a, b, bootstrap=50)
    assert result.schema_version == 5 and result.repeats is not None
    data = json.loads(result.to_json())
    for kind, keys in INTERVALS.items():
        for key in keys:
            assert isinstance(getattr(getattr(result, kind), key), Estimate), (kind, key)
            assert set(data[kind][key]) == {"value", "ci"}, (kind, key)
    diff = result.answers.difference
    assert diff.ci is not None and diff.ci_low == diff.ci[0] and diff.ci_high == diff.ci[1]
    assert diff.ci_low is not None and diff.ci_low <= (diff.value or 0.0) <= diff.ci[1]


def test_a_layout_2_file_reads_back_to_the_same_result_and_page(tmp_path: Path) -> None:
    a, b = _runs(tmp_path)
    result = compare(a, b, bootstrap=50)
    new = json.loads(result.to_json())
    old = _as_layout_2(new)
    assert old["answers"]["difference"].keys() == {"value", "ci_low", "ci_high"}
    read = CompareResult.model_validate_json(json.dumps(old))
    assert read.schema_version == 2
    assert read == result.model_copy(update={"schema_version": 2})
    # the page is the same but for the layout version it names
    assert render_compare_page(old) == render_compare_page({**new, "schema_version": 2})
    # layout 3: intervals as now, the resample count under `n_boot`
    three = {**new, "schema_version": 3, "bootstrap": old["bootstrap"]}
    assert "n_boot" in three["bootstrap"] and "n_boot" not in new["bootstrap"]
    read3 = CompareResult.model_validate_json(json.dumps(three))
    assert read3 == result.model_copy(update={"schema_version": 3})
    assert render_compare_page(three) == render_compare_page({**new, "schema_version": 3})
    # an interval a layout-2 file left open (no resamples) reads as no interval
    none = compare(a, b, bootstrap=0)
    back = CompareResult.model_validate_json(json.dumps(_as_layout_2(json.loads(none.to_json()))))
    assert back.answers.difference.ci is None and back == none.model_copy(
        update={"schema_version": 2}
    )
