"""Items the benchmark or answer key lists but a model's results lack: counted, and on request
added as wrong answers.

A released table with 2,511 rows for a split of 2,516 questions gives one accuracy if the five
missing questions are left out (22.14) and another if they count as wrong (22.10, the seed
paper's, whose denominator is the split). Neither is silently right, so every import that has a
key reports, per model, how many of its items have no row; `--absent noanswer` adds those items
as answered-with-no-option rows at every configuration the import gives that model, marked so
that they can always be told apart from a real `NOANSWER` (`error` = "absent", `source` =
"absent:<key file>"); `--absent skip` (the default) leaves them out and says so.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal, TypedDict, cast

import pandas as pd

from ...core.responses import NOANSWER, OpenAnswerScores, ResponseRow, Status, TaskKind
from ._common import ImportInputError, attributes_json
from ._config_ids import CONFIG_COLUMNS
from ._table_shape import AnswerKey, KeyEntry

AbsentMode = Literal["skip", "noanswer"]
ABSENT_MODES: Final[tuple[str, ...]] = ("skip", "noanswer")
#: Left out and reported: adding rows nobody answered must be asked for (see docs/importers.md).
DEFAULT_ABSENT: Final[str] = "skip"
#: The `error` value of a row added for an absent item (its `source` starts with "absent:").
ABSENT_MARKER: Final[str] = "absent"
#: How many absent ids a summary lists.
ABSENT_EXAMPLES: Final[int] = 5

#: The configuration columns an added row copies from the model's imported rows.
_CELL_COLUMNS: Final[tuple[str, ...]] = (*CONFIG_COLUMNS, "pipeline", "repeat")


class AbsentRecord(TypedDict):
    """`AbsentItems` as the import summary's JSON writes it."""

    key: str
    key_items: int
    absent: int
    examples: list[str]
    mode: str
    rows_added: int


@dataclass(frozen=True)
class AbsentItems:
    """One model's items of the key without any row in the import."""

    model: str
    key_path: str
    key_items: int
    item_ids: tuple[str, ...]
    mode: str
    rows_added: int

    def to_dict(self) -> AbsentRecord:
        return {
            "key": self.key_path,
            "key_items": self.key_items,
            "absent": len(self.item_ids),
            "examples": list(self.item_ids[:ABSENT_EXAMPLES]),
            "mode": self.mode,
            "rows_added": self.rows_added,
        }

    def line(self) -> str:
        """The summary's sentence about them."""
        n = len(self.item_ids)
        if not n:
            return f"every one of the {self.key_items} items of {self.key_path} has a row"
        shown = ", ".join(self.item_ids[:ABSENT_EXAMPLES]) + (
            ", ..." if n > ABSENT_EXAMPLES else ""
        )
        head = f"{n} of the {self.key_items} items of {self.key_path} have no row ({shown})"
        if self.mode == "noanswer":
            return (
                f"{head}: added as NOANSWER (wrong) at every configuration, {self.rows_added} "
                f"rows marked error '{ABSENT_MARKER}' (--absent noanswer)"
            )
        return (
            f"ABSENT: {head}; they are left out of every denominator (--absent skip). "
            "--absent noanswer counts them wrong at every configuration, as the seed paper's "
            "split-sized denominators do"
        )


def check_absent_mode(mode: str, key: AnswerKey | None) -> AbsentMode:
    if mode not in ABSENT_MODES:
        raise ImportInputError(f"--absent {mode!r}: expected one of {', '.join(ABSENT_MODES)}")
    if mode == "noanswer" and key is None:
        raise ImportInputError(
            "--absent noanswer needs the items that should be there: give --benchmark FILE "
            "(or, for import table, --answer-key FILE)"
        )
    return "noanswer" if mode == "noanswer" else "skip"


def _reference(entry: KeyEntry) -> str | None:
    if entry.task_kind == TaskKind.MCQA:
        return entry.gold
    refs = list(entry.references)
    if not refs:
        return None
    return refs[0] if len(refs) == 1 else json.dumps(refs)


def _added_row(
    model: str, item_id: str, entry: KeyEntry, cell: ResponseRow, video: str, source: str
) -> ResponseRow:
    mcqa = entry.task_kind == TaskKind.MCQA
    row: ResponseRow = {
        "model": model,
        "item_id": item_id,
        "video_id": video,
        "task_kind": entry.task_kind.value,
        **cell,
        "status": Status.NOANSWER.value,
        "error": ABSENT_MARKER,
        "answer": NOANSWER if mcqa else None,
        "reference": _reference(entry),
        "attributes": attributes_json(entry.attributes),
        "source": source,
    }
    if mcqa:
        row["correct"] = 0.0
    else:  # an empty answer: every overlap score is 0
        row.update(OpenAnswerScores(token_f1=0.0, rouge_l=0.0, exact_match=0.0).row_columns())
    return row


def absent_items(
    rows: pd.DataFrame,
    key: AnswerKey,
    mode: AbsentMode,
    *,
    video_of: Callable[[str], str] | None = None,
) -> tuple[pd.DataFrame | None, list[AbsentItems]]:
    """The rows to add (None with `skip` or when nothing is absent) and, per model of `rows`,
    the key's items that have no row for it. Added rows sit at every (series, configuration,
    repeat) the model has in `rows`; their video is the key's, else `video_of(item_id)`."""
    added: list[ResponseRow] = []
    reports = []
    source = f"absent:{key.path.name}"
    for model in dict.fromkeys(rows["model"].tolist()):
        mine = rows[rows["model"] == model]
        present = set(mine["item_id"].tolist())
        missing = tuple(i for i in key.entries if i not in present)
        n_added = 0
        if missing and mode == "noanswer":
            # each record holds exactly the `_CELL_COLUMNS` of a row, nulls as None
            cells = cast(
                list[ResponseRow],
                mine[list(_CELL_COLUMNS)]
                .drop_duplicates(["series", "config_id", "repeat"])
                .astype(object)
                .where(lambda t: t.notna(), None)
                .to_dict("records"),
            )
            for item_id in missing:
                entry = key.entries[item_id]
                video = entry.video_id or (video_of(item_id) if video_of else item_id)
                for cell in cells:
                    added.append(_added_row(str(model), item_id, entry, cell, video, source))
            n_added = len(missing) * len(cells)
        reports.append(
            AbsentItems(
                model=str(model),
                key_path=key.path.name,
                key_items=len(key.entries),
                item_ids=missing,
                mode=mode,
                rows_added=n_added,
            )
        )
    return (pd.DataFrame(added) if added else None), reports
