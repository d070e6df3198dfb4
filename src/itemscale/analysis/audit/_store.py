"""The audit's files in a run directory: the transitions table, its summary, the annotations.

Automatic labels (with the rules version) and human ones (with the coder) sit side by side;
re-running the audit replaces only automatic rows, so a coder's work is never lost.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ...core.files import (
    InputFileError,
    MissingInputError,
    atomic_text_file,
    open_input,
    sha256_file,
)
from ...core.responses import (
    RESPONSES_DIGEST_KEY,
    responses_digest,
    write_json_atomic,
    write_parquet_atomic,
)
from ._frames import PATHWAYS, RULES_VERSION, TRANSITION_COLUMNS, AuditError, pathway_counts

AUDIT_SCHEMA_VERSION: Final[int] = 1
ANNOTATIONS_SCHEMA_VERSION: Final[int] = 1
AUDIT_FILE: Final[str] = "audit.parquet"
AUDIT_SUMMARY_FILE: Final[str] = "audit.json"
ANNOTATIONS_FILE: Final[str] = "annotations.parquet"
SHEETS_DIR: Final[str] = "audit_sheets"
_VERSION_KEY: Final[bytes] = b"itemscale.schema_version"
_KIND_KEY: Final[bytes] = b"itemscale.table"

ANNOTATION_COLUMNS: Final[tuple[str, ...]] = (
    "transition_id",
    "model",
    "series",
    "item_id",
    "from_label",
    "to_label",
    "label",
    "note",
    "source",
    "coder",
    "annotated_at",
    "rules_version",
)
#: What an annotation repeats of its transition.
_TRANSITION_KEYS: Final[tuple[str, ...]] = ANNOTATION_COLUMNS[:6]
#: The coders' CSV: each column with the transitions column it is filled from (None: the last
#: three, theirs to fill in).
CSV_SOURCES: Final[dict[str, str | None]] = {
    "transition_id": "transition_id",
    "model": "model",
    "series": "series",
    "item_id": "item_id",
    "from_label": "from_label",
    "to_label": "to_label",
    "automatic_label": "pathway",
    "automatic_reason": "reason",
    "frames_kept": "n_kept",
    "frames_dropped": "n_dropped",
    "frames_added": "n_added",
    "pixels_from": "pixels_from",
    "pixels_to": "pixels_to",
    "evidence_frames_from": "evidence_from",
    "evidence_frames_to": "evidence_to",
    "answer_from": "from_answer",
    "answer_to": "to_answer",
    "text_only_answer": "text_answer",
    "human_label": None,
    "coder": None,
    "note": None,
}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _write_table(df: pd.DataFrame, path: Path, kind: str, version: int) -> None:
    table = pa.Table.from_pandas(df, preserve_index=False)
    write_parquet_atomic(
        table, path, {_VERSION_KEY: str(version).encode(), _KIND_KEY: kind.encode()}
    )


def _read_table(path: Path, kind: str, version: int) -> pd.DataFrame:
    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise AuditError(f"{path}: not a readable Parquet file ({exc})") from exc
    meta = table.schema.metadata or {}
    if meta.get(_KIND_KEY, b"").decode() != kind:
        raise AuditError(f"{path}: not an itemscale {kind} table")
    found = int(meta.get(_VERSION_KEY, b"0"))
    if found > version:
        raise AuditError(
            f"{path}: {kind} schema version {found} is newer than this itemscale reads ({version})"
        )
    df: pd.DataFrame = table.to_pandas()
    return df


def write_audit(
    run_dir: str | os.PathLike[str],
    transitions: pd.DataFrame,
    pairs: str,
    *,
    items_path: str | os.PathLike[str] | None = None,
) -> None:
    """audit.parquet (every transition) and audit.json (counts per pathway, and the item file
    whose evidence spans the labels used, so the artifact can carry the same file)."""
    run_dir = Path(run_dir)
    items_record: dict[str, str] | None = None
    if items_path is not None:
        path = Path(items_path).resolve()
        items_record = {"path": str(path), "sha256": sha256_file(path)}
    _write_table(
        transitions[list(TRANSITION_COLUMNS)], run_dir / AUDIT_FILE, "audit", AUDIT_SCHEMA_VERSION
    )
    summary: dict[str, Any] = {
        "schema_version": AUDIT_SCHEMA_VERSION,
        "rules_version": RULES_VERSION,
        "pathways": list(PATHWAYS),
        "pairs": pairs,
        "n_transitions": len(transitions),
        "n_items": int(transitions[["model", "series", "item_id"]].drop_duplicates().shape[0]),
        "counts": pathway_counts(transitions),
        "items": items_record,
        RESPONSES_DIGEST_KEY: responses_digest(run_dir),
        "created_at": _now(),
    }
    write_json_atomic(run_dir / AUDIT_SUMMARY_FILE, summary)


def read_audit(run_dir: str | os.PathLike[str]) -> pd.DataFrame:
    return _read_table(Path(run_dir) / AUDIT_FILE, "audit", AUDIT_SCHEMA_VERSION)


def empty_annotations() -> pd.DataFrame:
    df = pd.DataFrame({c: pd.Series(dtype=object) for c in ANNOTATION_COLUMNS})
    df["rules_version"] = df["rules_version"].astype("Int64")
    return df


def automatic_annotations(transitions: pd.DataFrame, *, now: str | None = None) -> pd.DataFrame:
    """One automatic annotation per transition."""
    stamp = now or _now()
    out = pd.DataFrame(
        {
            **{c: transitions[c].astype(str) for c in _TRANSITION_KEYS},
            "label": transitions["pathway"].astype(str),
            "note": transitions["reason"].astype(str),
            "source": "automatic",
            "coder": "itemscale",
            "annotated_at": stamp,
            "rules_version": RULES_VERSION,
        }
    )
    out["rules_version"] = out["rules_version"].astype("Int64")
    return out.reset_index(drop=True)


def read_annotations(path: str | os.PathLike[str]) -> pd.DataFrame:
    path = Path(path)
    if not path.exists():
        return empty_annotations()
    df = _read_table(path, "annotations", ANNOTATIONS_SCHEMA_VERSION)
    missing = [c for c in ANNOTATION_COLUMNS if c not in df.columns]
    if missing:
        raise AuditError(f"{path}: missing column(s) {', '.join(missing)}")
    return df[list(ANNOTATION_COLUMNS)]


def write_annotations(path: str | os.PathLike[str], df: pd.DataFrame) -> None:
    frame = df[list(ANNOTATION_COLUMNS)].copy()
    frame["rules_version"] = frame["rules_version"].astype("Int64")
    for col in ANNOTATION_COLUMNS:
        if col != "rules_version":
            frame[col] = frame[col].astype(object).where(frame[col].notna(), None)
    _write_table(frame, Path(path), "annotations", ANNOTATIONS_SCHEMA_VERSION)


def merge_annotations(existing: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """`existing` with `new` laid over it: new automatic rows replace all automatic rows; a new
    human row replaces that coder's earlier row for the same transition."""
    if (new["source"] == "automatic").any():
        existing = existing[existing["source"] != "automatic"]
    key = ["transition_id", "source", "coder"]
    both = pd.concat([existing, new], ignore_index=True)
    both = both.drop_duplicates(key, keep="last")
    both["rules_version"] = both["rules_version"].astype("Int64")
    return both.sort_values(["transition_id", "source", "coder"], kind="stable").reset_index(
        drop=True
    )


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: object) -> object:
    """A CSV cell for a spreadsheet: '' for a missing value (not 'nan'); text a spreadsheet would
    run as a formula (`=`, `+`, `-`, `@`) gets a leading apostrophe (answers are untrusted)."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def _uncell(text: str) -> str:
    return text[1:] if text.startswith("'") and text[1:].startswith(_FORMULA_STARTS) else text


def export_annotations_csv(transitions: pd.DataFrame, path: str | os.PathLike[str]) -> int:
    """Write the coders' CSV (one row per transition, human columns empty); returns rows."""
    with atomic_text_file(path, newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(CSV_SOURCES)
        for row in transitions.to_dict("records"):
            writer.writerow(["" if c is None else _cell(row[c]) for c in CSV_SOURCES.values()])
    return len(transitions)


def import_annotations_csv(
    path: str | os.PathLike[str],
    transitions: pd.DataFrame,
    *,
    coder: str | None = None,
    now: Callable[[], str] = _now,
) -> pd.DataFrame:
    """Human annotations from a filled-in CSV, validated against the audit.

    Rows with an empty `human_label` are not yet coded and are skipped. Every other row must
    name a transition of this audit (with the same model and item, so a shifted row is caught),
    a known pathway, and a coder (the `coder` column, or `coder` for the whole file). The first
    bad row raises `AuditError` naming file, line and column.
    """
    path = Path(path)
    try:
        handle = open_input(path)
    except MissingInputError:
        raise AuditError(f"{path}: no such file") from None
    except InputFileError as exc:
        raise AuditError(str(exc)) from None
    known = transitions.set_index("transition_id")
    stamp = now()
    rows: list[dict[str, object]] = []
    with io.TextIOWrapper(handle, encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        header = reader.fieldnames or []
        missing = [
            c for c in ("transition_id", "model", "item_id", "human_label") if c not in header
        ]
        if missing:
            raise AuditError(f"{path}:1: missing column(s) {', '.join(missing)}")
        for rec in reader:
            line = reader.line_num
            label = (rec.get("human_label") or "").strip()
            if not label:
                continue
            tid = (rec.get("transition_id") or "").strip()
            if tid not in known.index:
                raise AuditError(
                    f"{path}:{line}: column 'transition_id': {tid!r} is not a transition of this audit"
                )
            ref = known.loc[tid]
            for col in ("model", "item_id"):
                if _uncell((rec.get(col) or "").strip()) != str(ref[col]):
                    raise AuditError(
                        f"{path}:{line}: column '{col}': {rec.get(col)!r} does not match transition "
                        f"{tid} ({ref[col]!r}); was the row edited or moved?"
                    )
            if label not in PATHWAYS:
                raise AuditError(
                    f"{path}:{line}: column 'human_label': {label!r} is not a pathway; "
                    f"allowed: {', '.join(PATHWAYS)}"
                )
            who = _uncell((rec.get("coder") or "").strip()) or (coder or "").strip()
            if not who:
                raise AuditError(
                    f"{path}:{line}: column 'coder': empty (fill it in or pass --coder NAME)"
                )
            rows.append(
                {
                    "transition_id": tid,
                    **{c: str(ref[c]) for c in _TRANSITION_KEYS[1:]},
                    "label": label,
                    "note": _uncell((rec.get("note") or "").strip()),
                    "source": "human",
                    "coder": who,
                    "annotated_at": stamp,
                    "rules_version": None,
                }
            )
    out = pd.DataFrame.from_records(rows, columns=list(ANNOTATION_COLUMNS))
    out["rules_version"] = out["rules_version"].astype("Int64")
    return out
