"""transformers backend (work in progress: loading is being written in this module)."""

from __future__ import annotations

from typing import Any

from ._types import BackendError, VideoLM


class HFBackend:
    @classmethod
    def load(
        cls,
        *,
        name: str,
        model: str,
        revision: str | None,
        dtype: str,
        options: dict[str, Any],
        device: str,
        batch_size: int,
        backend: str,
    ) -> VideoLM:
        raise BackendError(f"model {name!r}: the hf backend is not implemented yet")
