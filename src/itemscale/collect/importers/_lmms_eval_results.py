"""lmms-eval's `{stamp}_results.json`, found beside each samples file, and what it says: the
model (`model_name` or `config.model_args`' `pretrained`), the task, the budget spelt in
`config.model_args` (one of many frame-count keys) and the score lmms-eval itself reported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ...core.files import loads_json, read_input_bytes
from ...core.responses import ResponseRow
from ._common import ImportInputError, JsonObject, json_object, not_utf8_message
from ._inputs import input_file

if TYPE_CHECKING:
    from ..protocol import Configuration

FRAME_KEYS: Final[tuple[str, ...]] = (
    "max_frames_num",
    "max_num_frames",
    "num_frames",
    "nframes",
    "nframe",
    "num_frame",
    "frame_num",
    "max_frames",
    "frames",
)
PIXEL_KEYS: Final[tuple[str, ...]] = ("max_pixels",)
FPS_KEYS: Final[tuple[str, ...]] = ("fps", "video_fps")
SAMPLES_NAME = re.compile(r"^(?P<stamp>.*?)_?samples_(?P<task>.+)\.jsonl$")


def parse_model_args(text: object) -> dict[str, str]:
    """`pretrained=x,max_frames_num=16` -> {"pretrained": "x", "max_frames_num": "16"}."""
    out: dict[str, str] = {}
    for part in str(text or "").split(","):
        if "=" in part:
            key, value = part.split("=", 1)
            out[key.strip()] = value.strip().strip("\"'")
    return out


def budget_from_model_args(args: Mapping[str, str], where: str) -> Configuration:
    """The one budget type (`protocol.Configuration`) from lmms-eval's many spellings."""
    from ..protocol import Configuration, SamplingPolicy

    def number(keys: Sequence[str]) -> float | None:
        for key in keys:
            if key in args and args[key] not in ("", "None", "none"):
                try:
                    return float(args[key])
                except ValueError:
                    raise ImportInputError(
                        f"{where}: model_args {key}={args[key]!r} is not a number"
                    ) from None
        return None

    frames = number(FRAME_KEYS)
    if frames is None:
        raise ImportInputError(
            f"{where}: config.model_args has no frame count ({', '.join(FRAME_KEYS)}); "
            "give --config LABEL:FRAMES=PATH"
        )
    pixels = number(PIXEL_KEYS)
    fps = number(FPS_KEYS)
    sampling = SamplingPolicy(name="fps", fps=fps) if fps and fps > 0 else SamplingPolicy()
    return Configuration(
        frames=int(frames),
        max_pixels=int(pixels) if pixels else None,
        sampling=sampling if frames > 0 else SamplingPolicy(),
    )


def find_results_json(samples: Path) -> Path | None:
    """`{stamp}_results.json` beside `{stamp}_samples_{task}.jsonl`; else the only results file."""
    m = SAMPLES_NAME.match(samples.name)
    if m and m["stamp"]:
        candidate = samples.with_name(f"{m['stamp']}_results.json")
        if candidate.is_file():
            return candidate
    others = sorted(samples.parent.glob("*results*.json"))
    return others[0] if len(others) == 1 else None


@dataclass(frozen=True)
class TaskName:
    """The task a samples file holds, where the name came from (`results.json` or `file
    name`), and the sentence the import's notes carry when results.json did not name it as the
    file name does."""

    name: str
    origin: str
    note: str | None = None


def _metric_names(results: JsonObject, task: str) -> set[str]:
    """The metrics results.json scores `task` with: its config's `metric_list` and the metric
    part of its `results` keys (`videomme_perception_score,none`)."""
    names: set[str] = set()
    listed = json_object(json_object(results.get("configs")).get(task)).get("metric_list")
    for metric in listed if isinstance(listed, list) else []:
        if isinstance(metric, Mapping) and isinstance(metric.get("metric"), str):
            names.add(metric["metric"])
    for key in json_object(json_object(results.get("results")).get(task)):
        name = key.split(",")[0]
        if name != "alias" and not name.endswith("_stderr"):
            names.add(name)
    return names


def resolve_task(samples: Path, results: JsonObject | None, sample_keys: Set[str]) -> TaskName:
    """The task of a samples file as its results.json keys it (`sample_keys`: the keys every
    sample of the file has): the file name's task when results.json scores one so named; else
    the one task whose metric is one of `sample_keys` (lmms-eval logs each metric's per-sample
    value under the metric's name), narrowed by the file name beginning with the task's name;
    else results.json's only task. The file name's task only when results.json names none of
    these, and the note says so: a file renamed after the run (`..._samples_videomme_aks.jsonl`
    of task `videomme`) would otherwise miss its results entry (its prompt, its reported score)
    and read as another task."""
    m = SAMPLES_NAME.match(samples.name)
    from_name = m["task"] if m else samples.stem
    configs, scored = (json_object((results or {}).get(k)) for k in ("configs", "results"))
    logged = [str(t) for t in (configs or scored)]
    if from_name in logged:
        return TaskName(from_name, "results.json")
    by_metric = [t for t in logged if _metric_names(results or {}, t) & sample_keys]
    pool = by_metric or logged
    by_name = [t for t in pool if from_name.startswith(f"{t}_")]
    found: list[tuple[str, str]] = []
    if len(by_metric) == 1:
        metrics = sorted(_metric_names(results or {}, by_metric[0]) & sample_keys)
        found.append((by_metric[0], f"its metric {metrics[0]} is a key of every sample here"))
    if by_name:
        task = max(by_name, key=len)
        found.append((task, f"the file name's {from_name} begins with it"))
    if len(logged) == 1:
        found.append((logged[0], "the only task it scores"))
    if found:
        task, why = found[0]
        note = (
            f"{samples.name}: task {task} as results.json names it ({why}); the file name "
            f"says {from_name}"
        )
        return TaskName(task, "results.json", note)
    where = (
        "no results.json beside it"
        if results is None
        else f"results.json scores {', '.join(logged) or 'no task'}"
    )
    note = f"{samples.name}: task {from_name} from the file name ({where})"
    return TaskName(from_name, "file name", note)


def model_name(results: JsonObject) -> str | None:
    cfg = json_object(results.get("config"))
    raw = results.get("model_name") or parse_model_args(cfg.get("model_args", "")).get("pretrained")
    if raw:
        return Path(str(raw).rstrip("/")).name or str(raw)
    model = cfg.get("model")
    return str(model) if model else None


def read_results_json(path: Path) -> JsonObject:
    """The results object, its sections checked to be objects, so that reading them later
    cannot fail on a file damaged by hand."""
    try:
        results = loads_json(read_input_bytes(input_file(path)).decode("utf-8"))
    except json.JSONDecodeError as exc:
        raise ImportInputError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    except UnicodeDecodeError as exc:
        raise ImportInputError(f"{path}: {not_utf8_message(exc)}") from None
    if not isinstance(results, dict):
        raise ImportInputError(
            f"{path}: expected lmms-eval's results object, got a JSON {type(results).__name__}"
        )
    for section in ("config", "configs", "results"):
        if section in results and not isinstance(results[section], dict):
            raise ImportInputError(
                f"{path}: key '{section}' is a {type(results[section]).__name__}, expected an "
                "object"
            )
    return results


def task_version(results: JsonObject, task_cfg: JsonObject, task: str) -> object:
    """The task's `metadata.version` (a list of one mapping in older logs), else `versions`."""
    metadata = task_cfg.get("metadata")
    if isinstance(metadata, list):
        metadata = next((m for m in metadata if isinstance(m, Mapping)), None)
    if isinstance(metadata, Mapping) and metadata.get("version") is not None:
        return metadata["version"]
    return json_object(results.get("versions")).get(task)


def n_samples_of(results: JsonObject | None, task: str) -> int | None:
    """How many samples lmms-eval scored for `task` (results.json `n-samples`), if it says."""
    entry = json_object((results or {}).get("n-samples")).get(task)
    value = entry.get("effective") if isinstance(entry, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def score_note(
    path: Path,
    task: str,
    reported: object,
    rows: list[ResponseRow],
    *,
    n_samples: int | None = None,
    n_in_file: int | None = None,
    disagreements: tuple[int, int] = (0, 0),
) -> str | None:
    """lmms-eval's own score for the file beside itemscale's re-extracted accuracy, both in
    points (lmms-eval logs some tasks' accuracy as a fraction, `acc 0.72`, others in points),
    and why the two can differ: other items (a partial log), or answers the two extractors
    read apart."""
    if not isinstance(reported, dict):
        return None
    scores = {
        k.split(",")[0]: float(v)
        for k, v in reported.items()
        if isinstance(v, int | float) and not isinstance(v, bool) and "stderr" not in k
    }
    correct = [c for r in rows if (c := r.get("correct")) is not None]
    if not scores or not correct:
        return None
    ours = 100.0 * sum(correct) / len(correct)
    fractions = all(0.0 <= v <= 1.0 for v in scores.values())
    theirs = ", ".join(
        f"{name} {100 * value:.2f} ({value:g} as logged)" if fractions else f"{name} {value:.2f}"
        for name, value in scores.items()
    )
    over = f" over its {n_samples} samples" if n_samples is not None else ""
    why = []
    if n_samples is not None and n_in_file is not None and n_samples != n_in_file:
        why.append(
            f"this file holds {n_in_file} of those {n_samples} samples, so the two numbers are "
            "over different items"
        )
    differ, compared = disagreements
    if compared:
        why.append(
            f"on this file's items the two extractors read {differ} of {compared} answers apart"
        )
    if len(correct) < len(rows):
        why.append(f"{len(rows) - len(correct)} rows have no correctness (failures)")
    return (
        f"{path.name} ({task}): lmms-eval reported {theirs}{over}; itemscale's re-extracted "
        f"accuracy {ours:.2f} on {len(correct)} answered items ({'; '.join(['points', *why])})"
    )


def package_versions(results: Mapping[str, object]) -> dict[str, str]:
    """The package versions results.json states at its top level (`transformers_version`,
    `torch_version`, ...: lm-evaluation-harness-style logs carry some), by package name;
    lmms-eval's own version is recorded apart."""
    return {
        key[: -len("_version")]: value
        for key, value in sorted(results.items())
        if key.endswith("_version")
        and key != "lmms_eval_version"
        and isinstance(value, str)
        and value
    }
