"""`analyze`'s options that `report` shares (`--ci`, `--configs`), the tests' options, and the
notes `analyze` prints about the rows it read (superseded selections, absent items): kept apart
from the printing of the measures in `cmd_analyze`."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any, TextIO

from ..analysis.measures import CI_METHODS, DEFAULT_DRAWS, AnalysisSettings

#: The flags' defaults are the settings' own (one definition, `AnalysisSettings`).
DEFAULTS = AnalysisSettings()


def add_ci_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--ci",
        choices=list(CI_METHODS),
        default=DEFAULTS.ci,
        help="interval method (default bca: BCa for rates and accuracies, and for best fixed, "
        "oracle headroom and gaps a selection-aware interval that counts near-tied budgets "
        "against the winner's curse; percentile: plain percentile intervals; docs/measures.md)",
    )


def add_inference_arguments(p: argparse.ArgumentParser) -> None:
    """`--power-target` and `--test-pair` (docs/measures.md, "Tests between budgets")."""
    p.add_argument(
        "--power-target",
        type=float,
        default=DEFAULTS.power_target,
        metavar="POINTS",
        help="accuracy difference between adjacent budgets, in points, for which the power "
        "analysis reports the videos needed (default 2.0)",
    )
    p.add_argument(
        "--test-pair",
        action="append",
        default=[],
        type=parse_test_pair,
        metavar="FROM,TO",
        help="also test this pair of configurations (repeatable; Holm-adjusted among "
        "themselves), e.g. 16f_151k,64f_151k",
    )
    p.add_argument(
        "--heterogeneity-draws",
        type=int,
        default=DEFAULTS.heterogeneity_draws,
        metavar="N",
        help="resamples of the additive-model test, for its null draws and its intervals (the "
        f"first N of the video bootstrap; default {DEFAULT_DRAWS}, at most --bootstrap)",
    )


def parse_test_pair(text: str) -> tuple[str, str]:
    labels = parse_config_list(text)
    if len(labels) != 2:
        raise argparse.ArgumentTypeError(f"expected FROM,TO (got {text!r})")
    return labels[0], labels[1]


def parse_config_list(text: str) -> list[str]:
    """`--configs a,b,c` -> ['a', 'b', 'c'] (spaces around labels ignored)."""
    labels = [part.strip() for part in text.split(",")]
    if not any(labels) or not all(labels):
        raise argparse.ArgumentTypeError(f"expected LABEL,LABEL,... (got {text!r})")
    return labels


def print_superseded(provenance: Mapping[str, object], out: TextIO | None = None) -> None:
    """One line per selection configuration left out because its file changed since its
    cells ran (run.json `sweep.superseded_selections`)."""
    from ..core.responses import superseded_configs

    for config_id, record in sorted(superseded_configs(provenance).items()):
        print(
            f"superseded: {record.get('label')} (configuration {config_id}, "
            f"{record.get('cells')} cells stored): its selection file changed; the budget "
            f"shows configuration {record.get('superseded_by')} ({record.get('current_label')})",
            file=out,
        )


def print_absent(df: Any, out: TextIO | None = None) -> None:
    """Say which models' denominators hold items their results lacked (`import --absent
    noanswer` added them as wrong answers, marked `error` "absent")."""
    from ..collect.importers import ABSENT_MARKER

    marked = df[df["error"] == ABSENT_MARKER]
    for i, (model, n) in enumerate(marked.groupby("model", sort=True)["item_id"].nunique().items()):
        print(
            ("\n" if i == 0 else "") + f"note: {model}: {n} items absent from the imported "
            "results are counted as NOANSWER (wrong) at every configuration (import --absent "
            f"noanswer; rows with error '{ABSENT_MARKER}')",
            file=out,
        )
