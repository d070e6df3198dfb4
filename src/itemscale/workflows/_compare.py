"""`compare`: the workflow chooses the two sides (`_compare_sides`) and asks the installed
backends how each sends frames to its model; the analysis itself
(`itemscale.analysis.comparison`) needs neither.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..analysis.comparison import (
    CompareError,
    CompareResult,
    CompareTaskKind,
    compare_settings,
    compare_sides,
)
from ..analysis.measures import RerunFloor
from ._compare_sides import select_rerun, select_sides
from ._errors import WorkflowError


def compare(
    a: str | os.PathLike[str],
    b: str | os.PathLike[str] | None = None,
    *,
    models: Sequence[str] = (),
    series: Sequence[str] = (),
    configs: Sequence[str] = (),
    by: Sequence[str] = (),
    bootstrap: int | None = None,
    seed: int = 0,
    ci: str | None = None,
    task_kind: CompareTaskKind | None = None,
    rerun: str | os.PathLike[str] | None = None,
    rerun_floor: float | None = None,
) -> CompareResult:
    """Two sides, item by item, as `itemscale compare` computes them (docs/compare.md).

    `a` and `b` are run folders; with `b` None, one of `models`, `series`, `configs` names two
    slices of run `a` (side A, then side B) and the others at most one (they narrow both
    sides). `by` names item attributes to break the gap down by (default: every attribute with
    2 to 12 values). `bootstrap` resamples of whole videos (default 1000), `seed`, `ci` (`bca`
    or `percentile`) as `analyze` takes them. `task_kind` keeps multiple-choice (`mcqa`) or
    open-ended (`open_ended`) items only; without it a run holding both compares each apart
    (`outcomes`), the multiple-choice accuracy first.

    The same-input verdict grades the answers against a rerun floor from evidence: `rerun_floor`
    (a percent of answers the user states, `--rerun-floor`), else `rerun` (a run folder, or a
    configuration label of run `a`, holding a second execution of one side's configuration,
    `--rerun`), else the repeats and reruns of each side's model in its run; with none, the
    answers are identical or the verdict cannot tell (docs/compare.md, "Reruns").
    """
    try:
        compare_settings(bootstrap, ci, task_kind)
        stated = None if rerun_floor is None else RerunFloor.of_percent(rerun_floor)
    except ValueError as exc:
        raise WorkflowError(str(exc)) from None
    try:
        side_a, side_b = select_sides(a, b, models=models, series=series, configs=configs)
        named = None if rerun is None else select_rerun(rerun, side_a, side_b)
        return compare_sides(
            side_a,
            side_b,
            by=by,
            bootstrap=bootstrap,
            seed=seed,
            ci=ci,
            task_kind=task_kind,
            transport=transport,
            rerun=named,
            rerun_floor=stated,
        )
    except CompareError as exc:
        raise WorkflowError(str(exc)) from None


@dataclass(frozen=True)
class _StoredEntry:
    name: str
    backend: str
    model: str
    revision: str | None
    dtype: str | None
    options: Any


def transport(entry: Mapping[str, Any]) -> str | None:
    """How frames reach the model, as its backend declares it (`Backend.transport`: in process,
    or over the network as one image part per frame or one video input); None for a backend
    not registered here (a plugin not installed, or one that cannot be loaded)."""
    from ..collect.models import BACKENDS
    from ..core.errors import ItemscaleError

    backend = entry.get("backend")
    try:
        registered = BACKENDS.get(backend) if isinstance(backend, str) else None
        if registered is None:
            return None
        stored = _StoredEntry(
            name=str(entry.get("name")),
            backend=str(backend),
            model=str(entry.get("model")),
            revision=entry.get("revision"),
            dtype=entry.get("dtype"),
            options=entry.get("options") if isinstance(entry.get("options"), Mapping) else {},
        )
        return registered.transport_of(stored).description
    except (ItemscaleError, ValueError, TypeError):
        return None
