"""The report's section for a set of alternatives (`AlternativesSeries`: configurations that
ask one budget): each one's accuracy as a dot with its interval (no line, no budget axis: the
x-axis lists the alternatives), the selector record against the control and of every other pair,
the all-pairs same-input matrix, and the configurations imported from one log file. The words
are the console's (`measures._alternatives_text`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING

from ..analysis.measures import (
    ALTERNATIVE_SYMBOLS,
    GLOSSARY,
    AlternativePair,
    AlternativesSeries,
    alternatives_title,
    control_source,
    pair_grade,
    pair_verdict_text,
    stat_text,
)
from ..core.responses import SourceFile, same_file_pairs, same_file_sentence
from ._figures import Point, point
from ._plot import BLUE, Made, Marks, category_ticks, figure, legend_outside, new_figure
from ._templating import Markup, render

if TYPE_CHECKING:
    from matplotlib.artist import Artist

#: The matrix's cell colours by symbol (Okabe and Ito's palette, light).
_CELL = {"=": "#cfe8f5", "~": "#e0f0e8", "x": "#fbe3d0", "?": "#eeeeee", "F": "#cfe8f5"}


@figure
def _dots(marks: Marks, labels: Sequence[str], points: Sequence[Point], *, title: str) -> Made:
    """No line joins the dots, since no order of budgets does."""
    from matplotlib.lines import Line2D

    width = max(4.2, 0.45 * len(labels) + 1.2)
    fig = new_figure(width, 3.3)
    ax = fig.add_subplot()
    values: list[float] = []
    for x, (name, (v, ci)) in enumerate(zip(labels, points, strict=True)):
        if v is None:
            continue
        values.append(100 * v)
        tip = f"{name}: {100 * v:.1f}"
        if ci is not None:
            ax.plot([x, x], [100 * ci[0], 100 * ci[1]], color=BLUE, linewidth=1.4)
            values += [100 * ci[0], 100 * ci[1]]
            tip += f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"
        ax.plot(
            [x],
            [100 * v],
            marker="o",
            color=BLUE,
            linestyle="none",
            gid=marks.gid("acc-point", tip),
        )
    if values:
        pad = max(2.0, 0.08 * (max(values) - min(values)))
        ax.set_ylim(max(0.0, min(values) - pad), min(100.0, max(values) + pad))
    ax.set_xlim(-0.5, len(labels) - 0.5)
    category_ticks(ax, labels, 72 * (width - 0.9))
    ax.set_xlabel("alternative (one budget; listed as the table lists them)")
    ax.set_ylabel("accuracy (%)")
    ax.set_title(title)
    ax.grid(axis="y", color="#e6e6e6", linewidth=0.8)
    handles: list[Artist] = [
        Line2D([], [], color=BLUE, marker="o", linestyle="none", label="accuracy"),
        Line2D([], [], color=BLUE, linewidth=1.4, label="95% interval"),
    ]
    legend_outside(ax, "below", handles=handles, ncols=2)
    return fig, "alternatives-accuracy", title


def _one_file(pair: AlternativePair, files: Mapping[str, SourceFile]) -> SourceFile | None:
    fa, fb = files.get(pair.a), files.get(pair.b)
    return fa if fa is not None and fb is not None and fa.sha256 == fb.sha256 else None


def _pair_rows(
    pairs: Sequence[AlternativePair], files: Mapping[str, SourceFile], note: str | None
) -> list[tuple[AlternativePair, str, str]]:
    rows = []
    for p in pairs:
        same = _one_file(p, files)
        verdict = f"one log file (sha256 {same.sha256[:12]}...)" if same else pair_verdict_text(p)
        p_value = "n/a" if p.clustered_mcnemar_p is None else f"{p.clustered_mcnemar_p:.3g}"
        rows.append((p, verdict, note or p_value))
    return rows


def _matrix(
    block: AlternativesSeries, files: Mapping[str, SourceFile]
) -> list[tuple[str, list[tuple[str, str, str]]]]:
    cell: dict[tuple[str, str], tuple[str, str]] = {}
    for p in block.pairs.values():
        symbol = "F" if _one_file(p, files) else pair_grade(p)
        cell[(p.a, p.b)] = cell[(p.b, p.a)] = (symbol, pair_verdict_text(p))
    rows = []
    for a in block.configs:
        cells = []
        for b in block.configs:
            symbol, why = cell.get((a, b), (".", "the same alternative"))
            cells.append((_CELL.get(symbol, "#ffffff"), why, symbol))
        rows.append((a, cells))
    return rows


def alternatives_section(
    model: str,
    block: AlternativesSeries,
    files: Mapping[str, SourceFile],
    note: str | None,
) -> Markup:
    labels = list(block.configs)
    dots = _dots(
        labels,
        [point(block.accuracy.get(c), note) for c in labels],
        title=f"accuracy at {block.budget} (points, 95% CI)",
    )
    against = [p for p in block.pairs.values() if p.a == block.control]
    copies = {c.label for _, c in same_file_pairs(files, labels)}
    others = [
        p
        for p in block.pairs.values()
        if p.a != block.control and p.a not in copies and p.b not in copies
    ]
    return render(
        "alternatives.html",
        model=model,
        block=block,
        stat=partial(stat_text, note=note),
        title=alternatives_title(block),
        gloss=GLOSSARY,
        figure=Markup(dots),
        control_source=control_source(block),
        against=_pair_rows(against, files, note),
        others=_pair_rows(others, files, note),
        left_out=" (copies of one log file left out: their pairs are its own)" if copies else "",
        matrix=_matrix(block, files),
        legend="; ".join(f"{s} {what}" for s, what in ALTERNATIVE_SYMBOLS.items()),
        same_file=[same_file_sentence(a, copy) for a, copy in same_file_pairs(files, labels)],
    )
