"""VLMEvalKit prediction files into the response table.

VLMEvalKit writes `{model}_{dataset}.xlsx` (or .tsv/.json) with the dataset's columns (index,
video, question, candidates, answer, task_type, ...) plus `prediction`, and its evaluation adds
`{model}_{dataset}_score.xlsx` with `score` (1, 0, or -1 when it could not score). The budget is
part of the dataset name (`Video-MME_8frame`, `MVBench_MP4_1fps`).

As with lmms-eval, the answer is re-extracted from `prediction` with itemscale's extractor
(VLMEvalKit falls back to an LLM judge or to random choices on some datasets); how often that
disagrees with VLMEvalKit's own `score` is reported.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pandas as pd

from ...core.files import (
    ZipInputError,
    check_sheet_size,
    check_unzipped_size,
    loads_json,
    read_input_bytes,
)
from ...core.responses import (
    EXTRACTOR_VERSION,
    NOANSWER,
    ResponseRow,
    Status,
    TaskKind,
    extract_choice,
)
from ..items import Item, strip_option_prefix
from ._absent import DEFAULT_ABSENT
from ._common import (
    ImportInputError,
    JsonObject,
    SourceRecord,
    attributes_json,
    missing_value,
    not_utf8_message,
    source_record,
)
from ._config_ids import ConfigColumns, config_columns
from ._finish import ImportContext, finish_parsed_import
from ._inputs import input_file
from ._jobs import (
    BenchmarkIndex,
    ConfigSpec,
    config_jobs,
    gold_letter,
    load_benchmark_index,
    parse_config_arg,
)
from ._run import file_import_options, importer
from ._summary import ImportSummary

#: Dataset names VLMEvalKit uses for video benchmarks (the prefix of the dataset part of a
#: file name); the model name is what comes before.
KNOWN_DATASETS: Final[tuple[str, ...]] = (
    "Video-MME",
    "Video_MME",
    "VideoMME",
    "MVBench_MP4",
    "MVBench",
    "MLVU_MCQ",
    "MLVU_OpenEnded",
    "MLVU",
    "LongVideoBench",
    "TempCompass",
    "EgoSchema",
    "MMBench-Video",
    "Video-Holmes",
    "VideoMMMU",
    "WorldSense",
    "TLB",
    "CGBench",
    "VDC",
    "MovieChat1k",
    "Vinoground",
    "QBench_Video",
    "MEGABench",
    "MotionBench",
    "VSIBench",
)
FORMATS: Final[tuple[str, ...]] = (".xlsx", ".tsv", ".json")
#: VLMEvalKit's marker for a failed API call.
FAIL_MSG: Final[str] = "Failed to obtain answer via API."
ATTRIBUTE_COLUMNS: Final[dict[str, str]] = {
    "duration": "duration",
    "domain": "domain",
    "sub_category": "sub_category",
    "task_type": "task_type",
    "category": "category",
    "question_category": "question_category",
}
#: One record of a prediction file: its line (TSV) or row (Excel) or position (JSON), and its
#: values by column, as the file holds them (untrusted: each is narrowed where it is read).
PredictionRecord = tuple[int, JsonObject]
_SUFFIXES = re.compile(
    r"(_(score|rating|acc|tmp|supp|exact_matching|gpt-4o(-mini)?|chatgpt-\d+|gpt-4-\d+|"
    r"auxmatch|openai_result|result))+$",
    re.IGNORECASE,
)
_FRAMES = re.compile(r"_(\d+)frames?(?=_|$)", re.IGNORECASE)
_FPS = re.compile(r"_(\d+(?:\.\d+)?)fps(?=_|$)", re.IGNORECASE)


@dataclass(frozen=True)
class NameParts:
    model: str | None
    dataset: str
    frames: int | None
    fps: float | None


def split_file_name(path: Path) -> NameParts:
    """`Qwen2-VL-7B_Video-MME_8frame_score.xlsx` -> model, dataset, 8 frames."""
    stem = _SUFFIXES.sub("", path.stem)
    model: str | None = None
    dataset = stem
    for known in KNOWN_DATASETS:
        pos = stem.find(f"_{known}")
        if pos > 0:
            model, dataset = stem[:pos], stem[pos + 1 :]
            break
    frames_m = _FRAMES.search(dataset)
    fps_m = _FPS.search(dataset)
    return NameParts(
        model=model,
        dataset=dataset,
        frames=int(frames_m[1]) if frames_m else None,
        fps=float(fps_m[1]) if fps_m else None,
    )


def read_prediction_file(path: Path) -> tuple[list[PredictionRecord], str]:
    """(records with their 1-based line or row, unit word for errors)."""
    input_file(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise ImportInputError(
            f"{path}: unknown VLMEvalKit file format {suffix!r}; expected {', '.join(FORMATS)}"
        )
    try:
        if suffix == ".xlsx":
            try:
                check_unzipped_size(path)  # before openpyxl expands any of it
                check_sheet_size(path)  # and before it parses more rows than a table has
            except ZipInputError as exc:
                raise ImportInputError(str(exc)) from None
            frame = pd.read_excel(path, engine="openpyxl", dtype=object)
        elif suffix == ".tsv":
            return read_tsv(path), "line"
        else:
            data = loads_json(read_input_bytes(path).decode("utf-8"))
            if isinstance(data, dict):
                data = (
                    list(data.values())
                    if all(isinstance(v, dict) for v in data.values())
                    else [data]
                )
            if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
                raise ImportInputError(f"{path}: expected a JSON list of records")
            return [(i, r) for i, r in enumerate(data, start=1)], "record"
    except ImportInputError:
        raise
    except json.JSONDecodeError as exc:
        raise ImportInputError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    except Exception as exc:
        raise ImportInputError(f"{path}: cannot read as {suffix[1:]} ({exc})") from exc
    records = frame.to_dict(orient="records")
    # the header is row/line 1 in both Excel and TSV
    return [(i + 2, {str(k): v for k, v in r.items()}) for i, r in enumerate(records)], (
        "row" if suffix == ".xlsx" else "line"
    )


def read_tsv(path: Path) -> list[PredictionRecord]:
    """A VLMEvalKit TSV (pandas' `to_csv(sep="\\t")`: quoted where a field holds a tab, a
    quote or a newline) as (first line of the record, record) pairs. A record with fewer or
    more fields than the header is refused with its line: the usual cause is a file cut off
    mid-write, whose last record pandas would fill with empty fields and import."""
    data = read_input_bytes(input_file(path))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ImportInputError(f"{path}:{line}: {not_utf8_message(exc)}") from None
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t", strict=True)
    records: list[PredictionRecord] = []
    try:
        header = next(reader, None)
        if header is None:
            raise ImportInputError(f"{path}: empty file (no header line)")
        start = reader.line_num + 1
        for row in reader:
            if row and len(row) != len(header):
                raise ImportInputError(
                    f"{path}:{start}: {len(row)} fields where the header has {len(header)}; "
                    "is the file truncated (or a field's tab unquoted)?"
                )
            if row:
                records.append((start, dict(zip(header, row, strict=True))))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise ImportInputError(
            f"{path}:{start}: not a readable TSV record ({exc}); is the file truncated?"
        ) from None
    return records


def parse_candidates(value: Any, where: str) -> tuple[str, ...]:
    if missing_value(value):
        return ()
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise ImportInputError(f"{where}: column 'candidates' is not a list") from None
    if not isinstance(value, (list, tuple)):
        raise ImportInputError(f"{where}: column 'candidates' is not a list")
    return tuple(strip_option_prefix(str(v)) for v in value)


def _file_config(
    parts: NameParts, spec: ConfigSpec | None, position: int, where: str
) -> ConfigColumns:
    """The file's budget: the one its dataset name spells, or its `--config` label."""
    from ..protocol import Configuration, SamplingPolicy

    if spec is not None:
        frames = spec.frames if spec.frames is not None else parts.frames
        if frames is None:
            raise ImportInputError(
                f"{where}: no frame count in the dataset name {parts.dataset!r}; "
                f"give --config {spec.label}:FRAMES={spec.path}"
            )
        return config_columns(Configuration(frames=frames), name=spec.label, order=position)
    if parts.frames is None:
        hint = (
            f" (it says {parts.fps:g} fps, which VLMEvalKit samples without a frame cap)"
            if parts.fps
            else ""
        )
        raise ImportInputError(
            f"{where}: no frame count in the dataset name {parts.dataset!r}{hint}; give "
            "--config LABEL:FRAMES=PATH"
        )
    sampling = (
        SamplingPolicy(name="fps", fps=parts.fps) if parts.fps else SamplingPolicy(name="interior")
    )
    return config_columns(Configuration(frames=parts.frames, sampling=sampling))


def _norm(text: Any) -> str:
    return " ".join(str(text).lower().split())


def file_rows(
    path: Path,
    records: list[PredictionRecord],
    unit: str,
    *,
    model: str,
    dataset: str,
    budget: ConfigColumns,
    benchmark: BenchmarkIndex | None,
    skipped: Counter[str],
) -> tuple[list[ResponseRow], int, int]:
    columns = set().union(*(r.keys() for _, r in records)) if records else set()
    for col in ("prediction", "answer"):
        if col not in columns:
            raise ImportInputError(
                f"{path}: missing column '{col}' (is this a VLMEvalKit prediction file?)"
            )
    ids = [r.get("question_id") for _, r in records]
    use_qid = all(not missing_value(v) for v in ids) and len({str(v) for v in ids}) == len(ids)
    base = _FPS.sub("", _FRAMES.sub("", dataset))
    by_video_question: dict[tuple[str, str], Item] = {}
    if benchmark is not None:
        for known in benchmark.by_id.values():
            by_video_question[(known.video_id, _norm(known.question))] = known
    rows: list[ResponseRow] = []
    seen: dict[str, int] = {}
    compared = disagreements = 0
    for line, rec in records:
        where = f"{path}: {unit} {line}" if unit == "row" else f"{path}:{line}"
        if not use_qid and missing_value(rec.get("index")):
            raise ImportInputError(f"{where}: column 'index': empty value")
        item_id = str(rec["question_id"]) if use_qid else f"{base}:{rec['index']}"
        video_raw = rec.get("video")
        video = Path(str(video_raw)).stem if not missing_value(video_raw) else None
        item: Item | None = None
        if benchmark is not None:
            item = benchmark.by_id.get(item_id) if use_qid else None
            if item is None and video is not None and not missing_value(rec.get("question")):
                item = by_video_question.get((video, _norm(rec["question"])))
            if item is None and not missing_value(rec.get("question")):
                item = benchmark.find("", str(rec["question"]))
        if item is not None:
            item_id, video = item.item_id, item.video_id
        if item_id in seen:
            raise ImportInputError(
                f"{where}: item {item_id!r} appears twice (first at {seen[item_id]})"
            )
        seen[item_id] = line
        options = (
            item.options if item is not None else parse_candidates(rec.get("candidates"), where)
        )
        gold_raw = rec.get("answer")
        gold = item.answer if item is not None and item.answer else None
        if gold is None and not missing_value(gold_raw):
            gold = gold_letter(gold_raw, options)
        attrs: dict[str, object] = {"dataset": dataset}
        for col, name in ATTRIBUTE_COLUMNS.items():
            if not missing_value(rec.get(col)):
                attrs.setdefault(name, rec[col])
        if item is not None:
            attrs.update(item.attributes)
        prediction = rec.get("prediction")
        row: ResponseRow = {
            "model": model,
            "item_id": item_id,
            "video_id": video or item_id,
            "task_kind": TaskKind.MCQA.value,
            "series": "default",
            "config_id": budget["config_id"],
            "config_label": budget["config_label"],
            "axis_order": budget["axis_order"],
            "frames": budget["frames"],
            "sampling": budget["sampling"],
            "repeat": 0,
            "raw_text": None if missing_value(prediction) else str(prediction),
            "reference": gold,
            "attributes": attributes_json(attrs),
            "source": f"vlmevalkit:{path.name}:{line}",
        }
        if gold is None:
            skipped["answer is not an option letter or option text"] += 1
            continue
        if missing_value(prediction) or FAIL_MSG in str(prediction):
            row.update(
                ResponseRow(status=Status.MODEL_ERROR.value, error="no prediction in the file")
            )
            rows.append(row)
            continue
        answer = extract_choice(str(prediction), options)
        correct = float(answer == gold)
        score: Any = rec.get("score")
        if not missing_value(score):
            try:
                vlm = float(score)
            except (TypeError, ValueError):
                raise ImportInputError(
                    f"{where}: column 'score': {score!r} is not a number"
                ) from None
            compared += 1
            if vlm != correct:
                disagreements += 1
        row.update(
            ResponseRow(
                status=Status.NOANSWER.value if answer == NOANSWER else Status.OK.value,
                answer=answer,
                correct=correct,
            )
        )
        rows.append(row)
    return rows, compared, disagreements


@importer(
    "vlmevalkit",
    order=30,
    help="VLMEvalKit prediction files ({model}_{dataset}.xlsx/.tsv/.json)",
    description="Import VLMEvalKit predictions; the budget is read from the dataset name "
    "(Video-MME_8frame, MVBench_1fps) unless given with --config LABEL[:FRAMES]=PATH.",
    options=file_import_options(
        files_help="prediction files ({model}_{dataset}.xlsx/.tsv/.json)",
        config_help="label (and frame count) of the configuration PATH was run with, "
        "where the dataset name does not say it",
        model_help="model name to record (default: from the file name)",
        benchmark_help="benchmark question file (Parquet or items JSONL) for video ids, "
        "options and categories",
    ),
)
def run_vlmevalkit_import(
    *,
    files: Sequence[str],
    configs: Sequence[str] = (),
    model: str | None = None,
    benchmark: str | os.PathLike[str] | None = None,
    run_dir: str | os.PathLike[str],
    dry_run: bool = False,
    absent: str = DEFAULT_ABSENT,
    video_from_id: str | None = None,
) -> ImportSummary:
    specs = [parse_config_arg(c) for c in configs]
    jobs = config_jobs(specs, files, inputs="prediction files")
    for path, _ in jobs:
        input_file(path)
    index = load_benchmark_index(benchmark)
    names = {path: split_file_name(path) for path, _ in jobs}
    found = sorted({n.model for n in names.values() if n.model})
    if not model:
        unknown = [p for p, n in names.items() if n.model is None]
        if unknown:
            raise ImportInputError(
                f"{unknown[0]}: cannot tell the model from the file name (expected "
                "{model}_{dataset}.xlsx with a known dataset); give --model"
            )
        if len(found) > 1:
            raise ImportInputError(
                f"files of different models ({', '.join(found)}); import them separately or "
                "give --model"
            )
    rows: list[ResponseRow] = []
    skipped: Counter[str] = Counter()
    sources: list[SourceRecord] = []
    seen_configs: dict[str, Path] = {}
    compared = disagreements = 0
    position = 0
    for path, spec in jobs:
        parts = names[path]
        records, unit = read_prediction_file(path)
        if spec is not None and (spec.frames or parts.frames or 0) > 0:
            position += 1
        budget = _file_config(parts, spec, position, str(path))
        config_id = budget["config_id"]
        if config_id in seen_configs:
            raise ImportInputError(
                f"{path}: same configuration ({budget['config_label']}) as "
                f"{seen_configs[config_id]}; name each file's configuration with --config "
                "LABEL=PATH"
            )
        seen_configs[config_id] = path
        mname = model or str(parts.model)
        file_rows_, c, d = file_rows(
            path,
            records,
            unit,
            model=mname,
            dataset=parts.dataset,
            budget=budget,
            benchmark=index,
            skipped=skipped,
        )
        compared += c
        disagreements += d
        rows.extend(file_rows_)
        sources.append(
            source_record(
                path,
                rows=len(file_rows_),
                dataset=parts.dataset,
                config_label=budget["config_label"],
                config_id=config_id,
            )
        )
    notes = []
    if compared:
        notes.append(
            f"itemscale's extractor (v{EXTRACTOR_VERSION}) and VLMEvalKit's score disagree on "
            f"{disagreements} of {compared} rows"
        )
    context = ImportContext(
        importer="vlmevalkit",
        tool="VLMEvalKit",
        extractor_version=EXTRACTOR_VERSION,
        run_dir=run_dir,
        configs=tuple(configs),
        model=model,
        benchmark=benchmark,
        dry_run=dry_run,
        absent=absent,
        video_from_id=video_from_id,
    )
    return finish_parsed_import(
        context, rows=rows, sources=sources, jobs=jobs, skipped=skipped, notes=notes
    )
