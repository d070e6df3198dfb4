"""`BaseVideoLM`, the contract's defaults for a backend to subclass, and the sweep's checked
reading of a backend's `serving` and `usage()` (docs/backends.md, "The backend contract")."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Sequence
from typing import Any

from ...core.errors import RENAMED_REMOVED_IN
from ._contract import BackendUsage, Serving
from ._types import BackendError, BackendSpec, VideoRequest, VideoResponse


class BaseVideoLM:
    """A base class with the contract's defaults: one request at a time, no probe, nothing to
    report (`usage()` is None), nothing to close. A subclass defines `spec` and `generate`."""

    @property
    def spec(self) -> BackendSpec:
        raise NotImplementedError(f"{type(self).__name__} defines no spec")

    @property
    def serving(self) -> Serving:
        return Serving()

    def generate(self, requests: Sequence[VideoRequest]) -> list[VideoResponse]:
        raise NotImplementedError(f"{type(self).__name__} defines no generate")

    def usage(self) -> BackendUsage | None:
        return None

    def close(self) -> None:
        return None


_warned: set[type] = set()
_warned_lock = threading.Lock()


def _without(backend: Any, member: str) -> None:
    """A backend written before `serving` and `usage()` joined the contract: taken with the
    defaults for one release, said once per class."""
    kind = type(backend)
    with _warned_lock:
        if kind in _warned:
            return
        _warned.add(kind)
    warnings.warn(
        f"{kind.__name__} has no `{member}`: a backend declares `serving` and `usage()` "
        "(subclass itemscale.collect.models.BaseVideoLM for the defaults); taken with the defaults, "
        f"which is removed in itemscale {RENAMED_REMOVED_IN} (docs/backends.md, 'The backend "
        "contract')",
        DeprecationWarning,
        stacklevel=3,
    )


def serving_of(backend: Any) -> Serving:
    """The backend's `serving`; a value of another type is a `BackendError`."""
    serving = getattr(backend, "serving", None)
    if serving is None:
        _without(backend, "serving")
        return Serving()
    if not isinstance(serving, Serving):
        raise BackendError(
            f"{type(backend).__name__}.serving is a {type(serving).__name__}, not an "
            "itemscale.collect.models.Serving"
        )
    return serving


def usage_of(backend: Any) -> BackendUsage | None:
    """The backend's `usage()`, checked as `serving_of` checks `serving`."""
    usage = getattr(backend, "usage", None)
    if usage is None:
        _without(backend, "usage")
        return None
    counted = usage()
    if counted is not None and not isinstance(counted, BackendUsage):
        raise BackendError(
            f"{type(backend).__name__}.usage() returned a {type(counted).__name__}, not an "
            "itemscale.collect.models.BackendUsage (or None)"
        )
    return counted
