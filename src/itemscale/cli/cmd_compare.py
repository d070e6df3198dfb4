"""`itemscale compare A B`: why doesn't my number match? Two runs (or two series, models or
configurations of one run) side by side, item by item (docs/compare.md)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..analysis.measures import CI_METHODS, DEFAULT_CI, p_value_text
from . import CommandError
from ._format import printer
from ._settings import add_bootstrap_arguments, add_rerun_floor_argument

if TYPE_CHECKING:
    from ..workflows import CompareResult


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "compare",
        help="why doesn't my number match? two runs side by side, item by item",
        description="Put two runs (or, within one run, two series, two models or two "
        "configurations) side by side: items matched by item id and repeat (unmatched ones "
        "counted by side), every recorded set-up field diffed (unknown shown as unknown), the "
        "answers diffed (identical responses, flips both ways, each side's accuracy, the "
        "difference with its video-bootstrap interval and the clustered McNemar test), and a "
        "verdict: is the gap more than noise, do the runs look like the same input, which "
        "set-up differences could explain it, where it sits (docs/compare.md).",
    )
    p.add_argument("run_a", metavar="A", help="run folder of side A")
    p.add_argument(
        "run_b",
        metavar="B",
        nargs="?",
        help="run folder of side B (leave out to compare two slices of run A)",
    )
    for flag, dest, what, metavar in (
        ("--series", "series", "series", "SERIES"),
        ("--model", "models", "model", "MODEL"),
        ("--config", "configs", "configuration", "LABEL"),
    ):
        p.add_argument(
            flag,
            dest=dest,
            action="append",
            default=[],
            metavar=metavar,
            help=f"the {what} of a side: once (both sides) or twice (side A, then side B); "
            "within one run exactly one of --series, --model, --config is given twice",
        )
    p.add_argument(
        "--by",
        action="append",
        default=[],
        metavar="ATTR",
        help="break the gap down by this item attribute (repeatable; default: every recorded "
        "attribute with 2 to 12 values)",
    )
    add_bootstrap_arguments(p, "resamples of whole videos")
    p.add_argument(
        "--task-kind",
        choices=["mcqa", "open_ended"],
        default=None,
        help="keep multiple-choice (mcqa) or open-ended items only (default: both, each "
        "with its own outcome, interval and test)",
    )
    p.add_argument("--ci", choices=list(CI_METHODS), default=DEFAULT_CI, help="interval method")
    p.add_argument(
        "--rerun",
        metavar="RUN_OR_LABEL",
        help="a second execution of one side's configuration (a run folder, or a "
        "configuration label of run A): the rerun floor the same-input verdict grades the "
        "answers against is measured on it (docs/compare.md, 'Reruns')",
    )
    add_rerun_floor_argument(p)
    p.add_argument(
        "--json",
        dest="json_out",
        metavar="OUT",
        help="write the comparison as JSON (outside both run folders)",
    )
    p.add_argument(
        "--html",
        dest="html_out",
        metavar="PATH",
        help="write one self-contained page (outside both run folders)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="overwrite a --json / --html file that an earlier compare wrote (any other "
        "existing file, and any path inside a run folder, is refused)",
    )
    p.set_defaults(func=run)


def _output(path: str, flag: str, runs: Sequence[Path], force: bool) -> Path:
    """An output file compare may write: the rule of every command's outputs, and never inside
    a run folder (an imported run's `responses.parquet` is the only copy of its answers)."""
    from ..core.files import check_output_path
    from ._compare_output import is_compare_output

    target = Path(path).resolve()
    if target.is_dir():
        raise CommandError(f"{flag} {path}: is a folder; give a file name")
    for parent in target.parents:
        if (parent / "MANIFEST.json").is_file():
            raise CommandError(
                f"{flag} {path}: inside the artifact {parent} (its manifest pins every file; "
                "a comparison spans two runs): write it elsewhere"
            )
    for run in runs:
        if target.is_relative_to(run):
            raise CommandError(
                f"{flag} {path}: inside the run folder {run} (compare never writes into a run: "
                "its files are the run's data): write it elsewhere"
            )
    check_output_path(path, flag=flag)
    if not target.parent.is_dir():
        raise CommandError(f"{flag} {path}: folder {target.parent} does not exist")
    if target.exists() or target.is_symlink():
        if not is_compare_output(target):
            raise CommandError(
                f"{flag} {path}: exists and is not a file compare wrote; compare overwrites "
                "only its own output: give a new file name"
            )
        if not force:
            raise CommandError(
                f"{flag} {path}: exists (an earlier compare wrote it); add --force to "
                "overwrite it, or give a new file name"
            )
    return target


def _outputs(args: argparse.Namespace) -> dict[str, Path]:
    runs = [Path(r).resolve() for r in (args.run_a, args.run_b) if r is not None]
    outputs = {
        flag: _output(value, flag, runs, args.force)
        for flag, value in (("--json", args.json_out), ("--html", args.html_out))
        if value
    }
    if len(outputs) == 2 and outputs["--json"] == outputs["--html"]:
        raise CommandError(f"--json and --html name one file ({args.json_out}): give two")
    return outputs


def run(args: argparse.Namespace) -> int:
    from ..core.files import atomic_text_file
    from ..core.responses import redact
    from ..report import render_compare_page
    from ..workflows import compare

    outputs = _outputs(args)
    result = compare(
        args.run_a,
        args.run_b,
        models=args.models,
        series=args.series,
        configs=args.configs,
        by=args.by,
        bootstrap=args.bootstrap,
        seed=args.seed,
        ci=args.ci,
        task_kind=args.task_kind,
        rerun=args.rerun,
        rerun_floor=args.rerun_floor,
    )
    print_comparison(result, sys.stdout)
    if "--json" in outputs:
        with atomic_text_file(outputs["--json"]) as fh:
            fh.write(redact(result.to_json()))
        print(f"wrote {args.json_out}")
    if "--html" in outputs:
        with atomic_text_file(outputs["--html"]) as fh:
            fh.write(render_compare_page(result.model_dump(mode="json")))
        print(f"wrote {args.html_out}")
    return 0


def _pts(value: float | None, signed: bool = False) -> str:
    return "unknown" if value is None else f"{100 * value:{'+' if signed else ''}.2f}"


def _est(est: Any, signed: bool = False) -> str:
    if est is None:
        return "unknown"
    text = _pts(est.value, signed)
    if est.ci_low is not None and est.ci_high is not None:
        text += f" [{_pts(est.ci_low, signed)}, {_pts(est.ci_high, signed)}]"
    return text


def _print_outcome(a: Any, matched: int, out: TextIO, indent: str, draws: int) -> None:
    say = printer(out)
    if a.kind == "binary":
        say(
            f"{indent}both right {a.both_right}, both wrong {a.both_wrong}, right only in A "
            f"{a.right_only_a}, right only in B {a.right_only_b}"
        )
    what = "accuracy" if a.kind == "binary" else "mean score"
    say(f"{indent}{what} A {_est(a.accuracy_a)}   B {_est(a.accuracy_b)}   (points, 95% CI)")
    p_text = (
        f"clustered McNemar p {a.clustered_p:.3g}, exact McNemar p {a.exact_mcnemar_p:.3g}"
        if a.clustered_p is not None and a.exact_mcnemar_p is not None
        else "no clustered test (no matched pairs)"
        if matched == 0
        else "no clustered test (scored answers)"
    )
    boot_p = (
        "" if a.bootstrap_p is None else f", bootstrap p {p_value_text(a.bootstrap_p, draws=draws)}"
    )
    say(f"{indent}B - A {_est(a.difference, True)} points; {p_text}{boot_p}")


def _print_setup(result: CompareResult, out: TextIO) -> None:
    say = printer(out)
    say("set-up (differences first; unknown = not recorded on that side):")
    width = max((len(f.field) for f in result.provenance), default=10)
    for f in result.provenance:
        a = "unknown" if f.a is None else f.a
        b = "unknown" if f.b is None else f.b
        mark = {"differs": "DIFFERS", "unknown": "unknown", "same": "same"}[f.status]
        say(f"  {f.field:<{width}}  {mark:<7}  A: {_cut(a)}   B: {_cut(b)}")
        if f.note:
            say(f"  {'':<{width}}           {f.note}")


def _cut(text: str, width: int = 70) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def print_comparison(result: CompareResult, out: TextIO) -> None:
    """The console form of a comparison."""
    say = printer(out)
    for side in (result.a, result.b):
        say(
            f"{side.name}: {side.run}: model {side.model}, series {side.series}, configuration "
            f"{side.config} ({side.rows} rows, {side.items} items, {side.videos} videos, "
            f"{side.repeats} repeat(s))"
        )
        sel = side.selection
        if sel is not None:
            used = (
                f"frames used mean {sel.frames_used_mean:.1f} (min {sel.frames_used_min}, max "
                f"{sel.frames_used_max}) of {'a cap of ' if sel.cap else ''}{sel.frames_cap}"
                if sel.frames_used_mean is not None
                else "frames used not recorded"
            )
            scored = (
                f"; the selector scored {sel.frames_scored_mean:.1f} frames per item"
                if sel.frames_scored_mean is not None
                else ""
            )
            where = (
                f"{sel.path} ({sel.format}, sha256 {sel.sha256[:12]})"
                if sel.path and sel.sha256
                else "file not recorded"
            )
            say(f"   selector {sel.selection}: {where}; {used}{scored}")
    _print_setup(result, out)
    c, a = result.counts, result.answers
    say("answers (matched by item id and repeat):")
    say(
        f"  matched pairs {c.matched} ({c.matched_items} items, {c.matched_videos} videos); only "
        f"in A {c.only_a}, only in B {c.only_b}; failed in A {c.failed_a}, failed in B {c.failed_b}"
    )
    raw = f"{c.identical_raw} of {c.raw_recorded}" if c.raw_recorded else "none recorded (0 of 0)"
    say(
        f"  identical raw responses {raw}; identical parsed answers {c.identical_answers} of "
        f"{c.answers_recorded}"
    )
    both = len(result.outcomes) > 1
    for name, diff in result.outcomes.items() if result.outcomes else [("", a)]:
        if both:
            say(f"  {'multiple choice' if name == 'mcqa' else 'open-ended'}:")
        _print_outcome(diff, c.matched, out, "    " if both else "  ", result.bootstrap.bootstrap)
    if result.repeats is not None:
        r = result.repeats
        say(
            f"  rerun noise ({r.repeats_a} repeats, {r.items} items): A vs B disagree "
            f"{_est(r.between)}%, A vs A {_est(r.noise_a)}%, B vs B {_est(r.noise_b)}%"
        )
    if result.rerun_floor is not None:
        say(f"  rerun floor: {result.rerun_floor.line()}")
    say("verdict:")
    for v in result.verdicts:
        say(f"  - {v.sentence}")
