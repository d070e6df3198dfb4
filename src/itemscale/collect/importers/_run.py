"""`run_import(kind, files, ...)`: every importer behind one call, the CLI's and a notebook's.

Each importer is one `IMPORTERS` entry: its run function and the arguments of its
`itemscale import KIND`, declared here as data. `cli/cmd_import.py` builds every subcommand from
the entries and hands the parsed values to `run_import`, so an import run from Python writes the
same run folder and gets the same summary as `itemscale import KIND`, and a new importer needs no
hand-written parser.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ...core.plugins import IMPORTERS_GROUP, Registry
from ._absent import ABSENT_MODES, DEFAULT_ABSENT
from ._common import ImportInputError
from ._lmms_eval import run_lmms_eval_import
from ._summary import ImportSummary
from ._table_run import run_table_import
from ._vlmevalkit import run_vlmevalkit_import


@dataclass(frozen=True, slots=True)
class ImportOption:
    """One argument of `itemscale import KIND`, as argparse's `add_argument(*names, ...)` takes
    it, and the keyword of the importer's run function its value fills.

    `switch` is a flag without a value (`--wide`); `repeatable` may be given several times and
    fills a list, empty when never given; `fills` names the keyword when it is not the
    argument's own name (`--config` fills `configs`)."""

    names: tuple[str, ...]
    help: str | None = None
    metavar: str | None = None
    nargs: str | None = None
    choices: tuple[str, ...] | None = None
    default: str | None = None
    switch: bool = False
    repeatable: bool = False
    fills: str | None = None

    @property
    def keyword(self) -> str:
        """The run function's keyword: `fills`, else the name as argparse spells its dest
        (`--id-column` -> `id_column`)."""
        if self.fills is not None:
            return self.fills
        name = next((n for n in self.names if n.startswith("--")), self.names[0])
        return name.lstrip("-").replace("-", "_")


@dataclass(frozen=True, slots=True)
class Importer:
    """One entry of `IMPORTERS`: `run(*, files, run_dir, dry_run, **options) -> ImportSummary`
    and its subcommand: `help` (its line in `itemscale import --help`), `description` (the top
    of `itemscale import KIND --help`) and `options`, in the order the help lists them. Every
    subcommand also takes `-o RUN_DIR`, `--summary-json FILE` and `--dry-run`."""

    run: Callable[..., ImportSummary]
    help: str
    description: str
    options: tuple[ImportOption, ...]


def absent_option(source: str) -> ImportOption:
    """`--absent`, its help naming the options of this importer that list the items."""
    return ImportOption(
        ("--absent",),
        choices=ABSENT_MODES,
        default=DEFAULT_ABSENT,
        help=f"items of {source} without any row for a model: left out of every denominator "
        "and reported (skip, the default), or added as NOANSWER (wrong) at every "
        "configuration of that model, marked error 'absent' (noanswer, as the seed paper's "
        "split-sized denominators count them)",
    )


VIDEO_FROM_ID_OPTION: Final[ImportOption] = ImportOption(
    ("--video-from-id",),
    metavar="PATTERN",
    help="read the video id (the bootstrap's cluster) from the item id where nothing else "
    "names it: a regular expression matching the whole id, its group 'video' (or first "
    "group) the video, or the preset videomme ('001-1' is a question about video '001')",
)


def file_import_options(
    *,
    model_help: str,
    files_help: str | None = None,
    config_help: str | None = None,
    benchmark_help: str | None = None,
) -> tuple[ImportOption, ...]:
    """The arguments of the per-file importers (lmms-eval, VLMEvalKit), which take the same
    inputs (`files`, `configs`, `model`, `benchmark`, `absent`); only their help differs."""
    return (
        ImportOption(("files",), nargs="*", metavar="PATH", help=files_help),
        ImportOption(
            ("--config",),
            repeatable=True,
            metavar="LABEL[:FRAMES]=PATH",
            help=config_help,
            fills="configs",
        ),
        ImportOption(("--model",), help=model_help),
        ImportOption(("--benchmark",), metavar="FILE", help=benchmark_help),
        absent_option("--benchmark"),
        VIDEO_FROM_ID_OPTION,
    )


SERIES_OPTION: Final[ImportOption] = ImportOption(
    ("--series",),
    metavar="NAME",
    help="put every file of this call in series NAME (default: default): one call per "
    "frame selector, each its own series at one configuration label; a series named "
    "selection:NAME is a frame selector's, whose record analyze gives against every series "
    "that is not a selector's (the control) at each budget they share",
)

TABLE_OPTIONS: Final[tuple[ImportOption, ...]] = (
    ImportOption(
        ("files",),
        nargs="+",
        metavar="FILE",
        help="the table(s): CSV (comma-separated), TSV (tab), JSONL or Parquet",
    ),
    ImportOption(
        ("--wide",),
        switch=True,
        help="one row per item and one column per configuration, each cell the predicted "
        "answer (as papers release them); frames from each label's leading '<N>f', "
        "textonly/text/blind = 0",
    ),
    ImportOption(
        ("--id-column",),
        metavar="NAME",
        help="column holding the item id (default: item_id), e.g. sample_id",
    ),
    ImportOption(
        ("--model",),
        metavar="NAME",
        help="model name, for tables without a model column (every file's, when several)",
    ),
    ImportOption(
        ("--model-from-name",),
        metavar="PATTERN",
        help="each file's model from its name, for tables without a model column: PATTERN is "
        "the file name with {model} where the model stands and * for any text, e.g. "
        "'{model}_V1_short_predictions_wide.csv' (a release's file per model, in one call)",
    ),
    ImportOption(
        ("--frames",),
        repeatable=True,
        metavar="LABEL=N",
        help="frame count of a configuration whose label does not state it (repeatable)",
    ),
    ImportOption(
        ("--rename",),
        repeatable=True,
        metavar="SRC=DST",
        help="read column SRC as DST (repeatable), e.g. predicted_option=answer",
    ),
    ImportOption(
        ("--wide-values",),
        choices=("answer", "correct", "score"),
        default="answer",
        help="what a wide table's cells hold (default: answer)",
    ),
    ImportOption(
        ("--empty",),
        choices=("noanswer", "missing"),
        default="noanswer",
        help="an empty answer cell (long or wide table alike): an answer naming no option, "
        "counted wrong (noanswer, the default, as the seed paper counts it) or a cell never "
        "run (missing)",
    ),
    ImportOption(
        ("--benchmark",),
        metavar="FILE",
        help="benchmark question file (Video-MME, MLVU, LongVideoBench Parquet or items "
        "JSONL): gold answers, video ids and attributes by item id",
    ),
    ImportOption(
        ("--answer-key",),
        metavar="FILE",
        help="answer key table with columns item_id, gold [, video_id, attr_*]",
    ),
    absent_option("--benchmark or --answer-key"),
    VIDEO_FROM_ID_OPTION,
)


def register_importers(register: Callable[[str, Any], None]) -> None:
    """itemscale's own importers: the built-in plugin of `IMPORTERS`, called as an installed
    package's `itemscale.importers` entry point is. Each is a module with a
    `run_<tool>_import(*, files, run_dir, dry_run, **options) -> ImportSummary` plus one call
    here, its arguments included; see docs/extending.md."""
    register(
        "table",
        Importer(
            run=run_table_import,
            help="CSV, TSV, JSONL or Parquet with one row per (model, item, config, repeat)",
            # a space after each comma, so the help wraps between column names, never inside one
            description="Columns: model, item_id, config, frames and correct (0/1) or score "
            "([0,1]); optional video_id, order, answer, confidence, repeat, prediction, reference, "
            "status, series, task_kind, pixels, visual_tokens, latency_s and attr_* item "
            "attributes. frames == 0 is the text-only baseline. See docs/importers.md.",
            options=TABLE_OPTIONS,
        ),
    )
    register(
        "lmms-eval",
        Importer(
            run=run_lmms_eval_import,
            help="lmms-eval --log_samples JSONL files (with the results.json beside each)",
            description="Import lmms-eval sample logs. The configuration of each file comes from "
            "its results.json (config.model_args), unless given with --config LABEL[:FRAMES]=PATH "
            "(repeatable, in axis order).",
            options=(
                *file_import_options(
                    files_help="samples JSONL files or directories",
                    config_help="label (and frame count) of the configuration PATH was run with",
                    model_help="model name to record (required when files disagree)",
                    benchmark_help="benchmark question file (Parquet or items JSONL) for video "
                    "ids, options and categories",
                ),
                SERIES_OPTION,
                ImportOption(
                    ("--rerun-of",),
                    metavar="LABEL",
                    help="the other --config files are a second execution of configuration "
                    "LABEL (of this import or already in the run): stored as its reruns "
                    "(repeats from 1000, marked rerun_of), which no measure counts and which "
                    "measure the rerun floor same-input verdicts are graded against",
                ),
            ),
        ),
    )
    register(
        "vlmevalkit",
        Importer(
            run=run_vlmevalkit_import,
            help="VLMEvalKit prediction files ({model}_{dataset}.xlsx/.tsv/.json)",
            description="Import VLMEvalKit predictions; the budget is read from the dataset name "
            "(Video-MME_8frame, MVBench_1fps) unless given with --config LABEL[:FRAMES]=PATH.",
            options=file_import_options(
                files_help="prediction files ({model}_{dataset}.xlsx/.tsv/.json)",
                config_help="label (and frame count) of the configuration PATH was run with, "
                "where the dataset name does not say it",
                model_help="model name to record (default: from the file name)",
                benchmark_help="benchmark question file (Parquet or items JSONL) for video ids, "
                "options and categories",
            ),
        ),
    )


#: Every importer, by the KIND of `itemscale import KIND`: a read-only mapping filled on the
#: first lookup by `register_importers` and then by every installed package's entry point of
#: the group `itemscale.importers` (docs/extending.md).
IMPORTERS: Final[Registry[Importer]] = Registry(
    what="importer", group=IMPORTERS_GROUP, kind=Importer, builtin=register_importers
)


def run_import(
    kind: str,
    files: Sequence[str | os.PathLike[str]] = (),
    *,
    run_dir: str | os.PathLike[str],
    dry_run: bool = False,
    **options: Any,
) -> ImportSummary:
    """Parse and validate every file, then merge the rows into `run_dir` (nothing is written
    on any error, or with `dry_run`). Returns the summary `itemscale import` prints.

    `options` are the CLI's flags as keywords (each `ImportOption.keyword` of the importer):
    `table` takes `wide`, `id_column`, `model`, `frames` and `rename` (lists of `LABEL=N` /
    `SRC=DST`), `wide_values`, `empty`, `benchmark`, `answer_key`, `absent` (`skip` or
    `noanswer`), `video_from_id` and `model_from_name`; `lmms-eval` and `vlmevalkit` take
    `configs` (the `--config LABEL[:FRAMES]=PATH` values), `model`, `benchmark`, `absent` and
    `video_from_id`; `lmms-eval` also `series` and `rerun_of` (a configuration label the other
    `--config` files execute again).
    """
    importer = IMPORTERS.get(kind)
    if importer is None:
        raise ImportInputError(f"unknown importer {kind!r}; known: {', '.join(IMPORTERS)}")
    paths = [os.fspath(f) for f in files]
    return importer.run(files=paths, run_dir=run_dir, dry_run=dry_run, **options)
