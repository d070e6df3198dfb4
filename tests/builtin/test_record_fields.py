"""The builtin model's JSON records are their dataclasses' `asdict`, typed by a TypedDict that
declares the same fields in the same order with the same types: a field added to one and not
the other fails here, not in a file a later run cannot read."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from recipes.builtin_model._checkpoint import StepFields, StepRecord, step_fields
from recipes.builtin_model._eval import EvalRecord, EvalRecordFields
from recipes.builtin_model._slice import SliceAnswer, SliceAnswerRecord


@pytest.mark.parametrize(
    ("record", "fields"),
    [(StepRecord, StepFields), (EvalRecord, EvalRecordFields), (SliceAnswer, SliceAnswerRecord)],
)
def test_the_typed_dict_declares_the_dataclass_fields(record: type, fields: type) -> None:
    declared = typing.get_type_hints(fields)
    hints = typing.get_type_hints(record)
    assert list(declared) == [f.name for f in dataclasses.fields(record)]
    assert declared == hints


def test_a_step_is_written_whole() -> None:
    step = StepRecord(
        step=3, loss=0.5, seconds=1.25, items=4, frames=8, height=56, width=56, text_only=False
    )
    assert step_fields(step) == {
        "step": 3,
        "loss": 0.5,
        "seconds": 1.25,
        "items": 4,
        "frames": 8,
        "height": 56,
        "width": 56,
        "text_only": False,
    }
