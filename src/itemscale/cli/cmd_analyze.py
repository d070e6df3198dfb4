"""`itemscale analyze RUN_DIR`: every measure of docs/measures.md, printed and optionally as JSON."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO, get_args

from ..analysis.measures import (
    DEFAULT_BOOTSTRAP,
    AlternativesSeries,
    AnalysisSettings,
    BinaryBlock,
    BinarySeries,
    BinaryWithText,
    ContinuousBlock,
    ContinuousWithText,
    MeasureKind,
    OpenEndedSeries,
    SeriesEntry,
    counted_text,
    measures_for,
    p_value_text,
)
from ..core.responses import SourceFile, same_file_pairs, same_file_sentence
from . import CommandError
from ._alternatives_text import add_control_argument, print_alternatives, print_alternatives_notes
from ._analyze_options import (
    DEFAULTS,
    add_ci_argument,
    add_inference_arguments,
    parse_config_list,
    print_absent,
    print_superseded,
)
from ._format import Glosses, points_text
from ._inference_text import print_churn, print_heterogeneity, print_inference
from ._settings import add_rerun_floor_argument, settings_from_flags

if TYPE_CHECKING:
    from ..analysis.measures import AnalysisResult
    from ..report import AdditiveVerdict

#: What the console writes in place of a block's intervals, p-values and power figures
#: ("not estimable" with too few videos, `interval_note`), or None: the numbers are shown.
Note = str | None
#: The blocks whose registered measures the console prints.
MeasuredBlock = BinaryBlock | ContinuousBlock | BinaryWithText | ContinuousWithText


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "analyze",
        help="measure what the accuracy curve hides (item-level flips, oracle, text overwrite)",
        description="Compute every measure of docs/measures.md on a run directory's response table, "
        "with 95% intervals from a paired bootstrap that resamples videos.",
    )
    p.add_argument("run_dir", help="run directory holding responses.parquet")
    p.add_argument("--json", dest="json_out", metavar="OUT", help="write the measures as JSON")
    p.add_argument(
        "--per-item",
        metavar="FILE",
        help="write one row per (model, series, item) of the analysed grid with itemscale's "
        "per-item labels and the seed paper's (trajectory_class, is_visually_confused, "
        "is_text_overwritten, best_config; matched_grid_* under --configs), as .csv or .parquet",
    )
    p.add_argument(
        "--bootstrap",
        type=int,
        default=DEFAULTS.bootstrap,
        metavar="B",
        help=f"resamples (0: none; default {DEFAULT_BOOTSTRAP})",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=DEFAULTS.seed,
        help="bootstrap seed (same seed, same interval; default 0)",
    )
    p.add_argument(
        "--by",
        action="append",
        default=[],
        metavar="ATTR",
        help="break every measure down by an item attribute (repeatable), e.g. duration",
    )
    p.add_argument(
        "--metric",
        default=DEFAULTS.metric,
        choices=list(get_args(AnalysisSettings.model_fields["metric"].annotation)),
        help="score used for open-ended tasks",
    )
    p.add_argument(
        "--eps",
        type=float,
        default=DEFAULTS.eps,
        help="score drop that counts as harmful (default: 0.1)",
    )
    p.add_argument(
        "--axis",
        metavar="CHAIN",
        help="on a grid of frame counts x resolutions, measure one chain of it as the axis: "
        "frames@RES (the frame counts at one resolution, e.g. frames@112) or resolution@Nf",
    )
    add_ci_argument(p)
    add_control_argument(p)
    add_inference_arguments(p)
    p.add_argument(
        "--workers",
        type=int,
        default=DEFAULTS.workers,
        metavar="N",
        help="threads computing models at once (default: one per usable core); the numbers "
        "do not depend on it",
    )
    add_rerun_floor_argument(p)
    p.add_argument(
        "--configs",
        type=parse_config_list,
        metavar="LABEL,LABEL,...",
        help="restrict every measure to these configurations (the matched grid is recomputed "
        "on them; include the text-only label to keep the text-only measures), e.g. "
        "textonly,16f_151k,32f_151k,64f_151k for the seed paper's Table 2",
    )
    p.add_argument(
        "--anchors",
        metavar="FILE",
        help="the run swept only these anchor items (`itemscale anchors`): predict its accuracy "
        "on the full item set at every configuration and estimate the item-level rates "
        "(needs --irt; docs/anchors.md)",
    )
    p.add_argument(
        "--irt", metavar="FIT", help="with --anchors: the fit `itemscale irt RUN --json FIT` wrote"
    )
    p.set_defaults(func=run)


def _print_measures(
    block: MeasuredBlock,
    kind: MeasureKind,
    out: TextIO,
    indent: str,
    width: int,
    gloss: Glosses,
    note: Note,
) -> None:
    """The registered measures of one block, a line each, in registry order."""
    for unit in measures_for(kind):
        line = unit.console_line(block, gloss, width, note)
        if line is not None:
            print(f"{indent}{line}", file=out)


def _dropped_text(reasons: Mapping[str, int]) -> str:
    """' (reason: n, ...)' for the items a grid dropped, '' when none."""
    if not reasons:
        return ""
    return " (" + ", ".join(f"{k}: {v}" for k, v in sorted(reasons.items())) + ")"


def _print_binary(
    block: BinarySeries, out: TextIO, indent: str, brief: bool, gloss: Glosses, note: Note
) -> None:
    """A binary series: its matched grid and curve, the registered measures, repeats, flips,
    the inference lines, the text-only grid and the chains; `note` in place of every
    interval, p-value and power figure (too few videos)."""
    print(
        f"{indent}matched grid: {block.n_items} items on {block.n_videos} videos; "
        f"dropped {block.n_dropped}" + _dropped_text(block.drop_reasons) + gloss("matched grid"),
        file=out,
    )
    if block.scoring_rules:
        print(
            f"{indent}multiple choice scored by {', '.join(block.scoring_rules)}"
            + gloss("scoring rule"),
            file=out,
        )
    print(f"{indent}accuracy (points, 95% CI):", file=out)
    width = max((len(label) for label in block.axis), default=4)
    noise = block.noise_floor or {}
    for label in block.axis:
        line = f"{indent}  {label:<{width}}  {counted_text(block.accuracy[label], note=note)}"
        noans = block.noanswer_rate[label].value
        if noans:
            line += f"   noanswer {noanswer_text(noans, block.n_items)}"
        if label in noise:
            line += f"   noise floor {points_text(noise[label], note)}"
        print(line, file=out)
    print_effective_budget(block, out, indent, gloss)
    for warning in block.axis_warnings or ():
        print(f"{indent}warning: {warning}", file=out)
    print(
        f"{indent}visual budgets only (the text-only answer is a baseline, not a budget):", file=out
    )
    _print_measures(block, "binary", out, indent, 21, gloss, note)
    if block.item_rate_harmful_rate is not None:
        print(
            f"{indent}repeats: {block.n_repeats}; item-rate harmful "
            f"{points_text(block.item_rate_harmful_rate, note)}; expected harmful "
            f"{points_text(block.expected_harmful_rate, note)}",
            file=out,
        )
    if block.adjacent and not brief:
        print(
            f"{indent}adjacent flips (down / up, points; McNemar p):{gloss('adjacent flips')}",
            file=out,
        )
        for arrow in block.adjacent:
            print(
                f"{indent}  {arrow}: {counted_text(block.flip_down[arrow], note=note)} / "
                f"{counted_text(block.flip_up[arrow], note=note)}; "
                f"p={p_value_text(block.mcnemar_p[arrow], note=note)}",
                file=out,
            )
    from ..report import InferenceVerdicts

    verdicts = InferenceVerdicts.of(block, note)
    print_inference(verdicts, out, indent, gloss)
    if block.grid_with_text is not None:
        _print_with_text(
            block.grid_with_text, out, indent, gloss, note, verdicts.additive_with_text
        )
    if not brief:
        _print_chains(block, out, indent, gloss)


def noanswer_text(rate: float, n_items: int) -> str:
    """A NOANSWER share in points with the items it counts ('1.7 (13 of 786)'); a share
    below 0.05 points as its count alone ('1 of 2700'), never '0.0'."""
    count = f"{round(rate * n_items)} of {n_items}"
    return f"{100 * rate:.1f} ({count})" if 100 * rate >= 0.05 else count


def print_effective_budget(
    block: BinaryBlock | ContinuousBlock, out: TextIO, indent: str, gloss: Glosses
) -> None:
    """Beside the curve: each adjacent step the same-input rule flags, in a sentence."""
    for entry in block.effective_budget or ():
        print(f"{indent}same input: {entry.evidence.sentence}{gloss('same input')}", file=out)


def print_rerun_floor(block: SeriesEntry, out: TextIO, gloss: Glosses) -> None:
    """The rerun floor the model's same-input verdicts used, when one is measured (its repeats,
    its reruns: `rerun floor: measured, k of n ...`) or stated (`--rerun-floor`)."""
    floor = (
        block.continuous.rerun_floor if isinstance(block, OpenEndedSeries) else block.rerun_floor
    )
    if floor is not None:
        print(f"  rerun floor: {floor.line()}{gloss('rerun floor')}", file=out)


def _print_chains(
    block: BinaryBlock | ContinuousBlock, out: TextIO, indent: str, gloss: Glosses
) -> None:
    """On a multi-axis grid: the order used, and each chain's curve and flips in one line."""
    if block.order is None or not block.order.multi_axis:
        return
    print(
        f"{indent}budget order: frames x pixels, a partial order (c < c' when c' has at least "
        f"as many frames and pixels, and more of one); per chain:{gloss('chain')}",
        file=out,
    )
    chains: Mapping[str, BinaryBlock | ContinuousBlock] = block.chains or {}
    for name, sub in chains.items():
        curve = ", ".join(
            f"{label} {100 * value:.1f}"
            for label in sub.axis
            if (value := sub.curve[label].value) is not None
        )
        rate = sub.harmful_rate if isinstance(sub, BinaryBlock) else sub.harmful_rate_eps
        harmful = f"{100 * rate.value:.1f}" if rate.value is not None else "n/a"
        print(f"{indent}  {name}: {curve}; harmful {harmful}", file=out)


def _grid_line(g: BinaryWithText | ContinuousWithText) -> str:
    dropped = f"; dropped {g.n_dropped}" if g.n_dropped else ""
    dropped += _dropped_text(g.drop_reasons)
    joined = (", " if g.multi_axis else " < ").join(g.configs)
    first = " (text-only below every budget; the rest by the budget order)" if g.multi_axis else ""
    return f"{joined}{first}: {g.n_items} items{dropped}"


def _print_with_text(
    g: BinaryWithText | ContinuousWithText,
    out: TextIO,
    indent: str,
    gloss: Glosses,
    note: Note,
    additive: AdditiveVerdict | None = None,
) -> None:
    from ..analysis.measures import GRID_WITH_TEXT_TITLE

    print(f"{indent}{GRID_WITH_TEXT_TITLE}:", file=out)
    print(f"{indent}  grid {_grid_line(g)}", file=out)
    kind: MeasureKind = (
        "binary_with_text" if isinstance(g, BinaryWithText) else "continuous_with_text"
    )
    _print_measures(g, kind, out, indent + "  ", 19, gloss, note)
    print_heterogeneity(additive, out, indent + "  ", gloss)


def _print_continuous(
    block: ContinuousBlock, out: TextIO, indent: str, gloss: Glosses, note: Note
) -> None:
    print(
        f"{indent}open-ended ({block.metric}): {block.n_items} items, dropped {block.n_dropped}",
        file=out,
    )
    width = max((len(label) for label in block.axis), default=4)
    for label in block.axis:
        text = counted_text(block.mean_score[label], note=note)
        print(f"{indent}  {label:<{width}}  {text}", file=out)
    print_effective_budget(block, out, indent, gloss)
    for warning in block.axis_warnings or ():
        print(f"{indent}warning: {warning}", file=out)
    _print_measures(block, "continuous", out, indent, 21, gloss, note)
    tasks = block.tasks or {}
    if tasks:
        print(f"{indent}oracle gap per task (item attribute {block.task_attribute}):", file=out)
        width = max(len(t) for t in tasks)
        for task, sub in tasks.items():
            best = sub.best_fixed
            print(
                f"{indent}  {task:<{width}}  {sub.n_items:>5} items: oracle gap "
                f"{points_text(sub.oracle_gap, note)}; best fixed {best.config} "
                f"{points_text(best, note)}",
                file=out,
            )
    _print_chains(block, out, indent, gloss)
    if block.grid_with_text is not None:
        _print_with_text(block.grid_with_text, out, indent, gloss, note)


def print_series(
    block: SeriesEntry,
    out: TextIO,
    gloss: Glosses,
    indent: str = "  ",
    brief: bool = False,
    files: Mapping[str, SourceFile] | None = None,
) -> None:
    """One series' measures; `brief` leaves out the adjacent flips, the chains and the
    open-ended block's detail (`itemscale analyze` prints them all). With too few videos
    (`small_sample`), it says so and prints "not estimable" for the intervals and tests (an
    open-ended series has its record on its continuous block and is printed as it is)."""
    from ..analysis.measures import interval_note, small_sample_text

    warning = small_sample_text(block)
    if warning:
        print(f"{indent}{warning}", file=out)
    note = interval_note(block)
    if isinstance(block, AlternativesSeries):
        print_alternatives(block, out, indent, gloss, files or {}, note)
        return
    if isinstance(block, BinarySeries):
        _print_binary(block, out, indent, brief, gloss, note)
    c = block.continuous if not isinstance(block, ContinuousBlock) else None
    if c is not None and brief:
        print(
            f"{indent}open-ended ({c.metric}): {c.n_items} items; oracle gap "
            f"{points_text(c.oracle_gap, note)}{gloss('oracle gap')}",
            file=out,
        )
    elif c is not None:
        _print_continuous(c, out, indent, gloss, note)
    axis = block.axis if not isinstance(block, ContinuousBlock) else []
    for first, copy in same_file_pairs(files or {}, axis):
        print(f"{indent}same log file: {same_file_sentence(first, copy)}", file=out)
    by = block.by if not isinstance(block, OpenEndedSeries) else None
    for attr, breakdown in (by or {}).items():
        for value, sub in breakdown.groups.items():
            print(f"{indent}-- {attr} = {value}", file=out)
            print_series(sub, out, gloss, indent + "   ")


def _series_name(block: SeriesEntry) -> str:
    """The series a model's entry is, as the summary names it: an open-ended series' entry
    holds no `series` key of its own (its continuous block does), and reads "default"."""
    if isinstance(block, OpenEndedSeries):
        return "default"
    return block.series or "default"


def _print_reruns(block: BinarySeries | OpenEndedSeries | AlternativesSeries, out: TextIO) -> None:
    """The intervention re-runs of a model's series, each as its curve in one line."""
    for series, rerun in (block.interventions or {}).items():
        acc = rerun.accuracy if isinstance(rerun, BinarySeries) else {}
        curve = ", ".join(
            f"{label} {100 * v.value:.1f}" for label, v in acc.items() if v.value is not None
        )
        n_items = rerun.continuous.n_items if isinstance(rerun, OpenEndedSeries) else rerun.n_items
        print(
            f"  {series}: re-runs of {n_items} chosen items (not a budget axis; "
            f"`itemscale intervene` reports recovered and broken rates): {curve}",
            file=out,
        )


def print_summary(
    result: AnalysisResult | Mapping[str, Any],
    out: TextIO | None = None,
    *,
    brief: bool = False,
    files: Mapping[str, SourceFile] | None = None,
    curve: bool = False,
) -> None:
    """The analysis on the console; each term's explanation is given once per summary.
    `result` is the typed result (`analyze_responses`), or its JSON form, read as one;
    `files` the source file of each imported configuration (`source_files`), to name those
    imported from one file; `curve`: a single model's opening sentence too (`analyze`)."""
    from ..analysis.measures import AnalysisResult

    result = AnalysisResult.from_json(result)
    gloss = Glosses()
    out = out if out is not None else sys.stdout
    boot = result.bootstrap
    method = {
        "bca": "BCa; best fixed, headroom and gaps selection-aware (winner's curse)",
        "percentile": "percentile",
    }.get(boot.interval, boot.interval)
    print(
        f"itemscale analyze: {len(result.models)} model(s); 95% intervals: {boot.bootstrap} "
        f"video-bootstrap resamples, seed {boot.seed}, {method}",
        file=out,
    )
    if result.grid is not None:
        print(f"grid restricted to: {', '.join(result.grid.configs)}", file=out)
        for model, lacks in result.grid.excluded_models.items():
            print(f"  left out {model}: it lacks {', '.join(lacks)}", file=out)
    for warning in result.scoring_rule_warnings or ():
        print(f"warning: {warning}", file=out)
    print_models_sentence(result, out, curve)
    for model, block in result.models.items():
        print(f"\n== {model} (series {_series_name(block)}){gloss('series')}", file=out)
        print_rerun_floor(block, out, gloss)
        print_series(block, out, gloss, brief=brief, files=files)
        if isinstance(block, ContinuousBlock):  # a `--by` group's form, not a model's entry
            continue
        _print_reruns(block, out)
        for series, other in (block.other_series or {}).items():
            print(f"\n-- {model}, series {series}", file=out)
            print_series(other, out, gloss, files=files)
        for pair, overlap in (block.membership or {}).items():
            h = overlap.harmful
            jac = "n/a" if h.jaccard is None else f"{h.jaccard:.2f}"
            print(
                f"  membership {pair}: harmful {h.n_p} vs {h.n_q}, both {h.n_both}, Jaccard {jac}",
                file=out,
            )
        print_churn(block, out, gloss)
        for warning in block.scoring_rule_warnings or ():
            print(f"  warning: {model}: {warning}", file=out)


def print_models_sentence(result: AnalysisResult, out: TextIO, curve: bool = False) -> None:
    """Above the models' blocks: the sentence the report opens with, written from the same
    record (`report.Headline`): each model's grid named beside its numbers, and with `curve`
    one model's curve beside what it hides."""
    import textwrap

    from ..report import Headline

    headline = Headline.of(result)
    sentence = headline.models or (headline.curve if curve else None)
    if sentence is not None:
        print(file=out)
        print(textwrap.fill(sentence.text(), width=100, break_on_hyphens=False), file=out)


def run(args: argparse.Namespace) -> int:
    from ..analysis.measures import AnalysisSettings, UnknownConfigError, analyze_responses

    if args.anchors or args.irt:
        from .cmd_anchors import analyze_with_anchors

        return analyze_with_anchors(args)
    from ..core.responses import read_run, source_files, stack_warnings, write_json_atomic
    from ..workflows import check_per_item_path, write_per_item

    settings = settings_from_flags(
        AnalysisSettings,
        {"test_pairs": "--test-pair"},
        bootstrap=args.bootstrap,
        seed=args.seed,
        ci=args.ci,
        configs=args.configs,
        control=args.control,
        axis=args.axis,
        by=args.by,
        metric=args.metric,
        eps=args.eps,
        power_target=args.power_target,
        test_pairs=args.test_pair,
        heterogeneity_draws=args.heterogeneity_draws,
        workers=args.workers,
        rerun_floor=args.rerun_floor,
    )
    try:
        per_item = check_per_item_path(args.per_item) if args.per_item else None
    except ValueError as exc:
        raise CommandError(f"--per-item {exc}") from exc
    try:  # the reply text, sources and timestamps are no measure's: not read (memory)
        df, provenance = read_run(args.run_dir, slim=True)
    except FileNotFoundError as exc:
        raise CommandError(str(exc)) from exc
    try:
        result = analyze_responses(df, settings)
    except UnknownConfigError as exc:
        raise CommandError(f"{args.run_dir}: {exc}") from exc
    if not result.models:
        raise CommandError(f"{args.run_dir}: no answered responses to analyse")
    if args.json_out:  # written before printing, so a closed pipe (`| head`) cannot lose it
        write_json_atomic(args.json_out, result.to_json())
    if per_item is not None:
        from ..analysis.measures import per_item_labels

        labels = per_item_labels(
            df, configs=settings.configs, metric=settings.metric, eps=settings.eps
        )
        write_per_item(labels, per_item)
    files = source_files(provenance)
    print_summary(result, files=files, curve=True)
    print_alternatives_notes(result)
    print_absent(df)
    print_superseded(provenance)
    for line in stack_warnings(df, provenance):
        print(f"\nwarning: {line}")
    if args.json_out:
        print(f"\nmeasures written to {args.json_out}")
    if per_item is not None:
        print(f"per-item labels written to {args.per_item} ({len(labels)} rows)")
    return 0
