"""The demo's steps as library calls: the seed paper's numbers reproduced into a run folder
(`reproduce_paper`), the terminal regressions grouped by what the audit saw
(`regression_pathways`), and the cascade and audit of a run folder (`cascade`, `audit`), each
called from Python with no command line."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from _support.runs import make_run
from itemscale.analysis.audit import audit_transitions
from itemscale.analysis.policies import CascadeSettings
from itemscale.workflows import (
    TABLE2_CONFIGS,
    WorkflowError,
    audit,
    cascade,
    regression_pathways,
    reproduce_paper,
)
from itemscale.workflows._demo import (
    EVIDENCE_NOT_KNOWN,
    RIGHT_WITHOUT_EVIDENCE,
    SAMPLING_ACCIDENT,
    SEEN_AT_TERMINAL,
)


def test_reproduce_paper_writes_and_returns_every_result(tmp_path: Path) -> None:
    paper = reproduce_paper(tmp_path / "paper", bootstrap=0, report=False)
    assert paper.rows_added > 0 and paper.rows_unchanged == 0
    assert (paper.reproduced, len(paper.comparison)) == (53, 54)
    assert paper.report is None
    assert paper.table2.grid is not None
    assert paper.table2.grid.configs == list(TABLE2_CONFIGS)
    stored = json.loads((tmp_path / "paper" / "table2.json").read_text("utf-8"))
    assert stored == paper.table2.to_json()
    summary = paper.summary()
    assert "report" not in summary
    for key in ("measures", "table2", "cascade"):
        assert Path(summary[key]).is_file(), key
    comparison = json.loads((tmp_path / "paper" / "comparison.json").read_text("utf-8"))
    assert comparison["rows"] == [dataclasses.asdict(r) for r in paper.comparison]
    assert all(r.same == (abs(r.itemscale - r.paper) < 0.005) for r in paper.comparison)
    again = reproduce_paper(tmp_path / "paper", bootstrap=0, report=False)
    assert (again.rows_added, again.rows_unchanged) == (0, paper.rows_added)
    assert again.comparison == paper.comparison


def _regressions(df, items) -> tuple[SimpleNamespace, list[str]]:  # type: ignore[no-untyped-def]
    """An intervention record with the attributes of `intervene`'s result that the pathways
    read, holding every item right at f8 and wrong at the terminal f32, each recovered when its
    index is even."""
    wide = df.pivot_table(index="item_id", columns="config_label", values="correct")
    regressed = sorted(wide.index[(wide["f8"] == 1) & (wide["f32"] == 0)])
    rows = [
        SimpleNamespace(
            item_id=item,
            group="regression",
            reference_label="f8",
            after=1.0 if n % 2 == 0 else 0.0,
            status="ok",
        )
        for n, item in enumerate(regressed)
    ]
    rows.append(
        SimpleNamespace(
            item_id="control", group="control", reference_label=None, after=1.0, status="ok"
        )
    )
    record = SimpleNamespace(terminal_label="f32", source_series="default", items=rows)
    return record, regressed


def test_regression_pathways_groups_each_regression_by_the_evidence_seen(tmp_path: Path) -> None:
    run = tmp_path / "run"
    df, items = make_run(run, n_items=24, with_audit=False)
    record, regressed = _regressions(df, items)
    assert len(regressed) >= 2
    found = regression_pathways(record, run, items_file=run / "items.jsonl")  # type: ignore[arg-type]
    assert found.terminal == "f32"
    assert [r.item_id for r in found.rows] == regressed  # the controls are left out
    audit_all = audit_transitions(df, items, pairs="all")
    for n, row in enumerate(found.rows):
        pair = audit_all[
            (audit_all["item_id"] == row.item_id)
            & (audit_all["from_label"] == "f8")
            & (audit_all["to_label"] == "f32")
        ]
        assert row.pathway == pair["pathway"].iloc[0]
        before, after = int(pair["evidence_from"].iloc[0]), int(pair["evidence_to"].iloc[0])
        assert row.seen == f"{before} -> {after}"
        expected = (
            RIGHT_WITHOUT_EVIDENCE
            if before == 0
            else SAMPLING_ACCIDENT
            if after == 0
            else SEEN_AT_TERMINAL
        )
        assert row.group == expected and row.group != EVIDENCE_NOT_KNOWN
        assert row.outcome == ("recovered" if n % 2 == 0 else "still wrong")
        assert row.kind == "?"  # the items carry no question_kind
    assert sum(sum(c.values()) for c in found.tally.values()) == len(regressed)
    recovered = sum(c["recovered"] for c in found.tally.values())
    assert recovered == (len(regressed) + 1) // 2


def test_cascade_and_audit_of_a_run_folder(tmp_path: Path) -> None:
    run = tmp_path / "run"
    df, _ = make_run(run, n_items=24, with_audit=False)
    report = cascade(run, CascadeSettings(bootstrap=0))
    written = json.loads((run / "cascade.json").read_text("utf-8"))
    assert written["run_dir"] == str(run) and report.run_dir == str(run)
    assert {b.model for b in report.results} == set(df["model"])
    assert report.to_json() == (run / "cascade.json").read_text("utf-8")
    with pytest.raises(WorkflowError, match="no responses for model\\(s\\) nobody"):
        cascade(run, CascadeSettings(bootstrap=0, models=("nobody",)))
    outcome = audit(run, export=tmp_path / "coders.csv")
    assert outcome.items_path == run / "items.jsonl"
    assert len(outcome.transitions) == len(audit_transitions(df, list(outcome.items)))
    assert (run / "audit.parquet").is_file() and (run / "annotations.parquet").is_file()
    assert outcome.exported is not None and outcome.exported >= len(outcome.transitions) > 0


def test_selector_comparison_file_holds_the_churn_blocks_selector_record() -> None:
    """RUN/selector.json: the selection file and its configuration, plus, where a budget is
    shared with uniform sampling, that budget and the selector's record exactly as the churn
    block of `analyze --json` writes it."""
    from _support.analyses import series_selector_interventions
    from itemscale.analysis.measures import BinarySeries, analyze_responses
    from itemscale.core.responses import normalise_responses
    from itemscale.workflows import SelectorComparison

    df, _ = series_selector_interventions()
    result = analyze_responses(normalise_responses(df), bootstrap=20)
    block = result.models["m"]
    assert isinstance(block, BinarySeries) and block.churn
    budget, record = next(
        (name, b.selector)
        for churn in block.churn.values()
        for name, b in churn.budgets.items()
        if b.selector is not None
    )
    assert record is not None
    alone = SelectorComparison(Path("sel.json"), "selection:change", 3, config="8f/change")
    assert alone.as_json() == {"selection_file": "sel.json", "config": "8f/change"}
    shared = dataclasses.replace(alone, budget=budget, selector=record)
    written = shared.as_json()
    assert written["budget"] == budget
    stored = result.to_json()["models"]["m"]["churn"]
    assert written["selector"] in [
        b["selector"] for c in stored.values() for b in c["budgets"].values() if "selector" in b
    ]
