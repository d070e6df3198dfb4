"""lmms-eval runs with repeats: every response a sample logs, how many the run asked for, and
what the import says when the log holds fewer (docs/importers.md, "Repeats")."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ...core.responses import ResponseRow, TaskKind, score_open_answer
from ._common import JsonObject, json_object


def _is_score(value: object) -> bool:
    """`[-1.2, False]`: a scored option of a log-likelihood task, not generated text."""
    return (
        isinstance(value, list)
        and len(value) == 2
        and isinstance(value[1], bool)
        and isinstance(value[0], int | float)
        and not isinstance(value[0], bool)
    )


def repeat_texts(sample: JsonObject) -> list[str]:
    """Every response `resps` holds for the sample's one request: lmms-eval logs
    `[req.resps for req in requests]`, and a request run with `repeats` N holds N responses
    (`[["r0", "r1", "r2"]]`), while `filtered_resps` keeps the filter's pick (the first). An
    empty list for a log-likelihood choice or a sample without `resps`."""
    value = sample.get("resps")
    while isinstance(value, list) and len(value) == 1 and isinstance(value[0], list):
        value = value[0]
    if not isinstance(value, list) or any(_is_score(v) for v in value):
        return []
    texts = []
    for entry in value:
        while isinstance(entry, list) and len(entry) == 1:
            entry = entry[0]
        if isinstance(entry, str):
            texts.append(entry)
    return texts


def repeats_asked(results: JsonObject | None, task: str) -> int | None:
    """How many repeats the run asked for: the task config's `repeats`, else the resolved
    command line's (`--repeats`); None when results.json says neither."""
    if not results:
        return None
    config = json_object(json_object(results.get("configs")).get(task)).get("repeats")
    cli = json_object(json_object(results.get("config")).get("resolved_cli_args")).get("repeats")
    for value in (config, cli):
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
    return None


def repeats_note(path: Path, asked: int | None, held: Counter[int]) -> list[str]:
    """What the import says of repeats: how many it imported per sample and, when the run
    asked for more than the log holds, how many responses were lost."""
    if not held:
        return []
    most = max(held)
    if (asked is None or asked <= 1) and most <= 1:
        return []
    imported = ", ".join(f"{n} sample(s) with {k}" for k, n in sorted(held.items()))
    line = f"{path.name}: repeats imported per sample: {imported} (repeat 0, 1, ...)"
    if asked is not None and asked > 1:
        lost = sum(n * max(asked - k, 0) for k, n in held.items())
        line += f"; the run asked for {asked} (results.json)"
        if lost:
            line += (
                f": {lost} of {asked * sum(held.values())} responses are not in the log and "
                "were lost (this lmms-eval logged fewer responses than it ran; the repeat "
                "measures use the repeats imported)"
            )
    return [line]


def repeat_rows(
    row: ResponseRow,
    texts: Sequence[str],
    choice_columns: Callable[..., ResponseRow],
    options: tuple[str, ...],
    result: Any,
) -> list[ResponseRow]:
    """The rows of repeats 1.. of a sample whose `resps` hold several responses (`texts`, all
    of them, the first being repeat 0's raw text), each scored as repeat 0 was: a multiple
    choice by `choice_columns(text, None, gold, options, result)` (no harness pick to compare
    with), an open answer against repeat 0's reference."""
    out = []
    for repeat, text in enumerate(texts[1:], start=1):
        extra: ResponseRow = {
            **row,
            "repeat": repeat,
            "raw_text": text,
            "source": f"{row['source']}#{repeat}",
        }
        if row["task_kind"] == TaskKind.MCQA.value:
            extra.update(choice_columns(text, None, str(row["reference"]), options, result))
        else:
            extra.update(score_open_answer(text, [str(row["reference"])]).row_columns())
        out.append(extra)
    return out
