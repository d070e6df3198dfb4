"""From a video and a grid of configurations to the exact frames each configuration sees:
`decode_for_configs` decodes the union of every configuration's indices once; `decode_raw`
decodes one configuration on its own, the way evaluation harnesses do, so a test can prove the
two give the same pixels.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ...core.errors import warn_renamed
from ..protocol import Configuration, SelectionError
from ._cache import FrameCache
from ._media import (
    StreamIndex,
    decode_resized,
    remember_index,
    remembered_index,
    stream_index,
    video_content_hash,
)
from ._resize import target_size
from ._sampling import sample_indices
from ._selection import policy_selection, selected_frames


@dataclass(frozen=True)
class FrameSet:
    """The frames one configuration saw (`array`), their indices, stream timestamps (seconds
    since the first frame) and the size every frame was served at."""

    array: np.ndarray  # uint8 [F, H, W, 3], read-only
    indices: np.ndarray  # int64 [F]
    timestamps: np.ndarray  # float64 [F]
    width: int
    height: int
    effective_frames: int
    requested_frames: int = 0
    config_id: str = ""
    label: str = ""

    @property
    def pixels(self) -> int:
        """Pixels per frame actually used (0 for the text-only configuration)."""
        return self.width * self.height

    @property
    def frames(self) -> np.ndarray:
        """Deprecated: the pixel array is `array` (`frames` is the frame count elsewhere)."""
        warn_renamed("FrameSet.frames", "FrameSet.array")
        return self.array


@dataclass(frozen=True)
class FramePlan:
    """What a configuration needs from a video, before any decoding."""

    config: Configuration
    indices: np.ndarray
    height: int
    width: int


def plan_frames(
    index: StreamIndex,
    config: Configuration,
    *,
    item_key: str = "",
    repeat: int = 0,
) -> FramePlan:
    """Indices and output size for one configuration of one video; the `selection` policy
    takes item `item_key`'s frames from its file (`SelectionError` when they cannot be
    replayed on this video)."""
    info = index.info
    if config.is_text_only:
        return FramePlan(config, np.empty(0, dtype=np.int64), 0, 0)
    if config.sampling.name == "selection":
        selection = policy_selection(config.sampling)
        if not item_key:
            raise SelectionError(
                selection.path,
                "a selection gives each item its own frames: name the item "
                "(`item_key`; `itemscale frames --item-key ITEM_ID`)",
            )
        indices = selected_frames(
            selection,
            item_key,
            config.frames,
            video_frames=info.video_frames,
            frame_times=index.timestamps(np.arange(info.video_frames)),
        ).indices
    else:
        indices = sample_indices(
            config.sampling,
            info.video_frames,
            config.frames,
            fps=info.fps,
            item_key=item_key,
            repeat=repeat,
        )
    height, width = target_size(config, info.height, info.width)
    return FramePlan(config, indices, height, width)


def _frameset(index: StreamIndex, plan: FramePlan, stack: np.ndarray) -> FrameSet:
    stack.setflags(write=False)
    indices = plan.indices.copy()
    indices.setflags(write=False)
    timestamps = index.timestamps(plan.indices)
    timestamps.setflags(write=False)
    return FrameSet(
        array=stack,
        indices=indices,
        timestamps=timestamps,
        width=plan.width,
        height=plan.height,
        effective_frames=int(plan.indices.size),
        requested_frames=plan.config.frames,
        config_id=plan.config.config_id,
        label=plan.config.label,
    )


def _empty_stack(plan: FramePlan) -> np.ndarray:
    return np.empty((plan.indices.size, plan.height, plan.width, 3), dtype=np.uint8)


def decode_raw(
    path: str | os.PathLike[str],
    config: Configuration,
    *,
    item_key: str = "",
    repeat: int = 0,
) -> FrameSet:
    """The per-configuration pipeline: decode exactly this configuration's frames, no cache."""
    index = stream_index(path)
    plan = plan_frames(index, config, item_key=item_key, repeat=repeat)
    size = (plan.height, plan.width)
    decoded = decode_resized(index, {int(i): [size] for i in plan.indices.tolist()})
    stack = _empty_stack(plan)
    for slot, i in enumerate(plan.indices.tolist()):
        stack[slot] = decoded[(i, plan.height, plan.width)]
    return _frameset(index, plan, stack)


def _cached_index(path: str | os.PathLike[str], video_hash: str, cache: FrameCache) -> StreamIndex:
    """The video's stream index: memoised in this process, else from the frame cache, else
    built; the cache holds it afterwards (nothing when it raises `MediaError`)."""
    index = remembered_index(path)
    if index is not None:
        # memoised before a cache was given (a probe, an uncached decode): store it all the same,
        # or every new process would demux this video again
        cache.keep_index(video_hash, index)
        return index
    index = cache.get_index(video_hash, path)
    if index is not None:
        remember_index(path, index)
        return index
    index = stream_index(path)
    cache.put_index(video_hash, index)
    return index


def decode_for_configs(
    path: str | os.PathLike[str],
    configs: Iterable[Configuration],
    *,
    item_key: str = "",
    repeat: int = 0,
    cache: FrameCache | None = None,
) -> dict[str, FrameSet]:
    """Every configuration's frames from one pass over the video, keyed by config id. `cached`
    configurations share one decode of the union of their indices (and the frame cache, which
    also holds the stream index, so a warm cache needs no demux); `raw` ones are decoded on
    their own. Raises `MediaError` when the video cannot give the frames."""
    configs = list(configs)
    if cache is not None:
        video_hash = video_content_hash(path)
        index = _cached_index(path, video_hash, cache)
    else:
        video_hash = ""
        index = stream_index(path)
    plans = [plan_frames(index, c, item_key=item_key, repeat=repeat) for c in configs]
    shared = [p for p in plans if p.config.pipeline == "cached"]
    stacks = {id(p): _empty_stack(p) for p in shared}

    # Every (frame, size) the shared configurations need, and the stack slots it fills.
    slots: dict[tuple[int, int, int], list[np.ndarray]] = {}
    for plan in shared:
        stack = stacks[id(plan)]
        for slot, i in enumerate(plan.indices.tolist()):
            slots.setdefault((i, plan.height, plan.width), []).append(stack[slot])

    keys = list(slots)
    if cache is not None:
        hits = cache.read_many(video_hash, [(i, slots[(i, h, w)][0]) for i, h, w in keys])
    else:
        hits = [False] * len(keys)
    missing: dict[int, list[tuple[int, int]]] = {}
    for key, hit in zip(keys, hits, strict=True):
        i, height, width = key
        if hit:
            first, *others = slots[key]
            for other in others:
                other[...] = first
        else:
            missing.setdefault(i, []).append((height, width))

    def fill(i: int, height: int, width: int, frame: np.ndarray) -> None:
        first, *others = slots[(i, height, width)]
        first[...] = frame
        for target in others:
            target[...] = first
        if cache is not None:
            cache.put(video_hash, i, first)

    decode_resized(index, missing, sink=fill)

    out: dict[str, FrameSet] = {}
    for plan in plans:
        if plan.config.pipeline == "raw":
            out[plan.config.config_id] = decode_raw(
                path, plan.config, item_key=item_key, repeat=repeat
            )
        else:
            out[plan.config.config_id] = _frameset(index, plan, stacks[id(plan)])
    return out
