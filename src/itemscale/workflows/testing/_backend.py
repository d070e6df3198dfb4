"""`check_backend`: what the sweep relies on from a backend, checked on the `Backend` entry
alone (its options refuse an unknown key by name) and, given a model to load, on the loaded
model: its spec, its serving and usage records, one response per request in order, answers
among the item's letters, failures as statuses, and `close()`."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...collect.items import Item
from ...collect.models import (
    BACKENDS,
    Backend,
    BackendSpec,
    Frames,
    LoadSettings,
    VideoRequest,
    VideoResponse,
    serving_of,
    usage_of,
)
from ...core.responses import NOANSWER, Status, TaskKind
from ._report import Findings

#: An option no backend has: its options must refuse it, naming it.
UNKNOWN_OPTION = "no_such_option_for_conformance"


@dataclass(frozen=True)
class CheckEntry:
    """A model entry as a protocol would give it (`itemscale.collect.models.ModelEntryLike`)."""

    name: str
    backend: str
    model: str
    revision: str | None = None
    dtype: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


def requests() -> list[VideoRequest]:
    """A multiple-choice item with frames, the same without (the text-only baseline), and an
    open question with frames: what a sweep hands a backend."""
    rng = np.random.default_rng(0)
    frames = Frames(rng.integers(0, 256, size=(2, 32, 32, 3), dtype=np.uint8), (0, 4), (0.0, 0.5))
    mcq = Item(
        item_id="c1", video_id="v1", question="What colour is the ball?", options=("red", "blue")
    )
    open_ = Item(
        item_id="c2",
        video_id="v1",
        task_kind=TaskKind.OPEN_QA,
        question="What happens?",
        references=("a ball rolls",),
    )
    return [VideoRequest(mcq, frames), VideoRequest(mcq, None), VideoRequest(open_, frames)]


def check_backend(
    backend: Backend | str,
    *,
    model: str | None = None,
    options: Mapping[str, Any] | None = None,
    dtype: str | None = None,
    name: str | None = None,
    settings: LoadSettings | None = None,
) -> None:
    """Check a backend (a `Backend`, or a name of `itemscale.collect.models.BACKENDS`); raises a
    `ConformanceError` listing every failure. Without `model`, only what needs no loading;
    with it, the backend loads `model` (with `options`) and answers generated requests."""
    key = backend if isinstance(backend, str) else (name or "conformance")
    found = Findings(f"backend {key!r}")
    named = BACKENDS.get(backend) if isinstance(backend, str) else backend
    entry_ = found.instance_of(named, Backend, "itemscale.collect.models.Backend")
    _check_options(entry_, found)
    if model is not None:
        entry = CheckEntry("conformance", key, model, dtype=dtype, options=dict(options or {}))
        ok, during = found.attempt(f"registering it as {key!r}", _registered, key, entry_)
        if ok:
            with during:
                _check_loaded(entry_, entry, settings or LoadSettings(), found)
    found.done()


def _registered(name: str, backend: Backend) -> AbstractContextManager[None]:
    """The backend under `name` for the check (a spec names its backend, and the spec checks
    the name against the registry), unless it is registered already."""
    if BACKENDS.get(name) is backend:
        return nullcontext()
    return BACKENDS.registered(name, backend, package="itemscale.workflows.testing")


def _check_options(backend: Backend, found: Findings) -> None:
    for part in ("parse_options", "load"):
        found.check(callable(getattr(backend, part)), f"{part} is not callable")
    if backend.fingerprint is not None:
        found.check(callable(backend.fingerprint), "fingerprint is not callable")
    try:
        backend.parse_options({UNKNOWN_OPTION: 1}, "m")
    except Exception as exc:
        found.check(
            UNKNOWN_OPTION in str(exc),
            f"parse_options refuses an unknown option without naming it: {exc}",
        )
    else:
        found.fail(
            f"parse_options accepts the unknown option {UNKNOWN_OPTION!r}: its options model "
            'must forbid extra keys (ConfigDict(extra="forbid"))'
        )


def _check_loaded(
    backend: Backend, entry: CheckEntry, settings: LoadSettings, found: Findings
) -> None:
    ok, loaded = found.attempt("load", lambda: backend.load(entry, settings))
    if not ok:
        return
    _, spec = found.attempt("spec", getattr, loaded, "spec")
    if found.check(isinstance(spec, BackendSpec), f"spec is a {type(spec).__name__}"):
        assert isinstance(spec, BackendSpec)
        found.check(spec.backend == entry.backend, f"spec.backend is {spec.backend!r}")
        found.check(spec.name == entry.name, f"spec.name is {spec.name!r}, not the entry's")
    found.attempt("serving", lambda: serving_of(loaded))
    asked = requests()
    ok, answered = found.attempt("generate", lambda: loaded.generate(asked))
    if ok:
        _check_responses(asked, answered, found)
    found.attempt("usage()", lambda: usage_of(loaded))
    found.attempt("close()", loaded.close)


def _check_responses(asked: list[VideoRequest], answered: Any, found: Findings) -> None:
    if not found.check(
        isinstance(answered, list) and len(answered) == len(asked),
        f"generate returned {type(answered).__name__} of "
        f"{len(answered) if hasattr(answered, '__len__') else '?'} for {len(asked)} requests: "
        "one VideoResponse per request, in order",
    ):
        return
    for n, (request, response) in enumerate(zip(asked, answered, strict=True)):
        where = f"response {n} ({request.item.task_kind.value}, "
        where += "text-only)" if request.frames is None else "with frames)"
        if not found.check(
            isinstance(response, VideoResponse),
            f"{where} is a {type(response).__name__}, not a VideoResponse",
        ):
            continue
        if not found.check(isinstance(response.status, Status), f"{where}: status not a Status"):
            continue
        if response.status not in (Status.OK, Status.NOANSWER):
            found.check(
                response.answer is None and bool(response.error),
                f"{where}: a failure ({response.status.value}) carries an answer or no error",
            )
            continue
        if request.item.task_kind == TaskKind.MCQA:
            letters = {*request.item.option_letters, NOANSWER}
            found.check(
                response.answer in letters,
                f"{where}: answer {response.answer!r} is not one of the item's letters "
                f"{sorted(letters)}",
            )
