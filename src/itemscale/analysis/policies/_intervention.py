"""The controlled sampling intervention (docs/policies.md): which items to re-run, with which change
of sampling, and what the re-run shows.

A terminal regression (wrong at the largest budget, right at a smaller one) may be a sampling
accident: the larger grid happened to miss the frame that mattered. Re-running the terminal budget
with a controlled change of sampling tests that. The same change is applied to a seeded control
sample of items the terminal budget got right, because a change that "recovers" regressions by
shuffling answers also breaks correct ones: `recovered_rate` alone would be a coin flip dressed
as a fix, so both rates are always reported together. `itemscale intervene` runs the sweep.
"""

from __future__ import annotations

from typing import Any, Final, Literal, TypedDict

import numpy as np
import numpy.typing as npt
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from ...core.configuration import PHASED_SAMPLING_POLICIES, Configuration, SamplingPolicy
from ...core.errors import ItemscaleError, renamed_keywords, warn_renamed
from ...core.responses import ANSWERED_STATUSES
from ..measures import (
    DEFAULT_BOOTSTRAP,
    BootstrapRecord,
    Count,
    Estimate,
    ResponseMatrix,
    VideoBootstrap,
    percentile_intervals,
    stat,
)
from ._intervention_report import (
    INTERVENTION_PLAN_SCHEMA_VERSION,
    INTERVENTION_SCHEMA_VERSION,
    GroupCounts,
    InterventionItem,
    InterventionResult,
    ItemOutcome,
)
from ._settings import INTERVENTION_NAMES, InterventionName

FloatArray = npt.NDArray[np.float64]
#: Where in a run folder an intervention lands: `<policy>.json` (the result `itemscale
#: intervene` measured) beside `<policy>.plan.json` (the plan it ran).
INTERVENTION_DIR: Final[str] = "intervention"
PLAN_SUFFIX: Final[str] = ".plan.json"
INTERVENTION_DESCRIPTIONS: Final[dict[str, str]] = {
    "nested": (
        "the terminal frame count and formula, keeping every frame of the lower budget that was "
        "right (the rest spread evenly over the terminal grid)"
    ),
    "phase-shift": (
        "the terminal frame count and formula, shifted by half a sampling interval "
        "(phase + 0.5 mod 1)"
    ),
}


class InterventionError(ItemscaleError, ValueError):
    """An intervention that cannot be built for this run (named with the reason)."""


def intervention_series(intervention: str) -> str:
    return f"intervention:{intervention}"


@renamed_keywords(policy="intervention")
def intervention_configuration(
    terminal: Configuration, intervention: str, *, keep_frames: int | None = None
) -> Configuration:
    """The terminal configuration with only its sampling changed, so the re-run differs from the
    terminal budget in exactly one controlled way. `nested` needs `keep_frames`, the frame count
    of the lower budget whose frames the re-run must keep.
    """
    if terminal.is_text_only:
        raise InterventionError("the terminal budget is the text-only baseline")
    sampling = terminal.sampling
    if sampling.name == "selection":
        raise InterventionError(
            f"the terminal budget replays a frame selection ({sampling.tag}): its frames are the "
            "selector's, with no formula to nest or shift; intervene on a formula series "
            "(--series) and compare the selector with it in `analyze`'s churn block"
        )
    if intervention == "nested":
        if sampling.name == "nested":
            raise InterventionError(
                "the terminal budget already samples nested frames (every smaller budget's "
                "frames are in it): the nested change is no change"
            )
        if keep_frames is None or not 0 < keep_frames < terminal.frames:
            raise InterventionError(
                f"nested needs a lower frame count to keep, below {terminal.frames} "
                f"(got {keep_frames})"
            )
        changed = SamplingPolicy.model_validate(
            {**sampling.model_dump(), "keep_frames": keep_frames}
        )
    elif intervention == "phase-shift":
        if sampling.name not in PHASED_SAMPLING_POLICIES:
            raise InterventionError(
                f"sampling {sampling.tag!r} has no phase to shift; phase-shift works with "
                f"{', '.join(sorted(PHASED_SAMPLING_POLICIES))}"
            )
        changed = SamplingPolicy.model_validate(
            {**sampling.model_dump(), "phase": (sampling.phase + 0.5) % 1.0}
        )
    else:
        raise InterventionError(
            f"unknown intervention {intervention!r}; choose one of {', '.join(INTERVENTION_NAMES)}"
        )
    return terminal.model_copy(update={"sampling": changed})


class InterventionPlan(BaseModel):
    """What `itemscale intervene` re-runs, stored beside the results so a rerun resumes the same
    plan and a reader can see how the control sample was drawn."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = INTERVENTION_PLAN_SCHEMA_VERSION
    model: str
    source_series: str
    #: the intervention (`nested`, `phase-shift`), under the JSON key plan files always had
    policy: InterventionName
    series: str
    seed: int
    n_control_requested: int = Field(ge=0)
    terminal_label: str
    terminal_config_id: str
    #: config id -> the changed configuration (one per kept lower budget for `nested`).
    configs: dict[str, Configuration]
    #: config id -> the series its re-runs are stored under (`intervention:nested:keep4`, ...):
    #: one configuration per series, so `analyze` reads each as its own single-budget axis.
    config_series: dict[str, str]
    n_items: int
    n_terminal_right: int
    n_regressions: int
    items: tuple[InterventionItem, ...]

    @property
    def item_ids(self) -> frozenset[str]:
        return frozenset(i.item_id for i in self.items)

    def items_for(self, config_id: str) -> frozenset[str]:
        return frozenset(i.item_id for i in self.items if i.config_id == config_id)


@renamed_keywords(policy="intervention")
def plan_intervention(
    matrix: ResponseMatrix,
    *,
    intervention: InterventionName,
    terminal: Configuration,
    seed: int,
    n_control: int | None = None,
    rng: np.random.Generator | None = None,
) -> InterventionPlan:
    """Every terminal regression of the matrix plus a seeded control sample of items right at the
    terminal budget (default size: as many as there are regressions).

    The control sample is drawn from `numpy.random.default_rng(seed)`, its one source of
    randomness, and the plan records the seed, so `<intervention>.plan.json` says how to draw it
    again. `rng` (with `seed` beside it) is deprecated: a generator cannot be recorded.
    """
    if rng is None:
        rng = np.random.default_rng(seed)
    else:
        warn_renamed("plan_intervention(rng=..., seed=...)", "plan_intervention(seed=...)")
    y = np.asarray(matrix.y, dtype=np.float64)
    n, k = y.shape
    if k < 2:
        raise InterventionError(f"{matrix.model}/{matrix.series}: needs at least two budgets")
    right_below = y[:, :-1] >= 1
    regression = (y[:, -1] < 1) & right_below.any(axis=1)
    right_terminal = y[:, -1] >= 1
    # The largest lower budget that was right (its frames are the ones the terminal lost).
    last_right = (k - 2) - np.argmax(right_below[:, ::-1], axis=1)
    reference = np.where(right_below.any(axis=1), last_right, k - 2)

    candidates = np.flatnonzero(right_terminal)
    wanted = int(regression.sum()) if n_control is None else int(n_control)
    if wanted < 0:
        raise InterventionError(f"--control must be >= 0 (got {wanted})")
    size = min(wanted, candidates.size)
    chosen = np.sort(rng.choice(candidates, size=size, replace=False)) if size else candidates[:0]

    configs: dict[str, Configuration] = {}
    config_series: dict[str, str] = {}
    config_of_stage: dict[int, str] = {}

    def config_for(stage: int) -> str:
        if stage not in config_of_stage:
            keep = int(matrix.frames[stage]) if intervention == "nested" else None
            config = intervention_configuration(terminal, intervention, keep_frames=keep)
            configs[config.config_id] = config
            suffix = f":keep{keep}" if keep is not None else ""
            config_series[config.config_id] = intervention_series(intervention) + suffix
            config_of_stage[stage] = config.config_id
        return config_of_stage[stage]

    groups: list[tuple[Literal["regression", "control"], npt.NDArray[np.int64]]] = [
        ("regression", np.flatnonzero(regression)),
        ("control", chosen),
    ]
    items = [
        InterventionItem(
            item_id=str(matrix.item_ids[i]),
            video_id=str(matrix.video_ids[i]),
            group=group,
            reference_label=matrix.labels[int(reference[i])],
            config_id=config_for(int(reference[i])),
        )
        for group, rows in groups
        for i in rows
    ]
    return InterventionPlan(
        model=matrix.model,
        source_series=matrix.series,
        policy=intervention,
        series=intervention_series(intervention),
        seed=seed,
        n_control_requested=wanted,
        terminal_label=matrix.labels[-1],
        terminal_config_id=matrix.config_ids[-1],
        configs=configs,
        config_series=config_series,
        n_items=n,
        n_terminal_right=int(right_terminal.sum()),
        n_regressions=int(regression.sum()),
        items=tuple(items),
    )


def _index_set(cell: object) -> set[int] | None:
    if cell is None or (isinstance(cell, float) and np.isnan(cell)):
        return None
    return {int(x) for x in np.asarray(cell).ravel()}


def _share(part: set[int] | None, whole: set[int] | None) -> float:
    if part is None or whole is None or not whole:
        return float("nan")
    return len(part & whole) / len(whole)


def clopper_pearson(k: int, n: int, level: float = 0.95) -> list[float]:
    """The exact binomial interval for k successes in n trials."""
    from scipy.stats import beta

    tail = (1.0 - level) / 2.0
    low = 0.0 if k == 0 else float(beta.ppf(tail, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1.0 - tail, k + 1, n - k))
    return [low, high]


@renamed_keywords(n_boot="bootstrap")
def intervention_outcomes(
    df: pd.DataFrame, plan: InterventionPlan, *, bootstrap: int = DEFAULT_BOOTSTRAP, seed: int = 0
) -> InterventionResult:
    """`recovered_rate` and `broken_rate` with video-bootstrap intervals and their counts. Items
    whose re-run failed (or has not run yet) are left out of the denominators, never silently:
    the report carries `n_failed` and `n_missing` per group, by reason.
    """
    records, failed, missing = _item_records(df, plan)
    answered = [r for r in records if r.after is not None]
    rates = _rates(answered, plan, bootstrap, seed)
    return InterventionResult(
        schema_version=INTERVENTION_SCHEMA_VERSION,
        description=INTERVENTION_DESCRIPTIONS[plan.policy],
        **{name: value for name, value in plan if name not in _PLAN_ONLY},
        **rates,
        net_accuracy_change_note=(
            "recovered_rate x share of terminal regressions - broken_rate x share right at the "
            "terminal budget: the accuracy change if the changed sampling replaced the terminal "
            "budget for every item and the rates held (items wrong at every budget not counted)"
        ),
        regressions=_group_counts("regression", plan, answered, failed, missing),
        controls=_group_counts("control", plan, answered, failed, missing),
        bootstrap=BootstrapRecord(bootstrap=bootstrap, seed=seed),
        items=tuple(records),
    )


#: The plan's fields a result does not repeat (every other one it does, under the same key).
_PLAN_ONLY = frozenset({"schema_version", "n_control_requested", "terminal_config_id", "items"})
#: Failed re-runs by group, then by status (or `no_correct`); re-runs not stored yet, by group.
Failed = dict[str, dict[str, int]]
Missing = dict[str, int]


def _finite(value: float) -> float | None:
    return value if np.isfinite(value) else None


def _item_records(
    df: pd.DataFrame, plan: InterventionPlan
) -> tuple[list[ItemOutcome], Failed, Missing]:
    """One record per planned item; failed and missing re-runs counted apart."""
    rows = df[(df["model"] == plan.model) & (df["repeat"] == 0)]
    columns = ["item_id", "config_id", "config_label", "status", "correct", "answer"]
    after_rows: dict[tuple[str, str], dict[Any, Any]] = {
        (str(r["item_id"]), str(r["config_id"])): r
        for r in rows.loc[
            rows["config_id"].isin(list(plan.configs)), [*columns, "frame_indices"]
        ].to_dict("records")
    }
    source = rows.loc[rows["series"] == plan.source_series, [*columns, "frame_indices"]]
    by_label: dict[tuple[str, str], dict[Any, Any]] = {
        (str(r["config_label"]), str(r["item_id"])): r for r in source.to_dict("records")
    }

    records: list[ItemOutcome] = []
    failed: Failed = {"regression": {}, "control": {}}
    missing: Missing = {"regression": 0, "control": 0}
    for item in plan.items:
        before_row = by_label.get((plan.terminal_label, item.item_id))
        row = after_rows.get((item.item_id, item.config_id))
        status = "missing" if row is None else str(row["status"])
        after = answer_after = kept = kept_before = changed = None
        if row is None:
            missing[item.group] += 1
        elif status not in ANSWERED_STATUSES or row["correct"] is None or pd.isna(row["correct"]):
            reason = status if status not in ANSWERED_STATUSES else "no_correct"
            failed[item.group][reason] = failed[item.group].get(reason, 0) + 1
        else:
            after, answer_after = float(row["correct"]), row["answer"]
            new = _index_set(row["frame_indices"])
            ref_row = by_label.get((item.reference_label, item.item_id))
            ref = None if ref_row is None else _index_set(ref_row["frame_indices"])
            old = None if before_row is None else _index_set(before_row["frame_indices"])
            kept, kept_before = _finite(_share(new, ref)), _finite(_share(old, ref))
            if new is not None and old is not None and new:
                changed = _finite(1.0 - _share(old, new))
        records.append(
            ItemOutcome(
                **dict(item),
                before=0.0 if item.group == "regression" else 1.0,
                answer_before=None if before_row is None else before_row["answer"],
                status=status,
                after=after,
                answer_after=answer_after,
                reference_frames_kept=kept,
                reference_frames_kept_before=kept_before,
                terminal_frames_changed=changed,
            )
        )
    return records, failed, missing


class Rates(TypedDict):
    recovered_rate: Estimate
    broken_rate: Estimate
    intervals: dict[str, str]
    net_accuracy_change_estimate: Estimate


def _rates(answered: list[ItemOutcome], plan: InterventionPlan, bootstrap: int, seed: int) -> Rates:
    """The two rates (k changed of n answered) and the net accuracy change they imply."""
    is_reg = np.array([r.group == "regression" for r in answered], dtype=np.float64)
    is_ctrl = 1.0 - is_reg
    after = np.array([r.after for r in answered], dtype=np.float64)
    numerator = np.column_stack([is_reg * after, is_ctrl * (1.0 - after)])
    denominator = np.column_stack([is_reg, is_ctrl])
    sums_num = numerator.sum(axis=0) if answered else np.zeros(2)
    sums_den = denominator.sum(axis=0) if answered else np.zeros(2)
    with np.errstate(invalid="ignore", divide="ignore"):
        point = sums_num / sums_den
    ci: Any = [None, None]
    samples = None
    if answered and bootstrap > 0:
        boot = VideoBootstrap(
            np.array([r.video_id for r in answered], dtype=object), bootstrap, seed
        )
        samples = boot.ratios(numerator, denominator)
        ci = percentile_intervals(samples)
    intervals = {"recovered_rate": "video bootstrap", "broken_rate": "video bootstrap"}
    for column, name in enumerate(("recovered_rate", "broken_rate")):
        k, n = int(sums_num[column]), int(sums_den[column])
        if n and k in (0, n) and bootstrap > 0:
            # every re-run agreed, so every resample gives the same rate: a bootstrap
            # interval would be [p, p] and read as certainty on a handful of items
            ci[column] = clopper_pearson(k, n)
            intervals[name] = (
                f"exact binomial (Clopper-Pearson): all {n} re-runs agreed, so resampling "
                "cannot vary the rate"
            )
    regression_share = plan.n_regressions / plan.n_items if plan.n_items else float("nan")
    right_share = plan.n_terminal_right / plan.n_items if plan.n_items else float("nan")
    net_point = point[0] * regression_share - point[1] * right_share
    net_ci = None
    if samples is not None:
        with np.errstate(invalid="ignore"):
            net_samples = samples[:, 0] * regression_share - samples[:, 1] * right_share
        net_ci = percentile_intervals(net_samples[:, None])[0]

    def rate(column: int) -> Estimate:
        value = stat(float(point[column]), None if ci[column] is None else ci[column])
        count = Count(k=int(sums_num[column]), n=int(sums_den[column]))
        return value.model_copy(update={"count": count})

    return {
        "recovered_rate": rate(0),
        "broken_rate": rate(1),
        "intervals": intervals,
        "net_accuracy_change_estimate": stat(float(net_point), net_ci),
    }


def _mean_of(
    answered: list[ItemOutcome],
    group: str,
    key: Literal[
        "reference_frames_kept", "reference_frames_kept_before", "terminal_frames_changed"
    ],
) -> float | None:
    values = [getattr(r, key) for r in answered if r.group == group]
    present = np.array([v for v in values if v is not None], dtype=float)
    return float(present.mean()) if present.size else None


def _group_counts(
    group: str,
    plan: InterventionPlan,
    answered: list[ItemOutcome],
    failed: Failed,
    missing: Missing,
) -> GroupCounts:
    return GroupCounts(
        n_planned=sum(1 for i in plan.items if i.group == group),
        n_answered=sum(1 for r in answered if r.group == group),
        n_changed=sum(1 for r in answered if r.group == group and r.after != r.before),
        n_failed=int(sum(failed[group].values())),
        failed_by_status=dict(sorted(failed[group].items())),
        n_missing=missing[group],
        reference_frames_kept=_mean_of(answered, group, "reference_frames_kept"),
        reference_frames_kept_before=_mean_of(answered, group, "reference_frames_kept_before"),
        terminal_frames_changed=_mean_of(answered, group, "terminal_frames_changed"),
    )
