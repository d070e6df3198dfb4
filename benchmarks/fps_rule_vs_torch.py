"""How often the `fps` sampling policy's frame indices differ from qwen-vl-utils', which
computes `torch.linspace(0, n - 1, count).round().long()` in float32 (itemscale uses float64,
the exact linspace): 1,000 seeded cases per video-length band, budgets 8..768 frames, 30 fps
video sampled at 2 fps. Prints, per band, how many index lists differ and by how much.

    OMP_NUM_THREADS=1 python benchmarks/fps_rule_vs_torch.py

Needs torch (the `models` extra); the figures are in docs/protocol.md.
"""

from __future__ import annotations

import numpy as np
import torch

from itemscale.collect.video._sampling import fps_frame_count

BANDS = ((8, 2_000), (2_000, 14_000), (14_000, 60_000), (60_000, 200_000))
BUDGETS = (8, 16, 32, 64, 128, 256, 512, 768)


def main() -> None:
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    print(f"torch {torch.__version__}; 1,000 cases per band")
    for low, high in BANDS:
        differ = largest = 0
        for _ in range(1000):
            n = int(rng.integers(low, high))
            count = fps_frame_count(n, int(rng.choice(BUDGETS)), video_fps=30.0, fps=2.0)
            theirs = torch.linspace(0, n - 1, count).round().long().numpy()
            ours = np.round(np.linspace(0, n - 1, count)).astype(np.int64)
            if not np.array_equal(theirs, ours):
                differ += 1
                largest = max(largest, int(np.abs(theirs - ours).max()))
        print(f"videos of {low:>7,}-{high:>7,} frames: {differ:>4} of 1000 differ, by <= {largest}")


if __name__ == "__main__":
    main()
