"""Files computed from the responses after they were written: whether each still fits them.

The cascade, the interventions and the audit record the sha256 of the responses they read, and
the responses can change after them (`intervene` adds rows, a later import adds a model).
`report` recomputes the cascade and interventions from their own recorded settings; the audit
carries human labels tied to its transitions, so it is flagged stale instead. `verify` tells a
file the responses moved on from (stale) from one changed by hand (edited) by that digest.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import pandas as pd

from ..analysis.audit import AUDIT_FILE, AUDIT_SUMMARY_FILE
from ..analysis.policies import (
    CASCADE_FILE,
    INTERVENTION_DIR,
    PLAN_SUFFIX,
    CascadeReport,
    InterventionPlan,
    InterventionResult,
    ReportFileError,
    ReportRecord,
    optional_report,
)
from ..core.files import read_json, sha256_file
from ..core.responses import RESPONSES_DIGEST_KEY, RESPONSES_FILE, write_json_atomic

#: provenance.json's record of the derived files the report did not copy as they were.
DERIVED_KEY: Final[str] = "derived"
#: keys a command adds to its result after computing it; a recomputation takes them as stored.
_ADDED_KEYS: Final[tuple[str, ...]] = ("run_dir", "models", "axis", RESPONSES_DIGEST_KEY)
#: keys added to a layout without a schema bump (the counts behind each rate): a file written
#: before them is compared with its recomputation without them
ADDED_LATER: Final[frozenset[str]] = frozenset({"count", "stop_counts", "n_changed"})

Why = Literal["stale", "edited", "unknown"]


@dataclass(frozen=True)
class Derived:
    name: str
    #: recomputed: the artifact holds the recomputation; stale: copied as it was, flagged;
    #: unchecked: copied as it was, since it cannot be recomputed (no settings recorded)
    status: Literal["recomputed", "stale", "unchecked"]
    reason: str

    def record(self) -> dict[str, str]:
        return {"status": self.status, "reason": self.reason}


def first_difference(
    a: Any, b: Any, path: str = "", *, added: frozenset[str] = frozenset()
) -> str | None:
    """Where two JSON values differ (NaN equals NaN), or None when equal; a key of `added`
    that only `b` (the recomputation) has is no difference (`a` predates it)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in a and key in added:
                continue
            if key not in a or key not in b:
                return f"{where} (present in only one)"
            diff = first_difference(a[key], b[key], where, added=added)
            if diff:
                return diff
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path} (length {len(a)} vs {len(b)})"
        for n, (x, y) in enumerate(zip(a, b, strict=True)):
            diff = first_difference(x, y, f"{path}[{n}]", added=added)
            if diff:
                return diff
        return None
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return None
    if type(a) is not type(b) or a != b:
        return f"{path} (stored {a!r}, recomputed {b!r})"
    return None


def why_it_differs(recorded: object, current: str) -> tuple[Why, str]:
    """Told by the responses digest the file recorded."""
    if not isinstance(recorded, str):
        return (
            "unknown",
            f"it records no {RESPONSES_DIGEST_KEY} (written before itemscale recorded one)"
            ", so whether it is stale or edited cannot be told",
        )
    if recorded != current:
        return (
            "stale",
            f"it was computed from other responses (sha256 {recorded[:12]}..., these are "
            f"{current[:12]}...): the responses changed after it was written",
        )
    return (
        "edited",
        "it records these very responses, yet differs from what they give: changed by hand, "
        "or written by another itemscale version",
    )


def fresh_cascade(stored: CascadeReport, df: pd.DataFrame) -> CascadeReport:
    from ..analysis.policies import cascade_report

    frame = df[df["model"].isin(stored.models)] if stored.models else df
    fresh = cascade_report(frame, stored.settings)
    return fresh.model_copy(update={k: getattr(stored, k) for k in _ADDED_KEYS if k != "axis"})


def fresh_intervention(
    stored: InterventionResult, plan: InterventionPlan, df: pd.DataFrame
) -> InterventionResult:
    from ..analysis.policies import intervention_outcomes

    boot = stored.bootstrap
    fresh = intervention_outcomes(df, plan, bootstrap=boot.bootstrap, seed=boot.seed)
    return fresh.model_copy(update={k: getattr(stored, k) for k in _ADDED_KEYS if k != "models"})


def in_layout_of(stored: Mapping[str, object], fresh: Any) -> Any:
    """A file written before a key was renamed is read into the same record, so it compares
    alike but for its `schema_version`."""
    old, new = stored.get("schema_version"), fresh.get("schema_version")
    if isinstance(old, int) and isinstance(new, int) and old < new:
        return {**fresh, "schema_version": old}
    return fresh


def stored_and_fresh(path: Path, df: pd.DataFrame) -> tuple[ReportRecord, ReportRecord]:
    if path.name == CASCADE_FILE:
        cascade = CascadeReport.load(path)
        return cascade, fresh_cascade(cascade, df)
    stored = InterventionResult.load(path)
    plan_path = path.with_name(f"{path.stem}{PLAN_SUFFIX}")
    plan = InterventionPlan.model_validate(read_json(plan_path))
    return stored, fresh_intervention(stored, plan, df)


def stored_reports(
    root: Path,
) -> tuple[CascadeReport | ReportFileError | None, dict[str, InterventionResult | ReportFileError]]:
    """A file that does not fit its layout is returned as its error, for the report to name."""
    interventions: dict[str, InterventionResult | ReportFileError] = {}
    for path in sorted((root / INTERVENTION_DIR).glob("*.json")):
        found = (
            None if path.name.endswith(PLAN_SUFFIX) else optional_report(InterventionResult, path)
        )
        if found is not None:
            interventions[path.stem] = found
    return optional_report(CascadeReport, root / CASCADE_FILE), interventions


def intervention_results(root: Path) -> list[tuple[Path, Path]]:
    folder = root / INTERVENTION_DIR
    pairs = []
    for path in sorted(folder.glob("*.json")):
        plan = path.with_name(f"{path.stem}{PLAN_SUFFIX}")
        if not path.name.endswith(PLAN_SUFFIX) and plan.is_file():
            pairs.append((path, plan))
    return pairs


def audit_difference(root: Path, df: pd.DataFrame, items: list[Any]) -> str | None:
    import pyarrow.parquet as pq

    from ..analysis.audit import audit_transitions

    stored = pq.read_table(root / AUDIT_FILE).to_pandas()
    summary = json.loads((root / AUDIT_SUMMARY_FILE).read_text(encoding="utf-8"))
    fresh = audit_transitions(df, items, pairs=summary.get("pairs", "adjacent"))
    a = set(zip(stored["transition_id"], stored["pathway"], strict=True))
    b = set(zip(fresh["transition_id"], fresh["pathway"], strict=True))
    if a == b:
        return None
    return (
        f"{len(a - b)} of its {len(a)} transitions or pathways are not in the audit of these "
        f"responses, which has {len(b - a)} it lacks"
    )


def _read(path: Path) -> dict[str, object]:
    payload = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(payload, dict):
        raise ValueError(f"{path.name}: not a JSON object")
    return payload


def refresh_derived(root: Path, df: pd.DataFrame, items: list[Any]) -> list[Derived]:
    """The cascade and interventions that differ from their recomputation are replaced by it; an
    audit that differs is flagged (human labels belong to its transitions)."""
    current = sha256_file(root / RESPONSES_FILE)
    done: list[Derived] = []

    def replace(
        path: Path, stored: Mapping[str, object], fresh: dict[str, object], command: str
    ) -> None:
        if first_difference(stored, fresh, added=ADDED_LATER) is None:
            return
        _, why = why_it_differs(stored.get(RESPONSES_DIGEST_KEY), current)
        fresh[RESPONSES_DIGEST_KEY] = current
        write_json_atomic(path, fresh)
        name = path.relative_to(root).as_posix()
        done.append(
            Derived(
                name,
                "recomputed",
                f"the run's {name} differs from what these responses give ({why}); the report "
                f"shows it recomputed with its own settings (`{command}` rewrites the run's file)",
            )
        )

    def refresh(path: Path, command: str) -> None:
        try:
            stored, fresh = stored_and_fresh(path, df)
        except (KeyError, TypeError, ValueError) as exc:  # pydantic's errors are ValueErrors
            done.append(
                Derived(
                    path.relative_to(root).as_posix(),
                    "unchecked",
                    f"shown as it is: it cannot be recomputed ({type(exc).__name__}: {exc}); "
                    f"`{command}` writes it anew",
                )
            )
            return
        replace(path, stored.as_json(), fresh.as_json(), command)

    cascade = root / CASCADE_FILE
    if cascade.is_file():
        refresh(cascade, "itemscale cascade RUN")
    for result, _ in intervention_results(root):
        refresh(result, f"itemscale intervene RUN --intervention {result.stem} --no-run")
    if (root / AUDIT_FILE).is_file() and (root / AUDIT_SUMMARY_FILE).is_file():
        diff = audit_difference(root, df, items)
        if diff is not None:
            summary = _read(root / AUDIT_SUMMARY_FILE)
            _, why = why_it_differs(summary.get(RESPONSES_DIGEST_KEY), current)
            for name in (AUDIT_FILE, AUDIT_SUMMARY_FILE):
                done.append(
                    Derived(
                        name,
                        "stale",
                        f"the audit does not fit these responses ({diff}; {why}); shown as it "
                        "was, since human labels belong to its transitions: `itemscale audit "
                        "RUN` redoes it and keeps them",
                    )
                )
    return done


def declared(prov: Mapping[str, object], status: str) -> dict[str, str]:
    record = prov.get(DERIVED_KEY) if isinstance(prov, dict) else None
    if not isinstance(record, dict):
        return {}
    return {
        str(name): str(entry.get("reason", ""))
        for name, entry in record.items()
        if isinstance(entry, dict) and entry.get("status") == status
    }
