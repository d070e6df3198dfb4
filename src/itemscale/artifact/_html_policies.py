"""The report's sections on what to do about the budget: compute savings (the cascade and
stopping rules, `cascade.json`) and the sampling intervention (`intervention/<intervention>.json`).

Both read a result file another command wrote, which may be missing or from an older version:
every key is read with a default, and an intervention without the expected keys is shown as
the statistics it holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..measures import GLOSSARY
from ._escape import esc
from ._figures import frontier
from ._html_measures import pts, stat_pair

#: How the cost-accuracy figure names the threshold sweep: chosen on the items it scores.
IN_SAMPLE = "threshold sweep (in-sample)"


def cascade_section(cascade: dict[str, Any] | None) -> str:
    if not cascade:
        return "<p class='muted'>not run (no cascade.json in the run directory; run <code>itemscale cascade RUN_DIR</code>)</p>"
    parts = [
        f"<p class='muted'>Cost model: {esc(GLOSSARY['cost model'])}. Matches terminal: "
        f"{esc(GLOSSARY['matches terminal'])}. Frontier: {esc(GLOSSARY['frontier'])}.</p>"
    ]
    for result in cascade.get("results", []):
        name = f"{result.get('model', '?')} / {result.get('series', '?')}"
        primary = result.get("cost", {}).get("primary", "frames")
        series: list[tuple[str, list[tuple[float, float]]]] = []
        front = [
            (float(p["mean_cost"]), float(p["accuracy"]))
            for p in result.get("frontier", [])
            if p.get("mean_cost") is not None and p.get("accuracy") is not None
        ]
        if front:
            series.append(("confidence frontier (held out)", front))
        sweep = [
            (float(p["mean_cost"]), float(p["accuracy"]))
            for p in result.get("threshold_sweep", [])
            if p.get("mean_cost") is not None and p.get("accuracy") is not None
        ]
        if sweep:
            series.append((IN_SAMPLE, sweep))
        rows = []
        for pname, pol in result.get("policies", {}).items():
            if not isinstance(pol, dict):
                continue
            if not pol.get("available", True):
                rows.append(
                    f"<tr><td>{esc(pname)}</td><td colspan='4' class='muted'>{esc(pol.get('reason', 'not available'))}</td></tr>"
                )
                continue
            acc, cost = stat_pair(pol.get("accuracy")), stat_pair(pol.get("mean_cost"))
            if acc[0] is not None and cost[0] is not None:
                series.append((f"{pname} (held out)", [(cost[0], acc[0])]))
            mc = pol.get("mean_cost") or {}
            mean = mc.get("value") if isinstance(mc, dict) else None
            unshared = pol.get("unshared") or {}
            bound = next((v for k, v in unshared.items() if k == f"cost_reduction_{primary}"), None)
            match = "matches" if pol.get("matches_terminal") else "below"
            rows.append(
                f"<tr><td>{esc(pname)}</td><td class='num'>{esc(pts(pol.get('accuracy')))}</td>"
                f"<td class='num'>{esc(pts(pol.get('accuracy_change')))} ({match})</td>"
                f"<td class='num'>{esc('n/a' if mean is None else f'{mean:.1f}')}</td>"
                f"<td class='num'>{esc(pts(pol.get('cost_reduction')))}"
                + (
                    f"<br><span class='muted'>nothing shared: {esc(pts(bound))}</span>"
                    if bound
                    else ""
                )
                + f"</td><td>{esc(pol.get('description', ''))}</td></tr>"
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
    from ..policies import skipped_lines

    parts += [f"<p class='muted'>{esc(line)}</p>" for line in skipped_lines(cascade)]
    return "".join(parts) or "<p class='muted'>cascade.json has no results</p>"


def _cost_sentence(result: dict[str, Any]) -> str:
    cost = result.get("cost", {})
    primary = cost.get("primary", "frames")
    basis = cost.get(f"{primary}_basis") or cost.get("frames_basis") or "?"
    note = cost.get(f"{primary}_note") or ""
    text = f"Cost in {primary}, cost model {basis}" + (f" ({note})" if note else "") + "."
    if cost.get("unshared_bound"):
        text += " Beside it, the same stops with nothing shared (the upper bound)."
    if result.get("same_input_note"):  # a terminal that repeats its predecessor
        text += f" Same input: {result['same_input_note']}."
    return text


def _best_sentence(result: dict[str, Any]) -> str:
    best = result.get("best_match")
    terminal = result.get("terminal", {}).get("label", "the terminal budget")
    if not best:
        return f"No policy saves anything with a change interval reaching 0 against {terminal}."
    return (
        f"Best match: {best.get('policy')} saves {pts(best.get('cost_reduction'))}% of "
        f"{terminal}'s cost at an accuracy change of {pts(best.get('accuracy_change'))} points."
    )


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


def _one_intervention(name: str, result: dict[str, Any], limit: int) -> str:
    if "recovered_rate" not in result:
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
    reg = result.get("regressions") or {}
    ctl = result.get("controls") or {}
    intervals = result.get("intervals") or {}

    def rate(key: str, group: dict[str, Any]) -> str:
        counted = ""
        if isinstance(group.get("n_changed"), int):
            counted = f" ({group['n_changed']} of {group.get('n_answered', '?')})"
        exact = " exact" if str(intervals.get(key, "")).startswith("exact") else ""
        return f"{pts(result.get(key))}{counted}{exact}"

    rows = [
        ("recovered rate (terminal regressions now right)", rate("recovered_rate", reg)),
        ("broken rate (control items now wrong)", rate("broken_rate", ctl)),
        ("net accuracy change (estimate)", pts(result.get("net_accuracy_change_estimate"))),
    ]
    body = "".join(f"<tr><td>{esc(k)}</td><td class='num'>{esc(v)}</td></tr>" for k, v in rows)
    notes = "".join(
        f"<p class='muted'>{esc(key.replace('_', ' '))}: {esc(text)}</p>"
        for key, text in sorted(intervals.items())
        if str(text).startswith("exact")
    )
    counts = (
        f"terminal regressions: {reg.get('n_answered', '?')} answered of "
        f"{reg.get('n_planned', '?')} planned ({reg.get('n_failed', 0)} failed); controls: "
        f"{ctl.get('n_answered', '?')} answered of {ctl.get('n_planned', '?')} planned "
        f"({ctl.get('n_failed', 0)} failed)"
    )
    items = [r for r in result.get("items", []) if isinstance(r, dict)][:limit]
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
        f"</thead><tbody>{body}</tbody></table>{notes}<p class='muted'>{esc(counts)}</p>"
        + (
            "<details><summary>items</summary><table><thead><tr><th>item</th><th>group</th>"
            "<th>answer before</th><th>answer after</th><th>correct after</th><th>status</th>"
            f"</tr></thead><tbody>{item_rows}</tbody></table></details>"
            if item_rows
            else ""
        )
    )


def intervention_section(intervention: Mapping[str, dict[str, Any]] | None, limit: int) -> str:
    """The intervention results; each lists at most `limit` of its re-run items."""
    if not intervention:
        return (
            "<p class='muted'>not run (no RUN_DIR/intervention/&lt;policy&gt;.json; run "
            "<code>itemscale intervene RUN_DIR --policy nested</code>)</p>"
        )
    return "".join(
        _one_intervention(name, result, limit) for name, result in sorted(intervention.items())
    )
