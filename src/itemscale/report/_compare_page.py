"""`compare --html`: one self-contained page of a comparison (no script, no file beside it).

It renders the `compare --json` layout (a plain mapping, so this package needs nothing of the
workflow that computed it) with the report's stylesheet, every text escaped, and a
Content-Security-Policy that allows no script at all. A comparison spans two runs, so the page
is written where the user asks, never into either run's artifact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.errors import stored_value
from ..core.responses import redact
from ._assets import CSS
from ._escape import esc

#: the page's mark of authorship: `compare --html --force` overwrites only a file carrying it
COMPARE_PAGE_GENERATOR = '<meta name="generator" content="itemscale compare">'
_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


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


def _p(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, int | float) else "n/a"


def _row(cells: Sequence[Any], cls: str = "") -> str:
    attr = f' class="{cls}"' if cls else ""
    return f"<tr{attr}>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>"


def _table(head: Sequence[str], rows: Sequence[str]) -> str:
    header = "".join(f"<th>{esc(h)}</th>" for h in head)
    return f"<table><tr>{header}</tr>{''.join(rows)}</table>"


def _sides(result: Mapping[str, Any]) -> str:
    rows = []
    for key in ("a", "b"):
        s = result[key]
        rows.append(
            _row(
                [
                    s["name"],
                    s["run"],
                    s["model"],
                    s["series"],
                    s["config"],
                    s["rows"],
                    s["items"],
                    s["videos"],
                    s["repeats"],
                    _selector_cell(s.get("selection")),
                ]
            )
        )
    return _table(
        [
            "side",
            "run",
            "model",
            "series",
            "configuration",
            "rows",
            "items",
            "videos",
            "repeats",
            "selector (frames used)",
        ],
        rows,
    )


def _selector_cell(sel: Mapping[str, Any] | None) -> str:
    """A selection side's record in one cell: name, frames used (of the cap), declared cost,
    file digest; empty for a formula side."""
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


def _setup(result: Mapping[str, Any]) -> str:
    rows = []
    for f in result["provenance"]:
        a = "unknown" if f["a"] is None else f["a"]
        b = "unknown" if f["b"] is None else f["b"]
        note = f.get("note") or ""
        rows.append(
            _row(
                [f["field"], f["status"], a, b, note], "differs" if f["status"] == "differs" else ""
            )
        )
    return _table(["field", "status", "A", "B", "note"], rows)


def _outcome_rows(a: Mapping[str, Any], head: str) -> list[str]:
    """One task kind's rows: the 2x2 table (multiple choice), each side's accuracy or mean
    score, the difference and its tests; `head` names the kind when a run holds both."""
    rows = []
    if a["kind"] == "binary":
        rows += [
            _row([f"{head}both right / both wrong", f"{a['both_right']} / {a['both_wrong']}"]),
            _row(
                [
                    f"{head}right only in A / right only in B",
                    f"{a['right_only_a']} / {a['right_only_b']}",
                ]
            ),
        ]
    what = "accuracy" if a["kind"] == "binary" else "mean score"
    return [
        *rows,
        _row([f"{head}{what} of A (points, 95% CI)", _interval(a["accuracy_a"])]),
        _row([f"{head}{what} of B (points, 95% CI)", _interval(a["accuracy_b"])]),
        _row(
            [f"{head}B minus A (points, 95% CI, video bootstrap)", _interval(a["difference"], True)]
        ),
        _row([f"{head}clustered McNemar p (videos as clusters)", _p(a.get("clustered_p"))]),
        _row([f"{head}exact McNemar p (items independent)", _p(a.get("exact_mcnemar_p"))]),
        _row([f"{head}paired video bootstrap p", _p(a.get("bootstrap_p"))]),
    ]


def _answers(result: Mapping[str, Any]) -> str:
    c, a = result["counts"], result["answers"]
    rows = [
        _row(["matched (item, repeat) pairs", c["matched"]]),
        _row(["matched items / videos", f"{c['matched_items']} / {c['matched_videos']}"]),
        _row(
            ["only in A / only in B (no row on the other side)", f"{c['only_a']} / {c['only_b']}"]
        ),
        _row(
            [
                "failed in A / failed in B (row present, no answer)",
                f"{c['failed_a']} / {c['failed_b']}",
            ]
        ),
        _row(
            [
                "identical raw responses",
                f"{c['identical_raw']} of {c['raw_recorded']}"
                if c["raw_recorded"]
                else "raw text not recorded",
            ]
        ),
        _row(["identical parsed answers", f"{c['identical_answers']} of {c['answers_recorded']}"]),
    ]
    # each task kind's outcome apart (layout 2); one kind (or a layout-1 record): `answers`
    outcomes = result.get("outcomes") or {"": a}
    for name, outcome in outcomes.items():
        head = (
            "" if len(outcomes) < 2 else ("multiple choice: " if name == "mcqa" else "open-ended: ")
        )
        rows += _outcome_rows(outcome, head)
    noise = result.get("repeats")
    if noise:
        rows += [
            _row(
                ["a run of A vs a run of B disagree (share of items)", _interval(noise["between"])]
            ),
            _row(["A's own reruns disagree (noise floor)", _interval(noise.get("noise_a"))]),
            _row(["B's own reruns disagree (noise floor)", _interval(noise.get("noise_b"))]),
        ]
    return _table(["", "value"], rows)


def _gap_table(first_column: str, groups: list[Mapping[str, Any]]) -> str:
    """Where the gap sits, one row per group (an attribute's value, or a video)."""
    rows = [
        _row(
            [
                g["value"],
                g["pairs"],
                g["right_only_a"],
                g["right_only_b"],
                _pts(g["difference"], True),
            ]
        )
        for g in groups
    ]
    header = [first_column, "pairs", "right only in A", "right only in B", "B - A (points)"]
    return _table(header, rows)


def _where(result: Mapping[str, Any]) -> str:
    parts = []
    for block in result["by_attribute"]:
        parts.append(f"<h3>by {esc(block['attribute'])}</h3>")
        parts.append(_gap_table(block["attribute"], block["groups"]))
    if result["top_videos"]:
        parts.append("<h3>videos contributing most</h3>")
        parts.append(_gap_table("video", result["top_videos"]))
    return "".join(parts) or '<p class="muted">No item attribute recorded.</p>'


def render_compare_page(result: Mapping[str, Any]) -> str:
    """The page of one comparison, from its `compare --json` mapping."""
    a, b = result["a"], result["b"]
    title = f"compare: {a['model']} {a['config']} (A) vs {b['model']} {b['config']} (B)"
    verdicts = "".join(f"<li>{esc(v['sentence'])}</li>" for v in result["verdicts"])
    boot = result["bootstrap"]
    page = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
{COMPARE_PAGE_GENERATOR}
<meta http-equiv="Content-Security-Policy" content="{esc(_CSP)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{esc(title)}</title>
<style>{CSS}
#setup td {{ overflow-wrap: anywhere; max-width: 520px; }}
#setup td:first-child {{ overflow-wrap: normal; }}
#setup td:nth-child(2) {{ overflow-wrap: normal; white-space: nowrap; }}</style>
</head>
<body>
<header>
<h1>{esc(title)}</h1>
<ul class="headline">{verdicts}</ul>
<div class="muted">intervals: {esc(stored_value(boot, "bootstrap", "n_boot"))} resamples of whole videos, seed {esc(boot["seed"])}, {esc(boot["method"])}; itemscale compare, layout version {esc(result["schema_version"])}</div>
</header>
<main>
<section id="sides"><h2>The two sides</h2>{_sides(result)}</section>
<section id="setup"><h2>What differs in the set-up</h2>{_setup(result)}</section>
<section id="answers"><h2>What differs in the answers</h2>{_answers(result)}</section>
<section id="where"><h2>Where the gap sits</h2>{_where(result)}</section>
</main>
</body>
</html>
"""
    return redact(page)
