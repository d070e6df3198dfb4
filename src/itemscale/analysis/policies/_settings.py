"""One settings object per policy command (`CascadeSettings`, `InterventionSettings`), each rule
about an option held here once: the command line and a notebook refuse the same input with the
same `pydantic.ValidationError`, naming the setting (`cli/_settings.py` names its flag).
"""

from __future__ import annotations

from typing import Final, Literal

import numpy as np
from pydantic import ConfigDict, Field, field_validator, model_validator

from ..measures import DEFAULT_BOOTSTRAP, RerunFloor, WithBootstrapCount
from ._inputs import ScoreName, SharingChoice

#: 2: cost models (`sharing`), latency, `--stages`, `--score`, `--threshold`, agreement of
#: three stages (`agreement_3`), `matches_terminal` by the interval of the change,
#: `best_match`. 3: `same_input_terminal` (a terminal that repeats its predecessor is dropped).
#: Counts (`count` beside each accuracy, `stop_counts`, a frontier point's `count`) were added
#: to version 3 without a bump: a reader of 3 that ignores them reads the file as before.
#: 4: the resample count is `settings.bootstrap`, where version 3 holds `settings.n_boot`.
#: `settings.rerun_floor` (the floor stated with `--rerun-floor`, null when none) was added to
#: version 4 without a bump: a file without it reads as stating none.
CASCADE_SCHEMA_VERSION: Final[int] = 4
#: The layouts a reader takes: version 3 differs from 4 only in the resample count's key.
CASCADE_READ_VERSIONS: Final[tuple[int, ...]] = (3, CASCADE_SCHEMA_VERSION)

InterventionName = Literal["nested", "phase-shift"]
INTERVENTION_NAMES: Final[tuple[str, ...]] = ("nested", "phase-shift")


class CascadeSettings(WithBootstrapCount):
    """How `itemscale cascade` fits and reports its stopping rules."""

    model_config = ConfigDict(extra="forbid", frozen=True, serialize_by_alias=True)

    #: Video-bootstrap resamples (0: no intervals); a cascade.json of layout 3 holds it as
    #: `n_boot`, read (under `STORED`) as `bootstrap`.
    bootstrap: int = Field(default=DEFAULT_BOOTSTRAP, ge=0)
    seed: int = 0
    cost: Literal["frames", "tokens", "latency"] = "frames"
    #: What stages share (docs/policies.md, "Cost models"); `auto`: the recorded frame union
    #: where every cell has its indices, else `prefix` with `none` beside it.
    sharing: SharingChoice = "auto"
    score: ScoreName = "prob"
    #: Stage labels in order (None: the budget axis, or its main chain on a grid of two axes).
    stages: tuple[str, ...] | None = None
    #: A fixed threshold on the score (no fitting, every item): the seed paper's rule.
    threshold: float | None = None
    #: Only these models' responses (None: every model); a name without responses is an error.
    #: The report records it once, as its own `models` key, not among the settings.
    models: tuple[str, ...] | None = Field(default=None, exclude=True)
    #: Frontier targets: held-out accuracy offsets from the terminal budget's fit-fold accuracy.
    frontier_offsets: tuple[float, ...] = tuple(
        float(x) for x in np.round(np.linspace(-0.15, 0.05, 21), 4)
    )
    #: The rerun floor you state, in percent of answers (`--rerun-floor`): a terminal whose
    #: answers stay within it of the stage before is that stage (None: the floor the run's
    #: repeats and reruns measure, else none: only identical answers repeat a stage).
    rerun_floor: float | None = None

    @field_validator("rerun_floor")
    @classmethod
    def _floor_percent(cls, value: float | None) -> float | None:
        if value is not None:
            RerunFloor.of_percent(value)  # a percent of answers in [0, 100], or refused
        return value

    @field_validator("stages")
    @classmethod
    def _two_stages_or_more(cls, stages: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if stages is None:
            return None
        named = tuple(s.strip() for s in stages if s.strip())
        if len(named) < 2:
            raise ValueError(f"stages={list(stages)}: a cascade needs at least two stages")
        return named

    @field_validator("models")
    @classmethod
    def _named_models(cls, models: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if models is None:
            return None
        if not models or any(not m.strip() for m in models):
            raise ValueError(f"models={list(models)}: name at least one model, none empty")
        return tuple(dict.fromkeys(models))

    @model_validator(mode="after")
    def _union_counts_frames(self) -> CascadeSettings:
        """`union` shares distinct frame indices, which only a frame cost has."""
        if self.sharing == "union" and self.cost != "frames":
            raise ValueError(
                f"sharing='union' counts distinct frame indices; with cost={self.cost!r} "
                "choose sharing='prefix' or sharing='none'"
            )
        return self


class InterventionSettings(WithBootstrapCount):
    """Every option of `itemscale intervene` (docs/policies.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: The change of sampling: `nested` or `phase-shift` (`--policy`).
    intervention: InterventionName
    #: Controls (right at the terminal budget) to re-run; None: as many as there are regressions.
    n_control: int | None = Field(default=None, ge=0)
    #: Seed of the control sample and of the bootstrap.
    seed: int = 0
    bootstrap: int = Field(default=DEFAULT_BOOTSTRAP, ge=0)
    #: The model and the series (budget axis) to intervene on; needed when there are several.
    model: str | None = None
    series: str | None = None
    #: False: run nothing, measure the cells already stored (`--no-run`).
    execute: bool = True
    executor: Literal["local", "ray"] = "local"
    device: str = "cpu"
    batch_size: int = Field(default=1, ge=1)
    progress: bool = True
