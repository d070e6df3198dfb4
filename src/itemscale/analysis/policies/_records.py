"""What the cascade and the intervention reports share: their record base and loading a
stored report. A field in a record's `OMIT_NONE` is written only when it has a value: the JSON
layouts predate the models, so `model_dump(mode="json")` gives the layout the commands wrote.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar, Self, TypeVar

from pydantic import BaseModel, ValidationError, field_validator

from ...core.errors import STORED, ItemscaleError, validation_message
from ..measures import Record

RecordT = TypeVar("RecordT", bound=BaseModel)


class ReportFileError(ItemscaleError, ValueError):
    """A stored cascade or intervention report that cannot be read: not JSON, or a key its
    layout does not have (named with the file and the key)."""


class ReportRecord(Record):
    """A record of a cascade or intervention report: `measures.Record` with the report's
    defaults written (`schema_version`)."""

    OMIT_UNSET: ClassVar[bool] = False


class StoredReport(ReportRecord):
    """A report stored as one JSON file: `to_json()` is its text byte for byte, `load(path)`
    reads one back validated, refusing a layout this itemscale cannot read."""

    #: The layouts a reader takes, and the command that writes the file again.
    READ_VERSIONS: ClassVar[tuple[int, ...]]
    RERUN: ClassVar[str]

    @field_validator("schema_version", check_fields=False)
    @classmethod
    def _this_layout(cls, version: int) -> int:
        if version not in cls.READ_VERSIONS:
            raise ValueError(
                f"schema version {version}, this itemscale reads "
                f"{', '.join(map(str, cls.READ_VERSIONS))}: run `{cls.RERUN}` again"
            )
        return version

    def to_json(self) -> str:
        return json_text(self.model_dump(mode="json"))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Self:
        """A stored report, validated (`ReportFileError` names the file and the key)."""
        return stored_report(cls, path)


def stored_report(cls: type[RecordT], path: str | os.PathLike[str]) -> RecordT:
    """A report file read and validated as `cls` (`ReportFileError` names the file and keys)."""
    where = Path(path)
    try:
        payload = json.loads(where.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportFileError(f"{where}: not a JSON report ({exc})") from None
    return report_from_json(cls, payload, str(where))


def optional_report(
    cls: type[RecordT], path: str | os.PathLike[str]
) -> RecordT | ReportFileError | None:
    """A report file that may be absent (None) or damaged (its `ReportFileError`, for a page
    that names it in place rather than failing)."""
    if not Path(path).is_file():
        return None
    try:
        return stored_report(cls, path)
    except ReportFileError as exc:
        return exc


def report_from_json(cls: type[RecordT], payload: object, where: str) -> RecordT:
    if not isinstance(payload, Mapping):
        raise ReportFileError(f"{where}: not a JSON object")
    try:
        return cls.model_validate(payload, context=STORED)
    except ValidationError as exc:
        lines = []
        for error in exc.errors():
            loc = _file_keys(payload, error["loc"])
            # under a tag the keys known depend on it: no "did you mean" is offered there
            tagged = len(loc) != len(error["loc"])
            lines.append(
                validation_message(
                    [{**error, "loc": loc}], model=None if tagged else cls, show_input=True
                )
            )
        raise ReportFileError(f"{where}: {'; '.join(lines)}") from None


def _file_keys(payload: object, loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """An error's location as keys of the file, without a union's tag (a stopping rule's
    `available`, which pydantic puts in the location as 1 or 0)."""
    keys: list[int | str] = []
    node: object = payload
    for part in loc:
        if isinstance(part, int) and not isinstance(node, list):
            continue  # a tag: the node is the tagged record itself
        keys.append(part)
        if isinstance(node, list) and isinstance(part, int):
            node = node[part] if part < len(node) else None
        else:
            node = node.get(part) if isinstance(node, Mapping) else None
    return tuple(keys)


def json_text(payload: object) -> str:
    """What `write_json_atomic` writes: sorted keys, two-space indent, secrets redacted."""
    from ...core.responses import redact_value

    return json.dumps(redact_value(payload), indent=2, sort_keys=True, default=str) + "\n"
