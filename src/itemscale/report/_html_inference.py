"""The report's inference tables: cluster-aware paired tests with Holm's adjustment (marking
the changes that hold), the minimum detectable effect, the additive-model heterogeneity test,
and churn between series at equal budgets. Each is one small function over the typed series
block that gathers a table's cells (`templates/section_inference.html`, `section_churn.html`
lay them out); the measures section hands in `pts`, its one way of writing a statistic with its
interval (with the block's `interval_note` bound), and the note itself, which replaces the
p-values, the power figures and the additive-model test of a block with too few videos."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..analysis.measures import (
    GLOSSARY,
    AlternativesSeries,
    BinarySeries,
    BinaryWithText,
    Churn,
    Estimate,
    Heterogeneity,
    HeterogeneitySkipped,
    OpenEndedSeries,
    p_value_text,
)
from ._templating import Markup, render

#: The report's writer of one statistic (`_html_measures.pts`, its note bound).
Points = Callable[[Estimate | None], str]


def _signed(pts: Points, stat: Estimate | None) -> str:
    """A change written by the report's one writer of a statistic (`pts`), with its sign."""
    text = pts(stat)
    if text != "n/a" and stat is not None and float(stat.value or 0.0) >= 0:
        text = "+" + text
    return text


def _p(
    value: float | None, note: str | None = None, *, draws: int | None = None, sides: int = 1
) -> str:
    """A p-value, the note ("not estimable") that replaces it on a small sample, or '<1/draws'
    at a resampled p's floor (`measures.p_value_text`)."""
    return p_value_text(value, draws=draws, sides=sides, note=note)


def _budget_order(arrows: list[str], order: list[str]) -> list[str]:
    """Pairs in the budget order of `order` (the block's `adjacent` list), others after it."""
    rank = {arrow: n for n, arrow in enumerate(order)}
    return sorted(arrows, key=lambda a: (rank.get(a, len(rank)), a))


def _paired(block: BinarySeries, pts: Points, note: str | None) -> dict[str, Any] | None:
    """The paired tests' rows: pair, change, clustered p, Holm p, holds at 5% (None: not
    estimable), exact p, bootstrap p."""
    tests = block.paired_tests
    if tests is None or not tests.adjacent:
        return None
    rows = []
    for family, chosen in (("adjacent", tests.adjacent), ("requested", tests.requested or {})):
        for arrow in _budget_order(list(chosen), list(block.adjacent)):
            t = chosen[arrow]
            rows.append(
                (
                    arrow + (" (requested)" if family == "requested" else ""),
                    _signed(pts, t.difference),
                    _p(t.clustered_mcnemar_p, note),
                    _p(t.holm_p, note),
                    None if note is not None else t.significant_after_holm,
                    _p(t.exact_mcnemar_p, note),
                    _p(t.bootstrap_p, note, draws=tests.bootstrap_draws),
                )
            )
    return {"n_family": tests.n_family, "rows": rows}


def _power_cell(value: float | None, reason: str | None, text: Callable[[float], str]) -> str:
    """A power figure, or "not estimable" with the reason `analyze` recorded."""
    if reason is not None:
        return f"not estimable ({reason})"
    return "n/a" if value is None else text(float(value))


def _power(block: BinarySeries, note: str | None) -> dict[str, Any] | None:
    power = block.power
    if power is None or not power.axes:
        return None
    rows = [
        (
            axis,
            note or _power_cell(a.mde, a.mde_not_estimable, lambda v: f"{100 * v:.1f}"),
            note
            or _power_cell(a.videos_needed, a.videos_needed_not_estimable, lambda v: f"{int(v):,}"),
            ", ".join(a.pairs),
        )
        for axis, a in power.axes.items()
    ]
    return {
        "target": f"{100 * float(power.target):.1f}",
        "videos": "?" if power.n_videos is None else power.n_videos,
        "per_video": f"{float(power.items_per_video or 0.0):.2f}",
        "rows": rows,
    }


def _heterogeneity(
    h: Heterogeneity | HeterogeneitySkipped | None,
    title: str,
    pts: Points,
    not_estimable: str | None,
) -> dict[str, Any] | None:
    """The additive-model test; `not_estimable` (why, on a small sample) in place of a test
    that ran."""
    if h is None:
        return None
    if isinstance(h, HeterogeneitySkipped) or not_estimable is not None:
        why = h.skipped if isinstance(h, HeterogeneitySkipped) else not_estimable
        return {"title": title, "skipped": why}
    rows = [
        (
            name,
            pts(observed),
            pts(additive),
            _signed(pts, difference),
            _p(p, draws=h.n_null, sides=2),
        )
        for name, observed, additive, difference, p in [
            ("harmful rate", h.observed, h.additive, h.difference, h.p_value),
            *(
                (name, c.observed, c.additive, c.difference, c.p_value)
                for name, c in h.trajectories.items()
            ),
        ]
    ]
    noise = h.noise
    return {
        "title": title,
        "skipped": None,
        "n_informative": h.n_informative,
        "n_items": h.n_items,
        "n_null": h.n_null,
        "rows": rows,
        "noise": None
        if noise is None
        else (pts(noise.noise_bound), _signed(pts, noise.difference), _p(noise.p_value)),
    }


def inference_tables(block: BinarySeries, pts: Points, note: str | None = None) -> Markup:
    """Everything a binary block adds to its section; `note` ("not estimable" on a small
    sample) replaces its p-values, power figures and additive-model tests."""
    with_text: BinaryWithText | None = block.grid_with_text
    why = None if note is None else f"{note} with {block.n_videos} video(s)"
    tests = [
        _heterogeneity(block.heterogeneity, "Heterogeneity: visual budgets", pts, why),
        _heterogeneity(
            with_text.heterogeneity if with_text is not None else None,
            "Heterogeneity: with the text-only answer as budget 0",
            pts,
            why,
        ),
    ]
    return render(
        "section_inference.html",
        glossary=GLOSSARY,
        paired=_paired(block, pts, note),
        power=_power(block, note),
        heterogeneity=[h for h in tests if h is not None],
    )


def churn_tables(block: BinarySeries | OpenEndedSeries | AlternativesSeries, pts: Points) -> Markup:
    """A model's churn between each pair of its series, each with its frame selector against
    uniform sampling where the pair has one."""
    churns = [
        {
            "pair": pair,
            "n_common": churn.n_common_items,
            "rows": [
                (
                    budget,
                    pts(b.answer_change),
                    _signed(pts, b.accuracy_difference),
                    pts(b.flip_down),
                    pts(b.flip_up),
                    " / ".join(pts(f) for f in (b.noise_floor_p, b.noise_floor_q) if f is not None)
                    or "no repeats",
                )
                for budget, b in churn.budgets.items()
            ],
            "selector": _selector(churn, pts),
        }
        for pair, churn in (block.churn or {}).items()
    ]
    return render("section_churn.html", glossary=GLOSSARY, churns=churns)


def _selector(churn: Churn, pts: Points) -> dict[str, list[Any]]:
    """A frame selector's series against uniform sampling, budget by budget (no rows for a
    pair without a selector)."""
    rows: list[Any] = []
    notes: list[Any] = []
    for budget, b in churn.budgets.items():
        v = b.selector
        if v is None:
            continue
        rows.append(
            (
                budget,
                pts(v.accuracy_selector),
                pts(v.accuracy_uniform),
                _signed(pts, v.accuracy_difference),
                _p(v.clustered_mcnemar_p),
                v.n_fixed,
                v.n_broken,
                f"{v.n_headroom_fixed} of {v.n_uniform_wrong_everywhere}",
            )
        )
        if v.same_input is not None:
            notes.append(
                f"{budget}: looks like the same input as uniform (identical answers on "
                f"{v.same_input.identical} of {v.same_input.items} items): was the "
                "selection applied?"
            )
    return {"rows": rows, "notes": notes}
