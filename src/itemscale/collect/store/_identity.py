"""Cell identity: what makes two answers answers to the same question. It holds what can change
an answer (item, backend spec, configuration, prompt template, decoding, extractor, repeat),
never runtime settings (batch size, concurrency, timeouts, device): a sweep resumed with another
batch size must find every finished cell."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from ..items import Item

#: Bumped if the way the identity is computed changes (it then names different cells).
IDENTITY_VERSION = 1

# Fields of an item that define the question asked. The video path is left out (a benchmark
# moved to another disk is the same benchmark) and so are the attributes (labels for analysis).
_ITEM_IDENTITY_FIELDS = (
    "item_id",
    "video_id",
    "task_kind",
    "question",
    "options",
    "answer",
    "references",
    "history",
)


def _canonical(payload: Any) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def item_fingerprint(item: Item) -> str:
    """Hash of the fields of `item` that define its question and expected answer."""
    data = item.model_dump(mode="json", include=set(_ITEM_IDENTITY_FIELDS))
    return hashlib.sha256(_canonical(data).encode()).hexdigest()[:24]


def cell_identity(
    *,
    item: Item,
    spec_id: str,
    config_id: str,
    prompt_template_version: str,
    decoding: Mapping[str, Any],
    extractor_version: str,
    repeat: int,
) -> str:
    """The stable id of one cell (hex, 32 characters)."""
    payload = {
        "v": IDENTITY_VERSION,
        "item": item_fingerprint(item),
        "spec": spec_id,
        "config": config_id,
        "prompt": prompt_template_version,
        "decoding": dict(decoding),
        "extractor": extractor_version,
        "repeat": int(repeat),
    }
    return hashlib.sha256(_canonical(payload).encode()).hexdigest()[:32]
