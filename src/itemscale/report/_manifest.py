"""MANIFEST.json: the sha256 of every file of an artifact, so any edit is found and named.

The manifest also hashes its own list of entries (`entries_sha256`): an edit to the manifest
itself that leaves the entries inconsistent is reported as an edit to MANIFEST.json rather than
blamed on the file the entry names.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final, TypedDict

from ..core.files import read_json, sha256_file
from ..core.responses import ARTIFACT_MARKER, MANIFEST_FILE, write_json_atomic

MANIFEST_SCHEMA_VERSION: Final[int] = 1


class FileEntry(TypedDict):
    sha256: str
    bytes: int


class Manifest(TypedDict):
    schema_version: int
    written_by: str
    algorithm: str
    files: dict[str, FileEntry]
    directories: list[str]
    entries_sha256: str


def _entries_digest(files: Mapping[str, object]) -> str:
    canonical = json.dumps(files, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def list_files(root: Path) -> list[str]:
    out = []
    for path in sorted(root.rglob("*")):
        if path.is_file() or path.is_symlink():
            rel = path.relative_to(root).as_posix()
            if rel != MANIFEST_FILE:
                out.append(rel)
    return out


def list_dirs(root: Path) -> list[str]:
    """An added empty folder is found too."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_dir())


def manifest_digest(root: str | os.PathLike[str]) -> str:
    """The artifact's digest: the sha256 of its MANIFEST.json, which names every file's sha256.
    Published beside the results, it pins the whole artifact: `verify --digest` checks it."""
    return sha256_file(Path(root) / MANIFEST_FILE)


def write_manifest(root: str | os.PathLike[str]) -> Manifest:
    root = Path(root)
    files: dict[str, FileEntry] = {
        rel: {"sha256": sha256_file(root / rel), "bytes": (root / rel).stat().st_size}
        for rel in list_files(root)
    }
    manifest: Manifest = {
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "written_by": ARTIFACT_MARKER,
        "algorithm": "sha256",
        "files": files,
        "directories": list_dirs(root),
        "entries_sha256": _entries_digest(files),
    }
    write_json_atomic(root / MANIFEST_FILE, manifest)
    return manifest


def check_manifest(root: str | os.PathLike[str]) -> tuple[list[str], dict[str, str]]:
    """(problems, {file: problem}) for every file that is edited, missing or not listed."""
    root = Path(root)
    path = root / MANIFEST_FILE
    problems: list[str] = []
    by_file: dict[str, str] = {}

    def flag(name: str, message: str) -> None:
        problems.append(f"{name}: {message}")
        by_file.setdefault(name, message)

    if not path.exists():
        flag(MANIFEST_FILE, "missing (not an itemscale artifact, or the manifest was deleted)")
        return problems, by_file
    try:
        manifest = read_json(path)
        files = manifest["files"]
        version = int(manifest["schema_version"])
        stated = str(manifest["entries_sha256"])
        if not isinstance(files, dict):
            raise TypeError("'files' is not an object")
    except (ValueError, KeyError, TypeError) as exc:
        flag(MANIFEST_FILE, f"edited or corrupt ({exc})")
        return problems, by_file
    if version > MANIFEST_SCHEMA_VERSION:
        flag(MANIFEST_FILE, f"schema version {version} is newer than this itemscale reads")
        return problems, by_file
    if _entries_digest(files) != stated:
        flag(MANIFEST_FILE, "edited: its entries no longer match its own entries_sha256")
    for rel, entry in sorted(files.items()):
        target = root / rel
        if not target.is_file():
            flag(rel, "missing (listed in MANIFEST.json)")
            continue
        try:
            expected = str(entry["sha256"])
        except (KeyError, TypeError):
            flag(MANIFEST_FILE, f"entry for {rel} has no sha256")
            continue
        actual = sha256_file(target)
        if actual != expected:
            flag(
                rel,
                f"edited: sha256 {actual[:12]}... does not match the manifest's {expected[:12]}...",
            )
    for rel in list_files(root):
        if rel not in files:
            flag(rel, "added: not listed in MANIFEST.json")
    listed_dirs = manifest.get("directories")
    if isinstance(listed_dirs, list):
        for rel in list_dirs(root):
            if rel not in listed_dirs:
                flag(rel + "/", "added folder: not listed in MANIFEST.json")
        for rel in listed_dirs:
            if not (root / str(rel)).is_dir():
                flag(str(rel) + "/", "missing folder (listed in MANIFEST.json)")
    return problems, by_file
