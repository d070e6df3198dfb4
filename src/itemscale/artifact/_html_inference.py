"""The report's inference tables: cluster-aware paired tests with Holm's adjustment (marking
the changes that hold), the minimum detectable effect, the additive-model heterogeneity test,
and churn between series at equal budgets. Each is one small function over the `analyze`
JSON, so the measures section calls them without knowing their layout; it hands in `pts`, its
one way of writing a statistic with its interval."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..measures import GLOSSARY
from ._escape import esc

Points = Callable[[Any], str]


def _signed(pts: Points, stat: Any) -> str:
    """A change written by the report's one writer of a statistic (`pts`), with its sign."""
    text = pts(stat)
    if text != "n/a" and float(stat["value"]) >= 0:
        text = "+" + text
    return text


def _p(value: Any) -> str:
    if isinstance(value, str):  # "not estimable"
        return value
    return "n/a" if value is None else f"{float(value):.3g}"


def _budget_order(arrows: list[str], order: list[str]) -> list[str]:
    """Pairs in the budget order of `order` (the block's `adjacent` list), others after it."""
    rank = {arrow: n for n, arrow in enumerate(order)}
    return sorted(arrows, key=lambda a: (rank.get(a, len(rank)), a))


def _table(head: list[str], rows: list[str]) -> str:
    cells = "".join(f"<th>{esc(h)}</th>" for h in head)
    return (
        f"<table class='headline'><thead><tr>{cells}</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def paired_tests_table(block: dict[str, Any], pts: Points) -> str:
    tests = block.get("paired_tests") or {}
    if not tests.get("adjacent"):
        return ""
    rows = []
    for family in ("adjacent", "requested"):
        chosen = tests.get(family) or {}
        for arrow in _budget_order(list(chosen), list(block.get("adjacent") or [])):
            t = chosen[arrow]
            holds = t.get("significant_after_holm")
            mark = (
                "<span class='muted'>not estimable</span>"
                if holds is None
                else "<b>holds</b>"
                if holds
                else "<span class='muted'>does not hold</span>"
            )
            rows.append(
                f"<tr><th>{esc(arrow)}{' (requested)' if family == 'requested' else ''}</th>"
                f"<td class='num'>{esc(_signed(pts, t.get('difference')))}</td>"
                f"<td class='num'>{esc(_p(t.get('clustered_mcnemar_p')))}</td>"
                f"<td class='num'>{esc(_p(t.get('holm_p')))}</td><td>{mark}</td>"
                f"<td class='num'>{esc(_p(t.get('exact_mcnemar_p')))}</td>"
                f"<td class='num'>{esc(_p(t.get('bootstrap_p')))}</td></tr>"
            )
    head = [
        "pair",
        "accuracy change (points, 95% interval)",
        "clustered McNemar p",
        "Holm p",
        "at 5%",
        "exact McNemar p",
        "video bootstrap p",
    ]
    return (
        "<h4>Paired tests between adjacent budgets</h4><p class='muted'>"
        f"{esc(GLOSSARY['clustered test'])}. Holm over the {tests.get('n_family', 0)} adjacent "
        f"pairs of the grid (requested pairs form their own family): "
        f"{esc(GLOSSARY['Holm'])}.</p>" + _table(head, rows)
    )


def power_table(block: dict[str, Any]) -> str:
    power = block.get("power") or {}
    axes = power.get("axes") or {}
    if not axes:
        return ""
    target = 100 * float(power.get("target", 0.0))
    rows = []
    for axis, a in axes.items():
        mde, need = a.get("mde"), a.get("videos_needed")
        mde = mde if isinstance(mde, str) else "n/a" if mde is None else f"{100 * float(mde):.1f}"
        need = need if isinstance(need, str) else "n/a" if need is None else f"{int(need):,}"
        rows.append(
            f"<tr><th>{esc(axis)}</th><td class='num'>{esc(mde)}</td>"
            f"<td class='num'>{esc(need)}</td><td>{esc(', '.join(a.get('pairs', [])))}</td></tr>"
        )
    head = [
        "axis",
        "minimum detectable effect (points)",
        f"videos for {target:.1f} points",
        "pairs",
    ]
    return (
        "<h4>Power</h4><p class='muted'>"
        f"{esc(GLOSSARY['minimum detectable effect'])}; {power.get('n_videos', '?')} videos, "
        f"{float(power.get('items_per_video', 0.0)):.2f} items per video, clustered McNemar test.</p>"
        + _table(head, rows)
    )


def heterogeneity_table(h: dict[str, Any] | None, title: str, pts: Points) -> str:
    if not isinstance(h, dict):
        return ""
    if "skipped" in h:
        return f"<h4>{esc(title)}</h4><p class='muted'>not tested: {esc(h['skipped'])}</p>"
    rows = [
        f"<tr><th>{esc(name)}</th><td class='num'>{esc(pts(c.get('observed')))}</td>"
        f"<td class='num'>{esc(pts(c.get('additive')))}</td>"
        f"<td class='num'>{esc(_signed(pts, c.get('difference')))}</td>"
        f"<td class='num'>{esc(_p(c.get('p_value')))}</td></tr>"
        for name, c in [("harmful rate", h), *h.get("trajectories", {}).items()]
    ]
    head = ["share of items", "observed", "additive model", "difference", "p"]
    return (
        f"<h4>{esc(title)}</h4><p class='muted'>{esc(GLOSSARY['additive model'])}. "
        f"{h.get('n_informative', '?')} of {h.get('n_items', '?')} items are right at some budgets "
        "and wrong at others; p from a parametric bootstrap over whole videos "
        f"({h.get('n_null', 0)} draws), percentile intervals. The oracle headroom is a function "
        "of the margins and the additive model reproduces it exactly.</p>"
        + _table(head, rows)
        + _noise_line(h.get("noise"), pts)
    )


def _noise_line(noise: Any, pts: Points) -> str:
    if not isinstance(noise, dict):
        return ""
    return (
        f"<p>Noise bound: {esc(pts(noise.get('noise_bound')))}; harmful rate minus the bound "
        f"{esc(_signed(pts, noise.get('difference')))}, one-sided p "
        f"{esc(_p(noise.get('p_value')))}. <span class='muted'>{esc(GLOSSARY['noise bound'])}"
        "</span></p>"
    )


def inference_tables(block: dict[str, Any], pts: Points) -> str:
    """Everything a binary block adds to its section."""
    with_text = block.get("grid_with_text") or {}
    return (
        paired_tests_table(block, pts)
        + power_table(block)
        + heterogeneity_table(block.get("heterogeneity"), "Heterogeneity: visual budgets", pts)
        + heterogeneity_table(
            with_text.get("heterogeneity"),
            "Heterogeneity: with the text-only answer as budget 0",
            pts,
        )
    )


def churn_tables(block: dict[str, Any], pts: Points) -> str:
    """A model's churn between each pair of its series."""
    parts = []
    for pair, churn in (block.get("churn") or {}).items():
        rows = []
        for budget, b in churn.get("budgets", {}).items():
            floors = " / ".join(pts(b[k]) for k in ("noise_floor_p", "noise_floor_q") if k in b)
            rows.append(
                f"<tr><th>{esc(budget)}</th><td class='num'>{esc(pts(b.get('answer_change')))}"
                f"</td><td class='num'>{esc(_signed(pts, b.get('accuracy_difference')))}</td>"
                f"<td class='num'>{esc(pts(b.get('flip_down')))}</td>"
                f"<td class='num'>{esc(pts(b.get('flip_up')))}</td>"
                f"<td class='num'>{esc(floors or 'no repeats')}</td></tr>"
            )
        head = ["budget", "answers changed", "accuracy change", "down", "up", "noise floor"]
        parts.append(
            f"<h4>Churn {esc(pair)}</h4><p class='muted'>{esc(GLOSSARY['churn'])}; "
            f"{churn.get('n_common_items', 0)} items in both, points, 95% interval.</p>"
            + _table(head, rows)
            + selector_table(churn, pts)
        )
    return "".join(parts)


def selector_table(churn: dict[str, Any], pts: Points) -> str:
    """A frame selector's series against uniform sampling, budget by budget ('' for a pair
    without a selector)."""
    rows = []
    notes = []
    for budget, b in churn.get("budgets", {}).items():
        v = b.get("selector")
        if not v:
            continue
        headroom = v["n_uniform_wrong_everywhere"]
        rows.append(
            f"<tr><th>{esc(budget)}</th><td class='num'>{esc(pts(v['accuracy_selector']))}</td>"
            f"<td class='num'>{esc(pts(v['accuracy_uniform']))}</td>"
            f"<td class='num'>{esc(_signed(pts, v['accuracy_difference']))}</td>"
            f"<td class='num'>{esc(_p(v['clustered_mcnemar_p']))}</td>"
            f"<td class='num'>{v['n_fixed']}</td><td class='num'>{v['n_broken']}</td>"
            f"<td class='num'>{v['n_headroom_fixed']} of {headroom}</td></tr>"
        )
        if v.get("same_input"):
            notes.append(
                f"{budget}: looks like the same input as uniform (identical answers on "
                f"{v['same_input']['identical']} of {v['same_input']['items']} items): was the "
                "selection applied?"
            )
    if not rows:
        return ""
    head = [
        "budget",
        "selector accuracy",
        "uniform accuracy",
        "change",
        "clustered McNemar p",
        "fixed",
        "broken",
        "uniform's always-wrong items it gets right",
    ]
    note = "".join(f"<p class='warn'>{esc(n)}</p>" for n in notes)
    return (
        "<p class='muted'>The frame selector against uniform sampling at each shared budget "
        "(points, 95% interval; fixed: wrong under uniform, right under the selector).</p>"
        + _table(head, rows)
        + note
    )
