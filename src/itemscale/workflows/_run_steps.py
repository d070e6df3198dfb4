"""`cascade` and `audit` on a run folder: what `itemscale cascade` and `itemscale audit` do,
minus their flags and their printing, so the demo (and a notebook) runs the same steps.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ._errors import WorkflowError

if TYPE_CHECKING:
    import pandas as pd

    from ..analysis.policies import CascadeReport, CascadeSettings
    from ..collect.items import Item


def cascade(
    run_dir: str | os.PathLike[str],
    settings: CascadeSettings,
    *,
    json_out: str | os.PathLike[str] | None = None,
    write: bool = True,
) -> CascadeReport:
    """The `cascade --json` report of a run folder (only `settings.models`, when named), written to
    `json_out` (default RUN/cascade.json, which the report picks up) unless `write` is False;
    inside the run folder, under its lock. A run with no budget axis a cascade can run on is a
    `WorkflowError` saying why for each series."""
    from ..analysis.policies import CASCADE_FILE, cascade_report
    from ..core.files import check_output_path
    from ..core.responses import read_run, responses_digest, run_lock, write_json_atomic

    if write and json_out is not None:  # never a run's data (docs/run-folders.md)
        check_output_path(json_out, flag="json_out")
    digest = responses_digest(run_dir)  # before reading: a later change reads as stale
    df, _ = read_run(run_dir)
    try:
        computed = cascade_report(df, settings)
    except ValueError as exc:
        raise WorkflowError(f"{run_dir}: {exc}") from exc
    if not computed.results:
        reasons = "; ".join(f"{s.model}/{s.series}: {s.reason}" for s in computed.skipped)
        raise WorkflowError(
            f"{run_dir}: no budget axis a cascade can run on" + (f" ({reasons})" if reasons else "")
        )
    report = computed.for_run(run_dir, digest)
    if write:
        out = Path(json_out) if json_out is not None else Path(run_dir) / CASCADE_FILE
        inside = Path(run_dir).resolve() in out.resolve().parents
        with run_lock(run_dir, what="cascade") if inside else contextlib.nullcontext():
            write_json_atomic(out, report.as_json())  # the text of report.to_json()
    return report


@dataclass(frozen=True)
class AuditOutcome:
    #: One row per audited harmful transition (`audit_transitions`).
    transitions: pd.DataFrame
    pairs: str
    items: tuple[Item, ...]
    #: The item file the evidence spans came from (None: no item file).
    items_path: Path | None
    #: Human labels read back from a coded CSV (0 without one).
    human_labels: int
    #: Rows written for coders (None: no export asked for).
    exported: int | None

    @property
    def n_items(self) -> int:
        return int(self.transitions[["model", "series", "item_id"]].drop_duplicates().shape[0])


def audit(
    run_dir: str | os.PathLike[str],
    *,
    items: str | os.PathLike[str] | None = None,
    pairs: Literal["adjacent", "all"] = "adjacent",
    import_csv: str | os.PathLike[str] | None = None,
    coder: str | None = None,
    export: str | os.PathLike[str] | None = None,
) -> AuditOutcome:
    """The frame audit of every harmful transition of a run folder: RUN/audit.parquet,
    RUN/audit.json and the annotations (the automatic labels, and a coded CSV's when
    `import_csv` names one) written under the run's lock; `export` writes a CSV for coders.
    `items` is the item file (default: RUN/items.jsonl or the file run.json names)."""
    from ..analysis.audit import (
        ANNOTATIONS_FILE,
        audit_transitions,
        automatic_annotations,
        export_annotations_csv,
        import_annotations_csv,
        merge_annotations,
        read_annotations,
        write_annotations,
        write_audit,
    )
    from ..collect.items import read_items_jsonl
    from ..core.files import check_output_path
    from ..core.responses import read_run, run_lock
    from ..report import find_items_file

    if export:  # never a run's data, the annotations this audit writes included
        check_output_path(export, flag="export")
    folder = Path(run_dir)
    df, meta = read_run(folder)
    items_path = find_items_file(folder, meta, None if items is None else str(items))
    item_list = tuple(read_items_jsonl(items_path)) if items_path else ()
    transitions = audit_transitions(df, list(item_list), pairs=pairs)
    human = 0
    exported = None
    with run_lock(folder, what="audit"):
        write_audit(folder, transitions, pairs, items_path=items_path)
        ann_path = folder / ANNOTATIONS_FILE
        annotations = merge_annotations(
            read_annotations(ann_path), automatic_annotations(transitions)
        )
        if import_csv:
            coded = import_annotations_csv(import_csv, transitions, coder=coder)
            annotations = merge_annotations(annotations, coded)
            human = len(coded)
        write_annotations(ann_path, annotations)
        if export:
            exported = export_annotations_csv(transitions, export)
    return AuditOutcome(transitions, pairs, item_list, items_path, human, exported)


def audit_sheets(
    run_dir: str | os.PathLike[str], outcome: AuditOutcome, max_sheets: int = 60
) -> tuple[int, list[str]]:
    """Decode the frames of the audited transitions and write their contact sheets to
    RUN/audit_sheets/ (at most `max_sheets`), under the run's lock: (sheets written, one line
    per transition without a sheet). Needs the item file (its video paths)."""
    from ..core.responses import run_lock
    from ._audit_sheets import write_audit_sheets

    if outcome.items_path is None:
        raise WorkflowError("--sheets needs an item file with video paths (--items)")
    with run_lock(Path(run_dir), what="audit"):
        return write_audit_sheets(
            Path(run_dir),
            outcome.transitions,
            {it.item_id: it for it in outcome.items},
            outcome.items_path.parent,
            max_sheets,
        )
