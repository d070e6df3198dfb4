"""report.html: one self-contained page that answers "which items does a bigger budget hurt, why,
and how much compute can I save".

Everything on the page is built here from the artifact's own files (measures, trajectories,
responses, audit, cascade, intervention), so the page shows exactly the numbers `verify`
checks. Model outputs, item ids and model names are untrusted: text goes through `html.escape`,
the item table's data is a JSON block with `<`, `>` and `&` written as unicode escapes, the
script builds cells with `textContent`, and a Content-Security-Policy allows only the page's
own script.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import pandas as pd

from ..measures import GLOSSARY, GRID_WITH_TEXT_TITLE
from ._assets import CSS, JS, script_hash
from ._svg import accuracy_curve, esc, flip_bars, frontier, heatmap
from ._trajectories import KEY_COLUMNS, PATTERNS

ROW_LIMIT: Final[int] = 2000
GALLERY_LIMIT: Final[int] = 60
OUTPUT_CHARS: Final[int] = 400


@dataclass(frozen=True)
class ReportInputs:
    measures: dict[str, Any]
    trajectories: pd.DataFrame
    responses: pd.DataFrame
    provenance: dict[str, Any]
    audit: pd.DataFrame | None = None
    annotations: pd.DataFrame | None = None
    sheets: Mapping[str, bytes] = field(default_factory=dict)
    cascade: dict[str, Any] | None = None
    intervention: Mapping[str, dict[str, Any]] | None = None
    run: dict[str, Any] = field(default_factory=dict)
    title: str = "itemscale report"
    #: item id -> question text (from the artifact's items.jsonl, when it has one)
    questions: Mapping[str, str] = field(default_factory=dict)


def json_for_script(payload: Any) -> str:
    """JSON safe inside <script type="application/json">: no `<`, `>` or `&` survives, so no
    `</script>` or `<!--` in a model output can end the block."""
    text = json.dumps(payload, ensure_ascii=False, allow_nan=False, default=str)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _pts(stat: Any) -> str:
    if not isinstance(stat, dict) or stat.get("value") is None:
        return "n/a"
    text = f"{100 * float(stat['value']):.1f}"
    ci = stat.get("ci")
    if isinstance(ci, list | tuple) and len(ci) == 2 and ci[0] is not None:
        text += f" [{100 * float(ci[0]):.1f}, {100 * float(ci[1]):.1f}]"
    return text


def _stat_pair(stat: Any) -> tuple[float | None, tuple[float, float] | None]:
    if not isinstance(stat, dict) or stat.get("value") is None:
        return None, None
    ci = stat.get("ci")
    pair = (float(ci[0]), float(ci[1])) if isinstance(ci, list | tuple) and len(ci) == 2 else None
    return float(stat["value"]), pair


def _headline_table(block: dict[str, Any]) -> str:
    rows = [
        ("items on the matched grid", str(block.get("n_items", "n/a")), "matched grid"),
        (
            "items dropped (reasons)",
            f"{block.get('n_dropped', 0)} {block.get('drop_reasons') or ''}",
            None,
        ),
        (
            "best fixed budget",
            f"{block.get('best_fixed', {}).get('config', 'n/a')}: {_pts(block.get('best_fixed'))}",
            "best fixed",
        ),
        ("oracle (any budget right)", _pts(block.get("oracle")), "oracle"),
        ("oracle headroom", _pts(block.get("oracle_headroom")), "oracle headroom"),
        ("harmful rate", _pts(block.get("harmful_rate")), "harmful rate"),
        ("beneficial rate", _pts(block.get("beneficial_rate")), "beneficial rate"),
        (
            "terminal regression rate",
            _pts(block.get("terminal_regression_rate")),
            "terminal regression",
        ),
        ("text-answerable rate", _pts(block.get("text_answerable_rate")), "text-answerable"),
        (
            "text overwrite rate (harmful transitions)",
            _pts(block.get("text_overwrite_rate")),
            "text overwrite",
        ),
    ]
    body = "".join(
        f"<tr><th>{esc(k)}</th><td class='num'>{esc(v)}</td>"
        f"<td class='muted'>{esc(GLOSSARY[term]) if term else ''}</td></tr>"
        for k, v, term in rows
    )
    return (
        "<h4>Visual budgets only</h4><p class='muted'>the text-only answer is a baseline beside "
        "the axis, not a budget</p>"
        f"<table class='headline'><tbody>{body}</tbody></table>"
        "<p class='muted'>points, 95% interval</p>"
    )


def _complementarity(block: dict[str, Any]) -> str:
    labels = [str(x) for x in block.get("axis", [])]
    comp = block.get("complementarity", {})
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
            value = float(stat.get("value") or 0.0)
            shade = max(0.0, min(1.0, value / 0.2))
            cells.append(
                f"<td class='num' style='background: rgba(49,130,189,{shade:.2f})' "
                f"title='{esc(_pts(stat))}'>{100 * value:.1f}</td>"
            )
        body.append(f"<tr><th>{esc(a)}</th>{''.join(cells)}</tr>")
    return (
        "<table class='comp'><thead><tr><th></th>"
        + head
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table><p class='muted'>pair oracle minus the better member, points</p>"
    )


def _text_overwrite(block: dict[str, Any]) -> str:
    counts = block.get("text_overwrite_counts")
    if not block.get("n_text_only") and not counts:
        return "<p class='muted'>not available: the run has no text-only (0-frame) responses</p>"
    detail = ""
    if isinstance(counts, dict):
        detail = (
            f" {counts.get('overwrite_transitions', 0)} of {counts.get('harmful_transitions', 0)} "
            f"harmful transitions ({counts.get('overwrite_items', 0)} of "
            f"{counts.get('harmful_items', 0)} harmful items) end on the text-only answer."
        )
    return (
        f"<p>Text overwrite rate: <b>{esc(_pts(block.get('text_overwrite_rate')))}</b>; item rate "
        f"{esc(_pts(block.get('text_overwrite_item_rate')))}.{esc(detail)}</p>"
    )


def _with_text_table(g: dict[str, Any] | None, kind: str) -> str:
    """The `grid_with_text` block: the text-only answer on the axis as budget 0."""
    if not isinstance(g, dict):
        return ""
    best = g.get("best_fixed", {})
    reasons = g.get("drop_reasons") or {}
    dropped = str(g.get("n_dropped", 0)) + (
        " (" + ", ".join(f"{k}: {v}" for k, v in sorted(reasons.items())) + ")" if reasons else ""
    )
    rows = [
        ("grid", " < ".join(str(c) for c in g.get("configs", []))),
        ("items on this grid", str(g.get("n_items", "n/a"))),
        ("items dropped", dropped),
        ("best fixed", f"{best.get('config', 'n/a')}: {_pts(best)}"),
    ]
    if kind == "binary":
        rows += [
            ("oracle", _pts(g.get("oracle"))),
            ("oracle headroom", _pts(g.get("oracle_headroom"))),
            ("harmful rate (the paper's visual confusion)", _pts(g.get("harmful_rate"))),
            ("overwrite rate", _pts(g.get("overwrite_rate"))),
        ]
    else:
        rows += [
            ("oracle score", _pts(g.get("oracle_score"))),
            ("oracle gap", _pts(g.get("oracle_gap"))),
            (f"harmful rate (drop > {g.get('eps', 0.1)})", _pts(g.get("harmful_rate_eps"))),
            (f"overwrite rate (drop > {g.get('eps', 0.1)})", _pts(g.get("overwrite_rate_eps"))),
        ]
    body = "".join(f"<tr><th>{esc(k)}</th><td class='num'>{esc(v)}</td></tr>" for k, v in rows)
    return (
        f"<h4>{esc(GRID_WITH_TEXT_TITLE[0].upper() + GRID_WITH_TEXT_TITLE[1:])}</h4>"
        "<p class='muted'>The table above keeps the text-only answer off the budget axis (which "
        "frame budget should I run?). Here it is budget 0, first on the axis (does any budget, "
        "including none, get the item right?): an item right blind and wrong with frames counts "
        "as harmed, and an item only the blind answer gets right counts towards the oracle.</p>"
        f"<table class='headline'><tbody>{body}</tbody></table>"
        "<p class='muted'>points, 95% interval</p>"
    )


def _continuous_table(block: dict[str, Any]) -> str:
    best = block.get("best_fixed", {})
    rows = [
        ("items on the matched grid", str(block.get("n_items", "n/a"))),
        ("items dropped", str(block.get("n_dropped", 0))),
        ("score", str(block.get("metric", "score"))),
        ("best fixed budget", f"{best.get('config', 'n/a')}: {_pts(best)}"),
        ("oracle score", _pts(block.get("oracle_score"))),
        ("oracle gap", _pts(block.get("oracle_gap"))),
        (f"harmful rate (drop > {block.get('eps', 0.1)})", _pts(block.get("harmful_rate_eps"))),
        ("beneficial rate", _pts(block.get("beneficial_rate_eps"))),
        ("text-only mean score", _pts(block.get("text_mean_score"))),
    ]
    body = "".join(f"<tr><th>{esc(k)}</th><td class='num'>{esc(v)}</td></tr>" for k, v in rows)
    return f"<table class='headline'><tbody>{body}</tbody></table><p class='muted'>points, 95% interval</p>"


def _part(
    model: str,
    series: str,
    block: dict[str, Any],
    traj: pd.DataFrame,
    kind: str,
) -> str:
    """Curve, heat map and headline numbers of one kind (binary or continuous) of one axis."""
    labels = [str(x) for x in block.get("axis", [])]
    key = "accuracy" if kind == "binary" else "mean_score"
    stats = block.get(key) or {}
    points = [_stat_pair(stats.get(lab)) for lab in labels]
    what = "accuracy" if kind == "binary" else f"mean {block.get('metric', 'score')}"
    curve = accuracy_curve(labels, points, title=f"{what} (points, 95% CI)")
    rows = traj[(traj["model"] == model) & (traj["series"] == series) & (traj["kind"] == kind)]
    cols = [lab for lab in labels if lab in rows.columns]
    values = rows[cols].to_numpy(dtype=float) if len(rows) else np.zeros((0, len(cols)))
    heat = heatmap(
        cols, values, rows["pattern"].astype(str).tolist(), PATTERNS, binary=kind == "binary"
    )
    counts = rows["pattern"].value_counts()
    legend = " ".join(
        f"<span class='tag'>{esc(p.replace('_', ' '))}: {int(counts.get(p, 0))}</span>"
        for p in PATTERNS
        if counts.get(p, 0)
    )
    key_html = (
        "<span style='background:#1a9850'>right</span><span style='background:#d73027'>wrong"
        "</span><span style='background:#ccc;color:#222'>no answer</span>"
        if kind == "binary"
        else "<span style='background:#3182bd'>darker = higher score</span>"
        "<span style='background:#ccc;color:#222'>no answer</span>"
    )
    table = _headline_table(block) if kind == "binary" else _continuous_table(block)
    table += _with_text_table(block.get("grid_with_text"), kind)
    title = "multiple choice" if kind == "binary" else "open-ended"
    return "".join(
        [
            f"<h3>{esc(model)} <span class='muted'>series {esc(series)}, {title}</span></h3>",
            "<div class='row'>",
            f"<div>{curve}</div><div>{heat}<div class='legend muted'>{key_html}</div></div>",
            f"<div>{table}</div>",
            "</div>",
            f"<p>Items by pattern: {legend}</p>",
        ]
    )


def _chains_table(block: dict[str, Any], key: str) -> str:
    """A multi-axis grid: each chain's curve (each axis at each level of the others)."""
    order = block.get("order") or {}
    chains = block.get("chains") or {}
    if not order.get("multi_axis") or not chains:
        return ""
    rows = []
    for name, sub in chains.items():
        curve = ", ".join(f"{esc(str(lab))} {esc(_pts(sub[key][lab]))}" for lab in sub["axis"])
        rate = sub.get("harmful_rate") or sub.get("harmful_rate_eps")
        rows.append(
            f"<tr><th>{esc(name)}</th><td>{curve}</td><td class='num'>{esc(_pts(rate))}</td></tr>"
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


def _series_section(model: str, series: str, block: dict[str, Any], traj: pd.DataFrame) -> str:
    parts = []
    if block.get("kind") == "binary":
        parts += [
            _part(model, series, block, traj, "binary"),
            "<div class='row'><div><h3>Flips per adjacent pair</h3>",
            flip_bars(block),
            "</div><div><h3>Complementarity</h3>",
            _complementarity(block),
            "</div></div><h3>Text overwrite</h3>",
            _text_overwrite(block),
            _chains_table(block, "accuracy"),
        ]
    if isinstance(block.get("continuous"), dict):
        parts.append(_part(model, series, block["continuous"], traj, "continuous"))
    elif block.get("kind") == "continuous":
        parts.append(_part(model, series, block, traj, "continuous"))
    return "".join(parts)


def interval_method_text(boot: Mapping[str, Any]) -> str:
    """How the report's intervals were made, in words (docs/measures.md, "Uncertainty")."""
    if boot.get("interval", "percentile") == "bca":
        return (
            "95% intervals: BCa (bias-corrected and accelerated) for rates and accuracies; for "
            "best fixed, oracle headroom, oracle gap and complementarity a percentile interval "
            "corrected for the optimism of choosing the best budget (winner's curse)"
        )
    return "95% intervals: percentile"


def _measures_section(inputs: ReportInputs) -> str:
    models = inputs.measures.get("models", {})
    if not models:
        return "<p class='muted'>no answered responses</p>"
    parts = [
        f"<p class='muted'>{esc(interval_method_text(inputs.measures.get('bootstrap', {})))}"
        f"; {esc(str(inputs.measures.get('bootstrap', {}).get('n_boot', '?')))} resamples of "
        f"whole videos. Series: {esc(GLOSSARY['series'])}.</p>"
    ]
    for model, block in models.items():
        parts.append(
            _series_section(model, str(block.get("series", "default")), block, inputs.trajectories)
        )
        for series, other in block.get("other_series", {}).items():
            parts.append(_series_section(model, str(series), other, inputs.trajectories))
    return "".join(parts)


def _cascade_section(cascade: dict[str, Any] | None) -> str:
    if not cascade:
        return "<p class='muted'>not run (no cascade.json in the run directory; run <code>itemscale cascade RUN_DIR</code>)</p>"
    parts = [
        f"<p class='muted'>Mean shared cost: {esc(GLOSSARY['shared frame cost'])}. Frontier: "
        f"{esc(GLOSSARY['frontier'])}.</p>"
    ]
    for result in cascade.get("results", []):
        name = f"{result.get('model', '?')} / {result.get('series', '?')}"
        series: list[tuple[str, list[tuple[float, float]]]] = []
        front = [
            (float(p["mean_cost"]), float(p["accuracy"]))
            for p in result.get("frontier", [])
            if p.get("mean_cost") is not None and p.get("accuracy") is not None
        ]
        if front:
            series.append(("confidence frontier", front))
        sweep = [
            (float(p["mean_cost"]), float(p["accuracy"]))
            for p in result.get("threshold_sweep", [])
            if p.get("mean_cost") is not None and p.get("accuracy") is not None
        ]
        if sweep:
            series.append(("threshold sweep", sweep))
        rows = []
        for pname, pol in result.get("policies", {}).items():
            if not isinstance(pol, dict):
                continue
            if not pol.get("available", True):
                rows.append(
                    f"<tr><td>{esc(pname)}</td><td colspan='4' class='muted'>{esc(pol.get('reason', 'not available'))}</td></tr>"
                )
                continue
            acc, cost = _stat_pair(pol.get("accuracy")), _stat_pair(pol.get("mean_cost"))
            if acc[0] is not None and cost[0] is not None:
                series.append((pname, [(cost[0], acc[0])]))
            mc = pol.get("mean_cost") or {}
            rows.append(
                f"<tr><td>{esc(pname)}</td><td class='num'>{esc(_pts(pol.get('accuracy')))}</td>"
                f"<td class='num'>{esc(mc.get('value') if isinstance(mc, dict) else 'n/a')}</td>"
                f"<td class='num'>{esc(_pts(pol.get('cost_reduction')))}</td>"
                f"<td>{esc(pol.get('description', ''))}</td></tr>"
            )
        terminal = result.get("terminal", {})
        if terminal.get("mean_cost") is not None and terminal.get("accuracy") is not None:
            t_acc = terminal["accuracy"]
            t_val = t_acc.get("value") if isinstance(t_acc, dict) else t_acc
            if t_val is not None:
                series.append(
                    (
                        f"fixed {terminal.get('label', 'terminal')}",
                        [(float(_scalar(terminal["mean_cost"])), float(t_val))],
                    )
                )
        cost_basis = result.get("cost", {}).get("primary", "frames")
        parts.append(f"<h3>{esc(name)}</h3><div class='row'><div>")
        parts.append(
            frontier(series, x_label=f"mean shared cost ({cost_basis})")
            or "<p class='muted'>no frontier points</p>"
        )
        parts.append(
            "</div><div><table><thead><tr><th>policy</th><th>accuracy (held out)</th><th>mean cost</th>"
            "<th>cost reduction</th><th>what it does</th></tr></thead><tbody>"
            + "".join(rows)
            + "</tbody></table></div></div>"
        )
    for skip in cascade.get("skipped", []):
        parts.append(
            f"<p class='muted'>skipped {esc(skip.get('model'))} / {esc(skip.get('series'))}: {esc(skip.get('reason'))}</p>"
        )
    return "".join(parts) or "<p class='muted'>cascade.json has no results</p>"


def _scalar(value: Any) -> float:
    if isinstance(value, dict):
        return float(value.get("value") or 0.0)
    return float(value)


def _find_stats(obj: Any, path: str, out: list[tuple[str, Any]]) -> None:
    if isinstance(obj, dict):
        if "value" in obj and set(obj) <= {"value", "ci", "n", "count", "numerator", "denominator"}:
            out.append((path, obj))
            return
        for k, v in obj.items():
            _find_stats(v, f"{path}.{k}" if path else str(k), out)
    elif isinstance(obj, list):
        for n, v in enumerate(obj):
            _find_stats(v, f"{path}[{n}]", out)


def _one_intervention(name: str, result: dict[str, Any]) -> str:
    if "recovered_rate" not in result:
        found: list[tuple[str, Any]] = []
        _find_stats(result, "", found)
        found_rows = "".join(
            f"<tr><td>{esc(path)}</td><td class='num'>{esc(_pts(stat))}</td></tr>"
            for path, stat in found
        )
        return (
            f"<h3>{esc(name)}</h3><table class='intervention'><thead><tr><th>measure</th>"
            f"<th>points, 95% CI</th></tr></thead><tbody>{found_rows}</tbody></table>"
        )
    reg = result.get("regressions") or {}
    ctl = result.get("controls") or {}
    rows = [
        ("recovered rate (terminal regressions now right)", _pts(result.get("recovered_rate"))),
        ("broken rate (control items now wrong)", _pts(result.get("broken_rate"))),
        ("net accuracy change (estimate)", _pts(result.get("net_accuracy_change_estimate"))),
    ]
    body = "".join(f"<tr><td>{esc(k)}</td><td class='num'>{esc(v)}</td></tr>" for k, v in rows)
    counts = (
        f"terminal regressions: {reg.get('n_answered', '?')} answered of "
        f"{reg.get('n_planned', '?')} planned ({reg.get('n_failed', 0)} failed); controls: "
        f"{ctl.get('n_answered', '?')} answered of {ctl.get('n_planned', '?')} planned "
        f"({ctl.get('n_failed', 0)} failed)"
    )
    items = [r for r in result.get("items", []) if isinstance(r, dict)][:GALLERY_LIMIT]
    item_rows = "".join(
        f"<tr><td>{esc(r.get('item_id'))}</td><td>{esc(r.get('group'))}</td>"
        f"<td>{esc(r.get('answer_before'))}</td><td>{esc(r.get('answer_after'))}</td>"
        f"<td class='num'>{esc(r.get('after'))}</td><td>{esc(r.get('status'))}</td></tr>"
        for r in items
    )
    return (
        f"<h3>{esc(name)} <span class='muted'>{esc(result.get('model', ''))}, terminal budget "
        f"{esc(result.get('terminal_label', '?'))}</span></h3>"
        f"<p>{esc(result.get('description', ''))}</p>"
        f"<table class='intervention'><thead><tr><th>measure</th><th>points, 95% CI</th></tr>"
        f"</thead><tbody>{body}</tbody></table><p class='muted'>{esc(counts)}</p>"
        + (
            "<details><summary>items</summary><table><thead><tr><th>item</th><th>group</th>"
            "<th>answer before</th><th>answer after</th><th>correct after</th><th>status</th>"
            f"</tr></thead><tbody>{item_rows}</tbody></table></details>"
            if item_rows
            else ""
        )
    )


def _intervention_section(intervention: Mapping[str, dict[str, Any]] | None) -> str:
    if not intervention:
        return (
            "<p class='muted'>not run (no RUN_DIR/intervention/&lt;policy&gt;.json; run "
            "<code>itemscale intervene RUN_DIR --policy nested</code>)</p>"
        )
    return "".join(_one_intervention(name, result) for name, result in sorted(intervention.items()))


def _audit_section(inputs: ReportInputs) -> str:
    audit = inputs.audit
    if audit is None:
        return "<p class='muted'>not run (no audit.parquet; run <code>itemscale audit RUN_DIR --sheets</code>)</p>"
    if audit.empty:
        return "<p>No harmful transitions to audit.</p>"
    counts = audit.groupby(["model", "series", "pathway"]).size().reset_index(name="n")
    rows = "".join(
        f"<tr><td>{esc(c.model)}</td><td>{esc(c.series)}</td><td>{esc(c.pathway)}</td>"
        f"<td class='num'>{int(str(c.n))}</td></tr>"
        for c in counts.itertuples(index=False)
    )
    human: dict[str, list[str]] = {}
    ann = inputs.annotations
    if ann is not None and not ann.empty:
        for rec in ann[ann["source"] == "human"].itertuples(index=False):
            note = f" ({rec.note!s})" if rec.note else ""
            human.setdefault(str(rec.transition_id), []).append(
                f"{rec.coder!s}: {rec.label!s}{note}"
            )
    cards = []
    shown = audit.sort_values(["pathway", "model", "series", "item_id"], kind="stable").head(
        GALLERY_LIMIT
    )
    for t in shown.itertuples(index=False):
        img = ""
        png = inputs.sheets.get(str(t.transition_id))
        if png:
            uri = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
            img = f"<img class='sheet' alt='frames at {esc(t.from_label)} (left) and {esc(t.to_label)} (right)' src='{uri}'>"
        ev = (
            f"evidence frames {t.evidence_from} at j, {t.evidence_to} at k"
            if bool(t.evidence_known)
            else "no evidence spans"
        )
        labels = "".join(f"<li>{esc(h)}</li>" for h in human.get(str(t.transition_id), []))
        cards.append(
            f"<div class='card' data-transition='{esc(t.transition_id)}'>"
            f"<div><span class='tag'>{esc(t.pathway)}</span><b>{esc(t.item_id)}</b> "
            f"<span class='muted'>{esc(t.model)} / {esc(t.series)}: {esc(t.from_label)} -> {esc(t.to_label)}</span></div>"
            f"<div>frames kept {t.n_kept}, dropped {t.n_dropped}, added {t.n_added}; pixels/frame "
            f"{esc(_shown(t.pixels_from))} -> {esc(_shown(t.pixels_to))}; {esc(ev)}; answer "
            f"{esc(_shown(t.from_answer))} -> {esc(_shown(t.to_answer))} "
            f"(text-only {esc(_shown(t.text_answer, 'not run'))})</div>"
            f"<div class='muted'>rule: {esc(t.reason)}</div>"
            + (f"<div>human labels:<ul>{labels}</ul></div>" if labels else "")
            + img
            + "</div>"
        )
    more = len(audit) - len(shown)
    return (
        "<table><thead><tr><th>model</th><th>series</th><th>pathway</th><th>transitions</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
        "<p class='legend muted'>contact sheets: budget j left, k right; <span style='background:#969696'>kept</span>"
        "<span style='background:#d73027'>dropped</span><span style='background:#3182bd'>added</span>"
        "<span style='background:#1a9850'>evidence</span></p>"
        f"<div class='gallery'>{''.join(cards)}</div>"
        + (f"<p class='muted'>{more} more transitions in audit.parquet</p>" if more > 0 else "")
    )


QUESTION_CHARS = 160


def _shown(value: Any, missing: str = "not recorded") -> str:
    """A value for a reader: `None`/NaN say what they mean instead of printing "None"."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return missing
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _clean(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, float | np.floating):
        return None if np.isnan(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return str(value)


def item_table_payload(
    traj: pd.DataFrame, responses: pd.DataFrame, questions: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Columns and rows of the sortable item table: the question, the gold answer, the
    text-only answer, outcomes, answers and the last output."""
    labels = [c for c in traj.columns if c not in (*KEY_COLUMNS, "text_only")]
    base = responses[responses["repeat"] == 0]
    # plain object arrays: iterating Arrow-backed pandas columns element by element is slow
    col = {
        c: base[c].to_numpy(dtype=object)
        for c in ("model", "series", "item_id", "config_label", "answer", "raw_text", "reference")
    }
    gold_of: dict[tuple[Any, Any], Any] = {}
    text_answer_of: dict[tuple[Any, Any], Any] = {}
    frames_all = base["frames"].to_numpy()
    for r in range(len(base)):
        key2 = (col["model"][r], col["item_id"][r])
        if col["reference"][r] is not None and not pd.isna(col["reference"][r]):
            gold_of.setdefault(key2, col["reference"][r])
        if frames_all[r] == 0:
            text_answer_of.setdefault(key2, col["answer"][r])
    answer_of = dict(
        zip(
            zip(col["model"], col["series"], col["item_id"], col["config_label"], strict=True),
            col["answer"],
            strict=True,
        )
    )
    # the output at the largest budget: walk the rows in axis order, the last one wins
    order = np.argsort(base["axis_order"].to_numpy(dtype=float), kind="stable")
    on_grid = base["frames"].to_numpy() > 0
    last_text: dict[tuple[Any, Any, Any], Any] = {}
    for r in order[on_grid[order]].tolist():
        last_text[(col["model"][r], col["series"][r], col["item_id"][r])] = col["raw_text"][r]
    columns: list[dict[str, Any]] = [
        {"label": "model", "kind": "text"},
        {"label": "series", "kind": "text"},
        {"label": "item", "kind": "text"},
        {"label": "video", "kind": "text"},
        {"label": "pattern", "kind": "text"},
        {"label": "task", "kind": "text"},
        {"label": "text-only", "kind": "outcome"},
        {"label": "question", "kind": "text"},
        {"label": "gold", "kind": "text"},
        {"label": "text-only answer", "kind": "text"},
    ]
    columns += [{"label": lab, "kind": "outcome"} for lab in labels]
    columns += [{"label": f"answer @ {lab}", "kind": "text"} for lab in labels]
    columns.append({"label": "output @ largest budget", "kind": "text"})
    keys = traj[["model", "series", "item_id", "video_id", "pattern", "kind"]].to_numpy(
        dtype=object
    )
    numbers = traj[["text_only", *labels]].to_numpy(dtype=float)
    as_objects = numbers.astype(object)
    as_objects[np.isnan(numbers)] = None
    numbers_json = as_objects.tolist()
    rows = []
    for n, key_row in enumerate(keys.tolist()):
        key = (key_row[0], key_row[1], key_row[2])
        row = [_clean(v) for v in key_row]
        item_key = (key_row[0], key_row[2])
        row += numbers_json[n][:1]
        question = (questions or {}).get(str(key_row[2]))
        row += [
            None if question is None else question[:QUESTION_CHARS],
            _clean(gold_of.get(item_key)),
            _clean(text_answer_of.get(item_key)),
        ]
        row += numbers_json[n][1:]
        row += [_clean(answer_of.get((*key, lab))) for lab in labels]
        out = last_text.get(key)
        row.append(None if out is None or pd.isna(out) else str(out)[:OUTPUT_CHARS])
        rows.append(row)
    return {
        "columns": columns,
        "rows": rows,
        "patterns": [p for p in PATTERNS if p in set(traj["pattern"])],
        "models": sorted({str(m) for m in traj["model"]}),
        "pattern_col": 4,
        "kind_col": 5,
        "model_col": 0,
        "row_limit": ROW_LIMIT,
    }


def _key_values(value: Any, depth: int = 0) -> str:
    """A JSON value as nested key: value lines, readable rather than an escaped JSON string."""
    if isinstance(value, dict):
        if not value:
            return "<span class='muted'>(none)</span>"
        items = "".join(
            f"<li><b>{esc(str(k))}</b>: {_key_values(v, depth + 1)}</li>"
            for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
        )
        return f"<ul class='kv'>{items}</ul>"
    if isinstance(value, list):
        return esc(
            ", ".join(json.dumps(v) if isinstance(v, dict | list) else str(v) for v in value)
        )
    return esc("null" if value is None else str(value))


def _provenance_section(prov: dict[str, Any], measures: dict[str, Any], run: dict[str, Any]) -> str:
    tool = prov.get("tool", {})
    boot = measures.get("bootstrap", {})
    rows = [
        (
            "itemscale",
            f"{tool.get('version', '?')} (commit {tool.get('git_commit') or 'unknown'}{' + local edits' if tool.get('git_dirty') else ''})",
        ),
        ("host", str(prov.get("host", {}).get("hostname", "?"))),
        ("artifact written", str(prov.get("times", {}).get("artifact_written", "?"))),
        (
            "bootstrap",
            f"{boot.get('n_boot', '?')} video resamples, seed {boot.get('seed', '?')}; "
            f"{interval_method_text(boot)}",
        ),
        (
            "responses sha256",
            str(prov.get("inputs", {}).get("responses.parquet", {}).get("sha256", "?")),
        ),
    ]
    nested: list[tuple[str, Any]] = []
    specs = run.get("model_specs")
    if isinstance(specs, dict):
        for entry in specs.values():
            if isinstance(entry, dict):
                nested.append((f"model {entry.get('name', '?')}", entry.get("spec")))
    if run.get("decoder"):
        nested.append(("decoder (run)", run["decoder"]))
    protocol = run.get("protocol")
    if isinstance(protocol, dict) and isinstance(protocol.get("benchmark"), dict):
        nested.append(("benchmark", protocol["benchmark"]))
    body = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows)
    body += "".join(f"<tr><th>{esc(k)}</th><td>{_key_values(v)}</td></tr>" for k, v in nested)
    return (
        f"<table><tbody>{body}</tbody></table><p>Every number here is recomputed from "
        "<code>responses.parquet</code> by <code>itemscale verify ARTIFACT</code>; README.md lists "
        "the commands.</p>"
    )


def render_report(inputs: ReportInputs) -> str:
    payload = item_table_payload(inputs.trajectories, inputs.responses, inputs.questions)
    csp = (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src {script_hash(JS)}; base-uri 'none'; form-action 'none'"
    )
    n_items = inputs.trajectories[["model", "series", "item_id"]].drop_duplicates().shape[0]
    models = ", ".join(sorted({str(m) for m in inputs.trajectories["model"]}))
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{esc(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{esc(inputs.title)}</title>
<style>{CSS}</style>
</head>
<body>
<header>
<h1>{esc(inputs.title)}</h1>
<div class="muted">models: {esc(models)}; {n_items} item trajectories</div>
<nav><a href="#measures">curves and trajectories</a><a href="#cascade">compute savings</a><a href="#intervention">intervention</a><a href="#audit">frame audit</a><a href="#items">items</a><a href="#provenance">provenance</a></nav>
</header>
<main>
<section id="measures"><h2>Which items does a bigger budget hurt?</h2>{_measures_section(inputs)}</section>
<section id="cascade"><h2>How much compute can I save? (cascade and stopping policies)</h2>{_cascade_section(inputs.cascade)}</section>
<section id="intervention"><h2>Sampling intervention</h2>{_intervention_section(inputs.intervention)}</section>
<section id="audit"><h2>Why? The frame audit</h2>{_audit_section(inputs)}</section>
<section id="items"><h2>Items</h2>
<div class="controls"><input id="item-filter" type="search" placeholder="filter: item, answer, output..." aria-label="filter items"><select id="pattern-filter" aria-label="pattern"></select><select id="model-filter" aria-label="model"></select><span id="item-count" class="muted"></span></div>
<div class="table-wrap"><table id="item-table"></table></div>
<noscript><p>The item table needs JavaScript; the same data is in trajectories.parquet.</p></noscript>
</section>
<section id="provenance"><h2>Provenance</h2>{_provenance_section(inputs.provenance, inputs.measures, inputs.run)}</section>
</main>
<script type="application/json" id="itemscale-data">{json_for_script(payload)}</script>
<script>{JS}</script>
</body>
</html>
"""
