"""Names retired by issue 27 ("one name per concept", docs/glossary.md) still work for one
release: each resolves to what its new name is, with a DeprecationWarning that names it."""

from __future__ import annotations

import importlib

import pytest

#: (module, retired name, its one name now)
RENAMED_MODULE_NAMES = [
    ("itemscale.responses", "normalize_answer", "normalise_answer"),
]


@pytest.mark.parametrize(("module", "old", "new"), RENAMED_MODULE_NAMES)
def test_a_retired_module_name_warns_and_is_the_new_one(module: str, old: str, new: str) -> None:
    face = importlib.import_module(module)
    with pytest.deprecated_call(match=rf"{module}\.{old} is deprecated: use {module}\.{new}"):
        value = getattr(face, old)
    assert value is getattr(face, new)
    assert old not in face.__all__ and new in face.__all__


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    face = importlib.import_module("itemscale.responses")
    with pytest.raises(AttributeError, match="has no attribute 'normalise_answers'"):
        face.normalise_answers  # noqa: B018
