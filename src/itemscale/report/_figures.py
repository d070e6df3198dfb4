"""The report's figures, drawn with matplotlib (`_plot`) as inline SVG strings.

Each public function takes the numbers the page prints and returns one `<svg class="figure
NAME">`: axis titles on both axes, matplotlib's tick locators, a legend or colour bar beside or
under the plot (never over it), colours from Okabe and Ito's colour-blind-safe palette (and a
marker shape per series), every plotted value in a hover text (`<title>`) and every text as
text. docs/report.md describes each figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..analysis.measures import BinaryBlock, Estimate
from ._plot import (
    BLUE,
    GREEN,
    INK,
    MARKERS,
    MISSING,
    OKABE_ITO,
    VERMILLION,
    Made,
    Marks,
    category_ticks,
    figure,
    legend_outside,
    new_figure,
)

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

Point = tuple[float | None, tuple[float, float] | None]

BUDGET_AXIS = "visual budget"


def _tip(name: str, value: float, ci: tuple[float, float] | None) -> str:
    return f"{name}: {100 * value:.1f}" + (
        f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci is not None else ""
    )


def _label(name: str) -> str:
    """A legend entry: matplotlib leaves out labels that start with `_`."""
    return " " + name if name.startswith("_") else name


def _percent_limits(ax: Axes, values: Sequence[float]) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 5, 10]))
    if not values:
        ax.set_ylim(0, 100)
        return
    low, high = min(values), max(values)
    pad = max(2.0, 0.08 * (high - low))
    ax.set_ylim(max(0.0, low - pad), min(100.0, high + pad) if high + pad > low else low + 5)


def _curve(
    marks: Marks,
    ax: Axes,
    xs: Sequence[float],
    points: Sequence[Point],
    colour: str,
    names: Sequence[str],
    *,
    cls: str = "acc-point",
    marker: str = "o",
    line_gid: str | None = None,
) -> list[float]:
    """Returns every plotted value and interval end (percent) for the axis limits."""
    band = [(x, ci) for x, (_, ci) in zip(xs, points, strict=True) if ci is not None]
    if len(band) >= 2:
        ax.fill_between(
            [x for x, _ in band],
            [100 * ci[0] for _, ci in band],
            [100 * ci[1] for _, ci in band],
            color=colour,
            alpha=0.18,
            linewidth=0,
            gid=marks.gid("ci-band"),
        )
    for x, (low, high) in band:
        ax.plot([x, x], [100 * low, 100 * high], color=colour, alpha=0.55, linewidth=1)
    line = [(x, v) for x, (v, _) in zip(xs, points, strict=True) if v is not None]
    ax.plot(
        [x for x, _ in line], [100 * v for _, v in line], color=colour, linewidth=1.8, gid=line_gid
    )
    for (x, (v, ci)), name in zip(zip(xs, points, strict=True), names, strict=True):
        if v is not None:
            ax.plot(
                [x],
                [100 * v],
                marker=marker,
                color=colour,
                markersize=5,
                linestyle="none",
                gid=marks.gid(cls, _tip(name, v, ci)),
            )
    return [100 * v for _, v in line] + [100 * end for _, pair in band for end in pair]


@figure
def accuracy_curve(
    marks: Marks,
    labels: Sequence[str],
    points: Sequence[Point],
    *,
    title: str,
    y_title: str = "accuracy",
) -> Made:
    """Accuracy (points) at each budget, in axis order, with its 95% interval as a band."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    width = max(4.2, 0.45 * len(labels) + 1.2)
    fig = new_figure(width, 3.3)
    ax = fig.add_subplot()
    plotted = _curve(marks, ax, range(len(labels)), points, BLUE, labels)
    _percent_limits(ax, plotted)
    ax.set_xlim(-0.5, len(labels) - 0.5)
    category_ticks(ax, labels, 72 * (width - 0.9))
    ax.set_xlabel(BUDGET_AXIS)
    ax.set_ylabel(f"{y_title} (%)")
    ax.set_title(title)
    ax.grid(axis="y", color="#e6e6e6", linewidth=0.8)
    handles: list[Artist] = [Line2D([], [], color=BLUE, marker="o", markersize=5, label=y_title)]
    if any(ci is not None for _, ci in points):  # no band without intervals (a small sample)
        handles.append(Patch(facecolor=BLUE, alpha=0.18, label="95% interval"))
    legend_outside(ax, "below", handles=handles, ncols=2)
    return fig, "accuracy-curve", title


#: The least height of a pattern's band in the heat map (points, about one label's height), so
#: a group of a few items among thousands stays visible and its label readable.
MIN_BAND_PT = 12.0
#: The heat map's raster: this many rows of pixels, whatever the number of items.
RASTER_ROWS = 400
HEAT_PLOT_PT = 190.0


def band_edges(sizes: Sequence[int], rows: int, least: float) -> np.ndarray:
    """In raster rows: at least `least` each (or an equal share), the rest by group size."""
    floor = min(least, rows / max(len(sizes), 1))
    spare = max(rows - floor * len(sizes), 0.0)
    total = max(sum(sizes), 1)
    heights = [floor + spare * s / total for s in sizes]
    return np.concatenate([[0.0], np.cumsum(heights)])


def raster_items(sizes: Sequence[int], edges: np.ndarray, rows: int) -> np.ndarray:
    """The row's centre picks the item at the same fraction of its group's band."""
    centres = np.arange(rows) + 0.5
    group = np.clip(np.searchsorted(edges, centres, side="right") - 1, 0, len(sizes) - 1)
    starts = np.concatenate([[0], np.cumsum(sizes)])[:-1]
    size = np.asarray(sizes)[group]
    frac = (centres - edges[group]) / (edges[group + 1] - edges[group])
    return np.asarray(starts[group] + np.minimum(np.floor(frac * size), size - 1), dtype=int)


def _colours(values: np.ndarray, binary: bool) -> np.ndarray:
    from matplotlib import colormaps
    from matplotlib.colors import to_rgb

    out = np.empty((*values.shape, 3))
    if binary:
        out[...] = np.where((values >= 0.5)[..., None], to_rgb(GREEN), to_rgb(VERMILLION))
    else:
        out[...] = colormaps["viridis"](np.clip(np.nan_to_num(values), 0, 1))[..., :3]
    out[np.isnan(values)] = to_rgb(MISSING)
    return out


def _heat_legend(ax: Axes, fig: Figure, binary: bool) -> None:
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    from matplotlib.patches import Patch

    if binary:
        handles = [Patch(color=GREEN, label="right"), Patch(color=VERMILLION, label="wrong")]
    else:
        handles = []
        scale = ScalarMappable(norm=Normalize(0, 1), cmap="viridis")
        bar = fig.colorbar(scale, ax=ax, shrink=0.8, pad=0.03)
        bar.set_label("score")
    handles.append(Patch(color=MISSING, label="no answer"))
    legend_outside(ax, "below", handles=handles, ncols=3)


def _sorted_items(
    values: np.ndarray, patterns: Sequence[str], pattern_order: Sequence[str]
) -> tuple[np.ndarray, list[tuple[str, int]]]:
    """By pattern, then by trajectory (no answer, wrong, right at budget 0, then 1, ...)."""
    rank = {p: i for i, p in enumerate(pattern_order)}
    ranks = np.array([rank.get(p, len(rank)) for p in patterns], dtype=int)
    keys = np.nan_to_num(values, nan=-1.0)
    # lexsort's last key is the primary one: the pattern, then budget 0, 1, ...
    order = np.lexsort([*(keys[:, c] for c in reversed(range(keys.shape[1]))), ranks])
    groups: list[tuple[str, int]] = []
    for i in order.tolist():
        p = patterns[i]
        if groups and groups[-1][0] == p:
            groups[-1] = (p, groups[-1][1] + 1)
        else:
            groups.append((p, 1))
    return order, groups


@figure
def heatmap(
    marks: Marks,
    labels: Sequence[str],
    values: np.ndarray,
    patterns: Sequence[str],
    pattern_order: Sequence[str],
    *,
    binary: bool,
    names: Mapping[str, str] | None = None,
) -> Made:
    """Items x budgets, rows grouped by pattern (in `pattern_order`) and sorted by trajectory
    inside a group, drawn as a raster of `RASTER_ROWS` rows whatever the number of items; each
    group's band is at least one label tall. `names` are the patterns' display names."""
    names = names or {}
    n, k = values.shape
    order, groups = _sorted_items(values, patterns, pattern_order)
    texts = [f"{names.get(p, p.replace('_', ' '))} ({size})" for p, size in groups]
    width = max(4.4, 0.42 * k + 2.4) + 0.06 * max((len(t) for t in texts), default=0)
    fig = new_figure(width, 3.6)
    ax = fig.add_subplot()
    sizes = [size for _, size in groups]
    edges = band_edges(sizes, RASTER_ROWS, RASTER_ROWS * MIN_BAND_PT / HEAT_PLOT_PT)
    if n:
        rows = values[order][raster_items(sizes, edges, RASTER_ROWS)]
        ax.imshow(
            _colours(rows, binary),
            aspect="auto",
            interpolation="none",
            extent=(-0.5, k - 0.5, RASTER_ROWS, 0),
            gid=marks.gid("cells"),
        )
    else:
        ax.text(0.5, 0.5, "no items", transform=ax.transAxes, ha="center", va="center")
    ax.set_xlim(-0.5, max(k, 1) - 0.5)
    ax.set_ylim(RASTER_ROWS, 0)
    for edge in edges[1:-1]:
        ax.axhline(edge, color="white", linewidth=1.5)
    ax.set_yticks((edges[:-1] + edges[1:]) / 2, texts)
    for tick in ax.get_yticklabels():
        tick.set_gid(marks.gid("group-label"))
    ax.tick_params(axis="y", length=0)
    category_ticks(ax, labels, 72 * (width - 2.4))
    ax.set_xlabel(BUDGET_AXIS)
    ax.set_ylabel(f"{n} items, grouped by pattern")
    for spine in ax.spines.values():
        spine.set_visible(False)
    _heat_legend(ax, fig, binary)
    return fig, "heatmap", f"item trajectories: {n} items"


def point(stat: Estimate | None, note: str | None = None) -> Point:
    """No interval where `note` says the block's intervals are not estimable."""
    if stat is None or stat.value is None:
        return None, None
    ci = None if note is not None or stat.ci is None else (float(stat.ci[0]), float(stat.ci[1]))
    return float(stat.value), ci


@figure
def flip_bars(marks: Marks, block: BinaryBlock, note: str | None = None) -> Made:
    """Flip-down (vermillion) and flip-up (blue) per adjacent pair, with 95% intervals (none
    where `note` says they are not estimable)."""
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    pairs = [str(p) for p in block.adjacent]
    if not pairs:
        return None
    shown = [p.replace("->", " → ") for p in pairs]
    width = max(4.2, 0.7 * len(pairs) + 1.2)
    fig = new_figure(width, 3.3)
    ax = fig.add_subplot()
    handles: list[Patch] = []
    for offset, stats, colour, kind, meaning in (
        (-0.2, block.flip_down, VERMILLION, "down", "right → wrong"),
        (0.2, block.flip_up, BLUE, "up", "wrong → right"),
    ):
        for i, pair in enumerate(pairs):
            value, ci = point(stats.get(pair), note)
            if value is None:
                continue
            ax.bar(
                i + offset,
                100 * value,
                width=0.38,
                color=colour,
                gid=marks.gid(f"flip-{kind}", _tip(f"flip {kind} {shown[i]}", value, ci)),
            )
            if ci is not None:
                ax.errorbar(
                    i + offset,
                    100 * value,
                    linewidth=1,
                    capsize=2,
                    color=INK,
                    yerr=[[100 * (value - ci[0])], [100 * (ci[1] - value)]],
                )
        handles.append(Patch(color=colour, label=f"flip {kind}: {meaning}"))
    ax.set_xlim(-0.6, len(pairs) - 0.4)
    ax.set_ylim(bottom=0)
    ax.yaxis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 5, 10]))
    category_ticks(ax, shown, 72 * (width - 0.9))
    ax.set_xlabel("adjacent budgets")
    ax.set_ylabel("share of items (%)")
    ax.grid(axis="y", color="#e6e6e6", linewidth=0.8)
    ax.set_axisbelow(True)
    legend_outside(ax, "below", handles=handles, ncols=2)
    return fig, "flip-bars", "flip-down and flip-up per adjacent pair (points, 95% CI)"


@figure
def frontier(
    marks: Marks,
    series: Sequence[tuple[str, Sequence[tuple[float, float]]]],
    *,
    x_label: str,
    dashed: Sequence[str] = (),
) -> Made:
    """Cost-accuracy figure: one line per named series of (cost, accuracy) points, each in its
    own colour and marker; series named in `dashed` are drawn dashed with hollow markers (the
    in-sample threshold sweep). '' when no series has a point."""
    from matplotlib.lines import Line2D

    if not any(pts for _, pts in series):
        return None
    fig = new_figure(5.2, 3.4 + 0.16 * len(series))
    ax = fig.add_subplot()
    ys: list[float] = []
    handles: list[Line2D] = []
    for n, (name, pts) in enumerate(series):
        colour, marker = OKABE_ITO[n % len(OKABE_ITO)], MARKERS[n % len(MARKERS)]
        hollow = name in dashed
        ordered = sorted(pts)
        # a policy (one point) above the lines; a long sweep with small markers
        size, layer = (7.0, 4.0) if len(ordered) < 2 else (4.0 if len(ordered) > 20 else 5.0, 2.0)
        style: dict[str, Any] = {
            "color": colour,
            "marker": marker,
            "markersize": size,
            "markerfacecolor": "white" if hollow else colour,
            "linestyle": "none" if len(ordered) < 2 else "--" if hollow else "-",
            "linewidth": 1.2 if hollow else 1.6,
        }
        handles.append(Line2D([], [], label=_label(name), **style))
        if len(ordered) >= 2:
            ax.plot(
                [a for a, _ in ordered],
                [100 * b for _, b in ordered],
                zorder=layer,
                **{**style, "marker": "none"},
            )
        for a, b in ordered:
            ax.plot(
                [a],
                [100 * b],
                marker=marker,
                markersize=size,
                zorder=layer,
                linestyle="none",
                color=colour,
                markerfacecolor="white" if hollow else colour,
                gid=marks.gid("frontier-point", f"{name}: cost {a:.4g}, accuracy {100 * b:.1f}"),
            )
        ys += [100 * b for _, b in ordered]
    ax.margins(x=0.06)
    _percent_limits(ax, ys)
    ax.set_xlabel(x_label)
    ax.set_ylabel("accuracy (%)")
    ax.grid(color="#eeeeee", linewidth=0.8)
    ax.set_axisbelow(True)
    legend_outside(ax, "below", handles=handles, ncols=2)
    return fig, "frontier", "cost-accuracy figure"


@figure
def chain_curves(
    marks: Marks,
    frames: Sequence[int],
    chains: Sequence[tuple[str, Sequence[int], Sequence[Point]]],
    *,
    title: str,
    y_title: str = "accuracy",
) -> Made:
    """On a frames x resolution grid: one accuracy curve per resolution (x = frame count, each
    curve a `frames@RES` chain with its 95% band)."""
    from matplotlib.lines import Line2D

    xs = sorted(set(frames))
    width = max(4.6, 0.45 * len(xs) + 2.2)
    fig = new_figure(width, 3.3)
    ax = fig.add_subplot()
    plotted: list[float] = []
    handles: list[Line2D] = []
    for n, (name, chain_frames, points) in enumerate(chains):
        colour, marker = OKABE_ITO[n % len(OKABE_ITO)], MARKERS[n % len(MARKERS)]
        at = [xs.index(f) for f in chain_frames]
        plotted += _curve(
            marks,
            ax,
            at,
            points,
            colour,
            [f"{name} {f}f" for f in chain_frames],
            marker=marker,
            line_gid=marks.gid("chain-line", name),
        )
        handles.append(
            Line2D(
                [],
                [],
                color=colour,
                marker=marker,
                markersize=5,
                linewidth=1.8,
                label=_label(name.removeprefix("frames@")),
            )
        )
    _percent_limits(ax, plotted)
    ax.set_xlim(-0.5, len(xs) - 0.5)
    category_ticks(ax, [str(f) for f in xs], 72 * (width - 2.0))
    ax.set_xlabel("frames")
    ax.set_ylabel(f"{y_title} (%)")
    ax.set_title(title)
    ax.grid(axis="y", color="#e6e6e6", linewidth=0.8)
    legend_outside(ax, "right", handles=handles, title="resolution")
    return fig, "chain-curves", title


@figure
def budget_grid(
    marks: Marks,
    frames: Sequence[int],
    resolutions: Sequence[str],
    cells: Mapping[tuple[int, str], Point],
    *,
    title: str,
) -> Made:
    """Frames (columns) x resolution (rows, smallest at the bottom) with each budget's accuracy
    written in its cell and coloured by it; a grey cell is a budget the grid does not have."""
    from matplotlib import colormaps
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    from matplotlib.patches import Patch, Rectangle

    xs, ys = sorted(set(frames)), list(resolutions)
    known = [100 * v for v, _ in cells.values() if v is not None]
    norm = Normalize(min(known, default=0.0), max(known, default=100.0))
    cmap = colormaps["viridis"]
    fig = new_figure(max(4.4, 0.62 * len(xs) + 2.6), max(2.6, 0.42 * len(ys) + 1.7))
    ax = fig.add_subplot()
    for r, res in enumerate(ys):
        for c, f in enumerate(xs):
            value, ci = cells.get((f, res), (None, None))
            if value is None:
                ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, color=MISSING))
                continue
            rgba = cmap(norm(100 * value))
            ax.add_patch(
                Rectangle(
                    (c - 0.5, r - 0.5),
                    1,
                    1,
                    color=rgba,
                    linewidth=0,
                    gid=marks.gid("budget-cell", _tip(f"{f}f @ {res}", value, ci)),
                )
            )
            light = 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2] > 0.55
            ax.text(
                c,
                r,
                f"{100 * value:.1f}",
                ha="center",
                va="center",
                fontsize=8,
                color=INK if light else "white",
            )
    ax.set_xlim(-0.5, len(xs) - 0.5)
    ax.set_ylim(-0.5, len(ys) - 0.5)
    ax.set_xticks(range(len(xs)), [str(f) for f in xs])
    ax.set_yticks(range(len(ys)), ys)
    ax.set_xlabel("frames")
    ax.set_ylabel("resolution")
    ax.set_title(title)
    for spine in ax.spines.values():
        spine.set_visible(False)
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, pad=0.03)
    bar.set_label(f"{title.split(':')[0]} (%)")
    if len(known) < len(xs) * len(ys):
        legend_outside(ax, "below", handles=[Patch(color=MISSING, label="not on the grid")])
    return fig, "budget-grid", title
