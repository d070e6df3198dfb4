"""Which configurations of a run were imported from one byte-identical source file (run.json
`imports[].sources[]` SHA-256s): their answers agree because they are the same answers, so
`analyze`, `compare` and the report name such a pair in one sentence (`same_file_sentence`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePath


@dataclass(frozen=True)
class SourceFile:
    """The file a configuration (or a series) was imported from."""

    label: str
    sha256: str
    name: str


def _sources(provenance: Mapping[str, object]) -> Iterable[Mapping[str, object]]:
    imports = provenance.get("imports")
    for record in imports if isinstance(imports, list) else []:
        sources = record.get("sources") if isinstance(record, Mapping) else None
        for source in sources if isinstance(sources, list) else []:
            if isinstance(source, Mapping) and isinstance(source.get("sha256"), str):
                yield source


def source_files(provenance: Mapping[str, object]) -> dict[str, SourceFile]:
    """Configuration label (and series, where recorded) -> its source file as run.json records it
    (a later import replaces an earlier); {} for a swept run."""
    out: dict[str, SourceFile] = {}
    for source in _sources(provenance):
        name = PurePath(str(source.get("path", ""))).name
        for key in ("config_label", "series"):
            label = source.get(key)
            if isinstance(label, str) and label:
                out[label] = SourceFile(label, str(source["sha256"]), name)
    return out


def same_file_pairs(
    files: Mapping[str, SourceFile], labels: Iterable[str]
) -> list[tuple[SourceFile, SourceFile]]:
    """(first, copy) for each label whose file is byte-identical to an earlier label's."""
    first: dict[str, SourceFile] = {}
    out = []
    for label in labels:
        file = files.get(label)
        if file is None:
            continue
        if file.sha256 in first:
            out.append((first[file.sha256], file))
        else:
            first[file.sha256] = file
    return out


def same_file_sentence(first: SourceFile, copy: SourceFile) -> str:
    """`B is the same log file as A, sha256 ... (NAME)`, for the console, the report and
    `compare`."""
    return (
        f"{copy.label} is the same log file as {first.label}, sha256 {first.sha256} "
        f"({first.name}): one run imported twice, not two settings"
    )
