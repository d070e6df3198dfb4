"""The rerun floor measured from a response table (docs/compare.md, "Reruns"): repeats and rerun
rows against the execution they repeat, per model, and rerun rows kept out of every matrix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from _support.compare_rows import compare_row
from itemscale.analysis.measures import (
    analyze_responses,
    answer_keys,
    build_matrices,
    measured_floor,
    measured_floors,
)
from itemscale.core.responses import NOANSWER, RERUN_REPEAT_BASE, normalise_responses


def _row(item: int, answer: str, correct: float, **extra: Any) -> dict[str, Any]:
    return compare_row(f"q{item}", f"v{item}", correct, answer=answer, **extra)


def _table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return normalise_responses(pd.DataFrame(rows), where="test")


def test_repeats_and_reruns_against_what_they_repeat() -> None:
    rows = [_row(i, "A", 1.0) for i in range(10)]
    # repeat 1 of items 0-4: item 0 moves
    rows += [_row(i, "B" if i == 0 else "A", float(i != 0), repeat=1) for i in range(5)]
    # reruns of repeat 0 of items 5-9: items 5 and 6 move; a rerun of repeat 1 of item 1 too
    rows += [
        _row(
            i,
            "C" if i in (5, 6) else "A",
            float(i not in (5, 6)),
            repeat=RERUN_REPEAT_BASE,
            rerun_of=0,
        )
        for i in range(5, 10)
    ]
    rows.append(_row(1, "A", 1.0, repeat=RERUN_REPEAT_BASE + 1, rerun_of=1))
    floor = measured_floors(_table(rows), name="A")["m"]
    # 5 repeats (1 moved) + 6 reruns (2 moved): 3 of 11
    assert (floor.moved, floor.answers) == (3, 11)
    assert floor.source == (
        "measured: 3 of 11 answers moved between A's own repeats (5) and cells and their reruns (6)"
    )
    assert floor.weakness() is not None  # 11 answers: too few to decide


def test_no_answer_on_both_and_unknown_keys_are_left_out() -> None:
    rows = [
        _row(i, NOANSWER if i < 3 else "A", 0.0, status="noanswer" if i < 3 else "ok")
        for i in range(6)
    ]
    rows += [
        _row(i, NOANSWER if i < 3 else "B", 0.0, repeat=1, status="noanswer" if i < 3 else "ok")
        for i in range(6)
    ]
    floor = measured_floor(_table(rows))
    assert floor is not None and (floor.moved, floor.answers) == (3, 3)
    # open-ended rows compare raw outputs; without them (a slim read) they compare nothing
    open_rows = [
        _row(i, None, None, task_kind="open_qa", score=0.5, raw_text=text, **extra)  # type: ignore[arg-type]
        for i, text, extra in (
            (0, "a red car", {}),
            (0, "a red car", {"repeat": 1}),
            (1, "two", {}),
            (1, "three", {"repeat": 1}),
            (2, "", {}),
            (2, "  ", {"repeat": 1}),
        )
    ]
    table = _table(open_rows)
    assert answer_keys(table).tolist()[4:] == [NOANSWER, NOANSWER]
    floor = measured_floor(table)
    assert floor is not None and (floor.moved, floor.answers) == (1, 2)
    assert measured_floor(table.assign(raw_text=None)) is None


def test_no_evidence_no_floor() -> None:
    assert measured_floors(_table([_row(i, "A", 1.0) for i in range(5)])) == {}


def test_rerun_rows_are_in_no_matrix_and_set_its_floor() -> None:
    rows = [_row(i, "ABCD"[i % 4], float(i % 2), video_id=f"v{i // 2}") for i in range(200)]
    reruns = [
        _row(
            i,
            "ABCD"[(i + (i == 4)) % 4],
            float(i % 2),
            video_id=f"v{i // 2}",
            repeat=RERUN_REPEAT_BASE,
            rerun_of=0,
        )
        for i in range(0, 200, 2)
    ]
    table = _table(rows + reruns)
    (matrix,) = build_matrices(table)
    assert matrix.n_repeats == 1 and matrix.n_items == 200
    assert matrix.rerun_floor is not None
    assert (matrix.rerun_floor.moved, matrix.rerun_floor.answers) == (1, 100)
    # the rerun rows change no measure: the analysis is that of the table without them
    with_reruns = analyze_responses(table, bootstrap=0).to_json()
    without = analyze_responses(_table(rows), bootstrap=0).to_json()
    block = with_reruns["models"]["m"]
    assert block.pop("rerun_floor")["answers"] == 100
    assert with_reruns == without
    # a stated floor takes the measured one's place
    from itemscale.analysis.measures import RerunFloor

    stated = RerunFloor.of_percent(0.3)
    (matrix,) = build_matrices(table, rerun_floor=stated)
    assert matrix.rerun_floor == stated


def test_reruns_take_repeats_no_protocol_asks_for() -> None:
    from itemscale.collect.protocol._protocol import MAX_REPEATS

    # a protocol's repeats are numbered 0 .. MAX_REPEATS - 1: a rerun never takes their place
    assert RERUN_REPEAT_BASE >= MAX_REPEATS


def test_a_slim_read_keeps_the_raw_outputs_the_floor_compares(tmp_path: Path) -> None:
    from itemscale.core.responses import read_run, write_run

    rows = [
        _row(i, None, None, task_kind="open_qa", score=0.5, raw_text=f"reply {i}")  # type: ignore[arg-type]
        for i in range(4)
    ]
    rows += [_row(i, "A", 1.0, raw_text="The answer is A.") for i in range(4, 6)]
    rows += [
        _row(
            0,
            None,
            None,
            task_kind="open_qa",
            score=0.5,
            raw_text="another reply",
            repeat=RERUN_REPEAT_BASE,
            rerun_of=0,
        ),  # type: ignore[arg-type]
        _row(
            1,
            None,
            None,
            task_kind="open_qa",
            score=0.5,
            raw_text="reply 1",
            repeat=RERUN_REPEAT_BASE,
            rerun_of=0,
        ),  # type: ignore[arg-type]
    ]
    write_run(tmp_path, _table(rows), {"schema_version": 1})
    slim, _ = read_run(tmp_path, slim=True)
    kept = slim.set_index(["item_id", "repeat"])["raw_text"]
    # the open-ended rows of the cells that were run again, and those only
    assert kept[("q0", 0)] == "reply 0" and kept[("q0", RERUN_REPEAT_BASE)] == "another reply"
    assert kept[("q1", RERUN_REPEAT_BASE)] == "reply 1"
    assert pd.isna(kept[("q2", 0)]) and pd.isna(kept[("q4", 0)])
    floor = measured_floors(slim)["m"]
    assert (floor.moved, floor.answers) == (1, 2)
