"""A toy itemscale backend: picks the option the frames' mean pixel points at, and counts what
it was asked. Installed, it registers `backend = "toy"` through its entry point."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from itemscale.collect.models import (
    Backend,
    BackendSpec,
    BackendUsage,
    BaseVideoLM,
    LoadSettings,
    ModelEntryLike,
    Serving,
    VideoLM,
    VideoRequest,
    VideoResponse,
    completed_response,
    parse_backend_options,
)


class ToyOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    shift: int = Field(default=0, ge=0)  # changes the answers: recorded in the spec


def parse_options(options: dict[str, Any], model_name: str) -> ToyOptions:
    return parse_backend_options(ToyOptions, options, model_name)


class ToyBackend(BaseVideoLM):
    def __init__(self, spec: BackendSpec, shift: int, in_flight: int) -> None:
        self._spec, self._shift, self._in_flight = spec, shift, in_flight
        self._most = self._scored = 0

    @property
    def spec(self) -> BackendSpec:
        return self._spec

    @property
    def serving(self) -> Serving:  # hand it `--concurrency` requests at once
        return Serving(requests_in_flight=self._in_flight)

    def generate(self, requests: Sequence[VideoRequest]) -> list[VideoResponse]:
        self._most = max(self._most, len(requests))
        return [self._one(request) for request in requests]

    def _one(self, request: VideoRequest) -> VideoResponse:
        letters = request.item.option_letters
        if not letters:  # an open question
            return completed_response(
                request, "no idea", None, latency_s=0.0, visual_tokens=None, pixels=None
            )
        mean = 0 if request.frames is None else int(request.frames.array.mean())
        letter = letters[(mean + self._shift) % len(letters)]
        self._scored += 1
        probs = {x: float(x == letter) for x in letters}
        return completed_response(
            request, letter, probs, latency_s=0.0, visual_tokens=None, pixels=None
        )

    def usage(self) -> BackendUsage:
        return BackendUsage(max_in_flight=self._most, logprob_requests=self._scored)


def load(entry: ModelEntryLike, settings: LoadSettings) -> VideoLM:
    options = parse_options(dict(entry.options or {}), entry.name)
    spec = BackendSpec(
        backend=entry.backend,
        name=entry.name,
        model=entry.model,
        processor={"shift": options.shift},
    )
    return ToyBackend(spec, options.shift, settings.concurrency)


def register_backends(register: Callable[[str, Backend], None]) -> None:
    register("toy", Backend(parse_options=parse_options, load=load))
