"""The headline measures of docs/measures.md as registered units, each declared below its
definition with its place in the order the console and the report show them.

One instance per block it renders differently in: the visual-only block keeps the text-only
answer off the axis, the `*_with_text` blocks put it first (the seed paper's reading), and
their labels say which. Indicators come from `_binary`, where their definitions are tested.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._binary import (
    beneficial_indicator,
    harmful_indicator,
    matrix_text_overwrite_counts,
    terminal_regression_indicator,
)
from ._measure import (
    CURVE,
    ITEM_MAX,
    BlockData,
    BlockLike,
    Gloss,
    ItemShare,
    Measure,
    Resolved,
    counted_text,
    entry_of,
    no_value,
    stat_text,
)
from ._registry import builtin_measure
from ._result_models import BestFixed, Estimate, TextOverwriteCounts
from ._stats import best_stat, count_of, gap_stat


@dataclass(frozen=True, kw_only=True)
class BestFixedMeasure(Measure):
    """The configuration with the highest curve value (ties to the lower budget), and that
    value, with a selection-aware interval (the best is chosen again in every resample)."""

    def compute(self, data: BlockData, res: Resolved) -> dict[str, BestFixed]:
        n, k = data.y.shape
        if not (n and k):
            return {self.key: BestFixed(config=None, value=None, ci=None)}
        values = res.point(CURVE)
        best = int(np.argmax(values))
        binary = data.kind.startswith("binary")
        estimate = best_stat(data.boot, values, res.resampled(CURVE))
        return {
            self.key: BestFixed(
                config=data.labels[best],
                value=estimate.value,
                ci=estimate.ci,
                count=count_of(float(values[best]) * n if binary else None, n),
            )
        }

    def text(self, block: BlockLike | Mapping[str, Any], note: str | None = None) -> str:
        best = entry_of(block, self.key)
        return f"{_config_of(best)}  {counted_text(best, note=note)}"

    def report_text(self, block: BlockLike | Mapping[str, Any], note: str | None = None) -> str:
        best = entry_of(block, self.key)
        config = _config_of(best) if best is not None else "n/a"
        return f"{config}: {counted_text(best, note=note)}"


@dataclass(frozen=True, kw_only=True)
class ItemBest(Measure):
    """The mean over items of each item's best value over the grid (the oracle)."""

    def compute(self, data: BlockData, res: Resolved) -> dict[str, Estimate]:
        return {self.key: res.share(ITEM_MAX, items=data.kind.startswith("binary"))}


@dataclass(frozen=True, kw_only=True)
class OracleMinusBest(Measure):
    """The oracle minus best fixed (headroom, or the continuous oracle gap)."""

    def compute(self, data: BlockData, res: Resolved) -> dict[str, Estimate]:
        n, k = data.y.shape
        if not (n and k):
            return {self.key: no_value()}
        oracle = float(res.point(ITEM_MAX)[0])
        return {
            self.key: gap_stat(
                data.boot,
                res.point(CURVE),
                res.resampled(CURVE),
                oracle,
                res.resampled(ITEM_MAX)[:, 0],
            )
        }


@dataclass(frozen=True, kw_only=True)
class TextOnlyMean(Measure):
    """The text-only answer's correctness (or score) averaged over the items that have one."""

    def compute(self, data: BlockData, res: Resolved) -> dict[str, Estimate]:
        has = data.has_text
        if not has.any():
            return {self.key: no_value()}
        value = np.where(has, np.nan_to_num(data.matrix.text_value), 0.0)
        return {self.key: res.ratio(value, has.astype(float))}


@dataclass(frozen=True, kw_only=True)
class TextOverwrite(Measure):
    """Of the harmful transitions (right at a budget, wrong at a larger one), the share whose
    wrong answer is the text-only answer; the item share and the counts beside it."""

    def compute(self, data: BlockData, res: Resolved) -> dict[str, Estimate | TextOverwriteCounts]:
        has = data.has_text
        if not has.any():
            return {self.key: no_value(), "text_overwrite_item_rate": no_value()}
        m = data.matrix
        harmful_n, overwrite_n = matrix_text_overwrite_counts(data.y, m, data.less)
        harmful_n = np.where(has, harmful_n, 0.0)
        overwrite_n = np.where(has, overwrite_n, 0.0)
        return {
            self.key: res.ratio(overwrite_n, harmful_n),
            "text_overwrite_item_rate": res.ratio(
                (overwrite_n > 0).astype(float), (harmful_n > 0).astype(float)
            ),
            "text_overwrite_counts": TextOverwriteCounts(
                harmful_transitions=int(harmful_n.sum()),
                overwrite_transitions=int(overwrite_n.sum()),
                harmful_items=int((harmful_n > 0).sum()),
                overwrite_items=int((overwrite_n > 0).sum()),
            ),
        }

    def text(self, block: BlockLike | Mapping[str, Any], note: str | None = None) -> str:
        text = stat_text(entry_of(block, self.key), note=note)
        counts = _overwrite_counts(block)
        if counts is not None and counts.harmful_transitions:
            item_rate = stat_text(entry_of(block, "text_overwrite_item_rate"), note=note)
            text += (
                f" ({counts.overwrite_transitions} of {counts.harmful_transitions} harmful "
                f"transitions; by item {item_rate}: "
                f"{counts.overwrite_items} of {counts.harmful_items} harmful items)"
            )
        return text

    def report_text(self, block: BlockLike | Mapping[str, Any], note: str | None = None) -> str:
        counts = _overwrite_counts(block)
        counted = ""
        if counts is not None and counts.harmful_transitions:
            counted = f" ({counts.overwrite_transitions} of {counts.harmful_transitions})"
        return stat_text(entry_of(block, self.key), note=note) + counted


def _overwrite_counts(block: BlockLike | Mapping[str, Any]) -> TextOverwriteCounts | None:
    counts = entry_of(block, "text_overwrite_counts")
    if isinstance(counts, Mapping):
        return TextOverwriteCounts.model_validate(dict(counts))
    return counts if isinstance(counts, TextOverwriteCounts) else None


def _config_of(best: Any) -> Any:
    """The configuration of a `best_fixed` entry in either form."""
    if isinstance(best, BestFixed):
        return best.config
    return best.get("config") if isinstance(best, Mapping) else None


@dataclass(frozen=True, kw_only=True)
class EpsShare(ItemShare):
    """An item share whose labels name the score drop `eps` it counts (open-ended blocks)."""

    def console_line(
        self,
        block: BlockLike | Mapping[str, Any],
        gloss: Gloss,
        width: int,
        note: str | None = None,
    ) -> str | None:
        if self.console_label is None:
            return None
        # the label's width varies with eps, so it keeps two spaces rather than a column
        label = self.console_label.format(eps=entry_of(block, "eps"))
        return f"{label}:  {self.text(block, note)}"

    def report_row(
        self, block: BlockLike | Mapping[str, Any], note: str | None = None
    ) -> tuple[str, str, str | None] | None:
        if self.report_label is None:
            return None
        eps = entry_of(block, "eps")
        return (
            self.report_label.format(eps=0.1 if eps is None else eps),
            self.text(block, note),
            None,
        )


# -- visual budgets only, multiple choice (`binary`) ------------------------------------------
BEST_FIXED = BestFixedMeasure(
    key="best_fixed",
    kinds=("binary",),
    term="best fixed",
    gloss="the one budget with the highest accuracy",
    console_label="best fixed",
    report_label="best fixed budget",
)
builtin_measure(BEST_FIXED, order=10)
ORACLE = ItemBest(
    key="oracle",
    kinds=("binary",),
    term="oracle",
    gloss="items right at one or more budgets: a perfect per-item choice of budget",
    console_label="oracle",
    report_label="oracle (any budget right)",
)
builtin_measure(ORACLE, order=20)
ORACLE_HEADROOM = OracleMinusBest(
    key="oracle_headroom",
    kinds=("binary",),
    term="oracle headroom",
    gloss="oracle minus best fixed: what one budget for every item leaves behind",
    console_label="oracle headroom",
    report_label="oracle headroom",
)
builtin_measure(ORACLE_HEADROOM, order=30)
HARMFUL_RATE = ItemShare(
    key="harmful_rate",
    kinds=("binary",),
    term="harmful rate",
    gloss="items right at some smaller budget and wrong at a larger one",
    console_label="harmful rate",
    report_label="harmful rate",
    indicator=lambda d: harmful_indicator(d.y, d.less),
)
builtin_measure(HARMFUL_RATE, order=40)
BENEFICIAL_RATE = ItemShare(
    key="beneficial_rate",
    kinds=("binary",),
    term="beneficial rate",
    gloss="items wrong at some smaller budget and right at a larger one",
    console_label="beneficial rate",
    report_label="beneficial rate",
    indicator=lambda d: beneficial_indicator(d.y, d.less),
)
builtin_measure(BENEFICIAL_RATE, order=50)
TERMINAL_REGRESSION_RATE = ItemShare(
    key="terminal_regression_rate",
    kinds=("binary",),
    term="terminal regression",
    gloss="items wrong at the largest budget but right at a smaller one",
    console_label="terminal regression",
    report_label="terminal regression rate",
    indicator=lambda d: terminal_regression_indicator(d.y, d.order),
)
builtin_measure(TERMINAL_REGRESSION_RATE, order=60)
TEXT_ANSWERABLE_RATE = TextOnlyMean(
    key="text_answerable_rate",
    kinds=("binary",),
    term="text-answerable",
    gloss="items right with no frames at all",
    console_label="text-answerable",
    report_label="text-answerable rate",
    placement="text",
)
builtin_measure(TEXT_ANSWERABLE_RATE, order=70)
TEXT_OVERWRITE_RATE = TextOverwrite(
    key="text_overwrite_rate",
    kinds=("binary",),
    term="text overwrite",
    gloss="of the harmful transitions (right at a budget, wrong at a larger one), the share "
    "whose wrong answer is the text-only answer",
    console_label="text overwrite",
    report_label="text overwrite rate (harmful transitions)",
    placement="text",
)
builtin_measure(TEXT_OVERWRITE_RATE, order=80)

# -- visual budgets only, open-ended (`continuous`) -------------------------------------------
BEST_FIXED_SCORE = BestFixedMeasure(
    key="best_fixed", kinds=("continuous",), term="best fixed", report_label="best fixed budget"
)
builtin_measure(BEST_FIXED_SCORE, order=90)
ORACLE_SCORE = ItemBest(key="oracle_score", kinds=("continuous",), report_label="oracle score")
builtin_measure(ORACLE_SCORE, order=100)
ORACLE_GAP = OracleMinusBest(
    key="oracle_gap",
    kinds=("continuous",),
    term="oracle gap",
    gloss="the continuous oracle headroom: mean best score per item minus best fixed",
    console_label="oracle gap",
    report_label="oracle gap",
)
builtin_measure(ORACLE_GAP, order=110)
HARMFUL_RATE_EPS = EpsShare(
    key="harmful_rate_eps",
    kinds=("continuous",),
    console_label="harmful (eps={eps})",
    report_label="harmful rate (drop > {eps})",
    indicator=lambda d: d.eps_flips[0],
)
builtin_measure(HARMFUL_RATE_EPS, order=120)
BENEFICIAL_RATE_EPS = EpsShare(
    key="beneficial_rate_eps",
    kinds=("continuous",),
    report_label="beneficial rate",
    indicator=lambda d: d.eps_flips[1],
)
builtin_measure(BENEFICIAL_RATE_EPS, order=130)
TEXT_MEAN_SCORE = TextOnlyMean(
    key="text_mean_score",
    kinds=("continuous",),
    console_label="text-only score",
    report_label="text-only mean score",
    placement="text",
)
builtin_measure(TEXT_MEAN_SCORE, order=140)

# -- the text-only answer as budget 0 (`grid_with_text`, the seed paper's reading) -------------
WITH_TEXT_BEST_FIXED = BestFixedMeasure(
    key="best_fixed",
    kinds=("binary_with_text", "continuous_with_text"),
    term="best fixed",
    console_label="best fixed",
    report_label="best fixed",
    paper=("best fixed", "best_fixed"),
)
builtin_measure(WITH_TEXT_BEST_FIXED, order=150)
WITH_TEXT_ORACLE = ItemBest(
    key="oracle",
    kinds=("binary_with_text",),
    term="oracle",
    console_label="oracle",
    report_label="oracle",
    paper=("oracle", "oracle"),
)
builtin_measure(WITH_TEXT_ORACLE, order=160)
WITH_TEXT_ORACLE_HEADROOM = OracleMinusBest(
    key="oracle_headroom",
    kinds=("binary_with_text",),
    term="oracle headroom",
    console_label="oracle headroom",
    report_label="oracle headroom",
    paper=("headroom", "headroom"),
)
builtin_measure(WITH_TEXT_ORACLE_HEADROOM, order=170)
#: What the harmful rate with the text-only answer as budget 0 is called on a grid of more
#: than one axis: the paper's visual confusion is defined on one axis, and on its one released
#: grid of frames x pixels its figure (30.41) follows from no order of its predictions, where
#: the partial order gives 25.32 (docs/measures.md, "The paper's grid").
PARTIAL_ORDER_NOTE = (
    "visual confusion under the partial order of frames x pixels; on such a grid the seed "
    "paper's figure follows an order it does not state, docs/measures.md"
)


@dataclass(frozen=True, kw_only=True)
class VisualConfusion(ItemShare):
    """The harmful rate of `grid_with_text`: labelled the paper's visual confusion on a
    one-axis grid, where it is the paper's definition; on a grid of more than one axis it is
    the partial order's, which is not the paper's figure there, and says so."""

    def _multi_axis(self, block: BlockLike | Mapping[str, Any]) -> bool:
        found = block.get("multi_axis") if isinstance(block, Mapping) else None
        if found is None and not isinstance(block, Mapping):
            found = getattr(block, "multi_axis", None)
        return bool(found)

    def console_line(
        self,
        block: BlockLike | Mapping[str, Any],
        gloss: Gloss,
        width: int,
        note: str | None = None,
    ) -> str | None:
        line = super().console_line(block, gloss, width, note)
        if line is None or not self._multi_axis(block) or not self.console_note:
            return line
        return line.replace(f"({self.console_note})", f"({PARTIAL_ORDER_NOTE})", 1)

    def report_row(
        self, block: BlockLike | Mapping[str, Any], note: str | None = None
    ) -> tuple[str, str, str | None] | None:
        row = super().report_row(block, note)
        if row is None or not self._multi_axis(block):
            return row
        return f"harmful rate ({PARTIAL_ORDER_NOTE})", row[1], row[2]


VISUAL_CONFUSION = VisualConfusion(
    key="harmful_rate",
    kinds=("binary_with_text",),
    term="harmful rate",
    console_label="harmful rate",
    console_note="the paper's visual confusion",
    report_label="harmful rate (the paper's visual confusion)",
    indicator=lambda d: harmful_indicator(d.y, d.less),
    paper=("visual confusion", "visual_confusion_rate"),
)
builtin_measure(VISUAL_CONFUSION, order=180)
OVERWRITE_RATE = ItemShare(
    key="overwrite_rate",
    kinds=("binary_with_text",),
    term="overwrite",
    gloss="the seed paper's: items right with no frames and wrong at some visual budget "
    "(not text overwrite)",
    console_label="overwrite rate",
    report_label="overwrite rate",
    # the seed paper's overwrite: right blind (column 0), wrong at some visual budget
    indicator=lambda d: np.asarray((d.y[:, 0] >= 1) & (d.y[:, 1:] < 1).any(axis=1)),
    paper=("overwrite", "overwrite_rate"),
)
builtin_measure(OVERWRITE_RATE, order=190)
WITH_TEXT_ORACLE_SCORE = ItemBest(
    key="oracle_score", kinds=("continuous_with_text",), report_label="oracle score"
)
builtin_measure(WITH_TEXT_ORACLE_SCORE, order=200)
WITH_TEXT_ORACLE_GAP = OracleMinusBest(
    key="oracle_gap",
    kinds=("continuous_with_text",),
    term="oracle gap",
    console_label="oracle gap",
    report_label="oracle gap",
)
builtin_measure(WITH_TEXT_ORACLE_GAP, order=210)
WITH_TEXT_HARMFUL_RATE_EPS = EpsShare(
    key="harmful_rate_eps",
    kinds=("continuous_with_text",),
    console_label="harmful (eps={eps})",
    report_label="harmful rate (drop > {eps})",
    indicator=lambda d: d.eps_flips[0],
)
builtin_measure(WITH_TEXT_HARMFUL_RATE_EPS, order=220)
OVERWRITE_RATE_EPS = EpsShare(
    key="overwrite_rate_eps",
    kinds=("continuous_with_text",),
    console_label="overwrite (eps={eps})",
    report_label="overwrite rate (drop > {eps})",
    indicator=lambda d: np.asarray((d.y[:, :1] - d.y[:, 1:] > d.eps).any(axis=1)),
)
builtin_measure(OVERWRITE_RATE_EPS, order=230)
