"""Shared test setup. Torch runs on one thread: two threads on two shared cores run 20-50x
slower."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from _support.paths import shared

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
