"""`itemscale verify`: check an artifact without trusting whoever wrote it.

Two independent checks. The manifest check finds any byte changed, added or removed, and names
the file. The recomputation check rebuilds every measure from `responses.parquet` with the
recorded bootstrap size and seed, and the trajectories (and the audit, when present), and compares
them with the stored files exactly; it catches an artifact whose manifest was regenerated after
an edit, or one written by a buggy tool.
"""

from __future__ import annotations

import dataclasses
import html
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from ..analysis.audit import AUDIT_FILE, AUDIT_SUMMARY_FILE
from ..analysis.measures import AnalysisResult, AnalysisSettings, measure_origins
from ..analysis.policies import CASCADE_FILE, INTERVENTION_DIR, CascadeReport
from ..core.errors import STORED
from ..core.files import read_json
from ..core.items import ITEMS_FILE
from ..core.plugins import MEASURES_GROUP
from ..core.responses import (
    RESPONSES_FILE,
    RUN_FILE,
    UNUSED_BY_ANALYSIS,
    SchemaError,
    read_response_columns,
    read_responses,
    read_run,
)
from ..core.version import __version__
from ._build import (
    MEASURES_FILE,
    PROVENANCE_FILE,
    REPORT_FILE,
    TRAJECTORIES_FILE,
)
from ._crosscheck import (
    check_copied_files,
    check_digest,
    check_items,
    check_json_form,
    check_readme,
    check_sessions,
    check_videos,
    parse_digest,
)
from ._derived import (
    ADDED_LATER,
    declared,
    in_layout_of,
    intervention_results,
    stored_and_fresh,
    why_it_differs,
)
from ._derived import first_difference as _first_difference
from ._manifest import check_manifest
from ._provenance import Analyze, as_stored, compute_measures, recorded_bootstrap, run_time
from ._trajectories import TRAJECTORY_COLUMNS, trajectory_table


@dataclass
class Recomputed:
    """What the checks recomputed, for the report check to render from (so an edited file is
    blamed on itself only)."""

    measures: AnalysisResult | None = None
    trajectories: pd.DataFrame | None = None
    cascade: CascadeReport | None = None


@dataclass
class VerifyResult:
    artifact: Path
    problems: list[str] = field(default_factory=list)
    bad_files: dict[str, str] = field(default_factory=dict)
    checks: list[str] = field(default_factory=list)
    #: what the checks recomputed (measures, trajectories, cascade), for the report check
    recomputed: Recomputed = field(default_factory=Recomputed)
    #: findings that do not fail the artifact: files the report itself flagged as stale
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def flag(self, name: str, message: str) -> None:
        self.problems.append(f"{name}: {message}")
        self.bad_files.setdefault(name, message)


def _same_cell(x: Any, y: Any) -> bool:
    """Equal table cells: lists element by element, any two missing values alike."""
    if isinstance(x, np.ndarray | list) or isinstance(y, np.ndarray | list):
        return bool(np.array_equal(np.asarray(x), np.asarray(y)))
    x_missing, y_missing = bool(pd.isna(x)), bool(pd.isna(y))
    if x_missing or y_missing:
        return x_missing and y_missing
    return bool(x == y)


def _frames_equal(stored: pd.DataFrame, fresh: pd.DataFrame) -> str | None:
    if list(stored.columns) != list(fresh.columns):
        return f"columns {list(stored.columns)} vs recomputed {list(fresh.columns)}"
    if len(stored) != len(fresh):
        return f"{len(stored)} rows vs {len(fresh)} recomputed"
    for col in stored.columns:
        a, b = stored[col].to_numpy(dtype=object), fresh[col].to_numpy(dtype=object)
        for n, (x, y) in enumerate(zip(a, b, strict=True)):
            if not _same_cell(x, y):
                return f"column {col!r}, row {n}: stored {x!r}, recomputed {y!r}"
    return None


def verify_artifact(
    artifact: str | os.PathLike[str],
    *,
    analyze: Analyze | None = None,
    recompute: bool = True,
    digest: str | None = None,
) -> VerifyResult:
    """Check hashes (and, given the published `digest`, the manifest itself), then recompute;
    every problem is collected (not just the first)."""
    root = Path(artifact)
    result = VerifyResult(artifact=root)
    if not root.is_dir():
        result.flag(str(root), "not a directory")
        return result
    problems, by_file = check_manifest(root)
    for name, message in by_file.items():
        result.bad_files.setdefault(name, message)
    result.problems.extend(problems)
    result.checks.append("manifest")
    if digest is not None:
        for name, message in check_digest(root, parse_digest(digest)):
            result.flag(name, message)
        result.checks.append("digest")
    if not recompute:
        return result
    configs, control = _recorded_selection(root)
    # the measures first, from the table read slim as `analyze` reads it; then the checks that
    # need every column; the report once that table is freed: one table in memory at a time
    measures = _run_check(
        root,
        result.recomputed,
        MEASURES_FILE,
        lambda found: _check_measures(root, _slim_table(root), found, analyze, configs, control),
    )
    with_table = _table_checks(root, result, configs)
    if with_table is None:
        result.recomputed.measures = None
        return result
    report = _run_check(root, result.recomputed, REPORT_FILE, lambda f: _check_report(root, f))
    after_manifest = len(result.problems)
    for found in (with_table[0], measures, *with_table[1:], report):  # the order they had
        result.problems.extend(found.problems)
        for name, message in found.bad_files.items():
            result.bad_files.setdefault(name, message)
        result.checks.extend(found.checks)
    _demote_declared_stale(root, result, after_manifest)
    return result


def _slim_table(root: Path) -> pd.DataFrame:
    """The artifact's responses as `analyze` reads them (`read_run(..., slim=True)`)."""
    try:
        return read_run(root, slim=True)[0]
    except (SchemaError, OSError, ValueError):  # run.json damaged: its own check says so
        return read_responses(root / RESPONSES_FILE, skip=UNUSED_BY_ANALYSIS, categories=True)


def _run_check(
    root: Path, recomputed: Recomputed, name: str, check: Callable[[VerifyResult], None]
) -> VerifyResult:
    found = VerifyResult(artifact=root, recomputed=recomputed)
    try:
        check(found)
    except Exception as exc:  # a damaged file is a finding, never a traceback
        found.flag(name, f"could not be checked ({type(exc).__name__}: {exc})")
    return found


def _table_checks(
    root: Path, result: VerifyResult, configs: list[str] | None
) -> list[VerifyResult] | None:
    """The checks that read every column of the responses; None, the reason flagged, when the
    table or the configuration selection does not fit. The trajectories are checked first
    from their own columns (at 2 x 10^6 rows the table and their pivots together were
    `verify`'s peak)."""
    trajectories = _narrow_trajectory_check(root, result, configs)
    try:
        df = read_responses(root / RESPONSES_FILE)
    except (OSError, ValueError) as exc:
        result.recomputed.trajectories = None
        result.flag(RESPONSES_FILE, f"cannot be read ({exc})")
        return None
    grid_df = df
    if configs is not None:
        from ..analysis.measures import UnknownConfigError, select_configs

        try:
            grid_df, _ = select_configs(df, configs)
        except UnknownConfigError as exc:
            result.recomputed.trajectories = None
            result.flag(PROVENANCE_FILE, f"its configuration selection does not fit ({exc})")
            return None
    checks: list[tuple[str, Callable[[VerifyResult], None]]] = [
        (TRAJECTORIES_FILE, lambda found: _check_trajectories(root, grid_df, found)),
        (AUDIT_FILE, lambda found: _check_audit(root, df, found)),
        (CASCADE_FILE, lambda found: _check_cascade(root, df, found)),
        (f"{INTERVENTION_DIR}/", lambda found: _check_interventions(root, df, found)),
        (PROVENANCE_FILE, lambda found: _check_provenance(root, found)),
        (PROVENANCE_FILE, lambda found: _check_sources(root, df, found)),
    ]
    if trajectories is not None:
        checks = checks[1:]
    found = [_run_check(root, result.recomputed, name, check) for name, check in checks]
    return found if trajectories is None else [trajectories, *found]


def _narrow_trajectory_check(
    root: Path, result: VerifyResult, configs: list[str] | None
) -> VerifyResult | None:
    """None when the columns do not read (the whole table's read then says why)."""
    try:
        narrow = read_response_columns(root / RESPONSES_FILE, TRAJECTORY_COLUMNS)
        if configs is not None:
            from ..analysis.measures import select_configs

            narrow, _ = select_configs(narrow, configs)
    except (OSError, ValueError):
        return None
    return _run_check(
        root,
        result.recomputed,
        TRAJECTORIES_FILE,
        lambda found: _check_trajectories(root, narrow, found),
    )


def _demote_declared_stale(root: Path, result: VerifyResult, start: int) -> None:
    """A file the report itself flagged as stale is a note, not a failure, when only its
    recomputation differs; a changed byte (the manifest check) still fails."""
    try:
        stale = declared(read_json(root / PROVENANCE_FILE), "stale")
    except (OSError, ValueError):
        return
    if not stale:
        return
    failed_before = {p.split(": ", 1)[0] for p in result.problems[:start]}
    kept = result.problems[:start]
    demoted = set()
    for problem in result.problems[start:]:
        name = problem.split(": ", 1)[0]
        if name in stale and name not in failed_before:
            demoted.add(name)
        else:
            kept.append(problem)
    result.problems[:] = kept
    for name in sorted(demoted):
        result.bad_files.pop(name, None)
        result.notes.append(f"{name}: stale, flagged in the report: {stale[name]}")


def _differs(
    root: Path, name: str, stored: Mapping[str, object], fresh: object, result: VerifyResult
) -> None:
    """Stale (the responses moved on) or edited, by the file's recorded responses digest."""
    from ..core.files import sha256_file
    from ..core.responses import RESPONSES_DIGEST_KEY

    diff = _first_difference(stored, in_layout_of(stored, fresh), added=ADDED_LATER)
    if not diff:
        return
    why, words = why_it_differs(
        stored.get(RESPONSES_DIGEST_KEY), sha256_file(root / RESPONSES_FILE)
    )
    fix = "; `itemscale report RUN` recomputes it" if why == "stale" else ""
    result.flag(
        name,
        f"{why}: differs from what {RESPONSES_FILE} gives with its own settings at {diff} "
        f"({words}){fix}",
    )


def _check_cascade(root: Path, df: pd.DataFrame, result: VerifyResult) -> None:
    path = root / CASCADE_FILE
    if not path.is_file():
        return
    stored, fresh = stored_and_fresh(path, df)
    if isinstance(fresh, CascadeReport):
        result.recomputed.cascade = fresh
    _differs(root, CASCADE_FILE, stored.as_json(), fresh.as_json(), result)
    result.checks.append("cascade")


def _check_interventions(root: Path, df: pd.DataFrame, result: VerifyResult) -> None:
    pairs = intervention_results(root)
    for path, _ in pairs:
        stored, fresh = stored_and_fresh(path, df)
        _differs(root, path.relative_to(root).as_posix(), stored.as_json(), fresh.as_json(), result)
    if pairs:
        result.checks.append("intervention")


def _check_provenance(root: Path, result: VerifyResult) -> None:
    from ..core.files import sha256_file

    prov = read_json(root / PROVENANCE_FILE)
    run_meta = read_json(root / RUN_FILE)
    recorded = prov["inputs"][RESPONSES_FILE]["sha256"]
    actual = sha256_file(root / RESPONSES_FILE)
    if recorded != actual:
        result.flag(
            PROVENANCE_FILE,
            f"names responses with sha256 {str(recorded)[:12]}... but the artifact's "
            f"{RESPONSES_FILE} is {actual[:12]}...",
        )
    for which in ("started", "finished"):
        expected = run_time(run_meta, which) if isinstance(run_meta, dict) else None
        if prov["times"].get(f"run_{which}") != expected:
            result.flag(
                PROVENANCE_FILE,
                f"times.run_{which} is {prov['times'].get(f'run_{which}')!r} but {RUN_FILE} "
                f"says {expected!r}",
            )
    result.checks.append("provenance")


def _check_sources(root: Path, df: pd.DataFrame, result: VerifyResult) -> None:
    prov = read_json(root / PROVENANCE_FILE)
    run_meta = read_json(root / RUN_FILE)
    found = [
        *check_json_form(root),
        *check_copied_files(root, prov),
        *check_items(root, df),
        *check_videos(prov, run_meta),
        *check_sessions(df, run_meta),
        *check_readme(root, prov),
    ]
    for name, message in found:
        result.flag(name, message)
    result.checks.append("sources")


_TITLE = re.compile(r"<title>(.*?)</title>", re.S)


def _check_report(root: Path, result: VerifyResult) -> None:
    from ._build import load_report_inputs
    from ._html import render_report

    stored = (root / REPORT_FILE).read_text(encoding="utf-8")
    # rendered from what was recomputed, so an edited measures.json is blamed on itself only
    again = result.recomputed
    inputs = load_report_inputs(root, measures=again.measures)
    inputs = dataclasses.replace(
        inputs,
        trajectories=again.trajectories if again.trajectories is not None else inputs.trajectories,
        # as the file holds it: sorted keys give the report its order of the rules
        cascade=(
            CascadeReport.model_validate(as_stored(again.cascade.as_json()), context=STORED)
            if again.cascade is not None
            else inputs.cascade
        ),
    )
    prov = inputs.provenance
    if not (isinstance(prov.get("report"), dict) and prov["report"].get("title")):
        found = _TITLE.search(stored)  # written before the title was recorded
        if found:
            inputs = dataclasses.replace(inputs, title=html.unescape(found.group(1)))
    fresh = render_report(inputs)
    if fresh != stored:
        at = next(
            (i for i, (a, b) in enumerate(zip(stored, fresh, strict=False)) if a != b),
            min(len(stored), len(fresh)),
        )
        result.flag(
            REPORT_FILE,
            f"differs from the report rendered again from the artifact's files (first at "
            f"character {at}: {stored[max(0, at - 30) : at + 30]!r})",
        )
    result.checks.append("report")


def _recorded_selection(root: Path) -> tuple[list[str] | None, str | None]:
    try:
        record = read_json(root / PROVENANCE_FILE)["measures"]
        configs, control = record.get("configs"), record.get("control")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None, None
    listed = isinstance(configs, list) and all(isinstance(c, str) for c in configs)
    return (configs if listed else None), (control if isinstance(control, str) else None)


def _check_trajectories(root: Path, df: pd.DataFrame, result: VerifyResult) -> None:
    try:
        stored = pq.read_table(root / TRAJECTORIES_FILE).to_pandas()
    except (OSError, ValueError) as exc:
        result.flag(TRAJECTORIES_FILE, f"cannot be read ({exc})")
        return
    fresh = trajectory_table(df)
    result.recomputed.trajectories = fresh
    diff = _frames_equal(stored, fresh)
    if diff:
        result.flag(
            TRAJECTORIES_FILE,
            f"differs from the trajectories recomputed from {RESPONSES_FILE}: {diff}",
        )
    result.checks.append("trajectories")


def _check_measures(
    root: Path,
    df: pd.DataFrame,
    result: VerifyResult,
    analyze: Analyze | None,
    configs: list[str] | None = None,
    control: str | None = None,
) -> None:
    try:
        raw = read_json(root / MEASURES_FILE)
        boot = raw["bootstrap"]
        bootstrap, seed = int(recorded_bootstrap(boot)), int(boot["seed"])
        settings = AnalysisSettings(
            bootstrap=bootstrap,
            seed=seed,
            # a file written before --ci records none: `analyze`'s default
            **({"ci": boot["interval"]} if "interval" in boot else {}),
            configs=configs,
            control=control,
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:  # a ValidationError too
        result.flag(MEASURES_FILE, f"cannot be read ({exc})")
        return
    missing = missing_plugin_measures(raw.get("plugin_measures"))
    if missing:  # the recomputation would lack their keys: say what to install instead
        for line in missing:
            result.flag(MEASURES_FILE, line)
        return
    try:
        prov = read_json(root / PROVENANCE_FILE)
        recorded = prov["measures"]
        recorded_b = recorded_bootstrap(recorded)
        if (int(recorded_b), int(recorded["seed"])) != (bootstrap, seed):
            result.flag(
                PROVENANCE_FILE,
                f"records B={recorded_b}, seed={recorded['seed']} but {MEASURES_FILE} "
                f"was computed with B={bootstrap}, seed={seed}",
            )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        result.flag(PROVENANCE_FILE, f"cannot be read ({exc})")
    # as the file would hold it (sorted keys), so the report check renders it in that order
    fresh = AnalysisResult.from_json(
        as_stored(compute_measures(analyze, df, settings, ci="interval" in boot).to_json()),
        where="the recomputation",
    )
    result.recomputed.measures = fresh
    try:  # after the recomputation, which the report check renders from
        stored = AnalysisResult.from_json(raw, where=MEASURES_FILE)
    except SchemaError as exc:  # names the key that does not fit
        result.flag(MEASURES_FILE, f"cannot be read ({exc})")
        return
    diff = _first_difference(stored.to_json(), in_layout_of(stored.to_json(), fresh.to_json()))
    if diff:
        hint = ""
        written_by = _tool_version(root)
        if written_by is not None and written_by != __version__:
            hint = (
                f"; note: written by itemscale {written_by}, checked with {__version__} "
                "(verify with the version that wrote it)"
            )
        result.flag(
            MEASURES_FILE,
            f"differs from the measures recomputed from {RESPONSES_FILE} (B={bootstrap}, "
            f"seed={seed}) at {diff}{hint}",
        )
    result.checks.append("measures")


def missing_plugin_measures(recorded: Any) -> list[str]:
    """What `plugin_measures` of a measures file names that this process cannot compute, each
    line saying what to install or register."""
    if not isinstance(recorded, list):
        return []
    lines = []
    have = {(unit.key, origin.distribution) for unit, origin in measure_origins()}
    for entry in recorded:
        if not isinstance(entry, Mapping):
            continue
        key, dist = entry.get("key"), entry.get("distribution")
        if (key, dist) in have:
            continue
        if dist is None:
            lines.append(
                f"holds measure {key!r}, registered with register_measure by the program that "
                "wrote it, and not registered here: register it before verifying"
            )
            continue
        version, ep = entry.get("version"), entry.get("entry_point")
        lines.append(
            f"holds measure {key!r} of package {dist} {version} (entry point '{ep}', group "
            f"{MEASURES_GROUP}), which is not installed here: install {dist}=={version} to "
            "recompute the measures"
        )
    return lines


def _tool_version(root: Path) -> str | None:
    try:
        prov = read_json(root / PROVENANCE_FILE)
        return str(prov["tool"]["version"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _check_audit(root: Path, df: pd.DataFrame, result: VerifyResult) -> None:
    path = root / AUDIT_FILE
    if not path.is_file():
        return
    from ..analysis.audit import TRANSITION_COLUMNS, audit_transitions, pathway_counts
    from ..core.items import ItemFileError, read_items_jsonl

    try:
        stored = pq.read_table(path).to_pandas()
        summary = read_json(root / AUDIT_SUMMARY_FILE)
        pairs = summary.get("pairs", "adjacent")
    except (OSError, ValueError) as exc:
        result.flag(AUDIT_FILE, f"cannot be read with {AUDIT_SUMMARY_FILE} ({exc})")
        return
    try:
        items = read_items_jsonl(root / ITEMS_FILE) if (root / ITEMS_FILE).is_file() else []
    except (ItemFileError, OSError, ValueError) as exc:
        result.flag(ITEMS_FILE, f"cannot be read ({exc})")
        return
    fresh = audit_transitions(df, items, pairs=pairs)
    a = sorted(zip(stored["transition_id"], stored["pathway"], strict=True))
    b = sorted(zip(fresh["transition_id"], fresh["pathway"], strict=True))
    if a != b:
        only = sorted(set(a) ^ set(b))[:3]
        result.flag(
            AUDIT_FILE,
            f"transitions or pathways differ from the audit recomputed from {RESPONSES_FILE} "
            f"(e.g. {only})",
        )
    else:  # the same transitions: every column of each, the facts the pathway came from
        columns = [c for c in TRANSITION_COLUMNS if c in stored.columns]

        def ordered(frame: pd.DataFrame) -> pd.DataFrame:
            return frame[columns].sort_values("transition_id").reset_index(drop=True)

        diff = _frames_equal(ordered(stored), ordered(fresh))
        if diff is None and len(columns) < len(TRANSITION_COLUMNS):
            diff = f"columns {sorted(set(TRANSITION_COLUMNS) - set(columns))} are missing"
        if diff:
            result.flag(AUDIT_FILE, f"differs from the audit recomputed: {diff}")
        counts = pathway_counts(fresh)
        if summary.get("counts") != counts or summary.get("n_transitions") != len(fresh):
            result.flag(AUDIT_SUMMARY_FILE, "its counts differ from the audit recomputed")
    result.checks.append("audit")
