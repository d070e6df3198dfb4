"""The rerun floor measured from a response table: every answered row that executes a cell again
(a later repeat, or a rerun row) against the execution it repeats (docs/compare.md, "Reruns").

A floor belongs to a set-up (one model of one run), so it pools the model's configurations.
Multiple-choice rows compare parsed answers, open-ended rows raw outputs; a pair with no answer
on either side tells nothing and is left out. One merge, whatever the table's size.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .rerun_floor import RerunFloor
from .responses import ANSWERED_STATUSES, NOANSWER, rerun_mask

_CELL = ["model", "item_id", "config_id"]


def answer_keys(rows: pd.DataFrame) -> pd.Series:
    """What two executions are compared by: a multiple-choice row's parsed answer, any other's
    raw output (empty: `NOANSWER`); None where the row holds neither."""
    mcqa = rows["task_kind"].astype(str) == "mcqa"
    answer = rows["answer"].astype(object)
    answer = answer.where(answer.notna(), None)
    if "raw_text" in rows.columns:
        raw = rows["raw_text"].astype(object)
        raw = raw.where(raw.notna(), None)
    else:
        raw = pd.Series([None] * len(rows), index=rows.index, dtype=object)
    empty = raw.str.strip().eq("").fillna(False).astype(bool)
    raw = raw.mask(empty, NOANSWER)
    out: pd.Series = answer.where(mcqa, raw)
    return out


def _pairs(rows: pd.DataFrame, reruns_only: bool = False) -> pd.DataFrame:
    """Columns `model`, `rerun` (a rerun row, else a later repeat), `key`, `ref_key`."""
    answered = rows[rows["status"].astype(str).isin(list(ANSWERED_STATUSES))]
    frame = pd.DataFrame(
        {
            "model": answered["model"].astype(str).to_numpy(),
            "item_id": answered["item_id"].astype(str).to_numpy(),
            "config_id": answered["config_id"].astype(str).to_numpy(),
            "repeat": answered["repeat"].to_numpy(dtype=np.int64),
            "rerun": rerun_mask(answered),
            "key": answer_keys(answered).to_numpy(),
        }
    )
    if "rerun_of" in answered.columns:
        of = pd.to_numeric(answered["rerun_of"], errors="coerce").to_numpy(dtype=float)
    else:
        of = np.full(len(frame), np.nan)
    base = frame[~frame["rerun"]]
    first = base.groupby(_CELL, sort=False)["repeat"].transform("min")
    later = base[base["repeat"].to_numpy() != first.to_numpy()].assign(ref=first)
    reruns = frame[frame["rerun"]].assign(ref=of[frame["rerun"].to_numpy()].astype(np.int64))
    probes = reruns.reset_index(drop=True) if reruns_only else pd.concat([later, reruns])
    reference = base[[*_CELL, "repeat", "key"]].rename(columns={"repeat": "ref", "key": "ref_key"})
    merged: pd.DataFrame = probes.merge(reference, on=[*_CELL, "ref"], how="inner")
    return merged


def _evidence(repeats: int, reruns: int, name: str) -> str:
    """`between A's own repeats`, `between the run's cells and their reruns`, or both with their
    counts."""
    owner = f"{name}'s" if name else "the run's"
    both = bool(repeats and reruns)
    parts = []
    if repeats:
        parts.append("own repeats" + (f" ({repeats})" if both else ""))
    if reruns:
        parts.append("cells and their reruns" + (f" ({reruns})" if both else ""))
    return f"between {owner} " + " and ".join(parts)


def measured_floors(
    df: pd.DataFrame, *, name: str = "", reruns_only: bool = False
) -> dict[str, RerunFloor]:
    """Per model, the rerun floor its repeats and reruns measure (none without any). `name` names
    the set-up (`A` in `between A's own repeats`); `reruns_only` leaves the repeats out."""
    if df.empty or not (bool((df["repeat"] != 0).any()) or bool(rerun_mask(df).any())):
        return {}
    pairs = _pairs(df, reruns_only)
    if pairs.empty:
        return {}
    key, ref = pairs["key"].to_numpy(dtype=object), pairs["ref_key"].to_numpy(dtype=object)
    known = ~pd.isna(key) & ~pd.isna(ref)
    neither = known & (key == NOANSWER) & (ref == NOANSWER)
    valid = known & ~neither
    table = pd.DataFrame(
        {
            "model": pairs["model"].to_numpy()[valid],
            "moved": (key[valid] != ref[valid]).astype(np.int64),
            "rerun": pairs["rerun"].to_numpy(dtype=bool)[valid].astype(np.int64),
        }
    )
    out: dict[str, RerunFloor] = {}
    grouped = table.groupby("model", sort=True).agg(
        moved=("moved", "sum"), answers=("moved", "size"), reruns=("rerun", "sum")
    )
    for model, row in grouped.iterrows():
        n, reruns = int(row["answers"]), int(row["reruns"])
        evidence = _evidence(n - reruns, reruns, name)
        out[str(model)] = RerunFloor.of_counts(int(row["moved"]), n, evidence)
    return out


def measured_floor(
    rows: pd.DataFrame, *, name: str = "", reruns_only: bool = False
) -> RerunFloor | None:
    """The floor one set-up's rows measure (several models pooled as the caller chose); None
    without any."""
    if rows.empty:
        return None
    floors = measured_floors(rows.assign(model=""), name=name, reruns_only=reruns_only)
    return floors.get("")
