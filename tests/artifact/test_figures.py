"""The report's figures (matplotlib, inline SVG): axis titles and legends as text, the plotted
values those of measures.json, heat maps of a fixed size at any number of items, untrusted names
kept as text, the same bytes for the same numbers, and matplotlib loaded only for a report.

The figures are read back from report.html as XML; each marked point carries its value in its
`<title>` (the hover text), which is compared with measures.json.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _support.paths import SRC
from _support.runs import make_run
from itemscale.analysis.measures import AnalysisResult, BinarySeries, Estimate, interval_note
from itemscale.cli import main
from itemscale.report import build_artifact
from itemscale.report._figures import (
    accuracy_curve,
    band_edges,
    chain_curves,
    frontier,
    heatmap,
    raster_items,
)
from itemscale.report._trajectories import PATTERN_NAMES, PATTERNS

SVG = "{http://www.w3.org/2000/svg}"


def figures(html: str) -> list[ET.Element]:
    """Every `<svg class="figure ...">` of a page, parsed as XML."""
    found = re.findall(r'<svg class="figure .*?</svg>', html, flags=re.S)
    return [ET.fromstring(f) for f in found]


def kind(fig: ET.Element) -> str:
    return fig.get("class", "").split()[-1]


def texts(fig: ET.Element) -> list[str]:
    return [t.text or "" for t in fig.iter(f"{SVG}text")]


def tips(fig: ET.Element, cls: str) -> list[str]:
    """The hover texts of the figure's marks of class `cls`, in drawing order."""
    return [(g.findtext(f"{SVG}title") or "") for g in fig.iter(f"{SVG}g") if g.get("class") == cls]


def marker_y(mark: ET.Element) -> float:
    """The y of a point mark's marker, in the SVG's units."""
    use = next(mark.iter(f"{SVG}use"))
    return float(use.get("y", "nan"))


def tip(name: str, stat: Estimate, note: str | None) -> str:
    """A point's hover text: its interval only where the block's intervals are estimable."""
    assert stat.value is not None
    text = f"{name}: {100 * stat.value:.1f}"
    if note is None and stat.ci is not None:
        text += f" [{100 * stat.ci[0]:.1f}, {100 * stat.ci[1]:.1f}]"
    return text


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("figures") / "run"
    make_run(run, n_items=40, models=("tiny<b>model</b>", "other $x$ model"), with_audit=False)
    assert main(["cascade", str(run), "--bootstrap", "0"]) == 0
    return build_artifact(run, bootstrap=30, seed=0)


def test_every_figure_has_axis_titles_and_a_legend(artifact: Path) -> None:
    html = (artifact / "report.html").read_text(encoding="utf-8")
    figs = figures(html)
    kinds = [kind(f) for f in figs]
    assert kinds.count("accuracy-curve") == 2 and kinds.count("heatmap") == 2
    assert kinds.count("flip-bars") == 2 and kinds.count("frontier") == 2
    wanted = {
        "accuracy-curve": {"visual budget", "accuracy (%)", "accuracy", "95% interval"},
        "heatmap": {"visual budget", "right", "wrong", "no answer"},
        "flip-bars": {"adjacent budgets", "share of items (%)", "flip down: right → wrong"},
        "frontier": {"mean cost per item (frames)", "accuracy (%)", "threshold sweep (in-sample)"},
    }
    for fig in figs:
        shown = set(texts(fig))
        assert wanted[kind(fig)] <= shown, (kind(fig), wanted[kind(fig)] - shown)
        # numeric tick labels on the value axis, from matplotlib's locator
        if kind(fig) != "heatmap":
            assert sum(bool(re.fullmatch(r"\d+(\.\d+)?", t)) for t in shown) >= 3
        assert fig.findtext(f"{SVG}title")  # the figure's own accessible title
    for fig in figs:
        if kind(fig) == "heatmap":
            assert any(t.endswith("items, grouped by pattern") for t in texts(fig))
            images = list(fig.iter(f"{SVG}image"))
            assert len(images) == 1
            href = images[0].get("{http://www.w3.org/1999/xlink}href") or ""
            assert href.startswith("data:image/png;base64,")
    # the held-out policies are on the cost-accuracy figure, the sweep named in-sample
    for fig in (f for f in figs if kind(f) == "frontier"):
        labels = set(texts(fig))
        assert any(t.endswith("(held out)") and "sweep" not in t for t in labels)


def test_plotted_values_are_those_of_measures_json(artifact: Path) -> None:
    html = (artifact / "report.html").read_text(encoding="utf-8")
    figs = figures(html)
    measures = AnalysisResult.read(artifact / "measures.json")
    trajectories = pd.read_parquet(artifact / "trajectories.parquet")
    blocks = [(m, b) for m, b in measures.models.items() if isinstance(b, BinarySeries)]
    assert len(blocks) == len(measures.models)
    curves = [f for f in figs if kind(f) == "accuracy-curve"]
    flips = [f for f in figs if kind(f) == "flip-bars"]
    heats = [f for f in figs if kind(f) == "heatmap"]
    for (model, block), curve, flip, heat in zip(blocks, curves, flips, heats, strict=True):
        axis, note = block.axis, interval_note(block)
        assert tips(curve, "acc-point") == [tip(lab, block.accuracy[lab], note) for lab in axis]
        # and where they are drawn: a higher accuracy sits higher (a smaller SVG y)
        heights = [-marker_y(g) for g in curve.iter(f"{SVG}g") if g.get("class") == "acc-point"]
        values = [block.accuracy[lab].value for lab in axis]
        for (v1, h1), (v2, h2) in itertools.combinations(zip(values, heights, strict=True), 2):
            assert (v1 > v2) == (h1 > h2 + 1e-6) or v1 == v2, (values, heights)
        pairs = block.adjacent
        shown = [p.replace("->", " → ") for p in pairs]
        assert tips(flip, "flip-down") == [
            tip(f"flip down {s}", block.flip_down[p], note)
            for p, s in zip(pairs, shown, strict=True)
        ]
        assert tips(flip, "flip-up") == [
            tip(f"flip up {s}", block.flip_up[p], note) for p, s in zip(pairs, shown, strict=True)
        ]
        rows = trajectories[(trajectories["model"] == model) & (trajectories["kind"] == "binary")]
        counts = rows["pattern"].value_counts()
        expected = [f"{PATTERN_NAMES.get(p, p)} ({counts[p]})" for p in PATTERNS if p in counts]
        labels = [
            g.findtext(f"{SVG}text") or ""
            for g in heat.iter(f"{SVG}g")
            if g.get("class") == "group-label"
        ]
        assert labels == expected
        assert texts(heat).count(f"{len(rows)} items, grouped by pattern") == 1


def test_cost_accuracy_points_are_those_of_cascade_json(artifact: Path) -> None:
    html = (artifact / "report.html").read_text(encoding="utf-8")
    cascade = json.loads((artifact / "cascade.json").read_text(encoding="utf-8"))
    fronts = [f for f in figures(html) if kind(f) == "frontier"]
    for result, fig in zip(cascade["results"], fronts, strict=True):
        points = set(tips(fig, "frontier-point"))
        for name, pol in result["policies"].items():
            if pol.get("available", True):
                cost, acc = pol["mean_cost"]["value"], pol["accuracy"]["value"]
                assert f"{name} (held out): cost {cost:.4g}, accuracy {100 * acc:.1f}" in points
        for p in result.get("threshold_sweep", []):
            cost, acc = p["mean_cost"], p["accuracy"]
            assert f"threshold sweep (in-sample): cost {cost:.4g}, accuracy {100 * acc:.1f}" in (
                points
            )


def test_ids_are_unique_and_every_reference_resolves(artifact: Path) -> None:
    html = (artifact / "report.html").read_text(encoding="utf-8")
    ids = re.findall(r'\sid="([^"]+)"', html)
    assert len(ids) == len(set(ids))
    for ref in re.findall(r'(?:xlink:href="#|url\(#)([^")]+)', html):
        assert ref in ids, ref


def _binary_trajectories(n: int, k: int, seed: int) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    values = (rng.random((n, k)) < np.linspace(0.3, 0.7, k)).astype(float)
    values[0] = 1.0  # one always-right item among n
    values[1:, 0] = np.where(values[1:].all(axis=1), 0.0, values[1:, 0])
    patterns = []
    for row in values:
        steps = np.diff(row)
        down, up = bool((steps < 0).any()), bool((steps > 0).any())
        patterns.append(
            "always_right"
            if row.all()
            else "always_wrong"
            if not row.any()
            else "mixed"
            if down and up
            else "harmful"
            if down
            else "beneficial"
        )
    return values, patterns


@pytest.mark.parametrize("n", [786, 10_000])
def test_a_heat_map_has_the_same_size_at_786_and_at_10000_items(n: int) -> None:
    labels = [f"{2**i}f" for i in range(8)]
    values, patterns = _binary_trajectories(n, len(labels), seed=n)
    svg = heatmap(labels, values, patterns, PATTERNS, binary=True, names=PATTERN_NAMES)
    fig = ET.fromstring(svg)
    assert len(svg) < 40_000  # one raster of RASTER_ROWS rows, whatever n
    shown = texts(fig)
    assert f"{n} items, grouped by pattern" in shown
    assert "always right (1)" in shown  # a group of one item still has its label
    assert set(labels) <= set(shown)


def test_band_edges_and_raster_rows_hand_computed() -> None:
    # 10 rows at least per group; the other 80 in proportion to 1 and 99 items
    edges = band_edges([1, 99], 100, 10.0)
    assert edges.tolist() == pytest.approx([0.0, 10.8, 100.0])
    items = raster_items([1, 99], edges, 100)
    assert items[:11].tolist() == [0] * 11  # rows 0..10 (centres below 10.8): the one item
    assert items[11] == 1 and items[-1] == 99


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 5000), min_size=1, max_size=7),
    rows=st.integers(50, 600),
)
def test_every_group_gets_its_band_and_rows_stay_in_order(sizes: list[int], rows: int) -> None:
    least = 12.0
    edges = band_edges(sizes, rows, least)
    heights = np.diff(edges)
    assert edges[0] == 0 and edges[-1] == pytest.approx(rows)
    assert (heights >= min(least, rows / len(sizes)) - 1e-9).all()
    items = raster_items(sizes, edges, rows)
    assert (np.diff(items) >= 0).all() and items[0] >= 0 and items[-1] < sum(sizes)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    for g in range(len(sizes)):  # each group's band shows only that group's items
        shown = items[(np.arange(rows) + 0.5 >= edges[g]) & (np.arange(rows) + 0.5 < edges[g + 1])]
        assert ((shown >= starts[g]) & (shown < starts[g + 1])).all()


def test_untrusted_names_stay_text_and_dollars_are_not_math() -> None:
    name = "<script>alert(1)</script> $x^2$ & _hidden"
    svg = frontier([(name, [(1.0, 0.5), (2.0, 0.6)])], x_label="mean cost <b>")
    assert "<script" not in svg and "<b>" not in svg
    fig = ET.fromstring(svg)
    assert f" {name}" in texts(fig) or name in texts(fig)  # the legend entry, as text
    assert "mean cost <b>" in texts(fig)
    curves = chain_curves(
        [2, 4],
        [("frames@<i>56</i>", [2, 4], [(0.5, (0.4, 0.6)), (0.6, (0.5, 0.7))])],
        title="accuracy <per> resolution",
    )
    assert "<i>" not in curves
    assert "<i>56</i>" in texts(ET.fromstring(curves))


def test_the_same_numbers_give_the_same_bytes_whatever_the_users_settings() -> None:
    import matplotlib

    points = [(0.4, (0.3, 0.5)), (0.5, (0.4, 0.6)), (0.55, None)]
    first = accuracy_curve(["8f", "16f", "32f"], points, title="accuracy")
    with matplotlib.rc_context({"font.size": 30, "lines.linewidth": 9, "svg.fonttype": "path"}):
        second = accuracy_curve(["8f", "16f", "32f"], points, title="accuracy")
        assert matplotlib.rcParams["font.size"] == 30  # the user's settings are left alone
    assert first == second
    assert "<text" in first and "Date" not in first


def test_matplotlib_is_loaded_only_when_a_figure_is_drawn() -> None:
    code = (
        "import sys, itemscale.cli, itemscale.report, itemscale.report._html; "
        "print('matplotlib' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(SRC)},
    )
    assert done.stdout.strip() == "False"
