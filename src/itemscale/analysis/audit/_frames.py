"""The frame audit: what changed in the model's input across a harmful transition (right at
budget j, wrong at a larger k on one axis), and why the answer may have changed with it.

It compares what the model was actually shown (the recorded `frame_indices`,
`frame_timestamps` and `pixels`, never what the protocol asked for) and labels each transition
with one pathway by a fixed rule order (docs/report.md; `RULES_VERSION` changes with the rules),
so two people auditing one run get the same labels. It reads the response table alone: an
imported lmms-eval run and a sweep are audited by the same code.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import numpy as np
import pandas as pd

from ...core.errors import ItemscaleError
from ...core.items import Item
from ...core.responses import ANSWERED_STATUSES, NOANSWER
from ..measures import budget_order

#: Pathway labels in order of precedence: the first rule that holds names the transition.
PATHWAYS: Final[tuple[str, ...]] = (
    "evidence_dropped",
    "text_prior",
    "evidence_diluted",
    "distractor_added",
    "unexplained",
)
#: Version of the labelling rules below; stored with every automatic label.
#: 2: an evidence span is half-open, [start, end) (version 1 counted a frame at `end`).
RULES_VERSION: Final[int] = 2

PairMode = Literal["adjacent", "all"]

#: Columns of the transitions table, in order.
TRANSITION_COLUMNS: Final[tuple[str, ...]] = (
    "transition_id",
    "model",
    "series",
    "item_id",
    "video_id",
    "repeat",
    "from_config_id",
    "from_label",
    "from_frames",
    "to_config_id",
    "to_label",
    "to_frames",
    "adjacent",
    "from_value",
    "to_value",
    "from_answer",
    "to_answer",
    "text_answer",
    "frames_from",
    "frames_to",
    "kept",
    "dropped",
    "added",
    "n_kept",
    "n_dropped",
    "n_added",
    "pixels_from",
    "pixels_to",
    "evidence_known",
    "evidence_from",
    "evidence_to",
    "evidence_added",
    "pathway",
    "reason",
)


class AuditError(ItemscaleError, ValueError):
    """Input the audit cannot use, named by its column or item."""


@dataclass(frozen=True)
class TransitionFacts:
    """What the labelling rules look at for one transition (counts over distinct frames; None
    where the spans, timestamps or indices it needs are not recorded)."""

    frames_from: tuple[int, ...] | None
    frames_to: tuple[int, ...] | None
    evidence_from: int | None
    evidence_to: int | None
    evidence_added: int | None
    pixels_from: int | None
    pixels_to: int | None
    to_answer: str | None
    text_answer: str | None


def classify_pathway(facts: TransitionFacts) -> tuple[str, str]:
    """(pathway, the reason in words) for one harmful transition: the first rule that holds, in
    `PATHWAYS` order (docs/report.md states each rule). Without evidence spans, `distractor_added`
    needs every frame of j kept at k: otherwise a dropped frame could be the cause."""
    ev_j, ev_k = facts.evidence_from, facts.evidence_to
    known = ev_j is not None and ev_k is not None
    if known and ev_j and not ev_k:
        return "evidence_dropped", f"{ev_j} evidence frame(s) at j, none at k"
    answer = facts.to_answer
    if answer is not None and answer != NOANSWER and answer == facts.text_answer:
        return "text_prior", f"wrong answer at k ({answer}) equals the text-only answer"
    px_j, px_k = facts.pixels_from, facts.pixels_to
    fewer_pixels = px_j is not None and px_k is not None and px_k < px_j
    if known and ev_j and ev_k and facts.frames_from and facts.frames_to:
        n_j, n_k = len(set(facts.frames_from)), len(set(facts.frames_to))
        lower_share = ev_k * n_j < ev_j * n_k
        if lower_share or fewer_pixels:
            why = []
            if lower_share:
                why.append(f"evidence share {ev_j}/{n_j} -> {ev_k}/{n_k}")
            if fewer_pixels:
                why.append(f"pixels per frame {px_j} -> {px_k}")
            return "evidence_diluted", "; ".join(why)
    if facts.frames_from is not None and facts.frames_to is not None:
        before, after = set(facts.frames_from), set(facts.frames_to)
        added = after - before
        if known:
            distractors = len(added) - int(facts.evidence_added or 0)
            if distractors > 0:
                return "distractor_added", f"{distractors} non-evidence frame(s) added at k"
        elif added and before <= after:
            return (
                "distractor_added",
                f"every frame of j kept, {len(added)} frame(s) added at k (no evidence spans)",
            )
    return "unexplained", "no rule applies"


def _absent(raw: object) -> bool:
    return raw is None or (isinstance(raw, float) and np.isnan(raw))


def _frame_list(raw: object) -> tuple[int, ...] | None:
    return None if _absent(raw) else tuple(int(x) for x in np.asarray(raw).tolist())


def _time_list(raw: object) -> tuple[float, ...] | None:
    return None if _absent(raw) else tuple(float(x) for x in np.asarray(raw).tolist())


def _optional_int(raw: object) -> int | None:
    if _absent(raw) or raw is pd.NA:
        return None
    return int(str(raw)) if isinstance(raw, str) else int(raw)  # type: ignore[call-overload]


def _optional_str(raw: object) -> str | None:
    return None if _absent(raw) else str(raw)


def evidence_frames(
    indices: Sequence[int] | None,
    timestamps: Sequence[float] | None,
    spans: Sequence[tuple[float, float]],
) -> set[int] | None:
    """The frame indices whose timestamp falls inside an evidence span, or None when the item
    has no spans or the frames have no timestamps.

    A span is half-open, [start, end): a frame at `start` is evidence, a frame at `end` is not.
    The synthetic suite writes a span as (first drawn frame, first frame after it) / fps, so a
    frame at `end` is the first frame without the event; spans imported in seconds are read the
    same way. A span with end == start holds no frame."""
    if not spans or indices is None or timestamps is None:
        return None
    if len(indices) != len(timestamps):
        raise AuditError(
            f"{len(indices)} frame indices but {len(timestamps)} frame timestamps in one response"
        )
    t = np.asarray(timestamps, dtype=float)
    inside = np.zeros(len(t), dtype=bool)
    for start, end in spans:
        inside |= (t >= start) & (t < end)
    return {int(i) for i, hit in zip(indices, inside.tolist(), strict=True) if hit}


def _transition_id(model: str, series: str, item: str, repeat: int, a: str, b: str) -> str:
    key = "\x1f".join((model, series, item, str(repeat), a, b))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def _value_column(rows: pd.DataFrame) -> pd.Series:
    """Correctness where recorded, else the continuous score."""
    return rows["correct"].astype(float).fillna(rows["score"].astype(float))


def audit_transitions(
    responses: pd.DataFrame,
    items: Iterable[Item] | Mapping[str, Item] | None = None,
    *,
    pairs: PairMode = "adjacent",
    eps: float = 0.1,
    repeat: int = 0,
) -> pd.DataFrame:
    """Every harmful transition of the table, with its frame audit and pathway label.

    `pairs="adjacent"` audits neighbouring budgets only (every harmful item has at least one
    adjacent harmful step, so no item is missed); `"all"` audits every j < k. Binary items are
    harmful when correct at j and wrong at k; scored items when s_j - s_k > `eps`. Only cells
    that were answered at both budgets are audited; frames == 0 rows are the text-only baseline,
    never a budget. One repeat (default 0, what the binary measures use) is audited.
    """
    if pairs not in ("adjacent", "all"):
        raise AuditError(f"pairs must be 'adjacent' or 'all', not {pairs!r}")
    item_map = dict(items) if isinstance(items, Mapping) else {it.item_id: it for it in items or ()}
    df = responses[responses["repeat"] == repeat]
    answered = df[df["status"].isin(ANSWERED_STATUSES)].copy()
    answered["_value"] = _value_column(answered)
    answered = answered[answered["_value"].notna()]
    text = answered[answered["frames"] == 0].sort_values(["axis_order", "config_label"])
    # the first text-only configuration per (model, item), as the measures take it
    text_answer: dict[tuple[str, str], str | None] = {}
    for m, i, a in zip(text["model"], text["item_id"], text["answer"], strict=True):
        text_answer.setdefault((str(m), str(i)), _optional_str(a))
    grid = answered[answered["frames"] > 0]
    records: list[dict[str, object]] = []
    # binary (correctness) and scored items of one axis are audited apart: each has its own
    # notion of "harmful"
    grid = grid.assign(_binary=grid["correct"].notna())
    for (model, series, _), rows in grid.groupby(["model", "series", "_binary"], sort=True):
        records.extend(
            _audit_axis(str(model), str(series), rows, item_map, text_answer, pairs, eps, repeat)
        )
    out = pd.DataFrame.from_records(records, columns=list(TRANSITION_COLUMNS))
    for col in ("n_kept", "n_dropped", "n_added", "repeat", "from_frames", "to_frames"):
        out[col] = out[col].astype("int64")
    for col in ("pixels_from", "pixels_to", "evidence_from", "evidence_to", "evidence_added"):
        out[col] = out[col].astype("Int64")
    out["adjacent"] = out["adjacent"].astype(bool)
    out["evidence_known"] = out["evidence_known"].astype(bool)
    return out


def _audit_axis(
    model: str,
    series: str,
    rows: pd.DataFrame,
    item_map: Mapping[str, Item],
    text_answer: Mapping[tuple[str, str], str | None],
    pairs: PairMode,
    eps: float,
    repeat: int,
) -> list[dict[str, object]]:
    configs = (
        rows.groupby("config_id", sort=False)
        .agg(
            label=("config_label", "first"),
            order=("axis_order", "first"),
            frames=("frames", "first"),
            pixels=("pixels", "first"),
        )
        .reset_index()
        .assign(_px=lambda t: t["pixels"].astype(float).fillna(-1.0))
        .sort_values(["order", "frames", "_px", "label"], kind="stable")
    )
    config_ids = configs["config_id"].astype(str).tolist()
    item_ids = np.sort(rows["item_id"].unique().astype(str))
    n, k = len(item_ids), len(config_ids)
    ipos = pd.Index(item_ids).get_indexer(pd.Index(rows["item_id"].astype(str)))
    cpos = pd.Index(config_ids).get_indexer(pd.Index(rows["config_id"].astype(str)))
    values = np.full((n, k), np.nan)
    values[ipos, cpos] = rows["_value"].to_numpy(dtype=float)
    binary = rows["correct"].notna().any()
    row_at = np.full((n, k), -1, dtype=np.int64)
    row_at[ipos, cpos] = np.arange(len(rows))
    # the budget order analyze uses: adjacent = one step along one axis, others fixed
    order = budget_order(
        configs["frames"].to_numpy(dtype=float),
        configs["pixels"].to_numpy(dtype=float, na_value=np.nan),
        tuple(str(x) for x in configs["label"]),
    )
    adjacent = set(order.adjacent)
    pair_list = list(order.adjacent) if pairs == "adjacent" else order.comparable_pairs
    columns = {
        c: rows[c].to_numpy(dtype=object)
        for c in (
            "config_id",
            "config_label",
            "frames",
            "video_id",
            "answer",
            "pixels",
            "frame_indices",
            "frame_timestamps",
            "_value",
        )
    }
    out: list[dict[str, object]] = []
    for j, b in pair_list:
        vj, vk = values[:, j], values[:, b]
        both = ~np.isnan(vj) & ~np.isnan(vk)
        harmful = both & (vj >= 0.5) & (vk < 0.5) if binary else both & (vj - vk > eps)
        for i in np.flatnonzero(harmful):
            rj = {c: arr[int(row_at[i, j])] for c, arr in columns.items()}
            rk = {c: arr[int(row_at[i, b])] for c, arr in columns.items()}
            item_id = str(item_ids[i])
            out.append(
                _one_transition(
                    model,
                    series,
                    item_id,
                    repeat,
                    rj,
                    rk,
                    (j, b) in adjacent,
                    item_map.get(item_id),
                    text_answer.get((model, item_id)),
                )
            )
    return out


def _one_transition(
    model: str,
    series: str,
    item_id: str,
    repeat: int,
    rj: Mapping[str, Any],
    rk: Mapping[str, Any],
    adjacent: bool,
    item: Item | None,
    text: str | None,
) -> dict[str, object]:
    fj, fk = _frame_list(rj["frame_indices"]), _frame_list(rk["frame_indices"])
    spans = [(s.start, s.end) for s in item.evidence] if item is not None else []
    where = f"item {item_id!r} ({model}, {series})"
    try:
        ev_j = evidence_frames(fj, _time_list(rj["frame_timestamps"]), spans)
        ev_k = evidence_frames(fk, _time_list(rk["frame_timestamps"]), spans)
    except AuditError as exc:
        raise AuditError(f"{where}: {exc}") from exc
    known = ev_j is not None and ev_k is not None
    set_j, set_k = set(fj or ()), set(fk or ())
    kept = sorted(set_j & set_k)
    dropped = sorted(set_j - set_k)
    added = sorted(set_k - set_j)
    ev_added = len(set(added) & ev_k) if known and ev_k is not None else None
    facts = TransitionFacts(
        frames_from=fj,
        frames_to=fk,
        evidence_from=len(ev_j) if known and ev_j is not None else None,
        evidence_to=len(ev_k) if known and ev_k is not None else None,
        evidence_added=ev_added,
        pixels_from=_optional_int(rj["pixels"]),
        pixels_to=_optional_int(rk["pixels"]),
        to_answer=_optional_str(rk["answer"]),
        text_answer=text,
    )
    pathway, reason = classify_pathway(facts)
    return {
        "transition_id": _transition_id(
            model, series, item_id, repeat, str(rj["config_id"]), str(rk["config_id"])
        ),
        "model": model,
        "series": series,
        "item_id": item_id,
        "video_id": str(rj["video_id"]),
        "repeat": repeat,
        "from_config_id": str(rj["config_id"]),
        "from_label": str(rj["config_label"]),
        "from_frames": int(rj["frames"]),
        "to_config_id": str(rk["config_id"]),
        "to_label": str(rk["config_label"]),
        "to_frames": int(rk["frames"]),
        "adjacent": adjacent,
        "from_value": float(rj["_value"]),
        "to_value": float(rk["_value"]),
        "from_answer": _optional_str(rj["answer"]),
        "to_answer": facts.to_answer,
        "text_answer": text,
        "frames_from": list(fj) if fj is not None else None,
        "frames_to": list(fk) if fk is not None else None,
        "kept": kept,
        "dropped": dropped,
        "added": added,
        "n_kept": len(kept),
        "n_dropped": len(dropped),
        "n_added": len(added),
        "pixels_from": facts.pixels_from,
        "pixels_to": facts.pixels_to,
        "evidence_known": known,
        "evidence_from": facts.evidence_from,
        "evidence_to": facts.evidence_to,
        "evidence_added": ev_added,
        "pathway": pathway,
        "reason": reason,
    }


def pathway_counts(transitions: pd.DataFrame) -> dict[str, dict[str, dict[str, int]]]:
    """{model: {series: {pathway: count}}}, every pathway present (zeros included)."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for (model, series), rows in transitions.groupby(["model", "series"], sort=True):
        counts = rows["pathway"].value_counts()
        out.setdefault(str(model), {})[str(series)] = {p: int(counts.get(p, 0)) for p in PATHWAYS}
    return out
