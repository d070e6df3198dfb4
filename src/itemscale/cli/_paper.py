"""The real-data half of `itemscale demo`, printed: the seed paper's numbers beside
itemscale's, its Table 2 grid and the prescription on its labels (computed by
`itemscale.workflows.reproduce_paper`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from ..workflows import SAVING_BAR, TABLE2_CONFIGS, PaperNumber
from ._format import printer

if TYPE_CHECKING:
    from ..analysis.measures import AnalysisResult, BestFixed, Estimate
    from ..analysis.policies import CascadeReport


def _points(stat: Estimate | BestFixed | None) -> tuple[str, str]:
    """(value, interval) in points to two decimals, as the paper prints them."""
    if stat is None or stat.value is None:
        return "n/a", ""
    ci = stat.ci
    interval = f"[{100 * ci[0]:.2f}, {100 * ci[1]:.2f}]" if ci else ""
    return f"{100 * stat.value:.2f}", interval


def print_comparison(rows: Sequence[PaperNumber], out: TextIO) -> None:
    say = printer(out)
    models = list(dict.fromkeys(r.model for r in rows))
    say(
        "the paper's released numbers (Video-MME V1 short) vs itemscale, points; itemscale's "
        "95% interval from a video bootstrap"
    )
    say(f"  {'model':<21} {'measure':<17} {'paper':>7} {'itemscale':>9}  {'95% CI':<16}")
    for model in models:
        mine = [r for r in rows if r.model == model]
        acc = [r for r in mine if r.measure.startswith("accuracy ")]
        first = mine[0]
        say(
            f"  {model:<21} grid {' < '.join(first.configs)} "
            f"({first.n_items} items, {first.n_videos} videos)"
        )
        same_acc = sum(r.same for r in acc)
        say(
            f"  {'':<21} {'accuracy':<17} {'':>7} {'':>9}  "
            f"{same_acc} of {len(acc)} configurations the same"
        )
        for r in mine:
            if r in acc:
                continue
            ci = f"[{r.ci[0]:.2f}, {r.ci[1]:.2f}]" if r.ci else ""
            mark = "same" if r.same else f"DIFFERS by {r.itemscale - r.paper:+.2f}"
            say(f"  {'':<21} {r.measure:<17} {r.paper:>7.2f} {r.itemscale:>9.2f}  {ci:<16} {mark}")
    same = sum(r.same for r in rows)
    say(f"  {same} of {len(rows)} published numbers reproduced to 0.01 points")
    differs = [r for r in rows if not r.same]
    for r in differs:
        say(
            f"  note: {r.model} {r.measure}: its grid mixes frame and pixel axes "
            f"({len(r.configs)} configurations); the paper does not state the order its "
            "visual confusion uses on such a grid, and no order we tried gives its figure "
            "(docs/measures.md, 'The paper's grid')"
        )


def print_table2(measures: AnalysisResult, out: TextIO) -> None:
    """The paper's Table 2: text-only, 16, 32 and 64 frames at 151k pixels, text-only as 0
    (a model without a text-only grid has no row)."""
    say = printer(out)
    from ..analysis.measures import BinarySeries

    say(f"\nthe paper's Table 2 grid ({', '.join(TABLE2_CONFIGS)}), text-only as budget 0, points:")
    say(f"  {'model':<21} {'best fixed':>10} {'oracle':>7} {'headroom':>9} {'confusion':>10}")
    for model, block in measures.models.items():
        g = block.grid_with_text if isinstance(block, BinarySeries) else None
        if g is None:
            continue
        say(
            f"  {model:<21} {_points(g.best_fixed)[0]:>10} {_points(g.oracle)[0]:>7} "
            f"{_points(g.oracle_headroom)[0]:>9} {_points(g.harmful_rate)[0]:>10}"
        )
    excluded = measures.grid.excluded_models if measures.grid is not None else {}
    for model, lacks in excluded.items():
        say(f"  {model}: not on this grid (it lacks {', '.join(lacks)})")


def print_cascade_table(report: CascadeReport, out: TextIO) -> None:
    """Per model: the terminal budget's accuracy (k/n), the policy that matches it and saves the
    most (held out by video), its change, frames saved and where it stops."""
    say = printer(out)
    from ..analysis.policies import AvailableRule, fixed_budget_note, rule_label

    say(
        f"\nthe prescription on the same labels: stopping policies held out by video, cost "
        f"model {report.settings.sharing} (a stage pays only the frames it adds, the paper's "
        "shared cost); the release has answers, not option probabilities, so the policies stop "
        "on answers alone"
    )
    say(
        f"  {'model':<21} {'stages':<34} {'terminal (items)':>19}  {'best match':<11} "
        f"{'change [95% CI]':<19} {'frames saved [95% CI]':<22} {'stops at':<30} "
        "(saved, nothing shared)"
    )
    clear = 0
    fixed: list[tuple[str, str]] = []
    for block in report.results:
        stages = " < ".join(label.split("_")[0] for label in block.labels)
        terminal = _points(block.terminal.accuracy)[0]
        count = block.terminal.accuracy.count
        if count is not None and count.k is not None:
            terminal = f"{terminal} ({count.k}/{count.n})"
        best = block.best_match
        policy = block.policies[best.policy] if best is not None else None
        if best is None or not isinstance(policy, AvailableRule):
            say(
                f"  {block.model:<21} {stages:<34} {terminal:>19}  none: no policy saves "
                "frames with a change interval reaching 0"
            )
            continue
        change = " ".join(_points(best.accuracy_change))
        saved = " ".join(_points(best.cost_reduction))
        unshared = policy.unshared.cost_reduction_frames if policy.unshared else None
        bound = _points(unshared)[0] if unshared else ""
        if policy.fixed_budget is not None:  # one budget run alone shares nothing to begin with
            bound = _points(best.cost_reduction)[0]
        clear += int((best.cost_reduction.value or 0.0) >= SAVING_BAR)
        stopped = policy.stop_counts or {}
        stops = ", ".join(
            f"{label.split('_')[0]} {100 * share:.0f}%"
            + (f" ({stopped[label]})" if label in stopped else "")
            for label, share in policy.stop_share.items()
            if share >= 0.005
        )
        note = fixed_budget_note(best.policy, policy)
        if note:
            fixed.append((block.model, note))
        say(
            f"  {block.model:<21} {stages:<34} {terminal:>19}  "
            f"{_short(rule_label(best.policy, policy)):<11} "
            f"{change:<19} {saved:<22} {stops:<30} {bound}"
        )
    say(
        f"  {clear} of {len(report.results)} models: a policy whose change interval reaches "
        f"0 saves >= {100 * SAVING_BAR:.0f}% of the terminal budget's frames "
        "(`itemscale cascade RUN --sharing prefix`; docs/policies.md)"
    )
    for model, note in fixed:
        say(f"  fixed budget, {model}: {note}")
    print_same_input_notes(report, out)


def _short(label: str) -> str:
    return label.split("_")[0] if label.startswith("fixed ") else label


def print_same_input_notes(report: CascadeReport, out: TextIO) -> None:
    """Each model whose terminal repeats the stage before it (the same-input rule)."""
    say = printer(out)
    for block in report.results:
        if block.same_input_note:
            say(f"  same input, {block.model}: {block.same_input_note}")
    for skipped in report.skipped:
        say(f"  left out, {skipped.model}: {skipped.reason}")
