"""What `verify` can re-derive beyond the manifest, checks that still hold when whoever edited a
file wrote MANIFEST.json again: each compares a file with something written independently of
it. A consistent forgery of several files is caught by the published digest alone; these
narrow the rest. Each check returns (file, problem) pairs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import pandas as pd

from ..core.files import read_json, sha256_file
from ..core.items import ITEMS_FILE, ItemFileError, read_items_jsonl
from ..core.responses import (
    MANIFEST_FILE,
    RUN_FILE,
    TaskKind,
    redact_value,
    repeated_sessions,
    unrecorded_sessions,
)
from ._build import MEASURES_FILE, PROVENANCE_FILE, README_FILE
from ._manifest import manifest_digest
from ._provenance import README_VERSION, Provenance, readme_text

Problem = tuple[str, str]
_DIGEST: Final[re.Pattern[str]] = re.compile(r"[0-9a-f]{64}")
#: The JSON files the artifact writes itself (copied ones are hashed in provenance.json).
WRITTEN_JSON: Final[tuple[str, ...]] = (MEASURES_FILE, PROVENANCE_FILE, MANIFEST_FILE)


def parse_digest(value: str) -> str:
    digest = value.strip().lower().removeprefix("sha256:")
    if not _DIGEST.fullmatch(digest):
        raise ValueError(
            f"--digest {value!r}: expected the 64 hex digits of sha256(MANIFEST.json) that "
            "`itemscale report` printed"
        )
    return digest


def check_digest(root: Path, digest: str) -> list[Problem]:
    if not (root / MANIFEST_FILE).is_file():
        return [(MANIFEST_FILE, "missing, so the published digest cannot be checked")]
    actual = manifest_digest(root)
    if actual == digest:
        return []
    return [
        (
            MANIFEST_FILE,
            f"its sha256 is {actual}, not the published {digest}: this is not the artifact "
            "whose digest was published (a file was changed and the manifest written again)",
        )
    ]


def canonical_json(value: Any) -> str:
    return json.dumps(redact_value(value), indent=2, sort_keys=True, default=str) + "\n"


def check_json_form(root: Path) -> list[Problem]:
    """An edit that keeps the values (whitespace, key order) changes the bytes all the same."""
    problems = []
    for name in WRITTEN_JSON:
        path = root / name
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        if canonical_json(read_json(path)) != text:
            problems.append((name, "not as itemscale writes it (whitespace or key order edited)"))
    return problems


def check_copied_files(root: Path, prov: Provenance) -> list[Problem]:
    recorded = prov.get("inputs", {}).get("files")
    problems = []
    items = prov.get("inputs", {}).get("items")
    if isinstance(items, dict) and isinstance(items.get("sha256"), str):
        recorded = {**(recorded or {}), ITEMS_FILE: items["sha256"]}
    for rel, expected in sorted((recorded or {}).items()):
        path = root / rel
        if not path.is_file():
            problems.append((rel, f"missing (provenance.json records it with sha256 {expected})"))
        elif sha256_file(path) != expected:
            problems.append(
                (
                    rel,
                    f"differs from the file provenance.json recorded when the artifact was "
                    f"written (sha256 {str(expected)[:12]}...)",
                )
            )
    return problems


def check_items(root: Path, responses: pd.DataFrame) -> list[Problem]:
    """A sweep stores each item's gold letter, or its first reference text, in every row."""
    path = root / ITEMS_FILE
    if not path.is_file() or "reference" not in responses:
        return []
    try:
        items = read_items_jsonl(path)
    except ItemFileError as exc:
        return [(ITEMS_FILE, f"cannot be read ({exc})")]
    rows = responses[responses["reference"].notna()]
    if rows.empty:
        return []
    references = rows.groupby("item_id")["reference"].agg(lambda s: sorted(set(map(str, s))))
    problems = []
    for item in items:
        seen = references.get(item.item_id)
        if seen is None:
            continue
        gold = item.answer if item.task_kind == TaskKind.MCQA else item.reference_text()
        if gold is not None and seen != [gold]:
            problems.append(
                (
                    ITEMS_FILE,
                    f"item {item.item_id!r}: gold answer {gold!r}, but the responses were "
                    f"scored against {', '.join(map(repr, seen))}",
                )
            )
    return problems[:1] + (
        [(ITEMS_FILE, f"and {len(problems) - 1} more item(s) like it")] if len(problems) > 1 else []
    )


def check_videos(prov: Provenance, run_meta: Mapping[str, object]) -> list[Problem]:
    videos = prov.get("inputs", {}).get("videos")
    swept = run_meta.get("video_content_hashes") if isinstance(run_meta, dict) else None
    if not isinstance(videos, dict) or not isinstance(swept, dict):
        return []
    problems = []
    for video_id, entry in sorted(videos.items()):
        recorded = swept.get(video_id)
        stated = entry.get("sha256") if isinstance(entry, dict) else None
        if recorded and stated and recorded != stated:
            problems.append(
                (
                    PROVENANCE_FILE,
                    f"video {video_id!r}: sha256 {str(stated)[:12]}..., but the sweep that "
                    f"answered it decoded {str(recorded)[:12]}... ({RUN_FILE})",
                )
            )
    return problems


def check_readme(root: Path, prov: Provenance) -> list[Problem]:
    if prov.get("readme_version") != README_VERSION or not (root / README_FILE).is_file():
        return []  # written before the README was checked, or by another template
    optional = [str(n) for n in prov.get("optional_files", [])]
    if readme_text(prov, optional) != (root / README_FILE).read_text(encoding="utf-8"):
        return [(README_FILE, "differs from the README written again from provenance.json")]
    return []


def check_sessions(df: pd.DataFrame, run_meta: Any) -> list[Problem]:
    """Else the stack that computed those rows is unknown."""
    if not isinstance(run_meta, Mapping):
        return []
    found = (repeated_sessions(run_meta), unrecorded_sessions(df, run_meta))
    return [(RUN_FILE, message) for message in found if message is not None]
