"""`ResponseRow`, the typed row producers build, follows `RESPONSE_COLUMNS`: the same keys in the
same order, each with its column's Python type, never None for a required column."""

from __future__ import annotations

import types
import typing

from itemscale.core.responses import RESPONSE_COLUMNS, ResponseRow

_PYTHON: dict[str, object] = {
    "text": str,
    "real": float,
    "integer": int,
    "integer_list": list[int],
    "real_list": list[float],
}


def test_response_row_keys_are_the_columns_in_order() -> None:
    assert list(typing.get_type_hints(ResponseRow)) == [c.name for c in RESPONSE_COLUMNS]
    # every key optional: a producer writes what it knows, normalising fills the rest
    assert ResponseRow.__required_keys__ == frozenset()


def test_response_row_types_are_the_columns_kinds() -> None:
    hints = typing.get_type_hints(ResponseRow)
    for column in RESPONSE_COLUMNS:
        expected = _PYTHON[column.kind]
        hint = hints[column.name]
        if column.required:
            assert hint == expected, column.name
        else:
            assert isinstance(hint, types.UnionType), column.name
            assert set(typing.get_args(hint)) == {expected, type(None)}, column.name
