"""The `keep_frames` sampling the nested intervention uses: the larger budget provably keeps
every frame of the smaller one, and configurations without it keep their ids."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from itemscale.collect.protocol import Configuration, SamplingPolicy
from itemscale.collect.video import sample_indices


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["linspace", "interior", "centre", "left", "random"]),
    st.integers(1, 400),
    st.integers(2, 64),
    st.data(),
)
def test_keep_frames_contains_the_smaller_budget(
    name: str, n: int, k: int, data: st.DataObject
) -> None:
    keep = data.draw(st.integers(1, k - 1))
    base = SamplingPolicy(name=name)  # type: ignore[arg-type]
    kept = sample_indices(base, n, keep, fps=10.0, item_key="q", repeat=0)
    full = sample_indices(base, n, k, fps=10.0, item_key="q", repeat=0)
    got = sample_indices(
        SamplingPolicy(name=name, keep_frames=keep),  # type: ignore[arg-type]
        n,
        k,
        fps=10.0,
        item_key="q",
        repeat=0,
    )
    assert set(kept.tolist()) <= set(got.tolist())
    # same count as the formula's own k-frame grid, sorted, unique, inside the video
    assert got.size == full.size
    assert np.all(np.diff(got) > 0) and got.min() >= 0 and got.max() < n
    # everything added comes from the formula's own k-frame grid
    assert set(got.tolist()) - set(kept.tolist()) <= set(full.tolist())


def test_keep_frames_hand_computed() -> None:
    # 30 frames: linspace 4 -> 0 9 19 29; linspace 8 -> 0 4 8 12 16 20 24 29.
    # The 4 frames of 8 not in 4: 4 8 12 16 20 24 -> pick 4 evenly: 4 12 16 24.
    got = sample_indices(SamplingPolicy(keep_frames=4), 30, 8, fps=10.0)
    assert got.tolist() == [0, 4, 9, 12, 16, 19, 24, 29]


def test_ids_without_keep_frames_are_unchanged() -> None:
    config = Configuration(frames=8)
    assert "keep_frames" not in config.canonical()["sampling"]
    keeping = Configuration(frames=8, sampling=SamplingPolicy(keep_frames=4))
    assert keeping.canonical()["sampling"]["keep_frames"] == 4
    assert keeping.config_id != config.config_id
    assert keeping.label == "8f/linspace+keep4"
