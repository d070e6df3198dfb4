"""One number, one count: every "K of N" the report prints beside a measure is the count that
measures.json carries for that very estimate (`count`), read back from the built report.html."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from _support.runs import make_mixed_run, make_run
from itemscale.analysis.measures import MeasureKind, measures_for
from itemscale.report import build_artifact

ROW = re.compile(r"<tr><th>(.*?)</th><td class='num'>(.*?)</td>", re.S)
COUNT = re.compile(r"\((\d+) of (\d+)\)|\((\d+) items\)")


def _blocks(measures: dict[str, Any]) -> list[dict[str, Any]]:
    """Every series block of every model, its multiple-choice part then its open-ended part
    (the report shows one headline table each, in this order)."""
    out = []
    for block in measures["models"].values():
        for series in (block, *(block.get("other_series") or {}).values()):
            if series.get("kind") == "binary":
                out.append(series)
            if isinstance(series.get("continuous"), dict):
                out.append(series["continuous"])
            elif series.get("kind") == "continuous":
                out.append(series)
    return out


def _check_table(body: str, block: dict[str, Any], kind: MeasureKind) -> int:
    rows = {html.unescape(h): html.unescape(v) for h, v in ROW.findall(body)}
    items = rows.get("items on the matched grid", rows.get("items on this grid"))
    assert items == str(block["n_items"])
    checked = 0
    for unit in measures_for(kind):
        row = unit.report_row(block)
        if row is None:
            continue
        header = html.unescape(html.escape(row[0]))
        text = rows[header]
        stat = block[unit.key]
        found = COUNT.search(text)
        if not isinstance(stat, dict) or stat.get("count") is None:
            assert found is None, (unit.key, text)
            continue
        assert found, (unit.key, text)
        count = stat["count"]
        if count["k"] is None:
            assert int(found.group(3)) == count["n"], (unit.key, text)
        else:
            got = (int(found.group(1)), int(found.group(2)))
            assert got == (count["k"], count["n"]), (unit.key, text)
            assert count["k"] == round(stat["value"] * count["n"])
        checked += 1
    return checked


def _check(artifact: Path) -> int:
    """Every headline table of the report against its block of measures.json, in the report's
    order (each model's series, each with its visual table and its with-text table)."""
    page = (artifact / "report.html").read_text(encoding="utf-8")
    measures = json.loads((artifact / "measures.json").read_text(encoding="utf-8"))
    tables = re.findall(
        r"<table class='headline' data-block='(\w+)'><tbody>(.*?)</tbody></table>", page, re.S
    )
    expected: list[tuple[str, dict[str, Any]]] = []
    for block in _blocks(measures):
        kind = "binary" if block["kind"] == "binary" else "continuous"
        expected.append((kind, block))
        if isinstance(block.get("grid_with_text"), dict):
            expected.append((f"{kind}_with_text", block["grid_with_text"]))
    assert [k for k, _ in tables] == [k for k, _ in expected]
    checked = 0
    for (kind, body), (_, block) in zip(tables, expected, strict=True):
        checked += _check_table(body, block, kind)  # type: ignore[arg-type]
    # the heat map's pattern legend: harmful only + mixed is the harmful rate's own count
    legends = re.findall(r"<span class='pattern-count'>(\d+) of (\d+)</span>", page)
    blocks = _blocks(measures)
    assert len(legends) == len(blocks)
    for (k, n), block in zip(legends, blocks, strict=True):
        key = "harmful_rate" if block["kind"] == "binary" else "harmful_rate_eps"
        assert (int(k), int(n)) == (block[key]["count"]["k"], block[key]["count"]["n"])
        checked += 1
    return checked


@pytest.mark.slow
def test_every_count_in_the_report_is_the_json_count(tmp_path: Path) -> None:
    run = tmp_path / "run"
    make_run(run, models=("m1", "m2"), with_audit=False)
    artifact = build_artifact(run, bootstrap=20, seed=1)
    # two models x (best fixed, oracle, harmful, beneficial, terminal) + two legends at least
    assert _check(artifact) >= 12


@pytest.mark.slow
def test_counts_hold_with_failures_and_open_ended_items(tmp_path: Path) -> None:
    run = tmp_path / "run"
    make_mixed_run(run)
    artifact = build_artifact(run, bootstrap=20, seed=1)
    assert _check(artifact) >= 5
    measures = json.loads((artifact / "measures.json").read_text(encoding="utf-8"))
    # a mean score carries its item count, a share of items k of n
    for block in _blocks(measures):
        curve = block["accuracy"] if block["kind"] == "binary" else block["mean_score"]
        for stat in curve.values():
            assert stat["count"]["n"] == block["n_items"]
            if block["kind"] != "binary":
                assert stat["count"]["k"] is None


def test_an_open_ended_card_shows_scores_and_outputs(tmp_path: Path) -> None:
    """A scored item's audit card reads its scores and what the model said at both budgets,
    never "answer not recorded" (its answers are NaN once read back from Parquet)."""
    from itemscale.analysis.audit import audit_transitions, write_audit
    from itemscale.core.responses import read_run

    run = tmp_path / "run"
    items = make_mixed_run(run)
    df, _ = read_run(run)
    write_audit(run, audit_transitions(df, items), "adjacent")
    artifact = build_artifact(run, bootstrap=10, seed=1)
    page = html.unescape((artifact / "report.html").read_text(encoding="utf-8"))
    cards = re.findall(r"<div class='card'.*?</div></div>", page, re.S)
    scored = [c for c in cards if "score 0.90 -&gt; 0.20" in c or "score 0.90 -> 0.20" in c]
    assert scored, cards[:2]
    for card in scored:
        assert "not recorded -> not recorded" not in card
        assert "answer not recorded" not in card
        assert "; output '" in card
