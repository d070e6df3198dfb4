"""How `analyze` prints the inference measures (paired tests with Holm's adjustment, minimum
detectable effect, the additive-model test, the noise bound, churn between series): one line
per measure, glossed where the term first appears. Kept apart from `cmd_analyze` so each
piece stays one small function."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TextIO

from ..analysis.measures import (
    AlternativesSeries,
    BinarySeries,
    Estimate,
    Heterogeneity,
    HeterogeneitySkipped,
    OpenEndedSeries,
    Selector,
    p_value_text,
)
from ._format import points_text

Gloss = Callable[[str], str]


def p_text(
    value: float | None, note: str | None = None, *, draws: int | None = None, sides: int = 1
) -> str:
    """A p-value as printed: 3 significant digits, 'n/a', `note` ('not estimable', in place of
    every p-value of a block with too few videos), or '<1/draws' at a resampled p's floor
    (`measures.p_value_text`)."""
    return p_value_text(value, draws=draws, sides=sides, note=note)


def _eq(p: str) -> str:
    """'=0.0123' or '<0.01': a p-value's text after the letter p."""
    return p if p.startswith("<") else f"={p}"


def _signed(stat: Estimate | None, note: str | None = None) -> str:
    text = points_text(stat, note)
    if stat is not None and stat.value is not None and stat.value >= 0:
        text = "+" + text
    return text


def print_paired_tests(
    block: BinarySeries, out: TextIO, indent: str, gloss: Gloss, note: str | None = None
) -> None:
    """The paired tests of the adjacent pairs (one Holm family) and the requested ones; with
    `note`, each p-value and verdict reads it and each interval too."""
    tests = block.paired_tests
    if tests is None or not tests.adjacent:
        return
    print(
        f"{indent}paired tests (accuracy change, points; clustered McNemar p, Holm over the "
        f"{tests.n_family} adjacent pairs; exact McNemar and video-bootstrap p beside):"
        f"{gloss('clustered test')}{gloss('Holm')}",
        file=out,
    )
    for family, records in (("adjacent", tests.adjacent), ("requested", tests.requested)):
        lead = indent + "  "
        if family == "requested" and records:
            print(f"{lead}requested pairs (Holm over these):", file=out)
            lead += "  "
        for arrow, t in (records or {}).items():
            verdict = note or ("holds" if t.significant_after_holm else "does not hold")
            print(
                f"{lead}{arrow}: {_signed(t.difference, note)}; clustered p="
                f"{p_text(t.clustered_mcnemar_p, note)}, Holm {p_text(t.holm_p, note)} "
                f"({verdict}); exact p={p_text(t.exact_mcnemar_p, note)}; bootstrap "
                f"p{_eq(p_text(t.bootstrap_p, note, draws=tests.bootstrap_draws))}",
                file=out,
            )


def _figure(value: float | None, note: str | None, text: Callable[[float], str]) -> str:
    if note is not None:
        return note
    return "n/a" if value is None else text(value)


class PowerFigures(Protocol):
    """An axis' (or a pair's) power record, as `analyze --json` writes it."""

    @property
    def mde(self) -> float | None: ...
    @property
    def videos_needed(self) -> float | None: ...
    @property
    def mde_not_estimable(self) -> str | None: ...
    @property
    def videos_needed_not_estimable(self) -> str | None: ...


def power_figures_text(a: PowerFigures, target: float, note: str | None = None) -> str:
    """An axis' minimum detectable effect and the videos `target` points need, or "not
    estimable" with the reason for each that is (one reason when both share it)."""
    mde_why, need_why = a.mde_not_estimable, a.videos_needed_not_estimable
    if note is None and mde_why is not None and mde_why == need_why:
        return f"not estimable ({mde_why})"
    mde = f"not estimable ({mde_why})" if mde_why and note is None else None
    need = f"not estimable ({need_why})" if need_why and note is None else None
    mde = mde or _figure(a.mde, note, lambda v: f"{100 * v:.1f} points")
    if need is not None:
        return f"{mde}; {target:.1f} points: {need}"
    need = _figure(a.videos_needed, note, lambda v: f"{int(v):,} videos")
    return f"{mde} ({target:.1f} points needs {need})"


def print_power(
    block: BinarySeries, out: TextIO, indent: str, gloss: Gloss, note: str | None = None
) -> None:
    """The minimum detectable effect per axis; with `note`, its figures read it."""
    power = block.power
    if power is None or not power.axes:
        return
    target = 100 * power.target
    parts = []
    for axis, a in power.axes.items():
        parts.append(f"{axis} {power_figures_text(a, target, note)}")
    print(
        f"{indent}minimum detectable effect ({100 * power.power:.0f}% power, "
        f"{100 * power.alpha:.0f}% two-sided, clustered, {power.n_videos} videos): "
        + "; ".join(parts)
        + gloss("minimum detectable effect"),
        file=out,
    )


def print_heterogeneity(
    h: Heterogeneity | HeterogeneitySkipped | None,
    out: TextIO,
    indent: str,
    gloss: Gloss,
    not_tested: str | None = None,
) -> None:
    """The additive-model test; `not_tested` is why a test that ran is not shown (too few
    videos: "not estimable with 4 video(s)")."""
    if h is None:
        return
    if isinstance(h, HeterogeneitySkipped) or not_tested is not None:
        why = h.skipped if isinstance(h, HeterogeneitySkipped) else not_tested
        print(f"{indent}additive model: not tested ({why})", file=out)
        return
    print(
        f"{indent}additive model (item + budget, no interaction): harmful "
        f"{points_text(h.observed)} observed vs {points_text(h.additive)} additive; "
        f"difference {_signed(h.difference)}, "
        f"p{_eq(p_text(h.p_value, draws=h.n_null, sides=2))} "
        f"({h.n_null} parametric draws){gloss('additive model')}",
        file=out,
    )
    shares = ", ".join(
        f"{name} {100 * _value(t.observed):.1f} vs {100 * _value(t.additive):.1f} "
        f"(p{_eq(p_text(t.p_value, draws=h.n_null, sides=2))})"
        for name, t in h.trajectories.items()
    )
    print(f"{indent}  by trajectory, observed vs additive: {shares}", file=out)
    noise = h.noise
    if noise is not None:
        print(
            f"{indent}noise bound (repeats): test-retest noise makes at most "
            f"{points_text(noise.noise_bound)} harmful; observed minus bound "
            f"{_signed(noise.difference)}, one-sided p={p_text(noise.p_value)}"
            f"{gloss('noise bound')}",
            file=out,
        )


def _value(stat: Estimate) -> float:
    """An estimate's value where the layout always has one (a share of the trajectories)."""
    if stat.value is None:
        raise ValueError("an additive-model share without a value")
    return float(stat.value)


def not_tested_text(note: str | None, n_videos: int) -> str | None:
    """Why the additive-model test of a block with too few videos is not shown, or None."""
    return None if note is None else f"{note} with {n_videos} video(s)"


def print_inference(
    block: BinarySeries, out: TextIO, indent: str, gloss: Gloss, note: str | None = None
) -> None:
    """The lines a binary block adds after its flips; `note` ("not estimable", too few
    videos) in place of their intervals, p-values, power figures and the additive test."""
    print_paired_tests(block, out, indent, gloss, note)
    print_power(block, out, indent, gloss, note)
    print_heterogeneity(
        block.heterogeneity, out, indent, gloss, not_tested_text(note, block.n_videos)
    )


def print_churn(
    block: BinarySeries | OpenEndedSeries | AlternativesSeries, out: TextIO, gloss: Gloss
) -> None:
    """Churn between each pair of series of a model, one line per shared budget."""
    for pair, churn in (block.churn or {}).items():
        print(
            f"  churn {pair} at equal budgets ({churn.n_common_items} items; answers "
            f"changed, accuracy change, flips down / up, points){gloss('churn')}",
            file=out,
        )
        for budget, b in churn.budgets.items():
            line = (
                f"    {budget}: answers {points_text(b.answer_change)}; accuracy "
                f"{_signed(b.accuracy_difference)}; {points_text(b.flip_down)} / "
                f"{points_text(b.flip_up)}"
            )
            floors = [f for f in (b.noise_floor_p, b.noise_floor_q) if f is not None]
            if floors:
                line += "; noise floor " + " / ".join(points_text(f) for f in floors)
            print(line, file=out)
            if b.selector is not None:
                for text in selector_lines(b.selector):
                    print(f"      {text}", file=out)


def selector_lines(v: Selector) -> list[str]:
    """A selector's series against uniform sampling at one budget, in plain words."""
    headroom = v.n_uniform_wrong_everywhere
    lines = [
        f"selector {v.selector_series} vs {v.uniform_series}: accuracy "
        f"{points_text(v.accuracy_selector)} vs {points_text(v.accuracy_uniform)} "
        f"(change {_signed(v.accuracy_difference)}, clustered McNemar p "
        f"{p_text(v.clustered_mcnemar_p)}); fixes {v.n_fixed}, breaks {v.n_broken}",
        f"of the {headroom} items uniform gets wrong at every budget it ran, the selector gets "
        f"{v.n_headroom_fixed} right"
        + (f" ({points_text(v.headroom_share)}% of that headroom)" if headroom else ""),
    ]
    if v.same_input is not None:
        same = v.same_input
        lines.append(
            f"looks like the same input as {v.uniform_series}: identical answers on "
            f"{same.identical} of {same.items} items: was the selection applied?"
        )
    lines += _cost_lines(v)
    recorded = v.n_frames_recorded
    if recorded and v.n_same_frames == recorded:
        lines.append(f"the selection's frames are uniform's on all {recorded} items")
    elif recorded:
        lines.append(
            f"frames differ from uniform's on {recorded - v.n_same_frames} of {recorded} items"
        )
    return lines


def _cost_lines(v: Selector) -> list[str]:
    """For an adaptive selector (its cells used fewer frames than the cap on some item): the
    frames it used and uniform sampling at that matched mean cost."""
    used, cap = v.frames_used_mean, v.frames_cap
    if used is None or cap is None or (v.frames_used_min == v.frames_used_max == cap):
        return []
    lines = [
        f"frames used: mean {used:.1f} (min {v.frames_used_min}, max {v.frames_used_max}) of "
        f"a cap of {cap}; uniform used {v.uniform_frames_used_mean or 0:.1f}"
    ]
    m = v.matched_cost
    if m is not None:
        if m.nearest:
            where = f"nearest uniform budget {m.uniform_below}"
        elif m.uniform_below == m.uniform_above:
            where = f"uniform at {m.uniform_below}, a budget of the grid"
        else:
            where = f"uniform interpolated between {m.uniform_below} and {m.uniform_above}"
        lines.append(
            f"at matched mean cost ({m.frames:.1f} frames, {where}): uniform accuracy "
            f"{points_text(m.accuracy_uniform)}, selector minus uniform "
            f"{_signed(m.accuracy_difference)}"
        )
    return lines
