"""The report's sections on what to do about the budget: compute savings (the cascade and
stopping rules, `cascade.json`) and the sampling intervention (`intervention/<intervention>.json`).

Both read a result file another command wrote, validated on loading (`CascadeReport.load`,
`InterventionResult.load`): a file that does not fit its layout is named with the key at fault
in its section, and the one-file intervention layout of older runs is shown as the statistics it
holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..analysis.measures import GLOSSARY, Estimate, counted_text
from ..analysis.policies import (
    AvailableRule,
    CascadeBlock,
    CascadeReport,
    GroupCounts,
    InterventionResult,
    ReportFileError,
    fixed_budget_note,
    rule_label,
)
from ._escape import esc
from ._figures import frontier
from ._html_measures import pts

#: How the cost-accuracy figure names the threshold sweep: chosen on the items it scores.
IN_SAMPLE = "threshold sweep (in-sample)"


def _stat(stat: Estimate | None) -> dict[str, Any] | None:
    return None if stat is None else stat.as_json()


def cascade_section(cascade: CascadeReport | ReportFileError | None) -> str:
    if cascade is None:
        return "<p class='muted'>not run (no cascade.json in the run directory; run <code>itemscale cascade RUN_DIR</code>)</p>"
    if isinstance(cascade, ReportFileError):
        return (
            f"<p class='muted'>cascade.json cannot be read: {esc(str(cascade))}; run "
            "<code>itemscale cascade RUN_DIR</code> to write it anew</p>"
        )
    parts = [
        f"<p class='muted'>Cost model: {esc(GLOSSARY['cost model'])}. Matches terminal: "
        f"{esc(GLOSSARY['matches terminal'])}. Frontier: {esc(GLOSSARY['frontier'])}.</p>"
    ]
    for result in cascade.results:
        name = f"{result.model} / {result.series}"
        primary = result.cost.primary
        series: list[tuple[str, list[tuple[float, float]]]] = []
        front = [(p.mean_cost, p.accuracy) for p in result.frontier]
        if front:
            series.append(("confidence frontier (held out)", front))
        sweep = [(p.mean_cost, p.accuracy) for p in result.threshold_sweep]
        if sweep:
            series.append((IN_SAMPLE, sweep))
        rows = []
        for pname, pol in result.policies.items():
            if not isinstance(pol, AvailableRule):
                rows.append(
                    f"<tr><td>{esc(pname)}</td><td colspan='4' class='muted'>{esc(pol.reason)}</td></tr>"
                )
                continue
            acc, cost = pol.accuracy.value, pol.mean_cost.value
            if acc is not None and cost is not None:
                series.append((f"{rule_label(pname, pol)} (held out)", [(cost, acc)]))
            mean = pol.mean_cost.value
            bound = pol.unshared.cost_reduction(primary) if pol.unshared is not None else None
            match = "matches" if pol.matches_terminal else "below"
            rows.append(
                f"<tr><td>{esc(pname)}</td><td class='num'>{esc(counted_text(_stat(pol.accuracy)))}</td>"
                f"<td class='num'>{esc(pts(_stat(pol.accuracy_change)))} ({match})</td>"
                f"<td class='num'>{esc('n/a' if mean is None else f'{mean:.1f}')}</td>"
                f"<td class='num'>{esc(pts(_stat(pol.cost_reduction)))}"
                + (
                    f"<br><span class='muted'>nothing shared: {esc(pts(_stat(bound)))}</span>"
                    if bound
                    else ""
                )
                + f"</td><td>{esc(pol.description)}"
                + (
                    f"<br><b>{esc(fixed_budget_note(pname, pol))}</b>"
                    if fixed_budget_note(pname, pol)
                    else ""
                )
                + "</td></tr>"
            )
        terminal = result.terminal
        if terminal.mean_cost.value is not None and terminal.accuracy.value is not None:
            series.append(
                (f"fixed {terminal.label}", [(terminal.mean_cost.value, terminal.accuracy.value)])
            )
        cost_basis = primary
        parts.append(f"<h3>{esc(name)}</h3>")
        parts.append(f"<p>{esc(_cost_sentence(result))} {esc(_best_sentence(result))}</p>")
        parts.append("<div class='row'><div>")
        parts.append(
            frontier(series, x_label=f"mean cost per item ({cost_basis})", dashed=(IN_SAMPLE,))
            or "<p class='muted'>no frontier points</p>"
        )
        if sweep:
            parts.append(
                "<p class='muted'>Held out: each policy and the frontier are fitted on one half "
                "of the videos and scored on the other, then the halves swap. The dashed threshold sweep is "
                "<b>in-sample</b>: every one of 128 shared thresholds scored on all items and "
                "only the best kept, so it is optimistic and no policy can be expected to reach "
                "it.</p>"
            )
        parts.append(
            "</div><div><table><thead><tr><th>policy</th><th>accuracy (held out)</th>"
            "<th>change vs terminal</th><th>mean cost</th><th>cost reduction</th>"
            "<th>what it does</th></tr></thead><tbody>"
            + "".join(rows)
            + "</tbody></table></div></div>"
        )
    parts += [f"<p class='muted'>{esc(line)}</p>" for line in cascade.skipped_lines()]
    return "".join(parts) or "<p class='muted'>cascade.json has no results</p>"


def _cost_sentence(result: CascadeBlock) -> str:
    cost = result.cost
    primary = cost.primary
    basis = cost.basis(primary) or cost.frames_basis or "?"
    note = cost.note(primary) or ""
    text = f"Cost in {primary}, cost model {basis}" + (f" ({note})" if note else "") + "."
    if cost.unshared_bound:
        text += " Beside it, the same stops with nothing shared (the upper bound)."
    if result.same_input_note:  # a terminal that repeats its predecessor
        text += f" Same input: {result.same_input_note}."
    return text


def _best_sentence(result: CascadeBlock) -> str:
    best = result.best_match
    terminal = result.terminal.label
    if not best:
        return f"No policy saves anything with a change interval reaching 0 against {terminal}."
    rule = result.policies.get(best.policy)
    fixed = fixed_budget_note(best.policy, rule)
    return (
        f"Best match: {rule_label(best.policy, rule)} saves "
        f"{pts(_stat(best.cost_reduction))}% of {terminal}'s cost at an accuracy change of "
        f"{pts(_stat(best.accuracy_change))} points" + (f" ({fixed})." if fixed else ".")
    )


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


def _one_intervention(
    name: str, result: InterventionResult | ReportFileError | dict[str, Any], limit: int
) -> str:
    if isinstance(result, ReportFileError):
        return f"<h3>{esc(name)}</h3><p class='muted'>cannot be read: {esc(str(result))}</p>"
    if not isinstance(result, InterventionResult):  # the one-file layout before intervention/
        found: list[tuple[str, Any]] = []
        _find_stats(result, "", found)
        found_rows = "".join(
            f"<tr><td>{esc(path)}</td><td class='num'>{esc(pts(stat))}</td></tr>"
            for path, stat in found
        )
        return (
            f"<h3>{esc(name)}</h3><table class='intervention'><thead><tr><th>measure</th>"
            f"<th>points, 95% CI</th></tr></thead><tbody>{found_rows}</tbody></table>"
        )
    reg, ctl = result.regressions, result.controls
    intervals = result.intervals

    def rate(key: str, stat: Estimate, group: GroupCounts) -> str:
        counted = ""
        if group.n_changed is not None:
            counted = f" ({group.n_changed} of {group.n_answered})"
        exact = " exact" if intervals.get(key, "").startswith("exact") else ""
        return f"{pts(stat.as_json())}{counted}{exact}"

    rows = [
        (
            "recovered rate (terminal regressions now right)",
            rate("recovered_rate", result.recovered_rate, reg),
        ),
        ("broken rate (control items now wrong)", rate("broken_rate", result.broken_rate, ctl)),
        ("net accuracy change (estimate)", pts(result.net_accuracy_change_estimate.as_json())),
    ]
    body = "".join(f"<tr><td>{esc(k)}</td><td class='num'>{esc(v)}</td></tr>" for k, v in rows)
    notes = "".join(
        f"<p class='muted'>{esc(key.replace('_', ' '))}: {esc(text)}</p>"
        for key, text in sorted(intervals.items())
        if text.startswith("exact")
    )
    counts = (
        f"terminal regressions: {reg.n_answered} answered of {reg.n_planned} planned "
        f"({reg.n_failed} failed); controls: {ctl.n_answered} answered of {ctl.n_planned} "
        f"planned ({ctl.n_failed} failed)"
    )
    item_rows = "".join(
        f"<tr><td>{esc(r.item_id)}</td><td>{esc(r.group)}</td>"
        f"<td>{esc(r.answer_before)}</td><td>{esc(r.answer_after)}</td>"
        f"<td class='num'>{esc(r.after)}</td><td>{esc(r.status)}</td></tr>"
        for r in result.items[:limit]
    )
    return (
        f"<h3>{esc(name)} <span class='muted'>{esc(result.model)}, terminal budget "
        f"{esc(result.terminal_label)}</span></h3>"
        f"<p>{esc(result.description)}</p>"
        f"<table class='intervention'><thead><tr><th>measure</th><th>points, 95% CI</th></tr>"
        f"</thead><tbody>{body}</tbody></table>{notes}<p class='muted'>{esc(counts)}</p>"
        + (
            "<details><summary>items</summary><table><thead><tr><th>item</th><th>group</th>"
            "<th>answer before</th><th>answer after</th><th>correct after</th><th>status</th>"
            f"</tr></thead><tbody>{item_rows}</tbody></table></details>"
            if item_rows
            else ""
        )
    )


def intervention_section(
    intervention: Mapping[str, InterventionResult | ReportFileError | dict[str, Any]] | None,
    limit: int,
) -> str:
    """The intervention results (a result file that cannot be read is named with its error;
    the one-file layout before `intervention/` as the statistics it holds); each lists at most
    `limit` of its re-run items."""
    if not intervention:
        return (
            "<p class='muted'>not run (no RUN_DIR/intervention/&lt;policy&gt;.json; run "
            "<code>itemscale intervene RUN_DIR --policy nested</code>)</p>"
        )
    return "".join(
        _one_intervention(name, result, limit) for name, result in sorted(intervention.items())
    )
