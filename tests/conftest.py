"""Shared test setup. Torch runs on one thread: two threads on two shared cores run 20-50x
slower."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from _support.paths import shared

# Property tests draw the same examples on every run, so a red CI is reproducible and never a
# roll of the dice; `ITEMSCALE_HYPOTHESIS=explore` draws fresh ones to hunt for new failures.
settings.register_profile("deterministic", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("ITEMSCALE_HYPOTHESIS", "deterministic"))

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

try:  # torch is optional for the analysis tests
    import torch

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    pass


@pytest.fixture
def fixtures_dir() -> Path:
    """../shared/fixtures, or a skip with its reason (a failure under
    ITEMSCALE_REQUIRE_FIXTURES=1, as CI runs)."""
    return shared()
