"""How `analyze` prints the inference measures (paired tests with Holm's adjustment, minimum
detectable effect, the additive-model test, the noise bound, churn between series): one line
per measure, glossed where the term first appears, laid out from the records the report's
tables are written from (`report.InferenceVerdicts`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from ..analysis.measures import (
    AlternativesSeries,
    BinarySeries,
    Estimate,
    OpenEndedSeries,
    Selector,
    p_value_text,
    signed_text,
)
from ._format import points_text

if TYPE_CHECKING:
    from ..report import AdditiveVerdict, InferenceVerdicts

Gloss = Callable[[str], str]


def _eq(p: str) -> str:
    """'=0.0123' or '<0.01': a p-value's text after the letter p."""
    return p if p.startswith("<") else f"={p}"


def print_paired_tests(verdicts: InferenceVerdicts, out: TextIO, indent: str, gloss: Gloss) -> None:
    """The paired tests of the adjacent pairs (one Holm family) and the requested ones."""
    tests = verdicts.paired
    if tests is None:
        return
    print(
        f"{indent}paired tests (accuracy change, points; clustered McNemar p, Holm over the "
        f"{tests.n_family} adjacent pairs; exact McNemar and video-bootstrap p beside):"
        f"{gloss('clustered test')}{gloss('Holm')}",
        file=out,
    )
    for lead, family in ((indent + "  ", tests.adjacent), (indent + "    ", tests.requested)):
        if family and family[0].requested:
            print(f"{indent}  requested pairs (Holm over these):", file=out)
        for t in family:
            print(
                f"{lead}{t.pair}: {t.change}; clustered p={t.clustered_p}, Holm {t.holm_p} "
                f"({tests.verdict(t)}); exact p={t.exact_p}; bootstrap p{_eq(t.bootstrap_p)}",
                file=out,
            )


def print_power(verdicts: InferenceVerdicts, out: TextIO, indent: str, gloss: Gloss) -> None:
    """The minimum detectable effect per axis."""
    power = verdicts.power
    if power is None:
        return
    print(
        f"{indent}minimum detectable effect ({100 * power.record.power:.0f}% power, "
        f"{100 * power.record.alpha:.0f}% two-sided, clustered, {power.record.n_videos} videos): "
        + "; ".join(f"{a.axis} {a.text(100 * power.record.target)}" for a in power.axes)
        + gloss("minimum detectable effect"),
        file=out,
    )


def print_heterogeneity(h: AdditiveVerdict | None, out: TextIO, indent: str, gloss: Gloss) -> None:
    """The additive-model test, its shares by trajectory and, with repeats, the noise bound."""
    if h is None:
        return
    if h.skipped is not None:
        print(f"{indent}additive model: not tested ({h.skipped})", file=out)
        return
    harmful, *trajectories = h.shares
    print(
        f"{indent}additive model (item + budget, no interaction): harmful "
        f"{points_text(harmful.observed)} observed vs {points_text(harmful.additive)} "
        f"additive; difference {harmful.difference}, p{_eq(harmful.p)} "
        f"({h.n_null} parametric draws){gloss('additive model')}",
        file=out,
    )
    shares = ", ".join(
        f"{t.name} {100 * _value(t.observed):.1f} vs {100 * _value(t.additive):.1f} (p{_eq(t.p)})"
        for t in trajectories
    )
    print(f"{indent}  by trajectory, observed vs additive: {shares}", file=out)
    if h.noise is not None:
        bound, difference, p = h.noise
        print(
            f"{indent}noise bound (repeats): test-retest noise makes at most {bound} harmful; "
            f"observed minus bound {difference}, one-sided p={p}{gloss('noise bound')}",
            file=out,
        )


def _value(stat: Estimate) -> float:
    """An estimate's value where the layout always has one (a share of the trajectories)."""
    if stat.value is None:
        raise ValueError("an additive-model share without a value")
    return float(stat.value)


def print_inference(verdicts: InferenceVerdicts, out: TextIO, indent: str, gloss: Gloss) -> None:
    """The lines a binary block adds after its flips."""
    print_paired_tests(verdicts, out, indent, gloss)
    print_power(verdicts, out, indent, gloss)
    print_heterogeneity(verdicts.additive, out, indent, gloss)


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
                f"{signed_text(b.accuracy_difference)}; {points_text(b.flip_down)} / "
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
        f"(change {signed_text(v.accuracy_difference)}, clustered McNemar p "
        f"{p_value_text(v.clustered_mcnemar_p)}); fixes {v.n_fixed}, breaks {v.n_broken}",
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
            f"{signed_text(m.accuracy_difference)}"
        )
    return lines
