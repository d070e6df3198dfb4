"""`itemscale demo`: the whole audit offline, on the synthetic suite and the built-in model.

Each step is the library call its command makes, printed as the command prints it; the protocol
it used is written into the run, to rerun or extend with `itemscale sweep RUN/protocol.toml`."""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Required, TypedDict

from ..analysis.measures import DEFAULT_BOOTSTRAP
from . import CommandError
from ._demo_selector import adaptive_selector_step, print_cascade_at_scale, selector_step, step

if TYPE_CHECKING:
    from ..analysis.measures import AnalysisResult, BestFixed, Estimate
    from ..analysis.policies import CascadeReport, InterventionResult
    from ..collect.synth import FocusKind
    from ..workflows import RegressionPathways

DEMO_FRAMES = (2, 4, 8, 16, 32)
DEMO_SHORT_SIDES = (56, 112)
#: flash and longest are what the built-in model trained on; blink (a flash shorter than the
#: sampling gap at 32 frames) gives the demo regressions a sampling change can act on.
DEMO_FOCUS_KINDS: tuple[FocusKind, ...] = ("flash", "longest", "blink")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "demo",
        help="run the whole audit offline: the seed paper's released labels, then the synthetic "
        "suite with the built-in model",
        description="Reproduce the seed paper's published numbers from its released per-item "
        "labels (RUN/paper), then generate the synthetic test suite, sweep the built-in tiny Video LLM over "
        "5 frame counts x 2 resolutions plus the text-only baseline, analyse it, fit the "
        "cascade, audit the harmful transitions and write the report.",
    )
    p.add_argument("--out", type=Path, default=Path("runs/demo"), help="run directory")
    p.add_argument(
        "--videos", type=int, default=80, help="synthetic test videos (focus layout; default 80)"
    )
    p.add_argument(
        "--seed",
        type=int,
        default=2026,
        help="suite seed; the built-in model was trained on seed 0, so any other seed gives "
        "videos it has never seen",
    )
    p.add_argument("--bootstrap", type=int, default=DEFAULT_BOOTSTRAP, help="bootstrap resamples")
    p.add_argument("--batch-size", type=int, default=16, help="requests per model call")
    p.add_argument("--no-report", action="store_true", help="stop after analyze and cascade")
    p.set_defaults(func=run)


class DemoSummary(TypedDict, total=False):
    """RUN/demo.json."""

    paper: Required[dict[str, object]]
    run_dir: Required[str]
    measures: Required[str]
    report: str
    seconds: float
    conclusion: str


def demo_protocol(
    out: Path,
    suite: Path,
    frames_grid: Sequence[int] = DEMO_FRAMES,
    short_sides: Sequence[int] = DEMO_SHORT_SIDES,
) -> str:
    """The demo's protocol (a benchmark may sweep a subset of its grid)."""
    frames = ", ".join(str(f) for f in frames_grid)
    sides = ", ".join(str(s) for s in short_sides)
    return f"""# The protocol `itemscale demo` ran; rerun with `itemscale sweep {out}/protocol.toml`.
version = 1
output = "{out.resolve()}"
text_only = true

[[models]]
name = "builtin"
backend = "builtin"
model = "builtin"

[benchmark]
kind = "synthetic"
path = "{suite.resolve()}"
split = "test"

[grid]
frames = [{frames}]
short_side = [{sides}]
sampling = ["linspace"]

[decoding]
max_new_tokens = 24
"""


def run_paper_step(paper_dir: Path, *, bootstrap: int, report: bool) -> dict[str, object]:
    """`itemscale.workflows.reproduce_paper`, printed; returns demo.json's entry."""
    import sys

    from ..workflows import TABLE2_CONFIGS, release_dir, reproduce_paper
    from ._paper import print_cascade_table, print_comparison, print_table2

    with step(
        "the seed paper's released labels: 5 real Video LLMs on Video-MME V1 short "
        f"(CC BY 4.0, {release_dir()})"
    ):
        paper = reproduce_paper(paper_dir, bootstrap=bootstrap, report=report)
        print(
            f"imported into {paper_dir}: {paper.rows_added} rows added, "
            f"{paper.rows_unchanged} already there"
        )
        print_comparison(paper.comparison, sys.stdout)
        print_table2(paper.table2, sys.stdout)
        print_cascade_table(paper.cascade, sys.stdout)
        if paper.report is not None:
            print(f"report: {paper.report}")
        print(
            f"by hand: itemscale analyze {paper_dir} --configs {','.join(TABLE2_CONFIGS)}   "
            f"(the paper's data: {release_dir()})"
        )
    return paper.summary()


def print_regression_pathways(found: RegressionPathways) -> None:
    """`itemscale.workflows.regression_pathways`, a line per terminal regression."""
    print(
        f"\n### terminal regressions at {found.terminal}: the audit's pathway and the nested "
        "re-run",
        flush=True,
    )
    print(
        f"  {'item':<30} {'kind':<8} {'right at':<9} {'evidence frames':<16} {'pathway':<17} "
        "after the re-run"
    )
    for r in found.rows:
        print(
            f"  {r.item_id:<30} {r.kind:<8} {r.reference_label:<9} {r.seen:<16} "
            f"{r.pathway:<17} {r.outcome}"
        )
    if not found.rows:
        print("  no terminal regressions")
    for group, counts in sorted(found.tally.items()):
        print(f"  {group}: {counts['recovered']} of {sum(counts.values())} recovered")


def run(args: argparse.Namespace) -> int:
    import torch

    from ..analysis.measures import AnalysisSettings, analyze_responses
    from ..analysis.policies import CASCADE_FILE, CascadeReport
    from ..core.responses import read_run, write_json_atomic
    from ..report import ARTIFACT_DIR, MEASURES_FILE, REPORT_FILE
    from .cmd_analyze import print_summary

    torch.set_num_threads(2)
    started = time.perf_counter()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    paper_summary = run_paper_step(
        out / "paper", bootstrap=args.bootstrap, report=not args.no_report
    )
    suite_and_sweep(args, out)

    # Before analyze and cascade, so the files they write already see the re-runs.
    with step(
        "intervene: re-run each terminal regression with nested frames (and as many controls)"
    ):
        from ..workflows import intervene

        intervention = intervene(
            out,
            intervention="nested",
            seed=0,
            bootstrap=args.bootstrap,
            batch_size=args.batch_size,
            progress=False,
            on_note=print,
        )
        from .cmd_intervene import print_summary as print_intervention

        print_intervention(intervention)
    selector_step(out, bootstrap=args.bootstrap, batch_size=args.batch_size)
    adaptive_selector_step(out, bootstrap=args.bootstrap, batch_size=args.batch_size)

    with step("analyze"):
        df, _ = read_run(out)
        measures = analyze_responses(df, AnalysisSettings(bootstrap=args.bootstrap, seed=0))
        write_json_atomic(out / MEASURES_FILE, measures.to_json())
        print_summary(measures, brief=True)
        print(f"  (adjacent flips, chains and the open-ended detail: itemscale analyze {out})")

    summary: DemoSummary = {
        "paper": paper_summary,
        "run_dir": str(out),
        "measures": str(out / MEASURES_FILE),
    }
    if not args.no_report:
        report_steps(out, intervention)
        summary["report"] = str(out / ARTIFACT_DIR / REPORT_FILE)
    elapsed = time.perf_counter() - started
    summary["seconds"] = round(elapsed, 1)
    cascade = out / CASCADE_FILE
    conclusion = demo_conclusion(
        measures,
        intervention,
        CascadeReport.load(cascade) if cascade.is_file() else None,
        paper_summary,
    )
    summary["conclusion"] = conclusion
    write_json_atomic(out / "demo.json", summary)
    print(f"\n### what the demo shows\n{conclusion}")
    for name, where in (
        ("report", summary.get("report")),
        ("paper report", paper_summary.get("report")),
    ):
        if where:
            print(f"  {name}: {where}")
    print(f"demo finished in {elapsed:.0f} s (every path above: {out / 'demo.json'})")
    return 0


def suite_and_sweep(args: argparse.Namespace, out: Path) -> None:
    from ..collect.models import BACKENDS
    from ..collect.protocol import load_protocol
    from ..collect.sweep import run_sweep
    from ..collect.synth import ensure_suite

    suite = out / "suite"
    with step(f"synthetic suite: {args.videos} videos, seed {args.seed} -> {suite}"):
        # every video a test video; an intact suite of the same arguments is reused (hash check)
        manifest = ensure_suite(
            suite,
            n_videos=args.videos,
            seed=args.seed,
            test_fraction=1.0,
            layout="focus",
            focus_kinds=DEMO_FOCUS_KINDS,
        )
        print(f"{manifest.n_videos} videos, {manifest.n_items} items")

    protocol_file = out / "protocol.toml"
    protocol_file.write_text(demo_protocol(out, suite), encoding="utf-8")
    protocol = load_protocol(protocol_file, backends=BACKENDS)

    with step("sweep: built-in model over 5 frame counts x 2 resolutions + text-only"):
        result = run_sweep(protocol, run_dir=out, progress=True, batch_size=args.batch_size)
        if result.interrupted:
            raise CommandError("sweep interrupted; rerun `make demo` to resume")


def report_steps(out: Path, intervention: InterventionResult) -> None:
    """Cascade, audit with contact sheets and report, with their commands' defaults."""
    from ..analysis.policies import CASCADE_FILE, CascadeSettings
    from ..report import build_artifact
    from ..workflows import audit, audit_sheets, cascade, regression_pathways
    from .cmd_audit import print_audit, print_sheets
    from .cmd_cascade import print_summary as print_cascade
    from .cmd_report import print_artifact

    with step("cascade"):
        report = cascade(out, CascadeSettings(), json_out=out / CASCADE_FILE)
        print_cascade(report)
        print(f"\ncascade report written to {out / CASCADE_FILE}")
        print_cascade_at_scale()

    with step("audit"):
        outcome = audit(out)
        print_audit(outcome, import_csv=None, export=None)
        written, failures = audit_sheets(out, outcome)
        print_sheets(out, written, failures)

    print_regression_pathways(regression_pathways(intervention, out))
    with step("report"):
        print_artifact(build_artifact(out))


def demo_conclusion(
    measures: AnalysisResult,
    intervention: InterventionResult,
    cascade: CascadeReport | None,
    paper: Mapping[str, object],
) -> str:
    """The demo's finding, every number read from what it computed (`paper`: demo.json's
    paper entry)."""
    import textwrap

    from ..analysis.measures import BinarySeries
    from ..analysis.policies import rule_label
    from ..report import CurveHeadline
    from ._format import points_text

    model, block = next(iter(measures.models.items()))
    curve = CurveHeadline.of(str(model), block) if isinstance(block, BinarySeries) else None
    if not isinstance(block, BinarySeries) or curve is None:
        raise CommandError("the demo's first model has no multiple-choice items to describe")

    def pct(stat: Estimate | BestFixed) -> str:
        return f"{100 * _value(stat):.1f}"

    # the report's opening sentence's numbers (`CurveHeadline`), with the demo's own words
    best = block.best_fixed
    terminal = _value(block.terminal_regression_rate)
    sentences = [
        f"The accuracy curve rises from {100 * curve.first_accuracy:.1f} at {curve.grid[0]} to "
        f"{100 * curve.last_accuracy:.1f} at {curve.grid[-1]} (best fixed {pct(best)} at "
        f"{best.config}), yet {100 * curve.harmful_rate:.1f}% of the {curve.n_items} items "
        f"({curve.harmful_items}) are right at some budget and wrong at a larger one, "
        f"and {round(terminal * curve.n_items)} end wrong at the largest budget though a "
        "smaller one got them right."
    ]
    if curve.additive:
        sentences.append(curve.additive)
    reg, ctrl = intervention.regressions, intervention.controls
    net = points_text(intervention.net_accuracy_change_estimate)
    recovered, broken = reg.n_changed or 0, ctrl.n_changed or 0
    if reg.n_answered:
        sentences.append(
            f"Re-run with nested frames, {recovered} of {reg.n_answered} terminal regressions "
            f"recover and {broken} of {ctrl.n_answered} items that were right break (net "
            f"{net} points): most regressions are not sampling accidents."
            if recovered * 2 < reg.n_answered
            else f"Re-run with nested frames, {recovered} of {reg.n_answered} terminal "
            f"regressions recover and {broken} of {ctrl.n_answered} right items break (net "
            f"{net} points)."
        )
    for result in (cascade.results if cascade is not None else ())[:1]:
        best_match = result.best_match
        basis = result.cost.sharing
        sentences.append(
            f"The best stopping policy "
            f"({rule_label(best_match.policy, result.policies.get(best_match.policy))}) saves "
            f"{pct(best_match.cost_reduction)}% of the terminal's frames at an "
            f"accuracy change of {pct(best_match.accuracy_change)} points ({basis} "
            "cost)."
            if best_match
            else "No stopping policy both matches the terminal budget and saves frames"
            + (f" ({basis} cost)." if basis else ".")
        )
    if paper.get("published"):
        sentences.append(
            f"On the seed paper's released labels, {paper['reproduced']} of "
            f"{paper['published']} published numbers are reproduced."
        )
    return textwrap.fill(
        " ".join(sentences), width=100, initial_indent="  ", subsequent_indent="  "
    )


def _value(stat: Estimate | BestFixed) -> float:
    if stat.value is None:
        raise CommandError("the demo's analysis has a measure without a value")
    return float(stat.value)
