"""Configurations that ask one budget are alternatives, not an axis (docs/measures.md,
"Alternatives at one budget").

Two frame selectors at 16 frames, or one model under two prompts: none is "more budget" than
another, so every measure that reads an order of budgets would read the order they happen to
be listed in. They are compared as alternatives instead: accuracies, the oracle over them, and
every pair's selector record. An axis where only some configurations share a budget stays an
axis, with a warning naming them.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...core.responses import NOANSWER
from ._blocks import BlockFields, noanswer_rates
from ._bootstrap import VideoBootstrap
from ._churn import SELECTION_SERIES_PREFIX
from ._effective import pair_verdict
from ._matrix import INTERVENTION_SERIES_PREFIX, ResponseMatrix
from ._paired_tests import paired_tests
from ._result_models import AlternativePair, Estimate
from ._same_input import AnswerAgreement, answer_agreement
from ._stats import Columns, counted, ratio_stat, smooth_ci, stat

#: A configuration's recorded budget: frames, and pixels per frame (None: not recorded).
BudgetKey = tuple[int, float | None]


def budget_key(frames: float, pixels: float) -> BudgetKey:
    return int(frames), float(pixels) if np.isfinite(pixels) else None


def budget_words(key: BudgetKey) -> str:
    """`16 frames`, or `16 frames of 200704 pixels` where pixels are recorded."""
    frames, pixels = key
    words = f"{frames} frame{'s' if frames != 1 else ''}"
    return words if pixels is None else f"{words} of {int(pixels)} pixels"


def same_budget_groups(m: ResponseMatrix) -> list[list[int]]:
    """Positions of the configurations that share a recorded budget, groups of two or more,
    each in the order the table lists them."""
    keys = [budget_key(f, p) for f, p in zip(m.frames, m.pixels, strict=True)]
    groups: dict[BudgetKey, list[int]] = {}
    for j, key in enumerate(keys):
        groups.setdefault(key, []).append(j)
    return [g for g in groups.values() if len(g) > 1]


def is_alternatives(m: ResponseMatrix) -> bool:
    """A multiple-choice series of two or more configurations that all ask one budget."""
    if m.kind != "binary" or m.n_configs < 2:
        return False
    groups = same_budget_groups(m)
    return len(groups) == 1 and len(groups[0]) == m.n_configs


def axis_warnings(m: ResponseMatrix) -> list[str]:
    """A sentence for each group of an axis's configurations that ask one budget (none for a
    set of alternatives, which is measured as one)."""
    if is_alternatives(m):
        return []
    out = []
    for group in same_budget_groups(m):
        labels = [m.labels[j] for j in group]
        key = budget_key(m.frames[group[0]], m.pixels[group[0]])
        out.append(
            f"{', '.join(labels)} ask the same budget ({budget_words(key)}): they are "
            "alternatives, not steps of the axis, which orders them as the table lists them "
            "(an order nobody chose), so the measures along it between them (best fixed, "
            "harmful rate, flips) rest on that order; measure them as alternatives with "
            f"--configs {','.join(labels)}, or import each as its own series"
        )
    return out


#: A set of series merged into one (`merged_series`) is named by their names joined by this.
SERIES_JOIN = ", "


def members_of(m: ResponseMatrix) -> str:
    """`series` for a set merged from series (labels are their names), else `configurations`."""
    return "series" if m.series == SERIES_JOIN.join(m.labels) else "configurations"


def merged_series(mats: Sequence[ResponseMatrix]) -> ResponseMatrix | None:
    """One model's multiple-choice series as one set of alternatives named by series, when
    there are two or more, each of one configuration, all asking one budget (else None): on
    the items every series answered, repeat 0."""
    binary = [
        m
        for m in mats
        if m.kind == "binary" and not m.series.startswith(INTERVENTION_SERIES_PREFIX)
    ]
    if len(binary) < 2 or any(m.n_configs != 1 for m in binary):
        return None
    if len({budget_key(m.frames[0], m.pixels[0]) for m in binary}) != 1:
        return None
    ids = [m.item_ids.astype(str) for m in binary]
    common = ids[0]
    for other in ids[1:]:
        common = np.intersect1d(common, other)
    union = set().union(*(set(i.tolist()) for i in ids))
    rows = [pd.Index(i).get_indexer(common) for i in ids]
    first, r0 = binary[0], rows[0]

    def stacked(name: str) -> np.ndarray:
        return np.stack([getattr(m, name)[r, 0] for m, r in zip(binary, rows, strict=True)], axis=1)

    reasons: Counter[str] = Counter()
    if len(union) > len(common):
        reasons["not answered in every series"] = len(union) - len(common)
    return dataclasses.replace(
        first,
        series=SERIES_JOIN.join(m.series for m in binary),
        labels=tuple(m.series for m in binary),
        config_ids=tuple(m.config_ids[0] for m in binary),
        frames=np.array([m.frames[0] for m in binary]),
        pixels=np.array([m.pixels[0] for m in binary], dtype=float),
        item_ids=first.item_ids[r0],
        video_ids=first.video_ids[r0],
        values=np.stack([m.values[r, 0, :1] for m, r in zip(binary, rows, strict=True)], axis=1),
        answers=stacked("answers"),
        confidence=stacked("confidence"),
        margin=stacked("margin"),
        latency=stacked("latency"),
        visual_tokens=stacked("visual_tokens"),
        effective_frames=stacked("effective_frames"),
        frame_indices=stacked("frame_indices"),
        text_answer=first.text_answer[r0],
        text_value=first.text_value[r0],
        attributes=tuple(first.attributes[i] for i in r0.tolist()),
        n_dropped=len(union) - len(common),
        drop_reasons=dict(reasons),
        scoring_rules=tuple(sorted({r for m in binary for r in m.scoring_rules})),
        answer_codes=None,
    )


def default_control(
    m: ResponseMatrix, members: str, given: str | None
) -> tuple[str | None, str | None]:
    """The control and where it comes from: `--control` when it names one of these
    alternatives; else, for series of one configuration each, the one series that is not a
    frame selector's (`selection:*`) when every other is a selector's (the reference the
    selector record has always used); else none."""
    labels = list(m.labels)
    if given is not None and given in labels:
        return given, "given"
    if given is None and members == "series":
        plain = [s for s in labels if not s.startswith(SELECTION_SERIES_PREFIX)]
        if len(plain) == 1 and len(labels) > 1:
            return plain[0], "series"
    return None, None


def pair_order(labels: Sequence[str], control: str | None) -> list[tuple[int, int]]:
    """Every pair once: the control's pairs first, then the others in the table's order."""
    k = len(labels)
    c = labels.index(control) if control in labels else None
    first = [(c, j) for j in range(k) if c is not None and j != c]
    rest = [(i, j) for i in range(k) for j in range(i + 1, k) if c not in (i, j)]
    return first + rest


def _agreement(m: ResponseMatrix, a: int, b: int) -> AnswerAgreement:
    """The two configurations' answers compared and graded as the same-input rule does."""
    codes = m.answer_codes
    if codes is not None:
        cells, no_answer = codes.cells, codes.code_of(NOANSWER)
        return answer_agreement(cells[:, a], cells[:, b], floor=m.rerun_floor, no_answer=no_answer)
    return answer_agreement(m.answers[:, a], m.answers[:, b], floor=m.rerun_floor)


def alternative_pairs(
    m: ResponseMatrix, boot: VideoBootstrap | None, control: str | None
) -> dict[str, AlternativePair]:
    """The selector record of every pair (`pair_order`), keyed `a|b`."""
    labels = list(m.labels)
    order = pair_order(labels, control)
    y = (m.y >= 1).astype(float)
    tests = paired_tests(y, m.video_ids, order, labels, boot)
    any_right = y.max(axis=1) if y.size else np.zeros(y.shape[0])
    out = {}
    for (a, b), test in zip(order, tests, strict=True):
        wrong_a = 1.0 - y[:, a]
        agreement = _agreement(m, a, b)
        out[f"{labels[a]}|{labels[b]}"] = AlternativePair(
            a=labels[a],
            b=labels[b],
            accuracy_difference=stat(test.difference, test.difference_ci),
            clustered_mcnemar_p=test.clustered_p,
            exact_mcnemar_p=test.exact_mcnemar_p,
            n_fixed=test.n_up,
            n_broken=test.n_down,
            n_headroom=int((wrong_a * any_right).sum()),
            headroom_share=ratio_stat(boot, wrong_a * y[:, b], wrong_a * any_right),
            answered=agreement.answered,
            differ=agreement.differ,
            answers=agreement.answers,
            rerun_bound=agreement.rerun_bound,
            floor=agreement.floor,
            no_answer=agreement.no_answer,
            same_input=pair_verdict(m, a, b),
        )
    return out


def alternatives_fields(
    m: ResponseMatrix, boot: VideoBootstrap | None, control: str | None, members: str
) -> BlockFields:
    """The keys of an `AlternativesSeries` (its model-level keys are added by the caller)."""
    labels = list(m.labels)
    control, control_from = default_control(m, members, control)
    y = (m.y >= 1).astype(float)
    n = m.n_items
    cols = Columns(boot)
    cols.add("accuracy", y)
    cols.add("oracle", y.max(axis=1) if y.size else np.zeros(n))
    points, samples, jack = cols.resolve()
    cis = {name: smooth_ci(boot, points[name], samples[name], jack[name]) for name in points}

    def share(name: str, j: int) -> Estimate:
        value = float(points[name][j]) if n else None
        k = value * n if value is not None else None
        return counted(stat(value, cis[name][j]), k, n)

    key = budget_key(m.frames[0], m.pixels[0])
    return {
        "kind": "alternatives",
        "series": m.series,
        "members": members,
        "configs": labels,
        "budget": budget_words(key),
        "frames": key[0],
        "pixels": None if key[1] is None else int(key[1]),
        "control": control,
        "control_from": control_from,
        "n_items": n,
        "n_videos": len(set(m.video_ids.tolist())),
        "n_dropped": m.n_dropped,
        "drop_reasons": dict(m.drop_reasons),
        "noanswer_rate": noanswer_rates(m, labels),
        "accuracy": {label: share("accuracy", j) for j, label in enumerate(labels)},
        "oracle": share("oracle", 0),
        "pairs": alternative_pairs(m, boot, control),
        **({} if m.rerun_floor is None else {"rerun_floor": m.rerun_floor}),
        "scoring_rules": list(m.scoring_rules),
    }
