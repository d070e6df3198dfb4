"""Which rerun floor a comparison grades its answers against, and the scale its own runs give.

The floor comes from evidence only, in this order (docs/compare.md, "Reruns"): stated
(`--rerun-floor`), a named rerun (`--rerun`), else the repeats and reruns each side's set-up
holds. With none, the answers are graded identical or cannot tell, beside the scale the runs
show (`InputScale`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...core.responses import ANSWERED_STATUSES, NOANSWER, without_reruns
from ..measures import (
    RerunFloor,
    answer_keys,
    measured_floor,
    recorded_decides,
)
from ._pairs import NamedRerun, Side
from ._records import InputScale


def rerun_floor(a: pd.DataFrame, b: pd.DataFrame) -> RerunFloor | None:
    """The floor the repeats and reruns of either side's rows measure (each answered repeat
    beyond an item's first against that first, each rerun against the execution it repeats,
    answers compared); of the two sides' floors, the larger of those that can decide (enough
    answers, a rate of a few percent at most), else the larger thin one, said to be thin.
    None when neither side has any."""
    found = [f for f in (measured_floor(a, name="A"), measured_floor(b, name="B")) if f]
    if not found:
        return None
    strong = [f for f in found if f.weakness() is None]
    return max(strong or found, key=lambda f: f.rate)


def _first_answers(rows: pd.DataFrame) -> pd.Series:
    """Each item's answer key in its first answered ordinary execution."""
    plain = without_reruns(rows)
    answered = plain[plain["status"].astype(str).isin(list(ANSWERED_STATUSES))]
    answered = answered.sort_values(["item_id", "repeat"], kind="stable")
    answered = answered.drop_duplicates("item_id")
    return pd.Series(
        answer_keys(answered).to_numpy(), index=answered["item_id"].astype(str).to_numpy()
    )


def named_rerun_floor(rerun: NamedRerun, side: Side) -> RerunFloor:
    """The floor a named rerun measures: its answers against the side it executes again, item
    by item (each item's first answered execution on each; items with no answer on both, or
    none on one, left out). Refused (`ValueError`) when no item is answered by both."""
    mine, again = _first_answers(side.rows), _first_answers(rerun.side.rows)
    common = mine.index.intersection(again.index)
    a, b = mine[common].to_numpy(dtype=object), again[common].to_numpy(dtype=object)
    known = ~pd.isna(a) & ~pd.isna(b)
    valid = known & ~((a == NOANSWER) & (b == NOANSWER))
    n = int(valid.sum())
    if n == 0:
        raise ValueError(
            f"--rerun {rerun.side.run}: no item is answered both there ({rerun.side.config}) "
            f"and on side {rerun.of} ({side.config}): it measures no floor"
        )
    moved = int((a[valid] != b[valid]).sum())
    evidence = (
        f"between side {rerun.of} ({side.run}, {side.config}) and its rerun "
        f"({rerun.side.run}, {rerun.side.config})"
    )
    return RerunFloor.of_counts(moved, n, evidence)


def choose_floor(
    a: Side, b: Side, rerun: NamedRerun | None, stated: RerunFloor | None
) -> RerunFloor | None:
    """The floor a comparison uses: stated, else the named rerun's, else the sides' own."""
    if stated is not None:
        return stated
    if rerun is not None:
        return named_rerun_floor(rerun, a if rerun.of == "A" else b)
    a_rows = a.evidence if a.evidence is not None else a.rows
    b_rows = b.evidence if b.evidence is not None else b.rows
    return rerun_floor(a_rows, b_rows)


def _recorded(rows: pd.DataFrame, column: str, index: pd.Index, configs: list[str]) -> np.ndarray:
    values = pd.to_numeric(rows[column], errors="coerce")
    table = pd.DataFrame({"item": rows["item_id"].astype(str), "config": rows["config_id"]})
    table["value"] = values.to_numpy()
    wide = table.pivot_table(index="item", columns="config", values="value", aggfunc="first")
    return wide.reindex(index=index, columns=configs).to_numpy(dtype=float)


def _series_scale(rows: pd.DataFrame) -> InputScale | None:
    """The smallest answer change between two configurations of one series whose recorded
    input differs on most of their matched items (visual tokens, else frames sent)."""
    keys = rows.assign(_key=answer_keys(rows).to_numpy(), item=rows["item_id"].astype(str))
    answers = keys.pivot_table(index="item", columns="config_id", values="_key", aggfunc="first")
    first = rows.drop_duplicates("config_id").set_index("config_id")
    # the smaller budget first: by axis place, then id
    place = pd.to_numeric(first["axis_order"], errors="coerce").to_dict()
    configs = sorted(answers.columns, key=lambda c: (float(place.get(c, 0.0)), str(c)))
    if len(configs) < 2:
        return None
    answers = answers[configs]
    labels = first["config_label"]
    key = answers.to_numpy(dtype=object)
    tokens = _recorded(rows, "visual_tokens", answers.index, configs)
    frames = _recorded(rows, "effective_frames", answers.index, configs)
    best: InputScale | None = None
    for i in range(len(configs)):
        for j in range(i + 1, len(configs)):
            both = ~pd.isna(key[:, i]) & ~pd.isna(key[:, j])
            items = int(both.sum())
            for basis, values in (("visual_tokens", tokens), ("effective_frames", frames)):
                rec = both & np.isfinite(values[:, i]) & np.isfinite(values[:, j])
                if not recorded_decides(int(rec.sum()), items):
                    continue
                if 2 * int((values[rec, i] != values[rec, j]).sum()) <= int(rec.sum()):
                    break  # the record says the two inputs are mostly the same
                compared = both & ~((key[:, i] == NOANSWER) & (key[:, j] == NOANSWER))
                n = int(compared.sum())
                changed = int((key[compared, i] != key[compared, j]).sum())
                if n and (best is None or changed / n < best.changed / best.items):
                    best = InputScale(
                        config_a=str(labels[configs[i]]),
                        config_b=str(labels[configs[j]]),
                        basis=basis,
                        changed=changed,
                        items=n,
                    )
                break
    return best


def input_scale(*sides: Side) -> InputScale | None:
    """The smallest answer change the sides' own runs show between two configurations whose
    recorded input differs (each side's model in its run; repeat 0, ordinary rows); None
    where nothing recorded tells inputs apart."""
    found: list[InputScale] = []
    seen: set[tuple[str, str]] = set()
    for side in sides:
        if (side.run, side.model) in seen:
            continue
        seen.add((side.run, side.model))
        rows = without_reruns(side.evidence if side.evidence is not None else side.rows)
        rows = rows[
            (rows["repeat"] == 0) & rows["status"].astype(str).isin(list(ANSWERED_STATUSES))
        ]
        for _, series_rows in rows.groupby(rows["series"].astype(str), sort=True):
            scale = _series_scale(series_rows)
            if scale is not None:
                found.append(scale)
    return min(found, key=lambda s: s.changed / s.items) if found else None
