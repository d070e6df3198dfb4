"""`analyze`'s result as a typed, versioned record (`AnalysisResult`): what a notebook holds,
what `analyze --json` writes (`to_json`, the same layout byte for byte) and a tidy table of every
estimate (`to_frame`: model, series, measure, config, value, ci_low, ci_high).

The blocks inside stay the documented JSON layout (docs/measures.md, "JSON layout"), read-only:
the console, the report and the paper comparison read that layout, and a record that re-spelled
it field by field would be one more place for a measure's name to drift.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import pandas as pd

from ..responses import SchemaError

#: Version of the `analyze --json` layout; a reader refuses a newer one.
ANALYSIS_SCHEMA_VERSION = 1

#: The columns of `AnalysisResult.to_frame()`, in order.
FRAME_COLUMNS: tuple[str, ...] = (
    "model",
    "series",
    "measure",
    "config",
    "value",
    "ci_low",
    "ci_high",
)

SeriesRole = Literal["primary", "other", "intervention"]

#: Keys of a series block that hold other series, not the block's own estimates.
_NESTED_SERIES = ("other_series", "interventions")


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def _is_stat(value: Any) -> bool:
    return isinstance(value, Mapping) and "value" in value and "ci" in value


@dataclass(frozen=True)
class Estimate:
    """A point estimate and its 95% interval (None where undefined: no items, no resamples)."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Estimate:
        ci = data.get("ci")
        low, high = (ci[0], ci[1]) if ci else (None, None)
        return cls(data.get("value"), low, high)

    def to_json(self) -> dict[str, Any]:
        ci = None if self.ci_low is None or self.ci_high is None else [self.ci_low, self.ci_high]
        return {"value": self.value, "ci": ci}


@dataclass(frozen=True)
class BootstrapSettings:
    """How the intervals were made: resamples of whole videos, their seed and method."""

    n_boot: int
    seed: int
    unit: str
    ci_level: float
    interval: str


@dataclass(frozen=True)
class SeriesResult:
    """One series of one model: its block of `analyze --json`, read-only, with typed access to
    its estimates."""

    model: str
    series: str
    role: SeriesRole
    block: Mapping[str, Any] = field(repr=False)

    @property
    def kind(self) -> str:
        """`binary` (multiple choice), or `continuous` for a series of open-ended items only."""
        return str(self.block.get("kind", "continuous"))

    @property
    def configs(self) -> tuple[str, ...]:
        """The configurations of the budget axis, smallest first."""
        return tuple(self.block.get("axis", ()))

    def estimate(self, measure: str, config: str | None = None) -> Estimate:
        """One estimate by its JSON key (`harmful_rate`), a path into the block
        (`grid_with_text.harmful_rate`, `continuous.oracle_gap`) and, for per-configuration
        measures, the configuration (`accuracy`, `16f`)."""
        where = f"{self.model} ({self.series})"
        value: Any = self.block
        for part in measure.split("."):
            if not isinstance(value, Mapping) or part not in value:
                raise KeyError(
                    f"{where}: no measure {measure!r}; measures: {', '.join(self.measures())}"
                )
            value = value[part]
        if config is not None:
            if not isinstance(value, Mapping) or config not in value:
                have = ", ".join(str(k) for k in value) if isinstance(value, Mapping) else "none"
                raise KeyError(f"{where}: {measure!r} has no {config!r}; configurations: {have}")
            value = value[config]
        if not _is_stat(value):
            configs = ", ".join(str(k) for k in value) if isinstance(value, Mapping) else ""
            raise KeyError(
                f"{where}: {measure!r} is not one estimate"
                + (
                    f"; give a configuration: .estimate({measure!r}, {next(iter(value))!r}) "
                    f"(configurations: {configs})"
                    if configs
                    else ""
                )
            )
        return Estimate.from_json(value)

    def measures(self) -> list[str]:
        """The measure paths `estimate` accepts (those per configuration need one too)."""
        return sorted({path for path, _, _ in self.estimates()})

    @property
    def accuracy(self) -> dict[str, Estimate]:
        """The curve: accuracy (binary) or mean score (continuous) by configuration."""
        key = "accuracy" if self.kind == "binary" else "mean_score"
        return {c: Estimate.from_json(s) for c, s in self.block.get(key, {}).items()}

    def estimates(self) -> Iterator[tuple[str, str | None, Estimate]]:
        """Every estimate of the block as (measure path, configuration or None, estimate)."""
        yield from _walk(self.block, "")


def _walk(block: Mapping[str, Any], prefix: str) -> Iterator[tuple[str, str | None, Estimate]]:
    for key, value in block.items():
        if not prefix and key in _NESTED_SERIES:
            continue
        path = f"{prefix}{key}"
        if _is_stat(value):
            config = value.get("config")
            yield path, str(config) if config is not None else None, Estimate.from_json(value)
        elif isinstance(value, Mapping) and value:
            if all(_is_stat(v) for v in value.values()):
                for config, stat in value.items():
                    yield path, str(config), Estimate.from_json(stat)
            else:
                yield from _walk(value, path + ".")


@dataclass(frozen=True)
class AnalysisResult:
    """Every measure for every model of a response table (what `itemscale analyze` prints).

    `data` is the `analyze --json` content, read-only; the fields above it are its header,
    typed."""

    schema_version: int
    bootstrap: BootstrapSettings
    metric: str
    binary_repeat: int
    data: Mapping[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "analysis") -> AnalysisResult:
        """The record of an `analyze --json` file's content; a newer layout is refused."""
        version = data.get("schema_version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise SchemaError(f"{where}: no integer 'schema_version'; not analyze's JSON")
        if version > ANALYSIS_SCHEMA_VERSION:
            raise SchemaError(
                f"{where}: schema_version {version} is newer than this itemscale reads "
                f"({ANALYSIS_SCHEMA_VERSION}); upgrade itemscale"
            )
        try:
            boot = data["bootstrap"]
            settings = BootstrapSettings(
                n_boot=int(boot["n_boot"]),
                seed=int(boot["seed"]),
                unit=str(boot["unit"]),
                ci_level=float(boot["ci_level"]),
                interval=str(boot["interval"]),
            )
            if not isinstance(data["models"], Mapping):
                raise TypeError("'models' is not an object")
        except (KeyError, TypeError) as exc:
            raise SchemaError(f"{where}: {exc} of analyze's JSON") from exc
        return cls(
            schema_version=version,
            bootstrap=settings,
            metric=str(data.get("metric", "score")),
            binary_repeat=int(data.get("binary_repeat", 0)),
            data=_frozen(dict(data)),
        )

    @property
    def models(self) -> Mapping[str, Any]:
        """Each model's primary block (with its other series and re-runs inside)."""
        models: Mapping[str, Any] = self.data["models"]
        return models

    @property
    def grid(self) -> Mapping[str, Any] | None:
        """The grid `configs` restricted the analysis to, and the models left out."""
        grid: Mapping[str, Any] | None = self.data.get("grid")
        return grid

    def to_json(self) -> dict[str, Any]:
        """The `analyze --json` layout (a fresh copy: changing it changes nothing here)."""
        thawed: dict[str, Any] = _thawed(self.data)
        return thawed

    def dumps(self, **kwargs: Any) -> str:
        """The JSON text `analyze --json FILE` writes."""
        return json.dumps(self.to_json(), **kwargs)

    @property
    def model_names(self) -> tuple[str, ...]:
        return tuple(self.models)

    def __getitem__(self, model: str) -> SeriesResult:
        """The primary series of one model (the one `analyze` prints first)."""
        if model not in self.models:
            raise KeyError(f"no model {model!r}; the analysis has {', '.join(self.models)}")
        block = self.models[model]
        return SeriesResult(model, str(block.get("series", "default")), "primary", block)

    def series(self, model: str | None = None) -> list[SeriesResult]:
        """Every series (primary, other series, intervention re-runs) of one or all models."""
        out = []
        for name in [model] if model is not None else list(self.models):
            primary = self[name]
            out.append(primary)
            for key, role in (("other_series", "other"), ("interventions", "intervention")):
                for series, block in primary.block.get(key, {}).items():
                    out.append(SeriesResult(name, series, role, block))  # type: ignore[arg-type]
        return out

    def to_frame(self) -> pd.DataFrame:
        """Every estimate as a tidy table: one row per (model, series, measure, config), the
        measure named by its JSON key or its path (`grid_with_text.harmful_rate`), config None
        for a measure of the whole axis. Rates are fractions (x100 for points)."""
        import pandas as pd

        rows = [
            (s.model, s.series, measure, config, est.value, est.ci_low, est.ci_high)
            for s in self.series()
            for measure, config, est in s.estimates()
        ]
        frame = pd.DataFrame(rows, columns=list(FRAME_COLUMNS))
        for column in ("value", "ci_low", "ci_high"):
            frame[column] = frame[column].astype(float)
        return frame


def _thawed(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thawed(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thawed(v) for v in value]
    return value
