"""`analyze --configs`: restrict every measure to a chosen set of configurations (a paper's table
is one matched grid, a run usually holds more). It filters the response table *before* the
matrices are built, so everything is recomputed as if only those configurations had been run.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ...core.errors import ItemscaleError
from ._result_models import GridSelection


class UnknownConfigError(ItemscaleError, ValueError):
    """A `--configs` label (or `--by` attribute) naming nothing in the run; lists what exists."""


def config_list(configs: Sequence[str]) -> list[str]:
    """The labels of a configuration list, stripped: at least one, none empty, none twice (the
    rule `AnalysisSettings.configs` and every `--configs` share)."""
    wanted = [str(c).strip() for c in configs]
    if not wanted or any(not c for c in wanted):
        raise UnknownConfigError("--configs needs a comma-separated list of configuration labels")
    seen: set[str] = set()
    for label in wanted:
        if label in seen:
            raise UnknownConfigError(f"configuration {label!r} is named twice")
        seen.add(label)
    return wanted


def select_configs(df: pd.DataFrame, configs: Sequence[str]) -> tuple[pd.DataFrame, GridSelection]:
    """The rows of the named configurations, and what the selection did.

    Labels match `config_label` exactly; their order does not matter (the axis order is the
    table's). A model that lacks any named configuration is left out rather than measured on
    a smaller grid, so that every model in the output shares one grid; it is listed under
    `excluded_models` with the labels it lacks.
    """
    wanted = config_list(configs)
    seen = set(wanted)
    existing = sorted(set(df["config_label"].astype(str)))
    unknown = [c for c in wanted if c not in existing]
    if unknown:
        raise UnknownConfigError(
            f"unknown configuration label(s) {', '.join(repr(u) for u in unknown)}; "
            f"the run has: {', '.join(existing)}"
        )
    per_model: dict[str, set[str]] = {
        str(model): set(labels.astype(str))
        for model, labels in df.groupby("model", sort=True)["config_label"]
    }
    excluded = {
        model: [c for c in wanted if c not in labels]
        for model, labels in per_model.items()
        if not seen <= labels
    }
    keep = df["config_label"].astype(str).isin(seen) & ~df["model"].isin(list(excluded))
    if not keep.any():
        listing = "; ".join(f"{m} lacks {', '.join(v)}" for m, v in excluded.items())
        raise UnknownConfigError(f"no model has every configuration of --configs ({listing})")
    selection = GridSelection(configs=wanted, excluded_models=excluded)
    return df.loc[keep].reset_index(drop=True), selection
