"""`compare --html`: one self-contained page of a comparison (no script, no file beside it).

It renders the `compare --json` layout (a plain mapping, so this package needs nothing of the
workflow that computed it), every text escaped, under a Content-Security-Policy that allows no
script. A comparison spans two runs, so the page is written where the user asks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..analysis.measures import p_value_text
from ..core.errors import stored_value
from ..core.responses import redact
from ._assets import CSS
from ._templating import Markup, render

#: the page's mark of authorship: `compare --html --force` overwrites only a file carrying it
COMPARE_PAGE_GENERATOR = '<meta name="generator" content="itemscale compare">'


def _pts(value: Any, signed: bool = False) -> str:
    if not isinstance(value, int | float):
        return "unknown"
    return f"{100 * value:+.2f}" if signed else f"{100 * value:.2f}"


def _interval(est: Mapping[str, Any] | None, signed: bool = False) -> str:
    if not est:
        return "unknown"
    text = _pts(est.get("value"), signed)
    # layout 3 writes the interval as `ci: [low, high]` (an `Estimate`), layout 2 as its ends
    ci = est.get("ci")
    low, high = (
        ci if isinstance(ci, list) and len(ci) == 2 else (est.get("ci_low"), est.get("ci_high"))
    )
    if isinstance(low, int | float) and isinstance(high, int | float):
        text += f" [{_pts(low, signed)}, {_pts(high, signed)}]"
    return text


def _p(value: Any, draws: int | None = None) -> str:
    """With `draws`, a bootstrap p at its floor is '<' what the draws can resolve."""
    return p_value_text(value, draws=draws) if isinstance(value, int | float) else "n/a"


def _sides(result: Mapping[str, Any]) -> list[list[Any]]:
    keys = ("name", "run", "model", "series", "config", "rows", "items", "videos", "repeats")
    return [
        [*(result[side][k] for k in keys), _selector_cell(result[side].get("selection"))]
        for side in ("a", "b")
    ]


def _selector_cell(sel: Mapping[str, Any] | None) -> str:
    if not sel:
        return ""
    text = str(sel.get("selection"))
    if sel.get("frames_used_mean") is not None:
        cap = "up to " if sel.get("cap") else ""
        text += (
            f": mean {float(sel['frames_used_mean']):.1f} ({sel.get('frames_used_min')}-"
            f"{sel.get('frames_used_max')}) of {cap}{sel.get('frames_cap')}"
        )
    if sel.get("frames_scored_mean") is not None:
        text += f"; scored {float(sel['frames_scored_mean']):.1f}"
    if sel.get("sha256"):
        text += f"; sha256 {str(sel['sha256'])[:12]}"
    return text


def _setup(result: Mapping[str, Any]) -> list[list[Any]]:
    return [
        [
            f["field"],
            f["status"],
            "unknown" if f["a"] is None else f["a"],
            "unknown" if f["b"] is None else f["b"],
            f.get("note") or "",
        ]
        for f in result["provenance"]
    ]


def _outcome_rows(a: Mapping[str, Any], head: str, draws: int) -> list[list[Any]]:
    """`head` names the kind when a run holds both."""
    rows = []
    if a["kind"] == "binary":
        rows += [
            [f"{head}both right / both wrong", f"{a['both_right']} / {a['both_wrong']}"],
            [
                f"{head}right only in A / right only in B",
                f"{a['right_only_a']} / {a['right_only_b']}",
            ],
        ]
    what = "accuracy" if a["kind"] == "binary" else "mean score"
    return [
        *rows,
        [f"{head}{what} of A (points, 95% CI)", _interval(a["accuracy_a"])],
        [f"{head}{what} of B (points, 95% CI)", _interval(a["accuracy_b"])],
        [f"{head}B minus A (points, 95% CI, video bootstrap)", _interval(a["difference"], True)],
        [f"{head}clustered McNemar p (videos as clusters)", _p(a.get("clustered_p"))],
        [f"{head}exact McNemar p (items independent)", _p(a.get("exact_mcnemar_p"))],
        [f"{head}paired video bootstrap p", _p(a.get("bootstrap_p"), draws)],
    ]


def _answers(result: Mapping[str, Any]) -> list[list[Any]]:
    c, a = result["counts"], result["answers"]
    draws = int(stored_value(result["bootstrap"], "bootstrap", "n_boot"))
    rows = [
        ["matched (item, repeat) pairs", c["matched"]],
        ["matched items / videos", f"{c['matched_items']} / {c['matched_videos']}"],
        ["only in A / only in B (no row on the other side)", f"{c['only_a']} / {c['only_b']}"],
        [
            "failed in A / failed in B (row present, no answer)",
            f"{c['failed_a']} / {c['failed_b']}",
        ],
        [
            "identical raw responses",
            f"{c['identical_raw']} of {c['raw_recorded']}"
            if c["raw_recorded"]
            else "raw text not recorded",
        ],
        ["identical parsed answers", f"{c['identical_answers']} of {c['answers_recorded']}"],
    ]
    # each task kind's outcome apart (layout 2); one kind (or a layout-1 record): `answers`
    outcomes = result.get("outcomes") or {"": a}
    for name, outcome in outcomes.items():
        head = (
            "" if len(outcomes) < 2 else ("multiple choice: " if name == "mcqa" else "open-ended: ")
        )
        rows += _outcome_rows(outcome, head, draws)
    noise = result.get("repeats")
    if noise:
        rows += [
            ["a run of A vs a run of B disagree (share of items)", _interval(noise["between"])],
            ["A's own reruns disagree (noise floor)", _interval(noise.get("noise_a"))],
            ["B's own reruns disagree (noise floor)", _interval(noise.get("noise_b"))],
        ]
    return rows


def _gaps(groups: list[Mapping[str, Any]]) -> list[list[Any]]:
    keys = ("value", "pairs", "right_only_a", "right_only_b")
    return [[*(g[k] for k in keys), _pts(g["difference"], True)] for g in groups]


def _where(result: Mapping[str, Any]) -> list[tuple[str, str, list[list[Any]]]]:
    blocks = [
        (f"by {block['attribute']}", block["attribute"], _gaps(block["groups"]))
        for block in result["by_attribute"]
    ]
    if result["top_videos"]:
        blocks.append(("videos contributing most", "video", _gaps(result["top_videos"])))
    return blocks


def render_compare_page(result: Mapping[str, Any]) -> str:
    """The page of one comparison, from its `compare --json` mapping."""
    a, b = result["a"], result["b"]
    boot = result["bootstrap"]
    page = render(
        "compare_page.html",
        generator=Markup(COMPARE_PAGE_GENERATOR),
        css=Markup(CSS),
        title=f"compare: {a['model']} {a['config']} (A) vs {b['model']} {b['config']} (B)",
        verdicts=[v["sentence"] for v in result["verdicts"]],
        bootstrap=stored_value(boot, "bootstrap", "n_boot"),
        seed=boot["seed"],
        method=boot["method"],
        schema_version=result["schema_version"],
        sides=_sides(result),
        setup=_setup(result),
        answers=_answers(result),
        where=_where(result),
    )
    return redact(page + "\n")
