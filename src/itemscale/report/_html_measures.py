"""The report's measures section: per model and series, the accuracy curve, the trajectory heat
map, the headline numbers in both readings of the grid (visual budgets only; the text-only
answer as budget 0), flips, complementarity, text overwrite and the chains of a multi-axis grid.

Kept apart from the page (`_html`) because it is most of the page's text; `pts` is the one way
the report writes a statistic with its interval (and `_figures.point` the one way it plots
one), so the other sections use them. Everything is read from the typed `AnalysisResult`; a
series with too few videos (a `small_sample` record) is shown with "not estimable" in place of
its intervals, p-values, power figures and additive-model tests, decided here at display time
(`interval_note`), the stored numbers untouched.
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
from ._escape import esc
from ._figures import accuracy_curve, budget_grid, chain_curves, flip_bars, heatmap, point
from ._headline import Headline
from ._html_alternatives import alternatives_section
from ._html_inference import churn_tables, inference_tables
from ._trajectories import PATTERN_NAMES, PATTERNS

#: A block the report shows a headline table of.
TableBlock = BinarySeries | ContinuousBlock | BinaryWithText | ContinuousWithText


def pts(stat: Estimate | BestFixed | Mapping[str, Any] | None, note: str | None = None) -> str:
    """A statistic in points with its interval, or with `note` in its place ("not
    estimable", on a small sample): the report's one way of writing a statistic."""
    return stat_text(stat, note=note)


def _measure_rows(
    block: TableBlock, kind: MeasureKind, note: str | None
) -> list[tuple[str, str, str | None]]:
    """The registered measures of one block as (header, value, glossary term) rows."""
    rows = []
    for unit in measures_for(kind):
        row = unit.report_row(block, note)
        if row is not None:
            rows.append(row)
    return rows


def _headline_table(block: BinarySeries, note: str | None) -> str:
    rows: list[tuple[str, str, str | None]] = [
        ("items on the matched grid", str(block.n_items), "matched grid"),
        ("items dropped (reasons)", f"{block.n_dropped} {block.drop_reasons or ''}", None),
        *_measure_rows(block, "binary", note),
    ]
    body = "".join(
        f"<tr><th>{esc(k)}</th><td class='num'>{esc(v)}</td>"
        f"<td class='muted'>{esc(GLOSSARY[term]) if term else ''}</td></tr>"
        for k, v, term in rows
    )
    return (
        "<h4>Visual budgets only</h4><p class='muted'>the text-only answer is a baseline beside "
        "the axis, not a budget</p>"
        f"<table class='headline' data-block='binary'><tbody>{body}</tbody></table>"
        "<p class='muted'>points, 95% interval; in brackets the count it is computed from "
        "(k of n items)</p>"
    )


def _complementarity(block: BinaryBlock, note: str | None) -> str:
    labels = [str(x) for x in block.axis]
    comp = block.complementarity
    if not comp or len(labels) < 2:
        return "<p class='muted'>not available (fewer than two budgets)</p>"
    head = "".join(f"<th>{esc(lab)}</th>" for lab in labels)
    body = []
    for a in labels:
        cells = []
        for b in labels:
            stat = comp.get(f"{a}|{b}") or comp.get(f"{b}|{a}")
            if a == b or stat is None:
                cells.append("<td class='num muted'>-</td>")
                continue
            value = float(stat.value or 0.0)
            shade = max(0.0, min(1.0, value / 0.2))
            cells.append(
                f"<td class='num' style='background: rgba(49,130,189,{shade:.2f})' "
                f"title='{esc(pts(stat, note))}'>{100 * value:.1f}</td>"
            )
        body.append(f"<tr><th>{esc(a)}</th>{''.join(cells)}</tr>")
    return (
        "<div class='scroll-x'><table class='comp'><thead><tr><th></th>"
        + head
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table></div><p class='muted'>pair oracle minus the better member, "
        "points</p>"
    )


def _text_overwrite(block: BinarySeries, note: str | None) -> str:
    counts = block.text_overwrite_counts
    if not block.n_text_only and counts is None:
        return "<p class='muted'>not available: the run has no text-only (0-frame) responses</p>"
    detail = ""
    if counts is not None:
        detail = (
            f" {counts.overwrite_transitions} of {counts.harmful_transitions} "
            f"harmful transitions ({counts.overwrite_items} of "
            f"{counts.harmful_items} harmful items) end on the text-only answer."
        )
    return (
        f"<p>Text overwrite rate: <b>{esc(pts(block.text_overwrite_rate, note))}</b>; item rate "
        f"{esc(pts(block.text_overwrite_item_rate, note))}.{esc(detail)}</p>"
    )


def _with_text_table(
    g: BinaryWithText | ContinuousWithText | None, kind: str, note: str | None
) -> str:
    """The `grid_with_text` block: the text-only answer on the axis as budget 0."""
    if g is None:
        return ""
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
    body = "".join(f"<tr><th>{esc(k)}</th><td class='num'>{esc(v)}</td></tr>" for k, v in rows)
    return (
        f"<h4>{esc(GRID_WITH_TEXT_TITLE[0].upper() + GRID_WITH_TEXT_TITLE[1:])}</h4>"
        "<p class='muted'>The table above keeps the text-only answer off the budget axis (which "
        "frame budget should I run?). Here it is budget 0, first on the axis (does any budget, "
        "including none, get the item right?): an item right blind and wrong with frames counts "
        "as harmed, and an item only the blind answer gets right counts towards the oracle.</p>"
        f"<table class='headline' data-block='{with_text}'><tbody>{body}</tbody></table>"
        "<p class='muted'>points, 95% interval; in brackets the count it is computed from</p>"
    )


def _continuous_table(block: ContinuousBlock, note: str | None) -> str:
    rows = [
        ("items on the matched grid", str(block.n_items)),
        ("items dropped", str(block.n_dropped)),
        ("score", str(block.metric)),
    ]
    rows += [(header, value) for header, value, _ in _measure_rows(block, "continuous", note)]
    body = "".join(f"<tr><th>{esc(k)}</th><td class='num'>{esc(v)}</td></tr>" for k, v in rows)
    return (
        f"<table class='headline' data-block='continuous'><tbody>{body}</tbody></table>"
        "<p class='muted'>points, 95% interval; in brackets the count it is computed from</p>"
    )


def same_input_note(block: BinaryBlock | ContinuousBlock) -> str:
    """Beside the curve: each step the same-input rule flags (`effective_budget`)."""
    return "".join(
        f"<p class='same-input'><strong>Same input:</strong> "
        f"{esc(entry.evidence.sentence)} (docs/measures.md, 'Budgets that add nothing')</p>"
        for entry in block.effective_budget or ()
    )


def _part(
    model: str,
    series: str,
    block: BinarySeries | ContinuousBlock,
    traj: pd.DataFrame,
    note: str | None,
) -> str:
    """Curve, heat map and headline numbers of one kind (binary or continuous) of one axis;
    `note` in place of the intervals of a block with too few videos."""
    kind = "binary" if isinstance(block, BinarySeries) else "continuous"
    labels = [str(x) for x in block.axis]
    stats = block.curve
    points = [point(stats.get(lab), note) for lab in labels]
    what = "accuracy" if isinstance(block, BinarySeries) else f"mean {block.metric}"
    curve = _grid_figures(block, what, note) or accuracy_curve(
        labels, points, title=f"{what} (points, 95% CI)", y_title=what
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
    legend = " ".join(
        f"<span class='tag'>{esc(PATTERN_NAMES.get(p, p))}: {int(counts.get(p, 0))}</span>"
        for p in PATTERNS
        if counts.get(p, 0)
    )
    with_step = int(counts.get("harmful", 0)) + int(counts.get("mixed", 0))
    complete = len(rows) - int(counts.get("incomplete", 0))
    legend += (
        f" <span class='muted'>(harmful only + mixed = <span class='pattern-count'>{with_step} "
        f"of {complete}</span> items with an answer at every budget: the harmful rate's "
        "count)</span>"
    )
    key_html = (
        "each pattern's band is at least one label tall, so a small group stays visible: band "
        "heights are not proportional to the counts; the labels give the counts"
    )
    table = (
        _headline_table(block, note)
        if isinstance(block, BinarySeries)
        else _continuous_table(block, note)
    )
    table += _with_text_table(block.grid_with_text, kind, note)
    title = "multiple choice" if kind == "binary" else "open-ended"
    return "".join(
        [
            f"<h3>{esc(model)} <span class='muted'>series {esc(series)}, {title}</span></h3>",
            "<div class='row'>",
            f"<div>{curve}{same_input_note(block)}</div><div>{heat}<p class='figure-note muted'>{key_html}</p></div>",
            f"<div>{table}</div>",
            "</div>",
            f"<p>Items by pattern: {legend}</p>",
        ]
    )


def _resolution_key(tag: str) -> tuple[float, str]:
    """Resolutions in size order: `56` < `112`, `76k` < `151k` (by the number they start with)."""
    found = re.match(r"\d+(?:\.\d+)?", tag)
    return (float(found.group()) if found else float("inf"), tag)


def _grid_figures(block: BinaryBlock | ContinuousBlock, what: str, note: str | None) -> str | None:
    """On a frames x resolution grid: one curve per resolution (its `frames@RES` chain) and the
    frames x resolution map of every budget; None on a single axis."""
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
    return f"{curves}<div>{grid}</div>"


def _chains_table(block: BinaryBlock, note: str | None) -> str:
    """A multi-axis grid: each chain's curve (each axis at each level of the others)."""
    order = block.order
    if order is None or not order.multi_axis or not block.chains:
        return ""
    rows = []
    for name, sub in block.chains.items():
        curve = ", ".join(f"{esc(str(lab))} {esc(pts(sub.curve[lab], note))}" for lab in sub.axis)
        rows.append(
            f"<tr><th>{esc(name)}</th><td>{curve}</td>"
            f"<td class='num'>{esc(pts(sub.harmful_rate, note))}</td></tr>"
        )
    return (
        "<h4>Each axis at each level of the others</h4><p class='muted'>A grid of frame counts "
        "and resolutions is not one axis: a budget is larger than another when it has at least "
        "as many frames and pixels per frame, and more of one (a partial order). Harmful rates, "
        "flips and terminal regressions above use that order; each chain below is one axis with "
        "the other fixed.</p><table class='headline'><thead><tr><th>chain</th><th>curve "
        "(points, 95% interval)</th><th>harmful rate</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def _series_name(entry: SeriesEntry) -> str:
    """The series a model's entry is shown as: the layout's `series` key, "default" where the
    entry has none (an open-ended series' entry keeps it in its continuous block)."""
    name = None if isinstance(entry, OpenEndedSeries) else entry.series
    return "default" if name is None else str(name)


def _others(entry: SeriesEntry) -> dict[str, SeriesEntry]:
    """A model's other series (none for a bare continuous block)."""
    return {} if isinstance(entry, ContinuousBlock) else dict(entry.other_series or {})


def _small_sample_warning(entry: SeriesEntry) -> str | None:
    return small_sample_text(entry)  # an open-ended series has no record of its own


def _series_section(
    model: str,
    series: str,
    entry: SeriesEntry,
    traj: pd.DataFrame,
    files: Mapping[str, SourceFile],
) -> str:
    """One series of one model. With too few videos (a `small_sample` record) its intervals,
    p-values, power figures and additive-model tests say "not estimable" (`interval_note`)."""
    warning = _small_sample_warning(entry)
    parts = [f"<p class='derived stale small-sample'><b>{esc(warning)}</b></p>"] if warning else []
    note = interval_note(entry)
    if isinstance(entry, AlternativesSeries):
        return "".join(parts) + alternatives_section(model, entry, files, note)
    parts += [
        f"<p class='derived stale'><b>warning:</b> {esc(w)}</p>"
        for w in getattr(entry, "axis_warnings", None) or ()
    ]
    if isinstance(entry, BinarySeries):
        parts += [
            _part(model, series, entry, traj, note),
            "<div class='row'><div><h3>Flips per adjacent pair</h3>",
            flip_bars(entry, note),
            "</div><div><h3>Complementarity</h3>",
            _complementarity(entry, note),
            "</div></div><h3>Text overwrite</h3>",
            _text_overwrite(entry, note),
            _chains_table(entry, note),
            inference_tables(entry, partial(pts, note=note), note),
        ]
    if isinstance(entry, BinarySeries | OpenEndedSeries) and entry.continuous is not None:
        parts.append(_part(model, series, entry.continuous, traj, note))
    elif isinstance(entry, ContinuousBlock):
        parts.append(_part(model, series, entry, traj, note))
    return "".join(parts)


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
) -> str:
    """Every model's series; `files` the source file of each imported configuration
    (`source_files`), to name those imported from one file."""
    models = measures.models
    if not models:
        return "<p class='muted'>no answered responses</p>"
    parts = [
        f"<p class='muted'>{esc(interval_method_text(measures.bootstrap))}"
        f"; {esc(str(measures.bootstrap.bootstrap))} resamples of "
        f"whole videos. Series: {esc(GLOSSARY['series'])}.</p>"
    ]
    for model, entry in models.items():
        parts.append(_series_section(model, _series_name(entry), entry, trajectories, files or {}))
        for series, other in _others(entry).items():
            parts.append(_series_section(model, str(series), other, trajectories, files or {}))
        if not isinstance(entry, ContinuousBlock):
            parts.append(churn_tables(entry, partial(pts, note=interval_note(entry))))
    return "".join(parts)


def headline_sentence(measures: AnalysisResult, comparison: PaperComparison | None) -> str:
    """The report's first line, computed from its numbers (`Headline`, the record the console's
    opening paragraph is written from too)."""
    return Headline.of(measures, comparison).text()


def comparison_section(comparison: PaperComparison | None) -> str:
    """The seed paper's published numbers beside itemscale's (comparison.json, as `make demo`
    writes it for the paper's released labels); nothing for other runs."""
    rows = comparison.rows if comparison is not None else ()
    if not rows:
        return ""
    same = sum(r.same for r in rows)
    body = "".join(
        f"<tr{'' if r.same else ' class=differs'}><td>{esc(r.model)}</td>"
        f"<td>{esc(r.measure)}</td><td class='num'>{r.paper:.2f}</td>"
        f"<td class='num'>{r.itemscale:.2f}</td>"
        f"<td>{'same' if r.same else 'differs by ' + format(r.itemscale - r.paper, '.2f')}</td></tr>"
        for r in rows
    )
    return (
        f"<h3>The seed paper's published numbers: {same} of {len(rows)} reproduced</h3>"
        "<p class='muted'>points; the paper's value from its release, itemscale's from this "
        "artifact's measures (the text-only answer as budget 0); 'same' means within 0.01 "
        "points</p><details><summary>every number</summary><table><thead><tr><th>model</th>"
        "<th>measure</th><th>paper</th><th>itemscale</th><th></th></tr></thead>"
        f"<tbody>{body}</tbody></table></details>"
    )
