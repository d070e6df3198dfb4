"""Cross-fitting folds split *videos*: items of one video share its content, so a threshold
fitted on one question of a video and reported on another would leak.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def video_folds(video_ids: npt.ArrayLike, rng: np.random.Generator) -> IntArray:
    """Assign every item to fold 0 or 1 by its video; half the videos (rounded up) go to fold 0.

    The videos are sorted before the seeded permutation, so the folds depend only on the set of
    videos and the generator, not on the row order of the table.
    """
    videos = np.asarray(video_ids).astype(str)
    if videos.ndim != 1:
        raise ValueError("video_ids must be one-dimensional")
    unique, inverse = np.unique(videos, return_inverse=True)
    if unique.size < 2:
        raise ValueError(
            f"cross-fitting needs at least two videos, got {unique.size}; "
            "thresholds fitted and reported on the same video would leak"
        )
    order = rng.permutation(unique.size)
    fold_of_video = np.ones(unique.size, dtype=np.int64)
    fold_of_video[order[: (unique.size + 1) // 2]] = 0
    return fold_of_video[inverse]
