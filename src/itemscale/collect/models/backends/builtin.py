"""`builtin`: the `hf` backend on the tiny model's weights shipped in the package
(docs/builtin-model.md). Its folder is read through `_load.builtin_model_dir` on every call,
so a test can point it elsewhere."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel

from .. import _load
from .._load import builtin_backend_options, checkpoint_fingerprint, load_local, local_scoring_rule
from .._types import BACKENDS, Backend, BackendError, LoadSettings, ModelEntryLike, VideoLM


def builtin_fingerprint(entry: ModelEntryLike, *, device: str) -> str | None:
    return checkpoint_fingerprint(entry, str(_load.builtin_model_dir()), device)


def parse_builtin_options(options: Mapping[str, object], model_name: str) -> BaseModel:
    """The `hf` options, over the ones the built-in model was trained to be asked with."""
    from .._hf import parse_options

    folder = _load.builtin_model_dir()
    return parse_options({**builtin_backend_options(folder), **options}, model_name)


def load_builtin(entry: ModelEntryLike, settings: LoadSettings) -> VideoLM:
    folder = _load.builtin_model_dir()
    if not (folder / "config.json").is_file():
        raise BackendError(
            f"model {entry.name!r}: the built-in model is not installed (no weights "
            f"in {folder}); build it first, or use backend 'hf' with a model path"
        )
    options = {**builtin_backend_options(folder), **dict(entry.options or {})}
    return load_local(entry, str(folder), options, settings)


BACKENDS.declare(
    "builtin",
    Backend(
        parse_options=parse_builtin_options,
        load=load_builtin,
        fingerprint=builtin_fingerprint,
        on_device=True,
        scoring_rule=local_scoring_rule,
    ),
    order=30,
)
