"""The backend contract as the sweep reads it: `Serving` and `BackendUsage` are checked records,
`BaseVideoLM` gives a local model's defaults, a backend written before the contract is driven
with those defaults and a warning, one that declares the wrong type is a `BackendError`, and the
dry run's estimate follows a backend's declared `transport`, never its name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from _support.sweep import PixelBackend, write_benchmark, write_protocol
from itemscale.collect.models import (
    BACKENDS,
    Backend,
    BackendError,
    BackendSpec,
    BackendUsage,
    BaseVideoLM,
    FrameTransport,
    Serving,
    lazy,
    scoring_rule_of,
    serving_of,
    transport_of,
    usage_of,
)
from itemscale.collect.models._openai import OpenAIBackend
from itemscale.collect.protocol import ModelEntry, load_protocol
from itemscale.collect.sweep import plan_sweep


def test_the_records_refuse_what_cannot_be() -> None:
    assert Serving() == Serving(requests_in_flight=1, probes_first=False)
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        Serving(requests_in_flight=0)
    with pytest.raises(ValidationError, match="Extra inputs"):
        Serving(concurrency=3)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match=r"logprob_missing \(3\) exceeds logprob_requests"):
        BackendUsage(logprob_requests=2, logprob_missing=3)
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        BackendUsage(replies_cut=-1)
    assert BackendUsage().model_dump() == {
        "max_in_flight": 0,
        "logprob_requests": 0,
        "logprob_missing": 0,
        "replies_cut": 0,
        "reply_chars_cut": 0,
    }


class Minimal(BaseVideoLM):
    @property
    def spec(self) -> BackendSpec:
        return BackendSpec(backend="hf", name="m", model="x")

    def generate(self, requests: Any) -> list[Any]:
        return []


class Legacy:
    """A backend as the contract was before `serving` and `usage()`."""

    spec = BackendSpec(backend="hf", name="m", model="x")

    def generate(self, requests: Any) -> list[Any]:
        return []

    def close(self) -> None:
        pass


def test_base_defaults_and_a_legacy_backend_are_a_local_models() -> None:
    minimal = Minimal()
    assert serving_of(minimal) == Serving() and usage_of(minimal) is None
    minimal.close()
    with pytest.deprecated_call(match=r"Legacy has no `serving`.*removed in itemscale 0\.2\.0"):
        assert serving_of(Legacy()) == Serving()
    assert usage_of(Legacy()) is None  # said once per class


def test_a_contract_member_of_the_wrong_type_is_a_backend_error() -> None:
    class Odd(Minimal):
        @property
        def serving(self) -> Any:
            return {"requests_in_flight": 4}

        def usage(self) -> Any:
            return {"max_in_flight": 1}

    with pytest.raises(
        BackendError, match=r"Odd\.serving is a dict, not an itemscale\.collect\.models"
    ):
        serving_of(Odd())
    with pytest.raises(BackendError, match=r"Odd\.usage\(\) returned a dict, not an"):
        usage_of(Odd())


def test_the_served_backend_declares_its_serving_and_counts() -> None:
    served = OpenAIBackend.create(
        name="s",
        model="m",
        revision=None,
        dtype=None,
        options={},
        concurrency=5,
        timeout_s=1.0,
        max_retries=0,
        rng=np.random.default_rng(0),
    )
    try:
        assert served.serving == Serving(requests_in_flight=5, probes_first=True)
        assert served.usage() == BackendUsage()
    finally:
        served.close()


def test_transport_and_scoring_rule_come_from_the_registry() -> None:
    entry = ModelEntry(name="s", backend="openai", model="m")
    assert transport_of(entry) == FrameTransport.IMAGE_PARTS
    video = entry.model_copy(update={"options": {"video_input": True}})
    assert transport_of(video) == FrameTransport.VIDEO
    assert transport_of(entry.model_copy(update={"backend": "hf"})) == FrameTransport.IN_PROCESS
    local = ModelEntry(name="h", backend="hf", model="x", options={"mcqa_scoring": "likelihood"})
    assert scoring_rule_of(local) == ("likelihood", "the protocol's options set mcqa_scoring")
    assert FrameTransport.VIDEO.description == "over the network, one video input"


@pytest.fixture
def plugin_backends() -> Iterator[None]:
    """Two backends the sweep knows only by what they declare: one sending image parts."""
    parse = lazy("itemscale.collect.models._openai:parse_options")

    def load(entry: Any, settings: Any) -> PixelBackend:
        return PixelBackend(name=entry.name)

    images = Backend(
        parse_options=parse, load=load, transport=lambda entry: FrameTransport.IMAGE_PARTS
    )
    with (
        BACKENDS.registered("images", images),
        BACKENDS.registered("local", Backend(parse_options=parse, load=load)),
    ):
        yield


def test_the_dry_run_estimate_follows_the_declared_transport(
    plugin_backends: None, tmp_path: Path
) -> None:
    suite = write_benchmark(tmp_path / "suite", 2)

    def tokens(backend: str, options: dict[str, Any] | None = None) -> int:
        model: dict[str, Any] = {"name": "m", "backend": backend, "model": "x"}
        if options:
            model["options"] = options
        path = write_protocol(tmp_path / f"{backend}.toml", suite, frames=(2, 4), models=[model])
        return plan_sweep(load_protocol(path)).visual_tokens

    served, video, hf = tokens("openai"), tokens("openai", {"video_input": True}), tokens("hf")
    assert served > hf == video > 0  # image parts: each frame its own temporal patch
    assert tokens("images") == served
    assert tokens("local") == hf
