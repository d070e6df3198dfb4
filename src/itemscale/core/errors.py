"""One family for every error itemscale raises on purpose: each derives from `ItemscaleError` and
from the built-in class it always had (`ValueError`, `RuntimeError`), so a user's `except
ValueError` keeps working and the CLI catches the family once. `exit_code`: 2 for input the user
can fix (the default), 1 for a failure of the run. Imports nothing from itemscale."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, ParamSpec, TypeVar

_P = ParamSpec("_P")
_R = TypeVar("_R")


class ItemscaleError(Exception):
    """Base of every typed itemscale error; its message names the file, line or key."""

    exit_code: ClassVar[int] = 2


class DiskFullError(ItemscaleError, OSError):
    """No space (or quota) left where a command was writing; names the folder. Every writer
    renames a temporary file into place, so what was there is kept whole. Exit status 1: the
    input was fine."""

    exit_code: ClassVar[int] = 1


class ReadOnlyFolderError(ItemscaleError, OSError):
    """A folder a command must write cannot be written (a read-only mount stops root too, or no
    permission); names the folder and the file. Exit status 2."""


#: The most characters of a value a message shows (`shown_value`).
SHOWN_VALUE_CHARS = 40


def shown_value(value: Any, limit: int = SHOWN_VALUE_CHARS) -> str:
    """A value as a message shows it: its `repr` when short; a long run of digits as its ends
    with the count; other long text cut with its length (an int never through a float)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    digits = str(value).strip().lstrip("+-")
    if isinstance(value, int | str) and digits.isascii() and digits.isdigit():
        sign = "-" if str(value).strip().startswith("-") else ""
        return f"{sign}{digits[:12]}...{digits[-6:]} ({len(digits)} digits)"
    return f"{text[: limit - 3]}... ({len(text)} characters)"


def location_text(loc: Iterable[str | int], *, empty: str = "(top level)") -> str:
    """A pydantic error location as a user writes the key: `models[0].options.fps`."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path or empty


def _fields_at(model: Any, loc: Sequence[str | int]) -> list[str]:
    """The field names of the model `loc` (less its last part) lands in, through containers and
    optionals; [] where it cannot tell."""
    import typing

    current: Any = model
    for part in loc:
        while True:  # unwrap list[X], X | None, Annotated[X, ...], dict[str, X]
            args = [a for a in typing.get_args(current) if a not in (type(None), Ellipsis)]
            if not args or hasattr(current, "model_fields"):
                break
            current = args[-1]
        if isinstance(part, int) or not hasattr(current, "model_fields"):
            continue
        field = current.model_fields.get(part)
        if field is None:
            return []
        current = field.annotation
    while not hasattr(current, "model_fields"):
        args = [a for a in typing.get_args(current) if a not in (type(None), Ellipsis)]
        if not args:
            return []
        current = args[-1]
    return list(current.model_fields)


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """` (did you mean 'short_side'?)` for the closest known key, or '' when none is close."""
    import difflib

    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def validation_message(
    errors: Iterable[Mapping[str, Any]],
    *,
    empty: str = "(top level)",
    separator: str = "; ",
    indent: str = "",
    show_input: bool = False,
    model: Any = None,
) -> str:
    """Every error of a pydantic `ValidationError.errors()` as `key: message`, joined.

    Pydantic's internal location tags are dropped (they name no key of the user's file), and a
    `too_short` on a list whose items have their own errors is left out. `show_input` adds the
    offending scalar. Given `model`, an unknown key gets the closest known one
    (`grid.short_sides: Extra inputs are not permitted (did you mean 'short_side'?); known keys:
    ...`).
    """
    errors = list(errors)
    lines = []
    for err in errors:
        loc = [
            p
            for p in err.get("loc", ())
            if not (isinstance(p, str) and (p.startswith("function-") or "[" in p))
        ]
        if err.get("type") == "too_short" and any(
            e is not err and tuple(e.get("loc", ()))[:1] == tuple(err.get("loc", ()))[:1]
            for e in errors
        ):
            continue
        shown = ""
        if show_input:
            got = err.get("input")
            if not (isinstance(got, dict | list | tuple) or got is None):
                shown = f" (got {got!r})"
        message = str(err.get("msg", ""))
        if err.get("type") == "bool_type":  # "no", 0, "false" are not coerced: say what is
            message = "must be true or false (a TOML boolean, unquoted)"
        extra = err.get("type") == "extra_forbidden" and bool(loc) and isinstance(loc[-1], str)
        if extra and model is not None:
            known = _fields_at(model, loc[:-1])
            message += did_you_mean(loc[-1], known)
            if known:
                message += f"; known keys: {', '.join(known)}"
            shown = ""
        lines.append(f"{indent}{location_text(loc, empty=empty)}: {message}{shown}")
    return separator.join(lines)


# -- names kept for one release after a rename ------------------------------------------------

#: The release that removes every retired name (0.1.0 is the one that keeps them, with a
#: warning); tests/project/test_renamed_names.py fails once the package reaches it with a shim
#: still in place.
RENAMED_REMOVED_IN = "0.2.0"


def warn_renamed(old: str, new: str, *, stacklevel: int = 3) -> None:
    """The `DeprecationWarning` of a name kept for one release after issue 27 (docs/glossary.md,
    "One name per concept"); `stacklevel` 3 points at the caller's caller."""
    import warnings

    warnings.warn(
        f"{old} is deprecated: use {new} (removed in itemscale {RENAMED_REMOVED_IN}; "
        "docs/glossary.md, 'One name per concept')",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def renamed_attribute(
    module: str, namespace: Mapping[str, Any], renamed: Mapping[str, str], name: str
) -> Any:
    """A module `__getattr__` giving renamed names' values with a `DeprecationWarning`."""
    new = renamed.get(name)
    if new is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    warn_renamed(f"{module}.{name}", f"{module}.{new}", stacklevel=4)
    return namespace[new]


def renamed_keywords(**renamed: str) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Old keyword names (`old="new"`) still work for one release with a `DeprecationWarning`;
    both at once is a TypeError."""

    def decorate(func: Callable[_P, _R]) -> Callable[_P, _R]:
        @functools.wraps(func)
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            for old, new in renamed.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{func.__name__}() got both {old}= and {new}=")
                    warn_renamed(f"{func.__name__}({old}=...)", f"{func.__name__}({new}=...)")
                    kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        return wrapper

    return decorate


#: The validation context under which a stored file is read (`model_validate(data,
#: context=STORED)`): a key renamed since the file was written is read without a warning.
STORED: Mapping[str, bool] = {"stored": True}


def renamed_fields(data: Any, owner: str, context: Any, **renamed: str) -> Any:
    """A model's input with its renamed fields (`old="new"`) under their new names: user code
    passing an old name gets `renamed_keywords`' warning, a stored file read under `STORED`
    (`n_boot` in an artifact's `measures.json`) none. Both names is a ValueError."""
    if not isinstance(data, Mapping) or not any(old in data for old in renamed):
        return data
    stored = isinstance(context, Mapping) and bool(context.get("stored"))
    out = dict(data)
    for old, new in renamed.items():
        if old not in out:
            continue
        if new in out:
            raise ValueError(f"{owner}: got both {old} and {new}")
        if not stored:
            warn_renamed(f"{owner}({old}=...)", f"{owner}({new}=...)", stacklevel=5)
        out[new] = out.pop(old)
    return out


def stored_value(record: Mapping[str, Any], new: str, old: str) -> Any:
    """The value a stored JSON object holds under `new`, or under `old` (a file written before
    the rename); neither is a KeyError naming `new`."""
    if new in record:
        return record[new]
    if old in record:
        return record[old]
    raise KeyError(new)
