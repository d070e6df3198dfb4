"""The blocks of `analyze --json`: one series' measures on its visual budgets (binary or
continuous) and, where it has text-only answers, with the text-only answer as budget 0.

A block is its curve and pair tables (here) plus every registered measure of its kind, all
resolved in one bootstrap product, gathered in the layout's order, then validated as the
block's model (a registered measure's key is kept where it was put).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypedDict

import numpy as np

from ...core.responses import NOANSWER
from ._binary import greedy_cover, order_record, pairs, repeat_block
from ._bootstrap import VideoBootstrap
from ._effective import effective_budget
from ._matrix import ResponseMatrix
from ._mcnemar import mcnemar_exact_ps
from ._measure import (
    CURVE,
    BlockData,
    Entry,
    MeasureKind,
    Resolved,
    resolve_block,
    unit_entries,
)
from ._order import with_text_first
from ._registry import measures_for
from ._result_models import Estimate, Heterogeneity, HeterogeneitySkipped
from ._result_series import BinaryBlock, BinaryWithText, ContinuousBlock, ContinuousWithText
from ._stats import counted, selected_ci, smooth_ci, stat

BootFor = Callable[[np.ndarray], VideoBootstrap | None]

#: A block's keys in the layout's order, each value a record (or a registered measure's JSON),
#: before the block's model validates them (the key order places registered measures' keys).
BlockFields = dict[str, object]

#: What the console and the report call the `grid_with_text` block.
GRID_WITH_TEXT_TITLE = (
    "with the text-only answer as budget 0 (the seed paper's definitions, as in its Table 2)"
)


def _curve(res: Resolved, labels: list[str]) -> dict[str, Estimate]:
    """Accuracy (k of n items right) or mean score (over n items) per configuration."""
    values = res.points[CURVE]
    ci = smooth_ci(res.data.boot, values, res.samples[CURVE], res.jack[CURVE])
    n = res.data.n_items
    binary = res.data.kind.startswith("binary")
    return {
        label: counted(stat(values[j], ci[j]), values[j] * n if binary and n else None, n)
        for j, label in enumerate(labels)
    }


class _Header(TypedDict):
    """What a block on the visual budgets opens with: its axis and its items."""

    axis: list[str]
    frames: list[int]
    n_items: int
    n_videos: int
    n_dropped: int
    drop_reasons: dict[str, int]


def _header(m: ResponseMatrix) -> _Header:
    return _Header(
        axis=list(m.labels),
        frames=[int(f) for f in m.frames],
        n_items=m.n_items,
        n_videos=len(set(m.video_ids.tolist())),
        n_dropped=m.n_dropped,
        drop_reasons=dict(m.drop_reasons),
    )


def _flip_counts(
    y: np.ndarray, a_idx: np.ndarray, b_idx: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """How many items flip down (y_a = 1, y_b = 0) and up on each pair. On 0/1 outcomes these
    are column sums minus the co-occurrence counts y^T y, integers that float64 holds exactly,
    so they equal the per-pair item sums, which cost an [n, pairs] array per term (0.1 s a
    model of 100,000 items and 45 pairs)."""
    if ((y == 0) | (y == 1)).all():
        column = y.sum(axis=0)
        both = (y.T @ y)[a_idx, b_idx]
        return column[a_idx] - both, column[b_idx] - both
    return (
        (y[:, a_idx] * (1 - y[:, b_idx])).sum(axis=0),
        ((1 - y[:, a_idx]) * y[:, b_idx]).sum(axis=0),
    )


def _pair_tables(
    res: Resolved, y: np.ndarray, labels: list[str], pair_list: list[tuple[int, int]]
) -> tuple[dict[str, dict[str, Estimate]], dict[str, float], dict[str, Estimate]]:
    """Flips down and up, the exact McNemar p and complementarity of every comparable pair.

    Only the joint P(y_a = 1, y_b = 1) is resampled; the rest follows from it and the
    accuracies: down = acc_a - joint, up = acc_b - joint, mean(max(y_a, y_b)) = acc_a + acc_b -
    joint."""
    flip_down: dict[str, Estimate] = {}
    flip_up: dict[str, Estimate] = {}
    mcnemar: dict[str, float] = {}
    complementarity: dict[str, Estimate] = {}
    if pair_list:
        boot = res.data.boot
        a_idx = np.array([a for a, _ in pair_list], dtype=int)
        b_idx = np.array([b for _, b in pair_list], dtype=int)
        derived: list[dict[str, np.ndarray]] = []
        for source in (res.points, res.samples, res.jack):
            acc, joint = source[CURVE], source["joint"]
            derived.append(
                {
                    "down": acc[..., a_idx] - joint,
                    "up": acc[..., b_idx] - joint,
                    "pair_max": acc[..., a_idx] + acc[..., b_idx] - joint,
                }
            )
        point, resampled, left_out = derived
        acc_p, acc_s = res.points[CURVE], res.samples[CURVE]
        fd_ci = smooth_ci(boot, point["down"], resampled["down"], left_out["down"])
        fu_ci = smooth_ci(boot, point["up"], resampled["up"], left_out["up"])
        comp_p = point["pair_max"] - np.maximum(acc_p[a_idx], acc_p[b_idx])
        comp_ci = selected_ci(
            boot,
            np.stack([acc_p[a_idx], acc_p[b_idx]], axis=1),
            np.stack([acc_s[:, a_idx], acc_s[:, b_idx]], axis=2),
            point["pair_max"],
            resampled["pair_max"],
        )
        down_counts, up_counts = _flip_counts(y, a_idx, b_idx)
        exact_ps = mcnemar_exact_ps(down_counts, up_counts)
        for p, (a, b) in enumerate(pair_list):
            arrow = f"{labels[a]}->{labels[b]}"
            n = y.shape[0]
            flip_down[arrow] = counted(stat(point["down"][p], fd_ci[p]), down_counts[p], n)
            flip_up[arrow] = counted(stat(point["up"][p], fu_ci[p]), up_counts[p], n)
            mcnemar[arrow] = float(exact_ps[p])
            complementarity[f"{labels[a]}|{labels[b]}"] = stat(comp_p[p], comp_ci[p])
    return {"flip_down": flip_down, "flip_up": flip_up}, mcnemar, complementarity


def noanswer_rates(m: ResponseMatrix, labels: list[str]) -> dict[str, Estimate]:
    """Each configuration's share of `noanswer` answers (as codes where the matrix has them)."""
    codes = m.answer_codes
    answers: np.ndarray = m.answers if codes is None else codes.cells
    noanswer: object = NOANSWER if codes is None else codes.code_of(NOANSWER)
    n = answers.shape[0]
    return {
        label: stat(float(np.mean(answers[:, j] == noanswer)) if n else None, None)
        for j, label in enumerate(labels)
    }


def _block_data(
    kind: MeasureKind,
    m: ResponseMatrix,
    boot: VideoBootstrap | None,
    eps: float,
    y: np.ndarray | None = None,
    labels: list[str] | None = None,
) -> BlockData:
    order = m.budget_order
    if kind.endswith("_with_text"):
        less = with_text_first(order).less if order.multi_axis else None
    else:
        less = order.less if order.multi_axis else None
    return BlockData(
        kind=kind,
        matrix=m,
        y=m.y if y is None else y,
        labels=tuple(m.labels if labels is None else labels),
        less=less,
        order=order,
        eps=eps,
        boot=boot,
    )


def _floor(m: ResponseMatrix) -> BlockFields:
    """The block's `rerun_floor` key: the floor its same-input verdicts used (none: absent)."""
    return {} if m.rerun_floor is None else {"rerun_floor": m.rerun_floor}


def binary_block(
    m: ResponseMatrix, boot: VideoBootstrap | None, *, chains: bool = True
) -> BinaryBlock:
    """Every binary measure of docs/measures.md for one matrix (repeat 0), with intervals, and
    with `chains` the block of each chain of a multi-axis grid."""
    return BinaryBlock.model_validate(binary_fields(m, boot, chains=chains))


def binary_fields(
    m: ResponseMatrix, boot: VideoBootstrap | None, *, chains: bool = True
) -> BlockFields:
    """`binary_block`'s keys, which a series' block extends (`analyze`)."""
    data = _block_data("binary", m, boot, eps=0.0)
    y, labels, order = data.y, list(m.labels), m.budget_order
    pair_list = order.comparable_pairs if order.multi_axis else pairs(y.shape[1])
    extra: dict[str, np.ndarray] = {}
    if pair_list:
        a_idx = np.array([a for a, _ in pair_list], dtype=int)
        b_idx = np.array([b for _, b in pair_list], dtype=int)
        extra["joint"] = y[:, a_idx] * y[:, b_idx]
    units = measures_for("binary")
    res = resolve_block(data, units, extra)
    entries = unit_entries(data, units, res)
    flips, mcnemar, complementarity = _pair_tables(res, y, labels, pair_list)
    block: BlockFields = {
        "kind": "binary",
        **_header(m),
        "noanswer_rate": noanswer_rates(m, labels),
        "accuracy": _curve(res, labels),
        **entries["headline"],
        **flips,
        "adjacent": [f"{labels[a]}->{labels[b]}" for a, b in order.adjacent],
        "effective_budget": effective_budget(m),
        **_floor(m),
        "scoring_rules": list(m.scoring_rules),
        "order": order_record(m),
        "mcnemar_p": mcnemar,
        "complementarity": complementarity,
        "greedy_cover": greedy_cover(y, labels),
        "n_text_only": int(data.has_text.sum()),
        **entries["text"],
    }
    if m.n_repeats > 1:
        block.update(repeat_block(m, boot))
    if chains and order.multi_axis:
        block["chains"] = {
            name: binary_block(m.chain(line), boot, chains=False)
            for name, line in order.chains.items()
        }
    return block


def continuous_block(
    m: ResponseMatrix, boot: VideoBootstrap | None, eps: float = 0.1, *, chains: bool = True
) -> ContinuousBlock:
    """Continuous measures (open QA, summary, dialogue) on scores in [0, 1]."""
    return ContinuousBlock.model_validate(continuous_fields(m, boot, eps, chains=chains))


def continuous_fields(
    m: ResponseMatrix, boot: VideoBootstrap | None, eps: float = 0.1, *, chains: bool = True
) -> BlockFields:
    """`continuous_block`'s keys, which a series' block extends (`analyze`)."""
    data = _block_data("continuous", m, boot, eps)
    units = measures_for("continuous")
    res = resolve_block(data, units)
    entries = unit_entries(data, units, res)
    header = _header(m)
    block: BlockFields = {
        "kind": "continuous",
        "metric": m.metric,
        **header,
        "eps": eps,
        "mean_score": _curve(res, header["axis"]),
        **entries["headline"],
        "order": order_record(m),
        "effective_budget": effective_budget(m),
        **_floor(m),
        "scoring_rules": list(m.scoring_rules),
    }
    order = m.budget_order
    if chains and order.multi_axis:
        block["chains"] = {
            name: continuous_block(m.chain(line), boot, eps, chains=False)
            for name, line in order.chains.items()
        }
    block["n_text_only"] = int(data.has_text.sum())
    block.update(entries["text"])
    return block


def with_text_matrix(m: ResponseMatrix) -> tuple[ResponseMatrix, np.ndarray, list[str], int]:
    """The items that have a text-only answer, their [n, K+1] matrix (text-only first), the
    labels, and how many items of the visual matched grid lack a text-only answer."""
    has_text = ~np.isnan(m.text_value)
    sub = m if has_text.all() else m.subset(has_text)
    y = np.column_stack([sub.text_value, sub.y]) if sub.n_items else np.zeros((0, m.n_configs + 1))
    labels = [m.text_label or "text-only", *m.labels]
    return sub, y, labels, int((~has_text).sum())


class _WithTextHeader(TypedDict):
    """What a `grid_with_text` block opens with: its grid (text-only first) and its items."""

    configs: list[str]
    multi_axis: bool
    n_items: int
    n_videos: int
    n_dropped: int
    drop_reasons: dict[str, int]


def _with_text_header(
    sub: ResponseMatrix, m: ResponseMatrix, labels: list[str], without_text: int
) -> _WithTextHeader:
    reasons = dict(m.drop_reasons)
    if without_text:
        reasons["no_text_only"] = without_text
    return _WithTextHeader(
        configs=labels,
        multi_axis=m.budget_order.multi_axis,
        n_items=sub.n_items,
        n_videos=len(set(sub.video_ids.tolist())),
        n_dropped=m.n_dropped + without_text,
        drop_reasons=reasons,
    )


def _grid_with_text(
    kind: MeasureKind, m: ResponseMatrix, boot_for: BootFor, eps: float
) -> tuple[_WithTextHeader, dict[str, Entry], Resolved] | None:
    if not (~np.isnan(m.text_value)).any():
        return None
    sub, y, labels, without_text = with_text_matrix(m)
    boot = boot_for(sub.video_ids) if sub.n_items else None
    data = _block_data(kind, sub, boot, eps, y=y, labels=labels)
    units = measures_for(kind)
    res = resolve_block(data, units)
    header = _with_text_header(sub, m, labels, without_text)
    return header, unit_entries(data, units, res)["headline"], res


def binary_grid_with_text(
    m: ResponseMatrix,
    boot_for: BootFor,
    heterogeneity: Heterogeneity | HeterogeneitySkipped | None = None,
) -> BinaryWithText | None:
    """The `binary_with_text` measures on text-only < c_1 < ... < c_K, with the additive-model
    test on that grid where one is given; None without any text-only answer."""
    built = _grid_with_text("binary_with_text", m, boot_for, 0.0)
    if built is None:
        return None
    header, entries, res = built
    block: BlockFields = {**header, "accuracy": _curve(res, header["configs"]), **entries}
    if heterogeneity is not None:
        block["heterogeneity"] = heterogeneity
    return BinaryWithText.model_validate(block)


def continuous_grid_with_text(
    m: ResponseMatrix, boot_for: BootFor, eps: float
) -> ContinuousWithText | None:
    """The continuous counterpart: the `continuous_with_text` measures, text-only first."""
    built = _grid_with_text("continuous_with_text", m, boot_for, eps)
    if built is None:
        return None
    header, entries, res = built
    return ContinuousWithText.model_validate(
        {
            **header,
            "metric": m.metric,
            "eps": eps,
            "mean_score": _curve(res, header["configs"]),
            **entries,
        }
    )
