"""One row of a results table, checked: each column's own rule, then the rules across columns.

`TableRow` checks each value by its column's rule; `parse_row` then applies the rules that need
several columns or the answer key. A row with a bad value and a broken cross-column rule is
reported for its value; two bad values, for the first column in the order of `TableRow`'s fields.

Every error names the file, the line (1-based; the CSV header is line 1, Parquet rows count from
1) and the column as the file spells it (a renamed or widened column is named as the user sees
it), since a table of 100,000 rows is otherwise impossible to debug.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Final, TypeVar

from pydantic import BaseModel, ConfigDict, PlainValidator, ValidationError
from pydantic_core import PydanticCustomError

from ...core.errors import shown_value
from ...core.files import loads_json, parse_decimal
from ...core.responses import (
    NOANSWER,
    OpenAnswerScores,
    ResponseRow,
    Status,
    TaskKind,
    extract_choice,
    score_open_answer,
)
from ._common import ImportInputError, attributes_json, forbidden_in_id, missing_value
from ._config_ids import label_config_id
from ._jobs import gold_letter
from ._table_records import TableRecords
from ._table_shape import AnswerKey, KeyEntry

ATTRIBUTE_PREFIX: Final[str] = "attr_"
#: Largest whole number a column takes (the response table stores int64; no budget is near it).
MAX_INTEGER: Final[int] = 2**53
#: The statuses a row with a gold answer is scored against it in (a failed row has no answer).
_SCORED_AGAINST_GOLD: Final[tuple[Status | None, ...]] = (None, Status.OK, Status.NOANSWER)
_Named = TypeVar("_Named", TaskKind, Status)


def _problem(message: str) -> PydanticCustomError:
    """A column's value breaking its rule; `parse_row` prefixes the file, line and column."""
    return PydanticCustomError("table_value", "{problem}", {"problem": message})


def _number(value: Any) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        try:
            out = float(value)
        except OverflowError:  # an int past 1.8e308 (JSON keeps every digit)
            raise _problem(f"{shown_value(value)} is too large") from None
    else:
        try:
            out = parse_decimal(str(value))
        except ValueError:
            raise _problem(f"{shown_value(value)} is not a number") from None
    if not math.isfinite(out):
        raise _problem(f"{shown_value(value)} is not a finite number")
    return out


def _integer(value: Any, minimum: int) -> int:
    if isinstance(value, bool):  # JSON true/false is not a count
        raise _problem(f"{value!r} is not a whole number")
    out = _number(value)
    if out != int(out):
        raise _problem(f"{shown_value(value)} is not a whole number")
    if out < minimum:
        raise _problem(f"{shown_value(value)} is below {minimum}")
    if out > MAX_INTEGER:
        raise _problem(f"{shown_value(value)} is too large (at most {MAX_INTEGER})")
    return int(out)


def _identifier(value: Any) -> str:
    """An id or label as text: a string, or a whole number written as one; never the Python
    repr of an object, bytes or a list."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise _problem(f"{type(value).__name__} value {str(value)[:40]!r} is not a text id")
    if isinstance(value, float):
        if not math.isfinite(value):  # JSON's 1e999 is infinity: no whole number writes it
            raise _problem(f"{value!r} is not a text id")
        if value != int(value):
            raise _problem(f"{value!r} is not a text id (a fraction)")
        value = int(value)
    text = str(value).strip()
    bad = forbidden_in_id(text)
    if bad is not None:
        raise _problem(f"{text[:40]!r} contains {bad}, a control or bidirectional-text character")
    return text


def _fraction(value: Any) -> float:
    out = _number(value)
    if not 0.0 <= out <= 1.0:
        raise _problem(f"{value!r} is outside [0, 1]")
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


def _correct(value: Any) -> float:
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return 1.0 if value.strip().lower() == "true" else 0.0
    out = _number(value)
    if out not in (0.0, 1.0):
        raise _problem(f"{value!r} must be 0 or 1")
    return out


def _one_of(names: type[_Named]) -> Callable[[Any], _Named]:
    def check(value: Any) -> _Named:
        try:
            return names(_text(value))
        except ValueError:
            raise _problem(f"{value!r} is not one of {[n.value for n in names]}") from None

    return check


_Identifier = Annotated[str, PlainValidator(_identifier)]
_Count = Annotated[int, PlainValidator(lambda value: _integer(value, 0))]
_Number = Annotated[float, PlainValidator(_number)]
_Fraction = Annotated[float, PlainValidator(_fraction)]
_Text = Annotated[str, PlainValidator(_text)]


class TableRow(BaseModel):
    """A row's values, each checked by its column's rule (docs/importers.md, "`import table`").

    The fields are the table's columns: those without a default are required, and their order
    is the order a row's bad values are reported in. Only non-empty values are given (an empty
    cell, NaN or null is the column's absence). `gold` stays as written: whether it names an
    option depends on the item, which the answer key knows.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    model: _Identifier
    item_id: _Identifier
    config: _Identifier
    frames: _Count
    order: _Number | None = None
    repeat: _Count = 0
    correct: Annotated[float, PlainValidator(_correct)] | None = None
    score: _Fraction | None = None
    answer: _Text | None = None
    # a model's raw output, kept as written
    prediction: Annotated[str, PlainValidator(str)] | None = None
    reference: Annotated[list[str], PlainValidator(_references)] | None = None
    gold: Any = None
    task_kind: Annotated[TaskKind, PlainValidator(_one_of(TaskKind))] | None = None
    status: Annotated[Status, PlainValidator(_one_of(Status))] | None = None
    video_id: _Identifier | None = None
    series: _Text = "default"
    pixels: Annotated[int, PlainValidator(lambda value: _integer(value, 1))] | None = None
    confidence: _Fraction | None = None
    margin: _Fraction | None = None
    visual_tokens: _Count | None = None
    latency_s: _Number | None = None


#: The columns a table must have, and those it may have (besides `attr_*`), from `TableRow`.
REQUIRED: Final[tuple[str, ...]] = tuple(
    name for name, f in TableRow.model_fields.items() if f.is_required()
)
OPTIONAL: Final[tuple[str, ...]] = tuple(
    name for name, f in TableRow.model_fields.items() if not f.is_required()
)


class ParsedFields(ResponseRow, total=False):
    """A parsed row with the two fields `import_table` carries until the whole table is read:
    its line (named by the cross-row checks) and whether it stated its task kind."""

    _line: int
    _explicit: bool


@dataclass
class ParsedRow:
    line: int
    row: ParsedFields
    explicit_kind: bool


def _values(
    src: TableRecords, line: int, present: Mapping[str, object], aliases: Mapping[str, str] | None
) -> TableRow:
    try:
        return TableRow.model_validate(present)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        # an empty required column first (in the order of REQUIRED), then the first bad value
        first = next((e for e in errors if e["type"] == "missing"), errors[0])
        problem = "empty value" if first["type"] == "missing" else first["ctx"]["problem"]
        raise ImportInputError(
            f"{src.at(line, str(first['loc'][0]), aliases)}: {problem}"
        ) from None


def _gold_letter(value: Any, options: tuple[str, ...], loc: str) -> str:
    letter = gold_letter(_text(value), options)
    if letter is None:
        raise ImportInputError(
            f"{loc}: gold answer {value!r} is not an option letter"
            + (" or option text" if options else " (A-J)")
        )
    return letter


def _gold(
    src: TableRecords,
    line: int,
    aliases: Mapping[str, str] | None,
    *,
    written: Any,
    item_id: str,
    entry: KeyEntry | None,
    key: AnswerKey | None,
) -> str | None:
    """The row's gold letter, else the key's: a results table often leaves gold to the answer
    key, and one that writes it must agree with the key, or one of the two files is wrong."""
    if written is None:
        return entry.gold if entry is not None else None
    gold = _gold_letter(written, entry.options if entry else (), src.at(line, "gold", aliases))
    if entry is not None and entry.gold is not None and entry.gold != gold:
        raise ImportInputError(
            f"{src.at(line, 'gold', aliases)}: gold answer {gold} for item {item_id!r}, but "
            f"{entry.gold} in {key.path if key else ''}"
        )
    return gold


def _as_open_answer(
    entry: KeyEntry, answer: str | None, prediction: str | None, refs: list[str] | None
) -> tuple[str | None, str | None, list[str] | None]:
    """(answer, prediction, references) of a row of an open-ended item: its text is scored
    against references, not read as a letter, so an `answer` column holds the prediction, and a
    row without references takes the key's."""
    if prediction is None and answer is not None and answer != NOANSWER:
        prediction, answer = answer, None
    if refs is None and entry.references:
        refs = list(entry.references)
    return answer, prediction, refs


def _scored_answer(
    src: TableRecords,
    line: int,
    aliases: Mapping[str, str] | None,
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
                f"{src.at(line)}: needs 'correct', or an 'answer' or 'prediction' to compare "
                f"with the gold answer {gold!r}"
            )
        return None, prediction, correct
    letter = NOANSWER if text == NOANSWER else extract_choice(text, options)
    scored = float(letter == gold)
    if correct is not None and correct != scored:
        raise ImportInputError(
            f"{src.at(line, 'correct', aliases)}: {int(correct)} disagrees with the answer: "
            f"{text!r} reads as {letter} and the gold answer is {gold}"
        )
    raw_text = prediction if prediction is not None else (text if text != letter else None)
    return letter, raw_text, scored


def _task_kind(given: TaskKind | None, entry: KeyEntry | None, correct: float | None) -> TaskKind:
    """The kind the row says, else its open-ended item's, else the kind its result is scored
    as: 'correct' (0/1) is multiple choice, anything else open-ended."""
    if given is not None:
        return given
    if entry is not None and entry.task_kind != TaskKind.MCQA:
        return entry.task_kind
    return TaskKind.MCQA if correct is not None else TaskKind.OPEN_QA


def _status(given: Status | None, answer: str | None) -> Status:
    """The status the row gives, else OK; an answer of `NOANSWER` turns OK into NOANSWER, so an
    answer that names no option is counted as one whether or not the row's status says so."""
    if answer == NOANSWER and given in (None, Status.OK):
        return Status.NOANSWER
    return given if given is not None else Status.OK


def _check_result(
    src: TableRecords,
    line: int,
    aliases: Mapping[str, str] | None,
    *,
    status: Status,
    kind: TaskKind,
    correct: float | None,
    score: float | None,
) -> None:
    """An answered row needs the result its kind is measured by (0/1 for multiple choice, a
    score in [0, 1] otherwise), and a row without an answer has none to give; else the
    measures would read a result the row does not have."""
    if status.answered:
        if correct is None and score is None:
            raise ImportInputError(
                f"{src.at(line)}: needs 'correct' (0/1) or 'score' in [0, 1] "
                "(or 'prediction' and 'reference' to compute token F1)"
            )
        if kind == TaskKind.MCQA and correct is None:
            raise ImportInputError(
                f"{src.at(line, 'correct', aliases)}: an mcqa row needs 'correct' (0/1)"
            )
        if kind != TaskKind.MCQA and correct is not None:
            raise ImportInputError(
                f"{src.at(line, 'correct', aliases)}: a {kind.value} row takes 'score', not "
                "'correct'"
            )
        if status == Status.NOANSWER and correct == 1.0:
            raise ImportInputError(
                f"{src.at(line, 'correct', aliases)}: a NOANSWER row cannot be correct"
            )
    elif correct is not None or score is not None:
        raise ImportInputError(
            f"{src.at(line, 'status', aliases)}: a '{status.value}' row has no answer, so no "
            "'correct'/'score'"
        )


def _attributes(
    columns: Sequence[str], present: Mapping[str, Any], entry: KeyEntry | None
) -> str | None:
    """The key's attributes of the item, overridden by the row's own `attr_*` columns: the
    table describes the row it holds, the key only the item."""
    attrs: dict[str, object] = dict(entry.attributes) if entry is not None else {}
    attrs.update(
        (col[len(ATTRIBUTE_PREFIX) :], present[col])
        for col in columns
        if col.startswith(ATTRIBUTE_PREFIX) and len(col) > len(ATTRIBUTE_PREFIX) and col in present
    )
    return attributes_json(attrs)


def _video_id(given: str | None, entry: KeyEntry | None, item_id: str) -> str:
    """The row's video, else the key's, else the item itself: the video is the bootstrap's
    resampling cluster, and an item no file names a video for is a cluster of its own."""
    if given is not None:
        return given
    return entry.video_id if entry is not None and entry.video_id else item_id


def parse_row(
    src: TableRecords,
    line: int,
    raw: Mapping[str, object],
    aliases: Mapping[str, str] | None = None,
    key: AnswerKey | None = None,
) -> ParsedRow:
    """One record as a response row: its values checked (`TableRow`), then the rules across
    columns; the first problem is raised as an `ImportInputError` naming its line and column."""
    present = {k: v for k, v in raw.items() if not missing_value(v)}
    values = _values(src, line, present, aliases)
    item_id, frames = values.item_id, values.frames
    correct, score = values.correct, values.score
    if correct is not None and score is not None:
        raise ImportInputError(
            f"{src.at(line)}: both 'correct' and 'score' are given; a row is either "
            "multiple-choice (correct) or continuous (score)"
        )
    answer, prediction, refs = values.answer, values.prediction, values.reference
    entry = key.get(item_id) if key is not None else None
    open_entry = entry is not None and entry.task_kind != TaskKind.MCQA
    if open_entry and entry is not None:
        answer, prediction, refs = _as_open_answer(entry, answer, prediction, refs)
    gold = _gold(src, line, aliases, written=values.gold, item_id=item_id, entry=entry, key=key)
    if gold is not None and score is None and values.status in _SCORED_AGAINST_GOLD:
        answer, prediction, correct = _scored_answer(
            src,
            line,
            aliases,
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
            f"{src.at(line, 'item_id', aliases)}: item {item_id!r} is not in {key.path}, so "
            "its answer cannot be scored"
        )
    kind = _task_kind(values.task_kind, entry, correct)
    status = _status(values.status, answer)
    scores: OpenAnswerScores | None = None
    if prediction is not None and refs is not None and kind != TaskKind.MCQA:
        scores = score_open_answer(prediction, refs)
        if score is None and correct is None and status.answered:
            score = scores.score
    _check_result(src, line, aliases, status=status, kind=kind, correct=correct, score=score)
    row: ParsedFields = {
        "model": values.model,
        "item_id": item_id,
        "video_id": _video_id(values.video_id, entry, item_id),
        "task_kind": kind.value,
        "series": values.series,
        "config_id": label_config_id(values.config, frames, values.series),
        "config_label": values.config,
        "axis_order": values.order if values.order is not None else float(frames),
        "frames": frames,
        "pixels": values.pixels,
        "repeat": values.repeat,
        "status": status.value,
        "raw_text": prediction,
        "answer": answer,
        "correct": correct,
        "score": score,
        "token_f1": scores.token_f1 if scores else None,
        "rouge_l": scores.rouge_l if scores else None,
        "exact_match": scores.exact_match if scores else None,
        "confidence": values.confidence,
        "margin": values.margin,
        "reference": (refs[0] if len(refs) == 1 else json.dumps(refs)) if refs else None,
        "visual_tokens": values.visual_tokens,
        "latency_s": values.latency_s,
        "attributes": _attributes(src.columns, present, entry),
        "source": f"table:{src.path.name}:{line}",
    }
    return ParsedRow(line=line, row=row, explicit_kind=values.task_kind is not None)
