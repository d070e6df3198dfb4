"""Tests between budgets, checked by hand and by seeded simulation: the clustered McNemar test
holds its size on clustered data where the exact one does not, Holm's adjustment, the power
formula's sample size reaches its power, the additive-model test rejects at about its nominal
rate on additive data and finds interaction where there is some, and the noise bound holds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chi2

from itemscale.analysis.measures import (
    Estimate,
    VideoBootstrap,
    budget_order,
    clustered_mcnemar,
    fit_budget_effects,
    heterogeneity_test,
    holm,
    mcnemar_exact_p,
    minimum_detectable,
    noise_comparison,
    p_value_text,
    paired_tests,
    power_analysis,
    power_at,
    signed_text,
    videos_needed,
)
from itemscale.analysis.measures._order import total_order
from itemscale.analysis.measures._power import smallest_rejectable


def _names(codes: np.ndarray) -> np.ndarray:
    return np.array([f"v{c:05d}" for c in codes], dtype=object)


# -- the clustered McNemar test -----------------------------------------------------------


def test_clustered_mcnemar_by_hand() -> None:
    # (y_a, y_b) per item; per-video D = up - down: v1 -2, v2 +1, v3 +1, v4 +1
    pairs = {
        "v1": [(1, 0), (1, 0)],
        "v2": [(0, 1)],
        "v3": [(0, 1), (1, 1)],
        "v4": [(0, 1), (0, 0), (1, 1)],
    }
    y = np.array([p for items in pairs.values() for p in items], dtype=float)
    videos = np.array([v for v, items in pairs.items() for _ in items], dtype=object)
    (t,) = paired_tests(y, videos, [(0, 1)], ["a", "b"])
    assert (t.n_down, t.n_up, t.n_videos, t.n_items) == (2, 3, 4, 8)
    assert t.difference == pytest.approx(1 / 8)
    # (sum D)^2 / sum D^2 = 1 / (4 + 1 + 1 + 1)
    assert t.clustered_statistic == pytest.approx(1 / 7)
    assert t.clustered_p == pytest.approx(chi2.sf(1 / 7, 1))
    assert t.bootstrap_p is None and t.difference_ci is None  # no resamples asked for
    none = paired_tests(np.ones((4, 2)), videos[:4], [(0, 1)], ["a", "b"])[0]
    assert none.clustered_p == 1.0 and none.exact_mcnemar_p == 1.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=40))
def test_one_item_per_video_is_the_ordinary_mcnemar_chi_square(cells: list) -> None:
    y = np.array(cells, dtype=float)
    (t,) = paired_tests(y, _names(np.arange(len(cells))), [(0, 1)], ["a", "b"])
    discordant = t.n_down + t.n_up
    expected = (t.n_up - t.n_down) ** 2 / discordant if discordant else 0.0
    assert t.clustered_statistic == pytest.approx(expected)


def _clustered_flips(
    rng: np.random.Generator, n_sims: int, n_videos: int, effect: float = 0.0, items: int = 3
) -> tuple[np.ndarray, np.ndarray]:
    """Paired answers at two budgets, [S, V, items] each, where a video's items flip together:
    30% of videos flip each item with probability 0.5, the rest with 0.05, all in one direction
    per video (up with probability 0.5 + effect). With effect 0 the budgets are equally good."""
    shape = (n_sims, n_videos, items)
    q = np.where(rng.random((n_sims, n_videos, 1)) < 0.3, 0.5, 0.05)
    up = rng.random((n_sims, n_videos, 1)) < 0.5 + effect
    flips = rng.random(shape) < q
    base = (rng.random(shape) < 0.6).astype(float)
    a = np.where(flips, (~up).astype(float), base)
    b = np.where(flips, up.astype(float), base)
    return a, b


def _as_run(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One simulated run [V, items] as a matrix [n, 2] and its video ids."""
    video = np.repeat(np.arange(a.shape[0]), a.shape[1])
    return np.stack([a.ravel(), b.ravel()], axis=1), _names(video)


def _clustered_rejections(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Clustered McNemar rejections at 0.05 of every simulated run at once (the runs are the
    columns of the per-video differences)."""
    _, p = clustered_mcnemar((b - a).sum(axis=2).T)
    rejected: np.ndarray = p < 0.05
    return rejected


def _exact_rejections(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = b - a
    down, up = (d < 0).sum(axis=(1, 2)), (d > 0).sum(axis=(1, 2))
    return np.array([mcnemar_exact_p(int(x), int(z)) < 0.05 for x, z in zip(down, up, strict=True)])


def test_clustered_test_holds_its_size_where_the_exact_one_does_not() -> None:
    rng = np.random.default_rng(20260)
    a, b = _clustered_flips(rng, 4000, 100)
    exact, clustered = _exact_rejections(a, b), _clustered_rejections(a, b)
    assert 0.03 <= clustered.mean() <= 0.07, clustered.mean()  # measured 0.05
    assert exact.mean() >= 0.10, exact.mean()  # measured 0.13: items taken as independent
    boot_p = []
    for s in range(400):  # the same runs through `paired_tests`, with the video bootstrap
        y, videos = _as_run(a[s], b[s])
        (t,) = paired_tests(y, videos, [(0, 1)], ["a", "b"], VideoBootstrap(videos, 200, s))
        assert (t.clustered_p < 0.05) == clustered[s]
        boot_p.append(t.bootstrap_p is not None and t.bootstrap_p < 0.05)
    assert 0.02 <= np.mean(boot_p) <= 0.08, np.mean(boot_p)  # measured 0.05


# -- Holm ----------------------------------------------------------------------------------


def test_holm_by_hand() -> None:
    # sorted 0.005, 0.01, 0.03, 0.04 -> x4, x3, x2, x1 = 0.02, 0.03, 0.06, 0.04 -> running max
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]).size == 0


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=15), st.randoms())
def test_holm_is_monotone_bounded_and_order_free(p: list[float], shuffle: object) -> None:
    adjusted = holm(p)
    assert np.all(adjusted >= np.asarray(p) - 1e-15) and np.all(adjusted <= 1.0)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(adjusted[order]) >= -1e-15)
    perm = np.random.default_rng(len(p)).permutation(len(p))
    assert holm(np.asarray(p)[perm]) == pytest.approx(adjusted[perm])


def test_holm_controls_the_family_wise_error() -> None:
    rng = np.random.default_rng(7)
    families = rng.random((20_000, 13))  # 13 true null hypotheses, as a 10-budget 2-axis grid
    raw = (families < 0.05).any(axis=1).mean()
    adjusted = np.array([(holm(f) < 0.05).any() for f in families[:4000]]).mean()
    assert raw > 0.4  # 1 - 0.95**13 = 0.49: one "significant" flip is expected by chance
    assert adjusted <= 0.06


# -- power ---------------------------------------------------------------------------------


def test_videos_needed_reach_the_promised_power() -> None:
    effect = 0.15
    # the simulation's population: Delta = 2 effect E[q] (E[q] = 0.3 * 0.5 + 0.7 * 0.05) and
    # E[D_v^2] = E[N_v^2] for N_v ~ Binomial(3, q)
    mean_q = 0.3 * 0.5 + 0.7 * 0.05
    delta = 2 * effect * mean_q
    second = 0.3 * (3 * 0.5 * 0.5 + 9 * 0.25) + 0.7 * (3 * 0.05 * 0.95 + 9 * 0.0025)
    sd = float(np.sqrt(second - (3 * delta) ** 2))
    need = int(videos_needed(delta, sd, 3.0, 9.0))
    assert 250 < need < 350
    assert float(minimum_detectable(sd, need, 3.0, 9.0)) <= delta
    assert float(minimum_detectable(sd, need - 1, 3.0, 9.0)) > delta
    assert power_at(delta, sd, need, 3.0, 9.0) == pytest.approx(0.8, abs=0.005)
    a, b = _clustered_flips(np.random.default_rng(11), 4000, need, effect)
    clustered = _clustered_rejections(a, b)
    assert 0.76 <= clustered.mean() <= 0.86, clustered.mean()  # measured 0.80


@settings(max_examples=60, deadline=None)
@given(st.floats(0.2, 3.0), st.integers(20, 5000), st.floats(1.0, 4.0))
def test_minimum_detectable_effect_and_videos_needed_are_inverse(
    sd: float, n_videos: int, m1: float
) -> None:
    m2 = m1**2 * 1.2
    mde = float(minimum_detectable(sd, n_videos, m1, m2))
    assert mde > 0
    # the videos that effect needs are the run's own (up to rounding up)
    assert abs(int(videos_needed(mde, sd, m1, m2)) - n_videos) <= 1
    assert float(minimum_detectable(sd, 4 * n_videos, m1, m2)) < mde


def test_power_analysis_reads_the_run_variance() -> None:
    # one item per video: s^2 is the variance of the item differences d_i; 12 of 40 videos
    # differ (>= 10), so the variance may be extrapolated
    y = np.tile(np.array([[0, 1], [0, 1], [1, 0], [1, 1], [0, 0], [0, 1], [1, 0], [0, 0]]), (5, 1))
    y = y.astype(float)
    res = power_analysis(y, _names(np.arange(40)), [(0, 1)], ["a", "b"], ["frames"], 0.2)
    d = y[:, 1] - y[:, 0]
    sd = np.std(d, ddof=1)
    assert res.pairs[0].sd_per_video == pytest.approx(sd)
    assert res.axes[0].axis == "frames" and res.axes[0].pairs == ("a->b",)
    assert res.items_per_video == 1.0 and res.n_videos == 40
    assert res.pairs[0].videos_needed == int(videos_needed(0.2, sd, 1.0, 1.0))
    assert res.pairs[0].mde == pytest.approx(float(minimum_detectable(sd, 40, 1.0, 1.0)))
    assert res.pairs[0].mde_not_estimable is None
    assert res.pairs[0].videos_needed_not_estimable is None


def test_the_clustered_test_rejects_only_a_net_change_of_four_items() -> None:
    """X^2 = (sum D)^2 / sum D^2 <= |sum D| for whole items, so at 5% (z^2 = 3.84) the test needs
    a net change of 4 items: checked on every split of up to 12 one-directional flips over
    videos, and on random signed ones."""
    assert smallest_rejectable() == 4 and smallest_rejectable(0.01) == 7  # 2.576^2 = 6.63
    critical = chi2.isf(0.05, 1)
    rng = np.random.default_rng(3)
    for _ in range(2000):
        per_video = rng.integers(-3, 4, size=int(rng.integers(1, 30)))
        net, spread = abs(per_video.sum()), float((per_video**2).sum())
        if spread and net**2 / spread >= critical:
            assert net >= 4
    # and 4 flips up in 4 videos is rejected (X^2 = 16 / 4): the floor is reached
    (four,) = paired_tests(
        np.array([[0, 1]] * 4, dtype=float), _names(np.arange(4)), [(0, 1)], ["a", "b"]
    )
    assert four.clustered_statistic == pytest.approx(4.0) and four.clustered_p < 0.05


def test_a_handful_of_differences_is_not_estimable() -> None:
    """2,700 items on 900 videos whose budgets differ on 5 items: the formula would promise a
    0.2-point effect and a 2-point change with a few dozen videos; both are "not estimable", each
    with the counts it rests on."""
    n = 2700
    y = np.ones((n, 2))
    y[:700, :] = 0
    y[[3, 400, 900, 1500, 2100], 1] = 1 - y[[3, 400, 900, 1500, 2100], 1]
    videos = _names(np.arange(n) // 3)
    res = power_analysis(y, videos, [(0, 1)], ["16f", "32f"], ["axis"], 0.02)
    (pair,), (axis,) = res.pairs, res.axes
    raw_mde = float(minimum_detectable(pair.sd_per_video, 900, 3.0, 9.0))
    raw_need = float(videos_needed(0.02, pair.sd_per_video, 3.0, 9.0))
    assert raw_mde < 0.005 and raw_need * 3 * 0.02 < 4  # what the formula alone would print
    for record in (pair, axis):
        assert record.mde is None and record.videos_needed is None
        why = record.mde_not_estimable
        assert why is not None and why == record.videos_needed_not_estimable
        assert "differ on 5 of 2,700 items, in 5 of 900 videos" in why


def test_below_the_discrete_floor_is_not_estimable() -> None:
    """Enough videos differ (the variance is estimable) but the target needs fewer videos than
    can hold a net change of 4 items: the video count is not estimable, the effect stands."""
    rng = np.random.default_rng(5)
    n = 3000
    y = (rng.random((n, 1)) < 0.6).astype(float).repeat(2, axis=1)
    flip = rng.choice(n, 15, replace=False)
    y[flip, 1] = 1 - y[flip, 1]
    videos = _names(np.arange(n) // 3)
    (pair,) = power_analysis(y, videos, [(0, 1)], ["a", "b"], ["axis"], 0.02).pairs
    raw_need = float(videos_needed(0.02, pair.sd_per_video, 3.0, 9.0))
    assert raw_need * 3 * 0.02 < 4
    assert pair.mde is not None and pair.mde * n >= 4 and pair.mde_not_estimable is None
    assert pair.videos_needed is None
    why = pair.videos_needed_not_estimable or ""
    assert "rejects only a net change of at least 4 items (67 videos at the least)" in why


# -- the additive-model test ---------------------------------------------------------------


def test_additive_expectation_by_hand() -> None:
    # every pattern of each row sum once: equal column sums, so beta = 0 and each pattern of a
    # row sum is equally likely; of 100, 010, 001 two are harmful, and of 110, 101, 011 too
    y = np.array(
        [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1], [0, 0, 0], [1, 1, 1]],
        dtype=float,
    )
    h = heterogeneity_test(y, total_order(3).less)
    assert h.budget_effects == pytest.approx((0.0, 0.0, 0.0), abs=1e-9)
    assert h.n_informative == 6
    assert h.harmful.expected == pytest.approx(6 * (2 / 3) / 8)
    assert h.harmful.observed == pytest.approx(4 / 8)
    shares = {c.name: (c.observed, c.expected) for c in h.trajectories}
    assert shares["increasing"] == pytest.approx((2 / 8, 6 * (1 / 3) / 8))  # 001, 011
    assert shares["decreasing"] == pytest.approx((2 / 8, 6 * (1 / 3) / 8))  # 100, 110
    assert shares["mixed"] == pytest.approx((2 / 8, 6 * (1 / 3) / 8))  # 010, 101
    assert h.oracle_headroom == pytest.approx(7 / 8 - 4 / 8)


def test_two_budgets_fit_in_closed_form() -> None:
    # K = 2: the conditional likelihood is binomial, beta_2 - beta_1 = log(n01 / n10), and the
    # model is saturated: observed and expected harmful rates agree
    y = np.array([[0, 1]] * 3 + [[1, 0]] + [[1, 1]] * 2, dtype=float)
    beta = fit_budget_effects(y.sum(axis=0), np.bincount(y.sum(axis=1).astype(int), minlength=3))
    assert beta[1] - beta[0] == pytest.approx(np.log(3.0))
    h = heterogeneity_test(y, total_order(2).less)
    assert h.harmful.difference == pytest.approx(0.0, abs=1e-9)


def _additive(
    rng: np.random.Generator, beta: np.ndarray, n_videos: int, items: int = 3
) -> tuple[np.ndarray, np.ndarray]:
    """Answers from logit P = video effect + item effect + budget effect, cells independent."""
    video = np.repeat(np.arange(n_videos), items)
    alpha = rng.normal(0, 1.5, n_videos)[video] + rng.normal(0, 1.0, video.size)
    p = 1 / (1 + np.exp(-(alpha[:, None] + beta[None, :])))
    return (rng.random(p.shape) < p).astype(float), _names(video)


def test_additive_data_are_rejected_at_about_the_nominal_rate() -> None:
    rng = np.random.default_rng(2028)
    beta = np.array([-0.6, -0.2, 0.2, 0.6])
    less = total_order(4).less
    rejected, decreasing, diffs = [], [], []
    for s in range(400):
        y, videos = _additive(rng, beta, 100)
        h = heterogeneity_test(y, less, VideoBootstrap(videos, 200, s, method="percentile"))
        assert h.harmful.p_value is not None
        rejected.append(h.harmful.p_value < 0.05)
        down = next(c for c in h.trajectories if c.name == "decreasing")
        decreasing.append((down.p_value or 1.0) < 0.05)
        diffs.append(h.harmful.difference)
    assert 0.02 <= np.mean(rejected) <= 0.08, np.mean(rejected)  # measured 0.05
    assert 0.02 <= np.mean(decreasing) <= 0.08, np.mean(decreasing)
    assert abs(np.mean(diffs)) < 0.005  # observed minus expected centres on 0


def test_additive_data_on_a_grid_of_two_axes() -> None:
    frames = np.array([2, 2, 4, 4, 8, 8], dtype=float)
    pixels = np.array([56.0, 112.0] * 3)
    order = budget_order(frames, pixels, [f"c{i}" for i in range(6)])
    assert order.multi_axis
    rng = np.random.default_rng(5)
    rejected = []
    for s in range(300):
        y, videos = _additive(rng, np.linspace(-1.0, 1.0, 6), 80, items=1)
        h = heterogeneity_test(y, order.less, VideoBootstrap(videos, 200, s, method="percentile"))
        rejected.append(h.harmful.p_value is not None and h.harmful.p_value < 0.05)
    assert 0.02 <= np.mean(rejected) <= 0.09, np.mean(rejected)


def test_items_with_their_own_direction_are_found() -> None:
    """A quarter of the items get worse with budget as the rest get better: more items right
    only at smaller budgets (decreasing) than an additive world makes."""
    rng = np.random.default_rng(3)
    less = total_order(4).less
    found = []
    for s in range(40):
        video = np.repeat(np.arange(100), 3)
        alpha = rng.normal(0, 1.0, video.size)
        slope = np.where(rng.random(video.size) < 0.25, -1.5, 1.5)
        logit = alpha[:, None] + slope[:, None] * np.linspace(-1, 1, 4)[None, :]
        y = (rng.random(logit.shape) < 1 / (1 + np.exp(-logit))).astype(float)
        videos = _names(video)
        h = heterogeneity_test(y, less, VideoBootstrap(videos, 200, s, method="percentile"))
        decreasing = next(c for c in h.trajectories if c.name == "decreasing")
        found.append(decreasing.difference > 0 and (decreasing.p_value or 1.0) < 0.05)
    assert np.mean(found) >= 0.8


def test_the_test_is_the_same_bit_for_bit_on_rerun() -> None:
    rng = np.random.default_rng(1)
    y, videos = _additive(rng, np.array([-0.5, 0.0, 0.5]), 60)
    less = total_order(3).less
    first = heterogeneity_test(y, less, VideoBootstrap(videos, 300, 4))
    again = heterogeneity_test(y, less, VideoBootstrap(videos, 300, 4))
    assert first == again
    with pytest.raises(ValueError, match="2 to 12 budgets"):
        heterogeneity_test(y[:, :1], total_order(1).less)
    with pytest.raises(ValueError, match="the bootstrap has 180 items, the matrix 90"):
        heterogeneity_test(y[:90], less, VideoBootstrap(videos, 10, 4))


# -- the noise bound -----------------------------------------------------------------------


def test_noise_bound_by_hand() -> None:
    # two repeats; at budget 0 one of 4 items disagrees (f = 0.25), at budget 1 none
    values = np.zeros((4, 2, 2))
    values[:, 1, :] = 1.0
    values[0, 0] = [1.0, 0.0]
    y = values[:, :, 0]  # item 0 is right at both budgets in repeat 0: nothing harmful
    n = noise_comparison(values, y, total_order(2).less)
    e = (1 - np.sqrt(1 - 2 * 0.25)) / 2
    assert n.noise_bound == pytest.approx(e)
    assert n.difference == pytest.approx(0.0 - e)


def test_noise_alone_stays_under_the_bound() -> None:
    """Monotone true answers, each run flipping a cell with probability 0.04: the harmful rate
    of a run is noise, and the bound is rarely exceeded (a one-sided test at 5%)."""
    rng = np.random.default_rng(9)
    less = total_order(5).less
    rejected = []
    for s in range(200):
        switch = rng.integers(0, 6, size=240)  # right from this budget on
        truth = (np.arange(5)[None, :] >= switch[:, None]).astype(float)
        flips = rng.random((240, 5, 2)) < 0.04
        values = np.abs(truth[:, :, None] - flips)
        videos = _names(np.arange(240) // 3)
        n = noise_comparison(values, values[:, :, 0], less, VideoBootstrap(videos, 200, s))
        rejected.append((n.p_value or 1.0) < 0.05)
    assert np.mean(rejected) <= 0.05


def test_a_p_value_at_its_resampling_floor_prints_as_below_the_resolution() -> None:
    """(1 + 0) / (draws + 1) is the smallest p the draws give: it is printed as '<sides/draws',
    every larger p with its digits."""
    assert p_value_text(2 / 201, draws=200, sides=2) == "<0.01"  # not 0.00995
    assert p_value_text(4 / 201, draws=200, sides=2) == "0.0199"
    assert p_value_text(1 / 1001, draws=1000) == "<0.001"
    assert p_value_text(2 / 1001, draws=1000) == "0.002"
    assert p_value_text(1 / 1001) == "0.000999"  # no draws named: a p like any other
    assert p_value_text(None, draws=200) == "n/a"
    assert p_value_text(0.5, note="not estimable") == "not estimable"
    # what heterogeneity_test gives when no draw is as extreme
    rng = np.random.default_rng(4)
    y = (rng.random((600, 3)) < np.array([0.2, 0.5, 0.8])).astype(float)
    y[:60] = [1, 0, 0]  # many items against the budget: far from additive
    h = heterogeneity_test(y, total_order(3).less, VideoBootstrap(_names(np.arange(600)), 50, 1))
    assert h.harmful.p_value == pytest.approx(2 / 51)
    assert p_value_text(h.harmful.p_value, draws=50, sides=2) == "<0.04"


def test_a_change_is_written_with_its_sign_from_zero_up() -> None:
    """The console's and the report's one writer of a change: '+' on 0 and above, the minus of
    the number below, and no sign on "n/a"; the note stands in the interval as `stat_text`."""
    assert signed_text(Estimate(value=0.021, ci=[0.003, 0.039])) == "+2.1 [0.3, 3.9]"
    assert signed_text(Estimate(value=0.0, ci=[-0.01, 0.01])) == "+0.0 [-1.0, 1.0]"
    assert signed_text(Estimate(value=-0.05, ci=[-0.08, -0.02])) == "-5.0 [-8.0, -2.0]"
    assert signed_text(Estimate(value=None, ci=None)) == "n/a"
    assert signed_text(Estimate(value=0.02, ci=None), "not estimable") == (
        "+2.0 [interval not estimable]"
    )
