"""What an lmms-eval log says of its items, apart from the answers: how the log names them (a
payload id, `submission`'s key), their videos and attributes, the options its prompts list, and
the question each sample was asked, which the import keeps in the run's `items.jsonl` so that
the report's item explorer shows and searches it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from pydantic import ValidationError

from ...core.responses import ResponseRow, TaskKind
from ..items import Item
from ._common import JsonObject, attributes_json
from ._jobs import OPTION_LINE
from ._lmms_eval_files import Sample

# Payload keys that carry per-item metadata, mapped to the shared attribute names.
ATTRIBUTE_KEYS: Final[dict[str, str]] = {
    "duration": "duration",
    "duration_group": "duration",
    "category": "domain",
    "domain": "domain",
    "sub_category": "sub_category",
    "task_category": "task_type",
    "task_type": "task_type",
    "question_category": "question_category",
    "topic_category": "topic_category",
}
ID_KEYS: Final[tuple[str, ...]] = ("question_id", "id", "q_uid", "qid", "index")
VIDEO_KEYS: Final[tuple[str, ...]] = ("videoID", "video_id", "video_name", "video", "video_path")

_MAX_ID_CHARS: Final[int] = 64


def options_from_prompt(prompt: object) -> tuple[str, ...]:
    """Options as listed in the prompt ("A. Apples." lines); () when they are not A, B, C..."""
    if not prompt:
        return ()
    found: dict[str, str] = {}
    for line in str(prompt).splitlines():
        m = OPTION_LINE.match(line)
        if m and m[1] not in found:
            found[m[1]] = m[2]
    letters = "".join(found)
    if len(letters) < 2 or "ABCDEFGHIJ"[: len(letters)] != letters:
        return ()
    return tuple(found.values())


def first_value(mapping: JsonObject, keys: Sequence[str]) -> object:
    for key in keys:
        value = mapping.get(key)
        if value is not None and str(value).strip() != "":
            return value
    return None


def _present(value: object) -> bool:
    return value is not None and not isinstance(value, dict | list) and bool(str(value).strip())


def _usable_ids(ids: Sequence[object]) -> bool:
    """Present on most samples (a log with a few damaged lines keeps its ids), unique where
    present, and short enough to be an id rather than a question."""
    texts = [str(v).strip() for v in ids if _present(v)]
    if not texts or 2 * len(texts) < len(ids):
        return False
    return len(set(texts)) == len(texts) and all(
        len(t) <= _MAX_ID_CHARS and "\n" not in t for t in texts
    )


def _video_from_id(task: str, item_id: str, payload_id_key: str | None) -> str | None:
    if task.startswith("videomme") and re.fullmatch(r"\d{3}-\d+", item_id):
        return item_id.split("-")[0]  # Video-MME's own video number ("001")
    if task.startswith("longvideobench") and payload_id_key == "id" and "_" in item_id:
        return item_id.rsplit("_", 1)[0]
    return None


def item_names(
    samples: list[Sample], payloads: list[JsonObject]
) -> tuple[str | None, list[str | None] | None]:
    """How the log names its items: (the payload key, None for `submission`; each sample's
    name, None where it lacks one), or (None, None) when nothing does. One way for the whole
    log, since a sample named another way would match nothing in the other runs."""
    for key in ID_KEYS:
        ids = [p.get(key) for p in payloads]
        if _usable_ids(ids):
            return key, [str(v).strip() if _present(v) else None for v in ids]
    # EgoSchema-style logs carry the question uid only as the key of `submission`.
    submitted: list[object] = [
        next(iter(sub)) if isinstance(sub, dict) and len(sub) == 1 else None
        for sub in (s.get("submission") for _, s in samples)
    ]
    if _usable_ids(submitted):
        return None, [str(v) if _present(v) else None for v in submitted]
    return None, None


def attributes_and_video(
    task: str, payload: JsonObject, item: Item | None, item_id: str, id_key: str | None
) -> tuple[str | None, str]:
    """(attributes JSON, video id): the benchmark item's, which know the item, over the
    payload's, which each task spells its own way; without a video named anywhere, the one the
    task's item ids encode, else the item itself (a cluster of its own in the bootstrap)."""
    attrs: dict[str, object] = {"task": task}
    for key, name in ATTRIBUTE_KEYS.items():
        if key in payload and payload[key] is not None:
            attrs.setdefault(name, payload[key])
    video = None
    if item is not None:
        video = item.video_id
        attrs.update(item.attributes)
    if video is None:
        raw_video = first_value(payload, VIDEO_KEYS)
        video = Path(str(raw_video)).stem if raw_video is not None else None
    if video is None:
        video = _video_from_id(task, item_id, id_key) or item_id
    return attributes_json(attrs), video


def question_texts(samples: Sequence[Sample]) -> list[str | None]:
    """Each sample's question: its `doc`'s `question` where the log keeps the document, else
    its logged `input` (the prompt as the model read it) without the lines every input of the
    file shares at its start and at its end (the task's instructions, its post-prompt) and
    without its option lines, so the explorer shows the question itself. An input of which
    nothing else is left is kept whole; None for a sample without either."""
    lines = [
        str(s["input"]).splitlines() if isinstance(s.get("input"), str) else None
        for _, s in samples
    ]
    present = [text for text in lines if text]
    head = tail = 0
    if len(present) > 1:
        shortest = min(len(text) for text in present)
        first = present[0]
        while head < shortest and all(text[head] == first[head] for text in present):
            head += 1
        while tail < shortest - head and all(
            text[-1 - tail] == first[-1 - tail] for text in present
        ):
            tail += 1
    out: list[str | None] = []
    for (_, sample), text in zip(samples, lines, strict=True):
        doc = sample.get("doc")
        if isinstance(doc, Mapping) and isinstance(doc.get("question"), str):
            out.append(str(doc["question"]).strip() or None)
            continue
        if not text:
            out.append(None)
            continue
        middle = text[head : len(text) - tail]
        kept = [line for line in middle if line.strip() and not OPTION_LINE.match(line)]
        out.append("\n".join(kept).strip() or "\n".join(text).strip() or None)
    return out


def sample_item(
    row: ResponseRow, benchmark_item: Item | None, question: str | None, prompt: object
) -> Item | None:
    """The item a sample asked, for the run's `items.jsonl`: the benchmark's own where
    `--benchmark` found it, else one made from the log (its question, the options its
    `prompt` lists, the gold answer it was scored against). None where the log does not say
    enough for an item record (no question, or a multiple-choice item without two options)."""
    if benchmark_item is not None:
        return benchmark_item
    if question is None:
        return None
    options = options_from_prompt(prompt)
    reference = row.get("reference")
    choice = row.get("task_kind") == TaskKind.MCQA.value
    attributes = row.get("attributes")
    try:
        return Item(
            item_id=row["item_id"],
            video_id=row["video_id"],
            task_kind=TaskKind(row.get("task_kind") or TaskKind.MCQA.value),
            question=question,
            options=tuple(options) if choice else (),
            answer=reference if choice else None,
            references=(reference,) if reference and not choice else (),
            attributes=json.loads(attributes) if isinstance(attributes, str) else {},
        )
    except ValidationError:
        return None
