"""Choosing and loading a backend from a protocol's model entry, through `BACKENDS`.

Runtime settings (device, batch size, concurrency, timeouts) are arguments here, not fields of
the entry's options, because they must not change a cell's identity. What `hf` and `builtin`
share is here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

import numpy as np

from ..protocol import one_of
from ._contract import FrameTransport
from ._packages import imported_package
from ._types import BACKENDS, Backend, BackendError, LoadSettings, VideoLM
from ._types import ModelEntryLike as ModelEntryLike  # defined here before the registry

#: The built-in model's own metadata file beside its weights (written by its training).
BUILTIN_META_FILE = "builtin_meta.json"


def builtin_model_dir() -> Path:
    """Where the built-in tiny model's weights ship inside the package."""
    return Path(str(resources.files("itemscale") / "data" / "builtin"))


def saved_with_note(folder: Path, installed: str | None = None) -> str | None:
    """A warning when a checkpoint folder's `config.json` names another transformers version
    than the one answering now (docs/builtin-model.md). `installed` defaults to the imported
    module's `__version__` (a source checkout first on `PYTHONPATH` is what runs, whatever the
    installed metadata says). None when they agree or either is unknown."""
    source = ""
    if installed is None:
        running = imported_package("transformers")
        installed = running.version or running.metadata_version
        if running.matches_metadata is False:
            source = (
                f" (from {running.file}; the installed metadata says {running.metadata_version})"
            )
        if installed is None:
            return None
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    saved = config.get("transformers_version") if isinstance(config, dict) else None
    if not isinstance(saved, str) or saved == installed:
        return None
    return (
        f"{folder} was saved with transformers {saved} and transformers {installed} is the "
        f"one imported{source}: its answers may differ from those it gives under {saved} (the "
        "built-in model's accuracy moves by 5 points at 32 frames between 5.24.0 and 5.17.0); "
        "the session's stack records the version used"
    )


def builtin_backend_options(folder: Path) -> dict[str, object]:
    """The backend options the built-in model was trained to be asked with (its
    `builtin_meta.json`'s `backend_options`); a protocol's own options override them."""
    meta_path = folder / BUILTIN_META_FILE
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


def backend_of(entry: ModelEntryLike) -> Backend:

    backend = BACKENDS.get(entry.backend)
    if backend is None:
        raise BackendError(
            f"model {entry.name!r}: unknown backend {entry.backend!r} "
            f"(expected {one_of(BACKENDS, quote=False)})"
        )
    return backend


def check_backend_options(entry: ModelEntryLike) -> None:
    """A sweep (and its `--dry-run`) refuses a bad option before it creates a store."""
    backend_of(entry).parse_options(dict(entry.options or {}), entry.name)


def check_device(device: str) -> None:
    """Refuse a device torch cannot use here before the sweep makes its store (it would
    otherwise fail deep in the first model load)."""
    if device == "cpu":
        return
    import warnings

    import torch

    try:
        parsed = torch.device(device)
    except (RuntimeError, ValueError) as exc:
        raise BackendError(f"--device {device!r}: not a device torch knows ({exc})") from None
    with warnings.catch_warnings():  # "Found no NVIDIA driver": said below, once
        warnings.simplefilter("ignore")
        if parsed.type == "cuda":
            count = torch.cuda.device_count() if torch.cuda.is_available() else 0
            if count == 0:
                raise BackendError(
                    f"--device {device}: torch sees no CUDA GPU on this machine (no driver, "
                    "or CUDA_VISIBLE_DEVICES hides them; torch "
                    f"{torch.__version__}, built for CUDA {torch.version.cuda}); use --device "
                    "cpu or run where a GPU is"
                )
            if parsed.index is not None and parsed.index >= count:
                raise BackendError(
                    f"--device {device}: this machine has {count} CUDA GPU(s), "
                    f"cuda:0..cuda:{count - 1}"
                )
        elif parsed.type == "mps" and not torch.backends.mps.is_available():
            raise BackendError(f"--device {device}: torch has no MPS (Apple GPU) here")


def load_fingerprint(entry: ModelEntryLike, *, device: str) -> str | None:
    """What decides a local model's loaded spec, read without loading it (a sweep whose cells
    are all done under it need not load the model); None when it cannot be known in advance."""
    backend = BACKENDS.get(entry.backend)
    if backend is None or backend.fingerprint is None:
        return None
    return backend.fingerprint(entry, device=device)


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
    """Load the backend a model entry names. `batch_size` and `device` apply to local models,
    `concurrency`, `timeout_s`, `max_retries` and `rng` (backoff jitter) to served ones."""
    if batch_size < 1:
        raise BackendError(f"batch_size must be at least 1, got {batch_size}")
    settings = LoadSettings(
        device=device,
        batch_size=batch_size,
        concurrency=concurrency,
        timeout_s=timeout_s,
        max_retries=max_retries,
        rng=rng if rng is not None else np.random.default_rng(0),
    )
    return backend_of(entry).load(entry, settings)


# -- what the shipped local backends share (each is declared in `backends/`) -----------------


def checkpoint_fingerprint(entry: ModelEntryLike, model: str, device: str) -> str | None:
    """The entry, the device (dtype `auto` resolves per device) and the checkpoint folder's
    `local_revision`; None for a hub id without a pinned revision (it follows the hub's head)."""
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
    asked = folder_options(str(model))
    if asked:  # what the folder's builtin_meta.json asks for decides the spec too
        identity["folder_options"] = asked
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def load_local(
    entry: ModelEntryLike, model: str, options: Mapping[str, object], settings: LoadSettings
) -> VideoLM:
    from ._hf import HFBackend

    return HFBackend.load(entry, model, options, settings)


def folder_options(model: str) -> dict[str, object]:
    """The backend options a local model folder's `builtin_meta.json` asks for; none elsewhere."""
    folder = Path(model)
    return builtin_backend_options(folder) if folder.is_dir() else {}


def scoring_rule_of(entry: ModelEntryLike) -> tuple[str, str]:
    """(rule, why): how the entry's backend answers a multiple-choice item, read without
    loading anything; the sweep states it at the start and records it in run.json."""
    return backend_of(entry).scoring_rule_of(entry)


def transport_of(entry: ModelEntryLike) -> FrameTransport:
    """How the entry's frames reach its model, read without loading anything."""
    return backend_of(entry).transport_of(entry)


def local_scoring_rule(entry: ModelEntryLike) -> tuple[str, str]:
    """The `hf` and `builtin` rule: the protocol's `mcqa_scoring`, else what the checkpoint
    folder's `builtin_meta.json` asks for, else the option letter."""
    options = dict(entry.options or {})
    if "mcqa_scoring" in options:
        return str(options["mcqa_scoring"]), "the protocol's options set mcqa_scoring"
    folder = builtin_model_dir() if entry.backend == "builtin" else Path(entry.model)
    asked = folder_options(str(folder)).get("mcqa_scoring")
    if asked is not None:
        return str(asked), f"{folder / BUILTIN_META_FILE} asks for it (backend_options)"
    return "letter", "the hf backend's default"


#: itemscale's own plugin of `BACKENDS` (a test's registry is built with it)
register_backends = BACKENDS.builtins
