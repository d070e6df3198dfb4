"""The report's item response section: where on one ability scale each (model, budget) sits,
how precisely the items measure there (test information, sum over items of a^2 P (1 - P)), and
the items with a negative discrimination (docs/anchors.md). The fit is `itemscale irt RUN`'s,
from a fixed start by a deterministic optimiser, so `verify` re-renders the same bytes. A run
with fewer than `IRT_MIN_RESPONDENTS` respondents or `IRT_MIN_ITEMS` items gets no section.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

import numpy as np
import pandas as pd

from ..analysis.measures import IRT_METHOD, THETA_GRID, IrtError, IrtFit, fit_irt, information
from ._plot import (
    INK,
    MARKERS,
    OKABE_ITO,
    Made,
    Marks,
    figure,
    legend_outside,
    new_figure,
    text_width,
)
from ._templating import Markup, render

#: The least number of (model, series, configuration) respondents for the section.
IRT_MIN_RESPONDENTS: Final[int] = 10
#: The least number of multiple-choice items for the section.
IRT_MIN_ITEMS: Final[int] = 50
#: At most this many negative-discrimination items are listed (all are counted).
NEGATIVE_ROWS: Final[int] = 20


def report_fit(responses: pd.DataFrame) -> IrtFit | None:
    """None when the run has too few respondents or items (or no binary outcomes)."""
    try:
        return fit_irt(responses, min_respondents=IRT_MIN_RESPONDENTS, min_items=IRT_MIN_ITEMS)
    except IrtError:
        return None


def _natural(label: str) -> tuple[object, ...]:
    """A label's sort key with its numbers as numbers: 64f_76k before 64f_151k."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", label))


def _groups(fit: IrtFit) -> list[tuple[str, list[int]]]:
    out: dict[str, list[int]] = {}
    for k, r in enumerate(fit.respondents):
        out.setdefault(f"{r.model} / {r.series}", []).append(k)
    rs = fit.respondents
    return [
        (name, sorted(idx, key=lambda k: (rs[k].frames, _natural(rs[k].config_label))))
        for name, idx in sorted(out.items())
    ]


def _respondent_information(fit: IrtFit) -> np.ndarray:
    a, b = fit.arrays()
    theta = np.array([r.theta for r in fit.respondents])
    return np.asarray(information(theta, a, b).sum(axis=1))


@figure
def information_figure(marks: Marks, fit: IrtFit) -> Made:
    """The test information curve with every (model, budget) marked at its ability."""
    a, b = fit.arrays()
    thetas = [r.theta for r in fit.respondents]
    low = float(min(THETA_GRID[0], np.floor(min(thetas)) - 0.5))
    high = float(max(THETA_GRID[-1], np.ceil(max(thetas)) + 0.5))
    curve = np.linspace(low, high, round(20 * (high - low)) + 1)
    total = information(curve, a, b).sum(axis=1)
    at = _respondent_information(fit)
    groups = _groups(fit)
    # as many legend columns as the longest label lets fit across the figure (6.4 in), so the
    # legend under the plot is never wider than the figure and cut at its edges
    labels = ["test information", *(name for name, _ in groups)]
    widest = max(text_width(label, 8.0) for label in labels) + 40.0
    ncols = max(1, min(len(labels), int(6.4 * 72 // widest)))
    rows = -(-len(labels) // ncols)
    fig = new_figure(6.4, 3.4 + 0.2 * rows)
    ax = fig.add_subplot()
    ax.plot(curve, total, color=INK, linewidth=1.6, label="test information", zorder=1)
    for n, (name, idx) in enumerate(groups):
        colour, marker = OKABE_ITO[n % 7], MARKERS[n % len(MARKERS)]
        for k in idx:
            r = fit.respondents[k]
            ax.plot(
                [r.theta],
                [at[k]],
                marker=marker,
                color=colour,
                markersize=5,
                linestyle="none",
                zorder=3,
                gid=marks.gid(
                    "irt-budget",
                    f"{r.model} {r.config_label}: ability {r.theta:.2f} (SE {r.theta_se:.2f}),"
                    f" information {at[k]:.1f}",
                ),
            )
        ax.plot([], [], marker=marker, color=colour, linestyle="none", label=name)
    ax.set_xlim(low, high)
    ax.set_ylim(0, 1.08 * max(float(total.max()), float(at.max()) if len(at) else 0.0, 1e-9))
    ax.set_xlabel("ability (2PL latent scale)")
    ax.set_ylabel("test information")
    title = "Test information against ability; each budget marked at its ability"
    ax.set_title(title)
    ax.grid(axis="y", color="#e6e6e6", linewidth=0.8)
    legend_outside(ax, "below", ncols=ncols)
    return fig, "irt-information", title


def _budget_rows(fit: IrtFit) -> list[tuple[str, ...]]:
    at = _respondent_information(fit)
    rs = fit.respondents
    return [
        (
            name,
            rs[k].config_label,
            f"{rs[k].theta:.2f} ({rs[k].theta_se:.2f})",
            f"{100 * rs[k].accuracy:.1f}",
            f"{at[k]:.1f}",
            str(rs[k].answered),
        )
        for name, idx in _groups(fit)
        for k in idx
    ]


def negative_items(fit: IrtFit) -> list[int]:
    """Discrimination below 0 beyond its 95% interval (a + 1.96 SE < 0), most negative first."""
    neg = [
        j for j, it in enumerate(fit.items) if it.discrimination + 1.96 * it.discrimination_se < 0
    ]
    return sorted(neg, key=lambda j: (fit.items[j].discrimination, fit.items[j].item_id))


def irt_section(fit: IrtFit | None) -> Markup:
    if fit is None:
        return Markup("")
    a, b = fit.arrays()
    grid = np.array(THETA_GRID)
    total = information(grid, a, b).sum(axis=1)
    peak = float(grid[int(np.argmax(total))])
    state = (
        f"converged in {fit.iterations} iterations"
        if fit.converged
        else f"NOT converged after {fit.iterations} iterations: read the numbers with care"
    )
    return render(
        "section_irt.html",
        method=IRT_METHOD,
        n_respondents=len(fit.respondents),
        n_items=len(fit.items),
        state=state,
        min_respondents=IRT_MIN_RESPONDENTS,
        min_items=IRT_MIN_ITEMS,
        peak=f"{peak:+.1f} ({total.max():.1f})",
        figure=Markup(information_figure(fit)),
        budgets=_budget_rows(fit),
        below=sum(it.discrimination < 0 for it in fit.items),
        text_only=any(r.frames == 0 for r in fit.respondents),
        negative=[
            (
                it.item_id,
                f"{it.discrimination:.2f}",
                f"{it.discrimination_se:.2f}",
                f"{it.difficulty:.2f} ({it.difficulty_se:.2f})",
                f"{100 * it.accuracy:.1f}",
            )
            for it in (fit.items[j] for j in negative_items(fit))
        ],
        rows=NEGATIVE_ROWS,
    )


def nav_link(fit: IrtFit | None) -> Markup:
    return Markup("") if fit is None else render("irt_nav.html")


__all__: Sequence[str] = ("IRT_MIN_ITEMS", "IRT_MIN_RESPONDENTS", "irt_section", "report_fit")
