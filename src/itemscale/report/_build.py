"""`itemscale report`: the audit artifact, a folder someone else can check without trusting us
(docs/report.md lists its files). It is built beside the old one and swapped in, so a crash
never leaves a half-written artifact under the final name.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Unpack

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..analysis.audit import ANNOTATIONS_FILE, AUDIT_FILE, AUDIT_SUMMARY_FILE, SHEETS_DIR
from ..analysis.measures import AnalysisOptions, AnalysisResult, AnalysisSettings
from ..analysis.policies import CASCADE_FILE, INTERVENTION_DIR, PLAN_SUFFIX
from ..core.errors import ItemscaleError
from ..core.files import no_space_is_typed, read_json, replace_dir, sha256_file, shared_mode
from ..core.items import ITEMS_FILE, Item, read_items_jsonl
from ..core.responses import (
    MANIFEST_FILE,
    RESPONSES_FILE,
    RUN_FILE,
    check_replaceable,
    read_response_columns,
    read_run,
    run_lock,
    write_json_atomic,
)
from ._comparison import PaperComparison
from ._derived import refresh_derived, stored_reports
from ._html import REPORT_COLUMNS, ReportInputs, render_report
from ._manifest import write_manifest
from ._provenance import (
    README_VERSION,
    RECORDED_SETTINGS,
    Analyze,
    Provenance,
    compute_measures,
    now,
    provenance_record,
    readme_text,
)
from ._trajectories import TRAJECTORY_COLUMNS, TRAJECTORY_SCHEMA_VERSION, trajectory_table

ARTIFACT_DIR: Final[str] = "artifact"
TRAJECTORIES_FILE: Final[str] = "trajectories.parquet"
MEASURES_FILE: Final[str] = "measures.json"
PROVENANCE_FILE: Final[str] = "provenance.json"
REPORT_FILE: Final[str] = "report.html"
README_FILE: Final[str] = "README.md"
#: An intervention's result where runs before `intervention/<policy>.json` wrote it.
LEGACY_INTERVENTION_FILE: Final[str] = "intervention.json"
#: The seed paper's published numbers beside itemscale's (`make demo`'s paper run).
COMPARISON_FILE: Final[str] = "comparison.json"
#: Optional run-directory files copied as they are when present.
OPTIONAL_FILES: Final[tuple[str, ...]] = (
    AUDIT_FILE,
    AUDIT_SUMMARY_FILE,
    ANNOTATIONS_FILE,
    CASCADE_FILE,
    LEGACY_INTERVENTION_FILE,
    COMPARISON_FILE,
)


class ArtifactError(ItemscaleError, ValueError):
    """An artifact that cannot be written or does not verify; names the files at fault."""


def find_items_file(
    run_dir: Path, run_meta: Mapping[str, object], items: str | None
) -> Path | None:
    """`items` if given, else RUN_DIR/items.jsonl, else a path run.json or the audit names."""
    if items:
        path = Path(items)
        if not path.is_file():
            raise ArtifactError(f"{path}: no such item file")
        return path
    if (run_dir / ITEMS_FILE).is_file():
        return run_dir / ITEMS_FILE
    candidates: list[object] = [run_meta.get(k) for k in ("items_path", "items_file", "items")]
    # the item file the audit used (its evidence spans decided the pathways)
    audit_summary = _read_optional_json(run_dir / AUDIT_SUMMARY_FILE)
    if audit_summary and isinstance(audit_summary.get("items"), dict):
        candidates.insert(0, audit_summary["items"].get("path"))
    protocol = run_meta.get("protocol")
    if isinstance(protocol, dict) and isinstance(protocol.get("benchmark"), dict):
        candidates.append(protocol["benchmark"].get("path"))
    for value in candidates:
        if not isinstance(value, str):
            continue
        for candidate in (Path(value), run_dir / value):
            if candidate.is_file():
                return candidate
            if candidate.is_dir() and (candidate / ITEMS_FILE).is_file():
                return candidate / ITEMS_FILE
    return None


def write_trajectories(df: pd.DataFrame, path: Path) -> None:
    table = pa.Table.from_pandas(df, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta.pop(b"pandas", None)
    meta[b"itemscale.schema_version"] = str(TRAJECTORY_SCHEMA_VERSION).encode()
    meta[b"itemscale.table"] = b"trajectories"
    pq.write_table(table.replace_schema_metadata(meta), path)


def build_artifact(
    run_dir: str | os.PathLike[str],
    settings: AnalysisSettings | None = None,
    *,
    out: str | os.PathLike[str] | None = None,
    items: str | None = None,
    title: str | None = None,
    analyze: Analyze | None = None,
    force: bool = False,
    **options: Unpack[AnalysisOptions],
) -> Path:
    """Write the artifact folder (default RUN_DIR/artifact) and return its path.

    `settings` (an `AnalysisSettings`) says how the measures are computed, or its fields as
    keywords (`AnalysisOptions`; `bootstrap`, `seed`, `ci`, `configs`): the artifact records
    these (`verify` recomputes with them), so other settings (`by`, `axis`, ...) are refused.
    `configs` restricts the measures and trajectories to those configuration labels (as
    `analyze --configs`); responses.parquet stays whole, and the selection is recorded in
    provenance.json so `verify` recomputes the same thing.

    The artifact folder is replaced only when it is absent, empty or an earlier artifact
    (`force` replaces any other folder); never the run folder or one that holds it. The whole
    build holds the run folder's lock.
    """
    chosen = artifact_settings(settings, options)
    run_dir = Path(run_dir)
    if not run_dir.is_dir():  # before the lock, which would create the folder
        raise FileNotFoundError(f"{run_dir}: not a run directory")
    target = Path(out) if out is not None else run_dir / ARTIFACT_DIR
    check_replaceable(target, force=force, protect=[run_dir])
    with (
        # a read-only run folder may still be reported into a folder elsewhere
        run_lock(run_dir, what="report", writes_run=_inside(target, run_dir)),
        no_space_is_typed(target.parent, f"the artifact {target.name}/"),
    ):
        return _build(run_dir, target, chosen, items, title, analyze)


def artifact_settings(
    settings: AnalysisSettings | None, options: Mapping[str, object]
) -> AnalysisSettings:
    """Refuses the settings an artifact does not record: `verify` could not recompute them."""
    chosen = AnalysisSettings.of(settings, options)
    default = AnalysisSettings()
    other = [
        name
        for name in type(chosen).model_fields
        if name not in RECORDED_SETTINGS and getattr(chosen, name) != getattr(default, name)
    ]
    if other:
        raise ArtifactError(
            f"an artifact records only {', '.join(RECORDED_SETTINGS)} (what `verify` recomputes "
            f"the measures with), not {', '.join(other)}: run `analyze` for those"
        )
    return chosen


def _inside(target: Path, run_dir: Path) -> bool:
    return run_dir.resolve() in target.resolve().parents


def _build(
    run_dir: Path,
    target: Path,
    settings: AnalysisSettings,
    items: str | None,
    title: str | None,
    analyze: Analyze | None,
) -> Path:
    started = now()
    full, run_meta = read_run(run_dir)
    from ..analysis.measures import select_configs

    configs = settings.configs
    if configs is not None:
        select_configs(full, configs)  # an unknown label fails here, before anything is written

    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_builds(target, lock_covers_parent=target.parent.resolve() == run_dir.resolve())
    tmp = Path(tempfile.mkdtemp(prefix=_temp_prefix(target), dir=target.parent))
    try:
        shutil.copyfile(run_dir / RESPONSES_FILE, tmp / RESPONSES_FILE)
        if (run_dir / RUN_FILE).is_file():
            shutil.copyfile(run_dir / RUN_FILE, tmp / RUN_FILE)
        else:
            write_json_atomic(tmp / RUN_FILE, {"schema_version": 1, "note": "run had no run.json"})
        optional, items_path, item_list = _copy_run_files(run_dir, tmp, run_meta, items)
        derived = refresh_derived(tmp, full, item_list)
        del full  # memory: the measures read the table slim, the trajectories their columns
        narrow = read_response_columns(tmp / RESPONSES_FILE, TRAJECTORY_COLUMNS)
        if configs is not None:
            narrow, _ = select_configs(narrow, configs)
        write_trajectories(trajectory_table(narrow), tmp / TRAJECTORIES_FILE)
        del narrow
        # a stand-in callable is asked for the interval method only where it is not BCa
        measures = compute_measures(
            analyze, read_run(run_dir, slim=True)[0], settings, ci=settings.ci != "bca"
        )
        write_json_atomic(tmp / MEASURES_FILE, measures.to_json())
        prov = provenance_record(
            run_dir,
            run_meta,
            started=started,
            settings=settings,
            items_path=items_path,
            item_list=item_list,
            optional=optional,
            derived=derived,
            title=title,
        )
        prov["inputs"]["files"] = {
            rel: sha256_file(tmp / rel) for rel in _copied_files(tmp, optional)
        }
        prov["readme_version"] = README_VERSION
        write_json_atomic(tmp / PROVENANCE_FILE, prov)
        (tmp / README_FILE).write_text(readme_text(prov, optional), encoding="utf-8")
        # rendered from the artifact's own files, so `verify` can render it again and compare
        (tmp / REPORT_FILE).write_text(render_report(load_report_inputs(tmp)), encoding="utf-8")
        write_manifest(tmp)
        shared_mode(tmp, folder=True)
        replace_dir(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _copy_run_files(
    run_dir: Path, tmp: Path, run_meta: Mapping[str, object], items: str | None
) -> tuple[list[str], Path | None, list[Item]]:
    """Returns what was copied, the item file and its items."""
    optional = []
    for name in OPTIONAL_FILES:
        if (run_dir / name).is_file():
            shutil.copyfile(run_dir / name, tmp / name)
            optional.append(name)
    # read here, so a result that is not JSON is named in the run folder, not in the build
    _read_optional_json(run_dir / LEGACY_INTERVENTION_FILE)
    if (run_dir / INTERVENTION_DIR).is_dir():
        (tmp / INTERVENTION_DIR).mkdir()
        for path in sorted((run_dir / INTERVENTION_DIR).glob("*.json")):
            shutil.copyfile(path, tmp / INTERVENTION_DIR / path.name)
            if not path.name.endswith(PLAN_SUFFIX):
                _read_optional_json(path)
        optional.append(f"{INTERVENTION_DIR}/")
    if (run_dir / SHEETS_DIR).is_dir():
        (tmp / SHEETS_DIR).mkdir()
        for png in sorted((run_dir / SHEETS_DIR).glob("*.png")):
            shutil.copyfile(png, tmp / SHEETS_DIR / png.name)
    items_path = find_items_file(run_dir, run_meta, items)
    item_list: list[Item] = []
    if items_path is not None:
        item_list = read_items_jsonl(items_path)
        shutil.copyfile(items_path, tmp / ITEMS_FILE)
        optional.append(ITEMS_FILE)
    return optional, items_path, item_list


def _host_tag() -> str:
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def _temp_prefix(target: Path) -> str:
    """`.artifact-tmp-<host>-<pid>-`: a later build tells a killed one's leftovers apart."""
    return f".{target.name}-tmp-{_host_tag()}-{os.getpid()}-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def remove_stale_builds(target: Path, *, lock_covers_parent: bool) -> list[Path]:
    """Remove what killed builds of `target` left beside it: `.NAME-tmp-<host>-<pid>-*` of a
    gone process of this host, `.NAME-old-<pid>` of `replace_dir`, and (when the run lock
    covers the folder) the pid-less `.NAME-XXXXXXXX` of older builds; returns them."""
    name = re.escape(target.name)
    ours = re.compile(rf"\.{name}-tmp-(?P<host>[0-9a-f]{{8}})-(?P<pid>\d+)-[A-Za-z0-9_]+")
    aside = re.compile(rf"\.{name}-old-(?P<pid>\d+)")
    legacy = re.compile(rf"\.{name}-[a-z0-9_]{{8}}")
    removed = []
    for path in sorted(target.parent.glob(f".{target.name}-*")):
        if not path.is_dir() or path.is_symlink():
            continue
        stale = False
        if found := ours.fullmatch(path.name):
            stale = found["host"] == _host_tag() and not _alive(int(found["pid"]))
        elif found := aside.fullmatch(path.name):
            stale = not _alive(int(found["pid"]))
        elif legacy.fullmatch(path.name):
            stale = lock_covers_parent
        if stale and _holds_only_artifact_files(path):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _holds_only_artifact_files(folder: Path) -> bool:
    """Never a user's folder that happens to match the naming."""
    known = {
        RESPONSES_FILE,
        RUN_FILE,
        TRAJECTORIES_FILE,
        MEASURES_FILE,
        PROVENANCE_FILE,
        README_FILE,
        REPORT_FILE,
        ITEMS_FILE,
        MANIFEST_FILE,
        INTERVENTION_DIR,
        SHEETS_DIR,
        *OPTIONAL_FILES,
    }
    names = {p.name for p in folder.iterdir()}
    # a killed atomic write leaves `.measures.json-XXXX` beside the others
    half = {n for n in names if any(n.startswith(f".{k}-") for k in known)}
    rest = names - half
    return not rest or (RESPONSES_FILE in rest and rest <= known)


def _copied_files(root: Path, optional: list[str]) -> list[str]:
    """What provenance.json hashes, so an edit behind a rewritten manifest still disagrees."""
    names = [RUN_FILE, *(n for n in optional if not n.endswith("/") and n != ITEMS_FILE)]
    for folder in (INTERVENTION_DIR, SHEETS_DIR):
        if (root / folder).is_dir():
            names += sorted(p.relative_to(root).as_posix() for p in (root / folder).iterdir())
    return names


def load_report_inputs(root: Path, measures: AnalysisResult | None = None) -> ReportInputs:
    """What report.html is rendered from, read from the artifact folder alone; `measures` (what
    `verify` recomputed) in place of measures.json."""
    prov: Provenance = read_json(root / PROVENANCE_FILE)
    run_meta = read_json(root / RUN_FILE)
    cascade, stored = stored_reports(root)
    legacy = _read_optional_json(root / LEGACY_INTERVENTION_FILE)
    interventions = {**({"intervention": legacy} if legacy is not None else {}), **stored}
    sheets = {png.stem: png.read_bytes() for png in sorted((root / SHEETS_DIR).glob("*.png"))}
    title = (prov.get("report") or {}).get("title") if isinstance(prov, dict) else None
    questions: dict[str, str] = {}
    options: dict[str, tuple[str, ...]] = {}
    if (root / ITEMS_FILE).is_file():
        for it in read_items_jsonl(root / ITEMS_FILE):
            questions[it.item_id] = it.question
            if it.options:
                options[it.item_id] = tuple(it.options)
    return ReportInputs(
        measures=measures if measures is not None else AnalysisResult.read(root / MEASURES_FILE),
        trajectories=pq.read_table(root / TRAJECTORIES_FILE).to_pandas(),
        responses=read_response_columns(root / RESPONSES_FILE, REPORT_COLUMNS),
        provenance=prov,
        audit=_read_optional_parquet(root / AUDIT_FILE),
        annotations=_read_optional_parquet(root / ANNOTATIONS_FILE),
        sheets=sheets,
        cascade=cascade,
        comparison=_read_comparison(root / COMPARISON_FILE),
        intervention=interventions or None,
        run=run_meta if isinstance(run_meta, dict) else {},
        title=str(title) if title else "itemscale report",
        questions=questions,
        options=options,
    )


def _read_optional_parquet(path: Path) -> pd.DataFrame | None:
    if not path.is_file():
        return None
    df: pd.DataFrame = pq.read_table(path).to_pandas()
    return df


def _read_comparison(path: Path) -> PaperComparison | None:
    payload = _read_optional_json(path)
    if payload is None:
        return None
    try:
        return PaperComparison.from_json(payload)
    except (TypeError, ValueError) as exc:
        raise ArtifactError(f"{path}: {exc}") from exc


def _read_optional_json(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        payload = read_json(path)
    except ValueError as exc:
        raise ArtifactError(f"{path}: not valid JSON ({exc})") from exc
    return payload if isinstance(payload, dict) else None
