"""The files an lmms-eval import reads, each read with the results.json beside it: a folder
(given plainly or to `--config`) stands for every samples file under it; lmms-eval's
results.json given where its samples file belongs is refused, saying what to give instead; two
files of one task at one configuration are refused in the words of what they most likely are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ._common import ImportInputError, JsonObject, jsonl_values
from ._inputs import input_file
from ._jobs import ConfigSpec
from ._lmms_eval_results import SAMPLES_NAME, find_results_json, read_results_json


def spec_files(spec: ConfigSpec) -> list[ConfigSpec]:
    """`--config LABEL=DIR`: every samples file in DIR, one per task the run logged (a run that
    evaluated several tasks at one configuration writes a samples file per task)."""
    if not spec.path.is_dir():
        return [spec]
    found = sorted(spec.path.rglob("*samples_*.jsonl"))
    if not found:
        raise ImportInputError(
            f"--config {spec.label}={spec.path}: no lmms-eval samples files (*samples_*.jsonl) "
            "in this folder (lmms-eval writes them with --log_samples)"
        )
    return [ConfigSpec(label=spec.label, frames=spec.frames, path=path) for path in found]


def _stamp(path: Path) -> str | None:
    m = SAMPLES_NAME.match(path.name)
    return m["stamp"] if m and m["stamp"] else None


def expand_paths(paths: Sequence[str]) -> list[Path]:
    """The files given plainly, a folder standing for every samples file under it: lmms-eval
    writes each run into a folder of its own, and that folder is what a user has at hand."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(p.rglob("*samples_*.jsonl"))
            if not found:
                results = sorted(p.rglob("*results.json"))
                hint = (
                    f" (only {results[0].name}: lmms-eval writes the per-item samples only when "
                    "run with --log_samples)"
                    if results
                    else " (lmms-eval writes them when run with --log_samples)"
                )
                raise ImportInputError(
                    f"{p}: no lmms-eval samples files (*samples_*.jsonl) here{hint}"
                )
            out.extend(found)
        else:
            _refuse_results_json(p)
            out.append(p)
    return out


def same_configuration(path: Path, first: Path, task: str, label: str) -> str:
    """Why two files cannot both be task `task` at configuration `label`, in the words of what
    they most likely are."""
    a, b = _stamp(first), _stamp(path)
    if path.parent == first.parent and a and b and a != b:
        return (
            f"{path}: task {task} at {label} is logged twice in {path.parent} (runs {a} and "
            f"{b}): lmms-eval wrote a second run of the same command into one output folder. "
            "Import the run you want (its samples file), or move the other one out"
        )
    return (
        f"{path}: same task ({task}) and configuration ({label}) as {first} by their "
        "results.json; runs that differ only in frame selection log the same model_args, so "
        "name each one with --config LABEL=PATH"
    )


def _refuse_results_json(path: Path) -> None:
    """lmms-eval's results.json given where its samples file belongs: say so, not 'invalid
    JSON' (one JSON object over many lines is not JSON Lines)."""
    if not path.name.endswith("results.json") or not path.is_file():
        return
    siblings = sorted(path.parent.glob("*samples_*.jsonl"))
    beside = (
        f"; beside it: {', '.join(s.name for s in siblings)} (or pass the folder {path.parent})"
        if siblings
        else "; no *samples_*.jsonl lies beside it (run lmms-eval with --log_samples)"
    )
    raise ImportInputError(
        f"{path}: this is lmms-eval's results.json (its summary scores), not a --log_samples "
        f"file; import reads the per-item samples file and finds results.json itself{beside}"
    )


#: One sample of a log: its line and the decoded object (a `doc_id` checked, the rest as logged).
Sample = tuple[int, JsonObject]


def read_samples(path: Path) -> list[Sample]:
    input_file(path)
    out: list[Sample] = []
    for line, obj in jsonl_values(path):
        if not isinstance(obj, dict) or "doc_id" not in obj:
            raise ImportInputError(
                f"{path}:{line}: not an lmms-eval sample (no 'doc_id'); is this a "
                "--log_samples file?"
            )
        doc_id = obj["doc_id"]
        if isinstance(doc_id, bool) or not isinstance(doc_id, int | str):
            raise ImportInputError(
                f"{path}:{line}: key 'doc_id': expected a number or a text id, got a JSON "
                f"{'boolean' if isinstance(doc_id, bool) else type(doc_id).__name__}"
            )
        out.append((line, obj))
    if not out:
        raise ImportInputError(f"{path}: no samples")
    return out


@dataclass(frozen=True)
class LogFile:
    """A samples file with the results.json beside it (None when there is none)."""

    path: Path
    spec: ConfigSpec | None
    samples: list[Sample]
    results: JsonObject | None
    results_path: Path | None


def read_logs(jobs: list[tuple[Path, ConfigSpec | None]], model: str | None) -> list[LogFile]:
    """Every file and its results.json, read before any is imported, so that the files are
    checked against each other (one model, distinct configurations) before rows are made."""
    logs: list[LogFile] = []
    for path, spec in jobs:
        samples = read_samples(path)
        results_path = find_results_json(path)
        results = None
        if results_path is not None:
            results = read_results_json(results_path)
        elif not (spec is not None and spec.frames is not None and model):
            raise ImportInputError(
                f"{path}: no results.json beside it (looked for the {path.parent}/*_results.json "
                "that lmms-eval writes with the samples); without it give --model and "
                f"--config LABEL:FRAMES={path}"
            )
        logs.append(LogFile(path, spec, samples, results, results_path))
    return logs
