"""`import table`'s row checks: each column's rule names the file, line and column with the value,
and a row with several problems is reported for one of them in a fixed order."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from _support.paths import REPO
from itemscale.collect.importers import ImportInputError, import_table
from itemscale.collect.importers._table_row import OPTIONAL, REQUIRED, TableRow

GOOD: dict[str, Any] = {"model": "m", "item_id": "q1", "config": "u8", "frames": 8, "correct": 1}


def _import_one(tmp_path: Path, **changes: Any) -> str:
    """The error message of importing one JSONL row: GOOD with `changes` (None is null)."""
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(GOOD | changes) + "\n", encoding="utf-8")
    with pytest.raises(ImportInputError) as caught:
        import_table(path)
    return str(caught.value)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"model": ["m"]}, "column 'model': list value \"['m']\" is not a text id"),
        ({"item_id": True}, "column 'item_id': bool value 'True' is not a text id"),
        ({"config": 8.5}, "column 'config': 8.5 is not a text id (a fraction)"),
        (
            {"config": "8f\x01"},
            "column 'config': '8f\\x01' contains U+0001, a control or bidirectional-text character",
        ),
        ({"video_id": {"a": 1}}, "column 'video_id': dict value \"{'a': 1}\" is not a text id"),
        ({"frames": "eight"}, "column 'frames': 'eight' is not a number"),
        ({"frames": "inf"}, "column 'frames': 'inf' is not a finite number"),
        ({"frames": 8.5}, "column 'frames': 8.5 is not a whole number"),
        ({"frames": True}, "column 'frames': True is not a whole number"),
        ({"frames": -1}, "column 'frames': -1 is below 0"),
        ({"frames": 2**60}, f"column 'frames': {2**60} is too large (at most {2**53})"),
        ({"pixels": 0}, "column 'pixels': 0 is below 1"),
        ({"repeat": "x"}, "column 'repeat': 'x' is not a number"),
        ({"visual_tokens": -3}, "column 'visual_tokens': -3 is below 0"),
        ({"order": "first"}, "column 'order': 'first' is not a number"),
        ({"latency_s": "NaN"}, "column 'latency_s': 'NaN' is not a finite number"),
        ({"correct": 2}, "column 'correct': 2 must be 0 or 1"),
        ({"correct": "yes"}, "column 'correct': 'yes' is not a number"),
        ({"correct": None, "score": 1.5}, "column 'score': 1.5 is outside [0, 1]"),
        ({"confidence": -0.1}, "column 'confidence': -0.1 is outside [0, 1]"),
        ({"margin": "2"}, "column 'margin': '2' is outside [0, 1]"),
        (
            {"status": "done"},
            "column 'status': 'done' is not one of "
            "['ok', 'noanswer', 'media_error', 'model_error', 'timeout']",
        ),
        (
            {"task_kind": "caption"},
            "column 'task_kind': 'caption' is not one of "
            "['mcqa', 'open_qa', 'summary', 'dialogue']",
        ),
        ({"frames": None}, "column 'frames': empty value"),
        ({"model": "  "}, "column 'model': empty value"),
    ],
)
def test_each_column_rule_names_file_line_column_and_value(
    tmp_path: Path, changes: dict[str, Any], message: str
) -> None:
    assert _import_one(tmp_path, **changes) == f"{tmp_path / 't.jsonl'}:1: {message}"


def test_a_line_without_a_required_key_names_it_empty(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = [GOOD, {k: v for k, v in GOOD.items() if k != "frames"}]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    with pytest.raises(ImportInputError, match=r"t\.jsonl:2: column 'frames': empty value$"):
        import_table(path)


def test_an_empty_required_column_is_named_before_any_bad_value(tmp_path: Path) -> None:
    message = _import_one(tmp_path, model=["m"], frames="eight", config="")
    assert message.endswith(":1: column 'config': empty value")


def test_the_first_bad_value_in_column_order_is_named(tmp_path: Path) -> None:
    message = _import_one(tmp_path, latency_s="x", frames="eight", confidence=3)
    assert message.endswith(":1: column 'frames': 'eight' is not a number")


def test_a_bad_value_is_named_before_a_rule_across_columns(tmp_path: Path) -> None:
    # both 'correct' and 'score' break a rule across columns; the confidence is a bad value
    message = _import_one(tmp_path, score=0.5, confidence="high")
    assert message.endswith(":1: column 'confidence': 'high' is not a number")
    assert _import_one(tmp_path, score=0.5).endswith(
        ":1: both 'correct' and 'score' are given; "
        "a row is either multiple-choice (correct) "
        "or continuous (score)"
    )


def test_the_columns_are_the_row_models_fields_and_the_docs_list_each() -> None:
    assert REQUIRED == ("model", "item_id", "config", "frames")
    assert set(REQUIRED) | set(OPTIONAL) == set(TableRow.model_fields)
    docs = (REPO / "docs" / "importers.md").read_text(encoding="utf-8")
    section = docs.split("## `import table`", 1)[1].split("\n\n", 3)[2]
    listed = set(re.findall(r"^\| ([^|]+) \|", section, flags=re.MULTILINE))
    named = {n for cell in listed for n in re.findall(r"`(\w+)`", cell)}
    assert set(TableRow.model_fields) - named == set()
    # the order a row's bad values are reported in, as the docs state it
    stated = re.search(r"fixed column order: ([^)]*)\)", " ".join(docs.split()))
    assert stated is not None
    order = re.findall(r"`(\w+)`", stated[1])
    assert order == [name for name in TableRow.model_fields if name in order]
