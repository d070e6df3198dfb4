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
from ._figures import frontier
from ._html_measures import pts
from ._templating import Markup, render

#: How the cost-accuracy figure names the threshold sweep: chosen on the items it scores.
IN_SAMPLE = "threshold sweep (in-sample)"


def _stat(stat: Estimate | None) -> dict[str, Any] | None:
    return None if stat is None else stat.as_json()


def _policy_row(name: str, pol: Any, primary: str) -> dict[str, Any]:
    if not isinstance(pol, AvailableRule):
        return {"name": name, "reason": pol.reason}
    mean = pol.mean_cost.value
    bound = pol.unshared.cost_reduction(primary) if pol.unshared is not None else None
    return {
        "name": name,
        "reason": None,
        "accuracy": counted_text(_stat(pol.accuracy)),
        "change": f"{pts(_stat(pol.accuracy_change))} "
        f"({'matches' if pol.matches_terminal else 'below'})",
        "mean": "n/a" if mean is None else f"{mean:.1f}",
        "reduction": pts(_stat(pol.cost_reduction)),
        "unshared": pts(_stat(bound)) if bound else None,
        "description": pol.description,
        "fixed": fixed_budget_note(name, pol),
    }


def _cascade_block(result: CascadeBlock) -> dict[str, Any]:
    primary = result.cost.primary
    series: list[tuple[str, list[tuple[float, float]]]] = []
    front = [(p.mean_cost, p.accuracy) for p in result.frontier]
    if front:
        series.append(("confidence frontier (held out)", front))
    sweep = [(p.mean_cost, p.accuracy) for p in result.threshold_sweep]
    if sweep:
        series.append((IN_SAMPLE, sweep))
    for name, pol in result.policies.items():
        if isinstance(pol, AvailableRule):
            acc, cost = pol.accuracy.value, pol.mean_cost.value
            if acc is not None and cost is not None:
                series.append((f"{rule_label(name, pol)} (held out)", [(cost, acc)]))
    terminal = result.terminal
    if terminal.mean_cost.value is not None and terminal.accuracy.value is not None:
        series.append(
            (f"fixed {terminal.label}", [(terminal.mean_cost.value, terminal.accuracy.value)])
        )
    figure = frontier(series, x_label=f"mean cost per item ({primary})", dashed=(IN_SAMPLE,))
    return {
        "name": f"{result.model} / {result.series}",
        "sentence": f"{_cost_sentence(result)} {_best_sentence(result)}",
        "figure": Markup(figure) if figure else None,
        "sweep": bool(sweep),
        "rows": [_policy_row(name, pol, primary) for name, pol in result.policies.items()],
    }


def cascade_section(cascade: CascadeReport | ReportFileError | None) -> Markup:
    if isinstance(cascade, ReportFileError):
        return render("section_cascade.html", error=str(cascade), results=None)
    return render(
        "section_cascade.html",
        error=None,
        glossary=GLOSSARY,
        results=None if cascade is None else [_cascade_block(r) for r in cascade.results],
        skipped=[] if cascade is None else cascade.skipped_lines(),
    )


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
) -> dict[str, Any]:
    if isinstance(result, ReportFileError):
        return {"name": name, "error": str(result)}
    if not isinstance(result, InterventionResult):  # the one-file layout before intervention/
        found: list[tuple[str, Any]] = []
        _find_stats(result, "", found)
        return {
            "name": name,
            "error": None,
            "result": None,
            "rows": [(p, pts(s)) for p, s in found],
        }
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
    counts = (
        f"terminal regressions: {reg.n_answered} answered of {reg.n_planned} planned "
        f"({reg.n_failed} failed); controls: {ctl.n_answered} answered of {ctl.n_planned} "
        f"planned ({ctl.n_failed} failed)"
    )
    return {
        "name": name,
        "error": None,
        "result": result,
        "rows": rows,
        "notes": [
            (key.replace("_", " "), text)
            for key, text in sorted(intervals.items())
            if text.startswith("exact")
        ],
        "counts": counts,
        "reran": result.items[:limit],
    }


def intervention_section(
    intervention: Mapping[str, InterventionResult | ReportFileError | dict[str, Any]] | None,
    limit: int,
) -> Markup:
    """Each lists at most `limit` of its re-run items."""
    entries = [
        _one_intervention(name, result, limit)
        for name, result in sorted((intervention or {}).items())
    ]
    return render("section_intervention.html", entries=entries)
