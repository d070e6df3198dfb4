"""Is the harmful rate more than an additive world gives? A test of item x budget interaction.

The additive (Rasch) model logit P(y_ik = 1) = alpha_i + beta_k has harmful items too, so the
test compares the run with it: beta by conditional maximum likelihood (Andersen 1970), the
expected harmful rate exact over the 2^K patterns of each row sum (K <= `MAX_BUDGETS`), the
null a parametric bootstrap over whole videos, the interval the ordinary video bootstrap
(docs/measures.md). The model reproduces the oracle headroom exactly, so headroom alone is no
evidence of interaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ._binary import beneficial_indicator, disagreement, harmful_indicator
from ._bootstrap import VideoBootstrap, percentile_interval

#: Budgets up to which the 2^K patterns are enumerated (4,096 patterns).
MAX_BUDGETS = 12
#: Resamples the test uses by default (the first ones of the shared video bootstrap), for the
#: null draws and the intervals alike: each draws and refits every pattern of every row sum,
#: so it costs about as much as the rest of a block's bootstrap (docs/performance.md).
DEFAULT_DRAWS = 200
#: `SeedSequence(seed, spawn_key=NULL_SPAWN_KEY)` draws the null patterns; the bootstrap's
#: chunks use one-element keys, so the streams never coincide.
NULL_SPAWN_KEY = (28, 1)
_BETA_BOUND = 15.0
_RIDGE = 1e-8
_POINT_ITERATIONS = 60
_RESAMPLE_ITERATIONS = 3

Bounds = tuple[float, float] | None


@dataclass(frozen=True)
class Comparison:
    """One share of items, observed and under the additive model."""

    name: str
    observed: float
    observed_ci: Bounds
    expected: float
    expected_ci: Bounds
    difference: float
    difference_ci: Bounds
    #: two-sided p of the difference under the additive model (parametric bootstrap)
    p_value: float | None


@dataclass(frozen=True)
class HeterogeneityTest:
    """The harmful rate, and each trajectory's share, against the additive model."""

    n_items: int
    #: items right at some budgets and wrong at others (the only ones that carry information)
    n_informative: int
    #: the fitted budget effects (logits, centred on their mean), in axis order
    budget_effects: tuple[float, ...]
    harmful: Comparison
    #: one per TRAJECTORIES
    trajectories: tuple[Comparison, ...]
    n_null: int
    #: reproduced exactly by the additive model (a function of the margins)
    oracle_headroom: float


@dataclass(frozen=True)
class NoiseComparison:
    """With repeats: the harmful rate against the most that test-retest noise can produce."""

    noise_bound: float
    noise_bound_ci: Bounds
    difference: float
    difference_ci: Bounds
    #: one-sided bootstrap p of "the harmful rate is no larger than the bound"
    p_value: float | None


#: The trajectories the test breaks the harmful rate into: `decreasing` (harmful, never
#: beneficial: right at smaller budgets only) and `mixed` (harmful and beneficial) are the
#: harmful items; `increasing` (beneficial only) are not.
TRAJECTORIES = ("increasing", "decreasing", "mixed")


@dataclass(frozen=True)
class _Patterns:
    bits: np.ndarray  # [M, K] every 0/1 pattern
    #: [M, 4]: harmful, then TRAJECTORIES (1.0 where the pattern is one)
    indicators: np.ndarray
    groups: tuple[slice, ...]  # the patterns of row sum r, r = 0..K (sorted by row sum)
    #: [2^K, 4]: the same indicators by pattern code (sum over k of y_k 2^k), for lookup
    by_code: np.ndarray


def _indicators(y: np.ndarray, less: np.ndarray) -> np.ndarray:
    """[n, 4]: harmful, then each of TRAJECTORIES."""
    down = harmful_indicator(y, less)
    up = beneficial_indicator(y, less)
    return np.stack([down, up & ~down, down & ~up, down & up], axis=1).astype(float)


@lru_cache(maxsize=32)
def _patterns_cached(k: int, less_bytes: bytes) -> _Patterns:
    less = np.frombuffer(less_bytes, dtype=bool).reshape(k, k)
    codes = np.arange(2**k, dtype=np.int64)
    bits = ((codes[:, None] >> np.arange(k)) & 1).astype(float)
    sums = bits.sum(axis=1).astype(np.int64)
    by_sum = np.argsort(sums, kind="stable")
    bits, sums = bits[by_sum], sums[by_sum]
    starts = np.searchsorted(sums, np.arange(k + 2))
    groups = tuple(slice(int(starts[r]), int(starts[r + 1])) for r in range(k + 1))
    indicators = _indicators(bits, less)
    by_code = np.empty_like(indicators)
    by_code[codes[by_sum]] = indicators
    return _Patterns(bits=bits, indicators=indicators, groups=groups, by_code=by_code)


def _item_indicators(
    y: np.ndarray, right: np.ndarray, less: np.ndarray, pat: _Patterns
) -> np.ndarray:
    """`_indicators` of every item [n, 4], looked up by answer pattern where every cell is 0/1."""
    if not ((y == 0) | (y == 1)).all():
        return _indicators(y, less)
    codes = right.astype(np.int64) @ (np.int64(1) << np.arange(y.shape[1], dtype=np.int64))
    result: np.ndarray = pat.by_code[codes]
    return result


def _patterns(less: np.ndarray) -> _Patterns:
    less = np.ascontiguousarray(less, dtype=bool)
    return _patterns_cached(less.shape[0], less.tobytes())


def _conditional(
    beta: np.ndarray, pat: _Patterns, second: bool = False, *, indicators: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """For budget effects [B, K]: E[y | r] [B, K+1, K], the probability of each indicator given
    r [B, K+1, 4] (zeros without `indicators`: the refits need only the mean) and, with
    `second`, Cov(y | r) [B, K+1, K, K]."""
    b, k = beta.shape
    mean = np.zeros((b, k + 1, k))
    probs = np.zeros((b, k + 1, pat.indicators.shape[1]))
    cov = np.zeros((b, k + 1, k, k)) if second else None
    for r, idx in enumerate(pat.groups):
        bits = pat.bits[idx]
        logw = beta @ bits.T
        w = np.exp(logw - logw.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        mean[:, r] = w @ bits
        if indicators:
            probs[:, r] = w @ pat.indicators[idx]
        if cov is not None:
            outer = np.einsum("bm,mk,ml->bkl", w, bits, bits)
            cov[:, r] = outer - mean[:, r, :, None] * mean[:, r, None, :]
    return mean, probs, cov


def _newton_step(beta: np.ndarray, grad: np.ndarray, info: np.ndarray) -> np.ndarray:
    """One step of every problem at once; the information has the all-ones direction as its
    null space (effects are identified up to a constant), which J = 11'/K fills."""
    k = beta.shape[1]
    system = info + np.ones((k, k)) / k + _RIDGE * np.eye(k)
    step = np.linalg.solve(system, grad[..., None])[..., 0]
    out = np.clip(beta + step, -_BETA_BOUND, _BETA_BOUND)
    result: np.ndarray = out - out.mean(axis=1, keepdims=True)
    return result


def fit_budget_effects(column_sums: np.ndarray, row_sum_counts: np.ndarray) -> np.ndarray:
    """Conditional maximum likelihood budget effects [K] (logits centred on their mean) from the
    column sums [K] and the row-sum histogram [K+1] of a binary matrix (Newton, to convergence
    or a bound of +-15 logits for a budget no informative item gets wrong, or right)."""
    k = int(np.asarray(column_sums).shape[0])
    # the likelihood needs the patterns of each row sum, whatever the budget order
    return _fit(
        np.asarray(column_sums, float),
        np.asarray(row_sum_counts, float),
        _patterns(np.zeros((k, k), dtype=bool)),
    )


def _fit(column_sums: np.ndarray, row_sum_counts: np.ndarray, pat: _Patterns) -> np.ndarray:
    k = column_sums.shape[0]
    beta = np.zeros((1, k))
    c = column_sums[None, :]
    n = row_sum_counts[None, :]
    for _ in range(_POINT_ITERATIONS):
        mean, _, cov = _conditional(beta, pat, second=True, indicators=False)
        assert cov is not None
        grad = c - np.einsum("br,brk->bk", n, mean)
        info = np.einsum("br,brkl->bkl", n, cov)
        new = _newton_step(beta, grad, info)
        done = float(np.abs(new - beta).max()) < 1e-10
        beta = new
        if done:
            break
    return np.asarray(beta[0])


def _refit(
    column_sums: np.ndarray, row_sum_counts: np.ndarray, beta_hat: np.ndarray, pat: _Patterns
) -> np.ndarray:
    """Budget effects [B, K] of many resamples at once: Newton steps from the point fit with the
    information at the point fit (rescaled to each resample's row sums), which converges in a
    few steps because resampled effects lie close to it."""
    b = column_sums.shape[0]
    _, _, cov = _conditional(beta_hat[None, :], pat, second=True, indicators=False)
    assert cov is not None
    info = np.einsum("br,rkl->bkl", row_sum_counts, cov[0])
    beta = np.repeat(beta_hat[None, :], b, axis=0)
    for _ in range(_RESAMPLE_ITERATIONS):
        mean, _, _ = _conditional(beta, pat, indicators=False)
        grad = column_sums - np.einsum("br,brk->bk", row_sum_counts, mean)
        beta = _newton_step(beta, grad, info)
    return beta


def _expected(beta: np.ndarray, row_sum_counts: np.ndarray, pat: _Patterns) -> np.ndarray:
    """Expected shares [B, 4] (harmful, TRAJECTORIES) for effects [B, K], histograms [B, K+1]."""
    _, probs, _ = _conditional(beta, pat)
    with np.errstate(invalid="ignore", divide="ignore"):
        total = np.einsum("br,brj->bj", row_sum_counts, probs)
        result: np.ndarray = total / row_sum_counts.sum(axis=1, keepdims=True)
    return result


def _null_draws(
    beta_hat: np.ndarray, row_sum_counts: np.ndarray, pat: _Patterns, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Column sums [B, K] and indicator counts [B, 4] of data drawn from the fitted model, each
    resample's items keeping their row sums (multinomial counts of the patterns per row sum)."""
    rng = np.random.Generator(
        np.random.PCG64(np.random.SeedSequence(seed, spawn_key=NULL_SPAWN_KEY))
    )
    b = row_sum_counts.shape[0]
    k = pat.bits.shape[1]
    column_sums = np.zeros((b, k))
    indicators = np.zeros((b, pat.indicators.shape[1]))
    for r, idx in enumerate(pat.groups):
        bits = pat.bits[idx]
        logw = bits @ beta_hat
        w = np.exp(logw - logw.max())
        counts = rng.multinomial(np.rint(row_sum_counts[:, r]).astype(np.int64), w / w.sum())
        column_sums += counts @ bits
        indicators += counts @ pat.indicators[idx]
    return column_sums, indicators


def _resampled_integers(boot: VideoBootstrap, per_video: np.ndarray, rows: int) -> np.ndarray:
    """`counts[:rows] @ per_video` [rows, M] in float64 for per-video integer counts, in one
    product: in float32 when every resampled sum stays below 2**24 (each is at most the
    largest per-video value times the number of videos, and every partial sum of these
    non-negative terms is an integer below it, so the float32 product is exact and equals the
    float64 one), else through `VideoBootstrap.resampled`."""
    per_video = np.asarray(per_video, dtype=np.float64)
    bound = float(per_video.max(initial=0.0)) * boot.n_clusters
    if per_video.min(initial=0.0) >= 0 and bound < 2**24:
        # the float32 copy of the counts the block's products keep, where there is one (else
        # the first rows converted here): the same exact sums
        kept = boot.float32_counts()
        counts = kept[:rows] if kept is not None else boot.counts[:rows].astype(np.float32)
        exact = counts @ per_video.astype(np.float32)
        return np.asarray(exact, dtype=np.float64)
    return boot.resampled(per_video, rows)


def _two_sided(null: np.ndarray, observed: float) -> float:
    null = null[~np.isnan(null)]
    tol = 1e-12
    above = (1.0 + np.sum(null >= observed - tol)) / (null.size + 1.0)
    below = (1.0 + np.sum(null <= observed + tol)) / (null.size + 1.0)
    return float(min(1.0, 2.0 * min(above, below)))


def heterogeneity_test(
    y: np.ndarray,
    less: np.ndarray,
    boot: VideoBootstrap | None = None,
    draws: int = DEFAULT_DRAWS,
) -> HeterogeneityTest:
    """The additive model's harmful rate and trajectory shares beside the observed ones for the
    binary matrix `y` [n, K] under the budget order `less`; intervals and p-values need `boot`
    (the video bootstrap of the same items: its seed and first `draws` resamples). Raises
    ValueError for fewer than 2 or more than `MAX_BUDGETS` budgets, no item, or a bootstrap of
    other items."""
    n, k = y.shape
    if boot is not None and boot.codes.size != n:
        raise ValueError(f"the bootstrap has {boot.codes.size} items, the matrix {n}")
    if not 2 <= k <= MAX_BUDGETS or n == 0:
        raise ValueError(
            f"the additive-model test needs 2 to {MAX_BUDGETS} budgets and an item, not "
            f"{k} budgets and {n} items"
        )
    pat = _patterns(less)
    right = y >= 1
    row_sums = right.sum(axis=1)
    marks = _item_indicators(y, right, less, pat)
    counts = np.bincount(row_sums, minlength=k + 1).astype(float)
    beta = _fit(right.sum(axis=0).astype(float), counts, pat)
    observed = marks.mean(axis=0)
    expected = _expected(beta[None, :], counts[None, :], pat)[0]
    width = marks.shape[1]
    obs_ci: list[Bounds] = [None] * width
    exp_ci: list[Bounds] = [None] * width
    diff_ci: list[Bounds] = [None] * width
    p_values: list[float | None] = [None] * width
    rows = min(max(draws, 0), boot.counts.shape[0]) if boot is not None else 0
    if boot is not None and rows > 0:
        # per video: the row-sum histogram, the column sums and the indicator counts; their
        # resampled sums are integers below 2**53, exact in float64
        per_video_hist = np.bincount(
            boot.codes * (k + 1) + row_sums, minlength=boot.n_clusters * (k + 1)
        ).reshape(boot.n_clusters, k + 1)
        per_video = np.hstack([per_video_hist, boot.cluster_sums(np.hstack([right, marks]))])
        both = _resampled_integers(boot, per_video, rows)
        hist, cols, marks_s = (
            np.ascontiguousarray(both[:, part])
            for part in (slice(0, k + 1), slice(k + 1, 2 * k + 1), slice(2 * k + 1, None))
        )
        size = hist.sum(axis=1, keepdims=True)
        obs_s = marks_s / size
        exp_s = _expected(_refit(cols, hist, beta, pat), hist, pat)
        null_cols, null_marks = _null_draws(beta, hist, pat, boot.seed)
        null_diff = null_marks / size - _expected(_refit(null_cols, hist, beta, pat), hist, pat)
        for j in range(width):
            obs_ci[j] = percentile_interval(obs_s[:, j])
            exp_ci[j] = percentile_interval(exp_s[:, j])
            diff_ci[j] = percentile_interval(obs_s[:, j] - exp_s[:, j])
            p_values[j] = _two_sided(null_diff[:, j], float(observed[j] - expected[j]))
    comparisons = [
        Comparison(
            name=name,
            observed=float(observed[j]),
            observed_ci=obs_ci[j],
            expected=float(expected[j]),
            expected_ci=exp_ci[j],
            difference=float(observed[j] - expected[j]),
            difference_ci=diff_ci[j],
            p_value=p_values[j],
        )
        for j, name in enumerate(("harmful", *TRAJECTORIES))
    ]
    return HeterogeneityTest(
        n_items=n,
        n_informative=int(((row_sums > 0) & (row_sums < k)).sum()),
        budget_effects=tuple(float(b) for b in beta),
        harmful=comparisons[0],
        trajectories=tuple(comparisons[1:]),
        n_null=int(rows),
        oracle_headroom=float((row_sums > 0).mean() - right.mean(axis=0).max()),
    )


def _per_run_flip(floor: np.ndarray) -> np.ndarray:
    """The per-run flip probability e that makes two runs disagree with probability f =
    2 e (1 - e), for e <= 1/2 (concave in f, so the mean's e bounds the items' mean e)."""
    f = np.clip(floor, 0.0, 0.5)
    result: np.ndarray = (1.0 - np.sqrt(1.0 - 2.0 * f)) / 2.0
    return result


def noise_comparison(
    values: np.ndarray,
    y: np.ndarray,
    less: np.ndarray,
    boot: VideoBootstrap | None = None,
) -> NoiseComparison:
    """Harmful rate (repeat 0, `y`) against the noise bound from repeats `values` [n, K, R].

    If every item's modal answer never got worse with budget, a harmful pattern in one run
    needs a cell of that run to differ from its modal answer; a union bound over the K cells
    gives a harmful rate of at most sum_k e(f_k), with f_k the noise floor at budget k."""
    noise = disagreement(values)
    harm = harmful_indicator(y, less).astype(float)
    floor = noise.mean(axis=0)
    bound = float(min(1.0, _per_run_flip(floor).sum()))
    observed = float(harm.mean())
    bound_ci: Bounds = None
    diff_ci: Bounds = None
    p_value = None
    if boot is not None and boot.bootstrap > 0 and len(harm):
        means = boot.means(np.hstack([noise, harm[:, None]]))
        bound_s = np.minimum(1.0, _per_run_flip(means[:, :-1]).sum(axis=1))
        diff_s = means[:, -1] - bound_s
        bound_ci, diff_ci = percentile_interval(bound_s), percentile_interval(diff_s)
        p_value = float((1.0 + np.sum(diff_s <= 0)) / (diff_s.size + 1.0))
    return NoiseComparison(
        noise_bound=bound,
        noise_bound_ci=bound_ci,
        difference=observed - bound,
        difference_ci=diff_ci,
        p_value=p_value,
    )
