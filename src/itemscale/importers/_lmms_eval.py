"""lmms-eval `--log_samples` files into the response table.

lmms-eval writes one `{date}_samples_{task}.jsonl` per task with a `{date}_results.json` beside
it. Two layouts exist: the older one logs `filtered_resps` as a list, the current one as a bare
string (with `resps`, `token_counts`, `doc_hash`). Each task adds its own payload (Video-MME's
`videomme_perception_score`, LongVideoBench's `lvb_acc`, MLVU's `mlvu_perception_score`, ...)
that carries the ids, the categories and the gold answer.

Answers are re-extracted from the raw response with itemscale's extractor, not taken from the
payload's `pred_answer`: lmms-eval's task-specific parsers guess (an unparsed answer becomes a
letter), and the audit must not depend on which parser a task happened to use. How often the two
disagree is reported in the summary.

The budget comes from `results.json` `config.model_args`. Runs that differ only in an external
frame selector log identical `model_args`, so `--config LABEL[:FRAMES]=PATH` names each file's
configuration, in axis order.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..responses import (
    EXTRACTOR_VERSION,
    NOANSWER,
    Status,
    TaskKind,
    extract_choice,
    score_open_answer,
)
from ._absent import DEFAULT_ABSENT
from ._common import (
    ImportInputError,
    attributes_json,
    jsonl_values,
    label_config_id,
    source_record,
)
from ._finish import finish_parsed_import
from ._jobs import (
    OPTION_LINE,
    BenchmarkIndex,
    ConfigSpec,
    config_jobs,
    gold_letter,
    load_benchmark_index,
    parse_config_arg,
)
from ._lmms_eval_results import (
    SAMPLES_NAME,
    Budget,
    budget_from_model_args,
    find_results_json,
    model_name,
    n_samples_of,
    parse_model_args,
    read_results_json,
    score_note,
    task_name,
)
from ._summary import ImportSummary

# Payload keys that carry per-item metadata, mapped to the shared attribute names.
ATTRIBUTE_KEYS: Final[dict[str, str]] = {
    "duration": "duration",
    "duration_group": "duration",
    "category": "domain",
    "domain": "domain",
    "sub_category": "sub_category",
    "task_category": "task_type",
    "task_type": "task_type",
    "question_category": "question_category",
    "topic_category": "topic_category",
}
ID_KEYS: Final[tuple[str, ...]] = ("question_id", "id", "q_uid", "qid", "index")
VIDEO_KEYS: Final[tuple[str, ...]] = ("videoID", "video_id", "video_name", "video", "video_path")
GOLD_KEYS: Final[tuple[str, ...]] = ("answer", "gt_answer", "gt", "ground_truth")
PRED_KEYS: Final[tuple[str, ...]] = ("pred_answer", "parsed_pred", "pred")
NOT_PAYLOAD: Final[frozenset[str]] = frozenset(
    {
        "doc_id",
        "doc",
        "target",
        "arguments",
        "resps",
        "filtered_resps",
        "doc_hash",
        "prompt_hash",
        "target_hash",
        "input",
        "token_counts",
        "submission",
    }
)
_MAX_ID_CHARS: Final[int] = 64


def read_samples(path: Path) -> list[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise ImportInputError(f"{path}: no such file")
    out: list[tuple[int, dict[str, Any]]] = []
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


def response_text(sample: Mapping[str, Any]) -> str | None:
    """The filtered response: a string (current format) or the first of a list (older).

    None for multiple-choice log-likelihood tasks, whose responses are (loglik, greedy) pairs
    per option rather than text: their answer is the payload's chosen option.
    """
    for key in ("filtered_resps", "resps"):
        value = sample.get(key)
        while isinstance(value, list) and not is_loglikelihood(value):
            value = value[0] if value else None
        if is_loglikelihood(value):
            return None
        if value is not None:
            return str(value)
    return None


def is_loglikelihood(value: Any) -> bool:
    """`[-1.2, False]` or `[[-1.2, False], ...]`: a scored option, not generated text."""
    if isinstance(value, list) and len(value) == 2 and isinstance(value[1], bool):
        return isinstance(value[0], (int, float)) and not isinstance(value[0], bool)
    return isinstance(value, list) and bool(value) and all(is_loglikelihood(v) for v in value)


def payload_of(sample: Mapping[str, Any]) -> dict[str, Any]:
    for key, value in sample.items():
        if key in NOT_PAYLOAD or not isinstance(value, dict):
            continue
        if any(k in value for k in (*GOLD_KEYS, *PRED_KEYS, *ID_KEYS)):
            return value
    return {}


def options_from_prompt(prompt: str | None) -> tuple[str, ...]:
    """Options as listed in the prompt ("A. Apples." lines); () when they are not A, B, C..."""
    if not prompt:
        return ()
    found: dict[str, str] = {}
    for line in str(prompt).splitlines():
        m = OPTION_LINE.match(line)
        if m and m[1] not in found:
            found[m[1]] = m[2]
    letters = "".join(found)
    if len(letters) < 2 or "ABCDEFGHIJ"[: len(letters)] != letters:
        return ()
    return tuple(found.values())


def _first(mapping: Mapping[str, Any], keys: Sequence[str]) -> Any:
    for key in keys:
        value = mapping.get(key)
        if value is not None and str(value).strip() != "":
            return value
    return None


@dataclass
class FileResult:
    rows: list[dict[str, Any]]
    skipped: Counter[str] = field(default_factory=Counter)
    disagreements: int = 0
    compared: int = 0


def _present(value: Any) -> bool:
    return value is not None and not isinstance(value, dict | list) and bool(str(value).strip())


def _usable_ids(ids: Sequence[Any]) -> bool:
    """Present on most samples (a log with a few damaged lines keeps its ids), unique where
    present, and short enough to be an id rather than a question."""
    texts = [str(v).strip() for v in ids if _present(v)]
    if not texts or 2 * len(texts) < len(ids):
        return False
    return len(set(texts)) == len(texts) and all(
        len(t) <= _MAX_ID_CHARS and "\n" not in t for t in texts
    )


def _video_from_id(task: str, item_id: str, payload_id_key: str | None) -> str | None:
    if task.startswith("videomme") and re.fullmatch(r"\d{3}-\d+", item_id):
        return item_id.split("-")[0]  # Video-MME's own video number ("001")
    if task.startswith("longvideobench") and payload_id_key == "id" and "_" in item_id:
        return item_id.rsplit("_", 1)[0]
    return None


def sample_rows(
    path: Path,
    samples: list[tuple[int, dict[str, Any]]],
    *,
    task: str,
    model: str,
    budget: Budget,
    benchmark: BenchmarkIndex | None,
) -> FileResult:
    result = FileResult(rows=[])
    payloads = [payload_of(s) for _, s in samples]
    id_key = None
    for key in ID_KEYS:
        ids = [p.get(key) for p in payloads]
        if _usable_ids(ids):
            id_key = key
            break
    # EgoSchema-style logs carry the question uid only as the key of `submission`.
    submission_ids: list[Any] = [
        next(iter(sub)) if isinstance(sub, dict) and len(sub) == 1 else None
        for sub in (s.get("submission") for _, s in samples)
    ]
    use_submission = id_key is None and _usable_ids(submission_ids)
    doc_lines: dict[Any, int] = {}
    for pos, ((line, sample), payload) in enumerate(zip(samples, payloads, strict=True)):
        doc_id = sample["doc_id"]
        if doc_id in doc_lines:
            raise ImportInputError(
                f"{path}:{line}: doc_id {doc_id!r} appears twice (first on line "
                f"{doc_lines[doc_id]})"
            )
        doc_lines[doc_id] = line
        position = doc_id if isinstance(doc_id, int) else None
        missing_id = False
        if id_key:
            missing_id = not _present(payload.get(id_key))
            item_id = str(payload[id_key]).strip() if not missing_id else f"{task}:{doc_id}"
        elif use_submission:
            missing_id = not _present(submission_ids[pos])
            item_id = str(submission_ids[pos]) if not missing_id else f"{task}:{doc_id}"
        else:
            item_id = f"{task}:{doc_id}"
        question = payload.get("question_id") if id_key != "question_id" else None
        item = (
            benchmark.find(item_id, question or sample.get("input"), position)
            if benchmark
            else None
        )
        if item is not None:
            item_id = item.item_id
        elif missing_id:
            # The other samples are named by their ids; a doc_id name would match nothing
            # in other runs, so the sample is left out and counted, not renamed.
            result.skipped[f"no item id (empty '{id_key or 'submission'}')"] += 1
            continue
        options: tuple[str, ...] = item.options if item is not None else ()
        if not options:
            options = options_from_prompt(sample.get("input"))
        text = response_text(sample)
        lmms_pred = _first(payload, PRED_KEYS)
        scored_choice = text is None and is_loglikelihood(sample.get("filtered_resps"))
        if text is None and not (scored_choice and lmms_pred is not None):
            result.skipped["no response in the log line"] += 1
            continue
        gold_raw = _first(payload, GOLD_KEYS)
        if gold_raw is None:
            gold_raw = sample.get("target")
        gold = item.answer if item is not None and item.answer else gold_letter(gold_raw, options)
        attrs: dict[str, Any] = {"task": task}
        for key, name in ATTRIBUTE_KEYS.items():
            if key in payload and payload[key] is not None:
                attrs.setdefault(name, payload[key])
        video = None
        if item is not None:
            video = item.video_id
            attrs.update(item.attributes)
        if video is None:
            raw_video = _first(payload, VIDEO_KEYS)
            video = Path(str(raw_video)).stem if raw_video is not None else None
        if video is None:
            video = _video_from_id(task, item_id, id_key) or item_id
        row: dict[str, Any] = {
            "model": model,
            "item_id": item_id,
            "video_id": video,
            "series": "default",
            "config_id": budget.config_id,
            "config_label": budget.label,
            "axis_order": budget.axis_order,
            "frames": budget.frames,
            "pixels": budget.pixels,
            "sampling": budget.sampling,
            "repeat": 0,
            "raw_text": text,
            "attributes": attributes_json(attrs),
            "source": f"lmms-eval:{path.name}:{line}",
        }
        if gold is not None:
            if text is None:
                # a log-likelihood choice: the option the harness scored best, no text to parse
                answer = gold_letter(lmms_pred, options) or NOANSWER
                row["raw_text"] = None
            else:
                answer = extract_choice(text, options)
            if lmms_pred is not None and text is not None:
                result.compared += 1
                ours = None if answer == NOANSWER else answer
                if str(lmms_pred).strip().upper() != (ours or ""):
                    result.disagreements += 1
            row.update(
                task_kind=TaskKind.MCQA.value,
                status=Status.NOANSWER.value if answer == NOANSWER else Status.OK.value,
                answer=answer,
                correct=float(answer == gold),
                reference=gold,
            )
        elif text is not None and gold_raw is not None and str(gold_raw).strip():
            reference = str(gold_raw)
            row.update(
                task_kind=TaskKind.OPEN_QA.value,
                status=Status.OK.value,
                **score_open_answer(text, [reference]).columns(),
                reference=reference,
            )
        else:
            result.skipped["no gold answer in the log line"] += 1
            continue
        result.rows.append(row)
    return result


def _spec_files(spec: ConfigSpec) -> list[ConfigSpec]:
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


def _expand(paths: Sequence[str]) -> list[Path]:
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


def _same_configuration(path: Path, first: Path, task: str, label: str) -> str:
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


def run_lmms_eval_import(
    *,
    files: Sequence[str],
    configs: Sequence[str] = (),
    model: str | None = None,
    benchmark: str | os.PathLike[str] | None = None,
    run_dir: str | os.PathLike[str],
    dry_run: bool = False,
    absent: str = DEFAULT_ABSENT,
) -> ImportSummary:
    """Parse every file, check them against each other, then merge into the run."""
    given = [parse_config_arg(c) for c in configs]
    labels = Counter(s.label for s in given)
    dup = [label for label, n in labels.items() if n > 1]
    if dup:
        raise ImportInputError(f"--config label {dup[0]!r} is given twice")
    specs = [file_spec for spec in given for file_spec in _spec_files(spec)]
    jobs = config_jobs(specs, _expand(files), inputs="samples JSONL files", allow_mixed=True)
    mixed = bool(specs) and any(spec is None for _, spec in jobs)

    index = load_benchmark_index(benchmark)

    parsed: list[tuple[Path, dict[str, Any] | None, Path | None, list[tuple[int, dict[str, Any]]]]]
    parsed = []
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
        parsed.append((path, results, results_path, samples))

    names = {path: (model or (model_name(r) if r else None)) for path, r, _, _ in parsed}
    distinct = sorted({n for n in names.values() if n})
    if not model and len(distinct) > 1:
        listing = "; ".join(f"{p.name}: {n}" for p, n in names.items())
        raise ImportInputError(
            f"files of different models ({listing}); import them separately or give --model"
        )
    if any(n is None for n in names.values()):
        missing = next(p for p, n in names.items() if n is None)
        raise ImportInputError(f"{missing}: cannot tell the model from results.json; give --model")

    rows: list[dict[str, Any]] = []
    skipped: Counter[str] = Counter()
    sources = []
    notes: list[str] = []
    seen_configs: dict[tuple[str, str, str], Path] = {}
    disagreements = compared = 0
    positions: dict[str, int] = {}  # a named configuration's place among the named ones
    for (path, results, results_path, samples), (_, spec) in zip(parsed, jobs, strict=True):
        cfg_block = (results or {}).get("config") or {}
        margs = parse_model_args(cfg_block.get("model_args", ""))
        where = str(results_path or path)
        if spec is None:
            budget = budget_from_model_args(margs, f"{where}: config.model_args")
        else:
            frames = spec.frames
            if frames is None:
                frames = budget_from_model_args(margs, f"{where}: config.model_args").frames
            if frames > 0:
                positions.setdefault(spec.label, len(positions) + 1)
            # A named run sits at its frame count (16 frames is never "below" 8); named runs of
            # the same frame count (two selectors at 16) keep the order they were given in.
            order = (
                float(frames) if mixed else float(frames) + positions.get(spec.label, 0) / 1000.0
            )
            budget = Budget(
                config_id=label_config_id(spec.label, frames),
                label=spec.label,
                frames=frames,
                axis_order=order if frames > 0 else 0.0,
            )
        mname = str(names[path])
        task = task_name(path, results)
        # A file is one task at one configuration: a run of several tasks writes one file per
        # task, all at the same configuration, and they import together.
        key = (mname, task, budget.config_id)
        if key in seen_configs:
            raise ImportInputError(_same_configuration(path, seen_configs[key], task, budget.label))
        seen_configs[key] = path
        fr = sample_rows(path, samples, task=task, model=mname, budget=budget, benchmark=index)
        rows.extend(fr.rows)
        skipped.update(fr.skipped)
        disagreements += fr.disagreements
        compared += fr.compared
        reported = ((results or {}).get("results") or {}).get(task)
        note = score_note(
            path,
            task,
            reported,
            fr.rows,
            n_samples=n_samples_of(results, task),
            n_in_file=len(samples),
            disagreements=(fr.disagreements, fr.compared),
        )
        if note:
            notes.append(note)
        task_cfg = ((results or {}).get("configs") or {}).get(task, {})
        sources.append(
            source_record(
                path,
                rows=len(fr.rows),
                task=task,
                config_label=budget.label,
                config_id=budget.config_id,
                results_json=source_record(results_path) if results_path else None,
                model_args=cfg_block.get("model_args"),
                generation_kwargs=task_cfg.get("generation_kwargs"),
                gen_kwargs=cfg_block.get("gen_kwargs"),
                seeds={
                    k: cfg_block[k]
                    for k in ("random_seed", "numpy_seed", "torch_seed", "fewshot_seed")
                    if k in cfg_block
                },
                lmms_eval_git_hash=(results or {}).get("git_hash"),
                lmms_eval_version=(results or {}).get("lmms_eval_version"),
                resolved_cli_args=cfg_block.get("resolved_cli_args"),
                reported=((results or {}).get("results") or {}).get(task),
            )
        )
    by_hash: dict[str, list[str]] = {}
    for source in sources:
        by_hash.setdefault(str(source["sha256"]), []).append(
            f"{Path(str(source['path'])).name} ({source['config_label']})"
        )
    for same in by_hash.values():
        if len(same) > 1:
            notes.append(
                "warning: byte-identical sample files under different configurations: "
                + ", ".join(same)
                + " (the same run imported twice?)"
            )
    if compared:
        notes.append(
            f"itemscale's extractor (v{EXTRACTOR_VERSION}) and lmms-eval's parsed answer "
            f"disagree on {disagreements} of {compared} responses"
        )
    if index is not None:
        matched = sum(1 for r in rows if r["item_id"] in index.by_id)
        notes.append(f"benchmark: {matched} of {len(rows)} rows matched a benchmark item")
    return finish_parsed_import(
        importer="lmms-eval",
        tool="lmms-eval",
        rows=rows,
        extractor_version=EXTRACTOR_VERSION,
        sources=sources,
        jobs=jobs,
        model=model,
        benchmark=benchmark,
        configs=configs,
        skipped=skipped,
        notes=notes,
        run_dir=run_dir,
        dry_run=dry_run,
        absent=absent,
    )
