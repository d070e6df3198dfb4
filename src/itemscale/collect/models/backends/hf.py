"""`hf`: a transformers checkpoint, a local folder or a hub id (docs/backends.md)."""

from __future__ import annotations

from .._load import checkpoint_fingerprint, folder_options, load_local, local_scoring_rule
from .._types import BACKENDS, Backend, LoadSettings, ModelEntryLike, VideoLM, lazy


def hf_fingerprint(entry: ModelEntryLike, *, device: str) -> str | None:
    return checkpoint_fingerprint(entry, entry.model, device)


def load_hf(entry: ModelEntryLike, settings: LoadSettings) -> VideoLM:
    # a folder whose builtin_meta.json asks for a scoring rule gets it here too, so `hf` and
    # `builtin` on one folder answer alike; the protocol's own options override it
    options = {**folder_options(entry.model), **dict(entry.options or {})}
    return load_local(entry, entry.model, options, settings)


BACKENDS.declare(
    "hf",
    Backend(
        parse_options=lazy("itemscale.collect.models._hf:parse_options"),
        load=load_hf,
        fingerprint=hf_fingerprint,
        on_device=True,
        scoring_rule=local_scoring_rule,
    ),
    order=10,
)
