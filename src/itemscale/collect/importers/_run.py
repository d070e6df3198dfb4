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
from typing import Any, Final, TypeVar

from ...core.plugins import IMPORTERS_GROUP, Registry
from ._absent import ABSENT_MODES, DEFAULT_ABSENT
from ._common import ImportInputError
from ._summary import ImportSummary


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


#: Every importer, by the KIND of `itemscale import KIND`: a read-only mapping filled on the
#: first lookup with itemscale's own (`@importer` on each run function of this package) and
#: then every installed package's entry point of the group `itemscale.importers`
#: (docs/extending.md).
IMPORTERS: Final[Registry[Importer]] = Registry(
    what="importer", group=IMPORTERS_GROUP, kind=Importer, package=__package__
)

R = TypeVar("R", bound=Callable[..., ImportSummary])


def importer(
    kind: str,
    *,
    order: float,
    help: str,
    description: str,
    options: tuple[ImportOption, ...],
) -> Callable[[R], R]:
    """Declare the decorated run function (`*, files, run_dir, dry_run, **options ->
    ImportSummary`) one of itemscale's own importers, `itemscale import KIND`, where it is
    defined; `order` is its place in `itemscale import --help`."""

    def declare(run: R) -> R:
        IMPORTERS.declare(kind, Importer(run, help, description, options), order=order)
        return run

    return declare


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
