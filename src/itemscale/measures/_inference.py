"""The inference measures of a binary block in `analyze`'s JSON form: cluster-aware paired
tests with Holm's adjustment, power, the additive-model heterogeneity test, and churn between
series. Each statistic is computed by its own module from matrices; this one picks the pairs
and the family, and writes the records as the dict layout of docs/measures.md."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from ._blocks import BootFor, with_text_matrix
from ._bootstrap import VideoBootstrap
from ._churn import SeriesChurn, series_churn
from ._heterogeneity import (
    DEFAULT_DRAWS,
    MAX_BUDGETS,
    Comparison,
    heterogeneity_test,
    noise_comparison,
)
from ._matrix import INTERVENTION_SERIES_PREFIX, ResponseMatrix
from ._order import with_text_first
from ._paired_tests import PairedTest, holm, paired_tests
from ._power import ALPHA, POWER, power_analysis
from ._select import UnknownConfigError
from ._stats import stat

#: Default target of `analyze --power-target`: an accuracy difference of 2 points.
DEFAULT_POWER_TARGET = 0.02
DEFAULT_TEST = "clustered_mcnemar"


def _test_json(t: PairedTest, holm_p: float) -> dict[str, Any]:
    return {
        "n_items": t.n_items,
        "n_videos": t.n_videos,
        "n_down": t.n_down,
        "n_up": t.n_up,
        "difference": stat(t.difference, t.difference_ci),
        "exact_mcnemar_p": t.exact_mcnemar_p,
        "clustered_mcnemar_statistic": t.clustered_statistic,
        "clustered_mcnemar_p": t.clustered_p,
        "bootstrap_p": t.bootstrap_p,
        "holm_p": float(holm_p),
        "significant_after_holm": bool(holm_p < ALPHA),
    }


def _family(tests: list[PairedTest]) -> dict[str, Any]:
    adjusted = holm([t.clustered_p for t in tests])
    return {t.pair: _test_json(t, p) for t, p in zip(tests, adjusted, strict=True)}


def requested_pairs(m: ResponseMatrix, pairs: Sequence[tuple[str, str]]) -> list[tuple[int, int]]:
    """The positions of the requested (from, to) labels this matrix has both of."""
    where = {label: i for i, label in enumerate(m.labels)}
    return [(where[a], where[b]) for a, b in pairs if a in where and b in where and a != b]


def check_requested(matrices: Sequence[ResponseMatrix], pairs: Sequence[tuple[str, str]]) -> None:
    """A requested pair that no binary series has both labels of is an error naming the labels
    the run has."""
    binary = [m for m in matrices if m.kind == "binary"]
    for a, b in pairs:
        if a == b:
            raise UnknownConfigError(f"--test-pair {a},{b}: a pair needs two configurations")
        if not any(a in m.labels and b in m.labels for m in binary):
            known = sorted({label for m in binary for label in m.labels})
            raise UnknownConfigError(
                f"--test-pair {a},{b}: no series has both; the run's configurations: "
                + (", ".join(known) or "(none)")
            )


def paired_tests_json(
    m: ResponseMatrix,
    boot: VideoBootstrap | None,
    extra: Sequence[tuple[str, str]] = (),
) -> dict[str, Any]:
    """The adjacent pairs (one Holm family) and any requested pairs (a family of their own)."""
    labels = list(m.labels)
    adjacent = paired_tests(m.y, m.video_ids, m.budget_order.adjacent, labels, boot)
    out: dict[str, Any] = {
        "default": DEFAULT_TEST,
        "family": "adjacent",
        "n_family": len(adjacent),
        "alpha": ALPHA,
        "adjacent": _family(adjacent),
    }
    wanted = requested_pairs(m, extra)
    if wanted:
        out["requested"] = _family(paired_tests(m.y, m.video_ids, wanted, labels, boot))
    return out


def _axis_of(m: ResponseMatrix, a: int, b: int) -> str:
    order = m.budget_order
    if not order.multi_axis:
        return order.axes[0]
    return "pixels" if int(m.frames[a]) == int(m.frames[b]) else "frames"


def power_json(m: ResponseMatrix, boot: VideoBootstrap | None, target: float) -> dict[str, Any]:
    pairs = list(m.budget_order.adjacent)
    if not pairs or m.n_items == 0:
        return {"alpha": ALPHA, "power": POWER, "target": target, "axes": {}, "pairs": {}}
    res = power_analysis(
        m.y,
        m.video_ids,
        pairs,
        list(m.labels),
        [_axis_of(m, a, b) for a, b in pairs],
        target,
        boot,
    )
    return {
        "test": DEFAULT_TEST,
        "alpha": res.alpha,
        "power": res.power,
        "target": res.target,
        "n_videos": res.n_videos,
        "items_per_video": res.items_per_video,
        "axes": {
            a.axis: {k: v for k, v in asdict(a).items() if k != "axis"} | {"pairs": list(a.pairs)}
            for a in res.axes
        },
        "pairs": {p.pair: {k: v for k, v in asdict(p).items() if k != "pair"} for p in res.pairs},
    }


def _comparison_json(c: Comparison) -> dict[str, Any]:
    return {
        "observed": stat(c.observed, c.observed_ci),
        "additive": stat(c.expected, c.expected_ci),
        "difference": stat(c.difference, c.difference_ci),
        "p_value": c.p_value,
    }


def heterogeneity_json(
    m: ResponseMatrix,
    boot: VideoBootstrap | None,
    less: np.ndarray | None = None,
    draws: int = DEFAULT_DRAWS,
) -> dict[str, Any]:
    """The additive-model test on `m` (repeat 0) under its budget order, or `less`."""
    k = m.n_configs
    if k < 2 or k > MAX_BUDGETS or m.n_items == 0:
        reason = (
            f"{k} budgets: the test enumerates the 2^K answer patterns, up to K = {MAX_BUDGETS}"
            if k > MAX_BUDGETS
            else "needs two budgets and one item"
        )
        return {"skipped": reason}
    less = m.budget_order.less if less is None else less
    h = heterogeneity_test(m.y, less, boot, draws)
    out: dict[str, Any] = {
        "model": "additive logistic (Rasch): logit P(right) = item effect + budget effect",
        "n_items": h.n_items,
        "n_informative": h.n_informative,
        "budget_effects": dict(zip(m.labels, h.budget_effects, strict=True)),
        **_comparison_json(h.harmful),
        "n_null": h.n_null,
        "interval": "percentile",
        "oracle_headroom": {"observed": h.oracle_headroom, "additive": h.oracle_headroom},
        "trajectories": {c.name: _comparison_json(c) for c in h.trajectories},
    }
    if m.n_repeats > 1:
        n = noise_comparison(m.values, m.y, less, boot)
        out["noise"] = {
            "noise_bound": stat(n.noise_bound, n.noise_bound_ci),
            "difference": stat(n.difference, n.difference_ci),
            "p_value": n.p_value,
        }
    return out


def inference_block(
    m: ResponseMatrix,
    boot: VideoBootstrap | None,
    *,
    power_target: float = DEFAULT_POWER_TARGET,
    test_pairs: Sequence[tuple[str, str]] = (),
    heterogeneity_draws: int = DEFAULT_DRAWS,
) -> dict[str, Any]:
    """The keys a binary block gains: `paired_tests`, `power`, `heterogeneity`."""
    return {
        "paired_tests": paired_tests_json(m, boot, test_pairs),
        "power": power_json(m, boot, power_target),
        "heterogeneity": heterogeneity_json(m, boot, draws=heterogeneity_draws),
    }


def _churn_json(c: SeriesChurn) -> dict[str, Any]:
    return {
        "n_common_items": c.n_common_items,
        "n_videos": c.n_videos,
        "budgets": {
            b.budget: {k: v for k, v in asdict(b).items() if k != "budget" and v is not None}
            for b in c.budgets
        },
    }


def churn_json(
    matrices: Sequence[ResponseMatrix],
    boot_for: Callable[[np.ndarray], VideoBootstrap | None],
) -> dict[str, Any]:
    """Churn for every pair of binary series of one model (interventions left out)."""
    binary = [
        m
        for m in matrices
        if m.kind == "binary" and not m.series.startswith(INTERVENTION_SERIES_PREFIX)
    ]
    out: dict[str, Any] = {}
    for i, mp in enumerate(binary):
        for mq in binary[i + 1 :]:
            c = series_churn(mp, mq, boot_for)
            if c is not None:
                out[f"series:{mp.series}|{mq.series}"] = _churn_json(c)
    return out


def heterogeneity_with_text_json(
    m: ResponseMatrix,
    boot: VideoBootstrap | None,
    boot_for: BootFor,
    draws: int = DEFAULT_DRAWS,
) -> dict[str, Any] | None:
    """The same test on the grid with the text-only answer as budget 0 (its harmful rate is
    the seed paper's visual confusion); None without text-only answers. `boot` is the visual
    block's, used when every item has a text-only answer."""
    if not (~np.isnan(m.text_value)).any():
        return None
    sub, y, labels, _ = with_text_matrix(m)
    if not sub.n_items:
        return None
    order = with_text_first(m.budget_order)
    with_text = dataclasses.replace(
        sub,
        labels=tuple(labels),
        values=y[:, :, None],
        frames=np.concatenate([[0], sub.frames]),
        pixels=np.concatenate([[np.nan], sub.pixels]),
    )
    same = sub.n_items == m.n_items
    chosen = boot if same else boot_for(sub.video_ids)
    return heterogeneity_json(with_text, chosen, order.less, draws)


def additive_sentence(block: dict[str, Any]) -> str | None:
    """The harmful rate beside what an additive world with the same margins gives, in words a
    reader can act on (the demo's and the report's opening sentences); None where the block
    has no additive-model test."""
    h = block.get("heterogeneity")
    if not isinstance(h, dict) or "skipped" in h or block.get("small_sample"):
        return None
    obs, add = (h.get("observed") or {}).get("value"), (h.get("additive") or {}).get("value")
    ci = (h.get("difference") or {}).get("ci")
    if obs is None or add is None:
        return None
    if ci is None or ci[0] <= 0 <= ci[1]:
        verdict = (
            "no more than chance gives items of middling difficulty, so the harmful rate alone "
            "is no evidence that a larger budget hurts particular items"
        )
    elif obs < add:
        verdict = (
            "fewer flips than chance gives items of middling difficulty, so the harmful rate "
            "alone is no evidence that a larger budget hurts particular items"
        )
    else:
        verdict = "more than chance gives: some items are hurt by a larger budget itself"
    text = (
        f"An additive world with the same margins (items differing only in difficulty, budgets "
        f"only in strength) gives {100 * add:.1f}% against the observed {100 * obs:.1f}%: "
        f"{verdict}."
    )
    dec = (h.get("trajectories") or {}).get("decreasing") or {}
    d_obs, d_add = (
        (dec.get("observed") or {}).get("value"),
        (dec.get("additive") or {}).get("value"),
    )
    d_ci = (dec.get("difference") or {}).get("ci")
    if d_obs is not None and d_add is not None:
        beyond = d_ci is not None and d_ci[0] > 0
        text += (
            f" Items right only at smaller budgets, steadily worse with more: {100 * d_obs:.1f}% "
            f"against {100 * d_add:.1f}% additive"
            + (
                " (more than chance: these are the items to audit)."
                if beyond
                else " (within chance)."
            )
        )
    return text
