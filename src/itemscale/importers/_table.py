"""The generic importer: any CSV, JSONL or Parquet table of per-item results.

Researchers who ran their own harness can export one row per (model, item, configuration,
repeat) and get the same audit as a native sweep. Every value is checked before anything is
written, and an error names the file, the line (1-based, the CSV header is line 1; Parquet
files count rows from 1) and the column, since a table of 100,000 rows is otherwise impossible
to debug. See docs/importers.md for the column reference.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pandas as pd

from ..files import loads_json
from ..responses import ANSWERED_STATUSES, NOANSWER, Status, TaskKind, duplicated_keys
from ..responses._extract import extract_choice
from ..responses._scoring import exact_match, rouge_l, token_f1
from ._common import (
    ImportInputError,
    attributes_json,
    label_config_id,
    rows_frame_from,
)
from ._jobs import gold_letter
from ._table_records import TableRecords
from ._table_shape import AnswerKey, KeyEntry, TableOptions, shaped_records
from ._video_ids import video_pattern, videos_from_ids

REQUIRED: Final[tuple[str, ...]] = ("model", "item_id", "config", "frames")
OPTIONAL: Final[tuple[str, ...]] = (
    "video_id",
    "order",
    "correct",
    "score",
    "answer",
    "confidence",
    "margin",
    "repeat",
    "prediction",
    "reference",
    "status",
    "series",
    "task_kind",
    "pixels",
    "visual_tokens",
    "latency_s",
    "gold",
)
ATTRIBUTE_PREFIX: Final[str] = "attr_"


def _missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def _number(value: Any, loc: str) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        out = float(value)
    else:
        try:
            out = float(str(value).strip())
        except ValueError:
            raise ImportInputError(f"{loc}: {value!r} is not a number") from None
    if not math.isfinite(out):
        raise ImportInputError(f"{loc}: {value!r} is not a finite number")
    return out


#: Largest whole number a column takes (the response table stores int64; no budget is near it).
MAX_INTEGER: Final[int] = 2**53


def _integer(value: Any, loc: str, *, minimum: int = 0) -> int:
    if isinstance(value, bool):  # JSON true/false is not a count
        raise ImportInputError(f"{loc}: {value!r} is not a whole number")
    out = _number(value, loc)
    if out != int(out):
        raise ImportInputError(f"{loc}: {value!r} is not a whole number")
    if out < minimum:
        raise ImportInputError(f"{loc}: {value!r} is below {minimum}")
    if out > MAX_INTEGER:
        raise ImportInputError(f"{loc}: {value!r} is too large (at most {MAX_INTEGER})")
    return int(out)


def _identifier(value: Any, loc: str) -> str:
    """An id or label as text: a string, or a whole number written as one; never the Python
    repr of an object, bytes or a list."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ImportInputError(
            f"{loc}: {type(value).__name__} value {str(value)[:40]!r} is not a text id"
        )
    if isinstance(value, float):
        if not math.isfinite(value):  # JSON's 1e999 is infinity: no whole number writes it
            raise ImportInputError(f"{loc}: {value!r} is not a text id")
        if value != int(value):
            raise ImportInputError(f"{loc}: {value!r} is not a text id (a fraction)")
        value = int(value)
    text = str(value).strip()
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise ImportInputError(f"{loc}: {text[:40]!r} contains a control character")
    return text


def _fraction(value: Any, loc: str) -> float:
    out = _number(value, loc)
    if not 0.0 <= out <= 1.0:
        raise ImportInputError(f"{loc}: {value!r} is outside [0, 1]")
    return out


def _correct(value: Any, loc: str) -> float:
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return 1.0 if value.strip().lower() == "true" else 0.0
    out = _number(value, loc)
    if out not in (0.0, 1.0):
        raise ImportInputError(f"{loc}: {value!r} must be 0 or 1")
    return out


def _text(value: Any) -> str:
    return str(value).strip()


def _references(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    text = str(value)
    if text.lstrip().startswith("["):
        try:
            parsed = loads_json(text)
        except json.JSONDecodeError:
            return [text]
        if isinstance(parsed, list) and parsed and all(isinstance(v, str) for v in parsed):
            return parsed
    return [text]


@dataclass
class _Parsed:
    line: int
    row: dict[str, Any]
    explicit_kind: bool


def _gold_letter(value: Any, options: tuple[str, ...], loc: str) -> str:
    letter = gold_letter(_text(value), options)
    if letter is None:
        raise ImportInputError(
            f"{loc}: gold answer {value!r} is not an option letter"
            + (" or option text" if options else " (A-J)")
        )
    return letter


def _scored_answer(
    loc: Any,
    line_loc: str,
    *,
    answer: str | None,
    prediction: str | None,
    correct: float | None,
    gold: str,
    entry: KeyEntry | None,
) -> tuple[str | None, str | None, float | None]:
    """(answer letter, raw text, correct) of a multiple-choice row with a gold answer: the
    answer (or the raw prediction) goes through the one extractor and is compared with gold."""
    options = entry.options if entry is not None else ()
    text = answer if answer is not None else prediction
    if text is None:
        if correct is None:
            raise ImportInputError(
                f"{line_loc}: needs 'correct', or an 'answer' or 'prediction' to compare with "
                f"the gold answer {gold!r}"
            )
        return None, prediction, correct
    letter = NOANSWER if text == NOANSWER else extract_choice(text, options)
    scored = float(letter == gold)
    if correct is not None and correct != scored:
        raise ImportInputError(
            f"{loc('correct')}: {int(correct)} disagrees with the answer: {text!r} reads as "
            f"{letter} and the gold answer is {gold}"
        )
    raw_text = prediction if prediction is not None else (text if text != letter else None)
    return letter, raw_text, scored


def _parse_row(
    src: TableRecords,
    line: int,
    raw: dict[str, Any],
    aliases: Mapping[str, str] | None = None,
    key: AnswerKey | None = None,
) -> _Parsed:
    def loc(col: str) -> str:
        return src.at(line, col, aliases)

    present = {k: v for k, v in raw.items() if not _missing(v)}
    get = present.get

    for col in REQUIRED:
        if get(col) is None:
            raise ImportInputError(f"{loc(col)}: empty value")
    model = _identifier(get("model"), loc("model"))
    item_id = _identifier(get("item_id"), loc("item_id"))
    label = _identifier(get("config"), loc("config"))
    frames = _integer(get("frames"), loc("frames"))
    order = _number(get("order"), loc("order")) if get("order") is not None else float(frames)
    repeat = _integer(get("repeat"), loc("repeat")) if get("repeat") is not None else 0
    correct = _correct(get("correct"), loc("correct")) if get("correct") is not None else None
    score = _fraction(get("score"), loc("score")) if get("score") is not None else None
    if correct is not None and score is not None:
        raise ImportInputError(
            f"{src.at(line)}: both 'correct' and 'score' are given; a row is either "
            "multiple-choice (correct) or continuous (score)"
        )
    answer = _text(get("answer")) if get("answer") is not None else None
    prediction = str(get("prediction")) if get("prediction") is not None else None
    reference_raw = get("reference")
    refs = _references(reference_raw) if reference_raw is not None else None
    entry = key.get(item_id) if key is not None else None
    open_entry = entry is not None and entry.task_kind != TaskKind.MCQA
    if open_entry and entry is not None:
        # an open-ended benchmark item: the answer is text scored against its references
        if prediction is None and answer is not None and answer != NOANSWER:
            prediction, answer = answer, None
        if refs is None and entry.references:
            refs = list(entry.references)
    gold: str | None = None
    if get("gold") is not None:
        gold = _gold_letter(get("gold"), entry.options if entry else (), loc("gold"))
        if entry is not None and entry.gold is not None and entry.gold != gold:
            raise ImportInputError(
                f"{loc('gold')}: gold answer {gold} for item {item_id!r}, but {entry.gold} in "
                f"{key.path if key else ''}"
            )
    elif entry is not None:
        gold = entry.gold
    scoring_status = _text(get("status")) if get("status") is not None else Status.OK.value
    if gold is not None and score is None and scoring_status in ("ok", "noanswer"):
        answer, prediction, correct = _scored_answer(
            loc,
            src.at(line),
            answer=answer,
            prediction=prediction,
            correct=correct,
            gold=gold,
            entry=entry,
        )
        if refs is None:
            refs = [gold]
    elif (
        gold is None
        and key is not None
        and not open_entry
        and correct is None
        and score is None
        and (answer is not None or prediction is not None)
    ):
        raise ImportInputError(
            f"{loc('item_id')}: item {item_id!r} is not in {key.path}, so its answer "
            "cannot be scored"
        )

    explicit_kind = get("task_kind") is not None
    if explicit_kind:
        try:
            kind = TaskKind(_text(get("task_kind")))
        except ValueError:
            raise ImportInputError(
                f"{loc('task_kind')}: {get('task_kind')!r} is not one of "
                f"{[k.value for k in TaskKind]}"
            ) from None
    elif open_entry and entry is not None:
        kind = entry.task_kind
    else:
        kind = TaskKind.MCQA if correct is not None else TaskKind.OPEN_QA

    if get("status") is not None:
        try:
            status = Status(_text(get("status")))
        except ValueError:
            raise ImportInputError(
                f"{loc('status')}: {get('status')!r} is not one of {[s.value for s in Status]}"
            ) from None
    else:
        status = Status.NOANSWER if answer == NOANSWER else Status.OK
    if answer == NOANSWER and status == Status.OK:
        status = Status.NOANSWER

    f1 = rl = em = None
    if prediction is not None and refs is not None and kind != TaskKind.MCQA:
        f1, rl, em = (
            token_f1(prediction, refs),
            rouge_l(prediction, refs),
            exact_match(prediction, refs),
        )
        if score is None and correct is None and status.answered:
            score = f1
    if status.answered:
        if correct is None and score is None:
            raise ImportInputError(
                f"{src.at(line)}: needs 'correct' (0/1) or 'score' in [0, 1] "
                "(or 'prediction' and 'reference' to compute token F1)"
            )
        if kind == TaskKind.MCQA and correct is None:
            raise ImportInputError(f"{loc('correct')}: an mcqa row needs 'correct' (0/1)")
        if kind != TaskKind.MCQA and correct is not None:
            raise ImportInputError(
                f"{loc('correct')}: a {kind.value} row takes 'score', not 'correct'"
            )
        if status == Status.NOANSWER and correct == 1.0:
            raise ImportInputError(f"{loc('correct')}: a NOANSWER row cannot be correct")
    elif correct is not None or score is not None:
        raise ImportInputError(
            f"{loc('status')}: a '{status.value}' row has no answer, so no 'correct'/'score'"
        )

    attrs: dict[str, Any] = dict(entry.attributes) if entry is not None else {}
    attrs.update(
        (col[len(ATTRIBUTE_PREFIX) :], get(col))
        for col in src.columns
        if col.startswith(ATTRIBUTE_PREFIX)
        and len(col) > len(ATTRIBUTE_PREFIX)
        and get(col) is not None
    )
    video_id = (
        _identifier(get("video_id"), loc("video_id"))
        if get("video_id") is not None
        else (entry.video_id if entry is not None and entry.video_id else item_id)
    )
    row: dict[str, Any] = {
        "model": model,
        "item_id": item_id,
        "video_id": video_id,
        "task_kind": kind.value,
        "series": _text(get("series")) if get("series") is not None else "default",
        "config_id": label_config_id(label, frames),
        "config_label": label,
        "axis_order": 0.0 if frames == 0 and get("order") is None else order,
        "frames": frames,
        "pixels": _integer(get("pixels"), loc("pixels"), minimum=1)
        if get("pixels") is not None
        else None,
        "repeat": repeat,
        "status": status.value,
        "raw_text": prediction,
        "answer": answer,
        "correct": correct,
        "score": score,
        "token_f1": f1,
        "rouge_l": rl,
        "exact_match": em,
        "confidence": _fraction(get("confidence"), loc("confidence"))
        if get("confidence") is not None
        else None,
        "margin": _fraction(get("margin"), loc("margin")) if get("margin") is not None else None,
        "reference": (refs[0] if len(refs) == 1 else json.dumps(refs)) if refs else None,
        "visual_tokens": _integer(get("visual_tokens"), loc("visual_tokens"))
        if get("visual_tokens") is not None
        else None,
        "latency_s": _number(get("latency_s"), loc("latency_s"))
        if get("latency_s") is not None
        else None,
        "attributes": attributes_json(attrs),
        "source": f"table:{src.path.name}:{line}",
    }
    return _Parsed(line=line, row=row, explicit_kind=explicit_kind)


def _first_conflict(
    frame: pd.DataFrame, group: list[str], column: str
) -> tuple[int, int, Any, Any] | None:
    """The first row (in file order) whose `column` differs from its group's first row:
    (its position, the first row's position, its value, the first row's value)."""
    if frame.empty:
        return None
    first = frame.groupby(group, sort=False)[column].transform("first")
    bad = np.flatnonzero(frame[column].to_numpy(dtype=object) != first.to_numpy(dtype=object))
    if bad.size == 0:
        return None
    pos = int(bad[0])
    keys = frame.iloc[pos][group]
    same = np.flatnonzero((frame[group] == keys.to_numpy()).all(axis=1).to_numpy())
    origin = int(same[0])
    return pos, origin, frame.iloc[pos][column], frame.iloc[origin][column]


def _check_consistency(src: TableRecords, rows: pd.DataFrame) -> pd.DataFrame:
    """Across rows: no duplicate key, one frame count and axis position per configuration,
    one video and one task kind per item; the first offending row (in file order) is named.
    Failure rows then inherit their item's kind, so they are counted in the right matrix."""
    lines = rows["_line"].to_numpy()
    found: list[tuple[int, int, str]] = []  # (row position, check order, message)
    key = ["model", "item_id", "config_label", "repeat"]
    dup = np.flatnonzero(duplicated_keys(rows, key).to_numpy())
    if dup.size:
        pos = int(dup[0])
        r = rows.iloc[pos]
        same = np.flatnonzero((rows[key] == r[key].to_numpy()).all(axis=1).to_numpy())
        found.append(
            (
                pos,
                0,
                f"{src.at(int(lines[pos]))}: duplicate key (model={r['model']!r}, "
                f"item_id={r['item_id']!r}, config={r['config_label']!r}, "
                f"repeat={r['repeat']}) first seen on line {int(lines[same[0]])}",
            )
        )
    for order, (column, shown, fmt) in enumerate(
        (("frames", "frames", "{}"), ("axis_order", "order", "{:g}")), start=1
    ):
        hit = _first_conflict(rows, ["series", "config_label"], column)
        if hit:
            pos, origin, value, first = hit
            found.append(
                (
                    pos,
                    order,
                    f"{src.at(int(lines[pos]), shown)}: config "
                    f"{rows.iloc[pos]['config_label']!r} has {shown} {fmt.format(value)} here "
                    f"but {fmt.format(first)} on line {int(lines[origin])}",
                )
            )
    hit = _first_conflict(rows, ["model", "item_id"], "video_id")
    if hit:
        pos, origin, value, first = hit
        found.append(
            (
                pos,
                3,
                f"{src.at(int(lines[pos]), 'video_id')}: item {rows.iloc[pos]['item_id']!r} has "
                f"video {value!r} here but {first!r} on line {int(lines[origin])}",
            )
        )
    answered = rows["status"].isin(list(ANSWERED_STATUSES)).to_numpy()
    decides = answered | rows["_explicit"].to_numpy(dtype=bool)
    deciding = rows.loc[decides]
    hit = _first_conflict(deciding, ["model", "item_id"], "task_kind")
    if hit:
        pos, origin, value, first = hit
        at = np.flatnonzero(decides)
        found.append(
            (
                int(at[pos]),
                4,
                f"{src.at(int(lines[at[pos]]))}: item {deciding.iloc[pos]['item_id']!r} is "
                f"{value} here but {first} on line {int(lines[at[origin]])} (mixing 'correct' "
                "and 'score')",
            )
        )
    if found:
        raise ImportInputError(min(found)[2])
    inherit = ~decides
    if inherit.any():
        kinds = deciding.groupby(["model", "item_id"], sort=False)["task_kind"].first()
        lookup = pd.MultiIndex.from_frame(rows.loc[inherit, ["model", "item_id"]])
        inherited = kinds.reindex(lookup).fillna(TaskKind.MCQA.value).to_numpy()
        rows.loc[inherit, "task_kind"] = inherited
    return rows


#: Rows parsed into one block of columns at a time: memory follows the table, not the lines.
_CHUNK_ROWS: Final[int] = 50_000


def _typed_block(chunk: list[dict[str, Any]], src: TableRecords) -> pd.DataFrame:
    """Parsed rows as a block in the response table's types (plus the line and kind flags)."""
    frame = pd.DataFrame(chunk)
    extra = frame[["_line", "_explicit"]]
    # keys are checked across all blocks later, with the lines that name the duplicate
    typed = rows_frame_from(
        frame.drop(columns=["_line", "_explicit"]), where_=str(src.path), check_keys=False
    )
    return typed.assign(_line=extra["_line"].to_numpy(), _explicit=extra["_explicit"].to_numpy())


def import_table(
    path: str | os.PathLike[str] | TableRecords,
    options: TableOptions | None = None,
    *,
    key: AnswerKey | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """Parse a results table (a file, or `frame_records(df)`) into response rows (nothing
    written).

    `options` reads wide tables, renamed columns and label-derived frame counts; `key` (an
    answer key or a benchmark file) supplies gold answers, video ids and attributes by item id.
    Returns the rows and notes for the summary (e.g. ignored columns).
    """
    opts = options if options is not None else TableOptions()
    src = shaped_records(path, opts)
    missing = [c for c in REQUIRED if c not in src.columns]
    if missing:
        raise ImportInputError(
            f"{src.path}:1: missing required column(s) {', '.join(repr(m) for m in missing)}; "
            f"a table needs {', '.join(REQUIRED)} and 'correct' or 'score'"
            + ("" if opts.wide else " (one row per item and configuration? see --wide)")
        )
    cols = set(src.columns)
    scorable = bool({"correct", "score", "status"} & cols) or {"prediction", "reference"} <= cols
    gradable = ("gold" in cols or key is not None) and bool({"answer", "prediction"} & cols)
    if not (scorable or gradable):
        raise ImportInputError(
            f"{src.path}:1: missing column 'correct' or 'score' (or 'prediction' and "
            "'reference', or an 'answer' with a 'gold' column, --answer-key or --benchmark)"
        )
    known = set(REQUIRED) | set(OPTIONAL)
    ignored = [c for c in src.columns if c not in known and not c.startswith(ATTRIBUTE_PREFIX)]
    blocks: list[pd.DataFrame] = []
    chunk: list[dict[str, Any]] = []
    padded = empty = 0
    for line, raw, aliases in src:
        for col in ("model", "item_id", "config", "video_id"):
            value = raw.get(col)
            if isinstance(value, str) and value != value.strip() and value.strip():
                padded += 1
        if raw.get("answer") == NOANSWER and opts.wide:
            empty += 1
        parsed = _parse_row(src, line, raw, aliases, key)
        parsed.row["_line"] = line
        parsed.row["_explicit"] = parsed.explicit_kind
        chunk.append(parsed.row)
        if len(chunk) >= _CHUNK_ROWS:
            blocks.append(_typed_block(chunk, src))
            chunk = []
    if chunk:
        blocks.append(_typed_block(chunk, src))
    if not blocks:
        raise ImportInputError(f"{src.path}: no data rows")
    rows = pd.concat(blocks, ignore_index=True) if len(blocks) > 1 else blocks[0]
    del blocks, chunk
    rows = _check_consistency(src, rows)
    notes = []
    if ignored:
        notes.append(
            f"{src.path.name}: ignored column(s) {', '.join(ignored)} "
            f"(prefix a column with '{ATTRIBUTE_PREFIX}' to keep it as an item attribute, or "
            "--rename it)"
        )
    text_only = rows["frames"].to_numpy() == 0
    if text_only.any():
        labels = sorted(set(rows.loc[text_only, "config_label"]))
        notes.append(f"text-only baseline (frames 0): {', '.join(labels)}")
    if padded:
        notes.append(
            f"{src.path.name}: {padded} id or label value(s) had spaces around them, removed "
            "(' q1' and 'q1' are one item)"
        )
    if empty and opts.wide_values == "answer":
        notes.append(
            f"{src.path.name}: {empty} empty answer cell(s) read as NOANSWER (answered, "
            "wrong); --empty missing treats them as not run"
        )
    if key is not None:
        ids = set(rows["item_id"])
        found = sum(1 for i in ids if key.get(i) is not None)
        notes.append(
            f"{key.path.name}: {found} of the table's {len(ids)} items found "
            f"(it lists {len(key.entries)})"
        )
    if opts.video_from_id is not None:
        rows, note = videos_from_ids(rows, video_pattern(opts.video_from_id), opts.video_from_id)
        notes.append(f"{src.path.name}: {note}")
    elif "video_id" not in cols and (rows["video_id"] == rows["item_id"]).all():
        notes.append(
            f"{src.path.name}: no video ids (each item is its own bootstrap cluster); give a "
            "'video_id' column, --answer-key or --benchmark, or --video-from-id PATTERN "
            "(videomme: `001-1` is a question about video `001`)"
        )
    rows = rows.drop(columns=["_line", "_explicit"])
    return rows_frame_from(rows, where_=str(src.path)), notes
