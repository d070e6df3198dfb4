"""`itemscale intervene RUN_DIR --intervention nested|phase-shift`: the arguments and printing of
`itemscale.intervene`. `--policy`, the flag's name before "policy" was kept for sampling alone,
still works in 0.1.x: hidden from the help, with a note on stderr."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..analysis.policies import INTERVENTION_DIR, InterventionSettings
from ..workflows import intervene
from ._format import points_text, printer
from ._settings import add_bootstrap_arguments, settings_from_flags

if TYPE_CHECKING:
    from ..analysis.policies import InterventionResult


class _RetiredFlag(argparse.Action):
    """`--policy` (docs/glossary.md, 'Retired names')."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        from ..core.errors import RENAMED_REMOVED_IN

        print(
            f"{parser.prog}: {option_string} is deprecated: use --intervention (removed in "
            f"itemscale {RENAMED_REMOVED_IN}; docs/glossary.md, 'One name per concept')",
            file=sys.stderr,
        )
        setattr(namespace, self.dest, values)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "intervene",
        help="re-run terminal regressions with a controlled change of sampling",
        description="Re-run the terminal budget of every terminal regression, and of a seeded "
        "control sample of items right at the terminal budget, with one controlled change of "
        "sampling; report the share of regressions recovered and the share of controls broken, "
        "with 95% video-bootstrap intervals.",
    )
    p.add_argument("run_dir", help="run directory written by `itemscale sweep`")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--intervention",
        choices=["nested", "phase-shift"],
        help="nested: the terminal frame count with nested sampling; phase-shift: the same grid "
        "shifted by half a sampling interval",
    )
    which.add_argument(
        "--policy",
        dest="intervention",
        choices=["nested", "phase-shift"],
        action=_RetiredFlag,
        help=argparse.SUPPRESS,
    )
    p.add_argument(
        "--control",
        type=int,
        default=None,
        metavar="N",
        help="control items (right at the terminal budget) to re-run; default: as many as "
        "there are terminal regressions",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the control sample and bootstrap")
    add_bootstrap_arguments(p, seed=None)
    p.add_argument("--model", default=None, help="model to intervene on (needed if several)")
    p.add_argument("--series", default=None, help="budget axis (needed if several)")
    p.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="where the re-runs execute: in this process (local, the default) or on a Ray "
        "cluster, as `itemscale sweep --executor` (docs/sweep.md)",
    )
    p.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, ... (local models)")
    p.add_argument("--batch-size", type=int, default=1, help="requests per model call")
    p.add_argument(
        "--no-run",
        action="store_true",
        help="do not run anything: compute the rates from cells already in the table",
    )
    p.add_argument("--json", dest="json_out", metavar="OUT", help="also write the result here")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def print_summary(result: InterventionResult, out: TextIO | None = None) -> None:
    say = printer(out)
    reg, ctrl = result.regressions, result.controls
    say(
        f"itemscale intervene: {result.model} / {result.source_series}, policy "
        f"{result.policy} at {result.terminal_label} (series {result.series})"
    )
    say(f"  change: {result.description}")
    axis = result.axis
    where = (
        f" on the {axis.chain} chain ({' < '.join(axis.labels)})"
        if axis is not None and axis.chain
        else ""
    )
    grid = axis.grid_terminal_regressions if axis is not None else None
    beside = (
        f"; {grid} on the whole grid, where `analyze` also counts items right only at another "
        "resolution"
        if grid is not None and grid != result.n_regressions
        else ""
    )
    say(
        f"  terminal regressions{where}: wrong at {result.terminal_label}, right at a "
        f"smaller budget: {result.n_regressions} of {result.n_items} items{beside}"
    )
    say(f"  re-run {reg.n_answered} of them (failed {reg.n_failed}, missing {reg.n_missing})")
    say(
        f"  controls (right at the terminal): {ctrl.n_planned} drawn with seed "
        f"{result.seed}; re-run {ctrl.n_answered} (failed {ctrl.n_failed}, missing "
        f"{ctrl.n_missing})"
    )
    for name, group, noun, key, rate in (
        ("recovered", reg, "regressions", "recovered_rate", result.recovered_rate),
        ("broken", ctrl, "controls", "broken_rate", result.broken_rate),
    ):
        changed = group.n_changed
        if changed is None:  # written before the count was recorded
            wanted = 1.0 if key == "recovered_rate" else 0.0
            side = "regression" if key == "recovered_rate" else "control"
            changed = sum(1 for r in result.items if r.group == side and r.after == wanted)
        method = result.intervals.get(key, "video bootstrap")
        say(
            f"  {name + ':':<10} {changed} of {group.n_answered} {noun}, "
            f"{points_text(rate)}% (95% CI, {method})"
        )
    say(
        f"  net accuracy change if applied to every item: "
        f"{points_text(result.net_accuracy_change_estimate)} points"
    )
    kept, before = reg.reference_frames_kept, reg.reference_frames_kept_before
    if kept is not None and before is not None:
        say(
            f"  frames of the lower budget that was right, kept at the terminal: "
            f"{100 * before:.0f}% before, {100 * kept:.0f}% after the change"
        )


def run(args: argparse.Namespace) -> int:
    from ..core.files import atomic_text_file

    settings = settings_from_flags(
        InterventionSettings,
        {
            "intervention": "--intervention",
            "n_control": "--control",
            "bootstrap": "--bootstrap",
            "execute": "--no-run",
            "progress": "--no-progress",
        },
        intervention=args.intervention,
        n_control=args.control,
        seed=args.seed,
        bootstrap=args.bootstrap,
        model=args.model,
        series=args.series,
        execute=not args.no_run,
        executor=args.executor,
        device=args.device,
        batch_size=args.batch_size,
        progress=not args.no_progress,
    )
    result = intervene(args.run_dir, settings, on_note=print)
    print_summary(result)
    if args.json_out:
        with atomic_text_file(args.json_out) as fh:
            fh.write(result.to_json())
    print(f"\nplan and result written to {Path(args.run_dir) / INTERVENTION_DIR}")
    return 0
