"""What an artifact records about how it was made: provenance.json (tool version and commit,
host, times, the versions of the libraries that computed and drew its numbers, hashes of the
inputs, the analysis settings `verify` recomputes with) and the README that lists the commands
reproducing every number. Kept apart from the build (`_build`), which only puts the files
together, and read by `verify` (`_crosscheck` writes the README again from provenance.json).
"""

from __future__ import annotations

import json
import platform
import socket
import subprocess
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Final, NotRequired, TypedDict

import pandas as pd

from ..analysis.audit import AUDIT_FILE
from ..analysis.measures import AnalysisResult, AnalysisSettings
from ..analysis.policies import CASCADE_FILE
from ..core.errors import stored_value
from ..core.files import sha256_file
from ..core.items import Item
from ..core.responses import RESPONSES_FILE, command_line
from ..core.version import __version__
from ._derived import Derived

#: Version of provenance.json. 2: the resample count is `measures.bootstrap`, where version 1
#: holds `measures.n_boot` (`recorded_bootstrap` reads both).
ARTIFACT_SCHEMA_VERSION: Final[int] = 2
#: The README's template; `verify` renders it again only for artifacts that record this one.
README_VERSION: Final[int] = 1
#: What computes the numbers, reads the files and videos, runs the models, draws the figures.
PACKAGES: Final[tuple[str, ...]] = (
    "numpy",
    "pandas",
    "pyarrow",
    "scipy",
    "pydantic",
    "av",
    "pillow",
    "torch",
    "torchvision",
    "transformers",
    "matplotlib",
)
#: The settings of `analyze` an artifact records: what `verify` recomputes the measures with.
RECORDED_SETTINGS: Final[tuple[str, ...]] = ("bootstrap", "seed", "ci", "configs", "control")

#: A stand-in for `analyze_responses` handed to `build_artifact` or `verify_artifact`, called
#: with the recorded settings as keywords; it returns the typed result or its JSON layout.
Analyze = Callable[..., AnalysisResult | Mapping[str, Any]]


class ToolRecord(TypedDict):
    name: str
    version: str
    git_commit: str | None
    git_dirty: bool | None


class HostRecord(TypedDict):
    hostname: str
    platform: str
    python: str
    machine: str


class DecoderRecord(TypedDict):
    name: str
    version: str | None


class TimesRecord(TypedDict):
    #: as run.json records them (`times.started`, or `started_at` in older runs)
    run_started: object
    run_finished: object
    artifact_started: str
    artifact_written: str


class MeasuresRecord(TypedDict):
    """A file of version 1 holds the resample count as `n_boot` (`recorded_bootstrap`)."""

    function: str
    bootstrap: int
    seed: int
    interval: str
    configs: NotRequired[list[str]]
    #: `--control`: the reference among configurations that ask one budget
    control: NotRequired[str]


def recorded_bootstrap(record: Mapping[str, Any]) -> Any:
    """Under its key of any layout (docs/glossary.md, 'Retired names')."""
    return stored_value(record, "bootstrap", "n_boot")


class ResponsesDigest(TypedDict):
    sha256: str
    source: str


class ItemsDigest(TypedDict):
    path: str
    sha256: str


#: `files`: every copied file, once the build is complete.
InputsRecord = TypedDict(
    "InputsRecord",
    {
        "responses.parquet": ResponsesDigest,
        "items": ItemsDigest | None,
        "videos": dict[str, dict[str, object]],
        "files": NotRequired[dict[str, str]],
    },
)


class ReportTitle(TypedDict):
    title: str


class Provenance(TypedDict):
    """provenance.json. Read back from an artifact it is untrusted (an edit is what `verify`
    looks for), so readers still look keys up with defaults."""

    schema_version: int
    tool: ToolRecord
    command: list[str]
    host: HostRecord
    packages: dict[str, str | None]
    decoder: DecoderRecord
    times: TimesRecord
    measures: MeasuresRecord
    inputs: InputsRecord
    optional_files: list[str]
    #: DERIVED_KEY: the derived files the report recomputed or flagged (`Derived.record`)
    derived: dict[str, dict[str, str]]
    report: ReportTitle
    readme_version: NotRequired[int]


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def git_state(path: Path) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the git checkout holding `path`, or (None, None) outside one."""
    try:
        commit = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(path), "status", "--porcelain", "--untracked-files=no", "--", "."],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    return commit or None, bool(status.strip())


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def video_hashes(items: list[Item], base: Path) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for it in items:
        if not it.video_path or it.video_id in out:
            continue
        path = Path(it.video_path)
        if not path.is_absolute():
            path = base / path
        if path.is_file():
            out[it.video_id] = {
                "path": it.video_path,
                "sha256": sha256_file(path),
                "bytes": path.stat().st_size,
            }
        else:
            out[it.video_id] = {"path": it.video_path, "sha256": None, "missing": True}
    return out


def measures_record(settings: AnalysisSettings) -> MeasuresRecord:
    record: MeasuresRecord = {
        "function": "itemscale.analysis.measures.analyze_responses",
        "bootstrap": settings.bootstrap,
        "seed": settings.seed,
        "interval": settings.ci,
    }
    if settings.configs is not None:
        record["configs"] = list(settings.configs)
    if settings.control is not None:
        record["control"] = settings.control
    return record


def compute_measures(
    analyze: Analyze | None, df: pd.DataFrame, settings: AnalysisSettings, *, ci: bool = True
) -> AnalysisResult:
    """`analyze_responses`, or the stand-in `analyze` called with the settings as keywords (`ci`
    False leaves the interval method to the callable's default), its JSON validated."""
    if analyze is None:
        from ..analysis.measures import analyze_responses

        return analyze_responses(df, settings)
    options: dict[str, object] = {"bootstrap": settings.bootstrap, "seed": settings.seed}
    if ci:
        options["ci"] = settings.ci
    if settings.configs is not None:
        options["configs"] = list(settings.configs)
    if settings.control is not None:
        options["control"] = settings.control
    return AnalysisResult.from_json(analyze(df, **options), where="the analyze callable's result")


def readme_text(prov: Provenance, optional: list[str]) -> str:
    boot = prov["measures"]
    grid = f" --configs {','.join(boot['configs'])}" if boot.get("configs") else ""
    if boot.get("interval", "bca") != "bca":
        grid += f" --ci {boot['interval']}"
    if boot.get("control"):
        grid += f" --control {boot['control']}"
    lines = [
        "# itemscale audit artifact",
        "",
        f"Written {prov['times']['artifact_written']} by itemscale {prov['tool']['version']} "
        f"(commit {prov['tool']['git_commit'] or 'unknown'}).",
        "",
        "## Files",
        "",
        "- `responses.parquet`: the response table (one row per model, item, configuration, "
        "repeat); every number is computed from it alone.",
        "- `trajectories.parquet`: items x budgets (repeat 0 correctness or score) with each "
        "item's pattern.",
        "- `measures.json`: every measure of docs/measures.md (`itemscale analyze --json` layout).",
        "- `run.json`: the run's own record (protocol, model specs, processor settings) as "
        "the sweep or importer wrote it.",
        "- `provenance.json`: tool version and commit, host, times, package and decoder "
        "versions, hashes of the inputs (responses, benchmark items, videos).",
        "- `report.html`: the report; opens offline.",
        "- `MANIFEST.json`: sha256 of every file above.",
    ]
    lines += [f"- `{name}`: copied from the run directory." for name in optional]
    lines += [
        "",
        "## Check it",
        "",
        "```",
        "itemscale verify ARTIFACT_DIR --digest DIGEST",
        "```",
        "",
        "checks every file against MANIFEST.json, then recomputes every measure from "
        "`responses.parquet` with the recorded bootstrap "
        f"(B = {recorded_bootstrap(boot)}, seed = {boot['seed']}) and compares with `measures.json` "
        "exactly, and the trajectories with `trajectories.parquet`. Any edited file is named. "
        "DIGEST is the sha256 of MANIFEST.json that `itemscale report` printed and the authors "
        "published beside their results: with it, an edit is found even when the manifest was "
        "written again after it.",
        "",
        "## Reproduce every number",
        "",
        "```",
        "mkdir -p rerun && cp responses.parquet rerun/ && cp run.json rerun/",
        f"itemscale analyze rerun --bootstrap {recorded_bootstrap(boot)} --seed {boot['seed']}{grid} "
        "--json rerun/measures.json   # = measures.json",
        f"itemscale report rerun{grid}   # = trajectories.parquet and the report's figures",
    ]
    if AUDIT_FILE in optional:
        lines.append(
            "itemscale audit rerun --items items.jsonl   # = audit.parquet (pathway rules: "
            "docs/report.md)"
        )
    if CASCADE_FILE in optional:
        lines.append("itemscale cascade rerun --json rerun/cascade.json   # = cascade.json")
    lines += [
        "```",
        "",
        "Intervals come from a paired bootstrap that resamples videos; the same seed gives the "
        "same interval bit for bit.",
        "",
    ]
    return "\n".join(lines)


def run_time(run_meta: Mapping[str, object], which: str) -> object:
    times = run_meta.get("times")
    if isinstance(times, dict) and times.get(which):
        return times[which]
    return run_meta.get(f"{which}_at")


def provenance_record(
    run_dir: Path,
    run_meta: Mapping[str, object],
    *,
    started: str,
    settings: AnalysisSettings,
    items_path: Path | None,
    item_list: list[Item],
    optional: list[str],
    derived: Sequence[Derived],
    title: str | None,
) -> Provenance:
    """provenance.json, less the hashes of the copied files (taken once the build is complete)."""
    commit, dirty = git_state(Path(__file__).resolve().parent)
    return {
        "schema_version": ARTIFACT_SCHEMA_VERSION,
        "tool": {
            "name": "itemscale",
            "version": __version__,
            "git_commit": commit,
            "git_dirty": dirty,
        },
        "command": command_line(),
        "host": {
            "hostname": socket.gethostname(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "machine": platform.machine(),
        },
        "packages": package_versions(),
        "decoder": {"name": "pyav", "version": package_versions().get("av")},
        "times": {
            "run_started": run_time(run_meta, "started"),
            "run_finished": run_time(run_meta, "finished"),
            "artifact_started": started,
            "artifact_written": now(),
        },
        "measures": measures_record(settings),
        "inputs": {
            "responses.parquet": {  # RESPONSES_FILE
                "sha256": sha256_file(run_dir / RESPONSES_FILE),
                "source": str(run_dir / RESPONSES_FILE),
            },
            "items": (
                {"path": str(items_path), "sha256": sha256_file(items_path)} if items_path else None
            ),
            "videos": video_hashes(item_list, items_path.parent) if items_path else {},
        },
        "optional_files": optional,
        "derived": {d.name: d.record() for d in derived},  # DERIVED_KEY
        "report": {"title": title or f"itemscale report: {run_dir.resolve().name}"},
    }


def as_stored(value: Any) -> Any:
    """Keys sorted as `write_json_atomic` stores them, so a recomputation shows in file order."""
    return json.loads(json.dumps(value, sort_keys=True, default=str))
