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
from typing import Final

from ..items import Item
from ..responses import (
    EXTRACTOR_VERSION,
    NOANSWER,
    ResponseRow,
    Status,
    TaskKind,
    extract_choice,
    score_open_answer,
)
from ._absent import DEFAULT_ABSENT
from ._common import (
    ConfigColumns,
    ImportInputError,
    JsonObject,
    PromptRecord,
    SourceRecord,
    attributes_json,
    config_columns,
    json_object,
    source_record,
)
from ._finish import ImportContext, finish_parsed_import
from ._jobs import (
    OPTION_LINE,
    BenchmarkIndex,
    ConfigSpec,
    config_jobs,
    gold_letter,
    load_benchmark_index,
    parse_config_arg,
)
from ._lmms_eval_files import (
    LogFile,
    Sample,
    expand_paths,
    identical_files,
    read_logs,
    same_configuration,
    spec_files,
)
from ._lmms_eval_repeats import repeat_rows, repeat_texts, repeats_asked, repeats_note
from ._lmms_eval_results import (
    budget_from_model_args,
    model_name,
    n_samples_of,
    package_versions,
    parse_model_args,
    score_note,
    task_name,
    task_version,
)
from ._reruns import mark_reruns
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


def response_text(sample: JsonObject) -> str | None:
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


def is_loglikelihood(value: object) -> bool:
    """`[-1.2, False]` or `[[-1.2, False], ...]`: a scored option, not generated text."""
    if isinstance(value, list) and len(value) == 2 and isinstance(value[1], bool):
        return isinstance(value[0], (int, float)) and not isinstance(value[0], bool)
    return isinstance(value, list) and bool(value) and all(is_loglikelihood(v) for v in value)


def payload_of(sample: JsonObject) -> JsonObject:
    for key, value in sample.items():
        if key in NOT_PAYLOAD or not isinstance(value, dict):
            continue
        if any(k in value for k in (*GOLD_KEYS, *PRED_KEYS, *ID_KEYS)):
            return value
    return {}


def options_from_prompt(prompt: object) -> tuple[str, ...]:
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


def _first(mapping: JsonObject, keys: Sequence[str]) -> object:
    for key in keys:
        value = mapping.get(key)
        if value is not None and str(value).strip() != "":
            return value
    return None


@dataclass
class FileResult:
    rows: list[ResponseRow]
    skipped: Counter[str] = field(default_factory=Counter)
    disagreements: int = 0
    compared: int = 0
    #: samples by the number of repeats imported from them
    repeats_held: Counter[int] = field(default_factory=Counter)


def _present(value: object) -> bool:
    return value is not None and not isinstance(value, dict | list) and bool(str(value).strip())


def _usable_ids(ids: Sequence[object]) -> bool:
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


def _item_names(
    samples: list[Sample], payloads: list[JsonObject]
) -> tuple[str | None, list[str | None] | None]:
    """How the log names its items: (the payload key, None for `submission`; each sample's
    name, None where it lacks one), or (None, None) when nothing does. One way for the whole
    log, since a sample named another way would match nothing in the other runs."""
    for key in ID_KEYS:
        ids = [p.get(key) for p in payloads]
        if _usable_ids(ids):
            return key, [str(v).strip() if _present(v) else None for v in ids]
    # EgoSchema-style logs carry the question uid only as the key of `submission`.
    submitted: list[object] = [
        next(iter(sub)) if isinstance(sub, dict) and len(sub) == 1 else None
        for sub in (s.get("submission") for _, s in samples)
    ]
    if _usable_ids(submitted):
        return None, [str(v) if _present(v) else None for v in submitted]
    return None, None


def _choice_columns(
    text: str | None,
    lmms_pred: object,
    gold: str,
    options: tuple[str, ...],
    result: FileResult,
) -> ResponseRow:
    """A multiple-choice sample's result columns. The answer is re-extracted from the text so
    that no task's own parser decides it (lmms-eval's pick is taken only for a log-likelihood
    choice, which has no text); where both exist, `result` counts how often the two differ."""
    if text is None:
        # a log-likelihood choice: the option the harness scored best, no text to parse
        answer = gold_letter(lmms_pred, options) or NOANSWER
    else:
        answer = extract_choice(text, options)
    if lmms_pred is not None and text is not None:
        result.compared += 1
        ours = None if answer == NOANSWER else answer
        if str(lmms_pred).strip().upper() != (ours or ""):
            result.disagreements += 1
    return {
        "task_kind": TaskKind.MCQA.value,
        "status": Status.NOANSWER.value if answer == NOANSWER else Status.OK.value,
        "answer": answer,
        "correct": float(answer == gold),
        "reference": gold,
    }


def _attributes_and_video(
    task: str, payload: JsonObject, item: Item | None, item_id: str, id_key: str | None
) -> tuple[str | None, str]:
    """(attributes JSON, video id): the benchmark item's, which know the item, over the
    payload's, which each task spells its own way; without a video named anywhere, the one the
    task's item ids encode, else the item itself (a cluster of its own in the bootstrap)."""
    attrs: dict[str, object] = {"task": task}
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
    return attributes_json(attrs), video


def _sample_row(
    path: Path,
    line: int,
    sample: JsonObject,
    payload: JsonObject,
    *,
    item_id: str,
    item: Item | None,
    id_key: str | None,
    task: str,
    model: str,
    budget: ConfigColumns,
    result: FileResult,
) -> ResponseRow | None:
    """The sample's response row, or None (counted in `result.skipped` by reason) when it has
    no response or no gold answer: a row must carry a result the measures can read."""
    options: tuple[str, ...] = item.options if item is not None else ()
    if not options:
        options = options_from_prompt(sample.get("input"))
    text = response_text(sample)
    lmms_pred = _first(payload, PRED_KEYS)
    scored_choice = text is None and is_loglikelihood(sample.get("filtered_resps"))
    if text is None and not (scored_choice and lmms_pred is not None):
        result.skipped["no response in the log line"] += 1
        return None
    gold_raw = _first(payload, GOLD_KEYS)
    if gold_raw is None:
        gold_raw = sample.get("target")
    gold = item.answer if item is not None and item.answer else gold_letter(gold_raw, options)
    attributes, video = _attributes_and_video(task, payload, item, item_id, id_key)
    row: ResponseRow = {
        "model": model,
        "item_id": item_id,
        "video_id": video,
        "series": "default",
        "config_id": budget["config_id"],
        "config_label": budget["config_label"],
        "axis_order": budget["axis_order"],
        "frames": budget["frames"],
        "pixels": budget["pixels"],
        "sampling": budget["sampling"],
        "repeat": 0,
        "raw_text": text,
        "attributes": attributes,
        "source": f"lmms-eval:{path.name}:{line}",
    }
    if gold is not None:
        row.update(_choice_columns(text, lmms_pred, gold, options, result))
    elif text is not None and gold_raw is not None and str(gold_raw).strip():
        reference = str(gold_raw)
        row["task_kind"] = TaskKind.OPEN_QA.value
        row["status"] = Status.OK.value
        row.update(score_open_answer(text, [reference]).row_columns())
        row["reference"] = reference
    else:
        result.skipped["no gold answer in the log line"] += 1
        return None
    return row


def sample_rows(
    path: Path,
    samples: list[Sample],
    *,
    task: str,
    model: str,
    budget: ConfigColumns,
    benchmark: BenchmarkIndex | None,
) -> FileResult:
    """One samples file's rows, each sample under its benchmark item's id where the benchmark
    knows it, so that runs logged with different ids still line up item by item."""
    result = FileResult(rows=[])
    payloads = [payload_of(s) for _, s in samples]
    id_key, names = _item_names(samples, payloads)
    doc_lines: dict[object, int] = {}
    for pos, ((line, sample), payload) in enumerate(zip(samples, payloads, strict=True)):
        doc_id = sample["doc_id"]
        if doc_id in doc_lines:
            raise ImportInputError(
                f"{path}:{line}: doc_id {doc_id!r} appears twice (first on line "
                f"{doc_lines[doc_id]})"
            )
        doc_lines[doc_id] = line
        name = names[pos] if names is not None else None
        item_id = name if name is not None else f"{task}:{doc_id}"
        position = doc_id if isinstance(doc_id, int) else None
        question = payload.get("question_id") if id_key != "question_id" else None
        item = (
            benchmark.find(item_id, question or sample.get("input"), position)
            if benchmark
            else None
        )
        if item is not None:
            item_id = item.item_id
        elif names is not None and name is None:
            # The other samples are named by their ids; a doc_id name would match nothing
            # in other runs, so the sample is left out and counted, not renamed.
            result.skipped[f"no item id (empty '{id_key or 'submission'}')"] += 1
            continue
        row = _sample_row(
            path,
            line,
            sample,
            payload,
            item_id=item_id,
            item=item,
            id_key=id_key,
            task=task,
            model=model,
            budget=budget,
            result=result,
        )
        if row is None:
            continue
        texts = repeat_texts(sample)
        result.rows.append(row)
        if len(texts) > 1 and row["raw_text"] is not None:
            options = (item.options if item else ()) or options_from_prompt(sample.get("input"))
            result.rows.extend(repeat_rows(row, texts, _choice_columns, options, result))
        result.repeats_held[max(len(texts), 1)] += 1
    return result


def _jobs(
    files: Sequence[str], configs: Sequence[str]
) -> tuple[list[tuple[Path, ConfigSpec | None]], bool]:
    """(each samples file with its `--config`, None when given plainly; whether plain files are
    among named ones): a label given twice would name two configurations one way."""
    given = [parse_config_arg(c) for c in configs]
    labels = Counter(s.label for s in given)
    dup = [label for label, n in labels.items() if n > 1]
    if dup:
        raise ImportInputError(f"--config label {dup[0]!r} is given twice")
    specs = [file_spec for spec in given for file_spec in spec_files(spec)]
    jobs = config_jobs(specs, expand_paths(files), inputs="samples JSONL files", allow_mixed=True)
    return jobs, bool(specs) and any(spec is None for _, spec in jobs)


def _model_names(logs: list[LogFile], model: str | None) -> dict[Path, str]:
    """Each file's model: `--model`, else its results.json's. One import is one model, so files
    of several (or of an unknown one) are refused rather than merged under one name."""
    names = {
        log.path: (model or (model_name(log.results) if log.results else None)) for log in logs
    }
    distinct = sorted({n for n in names.values() if n})
    if not model and len(distinct) > 1:
        listing = "; ".join(f"{p.name}: {n}" for p, n in names.items())
        raise ImportInputError(
            f"files of different models ({listing}); import them separately or give --model"
        )
    if any(n is None for n in names.values()):
        missing = next(p for p, n in names.items() if n is None)
        raise ImportInputError(f"{missing}: cannot tell the model from results.json; give --model")
    return {p: str(n) for p, n in names.items()}


def _file_config(log: LogFile, mixed: bool, positions: dict[str, int]) -> ConfigColumns:
    """The file's configuration: the one its results.json's `model_args` spells, or its
    `--config` label at its frame count. `positions` holds each named configuration's place
    among the named ones (a new label is added), which orders named runs of one frame count."""
    cfg_block = json_object((log.results or {}).get("config"))
    margs = parse_model_args(cfg_block.get("model_args", ""))
    where = f"{log.results_path or log.path}: config.model_args"
    spec = log.spec
    if spec is None:
        return config_columns(budget_from_model_args(margs, where))
    frames = spec.frames
    if frames is None:
        frames = budget_from_model_args(margs, where).frames
    if frames > 0:
        positions.setdefault(spec.label, len(positions) + 1)
    # A named run sits at its frame count (16 frames is never "below" 8); named runs of
    # the same frame count (two selectors at 16) keep the order they were given in.
    order = float(frames) if mixed else float(frames) + positions.get(spec.label, 0) / 1000.0
    from ..protocol import Configuration

    return config_columns(Configuration(frames=frames), name=spec.label, order=order)


def _source(log: LogFile, task: str, budget: ConfigColumns, rows: int) -> SourceRecord:
    """The file's provenance with what results.json says of the run (model and generation
    arguments, seeds, lmms-eval's version, its own score), so the import can be reproduced."""
    results = log.results or {}
    cfg_block = json_object(results.get("config"))
    task_cfg = json_object(json_object(results.get("configs")).get(task))
    return source_record(
        log.path,
        rows=rows,
        task=task,
        config_label=budget["config_label"],
        config_id=budget["config_id"],
        results_json=source_record(log.results_path) if log.results_path else None,
        model_args=cfg_block.get("model_args"),
        generation_kwargs=task_cfg.get("generation_kwargs"),
        gen_kwargs=cfg_block.get("gen_kwargs"),
        seeds={
            k: cfg_block[k]
            for k in ("random_seed", "numpy_seed", "torch_seed", "fewshot_seed")
            if k in cfg_block
        },
        lmms_eval_git_hash=results.get("git_hash"),
        lmms_eval_version=results.get("lmms_eval_version"),
        package_versions=package_versions(results),
        resolved_cli_args=cfg_block.get("resolved_cli_args"),
        reported=json_object(results.get("results")).get(task),
        model=cfg_block.get("model"),
        task_version=task_version(results, task_cfg, task),
        task_hash=json_object(results.get("task_hashes")).get(task),
        prompt=_prompt(log, cfg_block, task_cfg),
    )


def _prompt(log: LogFile, cfg_block: JsonObject, task_cfg: JsonObject) -> PromptRecord | None:
    """What the log says of the prompt, for `itemscale compare` to diff: the task's pre and post
    prompt for this model class (lmms-eval's `lmms_eval_specific_kwargs`, falling back to its
    `default`) and the first sample's full input as lmms-eval logged it."""
    kwargs = task_cfg.get("lmms_eval_specific_kwargs")
    chosen: JsonObject = {}
    if isinstance(kwargs, Mapping):
        picked = kwargs.get(str(cfg_block.get("model"))) or kwargs.get("default") or {}
        chosen = picked if isinstance(picked, Mapping) else {}
    first: JsonObject = log.samples[0][1] if log.samples else {}
    example = first.get("input")
    out: PromptRecord = {}
    pre, post = chosen.get("pre_prompt"), chosen.get("post_prompt")
    if isinstance(pre, str):
        out["pre_prompt"] = pre
    if isinstance(post, str):
        out["post_prompt"] = post
    if isinstance(example, str):
        out["example_input"] = example
        out["example_doc_id"] = first.get("doc_id")
    return out or None


def run_lmms_eval_import(
    *,
    files: Sequence[str],
    configs: Sequence[str] = (),
    model: str | None = None,
    benchmark: str | os.PathLike[str] | None = None,
    run_dir: str | os.PathLike[str],
    dry_run: bool = False,
    absent: str = DEFAULT_ABSENT,
    video_from_id: str | None = None,
    rerun_of: str | None = None,
) -> ImportSummary:
    """Parse every file, check them against each other, then merge into the run. With
    `rerun_of` (a configuration label of this import or of the run), the files of the other
    `--config` labels are a second execution of it, stored as its reruns (`_reruns`)."""
    jobs, mixed = _jobs(files, configs)
    index = load_benchmark_index(benchmark)
    logs = read_logs(jobs, model)
    names = _model_names(logs, model)
    rows: list[ResponseRow] = []
    skipped: Counter[str] = Counter()
    sources: list[SourceRecord] = []
    notes: list[str] = []
    seen_configs: dict[tuple[str, str, str], Path] = {}
    disagreements = compared = 0
    positions: dict[str, int] = {}  # a named configuration's place among the named ones
    for log in logs:
        budget = _file_config(log, mixed, positions)
        mname = names[log.path]
        task = task_name(log.path, log.results)
        # A file is one task at one configuration: a run of several tasks writes one file per
        # task, all at the same configuration, and they import together.
        key = (mname, task, budget["config_id"])
        if key in seen_configs:
            raise ImportInputError(
                same_configuration(log.path, seen_configs[key], task, budget["config_label"])
            )
        seen_configs[key] = log.path
        fr = sample_rows(
            log.path, log.samples, task=task, model=mname, budget=budget, benchmark=index
        )
        rows.extend(fr.rows)
        skipped.update(fr.skipped)
        disagreements += fr.disagreements
        compared += fr.compared
        note = score_note(
            log.path,
            task,
            json_object((log.results or {}).get("results")).get(task),
            fr.rows,
            n_samples=n_samples_of(log.results, task),
            n_in_file=len(log.samples),
            disagreements=(fr.disagreements, fr.compared),
        )
        if note:
            notes.append(note)
        notes.extend(repeats_note(log.path, repeats_asked(log.results, task), fr.repeats_held))
        sources.append(_source(log, task, budget, len(fr.rows)))
    notes.extend(identical_files(sources))
    if compared:
        notes.append(
            f"itemscale's extractor (v{EXTRACTOR_VERSION}) and lmms-eval's parsed answer "
            f"disagree on {disagreements} of {compared} responses"
        )
    if index is not None:
        matched = sum(1 for r in rows if r["item_id"] in index.by_id)
        notes.append(f"benchmark: {matched} of {len(rows)} rows matched a benchmark item")
    if rerun_of is not None:
        labels = [spec.label for _, spec in jobs if spec is not None]
        rows, rerun_notes = mark_reruns(rows, rerun_of, labels, run_dir)
        notes.extend(rerun_notes)
    context = ImportContext(
        importer="lmms-eval",
        tool="lmms-eval",
        extractor_version=EXTRACTOR_VERSION,
        run_dir=run_dir,
        configs=tuple(configs),
        model=model,
        benchmark=benchmark,
        dry_run=dry_run,
        absent=absent,
        video_from_id=video_from_id,
        rerun_of=rerun_of,
    )
    return finish_parsed_import(
        context, rows=rows, sources=sources, jobs=jobs, skipped=skipped, notes=notes
    )
