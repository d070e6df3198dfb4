"""From the long response table to items x configurations matrices on the matched grid.

Every measure runs on the matched grid: the items that have an answered (`ok` or `noanswer`)
response for every configuration and every repeat of one (model, series). Items left out are
counted by reason, never silently dropped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from ..responses import ANSWERED_STATUSES

Kind = Literal["binary", "continuous"]
CONTINUOUS_METRICS = ("score", "token_f1", "rouge_l", "exact_match")


@dataclass(frozen=True, eq=False)
class ResponseMatrix:
    """One (model, series, kind) slice of the table as aligned numpy arrays.

    `values[i, k, r]` is correctness (binary) or score (continuous) of item i at configuration k
    in repeat r. Binary measures use repeat 0 (what a single run would show); repeat measures
    use all repeats.
    """

    model: str
    series: str
    kind: Kind
    metric: str
    labels: tuple[str, ...]
    config_ids: tuple[str, ...]
    frames: np.ndarray  # [K] int
    pixels: np.ndarray  # [K] float, nan when unknown
    item_ids: np.ndarray  # [n] object
    video_ids: np.ndarray  # [n] object
    values: np.ndarray  # [n, K, R] float
    answers: np.ndarray  # [n, K] object (repeat 0), None when absent
    confidence: np.ndarray  # [n, K] float, nan when absent
    visual_tokens: np.ndarray  # [n, K] float, nan when absent
    frame_indices: np.ndarray  # [n, K] object: int arrays or None
    text_answer: np.ndarray  # [n] object: the text-only answer, None when absent
    text_value: np.ndarray  # [n] float: text-only correctness/score, nan when absent
    attributes: tuple[dict[str, str], ...]
    n_dropped: int
    drop_reasons: dict[str, int] = field(default_factory=dict)

    @property
    def n_items(self) -> int:
        return int(self.values.shape[0])

    @property
    def n_configs(self) -> int:
        return int(self.values.shape[1])

    @property
    def n_repeats(self) -> int:
        return int(self.values.shape[2])

    @property
    def y(self) -> np.ndarray:
        """Repeat-0 matrix [n, K]."""
        return self.values[:, :, 0]

    def subset(self, mask: np.ndarray) -> ResponseMatrix:
        """The same matrix restricted to the items where `mask` is true."""
        mask = np.asarray(mask, dtype=bool)
        return ResponseMatrix(
            model=self.model,
            series=self.series,
            kind=self.kind,
            metric=self.metric,
            labels=self.labels,
            config_ids=self.config_ids,
            frames=self.frames,
            pixels=self.pixels,
            item_ids=self.item_ids[mask],
            video_ids=self.video_ids[mask],
            values=self.values[mask],
            answers=self.answers[mask],
            confidence=self.confidence[mask],
            visual_tokens=self.visual_tokens[mask],
            frame_indices=self.frame_indices[mask],
            text_answer=self.text_answer[mask],
            text_value=self.text_value[mask],
            attributes=tuple(a for a, m in zip(self.attributes, mask, strict=True) if m),
            n_dropped=self.n_dropped,
            drop_reasons=dict(self.drop_reasons),
        )


def _parse_attributes(raw: object) -> dict[str, str]:
    if raw is None or (isinstance(raw, float) and np.isnan(raw)):
        return {}
    parsed = json.loads(str(raw))
    if not isinstance(parsed, dict):
        return {}
    return {str(k): str(v) for k, v in parsed.items()}


def _assign_kind(df: pd.DataFrame) -> pd.Series:
    """Kind per row: mcqa-like rows are binary, the rest continuous (failures inherit the kind of
    their task so they land in the right matrix's drop counts)."""
    return pd.Series(
        np.where(df["task_kind"].to_numpy() == "mcqa", "binary", "continuous"), index=df.index
    )


def _text_only_rows(model_rows: pd.DataFrame) -> pd.DataFrame:
    text = model_rows[(model_rows["frames"] == 0) & (model_rows["repeat"] == 0)]
    if text.empty:
        return text
    first_config = text.sort_values(["axis_order", "config_label"])["config_id"].iloc[0]
    return pd.DataFrame(text[text["config_id"] == first_config])


def build_matrices(
    df: pd.DataFrame, *, metric: str = "score", models: list[str] | None = None
) -> list[ResponseMatrix]:
    """One matrix per (model, series, kind) on its matched grid.

    `metric` picks the continuous value (`score`, `token_f1`, `rouge_l`, `exact_match`).
    Rows with `frames == 0` are the text-only baseline: not on any axis, attached to every
    matrix of their model.
    """
    if metric not in CONTINUOUS_METRICS:
        raise ValueError(f"unknown metric {metric!r}; allowed: {', '.join(CONTINUOUS_METRICS)}")
    out: list[ResponseMatrix] = []
    kinds = _assign_kind(df)
    for model in sorted(df["model"].unique()):
        if models is not None and model not in models:
            continue
        model_rows = df[df["model"] == model]
        text_rows = _text_only_rows(model_rows)
        grid_rows = model_rows[model_rows["frames"] > 0]
        for (series, kind), rows in grid_rows.groupby(
            [grid_rows["series"], kinds.loc[grid_rows.index]], sort=True
        ):
            out.append(_build_one(str(model), str(series), kind, metric, rows, text_rows))
    return out


def _build_one(
    model: str,
    series: str,
    kind: Kind,
    metric: str,
    rows: pd.DataFrame,
    text_rows: pd.DataFrame,
) -> ResponseMatrix:
    configs = (
        rows.groupby("config_id", sort=False)
        .agg(
            label=("config_label", "first"),
            order=("axis_order", "first"),
            frames=("frames", "first"),
            pixels=("pixels", "first"),
        )
        .reset_index()
        .sort_values(["order", "frames", "pixels", "label"], kind="stable")
    )
    config_ids = tuple(str(c) for c in configs["config_id"])
    labels = tuple(str(c) for c in configs["label"])
    repeats = np.sort(rows["repeat"].unique())
    items = np.sort(rows["item_id"].unique().astype(object))
    n, k, r = len(items), len(config_ids), len(repeats)

    item_pos = pd.Index(items).get_indexer(pd.Index(rows["item_id"]))
    config_pos = pd.Index(config_ids).get_indexer(pd.Index(rows["config_id"]))
    repeat_pos = pd.Index(repeats).get_indexer(pd.Index(rows["repeat"]))
    value_col = "correct" if kind == "binary" else metric
    value = rows[value_col].to_numpy(dtype=float, na_value=np.nan)
    answered = rows["status"].isin(ANSWERED_STATUSES).to_numpy()

    values = np.full((n, k, r), np.nan)
    ok = np.zeros((n, k, r), dtype=bool)
    status = np.full((n, k, r), "missing", dtype=object)
    values[item_pos, config_pos, repeat_pos] = value
    ok[item_pos, config_pos, repeat_pos] = answered & ~np.isnan(value)
    status[item_pos, config_pos, repeat_pos] = np.where(
        answered & np.isnan(value), f"no_{value_col}", rows["status"].to_numpy(dtype=object)
    )

    matched = ok.all(axis=(1, 2))
    drop_reasons: dict[str, int] = {}
    if not matched.all():
        bad = ~ok[~matched]
        reasons = status[~matched]
        for reason in sorted(set(reasons[bad].tolist())):
            drop_reasons[str(reason)] = int(((reasons == reason) & bad).any(axis=(1, 2)).sum())

    sel = rows["repeat"] == repeats[0]
    first = rows[sel]
    fi = item_pos[sel.to_numpy()]
    fc = config_pos[sel.to_numpy()]
    answers = np.full((n, k), None, dtype=object)
    answers[fi, fc] = first["answer"].to_numpy(dtype=object)
    confidence = np.full((n, k), np.nan)
    confidence[fi, fc] = first["confidence"].to_numpy(dtype=float, na_value=np.nan)
    tokens = np.full((n, k), np.nan)
    tokens[fi, fc] = first["visual_tokens"].to_numpy(dtype=float, na_value=np.nan)
    indices = np.full((n, k), None, dtype=object)
    indices[fi, fc] = first["frame_indices"].to_numpy(dtype=object)

    video_of = rows.groupby("item_id")["video_id"].first()
    attrs_of = rows.groupby("item_id")["attributes"].first()
    text_answer = np.full(n, None, dtype=object)
    text_value = np.full(n, np.nan)
    if not text_rows.empty:
        text_ok = text_rows[text_rows["status"].isin(ANSWERED_STATUSES)]
        tpos = pd.Index(items).get_indexer(text_ok["item_id"])
        keep = tpos >= 0
        text_answer[tpos[keep]] = text_ok["answer"].to_numpy(dtype=object)[keep]
        text_value[tpos[keep]] = text_ok[value_col].to_numpy(dtype=float, na_value=np.nan)[keep]

    pixels = configs["pixels"].to_numpy(dtype=float, na_value=np.nan)
    return ResponseMatrix(
        model=model,
        series=series,
        kind=kind,
        metric="correct" if kind == "binary" else metric,
        labels=labels,
        config_ids=config_ids,
        frames=configs["frames"].to_numpy(dtype=np.int64),
        pixels=pixels,
        item_ids=items[matched],
        video_ids=video_of.reindex(items).to_numpy(dtype=object)[matched],
        values=values[matched],
        answers=answers[matched],
        confidence=confidence[matched],
        visual_tokens=tokens[matched],
        frame_indices=indices[matched],
        text_answer=text_answer[matched],
        text_value=text_value[matched],
        attributes=tuple(
            _parse_attributes(a) for a in attrs_of.reindex(items).to_numpy(dtype=object)[matched]
        ),
        n_dropped=int((~matched).sum()),
        drop_reasons=drop_reasons,
    )
