"""How the report draws a figure: matplotlib (imported only when a figure is drawn), under
fixed settings (`RC`: no user matplotlibrc applies) on its own Agg canvas, saved as SVG with
text kept as `<text>`, a fixed hash salt and no date, so the same numbers give the same bytes.
An artist given `marks.gid(cls, tip)` comes out as `<g class="cls"><title>tip</title>...`;
other ids are dropped or made unique to the figure, so figures share a page without clashes.
"""

from __future__ import annotations

import functools
import hashlib
import io
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, cast

from ._escape import esc

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: What a figure's builder returns: the figure, its CSS class and its title, or None for none.
Made = tuple["Figure", str, str] | None
P = ParamSpec("P")
#: Okabe and Ito's colour-blind-safe palette (blue, vermillion, bluish green, reddish purple,
#: orange, sky blue, black; yellow last: faint on white).
OKABE_ITO = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#f0e442")
#: A second cue beside colour for each series: its marker shape.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
BLUE, VERMILLION, GREEN = OKABE_ITO[0], OKABE_ITO[1], OKABE_ITO[2]
#: No answer at a budget (an incomplete trajectory, a grid cell the run does not have).
MISSING = "#d9d9d9"
INK = "#222222"

#: The settings every figure is drawn with, on top of matplotlib's own defaults.
RC: dict[str, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "itemscale",
    "svg.image_inline": True,
    "text.parse_math": False,  # a `$` in a model name is text, not mathtext
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Liberation Sans", "Arial"],
    "font.size": 9.0,
    "axes.titlesize": 9.0,
    "axes.titlelocation": "left",
    "axes.labelsize": 9.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.fontsize": 8.0,
    "legend.frameon": False,
    "xtick.labelsize": 8.0,
    "ytick.labelsize": 8.0,
    "figure.dpi": 100.0,
    "savefig.dpi": 144.0,
    "image.interpolation": "nearest",
}


def _settings() -> dict[str, Any]:
    from cycler import cycler

    return {**RC, "axes.prop_cycle": cycler(color=list(OKABE_ITO))}


class Marks:
    """The artists of one figure that the SVG names by a class (and a hover text)."""

    def __init__(self) -> None:
        self.marks: dict[str, tuple[str, str | None]] = {}

    def gid(self, cls: str, tip: str | None = None) -> str:
        gid = f"itemscale-mark-{len(self.marks)}"
        self.marks[gid] = (cls, tip)
        return gid


def new_figure(width: float, height: float) -> Figure:
    """In inches, on its own Agg canvas, constrained layout (nothing overlaps)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def draw(build: Any, *args: Any, **kwargs: Any) -> str:
    """Run `build(marks, *args, **kwargs)` under the report's settings; it returns the figure,
    its CSS class and its title (or None for no figure), and this returns the SVG ('' for none)."""
    import matplotlib

    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        matplotlib.rcParams.update(cast(Any, _settings()))
        marks = Marks()
        made = build(marks, *args, **kwargs)
        if made is None:
            return ""
        fig, cls, title = made
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return to_inline(buf.getvalue(), cls, title, marks)


def figure(build: Callable[Concatenate[Marks, P], Made]) -> Callable[P, str]:
    """`build(marks, ...)` as a function of the rest of its arguments that returns the SVG."""

    @functools.wraps(build)
    def drawn(*args: P.args, **kwargs: P.kwargs) -> str:
        return draw(build, *args, **kwargs)

    return drawn


#: a marked group (most artists), or a marked element that has no children (an image)
_MARK = re.compile(
    r'<g id="(itemscale-mark-\d+)">|(<[a-z]+ [^<>]*?)id="(itemscale-mark-\d+)"([^<>]*?/>)'
)
#: an id attribute inside a tag (text content holds no `<` or `>`: matplotlib escapes them)
_ID = re.compile(r'(<[a-z][^<>]*?) id="([^"]+)"')
#: a reference to a clip path, marker or image: matplotlib names them by a hash
_REF = re.compile(r'(xlink:href="#|url\(#)([a-z]+[0-9a-f]{8,})')


def to_inline(svg: str, cls: str, title: str, marks: Marks) -> str:
    """matplotlib's SVG document as an element for an HTML page: no XML prolog, no metadata,
    the figure's class and title on the root, marks as classes with hover texts, and only the
    ids something refers to, prefixed to be unique to this figure."""
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = re.sub(r'\s*<defs>\s*<style type="text/css">[^<]*</style>\s*</defs>', "", svg)
    uid = "f" + hashlib.sha1(svg.encode()).hexdigest()[:8]
    referred = {m.group(2) for m in _REF.finditer(svg)}

    def mark(match: re.Match[str]) -> str:
        cls_, tip = marks.marks[match.group(1) or match.group(3)]
        head = f'<g class="{esc(cls_)}">' + (f"<title>{esc(tip)}</title>" if tip else "")
        return head if match.group(1) else f"{head}{match.group(2)}{match.group(4)}</g>"

    svg = _MARK.sub(mark, svg)
    svg = _ID.sub(
        lambda m: m.group(1) + (f' id="{uid}-{m.group(2)}"' if m.group(2) in referred else ""),
        svg,
    )
    svg = _REF.sub(lambda m: f"{m.group(1)}{uid}-{m.group(2)}", svg)
    head = svg.index(">")
    return (
        f'<svg class="figure {esc(cls)}" role="img" aria-label="{esc(title)}"'
        + svg[4:head]
        + f"><title>{esc(title)}</title>"
        + svg[head + 1 :]
    )


def legend_outside(ax: Axes, where: str = "right", **kwargs: Any) -> None:
    """The legend beside the plot (`right`) or under it (`below`): never over a data point."""
    if where == "right":
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, **kwargs)
    else:
        ax.figure.legend(loc="outside lower center", **kwargs)


def text_width(text: str, size: float) -> float:
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    width, _, _ = TextToPath().get_text_width_height_descent(
        text, FontProperties(size=size), ismath=False
    )
    return float(width)


def category_ticks(ax: Axes, labels: Sequence[str], room: float) -> None:
    """Turned 40 degrees when they would not fit side by side in `room` points."""
    ax.set_xticks(range(len(labels)), [str(x) for x in labels])
    widths = [text_width(str(x), 8.0) for x in labels]
    if labels and max(widths) + 4 > room / len(labels):
        for tick in ax.get_xticklabels():
            tick.set_rotation(40)
            tick.set_horizontalalignment("right")
            tick.set_rotation_mode("anchor")
