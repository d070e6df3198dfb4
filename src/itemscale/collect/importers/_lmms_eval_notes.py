"""What an lmms-eval import says about its files beyond their rows: two configurations that are
one log file (byte for byte, in this import or against the run's earlier imports), runs that
ask one budget (alternatives, not an axis), and the `--series` the call puts its files in.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from ...core.responses import ResponseRow, SchemaError, read_provenance
from ._common import ImportInputError, SourceRecord
from ._config_ids import DEFAULT_SERIES


def series_option(series: str | None) -> str:
    """`--series NAME` (None: the `default` series); an empty name is refused, since it would
    read as no series at all."""
    if series is None:
        return DEFAULT_SERIES
    if not series.strip():
        raise ImportInputError("--series: give the series a name (e.g. selection:aks)")
    return series


def stored_sources(run_dir: str | os.PathLike[str]) -> list[SourceRecord]:
    """The source files of the run's earlier imports that made one configuration each (their
    records carry a `config_label`); none when the run is new or its run.json cannot be read
    (the merge then says why)."""
    try:
        provenance = read_provenance(run_dir)
    except SchemaError:
        return []
    imports = provenance.get("imports")
    out: list[SourceRecord] = []
    for record in imports if isinstance(imports, list) else []:
        sources = record.get("sources") if isinstance(record, Mapping) else None
        for source in sources if isinstance(sources, list) else []:
            if (
                isinstance(source, dict)
                and isinstance(source.get("sha256"), str)
                and isinstance(source.get("config_label"), str)
                and isinstance(source.get("path"), str)
            ):
                out.append(source)  # type: ignore[arg-type]  # run.json's own records
    return out


def side_name(source: Mapping[str, object]) -> str:
    """A configuration as the notes name it: its label, and its series when it has one."""
    label = str(source.get("config_label") or Path(str(source.get("path"))).name)
    series = source.get("series")
    return f"{label} of series {series}" if series and series != DEFAULT_SERIES else label


def identical_files(
    sources: Sequence[SourceRecord], stored: Sequence[SourceRecord] = ()
) -> list[str]:
    """A warning for each log file imported under several configurations (one SHA-256, in this
    import or against an earlier one, whose records `stored` are): their answers agree on
    every item because they are one file, which analyze and compare would otherwise read as a
    setting that changed nothing. The same file at the same configuration (a re-import) is one
    configuration, not a copy."""
    groups: dict[str, list[tuple[SourceRecord, bool]]] = {}
    for source, new in [*((s, False) for s in stored), *((s, True) for s in sources)]:
        members = groups.setdefault(source["sha256"], [])
        place = (source.get("config_id"), source.get("config_label"), source.get("series"))
        if all(
            (m.get("config_id"), m.get("config_label"), m.get("series")) != place
            for m, _ in members
        ):
            members.append((source, new))
    out = []
    for digest, members in groups.items():
        if len(members) < 2 or not any(new for _, new in members):
            continue
        first, *copies = (side_name(m) for m, _ in members)
        verb = "is" if len(copies) == 1 else "are"
        out.append(
            f"warning: {', '.join(copies)} {verb} the same log file as {first} (sha256 "
            f"{digest[:12]}..., {Path(members[0][0]['path']).name}): one run imported under "
            f"{len(members)} configurations? Their answers agree on every item because they "
            "are one file, not because the setting changed nothing (run.json: "
            "imports[].sources[].sha256)"
        )
    return out


def one_budget_note(rows: Sequence[ResponseRow]) -> list[str]:
    """A note for each set of configurations of one model and series that ask one budget (the
    same frames and pixels per frame: selectors, pipelines or prompts at 16 frames): they are
    alternatives, not points of a budget axis, and the note says how to name them."""
    asked: dict[tuple[str, str, int, object], dict[str, None]] = {}
    for row in rows:
        frames = int(row["frames"])
        if frames > 0:
            place = (str(row["model"]), str(row["series"]), frames, row.get("pixels"))
            asked.setdefault(place, {})[str(row["config_label"])] = None
    out = []
    for (_, series, frames, pixels), labels in asked.items():
        if len(labels) < 2:
            continue
        budget = f"{frames} frames" + (f" at {pixels} pixels per frame" if pixels else "")
        in_series = f" (series {series})" if series != DEFAULT_SERIES else ""
        out.append(
            f"{', '.join(labels)}{in_series} all ask one budget, {budget}: alternatives at one "
            "budget (frame selectors, pipelines, prompts), not points of a budget axis; "
            "analyze compares them as alternatives (--control LABEL names the reference), or "
            "import one call per run with --series NAME (selection:NAME for a frame selector) "
            "to give each its own series"
        )
    return out
