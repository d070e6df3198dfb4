"""Sampling formulas: a sampling policy, the video's length (`video_frames`) and a budget's frame
count (`frames`) give the exact frame indices. Inside the formulas they are n and K, the
notation of the papers and harnesses each formula comes from.

The conventions in use differ only by phase and still change many answers at equal accuracy, so
each one is reproduced exactly (golden tests pin them) and named in every record.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any, Final

import numpy as np

from ...core.errors import renamed_keywords
from ..protocol import SamplingPolicy

# Qwen-VL utilities' frame-count rules (qwen-vl-utils `smart_nframes`).
FRAME_FACTOR: Final[int] = 2
FPS_MIN_FRAMES: Final[int] = 4
FPS_MAX_FRAMES: Final[int] = 768


def _floor_by(number: float, factor: int) -> int:
    return math.floor(number / factor) * factor


def _ceil_by(number: float, factor: int) -> int:
    return math.ceil(number / factor) * factor


@renamed_keywords(n_frames="video_frames", k="frames")
def fps_frame_count(
    video_frames: int, frames: int, *, video_fps: float, fps: float, duration_s: float | None = None
) -> int:
    """How many frames Qwen's utilities take at `fps` when asked with `max_frames` = the
    budget's `frames` (qwen-vl-utils `smart_nframes`): the rate's count clamped to [4, frames]
    and to the video, floored to an even number. The budget replaces the utilities' default cap
    of 768 (`FPS_MAX_FRAMES`, which applies only when no `max_frames` is given), so a budget
    above 768 frames takes up to its own count, as qwen-vl-utils does. Budgets below 2 frames
    (which Qwen's code rejects) take min(frames, video_frames) instead of failing."""
    duration = duration_s if duration_s is not None else video_frames / video_fps
    min_frames = _ceil_by(FPS_MIN_FRAMES, FRAME_FACTOR)
    max_frames = _floor_by(min(frames, video_frames), FRAME_FACTOR)
    wanted = duration * fps
    count = min(max(wanted, min_frames), max_frames, video_frames)
    nframes = _floor_by(count, FRAME_FACTOR)
    if nframes < FRAME_FACTOR:
        return min(frames, video_frames)
    return nframes


def _van_der_corput(count: int) -> np.ndarray:
    """The first `count` points of the base-2 van der Corput sequence: 0, 1/2, 1/4, 3/4, 1/8, ...
    Every prefix of length 2^m is exactly {i / 2^m}, and a prefix of a prefix is a prefix, which
    is what makes `nested` budgets contain each other."""
    out = np.empty(count, dtype=np.float64)
    for i in range(count):
        x, denom, j = 0.0, 1.0, i
        while j:
            denom *= 2.0
            x += (j & 1) / denom
            j >>= 1
        out[i] = x
    return out


def _nested(n: int, k: int) -> np.ndarray:
    target = min(k, n)
    # Take points of the sequence in order until `target` distinct frames are covered; the number
    # of points grows with k, so a larger budget's set is a superset of a smaller one's.
    chosen: list[int] = []
    seen: set[int] = set()
    m = 0
    block = max(target, 1)
    points = _van_der_corput(block)
    while len(chosen) < target:
        if m >= len(points):
            points = _van_der_corput(len(points) * 2)
        index = math.floor(points[m] * n)
        m += 1
        if index not in seen:
            seen.add(index)
            chosen.append(index)
    return np.asarray(chosen, dtype=np.int64)


def _item_seed(seed: int, item_key: str, repeat: int) -> np.random.Generator:
    item_hash = int.from_bytes(hashlib.sha256(item_key.encode("utf-8")).digest()[:8], "big")
    return np.random.default_rng([seed, item_hash, repeat])


def _keeping(
    sampling: SamplingPolicy,
    video_frames: int,
    frames: int,
    fps: float,
    item_key: str,
    repeat: int,
    duration_s: float | None,
) -> np.ndarray:
    """Every frame the formula picks at `keep_frames`, topped up to the formula's own count at
    `frames` with frames spread evenly over the rest of its grid (the sampling intervention's
    nested change: the larger budget provably contains the smaller one)."""
    assert sampling.keep_frames is not None
    base = sampling.model_copy(update={"keep_frames": None})
    args: dict[str, Any] = {
        "fps": fps,
        "item_key": item_key,
        "repeat": repeat,
        "duration_s": duration_s,
    }
    kept = sample_indices(base, video_frames, min(sampling.keep_frames, frames), **args)
    full = sample_indices(base, video_frames, frames, **args)
    need = full.size - kept.size
    rest = np.setdiff1d(full, kept)
    if need <= 0 or rest.size == 0:
        return kept
    # floor(x + 0.5) of points at least 1 apart never collide (np.round's half-to-even can).
    picks = np.floor(np.linspace(0, rest.size - 1, need) + 0.5).astype(np.int64)
    return np.unique(np.concatenate([kept, rest[picks]]))


@renamed_keywords(policy="sampling", n_frames="video_frames", k="frames")
def sample_indices(
    sampling: SamplingPolicy,
    video_frames: int,
    frames: int,
    *,
    fps: float,
    item_key: str = "",
    repeat: int = 0,
    duration_s: float | None = None,
) -> np.ndarray:
    """Sorted, unique int64 frame indices of a video `video_frames` long for a budget of
    `frames` frames: at most `frames` (a shorter video yields fewer, the effective count; no
    policy ever decodes the whole video in place of the budget). `item_key` and `repeat` seed
    the `random` policy so every item and repeat draws its own frames."""
    if video_frames <= 0:
        raise ValueError(f"video_frames must be > 0 (got {video_frames})")
    if frames < 0:
        raise ValueError(f"frames must be >= 0 (got {frames})")
    if frames == 0:
        return np.empty(0, dtype=np.int64)
    if sampling.name == "selection":
        raise ValueError(
            "the selection policy has no formula: its frames come from its file "
            "(itemscale.collect.video.selected_frames, or plan_frames with the item's id)"
        )
    if sampling.keep_frames is not None:
        return _keeping(sampling, video_frames, frames, fps, item_key, repeat, duration_s)
    n, k = video_frames, frames  # the formulas' notation
    phase = sampling.phase
    name = sampling.name
    if name == "linspace":
        if k == 1:
            positions = np.zeros(1)
        else:
            step = (n - 1) / (k - 1)
            positions = np.linspace(0, n - 1, k) + phase * step
        raw = positions.astype(np.int64) if phase else np.linspace(0, n - 1, k, dtype=int)
    elif name == "interior":
        # VLMEvalKit multiplies by the already-rounded step, int(i * (n / (K + 1))); at exact
        # multiples (n=45, K=32, i=11) that truncates 14.999... to 14, unlike int(i * n / (K + 1)).
        step = n / (k + 1)
        raw = np.array([int((i + phase) * step) for i in range(1, k + 1)], dtype=np.int64)
    elif name == "centre":
        raw = np.array([int((i + 0.5 + phase) * n / k) for i in range(k)], dtype=np.int64)
    elif name == "left":
        raw = np.array([int((i + phase) * n / k) for i in range(k)], dtype=np.int64)
    elif name == "fps":
        assert sampling.fps is not None
        count = fps_frame_count(n, k, video_fps=fps, fps=sampling.fps, duration_s=duration_s)
        raw = np.round(np.linspace(0, n - 1, count)).astype(np.int64)
    elif name == "nested":
        raw = _nested(n, k)
    elif name == "random":
        assert sampling.seed is not None
        rng = _item_seed(sampling.seed, item_key, repeat)
        raw = rng.choice(n, size=min(k, n), replace=False)
    else:  # pragma: no cover - the Literal type rules this out
        raise ValueError(f"unknown sampling policy {name!r}")
    return np.unique(np.clip(np.asarray(raw, dtype=np.int64), 0, n - 1))
