"""`import ... --rerun-of LABEL`: a second execution of one configuration, stored as its rerun.

The rerun floor (docs/compare.md, "Reruns") is measured on two executions of one
configuration. A user who ran a configuration twice (an lmms-eval run repeated with nothing
changed) names the second with its own `--config LABEL2=DIR` and says which configuration it
executes again with `--rerun-of LABEL`: its rows take LABEL's configuration (id, label, frames,
axis place, series), are numbered from `RERUN_REPEAT_BASE` and carry `rerun_of` (the repeat they
execute again), so no measure counts them and every same-input verdict on the run is graded
against the floor they measure. LABEL is a configuration of the same import or one the run
already holds; importing the same file again finds its rows where they are (idempotent).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ...core.rerun_evidence import measured_floor
from ...core.responses import RERUN_REPEAT_BASE, RESPONSES_FILE, ResponseRow, read_response_columns
from ._common import ImportInputError
from ._config_ids import CONFIG_COLUMNS


def _stored(run_dir: str | os.PathLike[str]) -> pd.DataFrame | None:
    path = Path(run_dir) / RESPONSES_FILE
    if not path.is_file():
        return None
    return read_response_columns(
        path,
        [
            "model",
            "item_id",
            "task_kind",
            "status",
            "answer",
            "raw_text",
            "repeat",
            "rerun_of",
            "source",
            *CONFIG_COLUMNS,
        ],
    )


def _target(
    rows: Sequence[ResponseRow], stored: pd.DataFrame | None, label: str, model: str
) -> dict[str, object]:
    """LABEL's configuration columns: from this import's rows, else from the run's."""
    for row in rows:
        if row["config_label"] == label:
            return {c: row.get(c) for c in CONFIG_COLUMNS}
    if stored is not None:
        mine = stored[(stored["model"].astype(str) == model) & stored["rerun_of"].isna()]
        hit = mine[mine["config_label"].astype(str) == label]
        if len(hit):
            first = hit.iloc[0]
            return {c: (None if pd.isna(first[c]) else first[c]) for c in CONFIG_COLUMNS}
        held = ", ".join(sorted(set(mine["config_label"].astype(str)))) or "none"
        raise ImportInputError(
            f"--rerun-of {label}: model {model!r} has no configuration {label!r} in this import "
            f"or the run (the run holds: {held})"
        )
    raise ImportInputError(
        f"--rerun-of {label}: no configuration {label!r} in this import, and the run does not "
        "exist yet; import LABEL first (or in the same command, as --config LABEL=PATH)"
    )


def mark_reruns(
    rows: list[ResponseRow], rerun_of: str, labels: Sequence[str], run_dir: str | os.PathLike[str]
) -> tuple[list[ResponseRow], list[str]]:
    """The rows of every `--config` label but `rerun_of` as reruns of `rerun_of`, and the
    import's note on them (with the floor they measure where the executions they repeat are
    known). `labels` are the import's `--config` labels."""
    reruns = [label for label in labels if label != rerun_of]
    if not reruns:
        raise ImportInputError(
            f"--rerun-of {rerun_of}: name the second execution with its own --config "
            f"LABEL2=PATH (a label other than {rerun_of!r})"
        )
    again = [r for r in rows if r["config_label"] in reruns]
    if not again:
        raise ImportInputError(
            f"--rerun-of {rerun_of}: the files of {', '.join(reruns)} hold no row"
        )
    model = str(again[0]["model"])
    stored = _stored(run_dir)
    target = _target([r for r in rows if r["config_label"] not in reruns], stored, rerun_of, model)
    known: dict[str, int] = {}
    used: set[tuple[str, int]] = set()
    if stored is not None:
        same = stored[stored["config_id"].astype(str) == str(target["config_id"])]
        same = same[same["model"].astype(str) == model]
        used = set(zip(same["item_id"].astype(str), same["repeat"].astype(int), strict=True))
        marked = same[same["rerun_of"].notna()]
        known = dict(zip(marked["source"].astype(str), marked["repeat"].astype(int), strict=True))
    base = max([RERUN_REPEAT_BASE - 1, *(r for _, r in used)]) + 1
    out: list[ResponseRow] = []
    for row in rows:
        if row["config_label"] not in reruns:
            out.append(row)
            continue
        original = int(row["repeat"])
        marked_row: ResponseRow = {**row, **target}  # type: ignore[typeddict-item]
        marked_row["rerun_of"] = original
        marked_row["repeat"] = known.get(str(row.get("source")), base + original)
        out.append(marked_row)
    return out, [_note(out, reruns, rerun_of, stored, model, str(target["config_id"]))]


def _note(
    rows: list[ResponseRow],
    reruns: Sequence[str],
    rerun_of: str,
    stored: pd.DataFrame | None,
    model: str,
    config_id: str,
) -> str:
    """`zero_again: 2700 rows stored as a rerun of zero (...); rerun floor measured: ...`."""
    new = pd.DataFrame([r for r in rows if r.get("config_id") == config_id])
    frames = [new] if stored is None else [stored[stored["model"].astype(str) == model], new]
    both = pd.concat(frames, ignore_index=True)
    both = both[both["config_id"].astype(str) == config_id]
    both = both.drop_duplicates(["item_id", "repeat"], keep="last")
    marked = int(new["rerun_of"].notna().sum()) if "rerun_of" in new.columns else 0
    note = (
        f"{', '.join(reruns)}: {marked} rows stored as a rerun of {rerun_of} (repeats from "
        f"{RERUN_REPEAT_BASE}, marked rerun_of): no measure counts them; same-input verdicts "
        "are graded against the floor they measure"
    )
    floor = measured_floor(both) if "rerun_of" in both.columns else None
    return note + (f"; rerun floor {floor.line()}" if floor is not None else "")
