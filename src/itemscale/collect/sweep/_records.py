"""The records a sweep writes into run.json (and returns in `SweepResult`), as typed
dictionaries: JSON as they stand, so typing them changes no byte of the file."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, NotRequired, TypedDict


class ToolInfo(TypedDict):
    """run.json `tool`: the itemscale that ran the sweep."""

    name: str
    version: str
    #: the source tree's commit (`+dirty` with local changes); None outside a git checkout
    git_commit: str | None


class DecoderInfo(TypedDict):
    """run.json `decoder`: PyAV and the FFmpeg libraries it was built with."""

    name: str
    version: str | None
    #: library name -> its version (`"60.31.102"`); absent without PyAV
    ffmpeg: NotRequired[dict[str, str]]


class HostInfo(TypedDict):
    """run.json `host`."""

    hostname: str
    platform: str
    python: str
    machine: str


class BudgetSide(TypedDict):
    """One budget of the budget probe: its cell's frames, frames sent and visual tokens."""

    label: str
    frames: int
    frames_sent: int
    visual_tokens: int | None
    status: str


class BudgetProbeRecord(TypedDict):
    """run.json `sweep.budget_probe[MODEL]` (`budget_verdict`)."""

    item_id: str
    small: BudgetSide
    large: BudgetSide
    tolerance: float
    frame_ratio: float | None
    token_ratio: float | None
    required_token_ratio: float | None
    #: None when the replies cannot tell (then `reason` says why)
    honoured: bool | None
    reason: NotRequired[str]
    #: `--accept-budget-cap`, set by the sweep beside the verdict
    accepted: NotRequired[bool]


class SelectionRecord(TypedDict):
    """run.json `sweep.selections[LABEL]`: a `selection` configuration's file, checked."""

    selection: str | None
    series: str
    frames: int
    path: str
    format: str
    unit: str
    sha256: str
    items_in_file: int
    items_checked: int
    duplicate_frames_removed: int
    items_with_duplicates: int
    #: the configuration's id (a changed file is a new id under the same label)
    config_id: NotRequired[str]
    #: whether the frame count is a cap (the label reads `<=Kf`)
    cap: NotRequired[bool]
    #: distinct frames the checked items' records give: fewest, mean, most
    frames_listed_min: NotRequired[int]
    frames_listed_mean: NotRequired[float]
    frames_listed_max: NotRequired[int]
    #: the mean of the records' declared `frames_scored` (the selector's own cost), or None
    frames_scored_mean: NotRequired[float | None]
    #: how records were matched to items: `id`, or `question` (ids repeat: by question text)
    matched_by: NotRequired[str]


class SupersededSelection(TypedDict):
    """run.json `sweep.superseded_selections[CONFIG_ID]`: a selection configuration whose file
    the protocol no longer names (it changed); its cells stay stored, and `read_run` leaves them
    out of the analysis unless asked."""

    label: str
    series: str
    cells: int
    superseded_by: str
    current_label: str


class SessionSelection(TypedDict):
    """What a store session keeps of a selection (`session_selections`)."""

    path: str
    sha256: str
    duplicate_frames_removed: int


class ActorSpec(TypedDict):
    """What a Ray actor reports of its loaded model: JSON, revalidated on the driver."""

    spec_id: str
    spec: Mapping[str, object]
    serving: Mapping[str, object]


class PlanCostRecord(TypedDict):
    """`sweep --dry-run --json`: what the plan will cost (`PlanCost.as_dict`)."""

    cells: int
    cells_done: int
    cells_todo: int
    frames: int
    visual_tokens_estimated: int
    visual_tokens_unknown_cells: int
    unreadable_videos: list[str]
    by_config: dict[str, dict[str, int]]


class SweepSettings(TypedDict):
    """The run's own settings at the head of run.json `sweep`."""

    executor: str
    limit: int | None
    retry_errors: bool
    #: `sweep --deterministic` (`Numerics`); at the run level "mixed" when its sessions differ
    deterministic: bool | Literal["mixed"]


class ExtraConfigRecord(TypedDict):
    """A configuration run beside the protocol's grid (run.json `sweep.extra_configs`)."""

    config_id: str
    label: str
    series: str
    #: the configuration's JSON dump
    config: Mapping[str, object]


class SweepRecord(SweepSettings):
    """run.json `sweep`: what ran and how it ended."""

    interrupted: bool
    planned_cells: int
    skipped_cells: int
    ran_cells: int
    by_status: dict[str, int]
    served: dict[str, dict[str, int]]
    accept_budget_cap: bool
    budget_probe: dict[str, BudgetProbeRecord]
    scoring_rules: dict[str, dict[str, str]]
    warnings: list[str]
    selections: dict[str, SelectionRecord]
    superseded_selections: NotRequired[dict[str, SupersededSelection]]
    #: the Ray executor's figures, with `executor = "ray"` only
    ray: NotRequired[dict[str, int]]
    extra_configs: list[ExtraConfigRecord]


class RunTimes(TypedDict):
    started: str
    finished: str


class RunRecord(TypedDict):
    """run.json as a sweep writes it, before the caller's, earlier writers' and the store's keys."""

    #: the protocol's JSON dump
    protocol: Mapping[str, object]
    tool: ToolInfo
    decoder: DecoderInfo
    host: HostInfo
    prompt_template_version: str
    extractor_version: str
    times: RunTimes
    sweep: SweepRecord
