"""The inference measures of a binary block as the records of `analyze --json`: cluster-aware
paired tests with Holm's adjustment, power, the additive-model heterogeneity test, and churn
between series. Each statistic is computed by its own module from matrices; this one picks the
pairs and the family, and writes them as the records of docs/measures.md's layout."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypedDict

import numpy as np

from ._blocks import BootFor, with_text_matrix
from ._bootstrap import VideoBootstrap
from ._churn import BudgetChurn, SeriesChurn, series_churn
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
from ._power import ALPHA, POWER, AxisPower, PairPower, power_analysis
from ._result_models import (
    AxisPowerRecord,
    BudgetChurnRecord,
    Churn,
    ComparisonRecord,
    HeadroomComparison,
    Heterogeneity,
    HeterogeneitySkipped,
    NoiseRecord,
    PairedTestRecord,
    PairedTests,
    PairPowerRecord,
    Power,
    given,
)
from ._select import UnknownConfigError
from ._stats import stat

#: Default target of `analyze --power-target`: an accuracy difference of 2 points.
DEFAULT_POWER_TARGET = 0.02
DEFAULT_TEST = "clustered_mcnemar"


def _test_record(t: PairedTest, holm_p: float) -> PairedTestRecord:
    return PairedTestRecord(
        n_items=t.n_items,
        n_videos=t.n_videos,
        n_down=t.n_down,
        n_up=t.n_up,
        difference=stat(t.difference, t.difference_ci),
        exact_mcnemar_p=t.exact_mcnemar_p,
        clustered_mcnemar_statistic=t.clustered_statistic,
        clustered_mcnemar_p=t.clustered_p,
        bootstrap_p=t.bootstrap_p,
        holm_p=float(holm_p),
        significant_after_holm=bool(holm_p < ALPHA),
    )


def _family(tests: list[PairedTest]) -> dict[str, PairedTestRecord]:
    adjusted = holm([t.clustered_p for t in tests])
    return {t.pair: _test_record(t, p) for t, p in zip(tests, adjusted, strict=True)}


def requested_pairs(m: ResponseMatrix, pairs: Sequence[tuple[str, str]]) -> list[tuple[int, int]]:
    """The positions of the requested (from, to) labels this matrix has both of."""
    where = {label: i for i, label in enumerate(m.labels)}
    return [(where[a], where[b]) for a, b in pairs if a in where and b in where and a != b]


def check_requested(matrices: Sequence[ResponseMatrix], pairs: Sequence[tuple[str, str]]) -> None:
    """A requested pair no binary series has is an error naming the run's labels."""
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


def paired_tests_record(
    m: ResponseMatrix,
    boot: VideoBootstrap | None,
    extra: Sequence[tuple[str, str]] = (),
) -> PairedTests:
    """The adjacent pairs (one Holm family) and any requested pairs (a family of their own)."""
    labels = list(m.labels)
    adjacent = paired_tests(m.y, m.video_ids, m.budget_order.adjacent, labels, boot)
    wanted = requested_pairs(m, extra)
    requested = _family(paired_tests(m.y, m.video_ids, wanted, labels, boot)) if wanted else None
    return PairedTests(
        default=DEFAULT_TEST,
        family="adjacent",
        n_family=len(adjacent),
        alpha=ALPHA,
        adjacent=_family(adjacent),
        **given(
            requested=requested,
            bootstrap_draws=boot.bootstrap if boot is not None and boot.bootstrap else None,
        ),
    )


def _axis_of(m: ResponseMatrix, a: int, b: int) -> str:
    order = m.budget_order
    if not order.multi_axis:
        return order.axes[0]
    return "pixels" if int(m.frames[a]) == int(m.frames[b]) else "frames"


def power_record(m: ResponseMatrix, boot: VideoBootstrap | None, target: float) -> Power:
    """Minimum detectable effect and videos needed per axis and adjacent pair."""
    pairs = list(m.budget_order.adjacent)
    if not pairs or m.n_items == 0:
        return Power(alpha=ALPHA, power=POWER, target=target, axes={}, pairs={})
    res = power_analysis(
        m.y,
        m.video_ids,
        pairs,
        list(m.labels),
        [_axis_of(m, a, b) for a, b in pairs],
        target,
        boot,
    )
    return Power(
        test=DEFAULT_TEST,
        alpha=res.alpha,
        power=res.power,
        target=res.target,
        n_videos=res.n_videos,
        items_per_video=res.items_per_video,
        axes={a.axis: AxisPowerRecord(pairs=list(a.pairs), **_figures(a)) for a in res.axes},
        pairs={p.pair: PairPowerRecord(**_figures(p)) for p in res.pairs},
    )


def _figures(p: PairPower | AxisPower) -> dict[str, Any]:
    return {
        "sd_per_video": p.sd_per_video,
        "mde": p.mde,
        "videos_needed": p.videos_needed,
        **given(
            mde_not_estimable=p.mde_not_estimable,
            videos_needed_not_estimable=p.videos_needed_not_estimable,
        ),
    }


def _comparison(c: Comparison) -> ComparisonRecord:
    return ComparisonRecord(
        observed=stat(c.observed, c.observed_ci),
        additive=stat(c.expected, c.expected_ci),
        difference=stat(c.difference, c.difference_ci),
        p_value=c.p_value,
    )


def heterogeneity_record(
    m: ResponseMatrix,
    boot: VideoBootstrap | None,
    less: np.ndarray | None = None,
    draws: int = DEFAULT_DRAWS,
) -> Heterogeneity | HeterogeneitySkipped:
    """The additive-model test on `m` (repeat 0) under its budget order, or `less`."""
    k = m.n_configs
    if k < 2 or k > MAX_BUDGETS or m.n_items == 0:
        reason = (
            f"{k} budgets: the test enumerates the 2^K answer patterns, up to K = {MAX_BUDGETS}"
            if k > MAX_BUDGETS
            else "needs two budgets and one item"
        )
        return HeterogeneitySkipped(skipped=reason)
    less = m.budget_order.less if less is None else less
    h = heterogeneity_test(m.y, less, boot, draws)
    noise = None
    if m.n_repeats > 1:
        n = noise_comparison(m.values, m.y, less, boot)
        noise = NoiseRecord(
            noise_bound=stat(n.noise_bound, n.noise_bound_ci),
            difference=stat(n.difference, n.difference_ci),
            p_value=n.p_value,
        )
    harmful = _comparison(h.harmful)
    return Heterogeneity(
        model="additive logistic (Rasch): logit P(right) = item effect + budget effect",
        n_items=h.n_items,
        n_informative=h.n_informative,
        budget_effects=dict(zip(m.labels, h.budget_effects, strict=True)),
        observed=harmful.observed,
        additive=harmful.additive,
        difference=harmful.difference,
        p_value=harmful.p_value,
        n_null=h.n_null,
        interval="percentile",
        oracle_headroom=HeadroomComparison(observed=h.oracle_headroom, additive=h.oracle_headroom),
        trajectories={c.name: _comparison(c) for c in h.trajectories},
        **given(noise=noise),
    )


class InferenceFields(TypedDict):
    """The keys a binary block gains (`inference_block`), in the layout's order."""

    paired_tests: PairedTests
    power: Power
    heterogeneity: Heterogeneity | HeterogeneitySkipped


def inference_block(
    m: ResponseMatrix,
    boot: VideoBootstrap | None,
    *,
    power_target: float = DEFAULT_POWER_TARGET,
    test_pairs: Sequence[tuple[str, str]] = (),
    heterogeneity_draws: int = DEFAULT_DRAWS,
) -> InferenceFields:
    """The keys a binary block gains: `paired_tests`, `power`, `heterogeneity`."""
    return InferenceFields(
        paired_tests=paired_tests_record(m, boot, test_pairs),
        power=power_record(m, boot, power_target),
        heterogeneity=heterogeneity_record(m, boot, draws=heterogeneity_draws),
    )


def _budget_churn(b: BudgetChurn) -> BudgetChurnRecord:
    """One budget's churn record."""
    return BudgetChurnRecord(
        config_p=b.config_p,
        config_q=b.config_q,
        answer_change=b.answer_change,
        accuracy_difference=b.accuracy_difference,
        flip_down=b.flip_down,
        flip_up=b.flip_up,
        **given(noise_floor_p=b.noise_floor_p, noise_floor_q=b.noise_floor_q, selector=b.selector),
    )


def _churn_record(c: SeriesChurn) -> Churn:
    return Churn(
        n_common_items=c.n_common_items,
        n_videos=c.n_videos,
        budgets={b.budget: _budget_churn(b) for b in c.budgets},
    )


def churn_records(
    matrices: Sequence[ResponseMatrix],
    boot_for: Callable[[np.ndarray], VideoBootstrap | None],
) -> dict[str, Churn]:
    """Churn for every pair of binary series of one model (interventions left out)."""
    binary = [
        m
        for m in matrices
        if m.kind == "binary" and not m.series.startswith(INTERVENTION_SERIES_PREFIX)
    ]
    out: dict[str, Churn] = {}
    for i, mp in enumerate(binary):
        for mq in binary[i + 1 :]:
            c = series_churn(mp, mq, boot_for)
            if c is not None:
                out[f"series:{mp.series}|{mq.series}"] = _churn_record(c)
    return out


def heterogeneity_with_text(
    m: ResponseMatrix,
    boot: VideoBootstrap | None,
    boot_for: BootFor,
    draws: int = DEFAULT_DRAWS,
) -> Heterogeneity | HeterogeneitySkipped | None:
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
    return heterogeneity_record(with_text, chosen, order.less, draws)


class WithAdditiveTest(Protocol):
    """A block that may hold the additive-model test (`BinarySeries`, `BinaryWithText`)."""

    @property
    def heterogeneity(self) -> Heterogeneity | HeterogeneitySkipped | None: ...


def additive_sentence(block: WithAdditiveTest) -> str | None:
    """The harmful rate beside what an additive world with the same margins gives, in words a
    reader can act on (the demo's and the report's opening sentences); None where the block
    has no additive-model test, or too few videos for one (`small_sample`)."""
    h = block.heterogeneity
    if not isinstance(h, Heterogeneity) or getattr(block, "small_sample", None) is not None:
        return None
    obs, add, ci = h.observed.value, h.additive.value, h.difference.ci
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
    dec = h.trajectories.get("decreasing")
    if dec is not None and dec.observed.value is not None and dec.additive.value is not None:
        d_obs, d_add, d_ci = dec.observed.value, dec.additive.value, dec.difference.ci
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
