"""The report's measures section (`templates/measures.html`): per model and series, the curve,
the heat map, the headline numbers in both readings of the grid, flips, complementarity, text
overwrite and the chains of a multi-axis grid. `pts` is the report's one way to write a
statistic (`_figures.point` to plot one). A series with too few videos shows "not estimable" in
place of its intervals, decided here at display time (`interval_note`), the stored numbers
untouched.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from ..analysis.measures import (
    GLOSSARY,
    GRID_WITH_TEXT_TITLE,
    AlternativesSeries,
    AnalysisResult,
    BestFixed,
    BinaryBlock,
    BinarySeries,
    BinaryWithText,
    BootstrapSettings,
    ContinuousBlock,
    ContinuousWithText,
    Estimate,
    MeasureKind,
    OpenEndedSeries,
    SeriesEntry,
    interval_note,
    measures_for,
    resolution_tag,
    small_sample_text,
    stat_text,
)
from ..core.responses import SourceFile
from ._comparison import PaperComparison
from ._figures import accuracy_curve, budget_grid, chain_curves, flip_bars, heatmap, point
from ._headline import Headline
from ._html_alternatives import alternatives_section
from ._html_inference import churn_tables, inference_tables
from ._templating import Markup, render
from ._trajectories import PATTERN_NAMES, PATTERNS

#: A block the report shows a headline table of.
TableBlock = BinarySeries | ContinuousBlock | BinaryWithText | ContinuousWithText


def pts(stat: Estimate | BestFixed | Mapping[str, Any] | None, note: str | None = None) -> str:
    """In points with its interval, or `note` ("not estimable") in its place."""
    return stat_text(stat, note=note)


def _measure_rows(
    block: TableBlock, kind: MeasureKind, note: str | None
) -> list[tuple[str, str, str | None]]:
    rows = (unit.report_row(block, note) for unit in measures_for(kind))
    return [row for row in rows if row is not None]


def _headline_table(block: BinarySeries, note: str | None) -> dict[str, Any]:
    rows: list[tuple[str, str, str | None]] = [
        ("items on the matched grid", str(block.n_items), "matched grid"),
        ("items dropped (reasons)", f"{block.n_dropped} {block.drop_reasons or ''}", None),
        *_measure_rows(block, "binary", note),
    ]
    return {"block": "binary", "rows": [(k, v, GLOSSARY[t] if t else "") for k, v, t in rows]}


def _complementarity(block: BinaryBlock, note: str | None) -> dict[str, Any] | None:
    """Per pair (shade, its statistic, points); None with fewer than two budgets."""
    labels = [str(x) for x in block.axis]
    comp = block.complementarity
    if not comp or len(labels) < 2:
        return None
    rows = []
    for a in labels:
        cells: list[tuple[str, str, str] | None] = []
        for b in labels:
            stat = comp.get(f"{a}|{b}") or comp.get(f"{b}|{a}")
            if a == b or stat is None:
                cells.append(None)
                continue
            value = float(stat.value or 0.0)
            shade = max(0.0, min(1.0, value / 0.2))
            cells.append((f"{shade:.2f}", pts(stat, note), f"{100 * value:.1f}"))
        rows.append((a, cells))
    return {"labels": labels, "rows": rows}


def _with_text_table(
    g: BinaryWithText | ContinuousWithText | None, kind: str, note: str | None
) -> list[dict[str, Any]]:
    if g is None:
        return []
    reasons = g.drop_reasons or {}
    dropped = str(g.n_dropped) + (
        " (" + ", ".join(f"{k}: {v}" for k, v in sorted(reasons.items())) + ")" if reasons else ""
    )
    rows = [
        ("grid", " < ".join(str(c) for c in g.configs)),
        ("items on this grid", str(g.n_items)),
        ("items dropped", dropped),
    ]
    with_text: MeasureKind = "binary_with_text" if kind == "binary" else "continuous_with_text"
    rows += [(header, value) for header, value, _ in _measure_rows(g, with_text, note)]
    return [{"block": with_text, "rows": rows}]


def _continuous_table(block: ContinuousBlock, note: str | None) -> dict[str, Any]:
    rows = [
        ("items on the matched grid", str(block.n_items)),
        ("items dropped", str(block.n_dropped)),
        ("score", str(block.metric)),
    ]
    rows += [(header, value) for header, value, _ in _measure_rows(block, "continuous", note)]
    return {"block": "continuous", "rows": rows}


def _part(
    model: str,
    series: str,
    block: BinarySeries | ContinuousBlock,
    traj: pd.DataFrame,
    note: str | None,
) -> dict[str, Any]:
    kind = "binary" if isinstance(block, BinarySeries) else "continuous"
    labels = [str(x) for x in block.axis]
    stats = block.curve
    points = [point(stats.get(lab), note) for lab in labels]
    what = "accuracy" if isinstance(block, BinarySeries) else f"mean {block.metric}"
    curve, grid = _grid_figures(block, what, note) or (
        accuracy_curve(labels, points, title=f"{what} (points, 95% CI)", y_title=what),
        None,
    )
    rows = traj[(traj["model"] == model) & (traj["series"] == series) & (traj["kind"] == kind)]
    cols = [lab for lab in labels if lab in rows.columns]
    values = rows[cols].to_numpy(dtype=float) if len(rows) else np.zeros((0, len(cols)))
    heat = heatmap(
        cols,
        values,
        rows["pattern"].astype(str).tolist(),
        PATTERNS,
        binary=kind == "binary",
        names=PATTERN_NAMES,
    )
    counts = rows["pattern"].value_counts()
    table = (
        _headline_table(block, note)
        if isinstance(block, BinarySeries)
        else _continuous_table(block, note)
    )
    return {
        "model": model,
        "series": series,
        "title": "multiple choice" if kind == "binary" else "open-ended",
        "curve": Markup(curve),
        "grid": grid and Markup(grid),
        "same_input": [entry.evidence.sentence for entry in block.effective_budget or ()],
        "heat": Markup(heat),
        "tables": [table, *_with_text_table(block.grid_with_text, kind, note)],
        "legend": [
            (PATTERN_NAMES.get(p, p), int(counts.get(p, 0))) for p in PATTERNS if counts.get(p, 0)
        ],
        "with_step": int(counts.get("harmful", 0)) + int(counts.get("mixed", 0)),
        "complete": len(rows) - int(counts.get("incomplete", 0)),
    }


def _resolution_key(tag: str) -> tuple[float, str]:
    """Resolutions in size order: `56` < `112`, `76k` < `151k` (by the number they start with)."""
    found = re.match(r"\d+(?:\.\d+)?", tag)
    return (float(found.group()) if found else float("inf"), tag)


def _grid_figures(
    block: BinaryBlock | ContinuousBlock, what: str, note: str | None
) -> tuple[str, str] | None:
    """None on a single axis."""
    order = block.order
    labels = [str(x) for x in block.axis]
    frames = block.frames
    if order is None or not order.multi_axis or len(frames) != len(labels):
        return None
    frames_of = {lab: int(f) for lab, f in zip(labels, frames, strict=True)}
    stats = block.curve
    chains = sorted(
        ((name, line) for name, line in order.chains.items() if name.startswith("frames@")),
        key=lambda item: _resolution_key(item[0].removeprefix("frames@")),
    )
    curves = chain_curves(
        list(frames_of.values()),
        [
            (name, [frames_of[lab] for lab in line], [point(stats.get(lab), note) for lab in line])
            for name, line in chains
        ],
        title=f"{what} per resolution (points, 95% CI)",
        y_title=what,
    )
    tags = {lab: resolution_tag(lab, float("nan")) for lab in labels}
    resolutions = sorted(set(tags.values()), key=_resolution_key)
    cells = {(frames_of[lab], tags[lab]): point(stats.get(lab), note) for lab in labels}
    grid = budget_grid(
        list(frames_of.values()), resolutions, cells, title=f"{what}: frames x resolution"
    )
    return curves, grid


def _series_name(entry: SeriesEntry) -> str:
    """An open-ended series' entry keeps its name in its continuous block."""
    name = None if isinstance(entry, OpenEndedSeries) else entry.series
    return "default" if name is None else str(name)


def _others(entry: SeriesEntry) -> dict[str, SeriesEntry]:
    return {} if isinstance(entry, ContinuousBlock) else dict(entry.other_series or {})


def _series_section(
    model: str,
    series: str,
    entry: SeriesEntry,
    traj: pd.DataFrame,
    files: Mapping[str, SourceFile],
) -> dict[str, Any]:
    note = interval_note(entry)
    out: dict[str, Any] = {
        "warning": small_sample_text(entry),  # an open-ended series has no record of its own
        "axis_warnings": [],
        "alternatives": "",
        "binary": None,
        "continuous": None,
    }
    if isinstance(entry, AlternativesSeries):
        return out | {"alternatives": alternatives_section(model, entry, files, note)}
    out["axis_warnings"] = getattr(entry, "axis_warnings", None) or ()
    if isinstance(entry, BinarySeries):
        out |= {
            "binary": _part(model, series, entry, traj, note),
            "flips": Markup(flip_bars(entry, note)),
            "comp": _complementarity(entry, note),
            "block": entry,
            "stat": partial(pts, note=note),
            "inference": Markup(inference_tables(entry, partial(pts, note=note), note)),
        }
    if isinstance(entry, BinarySeries | OpenEndedSeries) and entry.continuous is not None:
        out["continuous"] = _part(model, series, entry.continuous, traj, note)
    elif isinstance(entry, ContinuousBlock):
        out["continuous"] = _part(model, series, entry, traj, note)
    return out


def interval_method_text(boot: BootstrapSettings) -> str:
    """How the report's intervals were made, in words (docs/measures.md, "Uncertainty")."""
    if boot.interval == "bca":
        return (
            "95% intervals: BCa (bias-corrected and accelerated) for rates and accuracies; for "
            "best fixed, oracle headroom, oracle gap and complementarity a selection-aware "
            "interval that counts every budget near-tied with the best against the optimism of "
            "choosing the best budget (winner's curse)"
        )
    return "95% intervals: percentile"


def measures_section(
    measures: AnalysisResult,
    trajectories: pd.DataFrame,
    files: Mapping[str, SourceFile] | None = None,
) -> Markup:
    """`files`: each imported configuration's source file, to name those from one file."""
    entries: list[dict[str, Any] | Markup] = []
    for model, entry in measures.models.items():
        entries.append(
            _series_section(model, _series_name(entry), entry, trajectories, files or {})
        )
        for series, other in _others(entry).items():
            entries.append(_series_section(model, str(series), other, trajectories, files or {}))
        if not isinstance(entry, ContinuousBlock):
            entries.append(Markup(churn_tables(entry, partial(pts, note=interval_note(entry)))))
    return render(
        "measures.html",
        entries=entries,
        method=interval_method_text(measures.bootstrap),
        resamples=measures.bootstrap.bootstrap,
        series_gloss=GLOSSARY["series"],
        with_text_title=GRID_WITH_TEXT_TITLE[0].upper() + GRID_WITH_TEXT_TITLE[1:],
    )


def headline_sentence(measures: AnalysisResult, comparison: PaperComparison | None) -> str:
    """The record the console's opening paragraph is written from too."""
    return Headline.of(measures, comparison).text()


def comparison_section(comparison: PaperComparison | None) -> Markup:
    rows = comparison.rows if comparison is not None else ()
    return render(
        "comparison.html",
        reproduced=sum(r.same for r in rows),
        rows=[(r.model, r.measure, r.paper, r.itemscale, r.same) for r in rows],
    )
