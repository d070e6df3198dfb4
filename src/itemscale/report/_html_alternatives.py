"""The report's section for a set of alternatives (`AlternativesSeries`: configurations that
ask one budget): each one's accuracy as a dot with its interval (no line, no budget axis: the
x-axis lists the alternatives), the selector record against the control and of every other pair,
the all-pairs same-input matrix, and the configurations imported from one log file. The words
are the console's (`measures._alternatives_text`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
from ._escape import esc
from ._figures import Made, Point, point
from ._plot import BLUE, Marks, category_ticks, draw, legend_outside, new_figure

if TYPE_CHECKING:
    from matplotlib.artist import Artist

#: The matrix's cell colours by symbol (Okabe and Ito's palette, light).
_CELL = {"=": "#cfe8f5", "~": "#e0f0e8", "x": "#fbe3d0", "?": "#eeeeee", "F": "#cfe8f5"}


def _dots(marks: Marks, labels: Sequence[str], points: Sequence[Point], *, title: str) -> Made:
    """Each alternative's accuracy as a dot with its 95% interval: no line joins them, since
    no order of budgets does."""
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
) -> str:
    rows = []
    for p in pairs:
        same = _one_file(p, files)
        verdict = f"one log file (sha256 {same.sha256[:12]}...)" if same else pair_verdict_text(p)
        p_value = "n/a" if p.clustered_mcnemar_p is None else f"{p.clustered_mcnemar_p:.3g}"
        rows.append(
            f"<tr><th>{esc(p.b)}</th><td>{esc(p.a)}</td>"
            f"<td class='num'>{esc(stat_text(p.accuracy_difference, note=note))}</td>"
            f"<td class='num'>{p.n_fixed}</td><td class='num'>{p.n_broken}</td>"
            f"<td class='num'>{esc(note or p_value)}</td>"
            f"<td class='num'>{esc(stat_text(p.headroom_share, note=note))} "
            f"({p.n_fixed} of {p.n_headroom})</td><td>{esc(verdict)}</td></tr>"
        )
    return (
        "<table class='headline'><thead><tr><th>alternative</th><th>against</th>"
        "<th>accuracy difference (points)</th><th>fixes</th><th>breaks</th>"
        "<th>clustered McNemar p</th><th>headroom share (%)</th><th>same input?</th></tr>"
        "</thead><tbody>" + "".join(rows) + "</tbody></table>"
    )


def _matrix(block: AlternativesSeries, files: Mapping[str, SourceFile]) -> str:
    """The all-pairs same-input matrix, one symbol per pair, coloured."""
    cell: dict[tuple[str, str], tuple[str, str]] = {}
    for p in block.pairs.values():
        symbol = "F" if _one_file(p, files) else pair_grade(p)
        cell[(p.a, p.b)] = cell[(p.b, p.a)] = (symbol, pair_verdict_text(p))
    head = "".join(f"<th>{esc(c)}</th>" for c in block.configs)
    rows = []
    for a in block.configs:
        tds = []
        for b in block.configs:
            symbol, why = cell.get((a, b), (".", "the same alternative"))
            colour = _CELL.get(symbol, "#ffffff")
            tds.append(
                f"<td class='num' style='background:{colour}' title='{esc(why)}'>{esc(symbol)}</td>"
            )
        rows.append(f"<tr><th>{esc(a)}</th>{''.join(tds)}</tr>")
    legend = "; ".join(f"{s} {what}" for s, what in ALTERNATIVE_SYMBOLS.items())
    return (
        f"<h4>Same input, every pair</h4><p class='muted'>{esc(legend)}; F one log file. "
        f"{esc(GLOSSARY['same input'])}.</p><table class='headline'><thead><tr><th></th>{head}"
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def alternatives_section(
    model: str,
    block: AlternativesSeries,
    files: Mapping[str, SourceFile],
    note: str | None,
) -> str:
    """One set of alternatives of one model (`note` in place of intervals and p-values on a
    small sample)."""
    labels = list(block.configs)
    figure = draw(
        _dots,
        labels,
        [point(block.accuracy.get(c), note) for c in labels],
        title=f"accuracy at {block.budget} (points, 95% CI)",
    )
    accuracy = "".join(
        f"<tr><th>{esc(c)}{' (control)' if c == block.control else ''}</th>"
        f"<td class='num'>{esc(stat_text(block.accuracy[c], note=note))}</td></tr>"
        for c in labels
    )
    accuracy += (
        f"<tr><th>oracle over the alternatives</th>"
        f"<td class='num'>{esc(stat_text(block.oracle, note=note))}</td></tr>"
    )
    against = [p for p in block.pairs.values() if p.a == block.control]
    copies = {c.label for _, c in same_file_pairs(files, labels)}
    others = [
        p
        for p in block.pairs.values()
        if p.a != block.control and p.a not in copies and p.b not in copies
    ]
    parts = [
        f"<h3>{esc(model)} <span class='muted'>series {esc(block.series)}, alternatives</span></h3>",
        f"<p><b>{esc(alternatives_title(block))}.</b> {esc(GLOSSARY['alternatives'])}.</p>",
        f"<div class='row'><div>{figure}</div><div><table class='headline'><tbody>{accuracy}"
        f"</tbody></table><p class='muted'>{block.n_items} items on {block.n_videos} videos; "
        f"dropped {block.n_dropped}</p></div></div>",
    ]
    if against:
        parts.append(
            f"<h4>Against the control {esc(block.control)}{esc(control_source(block))}</h4><p class='muted'>fixes: wrong "
            "under the control and right under the alternative; breaks: the reverse; "
            f"headroom share: {esc(GLOSSARY['headroom share'])}</p>"
            + _pair_rows(against, files, note)
        )
    elif block.control is None:
        parts.append(
            "<p class='muted'>No control named: <code>--control LABEL</code> names the "
            "reference (a frame-0 or uniform run) whose record comes first.</p>"
        )
    if others:
        left_out = " (copies of one log file left out: their pairs are its own)" if copies else ""
        parts.append(
            f"<h4>Each pair of the others{esc(left_out)}</h4>" + _pair_rows(others, files, note)
        )
    parts.append(_matrix(block, files))
    parts += [
        f"<p><b>Same log file:</b> {esc(same_file_sentence(first, copy))}</p>"
        for first, copy in same_file_pairs(files, labels)
    ]
    return "".join(parts)
