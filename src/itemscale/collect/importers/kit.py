"""The importer kit: everything an importer of another tool's result files needs, public, so
that one in a package of its own uses what itemscale's lmms-eval and VLMEvalKit importers use
(docs/extending.md, "An importer").

An importer parses its tool's files into rows of the response table and hands them, with an
`ImportContext` (what the command line asked for), to `finish_parsed_import`, which checks the
rows, records the options and sources in run.json and merges the rows into the run folder.
"""

from __future__ import annotations

from ._absent import ABSENT_MODES, DEFAULT_ABSENT
from ._common import (
    ImportInputError,
    SourceRecord,
    attributes_json,
    source_record,
)
from ._config_ids import label_config_id, series_config_id
from ._finish import ImportContext, finish_parsed_import
from ._jobs import (
    BenchmarkIndex,
    ConfigSpec,
    config_jobs,
    gold_letter,
    load_benchmark_index,
    parse_config_arg,
)
from ._run import Importer, ImportOption, file_import_options
from ._summary import ImportSummary

__all__ = [
    "ABSENT_MODES",
    "DEFAULT_ABSENT",
    "BenchmarkIndex",
    "ConfigSpec",
    "ImportContext",
    "ImportInputError",
    "ImportOption",
    "ImportSummary",
    "Importer",
    "SourceRecord",
    "attributes_json",
    "config_jobs",
    "file_import_options",
    "finish_parsed_import",
    "gold_letter",
    "label_config_id",
    "load_benchmark_index",
    "parse_config_arg",
    "series_config_id",
    "source_record",
]
