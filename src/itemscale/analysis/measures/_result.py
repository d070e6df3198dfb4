"""`analyze`'s result as a typed, versioned record (`AnalysisResult`): what a notebook holds,
what `analyze --json` writes (`to_json`, byte for byte) and a tidy table of every estimate
(`to_frame`). `AnalysisResult.from_json` validates a stored file, so a damaged one is a
`SchemaError` naming the key.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

if TYPE_CHECKING:
    import pandas as pd

from ...core.errors import STORED, location_text
from ...core.responses import SchemaError
from ._result_models import Estimate
from ._result_series import AnalysisLayout

#: Version of the `analyze --json` layout; a reader refuses a newer one. 2 added
#: `plugin_measures` (a result without it was written as version 1). 3: the resample count is
#: `bootstrap.bootstrap`, where versions 1 and 2 hold `bootstrap.n_boot` (read alike);
#: `plugin_measures` is still written only where a plugin measure was used. 4 added the entry of
#: configurations that ask one budget (`kind` "alternatives") and a series' `axis_warnings`, and
#: writes a power figure that is not estimable as null with its reason (`mde_not_estimable`,
#: `videos_needed_not_estimable`) where 3 wrote the formula's number; a file of version 1 to 3
#: reads as before.
ANALYSIS_SCHEMA_VERSION = 4

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
class SeriesResult:
    """One series of one model: its block, read-only, with typed access to its estimates."""

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


class AnalysisResult(AnalysisLayout):
    """Every measure for every model of a response table (what `itemscale analyze` prints): the
    typed `analyze --json` layout of docs/measures.md; `data` is the same as read-only JSON."""

    @classmethod
    def from_json(
        cls, data: AnalysisResult | Mapping[str, Any], where: str = "analysis"
    ) -> AnalysisResult:
        """The record of an `analyze --json` file's content, validated: a newer layout is
        refused, and a wrong type, an unknown key or a missing one is a `SchemaError` naming
        `where` (the file) and the key's path. A typed result is returned as it is, so a
        caller that may hold either (an `analyze` callable's return) reads both one way."""
        if isinstance(data, AnalysisResult):
            return data
        if not isinstance(data, Mapping):
            raise SchemaError(f"{where}: not a JSON object; not analyze's JSON")
        version = data.get("schema_version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise SchemaError(f"{where}: no integer 'schema_version'; not analyze's JSON")
        if version > ANALYSIS_SCHEMA_VERSION:
            raise SchemaError(
                f"{where}: schema_version {version} is newer than this itemscale reads "
                f"({ANALYSIS_SCHEMA_VERSION}); upgrade itemscale"
            )
        try:
            return cls.model_validate(dict(data), context=STORED)
        except ValidationError as exc:
            raise SchemaError(schema_message(exc, where)) from exc

    @classmethod
    def read(cls, path: str | Path) -> AnalysisResult:
        """An `analyze --json` file, validated (`from_json`, errors naming the file)."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise SchemaError(f"{path}: not JSON ({exc})") from exc
        return cls.from_json(data, where=str(path))

    @property
    def data(self) -> Mapping[str, Any]:
        """The `analyze --json` content, read-only (made afresh: `models` is the typed form)."""
        data: Mapping[str, Any] = _frozen(self.to_json())
        return data

    def to_json(self) -> dict[str, Any]:
        """The `analyze --json` layout (a fresh copy: changing it changes nothing here)."""
        out: dict[str, Any] = self.model_dump(mode="json")
        return out

    def dumps(self, *, indent: int | str | None = None, sort_keys: bool = False) -> str:
        """The JSON text `analyze --json FILE` writes (arguments as `json.dumps`')."""
        return json.dumps(self.to_json(), indent=indent, sort_keys=sort_keys)

    @property
    def model_names(self) -> tuple[str, ...]:
        return tuple(self.models)

    def _block(self, model: str) -> Mapping[str, Any]:
        block: Mapping[str, Any] = _frozen(self.models[model].model_dump(mode="json"))
        return block

    def __getitem__(self, model: str) -> SeriesResult:
        """The primary series of one model (the one `analyze` prints first)."""
        if model not in self.models:
            raise KeyError(f"no model {model!r}; the analysis has {', '.join(self.models)}")
        block = self._block(model)
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


#: At most this many of a file's errors are listed (the rest are counted).
_SHOWN_ERRORS = 5


def schema_message(exc: ValidationError, where: str) -> str:
    """A validation error of the layout as `FILE: KEY.PATH: what is wrong; ...`, the path as
    the file's keys (`models.m.accuracy.8f.value`)."""
    lines = []
    errors = exc.errors()
    for err in errors[:_SHOWN_ERRORS]:
        loc = [
            p
            for p in err.get("loc", ())
            if not (isinstance(p, str) and (p.startswith("function-") or "[" in p))
        ]
        kind = err.get("type")
        if kind == "missing":
            what = "missing required key"
        elif kind == "extra_forbidden":
            what = "unknown key"
        else:
            got = err.get("input")
            shown = "" if isinstance(got, dict | list) else f" (got {got!r})"
            what = f"{str(err.get('msg', '')).removeprefix('Value error, ')}{shown}"
        lines.append(f"{location_text(loc)}: {what}")
    more = len(errors) - _SHOWN_ERRORS
    tail = f"; and {more} more" if more > 0 else ""
    return f"{where}: not analyze's JSON layout: {'; '.join(lines)}{tail}"
