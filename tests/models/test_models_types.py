"""The backend-independent pieces: request/response/spec types and answer finishing."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from itemscale.collect.items import Item
from itemscale.collect.models import (
    BackendSpec,
    DecodingSettings,
    Frames,
    VideoRequest,
    VideoResponse,
)
from itemscale.collect.models._answers import finish_response_fields, letter_probs_from_logprobs
from itemscale.core.responses import NOANSWER, Status, TaskKind

ITEM = Item(item_id="q", video_id="v", question="Q?", options=("a", "b", "c"), answer="A")


def spec(**changes: object) -> BackendSpec:
    base: dict[str, object] = {
        "backend": "hf",
        "name": "m",
        "model": "/models/m",
        "revision": "abc",
        "dtype": "bfloat16",
        "processor": {"family": "qwen2-vl", "video.patch_size": 14},
    }
    base.update(changes)
    return BackendSpec.model_validate(base)


def test_spec_id_is_a_stable_hash_of_identity_fields() -> None:
    a = spec()
    assert a.spec_id == spec().spec_id and len(a.spec_id) == 16
    # processor key order does not matter
    assert a.spec_id == spec(processor={"video.patch_size": 14, "family": "qwen2-vl"}).spec_id
    # where the weights live is provenance, not identity
    assert a.spec_id == spec(model="/elsewhere/m").spec_id
    for change in (
        {"name": "m2"},
        {"revision": "abd"},
        {"dtype": "float16"},
        {"backend": "builtin"},
        {"processor": {"family": "qwen2-vl", "video.patch_size": 16}},
    ):
        assert spec(**change).spec_id != a.spec_id, change


@given(
    st.dictionaries(
        st.text(min_size=1, max_size=8),
        st.one_of(st.integers(), st.booleans(), st.text(max_size=8), st.none()),
        max_size=6,
    )
)
def test_spec_id_follows_processor_content_only(processor: dict[str, object]) -> None:
    reordered = dict(reversed(list(processor.items())))
    assert spec(processor=processor).spec_id == spec(processor=reordered).spec_id


@given(
    st.integers(min_value=1, max_value=65536),
    st.one_of(st.integers(min_value=0, max_value=3), st.floats(min_value=0.0, max_value=3.0)),
    st.one_of(st.just(1), st.floats(min_value=0.01, max_value=1.0), st.none()),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.booleans(),
)
def test_decoding_canonical_is_the_json_dump_field_by_field(
    max_new_tokens: int, temperature: float, top_p: float | None, seed: int, score: bool
) -> None:
    """What a cell's identity hashes: every field, as `model_dump(mode="json")` writes it
    (a field added to the settings and not to `canonical` fails here)."""
    settings = DecodingSettings(
        max_new_tokens=max_new_tokens,
        temperature=temperature,
        top_p=top_p,
        seed=seed,
        score_options=score,
    )
    canonical = settings.canonical()
    dumped = settings.model_dump(mode="json")
    assert canonical == dumped and list(canonical) == list(dumped)
    assert [type(v) for v in canonical.values()] == [type(v) for v in dumped.values()]


def test_spec_and_decoding_refuse_unknown_keys_and_bad_values() -> None:
    with pytest.raises(ValidationError):
        spec(api_key="secret")
    with pytest.raises(ValidationError):
        spec(processor={"x": float("nan")})
    with pytest.raises(ValidationError):
        DecodingSettings(max_new_tokens=0)
    with pytest.raises(ValidationError):
        DecodingSettings.model_validate({"max_tokens": 3})
    with pytest.raises(ValidationError):
        DecodingSettings(top_p=0.0)


def test_frames_are_checked_where_they_enter() -> None:
    ok = np.zeros((2, 4, 4, 3), dtype=np.uint8)
    with pytest.raises(ValueError, match="uint8"):
        Frames(ok.astype(np.float32), (0, 1), (0.0, 1.0))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"\[F, H, W, 3\]"):
        Frames(ok[..., :1], (0, 1), (0.0, 1.0))
    with pytest.raises(ValueError, match="2 frames but 1 indices"):
        Frames(ok, (0,), (0.0,))
    with pytest.raises(ValueError, match="max_pixels"):
        VideoRequest(ITEM, Frames(ok, (0, 1), (0.0, 1.0)), max_pixels=0)


def test_failure_responses_never_carry_an_answer() -> None:
    failure = VideoResponse.failure(Status.TIMEOUT, "slow", 1.5)
    assert failure.answer is None and failure.raw_text is None and failure.latency_s == 1.5
    with pytest.raises(ValueError):
        VideoResponse.failure(Status.OK, "not a failure")


def test_letter_probabilities_pool_spellings_and_ignore_other_tokens() -> None:
    probs = letter_probs_from_logprobs(
        [("A", math.log(0.3)), (" A", math.log(0.1)), ("\nC", math.log(0.4)), ("Z", 0.0)], "ABC"
    )
    assert probs == pytest.approx({"A": 0.4 / 0.8, "B": 0.0, "C": 0.4 / 0.8})
    assert letter_probs_from_logprobs([("x", 0.0), ("D", 0.0)], "ABC") is None


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["A", " B", "C", "D", " x", "yes"]),
            st.floats(min_value=-30, max_value=0),
        ),
        max_size=12,
    )
)
def test_letter_probabilities_are_a_distribution_over_the_options(
    pairs: list[tuple[str, float]],
) -> None:
    probs = letter_probs_from_logprobs(pairs, "ABC")
    if probs is None:
        assert not any(token.strip() in "ABC" for token, _ in pairs)
        return
    assert list(probs) == ["A", "B", "C"]
    assert sum(probs.values()) == pytest.approx(1.0)
    assert all(0.0 <= p <= 1.0 for p in probs.values())


def test_finishing_mcqa_scores_or_extracts_never_guesses() -> None:
    probs = {"A": 0.2, "B": 0.5, "C": 0.3}
    scored = DecodingSettings(max_new_tokens=1)
    generated = DecodingSettings(max_new_tokens=16)
    assert finish_response_fields(ITEM, "C", probs, scored) == ("B", 0.5, Status.OK)
    assert finish_response_fields(ITEM, "The answer is C", probs, generated) == (
        "C",
        0.3,
        Status.OK,
    )
    assert finish_response_fields(ITEM, "I don't know", probs, generated) == (
        NOANSWER,
        None,
        Status.NOANSWER,
    )
    assert finish_response_fields(ITEM, "", None, scored) == (NOANSWER, None, Status.NOANSWER)
    assert finish_response_fields(ITEM, "(A)", None, generated) == ("A", None, Status.OK)


def test_finishing_open_tasks_has_no_parsed_answer() -> None:
    item = Item(item_id="o", video_id="v", task_kind=TaskKind.SUMMARY, question="")
    assert finish_response_fields(item, "things happen", None, DecodingSettings()) == (
        None,
        None,
        Status.OK,
    )
