"""`AnalysisSettings`: every option of `analyze`, with its checks, defined once.

`itemscale analyze` builds it from its flags, `itemscale.analyze` and `analyze_responses` from
their keywords (or take it whole), so a command and a notebook refuse the same input with the
same reason; each error names the setting (the command line shows the flag instead).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import ConfigDict, field_validator

from ...core.rerun_floor import RerunFloor
from ._heterogeneity import DEFAULT_DRAWS
from ._inference import DEFAULT_POWER_TARGET
from ._result_models import WithBootstrapCount
from ._select import config_list

#: Video-bootstrap resamples `analyze` draws unless told otherwise.
DEFAULT_BOOTSTRAP = 1000
#: The score an open-ended task is measured by (`score` is the one the rows carry).
Metric = Literal["score", "token_f1", "rouge_l", "exact_match"]
#: Interval methods (docs/measures.md); the names of `CI_METHODS` (a test holds them equal).
IntervalMethod = Literal["bca", "percentile"]


def _labels(name: str, labels: tuple[str, ...]) -> tuple[str, ...]:
    """Labels as given, each stripped; an empty one is refused (`a,,b` on the command line)."""
    cleaned = tuple(label.strip() for label in labels)
    if not all(cleaned):
        raise ValueError(f"an empty {name} in {list(labels)}")
    return cleaned


class AnalysisSettings(WithBootstrapCount):
    """How `analyze` computes its measures (docs/measures.md); the defaults are the command's.

    `bootstrap` is the resample count's one name (`--bootstrap`; the retired `n_boot` still
    works in 0.1.x, with a warning); `power_target` is in points, as `--power-target`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Video-bootstrap resamples (0: no intervals).
    bootstrap: int = DEFAULT_BOOTSTRAP
    #: Bootstrap seed: the same seed gives the same intervals.
    seed: int = 0
    #: Interval method: BCa (selection-aware for best fixed, headroom and gaps) or percentile.
    ci: IntervalMethod = "bca"
    #: Restrict every measure to these configuration labels (None: the whole grid).
    configs: tuple[str, ...] | None = None
    #: The reference among configurations that ask one budget (alternatives, not an axis):
    #: a configuration label, or a series name where each alternative is its own series.
    control: str | None = None
    #: One chain of a frames x resolutions grid as the axis (`frames@112`, `resolution@8f`).
    axis: str | None = None
    #: Item attributes to break every measure down by.
    by: tuple[str, ...] = ()
    #: The score of open-ended tasks.
    metric: Metric = "score"
    #: The score drop that counts as harmful on open-ended tasks.
    eps: float = 0.1
    #: Accuracy difference between adjacent budgets, in points, that the power analysis sizes.
    power_target: float = 100 * DEFAULT_POWER_TARGET
    #: Pairs of configurations tested besides the adjacent ones (Holm-adjusted among themselves).
    test_pairs: tuple[tuple[str, str], ...] = ()
    #: Resamples of the additive-model test (the first N of the video bootstrap).
    heterogeneity_draws: int = DEFAULT_DRAWS
    #: Threads computing models at once (None: one per usable core). The numbers do not
    #: depend on it.
    workers: int | None = None
    #: The rerun floor you state for the set-up, in percent of answers (`--rerun-floor`): the
    #: same-input verdicts grade answers against it, labelled "stated" (None: the floor each
    #: model's repeats and reruns measure, else none).
    rerun_floor: float | None = None

    @field_validator("bootstrap", "heterogeneity_draws")
    @classmethod
    def _not_negative(cls, value: int) -> int:
        if value < 0:
            raise ValueError(f"resamples must be >= 0 (got {value})")
        return value

    @field_validator("workers")
    @classmethod
    def _threads(cls, value: int | None) -> int | None:
        if value is not None and value < 1:
            raise ValueError(f"give at least one worker thread (got {value})")
        return value

    @field_validator("rerun_floor")
    @classmethod
    def _floor_percent(cls, value: float | None) -> float | None:
        if value is not None:
            RerunFloor.of_percent(value)  # a percent of answers in [0, 100], or refused
        return value

    @property
    def stated_floor(self) -> RerunFloor | None:
        """`rerun_floor` as the floor the same-input rule uses (None when not stated)."""
        return None if self.rerun_floor is None else RerunFloor.of_percent(self.rerun_floor)

    @field_validator("power_target")
    @classmethod
    def _points(cls, value: float) -> float:
        if not 0 < value <= 100:
            raise ValueError(f"give points in (0, 100] (got {value})")
        return value

    @field_validator("eps")
    @classmethod
    def _finite_eps(cls, value: float) -> float:
        if value != value:  # NaN: every comparison with it is False, nothing would count
            raise ValueError("the harmful score drop must be a number (got nan)")
        return value

    @field_validator("configs")
    @classmethod
    def _config_labels(cls, configs: tuple[str, ...] | None) -> tuple[str, ...] | None:
        return None if configs is None else tuple(config_list(configs))

    @field_validator("control")
    @classmethod
    def _control_label(cls, value: str | None) -> str | None:
        return None if value is None else _labels("control label", (value,))[0]

    @field_validator("by")
    @classmethod
    def _attributes(cls, by: tuple[str, ...]) -> tuple[str, ...]:
        return _labels("attribute", by)

    @field_validator("test_pairs")
    @classmethod
    def _pairs(cls, pairs: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
        out = []
        for pair in pairs:
            first, second = _labels("configuration label", pair)
            out.append((first, second))
        return tuple(out)

    @classmethod
    def of(
        cls, settings: AnalysisSettings | None, options: Mapping[str, object]
    ) -> AnalysisSettings:
        """`settings`, or the settings the keywords name: a call takes one or the other."""
        if settings is None:
            return cls.model_validate(dict(options))
        if options:
            raise TypeError(
                "give AnalysisSettings or keywords, not both (keywords given: "
                + ", ".join(sorted(options))
                + ")"
            )
        return settings
