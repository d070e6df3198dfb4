"""Choosing and loading a backend from a protocol's model entry.

Runtime settings (device, batch size, concurrency, timeouts) are arguments here, not fields of
the entry's options, because they must not change a cell's identity.
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ._types import BackendError, VideoLM


class ModelEntryLike(Protocol):
    """What `load_backend` reads from a model entry (`itemscale.protocol.ModelEntry` fits)."""

    @property
    def name(self) -> str: ...

    @property
    def backend(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def revision(self) -> str | None: ...

    @property
    def dtype(self) -> str | None: ...

    @property
    def options(self) -> Any: ...


def builtin_model_dir() -> Path:
    """Where the built-in tiny model's weights ship inside the package."""
    return Path(str(resources.files("itemscale") / "data" / "builtin"))


def builtin_backend_options(folder: Path) -> dict[str, Any]:
    """The backend options the built-in model was trained to be asked with (its
    `builtin_meta.json`'s `backend_options`, e.g. option-likelihood MCQA scoring); a protocol's
    own options override them."""
    meta_path = folder / "builtin_meta.json"
    if not meta_path.is_file():
        return {}
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise BackendError(
            f"{meta_path}: cannot read the built-in model's metadata: {exc}"
        ) from exc
    options = meta.get("backend_options", {})
    if not isinstance(options, dict):
        raise BackendError(f"{meta_path}: backend_options must be a table, got {options!r}")
    return dict(options)


def check_backend_options(entry: ModelEntryLike) -> None:
    """Validate a model entry's options against its backend's typed options, without loading
    anything: a sweep (and its `--dry-run`) refuses a bad option before it creates a store."""
    options = dict(entry.options or {})
    if entry.backend in ("hf", "builtin"):
        from ._hf import parse_options as parse_hf

        if entry.backend == "builtin":
            folder = builtin_model_dir()
            options = {**builtin_backend_options(folder), **options}
        parse_hf(options, entry.name)
    elif entry.backend == "openai":
        from ._openai import parse_options as parse_openai

        parse_openai(options, entry.name)


def load_fingerprint(entry: ModelEntryLike, *, device: str) -> str | None:
    """What decides a local model's loaded spec, read without loading it: the entry (backend,
    model, revision, dtype, options), the device (dtype `auto` resolves per device) and the
    checkpoint folder's fingerprint (`local_revision`: its config files by content, weights by
    size). A sweep that finds every cell done under the spec this fingerprint loaded before
    need not load the model again. None when the spec cannot be known in advance: a served
    model (its server may change), or a hub id without a pinned revision (it resolves to
    whatever the hub's head is)."""
    if entry.backend not in ("hf", "builtin"):
        return None
    model = entry.model
    if entry.backend == "builtin":
        model = str(builtin_model_dir())
    folder = Path(model) if model else None
    if folder is not None and folder.is_dir():
        from ._hf import local_revision

        weights: str | None = local_revision(folder)
    elif entry.revision is not None:
        weights = None
    else:
        return None
    identity = {
        "backend": entry.backend,
        "model": str(model),
        "revision": entry.revision,
        "dtype": entry.dtype,
        "options": dict(entry.options or {}),
        "device": device,
        "weights": weights,
    }
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def load_backend(
    entry: ModelEntryLike,
    *,
    device: str = "cpu",
    batch_size: int = 1,
    concurrency: int = 8,
    timeout_s: float = 120.0,
    max_retries: int = 4,
    rng: np.random.Generator | None = None,
) -> VideoLM:
    """Load the backend a model entry names.

    `batch_size` and `device` apply to local models (`hf`, `builtin`); `concurrency`,
    `timeout_s`, `max_retries` and `rng` (backoff jitter) to served models (`openai`).
    """
    if batch_size < 1:
        raise BackendError(f"batch_size must be at least 1, got {batch_size}")
    options = dict(entry.options or {})
    if entry.backend in ("hf", "builtin"):
        from ._hf import HFBackend

        model = entry.model
        backend_name: str = entry.backend
        if entry.backend == "builtin":
            folder = builtin_model_dir()
            if not (folder / "config.json").is_file():
                raise BackendError(
                    f"model {entry.name!r}: the built-in model is not installed (no weights "
                    f"in {folder}); build it first, or use backend 'hf' with a model path"
                )
            model = str(folder)
            options = {**builtin_backend_options(folder), **options}
        return HFBackend.load(
            name=entry.name,
            model=model,
            revision=entry.revision,
            dtype=entry.dtype,
            options=options,
            device=device,
            batch_size=batch_size,
            backend=backend_name,
        )
    if entry.backend == "openai":
        from ._openai import OpenAIBackend

        return OpenAIBackend.create(
            name=entry.name,
            model=entry.model,
            revision=entry.revision,
            dtype=entry.dtype,
            options=options,
            concurrency=concurrency,
            timeout_s=timeout_s,
            max_retries=max_retries,
            rng=rng if rng is not None else np.random.default_rng(0),
        )
    raise BackendError(
        f"model {entry.name!r}: unknown backend {entry.backend!r} (expected hf, openai or builtin)"
    )
