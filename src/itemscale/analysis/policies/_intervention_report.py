"""`intervention_outcomes`' typed result: what `RUN_DIR/intervention/<intervention>.json`
holds (docs/policies.md, `itemscale intervene`, "The result").
"""

from __future__ import annotations

from typing import ClassVar, Final, Literal

from ...core.configuration import Configuration
from ..measures import BootstrapRecord, Estimate
from ._records import ReportRecord, StoredReport
from ._settings import InterventionName

#: Version of an intervention's result. 2: the resample count is `bootstrap.bootstrap`, where
#: version 1 holds `bootstrap.n_boot`.
INTERVENTION_SCHEMA_VERSION: Final[int] = 2
#: The layouts a reader takes: version 1 differs from 2 only in the resample count's key.
INTERVENTION_READ_VERSIONS: Final[tuple[int, ...]] = (1, INTERVENTION_SCHEMA_VERSION)
#: Version of an intervention's plan (`*.plan.json`), which records no resample count.
INTERVENTION_PLAN_SCHEMA_VERSION: Final[int] = 1


class InterventionItem(ReportRecord):
    """An item of an intervention's plan."""

    item_id: str
    video_id: str
    group: Literal["regression", "control"]
    #: The lower budget the item was right at (the largest one); for a control item without
    #: one, the budget just below the terminal.
    reference_label: str
    #: The changed configuration this item is re-run with.
    config_id: str


class ItemOutcome(InterventionItem):
    """One planned item: its answer before and after the re-run, and how much of the reference
    budget's frames the re-run kept (None where the frames were not recorded)."""

    #: correctness at the terminal budget before the change (0 for a regression, 1 for a control)
    before: float
    answer_before: str | None
    #: the re-run's status; `missing` where it has not been stored yet
    status: str
    after: float | None
    answer_after: str | None
    reference_frames_kept: float | None
    reference_frames_kept_before: float | None
    terminal_frames_changed: float | None


class GroupCounts(ReportRecord):
    """How a group's re-runs went: planned, answered, changed, failed (by status), missing."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"n_changed"})

    n_planned: int
    n_answered: int
    #: recovered regressions, broken controls: the numerator of the group's rate (results
    #: written before it was recorded lack it)
    n_changed: int | None = None
    n_failed: int
    failed_by_status: dict[str, int]
    n_missing: int
    reference_frames_kept: float | None
    reference_frames_kept_before: float | None
    terminal_frames_changed: float | None


class InterventionAxis(ReportRecord):
    """The budget axis the terminal regressions were counted on (`intervene` adds it)."""

    chain: str | None
    labels: tuple[str, ...]
    #: what `analyze` counts on the whole grid, when the chain's terminal is its largest budget
    grid_terminal_regressions: int | None


class InterventionResult(StoredReport):
    """What `itemscale intervene` measures (docs/policies.md): `recovered_rate` beside
    `broken_rate`, each with its interval and its count (`count`: k changed of n answered)."""

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"run_dir", "axis", "responses_sha256"})
    READ_VERSIONS: ClassVar[tuple[int, ...]] = INTERVENTION_READ_VERSIONS
    RERUN: ClassVar[str] = "itemscale intervene --no-run"

    schema_version: int = INTERVENTION_SCHEMA_VERSION
    model: str
    source_series: str
    #: the intervention, under the JSON key result files always had
    policy: InterventionName
    description: str
    series: str
    #: config id -> the changed configuration, as the protocol writes it
    configs: dict[str, Configuration]
    config_series: dict[str, str]
    terminal_label: str
    seed: int
    n_items: int
    n_regressions: int
    n_terminal_right: int
    recovered_rate: Estimate
    broken_rate: Estimate
    #: rate -> how its interval was computed (video bootstrap, or exact where all re-runs agreed)
    intervals: dict[str, str]
    net_accuracy_change_estimate: Estimate
    net_accuracy_change_note: str
    regressions: GroupCounts
    controls: GroupCounts
    bootstrap: BootstrapRecord
    items: tuple[ItemOutcome, ...]
    run_dir: str | None = None
    axis: InterventionAxis | None = None
    responses_sha256: str | None = None
