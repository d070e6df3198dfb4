"""Measures are registered units: a toy measure (this module, one registry line) appears in the
JSON, the console and the report; the built-in units keep their documented values; the registry
refuses what would make two measures share a key or a term two meanings."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _support.runs import make_run
from _support.tables import table
from itemscale.analysis.measures import (
    GLOSSARY,
    MEASURES,
    BlockData,
    ItemShare,
    analyze_responses,
    measures_for,
    register_measure,
    unregister_measure,
)
from itemscale.cli.cmd_analyze import print_summary


def _first_budget_right(data: BlockData) -> np.ndarray:
    return data.y[:, 0]


#: The toy: the share of items right at the smallest budget of the axis.
FIRST_BUDGET = ItemShare(
    key="first_budget_rate",
    kinds=("binary",),
    term="first-budget rate",
    gloss="items right at the smallest budget of the axis",
    console_label="first-budget rate",
    report_label="first-budget rate",
    indicator=_first_budget_right,
)


@pytest.fixture
def toy() -> Iterator[ItemShare]:
    register_measure(FIRST_BUDGET)  # the one registry line
    try:
        yield FIRST_BUDGET
    finally:
        unregister_measure(FIRST_BUDGET)


def _table() -> pd.DataFrame:
    # 6 items on 3 videos, budgets 8f < 16f < 32f; at 8f items 0, 1, 3 are right (3 of 6)
    matrix = {
        "i0": [1, 1, 0],
        "i1": [1, 0, 1],
        "i2": [0, 1, 1],
        "i3": [1, 1, 1],
        "i4": [0, 1, 1],
        "i5": [0, 0, 0],
    }
    videos = {"i0": "v0", "i1": "v0", "i2": "v1", "i3": "v1", "i4": "v2", "i5": "v2"}
    return table(matrix, videos=videos)


def test_a_toy_measure_appears_in_json_console_and_report(toy: ItemShare, tmp_path: Path) -> None:
    result = analyze_responses(_table(), bootstrap=50, seed=1).to_json()
    block = result["models"]["m"]
    assert block["first_budget_rate"]["value"] == pytest.approx(3 / 6)
    low, high = block["first_budget_rate"]["ci"]
    assert 0.0 <= low <= 0.5 <= high <= 1.0
    # after the built-in headline measures, before the pair tables (JSON order)
    keys = list(block)
    assert keys.index("terminal_regression_rate") < keys.index("first_budget_rate")
    assert keys.index("first_budget_rate") < keys.index("flip_down")

    out = io.StringIO()
    print_summary(result, out)
    lines = [line for line in out.getvalue().splitlines() if "first-budget rate:" in line]
    assert len(lines) == 1
    assert "50.0 [" in lines[0]
    assert GLOSSARY["first-budget rate"] in lines[0]

    run = tmp_path / "run"
    make_run(run, n_items=8, with_audit=False)
    from itemscale.report import build_artifact

    artifact = build_artifact(run, bootstrap=20)
    html = (artifact / "report.html").read_text(encoding="utf-8")
    assert "<th>first-budget rate</th>" in html
    assert "items right at the smallest budget of the axis" in html


def test_unregistering_leaves_the_built_in_measures(toy: ItemShare) -> None:
    unregister_measure(toy)
    assert "first-budget rate" not in GLOSSARY
    block = analyze_responses(_table(), bootstrap=0).to_json()["models"]["m"]
    assert "first_budget_rate" not in block
    register_measure(toy)  # the fixture removes it again


def test_built_in_units_keep_their_values() -> None:
    """Hand-computed on the table above (visual budgets 8f < 16f < 32f)."""
    block = analyze_responses(_table(), bootstrap=0).to_json()["models"]["m"]
    # 16f and 32f tie at 4 of 6: the tie goes to the smaller budget
    assert block["best_fixed"]["config"] == "16f"
    assert block["best_fixed"]["value"] == pytest.approx(4 / 6)
    assert block["oracle"]["value"] == pytest.approx(5 / 6)
    assert block["oracle_headroom"]["value"] == pytest.approx(1 / 6)
    # harmful: i0 (right at 8f and 16f, wrong at 32f), i1 (right at 8f, wrong at 16f)
    assert block["harmful_rate"]["value"] == pytest.approx(2 / 6)
    # beneficial: i1 (16f -> 32f), i2 and i4 (8f -> 16f)
    assert block["beneficial_rate"]["value"] == pytest.approx(3 / 6)
    assert block["terminal_regression_rate"]["value"] == pytest.approx(1 / 6)
    assert block["text_answerable_rate"] == {"value": None, "ci": None}


def test_the_registry_refuses_a_second_unit_with_one_key() -> None:
    clash = ItemShare(key="harmful_rate", kinds=("binary",), indicator=_first_budget_right)
    with pytest.raises(ValueError, match="already registered for binary"):
        register_measure(clash)
    retold = ItemShare(
        key="other_rate",
        kinds=("binary",),
        term="harmful rate",
        gloss="something else",
        indicator=_first_budget_right,
    )
    with pytest.raises(ValueError, match="already explained"):
        register_measure(retold)
    with pytest.raises(ValueError, match="kinds"):
        register_measure(ItemShare(key="x", kinds=("nope",), indicator=_first_budget_right))  # type: ignore[arg-type]
    assert clash not in MEASURES.values() and retold not in MEASURES.values()


def test_every_glossed_unit_is_in_the_glossary_and_the_docs() -> None:
    from _support.paths import DOCS

    glossary_md = (DOCS / "glossary.md").read_text(encoding="utf-8").lower()
    for unit in MEASURES.values():
        if unit.gloss:
            assert GLOSSARY[unit.term or ""] == unit.gloss
            assert f"**{(unit.term or '').lower()}" in glossary_md, unit.term


def test_each_kind_has_its_headline_in_console_order() -> None:
    assert [u.key for u in measures_for("binary")][:8] == [
        "best_fixed",
        "oracle",
        "oracle_headroom",
        "harmful_rate",
        "beneficial_rate",
        "terminal_regression_rate",
        "text_answerable_rate",
        "text_overwrite_rate",
    ]
    assert [u.key for u in measures_for("binary_with_text")] == [
        "best_fixed",
        "oracle",
        "oracle_headroom",
        "harmful_rate",
        "overwrite_rate",
    ]


def test_json_is_unchanged_in_layout(tmp_path: Path) -> None:
    """The blocks' keys in the documented order (docs/measures.md, "JSON layout")."""
    result = analyze_responses(_table(), bootstrap=0).to_json()
    block = result["models"]["m"]
    assert list(block)[:16] == [
        "kind",
        "axis",
        "frames",
        "n_items",
        "n_videos",
        "n_dropped",
        "drop_reasons",
        "noanswer_rate",
        "accuracy",
        "best_fixed",
        "oracle",
        "oracle_headroom",
        "harmful_rate",
        "beneficial_rate",
        "terminal_regression_rate",
        "flip_down",
    ]
    json.dumps(result)  # serialisable as it stands
