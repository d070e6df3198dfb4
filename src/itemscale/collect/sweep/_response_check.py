"""A backend's response checked at the boundary: a backend is a plugin, and nothing else stands
between what it returns and the store. A field of the wrong type makes the cell a `model_error`
naming the field (one bad reply never ends the sweep); a right-typed value that cannot be a
measurement (a NaN probability, negative visual tokens) is stored as null and counted, so the
store never holds `NaN`, `Infinity` or an impossible count. numpy numbers become Python's."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Mapping
from numbers import Integral, Real
from typing import Any, TypeGuard

from ...core.responses import Status
from ..models import VideoResponse

_TEXT_FIELDS = ("raw_text", "answer", "error", "scoring_rule")
_COUNT_FIELDS = ("visual_tokens", "pixels", "effective_frames")
#: the smallest value a count field may hold (a frame's pixels are at least 1)
_COUNT_MIN = {"visual_tokens": 0, "pixels": 1, "effective_frames": 0}


class ResponseFieldError(ValueError):
    """A response field of a type no backend may return; the message names the field."""


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _wrong(name: str, expected: str, value: object) -> ResponseFieldError:
    return ResponseFieldError(
        f"backend response field {name!r}: expected {expected}, got "
        f"{type(value).__name__} {_shown(value)}"
    )


def _is_real(value: object) -> TypeGuard[Real]:
    return isinstance(value, Real) and not isinstance(value, bool)


def _is_count(value: object) -> TypeGuard[Integral]:
    return isinstance(value, Integral) and not isinstance(value, bool)


def _status(value: object) -> Status:
    if isinstance(value, str):
        try:
            return Status(value)
        except ValueError:
            pass
    known = ", ".join(s.value for s in Status)
    raise _wrong("status", f"one of {known}", value)


def _probs(value: object, nulled: Counter[str]) -> dict[str, float] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise _wrong("option_probs", "a mapping of option letter to probability, or None", value)
    probs: dict[str, float] = {}
    for key, p in value.items():
        if not isinstance(key, str):
            raise _wrong("option_probs", "option letters (strings) as keys", key)
        if not _is_real(p):
            raise _wrong(f"option_probs[{key!r}]", "a number", p)
        probs[key] = float(p)
    if not all(math.isfinite(p) and 0.0 <= p <= 1.0 for p in probs.values()):
        nulled[
            "option_probs (a value not a probability in [0, 1]: NaN, infinite or out of range)"
        ] += 1
        return None
    return probs


def _real(name: str, value: object, nulled: Counter[str], *, unit: bool) -> float | None:
    """None stays None; NaN, infinite, negative (a probability: above 1) is nulled and counted."""
    if value is None:
        return None
    if not _is_real(value):
        raise _wrong(name, "a number or None", value)
    x = float(value)
    if not math.isfinite(x) or x < 0.0 or (unit and x > 1.0):
        what = "in [0, 1]" if unit else "finite and >= 0"
        nulled[f"{name} (not {what})"] += 1
        return None
    return x


def checked_response(response: object) -> tuple[VideoResponse, Counter[str]]:
    """The response with every field of its column's type, and the values nulled (by reason); a
    field of a wrong type raises `ResponseFieldError` naming it."""
    if not isinstance(response, VideoResponse):
        raise ResponseFieldError(
            f"backend returned {type(response).__name__} {_shown(response)}, not a VideoResponse"
        )
    nulled: Counter[str] = Counter()
    changes: dict[str, Any] = {"status": _status(response.status)}
    for name in _TEXT_FIELDS:
        value = getattr(response, name)
        if value is not None and not isinstance(value, str):
            raise _wrong(name, "a string or None", value)
    for name in _COUNT_FIELDS:
        value = getattr(response, name)
        if value is None:
            continue
        if not _is_count(value):
            raise _wrong(name, "an integer or None", value)
        count = int(value)
        if count < _COUNT_MIN[name]:
            nulled[f"{name} (below {_COUNT_MIN[name]})"] += 1
            changes[name] = None
        else:
            changes[name] = count
    changes["option_probs"] = _probs(response.option_probs, nulled)
    changes["confidence"] = _real("confidence", response.confidence, nulled, unit=True)
    changes["latency_s"] = _real("latency_s", response.latency_s, nulled, unit=False)
    return dataclasses.replace(response, **changes), nulled
