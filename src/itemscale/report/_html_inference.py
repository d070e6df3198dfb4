"""The report's inference tables: cluster-aware paired tests with Holm's adjustment (marking
the changes that hold), the minimum detectable effect, the additive-model heterogeneity test,
and churn between series at equal budgets. Each is one small function over the typed series
block, so the measures section calls them without knowing their layout; it hands in `pts`, its
one way of writing a statistic with its interval (with the block's `interval_note` bound), and
the note itself, which replaces the p-values, the power figures and the additive-model test of
a block with too few videos."""

from __future__ import annotations

from collections.abc import Callable

from ..analysis.measures import (
    GLOSSARY,
    AlternativesSeries,
    BinarySeries,
    BinaryWithText,
    Churn,
    Estimate,
    Heterogeneity,
    HeterogeneitySkipped,
    NoiseRecord,
    OpenEndedSeries,
    p_value_text,
)
from ._escape import esc

#: The report's writer of one statistic (`_html_measures.pts`, its note bound).
Points = Callable[[Estimate | None], str]


def _signed(pts: Points, stat: Estimate | None) -> str:
    """A change written by the report's one writer of a statistic (`pts`), with its sign."""
    text = pts(stat)
    if text != "n/a" and stat is not None and float(stat.value or 0.0) >= 0:
        text = "+" + text
    return text


def _p(
    value: float | None, note: str | None = None, *, draws: int | None = None, sides: int = 1
) -> str:
    """A p-value, the note ("not estimable") that replaces it on a small sample, or '<1/draws'
    at a resampled p's floor (`measures.p_value_text`)."""
    return p_value_text(value, draws=draws, sides=sides, note=note)


def _budget_order(arrows: list[str], order: list[str]) -> list[str]:
    """Pairs in the budget order of `order` (the block's `adjacent` list), others after it."""
    rank = {arrow: n for n, arrow in enumerate(order)}
    return sorted(arrows, key=lambda a: (rank.get(a, len(rank)), a))


def _table(head: list[str], rows: list[str]) -> str:
    cells = "".join(f"<th>{esc(h)}</th>" for h in head)
    return (
        f"<table class='headline'><thead><tr>{cells}</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def paired_tests_table(block: BinarySeries, pts: Points, note: str | None = None) -> str:
    tests = block.paired_tests
    if tests is None or not tests.adjacent:
        return ""
    rows = []
    for family, chosen in (("adjacent", tests.adjacent), ("requested", tests.requested or {})):
        for arrow in _budget_order(list(chosen), list(block.adjacent)):
            t = chosen[arrow]
            holds = None if note is not None else t.significant_after_holm
            mark = (
                "<span class='muted'>not estimable</span>"
                if holds is None
                else "<b>holds</b>"
                if holds
                else "<span class='muted'>does not hold</span>"
            )
            rows.append(
                f"<tr><th>{esc(arrow)}{' (requested)' if family == 'requested' else ''}</th>"
                f"<td class='num'>{esc(_signed(pts, t.difference))}</td>"
                f"<td class='num'>{esc(_p(t.clustered_mcnemar_p, note))}</td>"
                f"<td class='num'>{esc(_p(t.holm_p, note))}</td><td>{mark}</td>"
                f"<td class='num'>{esc(_p(t.exact_mcnemar_p, note))}</td>"
                f"<td class='num'>"
                f"{esc(_p(t.bootstrap_p, note, draws=tests.bootstrap_draws))}</td></tr>"
            )
    head = [
        "pair",
        "accuracy change (points, 95% interval)",
        "clustered McNemar p",
        "Holm p",
        "at 5%",
        "exact McNemar p",
        "video bootstrap p",
    ]
    return (
        "<h4>Paired tests between adjacent budgets</h4><p class='muted'>"
        f"{esc(GLOSSARY['clustered test'])}. Holm over the {tests.n_family} adjacent "
        f"pairs of the grid (requested pairs form their own family): "
        f"{esc(GLOSSARY['Holm'])}.</p>" + _table(head, rows)
    )


def _power_cell(value: float | None, reason: str | None, text: Callable[[float], str]) -> str:
    """A power figure, or "not estimable" with the reason `analyze` recorded."""
    if reason is not None:
        return f"not estimable ({reason})"
    return "n/a" if value is None else text(float(value))


def power_table(block: BinarySeries, note: str | None = None) -> str:
    power = block.power
    if power is None or not power.axes:
        return ""
    target = 100 * float(power.target)
    rows = []
    for axis, a in power.axes.items():
        mde = note or _power_cell(a.mde, a.mde_not_estimable, lambda v: f"{100 * v:.1f}")
        need = note or _power_cell(
            a.videos_needed, a.videos_needed_not_estimable, lambda v: f"{int(v):,}"
        )
        rows.append(
            f"<tr><th>{esc(axis)}</th><td class='num'>{esc(mde)}</td>"
            f"<td class='num'>{esc(need)}</td><td>{esc(', '.join(a.pairs))}</td></tr>"
        )
    head = [
        "axis",
        "minimum detectable effect (points)",
        f"videos for {target:.1f} points",
        "pairs",
    ]
    videos = "?" if power.n_videos is None else power.n_videos
    return (
        "<h4>Power</h4><p class='muted'>"
        f"{esc(GLOSSARY['minimum detectable effect'])}; {videos} videos, "
        f"{float(power.items_per_video or 0.0):.2f} items per video, clustered McNemar test.</p>"
        + _table(head, rows)
    )


def heterogeneity_table(
    h: Heterogeneity | HeterogeneitySkipped | None,
    title: str,
    pts: Points,
    not_estimable: str | None = None,
) -> str:
    """The additive-model test; `not_estimable` (why, on a small sample) in place of a test
    that ran."""
    if h is None:
        return ""
    if isinstance(h, HeterogeneitySkipped) or not_estimable is not None:
        why = h.skipped if isinstance(h, HeterogeneitySkipped) else not_estimable
        return f"<h4>{esc(title)}</h4><p class='muted'>not tested: {esc(why)}</p>"
    rows = [
        f"<tr><th>{esc(name)}</th><td class='num'>{esc(pts(observed))}</td>"
        f"<td class='num'>{esc(pts(additive))}</td>"
        f"<td class='num'>{esc(_signed(pts, difference))}</td>"
        f"<td class='num'>{esc(_p(p, draws=h.n_null, sides=2))}</td></tr>"
        for name, observed, additive, difference, p in [
            ("harmful rate", h.observed, h.additive, h.difference, h.p_value),
            *(
                (name, c.observed, c.additive, c.difference, c.p_value)
                for name, c in h.trajectories.items()
            ),
        ]
    ]
    head = ["share of items", "observed", "additive model", "difference", "p"]
    return (
        f"<h4>{esc(title)}</h4><p class='muted'>{esc(GLOSSARY['additive model'])}. "
        f"{h.n_informative} of {h.n_items} items are right at some budgets "
        "and wrong at others; p from a parametric bootstrap over whole videos "
        f"({h.n_null} draws), percentile intervals. The oracle headroom is a function "
        "of the margins and the additive model reproduces it exactly.</p>"
        + _table(head, rows)
        + _noise_line(h.noise, pts)
    )


def _noise_line(noise: NoiseRecord | None, pts: Points) -> str:
    if noise is None:
        return ""
    return (
        f"<p>Noise bound: {esc(pts(noise.noise_bound))}; harmful rate minus the bound "
        f"{esc(_signed(pts, noise.difference))}, one-sided p "
        f"{esc(_p(noise.p_value))}. <span class='muted'>{esc(GLOSSARY['noise bound'])}"
        "</span></p>"
    )


def inference_tables(block: BinarySeries, pts: Points, note: str | None = None) -> str:
    """Everything a binary block adds to its section; `note` ("not estimable" on a small
    sample) replaces its p-values, power figures and additive-model tests."""
    with_text: BinaryWithText | None = block.grid_with_text
    why = None if note is None else f"{note} with {block.n_videos} video(s)"
    return (
        paired_tests_table(block, pts, note)
        + power_table(block, note)
        + heterogeneity_table(block.heterogeneity, "Heterogeneity: visual budgets", pts, why)
        + heterogeneity_table(
            with_text.heterogeneity if with_text is not None else None,
            "Heterogeneity: with the text-only answer as budget 0",
            pts,
            why,
        )
    )


def churn_tables(block: BinarySeries | OpenEndedSeries | AlternativesSeries, pts: Points) -> str:
    """A model's churn between each pair of its series."""
    parts = []
    for pair, churn in (block.churn or {}).items():
        rows = []
        for budget, b in churn.budgets.items():
            floors = " / ".join(
                pts(floor) for floor in (b.noise_floor_p, b.noise_floor_q) if floor is not None
            )
            rows.append(
                f"<tr><th>{esc(budget)}</th><td class='num'>{esc(pts(b.answer_change))}"
                f"</td><td class='num'>{esc(_signed(pts, b.accuracy_difference))}</td>"
                f"<td class='num'>{esc(pts(b.flip_down))}</td>"
                f"<td class='num'>{esc(pts(b.flip_up))}</td>"
                f"<td class='num'>{esc(floors or 'no repeats')}</td></tr>"
            )
        head = ["budget", "answers changed", "accuracy change", "down", "up", "noise floor"]
        parts.append(
            f"<h4>Churn {esc(pair)}</h4><p class='muted'>{esc(GLOSSARY['churn'])}; "
            f"{churn.n_common_items} items in both, points, 95% interval.</p>"
            + _table(head, rows)
            + selector_table(churn, pts)
        )
    return "".join(parts)


def selector_table(churn: Churn, pts: Points) -> str:
    """A frame selector's series against uniform sampling, budget by budget ('' for a pair
    without a selector)."""
    rows = []
    notes = []
    for budget, b in churn.budgets.items():
        v = b.selector
        if v is None:
            continue
        headroom = v.n_uniform_wrong_everywhere
        rows.append(
            f"<tr><th>{esc(budget)}</th><td class='num'>{esc(pts(v.accuracy_selector))}</td>"
            f"<td class='num'>{esc(pts(v.accuracy_uniform))}</td>"
            f"<td class='num'>{esc(_signed(pts, v.accuracy_difference))}</td>"
            f"<td class='num'>{esc(_p(v.clustered_mcnemar_p))}</td>"
            f"<td class='num'>{v.n_fixed}</td><td class='num'>{v.n_broken}</td>"
            f"<td class='num'>{v.n_headroom_fixed} of {headroom}</td></tr>"
        )
        if v.same_input is not None:
            notes.append(
                f"{budget}: looks like the same input as uniform (identical answers on "
                f"{v.same_input.identical} of {v.same_input.items} items): was the "
                "selection applied?"
            )
    if not rows:
        return ""
    head = [
        "budget",
        "selector accuracy",
        "uniform accuracy",
        "change",
        "clustered McNemar p",
        "fixed",
        "broken",
        "uniform's always-wrong items it gets right",
    ]
    note = "".join(f"<p class='warn'>{esc(n)}</p>" for n in notes)
    return (
        "<p class='muted'>The frame selector against uniform sampling at each shared budget "
        "(points, 95% interval; fixed: wrong under uniform, right under the selector).</p>"
        + _table(head, rows)
        + note
    )
