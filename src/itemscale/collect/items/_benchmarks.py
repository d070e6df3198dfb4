"""Loaders for the published question files of Video-MME, MLVU and LongVideoBench, and the
registry of every benchmark format (the generation benchmarks' JSON loaders are in `_generation`).

Each benchmark spells the same things differently; the loaders turn every row into the one
`Item` record, with attribute names shared where they mean the same thing (`duration` is the
benchmark's own duration group, `task_type` its question type) so `analyze --by duration` works
on any of them.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, SupportsFloat, cast

from ...core.items import OPTION_LETTERS, Item, read_items_jsonl
from ._fields import (
    BENCHMARK_LOADERS,
    BenchmarkFileError,
    benchmark,
    checked_item,
    text_of,
    video_path,
)
from ._generation import json_keys

_LETTER_PREFIX = re.compile(r"^\s*\(?([A-J])[.)]\s*")
_INLINE_OPTIONS = re.compile(r"\n\s*\(A\)")


#: A row of a benchmark's Parquet file by column: foreign values, narrowed where read.
ParquetRow = Mapping[str, object]


def _read_parquet_rows(path: Path, required: Sequence[str]) -> list[ParquetRow]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise BenchmarkFileError(f"{path}: not a readable Parquet file ({exc})") from exc
    missing = [c for c in required if c not in table.column_names]
    if missing:
        raise BenchmarkFileError(
            f"{path}: missing column(s) {', '.join(repr(m) for m in missing)} "
            f"(has {', '.join(table.column_names)})"
        )
    rows: list[ParquetRow] = table.to_pylist()
    return rows


def _seconds(value: object) -> float | None:
    """A `duration` column's seconds (None when empty): a number, or its text, in the file."""
    return None if value is None else float(cast("SupportsFloat | str", value))


def _as_list(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise BenchmarkFileError(f"{where}: options {value[:60]!r} are not a list") from None
        value = parsed
    if not isinstance(value, (list, tuple)):
        raise BenchmarkFileError(f"{where}: options are not a list ({type(value).__name__})")
    return [str(v) for v in value]


def strip_option_prefix(option: str) -> str:
    """`"A. Apples."` -> `"Apples."`: options are stored without their letters."""
    return _LETTER_PREFIX.sub("", option, count=1).strip()


@benchmark("videomme", order=10, title="Video-MME", columns=("videoID", "question_id", "options"))
def load_videomme(
    path: str | os.PathLike[str], *, video_dir: str | os.PathLike[str] | None = None
) -> list[Item]:
    """Video-MME: item id = `question_id` ("001-1"), video id = the YouTube `videoID` (the file
    stem of the released videos, and what lmms-eval and VLMEvalKit log)."""
    p = Path(path)
    rows = _read_parquet_rows(
        p, ["video_id", "videoID", "question_id", "duration", "question", "options", "answer"]
    )
    items = []
    for n, row in enumerate(rows, start=1):
        where = f"{p}: row {n} (question_id {row.get('question_id')!r})"
        options = [strip_option_prefix(o) for o in _as_list(row["options"], where)]
        attrs = {
            "duration": text_of(row.get("duration")),
            "domain": text_of(row.get("domain")),
            "sub_category": text_of(row.get("sub_category")),
            "task_type": text_of(row.get("task_type")),
            "video_number": text_of(row.get("video_id")),
        }
        video = text_of(row["videoID"])
        items.append(
            checked_item(
                where,
                item_id=text_of(row["question_id"]),
                video_id=video,
                question=text_of(row["question"]),
                options=tuple(options),
                answer=text_of(row["answer"]).upper(),
                video_path=video_path(video_dir, f"{video}.mp4"),
                attributes={k: v for k, v in attrs.items() if v},
                split="test",
            )
        )
    return items


@benchmark("mlvu", order=20, title="MLVU", columns=("video_name", "candidates", "question_id"))
def load_mlvu(
    path: str | os.PathLike[str], *, video_dir: str | os.PathLike[str] | None = None
) -> list[Item]:
    """MLVU multiple choice: the question text inlines "(A) ..." lines, which are cut off (the
    options come from `candidates`); video id = the file name without its extension."""
    p = Path(path)
    rows = _read_parquet_rows(
        p, ["video_name", "question", "candidates", "answer", "task_type", "question_id"]
    )
    items = []
    for n, row in enumerate(rows, start=1):
        where = f"{p}: row {n} (question_id {row.get('question_id')!r})"
        question = text_of(row["question"])
        cut = _INLINE_OPTIONS.search(question)
        if cut:
            question = question[: cut.start()].strip()
        name = text_of(row["video_name"])
        items.append(
            checked_item(
                where,
                item_id=text_of(row["question_id"]),
                video_id=Path(name).stem,
                question=question,
                options=tuple(strip_option_prefix(c) for c in _as_list(row["candidates"], where)),
                answer=text_of(row["answer"]).upper(),
                video_path=video_path(video_dir, name),
                duration_s=_seconds(row.get("duration")),
                attributes={"task_type": text_of(row["task_type"])},
                split="test",
            )
        )
    return items


@benchmark(
    "longvideobench",
    order=30,
    title="LongVideoBench",
    columns=("correct_choice", "option0", "duration_group"),
)
def load_longvideobench(
    path: str | os.PathLike[str], *, video_dir: str | os.PathLike[str] | None = None
) -> list[Item]:
    """LongVideoBench: `correct_choice` is an option index; absent options are 'N/A' at the
    end and are dropped (an 'N/A' before a real option is kept, so letters do not shift)."""
    p = Path(path)
    option_cols = [f"option{i}" for i in range(5)]
    rows = _read_parquet_rows(
        p, ["video_id", "id", "correct_choice", "question", *option_cols, "duration_group"]
    )
    items = []
    for n, row in enumerate(rows, start=1):
        where = f"{p}: row {n} (id {row.get('id')!r})"
        options = [text_of(row[c]) for c in option_cols]
        while options and options[-1] in ("N/A", ""):
            options.pop()
        choice = row["correct_choice"]
        if not isinstance(choice, int) or not 0 <= choice < len(options):
            raise BenchmarkFileError(
                f"{where}: column 'correct_choice' {choice!r} is not an index of the "
                f"{len(options)} options"
            )
        group = text_of(row.get("duration_group"))
        attrs = {
            "duration": group,
            "question_category": text_of(row.get("question_category")),
            "topic_category": text_of(row.get("topic_category")),
        }
        video = text_of(row["video_id"])
        items.append(
            checked_item(
                where,
                item_id=text_of(row["id"]),
                video_id=video,
                question=text_of(row["question"]),
                options=tuple(options),
                answer=OPTION_LETTERS[choice],
                video_path=video_path(video_dir, text_of(row.get("video_path")) or f"{video}.mp4"),
                duration_s=_seconds(row.get("duration")),
                attributes={k: v for k, v in attrs.items() if v},
                split="val",
            )
        )
    return items


def _titles(suffix: str) -> str:
    titles = [f.title for f in BENCHMARK_LOADERS.values() if suffix in f.suffixes]
    return ", ".join(titles[:-1]) + " or " + titles[-1] if len(titles) > 1 else "".join(titles)


def detect_benchmark(path: str | os.PathLike[str]) -> str:
    """Which benchmark a question file is: a Parquet file from its columns, a JSON file from
    its keys."""
    import pyarrow.parquet as pq

    p = Path(path)
    suffix = ".json" if p.suffix.lower() == ".json" else ".parquet"
    if suffix == ".json":
        names = set(json_keys(p))
        what = "keys"
    else:
        try:
            names = set(pq.read_schema(p).names)
        except Exception as exc:
            raise BenchmarkFileError(f"{p}: not a readable Parquet file ({exc})") from exc
        what = "columns"
    for name, loader in BENCHMARK_LOADERS.items():
        if suffix in loader.suffixes and loader.columns <= names:
            return name
    raise BenchmarkFileError(
        f"{p}: not a known benchmark file ({_titles(suffix)} {what} expected; "
        f"has {', '.join(sorted(names)) or 'none'})"
    )


def load_benchmark(
    path: str | os.PathLike[str],
    *,
    name: str | None = None,
    video_dir: str | os.PathLike[str] | None = None,
) -> list[Item]:
    """Load a benchmark question file: one of the published Parquet or JSON files (detected
    from its columns or keys unless `name` is given) or the generic items JSONL format."""
    p = Path(path)
    if not p.is_file():
        raise BenchmarkFileError(f"{p}: no such file")
    if p.suffix.lower() in (".jsonl", ".ndjson"):
        return read_items_jsonl(p)
    key = name if name is not None else detect_benchmark(p)
    if key not in BENCHMARK_LOADERS:
        raise BenchmarkFileError(
            f"unknown benchmark {key!r}; known: {', '.join(sorted(BENCHMARK_LOADERS))}"
        )
    return BENCHMARK_LOADERS[key](p, video_dir=video_dir)
