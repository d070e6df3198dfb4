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
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from ...core.responses import (
    EXTRACTOR_VERSION,
    NOANSWER,
    ResponseRow,
    Status,
    TaskKind,
    extract_choice,
    score_open_answer,
)
from ..items import Item
from ._absent import DEFAULT_ABSENT
from ._common import (
    ImportInputError,
    JsonObject,
    PromptRecord,
    SourceRecord,
    json_object,
    source_record,
)
from ._config_ids import DEFAULT_SERIES, ConfigColumns, config_columns
from ._finish import ImportContext, finish_parsed_import
from ._jobs import (
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
    read_logs,
    same_configuration,
    spec_files,
)
from ._lmms_eval_items import (
    ID_KEYS,
    attributes_and_video,
    first_value,
    item_names,
    options_from_prompt,
    question_texts,
    sample_item,
)
from ._lmms_eval_notes import identical_files, one_budget_note, series_option, stored_sources
from ._lmms_eval_repeats import repeat_rows, repeat_texts, repeats_asked, repeats_note
from ._lmms_eval_results import (
    TaskName,
    budget_from_model_args,
    model_name,
    n_samples_of,
    package_versions,
    parse_model_args,
    resolve_task,
    score_note,
    task_version,
)
from ._reruns import mark_reruns
from ._run import SERIES_OPTION, ImportOption, file_import_options, importer
from ._summary import ImportSummary

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


@dataclass
class FileResult:
    rows: list[ResponseRow]
    skipped: Counter[str] = field(default_factory=Counter)
    disagreements: int = 0
    compared: int = 0
    #: samples by the number of repeats imported from them
    repeats_held: Counter[int] = field(default_factory=Counter)


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
    lmms_pred = first_value(payload, PRED_KEYS)
    scored_choice = text is None and is_loglikelihood(sample.get("filtered_resps"))
    if text is None and not (scored_choice and lmms_pred is not None):
        result.skipped["no response in the log line"] += 1
        return None
    gold_raw = first_value(payload, GOLD_KEYS)
    if gold_raw is None:
        gold_raw = sample.get("target")
    gold = item.answer if item is not None and item.answer else gold_letter(gold_raw, options)
    attributes, video = attributes_and_video(task, payload, item, item_id, id_key)
    row: ResponseRow = {
        "model": model,
        "item_id": item_id,
        "video_id": video,
        "series": budget["series"],
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
    items: dict[str, Item] | None = None,
) -> FileResult:
    """One samples file's rows, each sample under its benchmark item's id where the benchmark
    knows it, so that runs logged with different ids still line up item by item. `items`
    (the import's items by id) gains the item each sample asked that it lacks."""
    result = FileResult(rows=[])
    payloads = [payload_of(s) for _, s in samples]
    questions: list[str | None] | None = None  # read once a sample asks a new item
    id_key, names = item_names(samples, payloads)
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
        if items is not None and row["item_id"] not in items:
            questions = question_texts(samples) if questions is None else questions
            asked = sample_item(row, item, questions[pos], sample.get("input"))
            items.update({row["item_id"]: asked} if asked is not None else {})
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


def _file_config(
    log: LogFile, mixed: bool, positions: dict[str, int], series: str = DEFAULT_SERIES
) -> ConfigColumns:
    """The file's configuration in `series`: the one its results.json's `model_args` spells,
    or its `--config` label at its frame count. `positions` holds each named configuration's
    place among the named ones (a new label is added), which orders named runs of one frame
    count."""
    cfg_block = json_object((log.results or {}).get("config"))
    margs = parse_model_args(cfg_block.get("model_args", ""))
    where = f"{log.results_path or log.path}: config.model_args"
    spec = log.spec
    if spec is None:
        return config_columns(budget_from_model_args(margs, where), series=series)
    frames = spec.frames
    if frames is None:
        frames = budget_from_model_args(margs, where).frames
    if frames > 0:
        positions.setdefault(spec.label, len(positions) + 1)
    # A named run sits at its frame count (16 frames is never "below" 8); named runs of
    # the same frame count (two selectors at 16) keep the order they were given in.
    order = float(frames) if mixed else float(frames) + positions.get(spec.label, 0) / 1000.0
    from ..protocol import Configuration

    return config_columns(Configuration(frames=frames), name=spec.label, order=order, series=series)


def _source(log: LogFile, named: TaskName, budget: ConfigColumns, rows: int) -> SourceRecord:
    """The file's provenance with what results.json says of the run (model and generation
    arguments, seeds, lmms-eval's version, its own score), so the import can be reproduced."""
    task = named.name
    results = log.results or {}
    cfg_block = json_object(results.get("config"))
    task_cfg = json_object(json_object(results.get("configs")).get(task))
    return source_record(
        log.path,
        rows=rows,
        task=task,
        task_from=named.origin,
        config_label=budget["config_label"],
        config_id=budget["config_id"],
        series=budget["series"],
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


@importer(
    "lmms-eval",
    order=20,
    help="lmms-eval --log_samples JSONL files (with the results.json beside each)",
    description="Import lmms-eval sample logs. The configuration of each file comes from "
    "its results.json (config.model_args), unless given with --config LABEL[:FRAMES]=PATH "
    "(repeatable, in axis order).",
    options=(
        *file_import_options(
            files_help="samples JSONL files or directories",
            config_help="label (and frame count) of the configuration PATH was run with",
            model_help="model name to record (required when files disagree)",
            benchmark_help="benchmark question file (Parquet or items JSONL) for video "
            "ids, options and categories",
        ),
        SERIES_OPTION,
        ImportOption(
            ("--rerun-of",),
            metavar="LABEL",
            help="the other --config files are a second execution of configuration "
            "LABEL (of this import or already in the run): stored as its reruns "
            "(repeats from 1000, marked rerun_of), which no measure counts and which "
            "measure the rerun floor same-input verdicts are graded against",
        ),
    ),
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
    video_from_id: str | None = None,
    series: str | None = None,
    rerun_of: str | None = None,
) -> ImportSummary:
    """Parse every file, check them against each other, then merge into the run. `series`
    (`--series NAME`) puts every file of the call in that series, one call per selector. With
    `rerun_of` (a configuration label of this import or of the run), the files of the other
    `--config` labels are a second execution of it, stored as its reruns (`_reruns`)."""
    jobs, mixed = _jobs(files, configs)
    series_name = series_option(series)
    index = load_benchmark_index(benchmark)
    logs = read_logs(jobs, model)
    names = _model_names(logs, model)
    rows: list[ResponseRow] = []
    items: dict[str, Item] = {}
    skipped: Counter[str] = Counter()
    sources: list[SourceRecord] = []
    notes: list[str] = []
    seen_configs: dict[tuple[str, str, str], Path] = {}
    disagreements = compared = 0
    positions: dict[str, int] = {}  # a named configuration's place among the named ones
    for log in logs:
        budget = _file_config(log, mixed, positions, series_name)
        mname = names[log.path]
        every_key = set.intersection(*(set(sample) for _, sample in log.samples))
        named = resolve_task(log.path, log.results, every_key)
        task = named.name
        notes.extend([named.note] if named.note else [])
        # A file is one task at one configuration: a run of several tasks writes one file per
        # task, all at the same configuration, and they import together.
        key = (mname, task, budget["config_id"])
        if key in seen_configs:
            raise ImportInputError(
                same_configuration(log.path, seen_configs[key], task, budget["config_label"])
            )
        seen_configs[key] = log.path
        fr = sample_rows(
            log.path,
            log.samples,
            task=task,
            model=mname,
            budget=budget,
            benchmark=index,
            items=items,
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
        sources.append(_source(log, named, budget, len(fr.rows)))
    notes.extend(identical_files(sources, stored_sources(run_dir)))
    notes.extend(one_budget_note(rows))
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
        series=series,
        rerun_of=rerun_of,
    )
    return finish_parsed_import(
        context,
        rows=rows,
        sources=sources,
        jobs=jobs,
        skipped=skipped,
        notes=notes,
        items=list(items.values()),
    )
