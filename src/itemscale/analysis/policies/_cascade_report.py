"""`cascade_report`'s typed result: what `itemscale cascade --json` writes, as frozen records
(layout: docs/policies.md, "The JSON"). Currencies a run did not record have no key
(`mean_cost_tokens` only where every cell has its visual tokens), nor do the optional blocks.
"""

from __future__ import annotations

import os
from typing import Annotated, ClassVar, Final, Literal, cast

from pydantic import ConfigDict, Field

from ..measures import Count, Estimate
from ._inputs import ScoreName
from ._records import ReportRecord, StoredReport
from ._settings import CASCADE_READ_VERSIONS, CASCADE_SCHEMA_VERSION, CascadeSettings

#: The currencies, in the order the records name them.
CURRENCIES: Final[tuple[str, ...]] = ("frames", "tokens", "latency")

_PER_CURRENCY = frozenset(
    f"{what}_{c}" for c in CURRENCIES for what in ("mean_cost", "terminal_cost", "cost_reduction")
)


class ScoreRecord(ReportRecord):
    name: ScoreName
    description: str


class CostRecord(ReportRecord):
    """The cost model: the primary currency, what stages share and each currency's basis."""

    primary: Literal["frames", "tokens", "latency"]
    sharing: str
    sharing_requested: str
    #: "none" where the unshared upper bound is reported beside a `prefix` cost
    unshared_bound: str | None
    frames_basis: str | None
    frames_note: str | None
    tokens_basis: str | None
    tokens_note: str | None
    latency_basis: str | None
    latency_note: str | None

    def basis(self, currency: str) -> str | None:
        return cast(str | None, getattr(self, f"{currency}_basis"))

    def note(self, currency: str) -> str | None:
        return cast(str | None, getattr(self, f"{currency}_note"))


class FoldSizes(ReportRecord):
    seed: int
    n_items: tuple[int, ...]
    n_videos: tuple[int, ...]


class TerminalRecord(ReportRecord):
    """The fixed terminal budget every rule is measured against."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset(f"mean_cost_{c}" for c in CURRENCIES)

    label: str
    accuracy: Estimate
    mean_cost: Estimate
    mean_cost_frames: Estimate | None = None
    mean_cost_tokens: Estimate | None = None
    mean_cost_latency: Estimate | None = None


class UnsharedCost(ReportRecord):
    """The same stops with nothing shared (beside a `prefix` cost: the upper bound)."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset(
        f"{what}_{c}" for c in CURRENCIES for what in ("mean_cost", "cost_reduction")
    )

    sharing: str
    mean_cost_frames: Estimate | None = None
    mean_cost_tokens: Estimate | None = None
    mean_cost_latency: Estimate | None = None
    cost_reduction_frames: Estimate | None = None
    cost_reduction_tokens: Estimate | None = None
    cost_reduction_latency: Estimate | None = None

    def cost_reduction(self, currency: str) -> Estimate | None:
        return cast(Estimate | None, getattr(self, f"cost_reduction_{currency}"))


class StopSummary(ReportRecord):
    """Held-out (or fixed-rule) stops summarised: accuracy, cost and cost reduction in every
    currency with paired intervals, and where the items stopped."""

    OMIT_NONE: ClassVar[frozenset[str]] = _PER_CURRENCY | {"unshared", "stop_counts"}

    accuracy: Estimate
    terminal_accuracy: Estimate
    accuracy_change: Estimate
    mean_cost_frames: Estimate | None = None
    mean_cost_tokens: Estimate | None = None
    mean_cost_latency: Estimate | None = None
    terminal_cost_frames: Estimate | None = None
    terminal_cost_tokens: Estimate | None = None
    terminal_cost_latency: Estimate | None = None
    cost_reduction_frames: Estimate | None = None
    cost_reduction_tokens: Estimate | None = None
    cost_reduction_latency: Estimate | None = None
    unshared: UnsharedCost | None = None
    mean_cost: Estimate
    cost_reduction: Estimate
    matches_terminal: bool
    at_or_above_terminal: bool
    #: stage label -> share of items that stopped there
    stop_share: dict[str, float]
    #: stage label -> items that stopped there (the counts behind `stop_share`)
    stop_counts: dict[str, int] | None = None

    @property
    def fixed_budget(self) -> str | None:
        """The stage every item stopped at (None where items stop at different stages): such a
        rule is that fixed budget, not a per-item choice, and is reported as it."""
        for label, share in self.stop_share.items():
            if share >= 1.0 - 1e-12:
                return label
        return None


class FoldFit(ReportRecord):
    """What one fold's fit chose and reached, reported on the other fold."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"weights"})

    fitted_on_fold: int
    reported_on_fold: int
    target_accuracy: float
    fit_accuracy: float
    fit_mean_cost: float
    target_reached: bool
    #: stage label -> threshold ("never": the stage cannot answer; "always")
    thresholds: dict[str, float | str]
    stages_run: tuple[str, ...]
    #: the learned rule's logistic weights, intercept first
    weights: tuple[float, ...] | None = None


class AvailableRule(StopSummary):
    """A stopping rule that ran: its held-out summary and each fold's fit."""

    available: Literal[True]
    description: str
    folds: tuple[FoldFit, ...]


class UnavailableRule(ReportRecord):
    """A stopping rule these inputs cannot run (no score recorded, too few stages)."""

    available: Literal[False]
    reason: str
    description: str


RuleRecord = Annotated[AvailableRule | UnavailableRule, Field(discriminator="available")]


class BestMatch(ReportRecord):
    """The matching rule (change interval reaching 0) that saves the most."""

    policy: str
    accuracy: Estimate
    accuracy_change: Estimate
    cost_reduction: Estimate
    mean_cost: Estimate


def _one_stage(rule: RuleRecord | None) -> tuple[str, bool] | None:
    """(the stage every item stopped at, whether it is the terminal); None for any other rule."""
    if not isinstance(rule, AvailableRule) or rule.fixed_budget is None:
        return None
    return rule.fixed_budget, rule.fixed_budget == list(rule.stop_share)[-1]


def rule_label(name: str, rule: RuleRecord | None) -> str:
    """How the console and the report name a stopping rule: a rule that stops every item at
    one stage before the terminal is that fixed budget ("fixed 128f_151k"), whatever fitted
    it."""
    one = _one_stage(rule)
    return name if one is None or one[1] else f"fixed {one[0]}"


def fixed_budget_note(name: str, rule: RuleRecord | None) -> str | None:
    """Beside a rule that stops every item at one stage: what it is (None for any other)."""
    one = _one_stage(rule)
    if one is None:
        return None
    budget, terminal = one
    if terminal:
        return f"the {name} rule never stops before the terminal budget {budget}"
    return (
        f"the {name} rule stops every item at {budget}: that is the fixed budget {budget}, not a "
        "per-item choice (run alone, it pays its own frames under every cost model)"
    )


class FrontierPoint(ReportRecord):
    """One target of the confidence cascade's held-out cost-accuracy frontier."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"count"})

    target_offset: float
    accuracy: float
    mean_cost: float
    cost_reduction: float | None
    pareto: bool
    #: the items behind `accuracy`: k right of the n held out
    count: Count | None = None


class SweepPoint(ReportRecord):
    """A Pareto point of one threshold shared by every stage (in-sample: nothing fitted)."""

    threshold: float | str
    accuracy: float
    mean_cost: float
    cost_reduction: float | None


class FixedItem(ReportRecord):
    OMIT_NONE: ClassVar[frozenset[str]] = frozenset(f"cost_{c}" for c in CURRENCIES)

    item_id: str
    stop_stage: str
    correct: float
    cost_frames: float | None = None
    cost_tokens: float | None = None
    cost_latency: float | None = None


class FixedRule(StopSummary):
    """The seed paper's fixed rule: one threshold on every stage, nothing fitted."""

    threshold: float
    score: ScoreName
    rule: str
    per_item: tuple[FixedItem, ...]


class SameInputEvidence(ReportRecord):
    basis: str
    recorded: int
    median_from: float | None
    median_to: float | None
    sentence: str


class SameInputStep(ReportRecord):
    """A terminal stage that looks like the same input as the stage before it."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, serialize_by_alias=True, validate_by_name=True
    )

    from_: str = Field(alias="from")
    to: str
    identical: int
    items: int
    evidence: SameInputEvidence


class CascadeBlock(ReportRecord):
    """Every stopping rule on one (model, series) budget axis."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset(
        {"fixed_rule", "chain", "same_input_terminal", "same_input_note"}
    )

    model: str
    series: str
    labels: tuple[str, ...]
    n_items: int
    n_videos: int
    score: ScoreRecord
    cost: CostRecord
    folds: FoldSizes
    terminal: TerminalRecord
    #: the confidence cascade (`policies.confidence` again, under the key it always had)
    cascade: RuleRecord
    policies: dict[str, RuleRecord]
    best_match: BestMatch | None
    frontier: tuple[FrontierPoint, ...]
    threshold_sweep: tuple[SweepPoint, ...]
    fixed_rule: FixedRule | None = None
    #: on a grid of frames x resolutions, the chain the stages climb
    chain: str | None = None
    same_input_terminal: tuple[SameInputStep, ...] | None = None
    same_input_note: str | None = None
    n_dropped: int
    drop_reasons: dict[str, int]

    @property
    def score_recorded(self) -> bool:
        """Whether the stopping score was recorded below the terminal: the confidence cascade
        is unavailable exactly when it was not (the other rules then read answers alone)."""
        return not isinstance(self.cascade, UnavailableRule)


class SkippedAxis(ReportRecord):
    """A (model, series) the cascade did not run on, and why."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"kind", "n_items"})

    model: str
    series: str
    reason: str
    kind: str | None = None
    n_items: int | None = None


class CascadeReport(StoredReport):
    """What `itemscale cascade` computes (docs/policies.md): `results` per budget axis,
    `skipped` for the axes it could not run on; `models`, the models it was limited to
    (`CascadeSettings.models`). `run_dir` and `responses_sha256` are what the command adds for
    the run folder it read (`for_run`)."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"run_dir", "responses_sha256", "models"})
    READ_VERSIONS: ClassVar[tuple[int, ...]] = CASCADE_READ_VERSIONS
    RERUN: ClassVar[str] = "itemscale cascade"

    schema_version: int = CASCADE_SCHEMA_VERSION
    settings: CascadeSettings
    results: tuple[CascadeBlock, ...]
    skipped: tuple[SkippedAxis, ...]
    run_dir: str | None = None
    responses_sha256: str | None = None
    models: tuple[str, ...] | None = None

    def for_run(self, run_dir: str | os.PathLike[str], digest: str | None) -> CascadeReport:
        """The report as the command writes it for RUN_DIR (the responses' sha256 it read)."""
        return self.model_copy(update={"run_dir": str(run_dir), "responses_sha256": digest})

    def skipped_lines(self) -> list[str]:
        return skipped_lines(self)


def skipped_lines(report: CascadeReport) -> list[str]:
    """What the cascade did not run on, one line per model and reason: a series' open-ended
    half named as such (its multiple-choice items have their block above), intervention
    re-runs in one line."""
    ran = {(b.model, b.series) for b in report.results}
    grouped: dict[tuple[str, str], list[SkippedAxis]] = {}
    for skipped in report.skipped:
        grouped.setdefault((skipped.model, skipped.reason), []).append(skipped)
    lines = []
    for (model, reason), entries in grouped.items():
        names = ", ".join(e.series for e in entries)
        if entries[0].kind not in (None, "binary"):
            for e in entries:
                above = "; its multiple-choice items are above" if (model, e.series) in ran else ""
                n_items = "?" if e.n_items is None else e.n_items
                lines.append(
                    f"not run on the {n_items} open-ended items of {model} / "
                    f"{e.series}{above}: policies need 0/1 correctness (multiple "
                    "choice)"
                )
        elif len(entries) > 1:
            lines.append(f"not run on {model}, {len(entries)} series ({names}): {reason}")
        else:
            lines.append(f"not run on {model} / {names}: {reason}")
    return lines
