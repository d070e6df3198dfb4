"""Loaders for the two open-ended generation benchmarks the seed paper measures: MLVU's
generation tasks and AVSD (DSTC7) fixed-history dialogue, from the JSON files as published.
AVSD turn t is asked with the *gold* history of turns 1..t-1, never the model's own earlier
replies, so a larger visual budget is compared on the same prompt.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from ...core.files import InputFileError, read_input_bytes
from ...core.items import DialogueTurn, Item
from ...core.responses import TaskKind
from ._fields import BenchmarkFileError, benchmark, checked_item, text_of, video_path

#: The answer DSTC7's AVSD test file writes in place of the hidden last turn's reference.
AVSD_UNDISCLOSED: Final[str] = "__UNDISCLOSED__"
#: The task type (item attribute `task_type`) of every AVSD item.
AVSD_TASK_TYPE: Final[str] = "dialogue"


def read_json(path: Path) -> Any:
    """The file's JSON value (an error names line and column); a file of one JSON object per
    line (MLVU's annotation files circulate in both forms) reads as the list of them."""
    try:
        text = read_input_bytes(path, what="a benchmark file").decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BenchmarkFileError(f"{path}: not UTF-8 text (byte offset {exc.start})") from exc
    except InputFileError as exc:
        raise BenchmarkFileError(f"{path}: cannot be read ({exc.reason})") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            lines = _json_lines(text)
            if lines is not None:
                return lines
        raise BenchmarkFileError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg}, column {exc.colno})"
        ) from exc


def _json_lines(text: str) -> list[Any] | None:
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            return None
        if not isinstance(value, dict):
            return None
        out.append(value)
    return out


def _record(value: object, where: str) -> Mapping[str, object]:
    if not isinstance(value, dict):
        raise BenchmarkFileError(f"{where}: expected an object, got {type(value).__name__}")
    return value


def _required_text(record: Mapping[str, object], key: str, where: str) -> str:
    if key not in record:
        raise BenchmarkFileError(f"{where}: missing key '{key}'")
    value = record[key]
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise BenchmarkFileError(f"{where}: key '{key}' is {type(value).__name__}, not text")
    text = text_of(value)
    if not text:
        raise BenchmarkFileError(f"{where}: key '{key}' is empty")
    return text


def _duration(record: Mapping[str, object], where: str) -> float | None:
    value = record.get("duration")
    if value is None:
        return None
    seconds = None
    if isinstance(value, int | float | str) and not isinstance(value, bool):
        with contextlib.suppress(ValueError):
            seconds = float(value)
    if seconds is None or not seconds >= 0:
        raise BenchmarkFileError(f"{where}: key 'duration' {value!r} is not a number of seconds")
    return seconds


@benchmark(
    "mlvu_generation",
    order=40,
    title="MLVU generation",
    columns=("video", "question", "answer", "question_type"),
    suffixes=(".json",),
)
def load_mlvu_generation(
    path: str | os.PathLike[str], *, video_dir: str | os.PathLike[str] | None = None
) -> list[Item]:
    """MLVU's generation tasks (`question_type` "subPlot" and "summary"): a JSON list of
    `{video, duration, question, answer, question_type}`. Item id = the video's file name
    without its extension (as MLVU's prediction files name items), `#2`, `#3`, ... for further
    questions about one video."""
    p = Path(path)
    records = read_json(p)
    if not isinstance(records, list):
        raise BenchmarkFileError(
            f"{p}: an MLVU generation file is a JSON list of questions, not a "
            f"{type(records).__name__}"
        )
    if not records:
        raise BenchmarkFileError(f"{p}: no questions")
    seen: Counter[str] = Counter()
    items = []
    for n, raw in enumerate(records, start=1):
        where = f"{p}: question {n}"
        record = _record(raw, where)
        name = _required_text(record, "video", where)
        stem = Path(name).stem
        seen[stem] += 1
        item_id = stem if seen[stem] == 1 else f"{stem}#{seen[stem]}"
        items.append(
            checked_item(
                f"{where} (video {name!r})",
                item_id=item_id,
                video_id=stem,
                task_kind=TaskKind.SUMMARY,
                question=_required_text(record, "question", where),
                references=(_required_text(record, "answer", where),),
                video_path=video_path(video_dir, name),
                duration_s=_duration(record, where),
                attributes={"task_type": _required_text(record, "question_type", where)},
                split="generation",
            )
        )
    return items


def _answers(value: Any, where: str) -> tuple[str, ...]:
    """A turn's references: one answer, or a list of them (a multi-reference file)."""
    values = value if isinstance(value, list) else [value]
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, str | int | float):
            raise BenchmarkFileError(f"{where}: key 'answer' holds {type(v).__name__}, not text")
        text = text_of(v)
        if text and text != AVSD_UNDISCLOSED:
            out.append(text)
    return tuple(out)


@benchmark("avsd", order=50, title="AVSD (DSTC7)", columns=("dialogs",), suffixes=(".json",))
def load_avsd(
    path: str | os.PathLike[str], *, video_dir: str | os.PathLike[str] | None = None
) -> list[Item]:
    """AVSD as DSTC7 released it: one item per (dialog, turn), id `<image_id>-<turn>` (turns
    from 1), the question of turn t after the gold history of turns < t. A last turn without a
    reference (`__UNDISCLOSED__`) is not an item; a turn after one is an error. `summary` and
    `caption` are left out of the prompt: the text-only answer would see the video through them."""
    p = Path(path)
    data = read_json(p)
    if not isinstance(data, dict) or "dialogs" not in data:
        raise BenchmarkFileError(f"{p}: an AVSD file is a JSON object with a 'dialogs' list")
    dialogs = data["dialogs"]
    if not isinstance(dialogs, list) or not dialogs:
        raise BenchmarkFileError(f"{p}: key 'dialogs' is not a non-empty list")
    items = []
    videos: dict[str, int] = {}
    for d, raw in enumerate(dialogs, start=1):
        where = f"{p}: dialogs[{d - 1}]"
        dialog = _record(raw, where)
        video = _required_text(dialog, "image_id", where)
        if video in videos:
            raise BenchmarkFileError(
                f"{where}: image_id {video!r} has a second dialog (first: dialogs"
                f"[{videos[video] - 1}]); item ids would repeat"
            )
        videos[video] = d
        turns = dialog.get("dialog")
        if not isinstance(turns, list) or not turns:
            raise BenchmarkFileError(f"{where}: key 'dialog' is not a non-empty list of turns")
        history: list[DialogueTurn] = []
        hidden: str | None = None
        for t, raw_turn in enumerate(turns, start=1):
            turn_where = f"{where}.dialog[{t - 1}]"
            turn = _record(raw_turn, turn_where)
            if hidden is not None:
                raise BenchmarkFileError(
                    f"{turn_where}: follows {hidden}, which has no reference answer; a fixed "
                    "history needs every earlier turn's answer"
                )
            question = _required_text(turn, "question", turn_where)
            if "answer" not in turn:
                raise BenchmarkFileError(f"{turn_where}: missing key 'answer'")
            references = _answers(turn["answer"], turn_where)
            if references:
                items.append(
                    checked_item(
                        f"{turn_where} (image_id {video!r})",
                        item_id=f"{video}-{t}",
                        video_id=video,
                        task_kind=TaskKind.DIALOGUE,
                        question=question,
                        references=references,
                        history=tuple(history),
                        video_path=video_path(video_dir, f"{video}.mp4"),
                        attributes={"task_type": AVSD_TASK_TYPE, "turn": str(t)},
                    )
                )
            else:
                hidden = turn_where
            history.append(DialogueTurn(role="user", text=question))
            history.append(DialogueTurn(role="assistant", text=references[0] if references else ""))
    if not items:
        raise BenchmarkFileError(f"{p}: no turn has a reference answer")
    return items


def json_keys(path: Path) -> frozenset[str]:
    """The keys that tell a JSON benchmark file's format: the top-level object's, or those of
    every record of a top-level list."""
    data = read_json(path)
    if isinstance(data, dict):
        return frozenset(str(k) for k in data)
    if isinstance(data, list) and data and all(isinstance(r, dict) for r in data):
        keys = set(data[0])
        for record in data[1:]:
            keys &= set(record)
        return frozenset(str(k) for k in keys)
    return frozenset()


__all__ = ["AVSD_TASK_TYPE", "AVSD_UNDISCLOSED", "json_keys", "load_avsd", "load_mlvu_generation"]
