"""The report's inference tables: the paired tests, the minimum detectable effect and the
additive-model tests laid out (`templates/section_inference.html`) from the records `analyze`
prints them from (`InferenceVerdicts`), and churn between series at equal budgets with a frame
selector against uniform sampling (`section_churn.html`). `pts` is the measures section's one
writer of a statistic, the block's `interval_note` bound."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from ..analysis.measures import (
    GLOSSARY,
    AlternativesSeries,
    BinarySeries,
    Estimate,
    OpenEndedSeries,
    p_value_text,
)
from ._inference_verdicts import InferenceVerdicts
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
    return render(
        "section_churn.html",
        glossary=GLOSSARY,
        churns=block.churn or {},
        pts=pts,
        signed=partial(_signed, pts),
        floors=lambda b: (
            " / ".join(pts(f) for f in (b.noise_floor_p, b.noise_floor_q) if f is not None)
            or "no repeats"
        ),
        p_text=p_value_text,
    )
