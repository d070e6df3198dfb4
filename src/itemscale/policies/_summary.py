"""Held-out (or fixed-rule) stops summarised: accuracy, cost and cost reduction in every
currency, with paired video-bootstrap intervals.

Every number of one summary comes from the same resamples, so a stopping rule's accuracy change and
its saving are paired with each other and with the terminal budget's. A rule *matches* the
terminal budget when the 95% interval of its accuracy change reaches 0. `skipped_lines` says,
for the console and the report alike, what a cascade report did not run on.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..measures import VideoBootstrap, percentile_intervals, stat
from ._inputs import CascadeInputs
from ._search import outcome_at

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def summarise_stops(
    stop: IntArray,
    paid: dict[str, FloatArray],
    paid_unshared: dict[str, FloatArray],
    inputs: CascadeInputs,
    primary: str,
    boot: VideoBootstrap | None,
) -> dict[str, Any]:
    """Accuracy, cost and cost reduction in every currency (and with nothing shared, beside a
    `prefix` cost) with intervals, all from one set of resamples so they are paired."""
    correct = outcome_at(stop, inputs.correct)
    terminal_correct = inputs.correct[:, -1]
    columns = [correct, terminal_correct]
    where: dict[tuple[str, str], int] = {}
    for group, costs in (("shared", paid), ("unshared", paid_unshared)):
        for c in costs:
            where[(group, c)] = len(columns)
            columns.append(costs[c])
    for c in paid:
        where[("terminal", c)] = len(columns)
        columns.append(inputs.cost(c).terminal)
    values = np.column_stack(columns)
    point = values.mean(axis=0)
    samples = boot.means(values) if boot is not None and boot.n_boot > 0 else None

    def derived(fn: Any) -> dict[str, Any]:
        interval = None
        if samples is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                column = np.asarray(fn(samples.T), dtype=np.float64)
            interval = percentile_intervals(column[:, None])[0]
        with np.errstate(invalid="ignore", divide="ignore"):
            value = float(fn(point))
        return stat(value, interval)

    out: dict[str, Any] = {
        "accuracy": derived(lambda m: m[0]),
        "terminal_accuracy": derived(lambda m: m[1]),
        "accuracy_change": derived(lambda m: m[0] - m[1]),
    }
    for c in paid:
        p, t = where[("shared", c)], where[("terminal", c)]
        out[f"mean_cost_{c}"] = derived(lambda m, p=p: m[p])
        out[f"terminal_cost_{c}"] = derived(lambda m, t=t: m[t])
        out[f"cost_reduction_{c}"] = derived(lambda m, p=p, t=t: 1.0 - m[p] / m[t])
    if paid_unshared:
        bound: dict[str, Any] = {"sharing": "none"}
        for c in paid_unshared:
            p, t = where[("unshared", c)], where[("terminal", c)]
            bound[f"mean_cost_{c}"] = derived(lambda m, p=p: m[p])
            bound[f"cost_reduction_{c}"] = derived(lambda m, p=p, t=t: 1.0 - m[p] / m[t])
        out["unshared"] = bound
    out["mean_cost"] = out[f"mean_cost_{primary}"]
    out["cost_reduction"] = out[f"cost_reduction_{primary}"]
    change = out["accuracy_change"]
    reach = change["ci"][1] if change["ci"] is not None else change["value"]
    out["matches_terminal"] = bool(reach is not None and reach >= -1e-12)
    out["at_or_above_terminal"] = bool(point[0] >= point[1] - 1e-12)
    counts = np.bincount(stop, minlength=len(inputs.labels)) / max(len(stop), 1)
    out["stop_share"] = {label: float(counts[s]) for s, label in enumerate(inputs.labels)}
    return out


def skipped_lines(report: dict[str, Any]) -> list[str]:
    """What the cascade did not run on, one line per model and reason: a series' open-ended
    half named as such (its multiple-choice items have their block above), intervention
    re-runs in one line."""
    ran = {(b.get("model"), b.get("series")) for b in report.get("results", [])}
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for skipped in report.get("skipped", []):
        key = (str(skipped.get("model", "?")), str(skipped.get("reason", "?")))
        grouped.setdefault(key, []).append(skipped)
    lines = []
    for (model, reason), entries in grouped.items():
        names = ", ".join(str(e.get("series", "?")) for e in entries)
        if entries[0].get("kind") not in (None, "binary"):
            for e in entries:
                above = (
                    "; its multiple-choice items are above" if (model, e["series"]) in ran else ""
                )
                lines.append(
                    f"not run on the {e.get('n_items', '?')} open-ended items of {model} / "
                    f"{e.get('series', '?')}{above}: policies need 0/1 correctness (multiple "
                    "choice)"
                )
        elif len(entries) > 1:
            lines.append(f"not run on {model}, {len(entries)} series ({names}): {reason}")
        else:
            lines.append(f"not run on {model} / {names}: {reason}")
    return lines
