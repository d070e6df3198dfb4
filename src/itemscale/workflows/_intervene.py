"""`intervene`: re-run the terminal budget of every terminal regression (and of a seeded control
sample) with one controlled change of sampling, through the sweep, stored as a series of its own
so a crash resumes; `itemscale.analysis.policies` plans and measures, and re-running needs the
model and the decoder, which is why this lives above both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypedDict, Unpack, cast

from ..analysis.policies import (
    INTERVENTION_DIR,
    PLAN_SUFFIX,
    InterventionName,
    InterventionSettings,
)
from ..core.errors import renamed_keywords
from ..core.responses import RUN_FILE
from ._errors import WorkflowError

if TYPE_CHECKING:
    import pandas as pd

    from ..analysis.measures import ResponseMatrix
    from ..analysis.policies import InterventionAxis, InterventionPlan, InterventionResult
    from ..collect.protocol import Protocol
    from ..collect.sweep import BackendFactory


class InterventionOptions(TypedDict, total=False):
    """`InterventionSettings`' fields as `intervene`'s keywords, typed for a user's type
    checker (a test holds the keys equal to the settings' fields)."""

    intervention: InterventionName
    n_control: int | None
    seed: int
    bootstrap: int
    model: str | None
    series: str | None
    execute: bool
    executor: Literal["local", "ray"]
    device: str
    batch_size: int
    progress: bool


class InterventionRunRecord(TypedDict):
    plan_file: str
    model: str
    source_series: str
    series: str
    #: config id -> the changed configuration, as its JSON object
    configs: dict[str, Mapping[str, object]]
    config_series: dict[str, str]
    terminal_config_id: str
    seed: int
    n_regressions: int
    n_controls: int


def pick_axis(
    matrices: Sequence[ResponseMatrix],
    model: str | None,
    series: str | None,
    where: str,
    intervention: str | None = None,
) -> tuple[ResponseMatrix, str | None]:
    """The one budget axis to intervene on, and a note for the reader when the choice was not
    the user's. Among several, a series that already samples as the intervention would
    (`nested/cached` for `--policy nested`) is set aside, since re-running it with the same
    sampling would compare the sampling policy with itself."""
    from ..analysis.policies import INTERVENTION_SERIES_PREFIX

    axes = [
        m
        for m in matrices
        if m.kind == "binary"
        and m.n_configs >= 2
        and not m.series.startswith(INTERVENTION_SERIES_PREFIX)
    ]
    if model is not None:
        axes = [m for m in axes if m.model == model]
    if series is not None:
        axes = [m for m in axes if m.series == series]
    if not axes:
        raise WorkflowError(
            f"{where}: no multiple-choice budget axis with two or more budgets"
            + (f" for model {model!r}" if model else "")
            + (f" in series {series!r}" if series else "")
        )
    if len(axes) > 1 and intervention is not None and series is None:
        others = [m for m in axes if intervention not in m.series.split("/")]
        if len(others) == 1:
            note = (
                f"intervening on series {others[0].series} (series "
                + ", ".join(m.series for m in axes if m not in others)
                + f" already samples with {intervention}; --series picks another)"
            )
            return others[0], note
    if len(axes) > 1:
        options = ", ".join(f"--model {m.model} --series {m.series}" for m in axes)
        raise WorkflowError(f"{where}: several budget axes; pick one of: {options}")
    return axes[0], None


def _terminal_regressions(matrix: ResponseMatrix, terminal: int) -> int:
    """Items wrong at `terminal` and right at any budget the grid's order puts below it (not
    only those of one chain): the count `analyze` gives when `terminal` is the largest budget."""
    import numpy as np

    y = np.asarray(matrix.y, dtype=np.float64)
    below = np.asarray(matrix.budget_order.less)[:, terminal]
    return int(((y[:, terminal] < 1) & (y[:, below] >= 1).any(axis=1)).sum())


def intervention_settings(
    settings: InterventionSettings | None, options: Mapping[str, object]
) -> InterventionSettings:
    if settings is None:
        return InterventionSettings.model_validate(options)
    if options:
        raise TypeError(
            f"intervene() got settings and keywords ({', '.join(sorted(options))}): give one"
        )
    return settings


@renamed_keywords(policy="intervention")
def intervene(
    run_dir: str | Path,
    settings: InterventionSettings | None = None,
    *,
    backend_factory: BackendFactory | None = None,
    on_note: Callable[[str], None] | None = None,
    **options: Unpack[InterventionOptions],
) -> InterventionResult:
    """Plan, run (through the sweep, resumably) and measure one intervention; returns the result
    that `RUN_DIR/intervention/<intervention>.json` holds (`to_json()` is that file's text).

    `settings` holds every option (`InterventionSettings`), or give them as keywords
    (`intervene(run, intervention="nested", bootstrap=200)`; `InterventionOptions` types each).
    `execute=False` runs nothing and measures the cells already stored. `on_note` receives the
    one line that says which axis was chosen when the intervention's own series was set aside
    (the command line prints it); the result is the same with or without it.
    """
    from ..analysis.policies import InterventionError, intervention_outcomes, plan_intervention
    from ..core.responses import read_run, responses_digest, run_lock, write_json_atomic

    chosen = intervention_settings(settings, options)
    intervention = chosen.intervention
    run_dir = Path(run_dir)
    df, provenance, protocol = _recorded_run(run_dir)
    matrix, axis = _axis(df, chosen.model, chosen.series, run_dir, intervention, on_note)
    terminal_id = matrix.config_ids[-1]
    terminal = next((c for c in protocol.configurations() if c.config_id == terminal_id), None)
    if terminal is None:
        raise WorkflowError(
            f"{run_dir}: the terminal budget {matrix.labels[-1]} (config {terminal_id}) is not in "
            "the recorded protocol's grid"
        )
    try:
        plan = plan_intervention(
            matrix,
            intervention=intervention,
            terminal=terminal,
            seed=chosen.seed,
            n_control=chosen.n_control,
        )
    except InterventionError as exc:
        raise WorkflowError(f"{run_dir}: {exc}") from exc
    out_dir = run_dir / INTERVENTION_DIR
    with run_lock(run_dir, what="intervene"):
        write_json_atomic(out_dir / f"{intervention}{PLAN_SUFFIX}", plan.model_dump(mode="json"))

    if chosen.execute and plan.items:
        _rerun(run_dir, protocol, provenance, plan, chosen, backend_factory)
        df, _ = read_run(run_dir)

    outcome = intervention_outcomes(df, plan, bootstrap=chosen.bootstrap, seed=chosen.seed)
    outcome = outcome.model_copy(
        update={
            "run_dir": str(run_dir),
            "axis": axis,
            "responses_sha256": responses_digest(run_dir),
        }
    )
    with run_lock(run_dir, what="intervene"):  # the re-run's sweep held it while it ran
        write_json_atomic(out_dir / f"{intervention}.json", outcome.as_json())
    return outcome


def _recorded_run(run_dir: Path) -> tuple[pd.DataFrame, dict[str, object], Protocol]:
    from pydantic import ValidationError

    from ..collect.models import BACKENDS
    from ..collect.protocol import BACKENDS_CONTEXT, Protocol
    from ..core.responses import SchemaError, read_run

    try:
        df, provenance = read_run(run_dir)
    except (FileNotFoundError, SchemaError) as exc:
        raise WorkflowError(str(exc)) from exc
    if "protocol" not in provenance:
        raise WorkflowError(
            f"{run_dir / RUN_FILE}: no protocol recorded (not written by `itemscale sweep`?); "
            "intervene re-runs the terminal budget and needs the protocol that produced it"
        )
    try:
        protocol = Protocol.model_validate(
            provenance["protocol"], context={BACKENDS_CONTEXT: BACKENDS}
        )
    except ValidationError as exc:
        raise WorkflowError(f"{run_dir / RUN_FILE}: recorded protocol is invalid: {exc}") from exc
    return df, provenance, protocol


def _axis(
    df: pd.DataFrame,
    model: str | None,
    series: str | None,
    run_dir: Path,
    intervention: str,
    on_note: Callable[[str], None] | None,
) -> tuple[ResponseMatrix, InterventionAxis]:
    """On a frames x resolutions grid, the frame chain."""
    from ..analysis.measures import build_matrices, main_chain
    from ..analysis.policies import InterventionAxis

    matrix, note = pick_axis(build_matrices(df), model, series, str(run_dir), intervention)
    if note is not None and on_note is not None:
        on_note(note)
    chain = main_chain(matrix.budget_order, matrix.frames)
    grid_regressions = None
    if chain is not None:  # frames x resolutions: the lower budgets along the frame axis only
        grid_regressions = _terminal_regressions(matrix, chain[1][-1])
        matrix = matrix.chain(chain[1])
    axis = InterventionAxis(
        chain=None if chain is None else chain[0],
        labels=tuple(matrix.labels),
        # what `analyze` counts on the whole grid (right at any smaller budget), when the
        # chain's terminal is the grid's largest budget too
        grid_terminal_regressions=grid_regressions,
    )
    return matrix, axis


def _rerun(
    run_dir: Path,
    protocol: Protocol,
    provenance: Mapping[str, object],
    plan: InterventionPlan,
    settings: InterventionSettings,
    backend_factory: BackendFactory | None,
) -> None:
    from ..collect.models import BackendError
    from ..collect.store import StoreError
    from ..collect.sweep import BenchmarkLoadError, ExtraConfig, run_sweep

    entry = next((m for m in protocol.models if m.name == plan.model), None)
    if entry is None:
        raise WorkflowError(f"{run_dir}: model {plan.model!r} is not in the recorded protocol")
    one_model = protocol.model_copy(update={"models": (entry,)})
    interventions = dict(cast(Mapping[str, object], provenance.get("interventions", {})))
    interventions[plan.policy] = InterventionRunRecord(
        plan_file=f"{INTERVENTION_DIR}/{plan.policy}{PLAN_SUFFIX}",
        model=plan.model,
        source_series=plan.source_series,
        series=plan.series,
        configs={cid: c.model_dump(mode="json") for cid, c in plan.configs.items()},
        config_series=plan.config_series,
        terminal_config_id=plan.terminal_config_id,
        seed=settings.seed,
        n_regressions=plan.n_regressions,
        n_controls=sum(1 for i in plan.items if i.group == "control"),
    )
    try:
        result = run_sweep(
            one_model,
            extra_configs=[
                ExtraConfig(
                    config,
                    series=plan.config_series[config_id],
                    item_ids=plan.items_for(config_id),
                )
                for config_id, config in plan.configs.items()
            ],
            item_filter=plan.item_ids,
            run_dir=run_dir,
            executor=settings.executor,
            device=settings.device,
            batch_size=settings.batch_size,
            backend_factory=backend_factory,
            progress=settings.progress,
            # run.json keeps the whole protocol, not the one-model copy the re-run used.
            provenance={"protocol": provenance["protocol"], "interventions": interventions},
        )
    except (BackendError, StoreError, BenchmarkLoadError) as exc:
        raise WorkflowError(f"{run_dir}: {exc}") from exc
    if result.interrupted:
        raise WorkflowError(
            f"{run_dir}: interrupted; finished re-runs are stored, run the command again to resume"
        )
