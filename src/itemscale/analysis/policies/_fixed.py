"""The seed paper's fixed rule: one threshold on the stopping score, nothing fitted, every item.

Its released `code/cascade.py` stops an item at the first stage (before the last) whose
`base_margin` is at least `--theta`; `--mode shared` pays as `prefix` here, `no_share` as
`none`. These are the same stops and costs on the response matrix, with accuracy beside them
(the script reports cost only). One deliberate difference: a cell without a score never stops
the cascade here, where the script reads a missing `base_margin` as 0.0 (a stop when theta <= 0).
"""

from __future__ import annotations

import numpy as np

from ..measures import VideoBootstrap
from ._cascade_report import FixedItem, FixedRule
from ._inputs import CascadeInputs
from ._search import outcome_at, stopping_stage
from ._summary import summarise_stops


def fixed_rule(
    inputs: CascadeInputs, threshold: float, primary: str, boot: VideoBootstrap | None
) -> FixedRule:
    """Stops, costs (every currency, and unshared beside a `prefix` cost), accuracy with
    intervals, stop counts and each item's stop stage, for one threshold on every stage."""
    n, k = inputs.correct.shape
    gate = np.ones((n, k - 1), dtype=bool)
    thresholds = np.full(k - 1, float(threshold))
    stop = stopping_stage(gate, inputs.confidence[:, : k - 1], thresholds)
    every_stage = (True,) * k
    paid = {c: outcome_at(stop, s.cumulative(every_stage)) for c, s in inputs.costs.items()}
    unshared = {c: outcome_at(stop, s.cumulative(every_stage)) for c, s in inputs.bounds.items()}
    summary = summarise_stops(stop, paid, unshared, inputs, primary, boot)
    correct = outcome_at(stop, inputs.correct)
    per_item = tuple(
        FixedItem(
            item_id=str(inputs.item_ids[i]),
            stop_stage=inputs.labels[int(stop[i])],
            correct=float(correct[i]),
            **{f"cost_{c}": float(paid[c][i]) for c in paid},
        )
        for i in range(n)
    )
    return FixedRule(
        threshold=float(threshold),
        score=inputs.score_name,
        rule=(
            f"stop at the first stage before the last whose {inputs.score_name} is >= "
            f"{threshold:g}; the last stage always answers; no fitting, every item"
        ),
        per_item=per_item,
        **dict(summary),
    )
