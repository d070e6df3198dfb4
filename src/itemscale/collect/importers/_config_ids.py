"""The configuration ids importers give their rows, and the series a row's id carries.

A run's rows are keyed on (model, item_id, config_id, repeat). A sweep's configurations of two
series differ in a field their id hashes (the sampling policy, the pipeline), so the key tells
them apart. An imported configuration is known by its label and frame count alone, so two series
at one label (a control and a frame selector, each at `16f`) would share an id and collide:
`series_config_id` puts the series into the id, for every series but `default`, whose ids stay
what they always were. `adopt_stored_ids` keeps a re-import idempotent in a run stored before
the series counted.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from typing import TYPE_CHECKING, Final, TypedDict

import pandas as pd

if TYPE_CHECKING:
    from ..protocol import Configuration

#: Version of the label-based configuration id (`label_config_id`); bump if its inputs change.
LABEL_CONFIG_ID_VERSION: Final[int] = 1
#: The series a row belongs to when nothing names one; its ids carry no series.
DEFAULT_SERIES: Final[str] = "default"


def _digest(fields: dict[str, object]) -> str:
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@lru_cache(maxsize=4096)
def label_config_id(label: str, frames: int, series: str = DEFAULT_SERIES) -> str:
    """Id of a configuration known only by its label and frame count (16 hex digits).

    SHA-256 over the canonical JSON `{"frames": F, "label": L, "v": 1}`. Imported runs that differ
    only in an external frame selector share every budget field, so the user's label is what
    tells them apart; the frame count keeps a relabelled text-only baseline distinct. A series
    other than `default` is folded in by `series_config_id`.
    """
    base = _digest({"frames": int(frames), "label": str(label), "v": LABEL_CONFIG_ID_VERSION})
    return series_config_id(base, series)


@lru_cache(maxsize=4096)
def series_config_id(config_id: str, series: str) -> str:
    """`config_id` in `series`: unchanged in the `default` series, else SHA-256 over the
    canonical JSON `{"config_id": ID, "series": S, "v": 1}` (16 hex digits), so that one label
    in two series names two configurations."""
    if series == DEFAULT_SERIES:
        return config_id
    return _digest({"config_id": config_id, "series": series, "v": LABEL_CONFIG_ID_VERSION})


class ConfigColumns(TypedDict):
    """A response row's configuration columns, as an importer writes them for one file."""

    config_id: str
    config_label: str
    axis_order: float
    frames: int
    pixels: int | None
    sampling: str | None
    series: str


#: The configuration columns of a response row, as `ConfigColumns` names them.
CONFIG_COLUMNS: Final[tuple[str, ...]] = tuple(ConfigColumns.__annotations__)


def config_columns(
    config: Configuration,
    *,
    name: str | None = None,
    order: float | None = None,
    series: str = DEFAULT_SERIES,
) -> ConfigColumns:
    """The row columns of the budget a file was run at, a `protocol.Configuration` (the one
    budget type), in `series`. With `name` (a `--config LABEL` given to files that differ only
    in an external frame selector) the user's label and `label_config_id` name it instead, at
    `order` on the axis: the budget fields alone would not tell such files apart."""
    if name is None:
        return {
            "config_id": series_config_id(config.config_id, series),
            "config_label": config.label,
            "axis_order": config.axis_order,
            "frames": config.frames,
            "pixels": config.max_pixels,
            "sampling": config.sampling.tag,
            "series": series,
        }
    frames = config.frames
    return {
        "config_id": label_config_id(name, frames, series),
        "config_label": name,
        "axis_order": float(frames if order is None else order) if frames > 0 else 0.0,
        "frames": frames,
        "pixels": None,
        "sampling": None,
        "series": series,
    }


_PLACE: Final[list[str]] = ["model", "series", "config_label", "frames"]


def adopt_stored_ids(new: pd.DataFrame, stored: pd.DataFrame) -> pd.DataFrame:
    """`new` with the stored id of each configuration that a run written before series counted
    in the id keeps under its series-less id (the same model, series, label and frames, whose
    stored id is the one `series_config_id` turned into the new id): importing the same file
    into such a run again then adds nothing, as before."""
    named = new.loc[new["series"] != DEFAULT_SERIES, [*_PLACE, "config_id"]].drop_duplicates()
    if named.empty or stored.empty:
        return new
    old = stored.loc[stored["series"] != DEFAULT_SERIES, [*_PLACE, "config_id"]]
    pairs = named.merge(old.drop_duplicates(), on=_PLACE, suffixes=("", "_stored"))
    renames: dict[tuple[str, str], str] = {}
    for series, new_id, stored_id in pairs[["series", "config_id", "config_id_stored"]].itertuples(
        index=False
    ):
        if new_id != stored_id and series_config_id(str(stored_id), str(series)) == new_id:
            renames[(str(series), str(new_id))] = str(stored_id)
    if not renames:
        return new
    out = new.copy()
    for (series, new_id), stored_id in renames.items():
        hit = (out["series"] == series) & (out["config_id"] == new_id)
        out.loc[hit, "config_id"] = stored_id
    return out
