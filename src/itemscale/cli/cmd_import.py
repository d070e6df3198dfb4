"""`itemscale import {table,lmms-eval,vlmevalkit} PATH... -o RUN_DIR`: other tools' results into a run.

Every import validates all its input before writing, merges into the run directory
idempotently (a second import of the same file adds nothing; a conflicting answer is an error)
and prints a summary of what was read, what landed and what was dropped, by reason.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..importers import ImportSummary


def _common_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-o",
        "--out",
        dest="run_dir",
        required=True,
        metavar="RUN_DIR",
        help="run directory to create or add to",
    )
    p.add_argument("--summary-json", metavar="FILE", help="also write the summary as JSON")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="parse, validate and summarise without writing the run",
    )


def _file_import_args(
    p: argparse.ArgumentParser,
    *,
    model_help: str,
    files_help: str | None = None,
    config_help: str | None = None,
    benchmark_help: str | None = None,
) -> None:
    """The arguments of the per-file importers (lmms-eval, VLMEvalKit), which take the same
    inputs; only their help differs."""
    p.add_argument("files", nargs="*", metavar="PATH", help=files_help)
    p.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="LABEL[:FRAMES]=PATH",
        help=config_help,
    )
    p.add_argument("--model", help=model_help)
    p.add_argument("--benchmark", metavar="FILE", help=benchmark_help)
    _absent_arg(p)
    _common_args(p)


def _absent_arg(p: argparse.ArgumentParser) -> None:
    from ..importers import ABSENT_MODES, DEFAULT_ABSENT

    p.add_argument(
        "--absent",
        choices=list(ABSENT_MODES),
        default=DEFAULT_ABSENT,
        help="items of --benchmark (or --answer-key) without any row for a model: left out of "
        "every denominator and reported (skip, the default), or added as NOANSWER (wrong) at "
        "every configuration of that model, marked error 'absent' (noanswer, as the seed "
        "paper's split-sized denominators count them)",
    )


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "import",
        help="import results of lmms-eval, VLMEvalKit or any table into a run directory",
        description="Import per-item results into the response table of a run directory.",
    )
    kinds = p.add_subparsers(dest="import_kind", metavar="KIND", required=True)

    _register_table(kinds)

    le = kinds.add_parser(
        "lmms-eval",
        help="lmms-eval --log_samples JSONL files (with the results.json beside each)",
        description="Import lmms-eval sample logs. The configuration of each file comes from "
        "its results.json (config.model_args), unless given with --config LABEL[:FRAMES]=PATH "
        "(repeatable, in axis order).",
    )
    _file_import_args(
        le,
        files_help="samples JSONL files or directories",
        config_help="label (and frame count) of the configuration PATH was run with",
        model_help="model name to record (required when files disagree)",
        benchmark_help="benchmark question file (Parquet or items JSONL) for video ids, "
        "options and categories",
    )
    le.set_defaults(func=run_lmms_eval)

    vk = kinds.add_parser(
        "vlmevalkit",
        help="VLMEvalKit prediction files ({model}_{dataset}.xlsx/.tsv/.json)",
        description="Import VLMEvalKit predictions; the budget is read from the dataset name "
        "(Video-MME_8frame, MVBench_1fps) unless given with --config LABEL[:FRAMES]=PATH.",
    )
    _file_import_args(vk, model_help="model name to record (default: from the file name)")
    vk.set_defaults(func=run_vlmevalkit)


def _register_table(kinds: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`itemscale import table`: its many flags are the shapes a results table comes in."""
    t = kinds.add_parser(
        "table",
        help="CSV, TSV, JSONL or Parquet with one row per (model, item, config, repeat)",
        # a space after each comma, so the help wraps between column names, never inside one
        description="Columns: model, item_id, config, frames and correct (0/1) or score "
        "([0,1]); optional video_id, order, answer, confidence, repeat, prediction, reference, "
        "status, series, task_kind, pixels, visual_tokens, latency_s and attr_* item "
        "attributes. frames == 0 is the text-only baseline. See docs/importers.md.",
    )
    t.add_argument("files", nargs="+", metavar="FILE")
    t.add_argument(
        "--wide",
        action="store_true",
        help="one row per item and one column per configuration, each cell the predicted "
        "answer (as papers release them); frames from each label's leading '<N>f', "
        "textonly/text/blind = 0",
    )
    t.add_argument(
        "--id-column",
        metavar="NAME",
        help="column holding the item id (default: item_id), e.g. sample_id",
    )
    t.add_argument("--model", metavar="NAME", help="model name, for tables without a model column")
    t.add_argument(
        "--frames",
        action="append",
        default=[],
        metavar="LABEL=N",
        help="frame count of a configuration whose label does not state it (repeatable)",
    )
    t.add_argument(
        "--rename",
        action="append",
        default=[],
        metavar="SRC=DST",
        help="read column SRC as DST (repeatable), e.g. predicted_option=answer",
    )
    t.add_argument(
        "--wide-values",
        choices=["answer", "correct", "score"],
        default="answer",
        help="what a wide table's cells hold (default: answer)",
    )
    t.add_argument(
        "--empty",
        choices=["noanswer", "missing"],
        default="noanswer",
        help="an empty answer cell of a wide table: an answer naming no option, counted wrong "
        "(noanswer, the default, as the seed paper counts it) or a cell never run (missing)",
    )
    t.add_argument(
        "--benchmark",
        metavar="FILE",
        help="benchmark question file (Video-MME, MLVU, LongVideoBench Parquet or items "
        "JSONL): gold answers, video ids and attributes by item id",
    )
    t.add_argument(
        "--answer-key",
        metavar="FILE",
        help="answer key table with columns item_id, gold [, video_id, attr_*]",
    )
    _absent_arg(t)
    t.add_argument(
        "--video-from-id",
        metavar="PATTERN",
        help="read the video id (the bootstrap's cluster) from the item id where nothing else "
        "names it: a regular expression matching the whole id, its group 'video' (or first "
        "group) the video, or the preset videomme ('001-1' is a question about video '001')",
    )
    _common_args(t)
    t.set_defaults(func=run_table)


def _emit(summary: ImportSummary, args: argparse.Namespace) -> int:
    print(summary.format(), file=sys.stdout)
    if args.summary_json:
        Path(args.summary_json).write_text(
            json.dumps(summary.to_dict(), indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
    return 0


def run_table(args: argparse.Namespace) -> int:
    from ..importers import run_import

    summary = run_import(
        "table",
        args.files,
        run_dir=args.run_dir,
        dry_run=args.dry_run,
        wide=args.wide,
        id_column=args.id_column,
        model=args.model,
        frames=args.frames,
        rename=args.rename,
        wide_values=args.wide_values,
        empty=args.empty,
        benchmark=args.benchmark,
        answer_key=args.answer_key,
        absent=args.absent,
        video_from_id=args.video_from_id,
    )
    return _emit(summary, args)


def _run_file_import(args: argparse.Namespace, kind: str) -> int:
    from ..importers import run_import

    summary = run_import(
        kind,
        args.files,
        run_dir=args.run_dir,
        dry_run=args.dry_run,
        configs=args.config,
        model=args.model,
        benchmark=args.benchmark,
        absent=args.absent,
    )
    return _emit(summary, args)


def run_lmms_eval(args: argparse.Namespace) -> int:
    return _run_file_import(args, "lmms-eval")


def run_vlmevalkit(args: argparse.Namespace) -> int:
    return _run_file_import(args, "vlmevalkit")
