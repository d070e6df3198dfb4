"""`itemscale cascade RUN_DIR`: how much compute a stopping rule saves at the terminal budget's
accuracy (docs/policies.md), every number held out by video."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..analysis.measures import counted_text
from ..analysis.policies import CURRENCIES, AvailableRule, fixed_budget_note, rule_label
from . import CommandError
from ._format import Glosses, number_text, points_text, printer
from ._settings import add_bootstrap_arguments, add_rerun_floor_argument, settings_from_flags

if TYPE_CHECKING:
    from ..analysis.policies import CascadeBlock, CascadeReport, FrontierPoint, RuleRecord


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "cascade",
        help="how much compute a stopping policy saves at the terminal budget's accuracy",
        description="Fit the confidence cascade (and the agreement and learned stopping "
        "policies) on one half of the videos, report them on the other half, swap, and report "
        "accuracy, mean shared cost and cost reduction with 95% video-bootstrap intervals.",
    )
    p.add_argument("run_dir", help="run directory holding responses.parquet")
    p.add_argument(
        "--json",
        dest="json_out",
        metavar="OUT",
        default=None,
        help="where to write the report as JSON (default: RUN_DIR/cascade.json, which the "
        "report picks up)",
    )
    add_bootstrap_arguments(p, seed="seed of the folds and the bootstrap (default 0)")
    p.add_argument(
        "--cost",
        choices=["frames", "tokens", "latency"],
        default="frames",
        help="currency the thresholds minimise: frames (default), visual tokens, or seconds "
        "(latency_s; every cell must have one)",
    )
    p.add_argument(
        "--sharing",
        choices=["auto", "union", "prefix", "none"],
        default="auto",
        help="cost model, what stages share: union = distinct recorded frame indices of the "
        "stages that ran; prefix = a stage pays only what it adds beyond the previous stage "
        "(the seed paper's shared cost; exact for nested frames); none = every stage pays in "
        "full. auto (default): union where every cell recorded its frame indices, else none "
        "(nothing recorded shows what the stages share), saying why",
    )
    p.add_argument(
        "--stages",
        metavar="LABEL,...",
        default=None,
        help="cascade stages in order: configuration labels, frame counts that name one "
        "configuration, and 0 (or textonly) for the text-only answer, e.g. 0,16f_151k,64f_151k "
        "(default: the budget axis, or its frame chain at the largest resolution)",
    )
    p.add_argument(
        "--score",
        choices=["prob", "margin"],
        default="prob",
        help="stopping score: prob = probability of the chosen option (default); margin = top "
        "option probability minus the runner-up's (the seed paper's base_margin)",
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=None,
        metavar="T",
        help="also report the fixed rule: stop at the first stage (before the last) whose score "
        "is >= T, no fitting, every item (the seed paper's code/cascade.py --theta)",
    )
    p.add_argument("--model", action="append", default=[], help="only this model (repeatable)")
    add_rerun_floor_argument(p)
    p.set_defaults(func=run)


_UNITS = {"frames": "frames", "tokens": "tokens", "latency": "s"}


def _policy_line(name: str, policy: RuleRecord, unit: str, gloss: Glosses) -> str:
    if not isinstance(policy, AvailableRule):
        return f"  {name:<11} not available: {policy.reason}"
    fixed = fixed_budget_note(name, policy)
    match = "matches terminal" if policy.matches_terminal else "below terminal"
    line = (
        f"  {name:<11} accuracy {counted_text(policy.accuracy)} ({match}: change "
        f"{points_text(policy.accuracy_change)} points), "
        f"{number_text(policy.mean_cost)} {unit}/item, saves "
        f"{points_text(policy.cost_reduction)}%"
    )
    if policy.unshared is not None:
        primary = next(c for c in CURRENCIES if policy.unshared.cost_reduction(c) is not None)
        bound = policy.unshared.cost_reduction(primary)
        line += f" (nothing shared: {points_text(bound)}%)"
    if fixed:
        line += f"; {fixed}"
    return line + (gloss("matches terminal") if policy.matches_terminal else "")


def _frontier_text(point: FrontierPoint) -> str:
    count = f" ({point.count.k} of {point.count.n})" if point.count is not None else ""
    return f"{100 * point.accuracy:.1f}{count}@{100 * (point.cost_reduction or 0):.0f}%"


def score_text(block: CascadeBlock) -> str:
    """The stopping score as the console names it: what it is, or that none was recorded (then
    the rules stop on answers alone, and no line after it promises a confidence)."""
    if block.score_recorded:
        return f"{block.score.name} ({block.score.description})"
    return (
        f"none recorded (no {block.score.name}: {block.score.description}, below the terminal "
        "budget), so the rules stop on answers alone"
    )


def best_match_name(block: CascadeBlock) -> str:
    """A rule that stops every item at one stage read as that fixed budget ("the fixed budget
    128f_151k (the learned rule stops every item there)")."""
    best = block.best_match
    if best is None:
        return "none"
    rule = block.policies.get(best.policy)
    label = rule_label(best.policy, rule)
    if label == best.policy:
        return label
    return f"the {label.replace('fixed ', 'fixed budget ')} (the {best.policy} rule stops every item there)"


def print_block(block: CascadeBlock, primary: str, gloss: Glosses, out: TextIO | None) -> None:
    say = printer(out)
    unit = _UNITS[primary]
    terminal = block.terminal
    say(
        f"\n== {block.model} (series {block.series}): {block.n_items} items, "
        f"{block.n_videos} videos; stages {' < '.join(block.labels)}" + gloss("series")
    )
    if block.chain:
        say(
            f"  a grid of frames x resolutions: the stages climb its {block.chain} chain "
            "(the frame counts at the largest budget's resolution)"
        )
    if block.same_input_note:
        say(f"  same input: {block.same_input_note}" + gloss("same input"))
    cost = block.cost
    chosen = cost.sharing_requested == "auto" and cost.basis(primary) == "none"
    say(
        f"  cost model: {cost.basis(primary)}"
        + (f" ({cost.note(primary)})" if chosen and cost.note(primary) else "")
        + ("; beside it none (nothing shared), the upper bound" if cost.unshared_bound else "")
        + gloss("cost model")
    )
    say(f"  stopping score: {score_text(block)}")
    say(
        f"  terminal {terminal.label}: accuracy {counted_text(terminal.accuracy)}, "
        f"{number_text(terminal.mean_cost)} {unit} per item"
    )
    for name, policy in block.policies.items():
        say(_policy_line(name, policy, unit, gloss))
    best = block.best_match
    if best:
        say(
            f"  best match: {best_match_name(block)} saves "
            f"{points_text(best.cost_reduction)}% of the terminal's {unit} at an "
            f"accuracy change of {points_text(best.accuracy_change)} points"
        )
    else:
        say("  best match: none (no policy both saves and has a change interval reaching 0)")
    pareto = [p for p in block.frontier if p.pareto]
    if pareto:
        points = ", ".join(_frontier_text(p) for p in pareto)
        say(
            f"  frontier (held-out accuracy (k of n items) @ cost reduction): {points}"
            f"{gloss('frontier')}"
        )
    fixed = block.fixed_rule
    if fixed:
        stops = ", ".join(f"{label} {count}" for label, count in (fixed.stop_counts or {}).items())
        say(
            f"  fixed rule ({fixed.score} >= {fixed.threshold:g}, every item, nothing "
            f"fitted): accuracy {counted_text(fixed.accuracy)} (change "
            f"{points_text(fixed.accuracy_change)}), "
            f"{number_text(fixed.mean_cost)} {unit}/item, saves "
            f"{points_text(fixed.cost_reduction)}%; stops: {stops}"
        )


def print_summary(report: CascadeReport, out: TextIO | None = None) -> None:
    say = printer(out)
    gloss = Glosses()
    settings = report.settings
    say(
        f"itemscale cascade: {len(report.results)} budget axis(es); cost in "
        f"{settings.cost}; held-out folds by video (seed {settings.seed}); intervals: "
        f"{settings.bootstrap} video-bootstrap resamples"
    )
    for block in report.results:
        print_block(block, settings.cost, gloss, out)
    for line in report.skipped_lines():
        say(f"\n-- {line}")


def run(args: argparse.Namespace) -> int:
    from ..analysis.policies import CASCADE_FILE, CascadeSettings
    from ..workflows import cascade

    stages = None if args.stages is None else tuple(args.stages.split(","))
    settings = settings_from_flags(
        CascadeSettings,
        {"bootstrap": "--bootstrap", "models": "--model"},
        bootstrap=args.bootstrap,
        seed=args.seed,
        cost=args.cost,
        sharing=args.sharing,
        score=args.score,
        stages=stages,
        threshold=args.threshold,
        models=tuple(args.model) or None,
        rerun_floor=args.rerun_floor,
    )
    json_out = (
        args.json_out if args.json_out is not None else str(Path(args.run_dir) / CASCADE_FILE)
    )
    try:
        report = cascade(args.run_dir, settings, json_out=json_out or None, write=bool(json_out))
    except FileNotFoundError as exc:
        raise CommandError(str(exc)) from exc
    print_summary(report)
    if json_out:
        print(f"\ncascade report written to {json_out}")
    return 0
