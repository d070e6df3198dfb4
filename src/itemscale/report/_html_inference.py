"""The report's inference tables: cluster-aware paired tests with Holm's adjustment (marking
the changes that hold), the minimum detectable effect, the additive-model heterogeneity test,
and churn between series at equal budgets. The first three are laid out
(`templates/section_inference.html`) from the records `analyze` prints them from
(`InferenceVerdicts`); churn is gathered here for `section_churn.html`. The measures section
hands in `pts`, its one way of writing a statistic with its interval (with the block's
`interval_note` bound), and the note itself, which replaces the p-values, the power figures and
the additive-model test of a block with too few videos."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..analysis.measures import (
    GLOSSARY,
    AlternativesSeries,
    BinarySeries,
    Churn,
    Estimate,
    OpenEndedSeries,
)
from ._inference_verdicts import InferenceVerdicts, p_text
from ._templating import Markup, render

#: The report's writer of one statistic (`_html_measures.pts`, its note bound).
Points = Callable[[Estimate | None], str]


def _signed(pts: Points, stat: Estimate | None) -> str:
    """A change written by the report's one writer of a statistic (`pts`), with its sign."""
    text = pts(stat)
    if text != "n/a" and stat is not None and float(stat.value or 0.0) >= 0:
        text = "+" + text
    return text


def inference_tables(block: BinarySeries, pts: Points, note: str | None = None) -> Markup:
    """Everything a binary block adds to its section; `note` ("not estimable" on a small
    sample) replaces its p-values, power figures and additive-model tests."""
    verdicts = InferenceVerdicts.of(block, note)
    titles = (
        "Heterogeneity: visual budgets",
        "Heterogeneity: with the text-only answer as budget 0",
    )
    tests = zip(titles, (verdicts.additive, verdicts.additive_with_text), strict=True)
    return render(
        "section_inference.html",
        glossary=GLOSSARY,
        paired=verdicts.paired,
        paired_rows=verdicts.paired and verdicts.paired.in_budget_order(list(block.adjacent)),
        power=verdicts.power,
        heterogeneity=[(title, h) for title, h in tests if h is not None],
        pts=pts,
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
                p_text(v.clustered_mcnemar_p),
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
