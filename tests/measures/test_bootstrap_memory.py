"""The bootstrap's count matrix held as small integers: the same draws as the float matrix it
replaced (same seed, same counts, in the same order), and products that do not depend on how
many resamples are multiplied at once."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itemscale.analysis.measures import VideoBootstrap, _bootstrap, resample_counts
from itemscale.analysis.measures._bootstrap import CHUNK


def float_counts(n_clusters: int, n_boot: int, seed: int) -> np.ndarray:
    """The count matrix as drawn before it was held as integers: each chunk's [rows, V] draws
    in one call of its own generator, counted by one `bincount`."""
    out = np.empty((n_boot, n_clusters), dtype=np.float32)
    for c, start in enumerate(range(0, n_boot, CHUNK)):
        rows = min(CHUNK, n_boot - start)
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(c,))))
        draws = rng.integers(0, n_clusters, size=(rows, n_clusters), dtype=np.int64)
        draws += (np.arange(rows, dtype=np.int64) * n_clusters)[:, None]
        counts = np.bincount(draws.ravel(), minlength=rows * n_clusters)
        out[start : start + rows] = counts.reshape(rows, n_clusters)
    return out


@pytest.mark.parametrize(
    ("n_clusters", "n_boot"), [(1, 5), (3, 250), (50, 350), (20_000, 130), (2**20 + 5, 2)]
)
def test_counts_are_the_draws_of_the_float_matrix(
    n_clusters: int, n_boot: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = float_counts(n_clusters, n_boot, seed=7)
    got = resample_counts(n_clusters, n_boot, 7)
    assert got.dtype == np.uint8 and np.array_equal(got, expected)
    # drawn a few resamples per call of the generator: still the same stream
    monkeypatch.setattr(_bootstrap, "_DRAWS_AT_ONCE", 3 * n_clusters)
    assert np.array_equal(resample_counts(n_clusters, n_boot, 7), expected)


def test_a_count_past_255_widens_the_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    """One video of 300 drawn 300 times in a resample is a count uint8 cannot hold: the
    matrix widens, and the rows counted before keep their counts."""
    real = np.bincount
    calls = {"n": 0}

    def all_on_video_0(x: np.ndarray, minlength: int = 0) -> np.ndarray:
        calls["n"] += 1
        out = real(x, minlength=minlength)
        if calls["n"] == 2:  # the second resample drew video 0 every time
            out[:] = 0
            out[0] = len(x)
        return out

    monkeypatch.setattr(_bootstrap, "_DRAWS_AT_ONCE", 300)  # one resample per draw
    monkeypatch.setattr(np, "bincount", all_on_video_0)
    counts = resample_counts(300, 3, seed=1)
    monkeypatch.undo()
    expected = float_counts(300, 3, seed=1)
    assert counts.dtype == np.uint16
    assert counts[1, 0] == 300 and counts[1, 1:].sum() == 0
    assert np.array_equal(counts[[0, 2]], expected[[0, 2]])


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 40),
    st.integers(0, 260),
    st.lists(st.integers(-3, 3), min_size=1, max_size=80),
    st.booleans(),
)
def test_products_do_not_depend_on_the_block_of_resamples(
    n_videos: int, n_boot: int, values: list[int], halves: bool
) -> None:
    """Integer statistics: the product a block at a time equals the float64 product of the
    whole matrix exactly; others are summed `CHUNK` resamples at a time as before."""
    videos = np.array([f"v{i % n_videos}" for i in range(len(values))], dtype=object)
    boot = VideoBootstrap(videos, n_boot, seed=4)
    x = np.asarray(values, dtype=float)[:, None]
    x = x / 2 if halves else x
    whole = boot.counts.astype(np.float64) @ boot.cluster_sums(x)
    got = boot.sums(x)
    assert got.dtype == np.float64
    if halves:
        np.testing.assert_allclose(got, whole, rtol=1e-12, atol=1e-9)
    else:
        assert np.array_equal(got, whole)
    for rows in (0, 1, n_boot):
        part = boot.resampled(boot.cluster_sums(x), rows)
        np.testing.assert_array_equal(part, got[:rows])
