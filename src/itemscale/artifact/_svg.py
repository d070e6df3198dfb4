"""The report's figures as inline SVG strings, drawn in Python so the page needs no plotting
library and shows its figures even with scripts disabled.

Every piece of text that reaches the SVG (labels, model names, item ids) goes through `esc`:
model outputs and benchmark names are untrusted.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

GREEN = "#1a9850"
RED = "#d73027"
BLUE = "#3182bd"
GREY = "#cccccc"
INK = "#222222"


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _num(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


def _tick_label(x: float, y: float, text: str, crowded: bool) -> str:
    """An axis label under x; turned 40 degrees when the labels would collide."""
    if crowded:
        return (
            f'<text class="tick" x="{_num(x)}" y="{_num(y - 6)}" text-anchor="end" font-size="10" '
            f'transform="rotate(-40 {_num(x)} {_num(y - 6)})">{esc(text)}</text>'
        )
    return (
        f'<text class="tick" x="{_num(x)}" y="{_num(y)}" text-anchor="middle" '
        f'font-size="10">{esc(text)}</text>'
    )


def _crowded(labels: Sequence[str], room: float) -> bool:
    """True when the labels' estimated widths (6 px a character) exceed their share of room."""
    if not labels:
        return False
    return max(len(x) for x in labels) * 6.0 > room / len(labels)


def _stat(block: dict[str, Any], key: str) -> tuple[float | None, tuple[float, float] | None]:
    raw = block.get(key)
    if not isinstance(raw, dict):
        return None, None
    value = raw.get("value")
    ci = raw.get("ci")
    ci_pair = (
        (float(ci[0]), float(ci[1])) if isinstance(ci, list | tuple) and len(ci) == 2 else None
    )
    return (float(value) if value is not None else None), ci_pair


def accuracy_curve(
    labels: Sequence[str],
    points: Sequence[tuple[float | None, tuple[float, float] | None]],
    *,
    title: str,
    width: int = 380,
    height: int = 260,
) -> str:
    """Accuracy (points) along the axis with its 95% interval as a band."""
    width = max(width, 40 * len(labels) + 56)
    crowded = _crowded(labels, width - 56)
    bottom = 40 + (6 * max((len(x) for x in labels), default=0) if crowded else 0)
    height += bottom - 40
    extra = int(4.7 * max((len(x) for x in labels), default=0)) // 2 if crowded else 0
    left, right, top = 44 + extra, 12, 24
    width += extra
    pw, ph = width - left - right, height - top - bottom
    k = len(labels)

    def x(i: int) -> float:
        return left + (pw * (i + 0.5) / k if k else 0)

    def y(v: float) -> float:
        return top + ph * (1 - v)

    parts = [
        f'<svg class="figure accuracy-curve" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{esc(title)}</title>",
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(
            f'<line x1="{left}" x2="{left + pw}" y1="{_num(y(tick))}" y2="{_num(y(tick))}" '
            f'stroke="#eeeeee"/><text x="{left - 6}" y="{_num(y(tick) + 4)}" '
            f'text-anchor="end" font-size="10">{int(tick * 100)}</text>'
        )
    band_hi = [(x(i), y(ci[1])) for i, (_, ci) in enumerate(points) if ci is not None]
    band_lo = [(x(i), y(ci[0])) for i, (_, ci) in enumerate(points) if ci is not None]
    if len(band_hi) >= 2:
        poly = " ".join(f"{_num(a)},{_num(b)}" for a, b in [*band_hi, *reversed(band_lo)])
        parts.append(
            f'<polygon class="ci-band" points="{poly}" fill="{BLUE}" fill-opacity="0.18"/>'
        )
    for i, (_, ci) in enumerate(points):
        if ci is not None:
            parts.append(
                f'<line class="ci-bar" x1="{_num(x(i))}" x2="{_num(x(i))}" y1="{_num(y(ci[0]))}" '
                f'y2="{_num(y(ci[1]))}" stroke="{BLUE}" stroke-opacity="0.6"/>'
            )
    line = [(x(i), y(v)) for i, (v, _) in enumerate(points) if v is not None]
    if len(line) >= 2:
        pts = " ".join(f"{_num(a)},{_num(b)}" for a, b in line)
        parts.append(f'<polyline points="{pts}" fill="none" stroke="{BLUE}" stroke-width="2"/>')
    for i, (v, ci) in enumerate(points):
        if v is None:
            continue
        tip = f"{labels[i]}: {100 * v:.1f}"
        if ci is not None:
            tip += f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"
        parts.append(
            f'<circle class="acc-point" cx="{_num(x(i))}" cy="{_num(y(v))}" r="3.5" '
            f'fill="{BLUE}"><title>{esc(tip)}</title></circle>'
        )
    for i, lab in enumerate(labels):
        parts.append(_tick_label(x(i), height - bottom + 16, lab, crowded))
    parts.append(f'<text x="{left}" y="14" font-size="11" fill="{INK}">{esc(title)}</text></svg>')
    return "".join(parts)


#: The least height (px) of a pattern's band in the heat map, so a group of a few items among
#: thousands stays visible and its label readable; the rest is shared in proportion to size.
MIN_BAND = 16.0


def _row_tops(pats: Sequence[str], top: float, height: float) -> list[float]:
    """y of each row's top (and the end, at index n): each run of one pattern gets MIN_BAND
    plus its share of what is left, and its rows split that band evenly."""
    n = len(pats)
    runs: list[tuple[int, int]] = []
    start = 0
    for r in range(1, n + 1):
        if r == n or pats[r] != pats[start]:
            runs.append((start, r))
            start = r
    floor = min(MIN_BAND, height / max(len(runs), 1))
    spare = max(height - floor * len(runs), 0.0)
    ys = [top] * (n + 1)
    y = top
    for a, b in runs:
        band = floor + spare * (b - a) / max(n, 1)
        for r in range(a, b + 1):
            ys[r] = y + band * (r - a) / (b - a)
        y += band
    return ys


def heatmap(
    labels: Sequence[str],
    values: np.ndarray,
    patterns: Sequence[str],
    pattern_order: Sequence[str],
    *,
    binary: bool,
    names: Mapping[str, str] | None = None,
    width: int = 420,
    height: int = 300,
) -> str:
    """Items x budgets, rows grouped by pattern and sorted by trajectory inside a group.

    Vertical runs of equal cells are drawn as one rectangle, so a table of thousands of items is
    a few hundred shapes. `names` are the patterns' display names. Group labels sit at their
    group's middle unless that would overlap a neighbour's or leave the figure; a moved label
    gets a leader line to its group.
    """
    names = names or {}
    n, k = values.shape
    rank = {p: i for i, p in enumerate(pattern_order)}
    keys = [tuple(r) for r in np.nan_to_num(values, nan=-1.0).tolist()]
    order = sorted(range(n), key=lambda i: (rank.get(patterns[i], len(rank)), keys[i]))
    v = values[order] if n else values
    pats = [patterns[i] for i in order]
    crowded = _crowded(labels, width - 104)
    bottom = 40 + (6 * max((len(x) for x in labels), default=0) if crowded else 0)
    height += bottom - 40
    # room for the longest group label, e.g. "always wrong (1234)"
    longest = max((len(names.get(p, p)) + len(str(n)) + 3 for p in set(pats)), default=10)
    left, top = max(96, 22 + 6 * longest), 8
    width += left - 96
    pw, ph = width - left - 8, height - top - bottom
    cw = pw / max(k, 1)
    ys = _row_tops(pats, top, ph)
    parts = [
        f'<svg class="figure heatmap" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" shape-rendering="crispEdges" '
        f'xmlns="http://www.w3.org/2000/svg"><title>item trajectories: {n} items</title>'
    ]

    def colour(val: float) -> tuple[str, str]:
        if np.isnan(val):
            return GREY, "1"
        if binary:
            return (GREEN if val >= 0.5 else RED), "1"
        return BLUE, _num(0.15 + 0.85 * float(val))

    for c in range(k):
        col = v[:, c] if n else np.array([])
        start = 0
        for r in range(1, n + 1):
            same = (
                r < n
                and ((np.isnan(col[r]) and np.isnan(col[start])) or col[r] == col[start])
                and pats[r] == pats[start]
            )
            if same:
                continue
            fill, opacity = colour(float(col[start]))
            parts.append(
                f'<rect class="cell" x="{_num(left + c * cw)}" y="{_num(ys[start])}" '
                f'width="{_num(cw - 1)}" height="{_num(ys[r] - ys[start])}" fill="{fill}" '
                f'fill-opacity="{opacity}"/>'
            )
            start = r
    groups: list[tuple[str, float, float, int]] = []  # name, y0, y1, size
    start = 0
    for r in range(1, n + 1):
        if r < n and pats[r] == pats[start]:
            continue
        groups.append((pats[start], ys[start], ys[r], r - start))
        start = r
    wanted = [(y0 + y1) / 2 for _, y0, y1, _ in groups]
    placed = spread_labels(wanted, LABEL_GAP, top + 8, top + ph + 2)
    for (pattern, y0, _, size), want, at in zip(groups, wanted, placed, strict=True):
        parts.append(
            f'<line x1="{left}" x2="{left + pw}" y1="{_num(y0)}" y2="{_num(y0)}" '
            f'stroke="#ffffff" stroke-width="2"/>'
        )
        if abs(at - want) > 0.5:
            parts.append(
                f'<line class="leader" x1="{left - 12}" y1="{_num(at)}" x2="{left - 1}" '
                f'y2="{_num(want)}" stroke="#999999"/>'
            )
        parts.append(
            f'<text class="group-label" x="{left - 14}" y="{_num(at + 3.5)}" text-anchor="end" '
            f'font-size="10">{esc(names.get(pattern, pattern.replace("_", " ")))} ({size})</text>'
        )
    for c, lab in enumerate(labels):
        parts.append(_tick_label(left + (c + 0.5) * cw, height - bottom + 16, lab, crowded))
    parts.append("</svg>")
    return "".join(parts)


#: Vertical room one 10 px label needs, so two never overlap.
LABEL_GAP = 11.0


def spread_labels(wanted: Sequence[float], gap: float, low: float, high: float) -> list[float]:
    """Label positions as close to `wanted` (ascending) as possible, at least `gap` apart and
    inside [low, high] (when they fit): pushed down past each other, then back up from the
    bottom edge."""
    placed: list[float] = []
    for y in wanted:
        placed.append(max(y, low, placed[-1] + gap if placed else low))
    ceiling = high
    for i in range(len(placed) - 1, -1, -1):
        placed[i] = min(placed[i], ceiling)
        ceiling = placed[i] - gap
    return [max(y, low) for y in placed] if placed and placed[0] < low else placed


def nice_ticks(top: float, most: int = 5) -> list[float]:
    """Ticks from 0 at a round step in points (1, 2, 2.5, 5 x 10^k) that stay within `top`
    (a fraction), so an axis reads 0, 2, 4, 6 rather than 0, 2.3, 4.7, 7."""
    span = 100.0 * max(top, 1e-9)
    raw = span / max(most - 1, 1)
    magnitude = 10 ** np.floor(np.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    count = int(np.floor(span / step + 1e-9))
    return [float(i * step / 100.0) for i in range(count + 1)]


def flip_bars(block: dict[str, Any], *, width: int = 420, height: int = 240) -> str:
    """Flip-down (red) and flip-up (blue) per adjacent pair, with 95% intervals."""
    pairs = [str(p) for p in block.get("adjacent", [])]
    downs = [_stat(block.get("flip_down", {}), p) for p in pairs]
    ups = [_stat(block.get("flip_up", {}), p) for p in pairs]
    top_value = max(
        [0.05]
        + [ci[1] for _, ci in downs + ups if ci is not None]
        + [v for v, _ in downs + ups if v is not None]
    )
    width = max(width, 70 * len(pairs) + 54)
    crowded = _crowded(pairs, width - 54)
    bottom = 44 + (6 * max((len(x) for x in pairs), default=0) if crowded else 0)
    height += bottom - 44
    extra = int(4.7 * max((len(x) for x in pairs), default=0)) if crowded else 0
    left, top = 44 + extra, 24
    width += extra
    pw, ph = width - left - 10, height - top - bottom
    group = pw / max(len(pairs), 1)
    bar = min(28.0, group / 3)

    def y(v: float) -> float:
        return top + ph * (1 - v / top_value)

    parts = [
        f'<svg class="figure flip-bars" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">'
        "<title>flip-down and flip-up per adjacent pair</title>",
        f'<text x="{left}" y="14" font-size="11"><tspan fill="{RED}">flip down</tspan> / '
        f'<tspan fill="{BLUE}">flip up</tspan> (points)</text>',
        f'<line x1="{left}" x2="{left + pw}" y1="{_num(y(0))}" y2="{_num(y(0))}" stroke="{INK}"/>',
    ]
    for tick in nice_ticks(top_value):
        parts.append(
            f'<text x="{left - 6}" y="{_num(y(float(tick)) + 4)}" text-anchor="end" '
            f'font-size="10">{100 * tick:g}</text>'
        )
    for i, pair in enumerate(pairs):
        cx = left + group * (i + 0.5)
        for offset, (value, ci), fill, kind in (
            (-bar, downs[i], RED, "down"),
            (0.0, ups[i], BLUE, "up"),
        ):
            if value is None:
                continue
            x0 = cx + offset
            tip = f"flip {kind} {pair}: {100 * value:.1f}"
            if ci is not None:
                tip += f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"
            parts.append(
                f'<rect class="flip-{kind}" x="{_num(x0)}" y="{_num(y(value))}" '
                f'width="{_num(bar - 2)}" height="{_num(max(y(0) - y(value), 0))}" '
                f'fill="{fill}"><title>{esc(tip)}</title></rect>'
            )
            if ci is not None:
                xm = x0 + (bar - 2) / 2
                parts.append(
                    f'<line x1="{_num(xm)}" x2="{_num(xm)}" y1="{_num(y(ci[0]))}" '
                    f'y2="{_num(y(ci[1]))}" stroke="{INK}"/>'
                )
        parts.append(_tick_label(cx, height - bottom + 16, pair, crowded))
    parts.append("</svg>")
    return "".join(parts)


#: Okabe and Ito's colour-blind-safe palette (blue, vermillion, bluish green, reddish purple,
#: orange, sky blue, black, yellow last: faint on white): one colour per series of the
#: cost-accuracy figure.
OKABE_ITO = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#f0e442")


def range_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values (1, 2, 2.5 or 5 times a power of ten) from at or below `low` to at or
    above `high`."""
    if not high > low:
        return [low]
    raw = (high - low) / max(count - 1, 1)
    power = 10.0 ** np.floor(np.log10(raw))
    step = next(m * power for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * power >= raw)
    # from the round value at or below `low` to the one at or above `high`: the axis then
    # spans whole steps and every end has a tick
    first = np.floor(low / step + 1e-9) * step
    last = np.ceil(high / step - 1e-9) * step
    return [round(float(v), 10) for v in np.arange(first, last + step * 1e-6, step)]


def frontier(
    series: Sequence[tuple[str, Sequence[tuple[float, float]]]],
    *,
    x_label: str,
    width: int = 520,
    height: int = 280,
    dashed: Sequence[str] = (),
) -> str:
    """Cost-accuracy figure: one polyline per named series of (cost, accuracy) points, each
    in its own colour-blind-safe colour, with axis titles, round ticks on both axes and the
    legend beside the plot (never over a point). Series named in `dashed` are drawn dashed and
    hollow (the in-sample threshold sweep)."""
    all_pts = [p for _, pts in series for p in pts]
    if not all_pts:
        return ""
    xs = [p[0] for p in all_pts]
    ys = [100 * p[1] for p in all_pts]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    pad = 0.05 * (x1 - x0)
    # a margin on both sides, so no point sits on an axis
    x0, x1 = (x0 - pad, x1 + pad) if x1 > x0 else (x0 - 1, x0 + 1)
    y0, y1 = (y0 - 2, y1 + 2) if y1 > y0 else (y0 - 5, y0 + 5)
    xt, yt = range_ticks(x0, x1), range_ticks(y0, y1)
    x0, x1 = min(x0, xt[0]), max(x1, xt[-1])
    y0, y1 = min(y0, yt[0]), max(y1, yt[-1])
    left, top, bottom, right = 52, 16, 44, 190
    pw, ph = width - left - right, height - top - bottom

    def px(v: float) -> float:
        return left + pw * (v - x0) / (x1 - x0)

    def py(v: float) -> float:
        return top + ph * (1 - (v - y0) / (y1 - y0))

    parts = [
        f'<svg class="figure frontier" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">'
        "<title>cost-accuracy figure</title>",
        f'<line x1="{left}" x2="{left + pw}" y1="{top + ph}" y2="{top + ph}" stroke="{INK}"/>',
        f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + ph}" stroke="{INK}"/>',
        f'<text class="axis-title" x="{left + pw / 2:.1f}" y="{height - 6}" '
        f'text-anchor="middle" font-size="11">{esc(x_label)}</text>',
        f'<text class="axis-title" x="12" y="{top + ph / 2:.1f}" text-anchor="middle" '
        f'font-size="11" transform="rotate(-90 12 {top + ph / 2:.1f})">accuracy (%)</text>',
    ]
    for v in xt:
        parts.append(
            f'<line x1="{_num(px(v))}" x2="{_num(px(v))}" y1="{top + ph}" y2="{top + ph + 4}" '
            f'stroke="{INK}"/><text x="{_num(px(v))}" y="{top + ph + 16}" text-anchor="middle" '
            f'font-size="10">{v:g}</text>'
        )
    for v in yt:
        parts.append(
            f'<line x1="{left - 4}" x2="{left}" y1="{_num(py(v))}" y2="{_num(py(v))}" '
            f'stroke="{INK}"/><text x="{left - 6}" y="{_num(py(v) + 3)}" text-anchor="end" '
            f'font-size="10">{v:g}</text>'
        )
    for n, (name, pts) in enumerate(series):
        colour = OKABE_ITO[n % len(OKABE_ITO)]
        hollow = name in dashed
        ordered = sorted(pts)
        if len(ordered) >= 2:
            line = " ".join(f"{_num(px(a))},{_num(py(100 * b))}" for a, b in ordered)
            dash = ' stroke-dasharray="4 3"' if hollow else ""
            parts.append(f'<polyline points="{line}" fill="none" stroke="{colour}"{dash}/>')
        fill = "white" if hollow else colour
        for a, b in ordered:
            parts.append(
                f'<circle class="frontier-point" cx="{_num(px(a))}" cy="{_num(py(100 * b))}" '
                f'r="3" fill="{fill}" stroke="{colour}"><title>'
                f"{esc(f'{name}: cost {a:.4g}, accuracy {100 * b:.1f}')}</title></circle>"
            )
        ly = top + 8 + 15 * n
        parts.append(
            f'<circle cx="{left + pw + 14}" cy="{ly - 3}" r="3.5" fill="{fill}" '
            f'stroke="{colour}"/><text class="legend" x="{left + pw + 22}" y="{ly}" '
            f'font-size="10">{esc(name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


#: One colour per chain of a frames x resolution grid, told apart at a glance.
CHAIN_COLOURS = ("#3182bd", "#e6550d", "#31a354", "#756bb1", "#636363", "#d6616b", "#8c6d31")

Point = tuple[float | None, tuple[float, float] | None]


def chain_curves(
    frames: Sequence[int],
    chains: Sequence[tuple[str, Sequence[int], Sequence[Point]]],
    *,
    title: str,
    width: int = 420,
    height: int = 260,
) -> str:
    """On a frames x resolution grid: one accuracy curve per resolution (x = frame count, each
    curve a `frames@RES` chain with its 95% band), rather than one line zigzagging through
    budgets that alternate between the axes."""
    xs = sorted(set(frames))
    left, right, top, bottom = 44, 96, 24, 40
    width = max(width, 40 * len(xs) + left + right)
    pw, ph = width - left - right, height - top - bottom

    def x(f: int) -> float:
        return left + pw * (xs.index(f) + 0.5) / max(len(xs), 1)

    def y(v: float) -> float:
        return top + ph * (1 - v)

    parts = [
        f'<svg class="figure chain-curves" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{esc(title)}</title>",
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(
            f'<line x1="{left}" x2="{left + pw}" y1="{_num(y(tick))}" y2="{_num(y(tick))}" '
            f'stroke="#eeeeee"/><text x="{left - 6}" y="{_num(y(tick) + 4)}" '
            f'text-anchor="end" font-size="10">{int(tick * 100)}</text>'
        )
    ends: list[tuple[float, str, str]] = []
    for n, (name, chain_frames, points) in enumerate(chains):
        colour = CHAIN_COLOURS[n % len(CHAIN_COLOURS)]
        hi = [(x(f), y(ci[1])) for f, (_, ci) in zip(chain_frames, points, strict=True) if ci]
        lo = [(x(f), y(ci[0])) for f, (_, ci) in zip(chain_frames, points, strict=True) if ci]
        if len(hi) >= 2:
            poly = " ".join(f"{_num(a)},{_num(b)}" for a, b in [*hi, *reversed(lo)])
            parts.append(
                f'<polygon class="ci-band" points="{poly}" fill="{colour}" fill-opacity="0.15"/>'
            )
        line = [(f, v) for f, (v, _) in zip(chain_frames, points, strict=True) if v is not None]
        if len(line) >= 2:
            coords = " ".join(f"{_num(x(f))},{_num(y(v))}" for f, v in line)
            parts.append(
                f'<polyline class="chain-line" data-chain="{esc(name)}" points="{coords}" '
                f'fill="none" stroke="{colour}" stroke-width="2"/>'
            )
        for f, v in line:
            parts.append(
                f'<circle class="acc-point" cx="{_num(x(f))}" cy="{_num(y(v))}" r="3" '
                f'fill="{colour}"><title>{esc(name)} {f}f: {100 * v:.1f}</title></circle>'
            )
        if line:
            ends.append((y(line[-1][1]), name, colour))
    ends.sort()
    placed = spread_labels([e[0] for e in ends], LABEL_GAP, top + 4, top + ph)
    for (_, name, colour), at in zip(ends, placed, strict=True):
        parts.append(
            f'<text class="chain-label" x="{left + pw + 6}" y="{_num(at + 3.5)}" font-size="10" '
            f'fill="{colour}">{esc(name)}</text>'
        )
    for f in xs:
        parts.append(_tick_label(x(f), height - bottom + 16, f"{f}f", False))
    parts.append(f'<text x="{left}" y="14" font-size="11" fill="{INK}">{esc(title)}</text></svg>')
    return "".join(parts)


def budget_grid(
    frames: Sequence[int],
    resolutions: Sequence[str],
    cells: Mapping[tuple[int, str], Point],
    *,
    title: str,
) -> str:
    """Frames (columns) x resolution (rows, largest on top) with each budget's accuracy written
    in its cell and shaded by it; a grey cell is a budget the grid does not have."""
    xs, ys = sorted(set(frames)), list(resolutions)
    cw, ch = 52, 26
    left = 12 + 6 * max((len(r) for r in ys), default=4)
    top, bottom = 22, 30
    width, height = left + cw * len(xs) + 8, top + ch * len(ys) + bottom
    known = [v for v, _ in cells.values() if v is not None]
    low, high = (min(known), max(known)) if known else (0.0, 1.0)
    parts = [
        f'<svg class="figure budget-grid" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{esc(title)}</title>",
        f'<text x="4" y="14" font-size="11" fill="{INK}">{esc(title)}</text>',
    ]
    for r, res in enumerate(reversed(ys)):
        cy = top + r * ch
        parts.append(
            f'<text x="{left - 6}" y="{_num(cy + ch / 2 + 4)}" text-anchor="end" '
            f'font-size="10">{esc(res)}</text>'
        )
        for c, f in enumerate(xs):
            value, ci = cells.get((f, res), (None, None))
            cx = left + c * cw
            if value is None:
                parts.append(
                    f'<rect x="{cx}" y="{cy}" width="{cw - 2}" height="{ch - 2}" fill="#eeeeee"/>'
                )
                continue
            shade = 0.15 + 0.75 * ((value - low) / (high - low) if high > low else 1.0)
            ink = "#ffffff" if shade > 0.55 else INK
            tip = f"{f}f @ {res}: {100 * value:.1f}" + (
                f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci else ""
            )
            parts.append(
                f'<rect class="budget-cell" x="{cx}" y="{cy}" width="{cw - 2}" '
                f'height="{ch - 2}" fill="{BLUE}" fill-opacity="{_num(shade)}">'
                f"<title>{esc(tip)}</title></rect>"
                f'<text x="{_num(cx + (cw - 2) / 2)}" y="{_num(cy + ch / 2 + 3)}" '
                f'text-anchor="middle" font-size="10" fill="{ink}">{100 * value:.1f}</text>'
            )
    for c, f in enumerate(xs):
        parts.append(
            _tick_label(left + c * cw + (cw - 2) / 2, top + len(ys) * ch + 14, f"{f}f", False)
        )
    parts.append("</svg>")
    return "".join(parts)
