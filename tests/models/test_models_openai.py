"""The `openai` backend against a real chat-completions server on 127.0.0.1."""

from __future__ import annotations

import base64
import io
import json
import math
import socket
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from PIL import Image

from _support.openai_server import ChatServer, Reply
from itemscale.collect.items import Item
from itemscale.collect.models import (
    BackendError,
    DecodingSettings,
    Frames,
    VideoRequest,
    load_backend,
)
from itemscale.collect.models._prompts import current_turn_text
from itemscale.collect.protocol import ModelEntry
from itemscale.core.responses import NOANSWER, Status, TaskKind, register_secret

MCQA = Item(
    item_id="q1",
    video_id="v1",
    question="What colour is the ball?",
    options=("red", "blue", "green", "yellow"),
    answer="B",
)
OPEN = Item(
    item_id="q2",
    video_id="v1",
    task_kind=TaskKind.OPEN_QA,
    question="What happens?",
    references=("a ball rolls",),
)


def frames(count: int = 2, seed: int = 0) -> Frames:
    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 256, size=(count, 16, 24, 3), dtype=np.uint8)
    return Frames(pixels, tuple(range(0, 10 * count, 10)), tuple(0.4 * i for i in range(count)))


def smooth_frames(count: int) -> Frames:
    """Distinct flat-colour frames with a gentle gradient: JPEG keeps them close."""
    ramp = np.linspace(0, 40, 24)[None, :, None]
    pixels = np.stack(
        [
            np.broadcast_to(np.array([40 * i, 120, 200 - 40 * i]) + ramp, (16, 24, 3))
            for i in range(count)
        ]
    ).astype(np.uint8)
    return Frames(pixels, tuple(range(count)), tuple(float(i) for i in range(count)))


def entry(server: ChatServer, **options: object) -> ModelEntry:
    return ModelEntry(
        name="served",
        backend="openai",
        model="tiny-served",
        options={"base_url": server.base_url, "backoff_base_s": 0.01, **options},
    )


def decode_data_url(url: str, mime: str) -> np.ndarray:
    prefix = f"data:{mime};base64,"
    assert url.startswith(prefix)
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(url[len(prefix) :]))).convert("RGB"))


def test_frames_go_as_image_parts_in_order_and_exact_with_png() -> None:
    given = frames(3)
    with ChatServer() as server:
        backend = load_backend(entry(server, image_format="png"))
        [response] = backend.generate(
            [VideoRequest(MCQA, given, DecodingSettings(max_new_tokens=8))]
        )
        backend.close()
    assert response.status == Status.OK and response.answer == "B"
    [sent] = server.received
    assert sent.path == "/v1/chat/completions"
    body = sent.body
    assert body["model"] == "tiny-served"
    assert body["max_tokens"] == 8 and body["temperature"] == 0.0 and body["seed"] == 0
    assert body["logprobs"] is True and body["top_logprobs"] == 20
    [message] = body["messages"]
    parts = message["content"]
    assert [p["type"] for p in parts] == ["image_url"] * 3 + ["text"]
    assert parts[-1]["text"] == current_turn_text(MCQA)
    for part, frame in zip(parts[:3], given.array, strict=True):
        np.testing.assert_array_equal(decode_data_url(part["image_url"]["url"], "image/png"), frame)
    assert response.effective_frames == 3 and response.visual_tokens is None


def test_video_input_sends_one_vllm_video_part_with_every_frame() -> None:
    given = smooth_frames(4)
    with ChatServer() as server:
        backend = load_backend(entry(server, video_input=True, jpeg_quality=95))
        backend.generate([VideoRequest(MCQA, given)])
        backend.close()
    parts = server.received[0].body["messages"][0]["content"]
    assert [p["type"] for p in parts] == ["video_url", "text"]
    url = parts[0]["video_url"]["url"]
    prefix = "data:video/jpeg;base64,"
    assert url.startswith(prefix)
    encoded = url[len(prefix) :].split(",")
    assert len(encoded) == 4
    for data, frame in zip(encoded, given.array, strict=True):
        decoded = np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB"))
        assert decoded.shape == frame.shape
        # JPEG is lossy, but each frame stays close to the one we chose (frames differ by 40).
        assert np.abs(decoded.astype(int) - frame.astype(int)).mean() < 4


def test_text_only_and_open_tasks_send_plain_text_without_logprobs() -> None:
    with ChatServer(default=Reply(text="a ball rolls")) as server:
        backend = load_backend(entry(server))
        [response] = backend.generate([VideoRequest(OPEN, None)])
        backend.close()
    body = server.received[0].body
    assert body["messages"] == [{"role": "user", "content": current_turn_text(OPEN)}]
    assert "logprobs" not in body
    assert response.status == Status.OK
    assert response.answer is None and response.raw_text == "a ball rolls"
    assert response.option_probs is None and response.effective_frames is None


def test_top_logprobs_become_option_probabilities_pooling_letter_spellings() -> None:
    tops = [("B", math.log(0.6)), (" B", math.log(0.1)), ("A", math.log(0.2)), ("x", math.log(0.1))]
    with ChatServer(default=Reply(text="B", top_logprobs=tops)) as server:
        backend = load_backend(entry(server))
        [generated, scored] = backend.generate(
            [
                VideoRequest(MCQA, frames(), DecodingSettings(max_new_tokens=8)),
                VideoRequest(MCQA, frames(), DecodingSettings(max_new_tokens=1)),
            ]
        )
        backend.close()
    for response in (generated, scored):
        assert response.option_probs is not None
        assert response.option_probs == pytest.approx(
            {"A": 0.2 / 0.9, "B": 0.7 / 0.9, "C": 0, "D": 0}
        )
        assert response.answer == "B"
        assert response.confidence == pytest.approx(0.7 / 0.9)


def test_scoring_mode_takes_the_most_probable_letter_over_the_text() -> None:
    tops = [("C", math.log(0.5)), ("A", math.log(0.3))]
    with ChatServer(default=Reply(text="C", top_logprobs=tops)) as server:
        backend = load_backend(entry(server))
        [response] = backend.generate(
            [VideoRequest(MCQA, frames(), DecodingSettings(max_new_tokens=1))]
        )
        backend.close()
    assert response.answer == "C" and response.confidence == pytest.approx(0.5 / 0.8)


def test_output_naming_no_option_is_noanswer_never_a_guess() -> None:
    with ChatServer(default=Reply(text="I don't know")) as server:
        backend = load_backend(entry(server))
        [response] = backend.generate([VideoRequest(MCQA, frames())])
        backend.close()
    assert response.status == Status.NOANSWER
    assert response.answer == NOANSWER and response.confidence is None


def test_429_and_500_are_retried_then_succeed() -> None:
    with ChatServer() as server:
        server.push(Reply(status=429), Reply(status=500))
        backend = load_backend(entry(server), max_retries=3)
        [response] = backend.generate([VideoRequest(MCQA, frames())])
        backend.close()
    assert len(server.received) == 3
    assert response.status == Status.OK and response.answer == "B"


def test_400_is_not_retried_and_is_a_model_error_without_answer() -> None:
    with ChatServer() as server:
        server.push(Reply(status=400))
        backend = load_backend(entry(server), max_retries=3)
        [response] = backend.generate([VideoRequest(MCQA, frames())])
        backend.close()
    assert len(server.received) == 1
    assert response.status == Status.MODEL_ERROR
    assert response.answer is None and response.raw_text is None
    assert response.error is not None and "HTTP 400" in response.error


def test_exhausted_retries_are_a_model_error() -> None:
    with ChatServer(default=Reply(status=503)) as server:
        backend = load_backend(entry(server), max_retries=2)
        [response] = backend.generate([VideoRequest(MCQA, frames())])
        backend.close()
    assert len(server.received) == 3
    assert response.status == Status.MODEL_ERROR and response.answer is None
    assert response.error is not None and "gave up after 3 attempts" in response.error


def _one_timed(server: ChatServer, reply: Reply, **settings: Any) -> tuple[Any, float]:
    """(the response to one request, its wall time) with the server answering `reply`."""
    server.push(reply)
    backend = load_backend(entry(server), **settings)
    start = time.perf_counter()
    [response] = backend.generate([VideoRequest(MCQA, frames())])
    elapsed = time.perf_counter() - start
    backend.close()
    return response, elapsed


def test_slow_reply_trips_the_timeout_and_is_not_retried() -> None:
    with ChatServer() as server:
        response, elapsed = _one_timed(server, Reply(delay_s=1.5), timeout_s=0.3, max_retries=3)
    assert response.status == Status.TIMEOUT and response.answer is None
    assert len(server.received) == 1
    assert elapsed < 1.4


def test_connection_refused_is_retried_then_model_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = ModelEntry(
        name="gone",
        backend="openai",
        model="m",
        options={"base_url": f"http://127.0.0.1:{port}/v1", "backoff_base_s": 0.01},
    )
    backend = load_backend(model, max_retries=2)
    [response] = backend.generate([VideoRequest(MCQA, frames())])
    backend.close()
    assert response.status == Status.MODEL_ERROR
    assert response.error is not None and "could not connect" in response.error


def test_malformed_replies_are_model_errors() -> None:
    with ChatServer() as server:
        server.push(Reply(raw_body=b"not json"), Reply(raw_body=b'{"choices": []}'))
        backend = load_backend(entry(server), concurrency=1)
        responses = backend.generate([VideoRequest(MCQA, frames()), VideoRequest(MCQA, frames())])
        backend.close()
    assert [r.status for r in responses] == [Status.MODEL_ERROR, Status.MODEL_ERROR]
    assert all(r.answer is None for r in responses)


def test_log_probabilities_of_the_wrong_shape_are_passed_over_not_read() -> None:
    """The reply's `logprobs.content` is untrusted JSON: an entry or a top that is not an
    object, or a field of the wrong type, is skipped; the first usable token decides."""
    from itemscale.collect.models._openai import first_answer_position

    good = {"token": "B", "logprob": -0.1, "top_logprobs": [{"token": "B", "logprob": -0.1}]}
    assert first_answer_position(["B", 3, None, {"token": " "}, good]) == [("B", -0.1)]
    tops = ["A", {"token": 1, "logprob": -1.0}, {"token": "C", "logprob": "x"}, {"token": "D"}]
    assert first_answer_position([{"token": "A", "top_logprobs": tops}]) == []
    assert first_answer_position([{"token": "A", "top_logprobs": "AB"}]) == []
    # no tops: the token's own log-probability, when it is a number
    assert first_answer_position([{"token": "A", "logprob": -2}]) == [("A", -2.0)]
    assert first_answer_position([{"token": "A", "logprob": None}]) == []
    assert first_answer_position([7, "x"]) is None


def test_a_choice_that_is_not_an_object_is_a_model_error() -> None:
    with ChatServer() as server:
        server.push(Reply(raw_body=b'{"choices": ["B"]}'), Reply(raw_body=b'{"choices": [{}]}'))
        backend = load_backend(entry(server), concurrency=1)
        responses = backend.generate([VideoRequest(MCQA, frames()), VideoRequest(MCQA, frames())])
        backend.close()
    assert [r.error for r in responses] == [
        "malformed chat completion: the first choice has no 'message'"
    ] * 2
    assert all(r.status == Status.MODEL_ERROR and r.answer is None for r in responses)


def test_one_failure_does_not_disturb_the_other_requests() -> None:
    with ChatServer() as server:
        server.push(Reply(status=400))
        backend = load_backend(entry(server), concurrency=1)
        responses = backend.generate([VideoRequest(MCQA, frames()) for _ in range(3)])
        backend.close()
    assert [r.status for r in responses] == [Status.MODEL_ERROR, Status.OK, Status.OK]


def test_concurrency_is_bounded_and_results_keep_request_order() -> None:
    items = [
        Item(item_id=f"o{i}", video_id="v", task_kind=TaskKind.OPEN_QA, question=f"question {i}")
        for i in range(8)
    ]
    with ChatServer(default=Reply(echo=True, delay_s=0.15)) as server:
        backend = load_backend(entry(server), concurrency=3)
        responses = backend.generate([VideoRequest(item, None) for item in items])
        backend.close()
    assert [r.raw_text for r in responses] == [f"question {i}" for i in range(8)]
    assert 2 <= server.max_in_flight <= 3


def test_api_key_comes_from_the_named_env_var_and_is_never_in_the_spec(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = "sk-test-very-secret-0123456789"
    monkeypatch.setenv("MY_SERVED_KEY", secret)
    with ChatServer() as server:
        backend = load_backend(entry(server, api_key_env="MY_SERVED_KEY"))
        backend.generate([VideoRequest(MCQA, frames())])
        backend.close()
        spec = backend.spec
    assert server.received[0].headers["Authorization"] == f"Bearer {secret}"
    assert secret not in spec.model_dump_json()
    assert secret not in repr(spec) and secret not in repr(backend)
    assert "MY_SERVED_KEY" not in spec.model_dump_json()


def test_no_key_sends_no_authorization(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ChatServer() as server:
        backend = load_backend(entry(server))
        backend.generate([VideoRequest(MCQA, None)])
        backend.close()
    assert "Authorization" not in server.received[0].headers


def test_spec_identity_ignores_runtime_settings_but_not_image_encoding() -> None:
    with ChatServer() as server:
        a = load_backend(entry(server), concurrency=1, timeout_s=5)
        b = load_backend(entry(server, backoff_base_s=0.2), concurrency=7, timeout_s=50)
        c = load_backend(entry(server, image_format="png"))
        for backend in (a, b, c):
            backend.close()
    assert a.spec.spec_id == b.spec.spec_id
    assert a.spec.spec_id != c.spec.spec_id
    assert "base_url" not in a.spec.processor


def test_unknown_option_key_is_named() -> None:
    model = ModelEntry(name="m", backend="openai", model="x", options={"base_ulr": "http://x"})
    with pytest.raises(BackendError, match="'base_ulr'"):
        load_backend(model)


def test_backoff_is_exponential_with_seeded_bounded_jitter() -> None:
    from itemscale.collect.models._openai import OpenAIBackend

    def delays(seed: int) -> list[float]:
        backend = OpenAIBackend.create(
            name="m",
            model="x",
            revision=None,
            dtype=None,
            options={"backoff_base_s": 0.5, "backoff_max_s": 3.0},
            concurrency=1,
            timeout_s=1.0,
            max_retries=4,
            rng=np.random.default_rng(seed),
        )
        try:
            return [backend._backoff_s(attempt) for attempt in range(4)]
        finally:
            backend.close()

    first, again, other = delays(1), delays(1), delays(2)
    assert first == again and first != other
    for attempt, delay in enumerate(first):
        low = min(0.5 * 2**attempt, 3.0)
        assert low <= delay <= min(2 * 0.5 * 2**attempt, 3.0)


@pytest.mark.slow
def test_a_served_tiny_transformers_model_answers_like_the_same_model_run_locally(
    tmp_path: Path,
) -> None:
    """The server runs a tiny Qwen2-VL on the frames it received (PNG, lossless) and returns its
    full next-token log-probabilities as `top_logprobs`, as vLLM does: the served backend must
    reach the local backend's text, answer and option probabilities."""
    import torch

    from _support.models_tiny import build_qwen2_vl
    from itemscale.collect.models._hf import HFBackend

    folder = build_qwen2_vl(tmp_path / "tiny", version="2")
    local = load_backend(ModelEntry(name="t", backend="hf", model=str(folder), dtype="float32"))
    assert isinstance(local, HFBackend)
    given = frames(2, seed=3)
    decoding = DecodingSettings(max_new_tokens=3)

    def respond(body: dict[str, Any]) -> tuple[str, list[tuple[str, float]]]:
        parts = body["messages"][0]["content"]
        images = [
            decode_data_url(p["image_url"]["url"], "image/png")
            for p in parts
            if p["type"] == "image_url"
        ]
        # Qwen2-VL has no absolute time, so the frames alone determine the answer.
        received = Frames(np.stack(images), given.indices, given.timestamps)
        request = VideoRequest(MCQA, received, decoding)
        inputs = local.processor_inputs([request])
        with torch.inference_mode():
            logits = local._model(**inputs).logits[0, -1].float()
        logprobs = torch.log_softmax(logits, dim=-1)
        tokenizer = local._tokenizer
        tops = [(tokenizer.decode([i]), float(logprobs[i])) for i in range(logprobs.shape[0])]
        text = local.generate([request])[0].raw_text
        return str(text), tops

    with ChatServer(default=Reply(respond=respond)) as server:
        served = load_backend(entry(server, image_format="png"))
        [remote] = served.generate([VideoRequest(MCQA, given, decoding)])
        served.close()
    [here] = local.generate([VideoRequest(MCQA, given, decoding)])
    assert remote.status == here.status and remote.raw_text == here.raw_text
    assert remote.answer == here.answer
    assert remote.option_probs is not None and here.option_probs is not None
    for letter, p in here.option_probs.items():
        assert remote.option_probs[letter] == pytest.approx(p, abs=1e-5)


# -- a deadline for the whole attempt, a reply size cap, Retry-After (issue 23) --------------


@pytest.mark.parametrize("what", ["body", "headers and body"])
def test_a_trickling_server_hits_the_whole_attempt_deadline(what: str) -> None:
    """One byte every 0.2 s never trips a per-read timeout; the attempt's deadline stops it."""
    payload = b'{"choices": [{"message": {"content": "B"}}]}' + b" " * 200
    trickle = Reply(raw_body=payload, trickle_s=0.2, trickle_headers=what != "body")
    with ChatServer() as server:
        response, elapsed = _one_timed(server, trickle, timeout_s=1.0, max_retries=2)
    assert response.status == Status.TIMEOUT and response.answer is None
    assert response.error is not None and "no whole reply within 1 s" in response.error
    assert len(server.received) == 1  # a timeout is not retried
    # the whole reply would take 50 s; the deadline ends it at 1 s (one byte's wait of slack)
    assert elapsed < 5.0


def test_a_reply_past_the_size_cap_is_refused_unread_with_or_without_its_length() -> None:
    big = b'{"choices": [{"message": {"content": "' + b"A" * 300_000 + b'"}}]}'
    with ChatServer() as server:
        server.push(Reply(raw_body=big), Reply(raw_body=big, declare_length=False))
        server.push(Reply(status=503, raw_body=big), Reply(text="C"))
        backend = load_backend(entry(server, max_reply_bytes=100_000), concurrency=1)
        declared, streamed = backend.generate([VideoRequest(MCQA, None)] * 2)
        [after_retry] = load_backend(
            entry(server, max_reply_bytes=100_000), max_retries=1
        ).generate([VideoRequest(MCQA, None)])
        [fits] = load_backend(entry(server, max_reply_bytes=400_000)).generate(
            [VideoRequest(OPEN, None)]
        )
        backend.close()
    for response in (declared, streamed, after_retry):
        assert response.status == Status.MODEL_ERROR and response.raw_text is None
        assert response.error is not None and "larger than 100000 bytes" in response.error
        assert "AAAA" not in response.error
    assert "declares" in declared.error and "went on past it" in streamed.error
    assert len(server.received) == 4  # the too-large 503 is not retried either
    assert fits.status == Status.OK  # default reply of the server: a small completion


def test_retry_after_is_honoured_up_to_its_cap() -> None:
    with ChatServer() as server:
        server.push(Reply(status=429, headers={"Retry-After": "1"}))
        backend = load_backend(entry(server), max_retries=2)
        [response] = backend.generate([VideoRequest(MCQA, None)])
        backend.close()
        first, second = server.received
    assert response.status == Status.OK
    assert second.at - first.at >= 1.0  # backoff alone (base 0.01 s) would retry at once
    with ChatServer() as server:
        server.push(Reply(status=503, headers={"Retry-After": "3600"}))
        backend = load_backend(entry(server, retry_after_max_s=0.3), max_retries=1)
        start = time.perf_counter()
        [capped] = backend.generate([VideoRequest(MCQA, None)])
        elapsed = time.perf_counter() - start
        backend.close()
        first, second = server.received
    assert capped.status == Status.OK and second.at - first.at >= 0.3
    assert elapsed < 60  # not the hour the server asked for


def test_retry_after_reads_seconds_and_http_dates() -> None:
    from datetime import UTC, datetime

    import httpx

    from itemscale.collect.models._http import retry_after_s

    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_s(httpx.Headers({"Retry-After": "7"})) == 7.0
    date = httpx.Headers({"Retry-After": "Wed, 01 Jan 2025 12:00:30 GMT"})
    assert retry_after_s(date, now=now) == 30.0
    past = httpx.Headers({"Retry-After": "Wed, 01 Jan 2025 11:00:00 GMT"})
    assert retry_after_s(past, now=now) == 0.0
    assert retry_after_s(httpx.Headers({"Retry-After": "soon"})) is None
    assert retry_after_s(httpx.Headers({})) is None


@settings(max_examples=25, deadline=None)
@example(pad_before=262, pad_after=10, status=400)  # the key straddles the 300-character cut
@example(pad_before=262, pad_after=10, status=503)
@given(
    pad_before=st.integers(min_value=0, max_value=700),
    pad_after=st.integers(min_value=0, max_value=300),
    status=st.sampled_from([200, 400, 503]),
)
def test_a_key_echoed_at_any_offset_of_any_body_is_redacted(
    pad_before: int, pad_after: int, status: int
) -> None:
    """Error bodies are cut to 300 characters: the cut comes after redaction, so a key
    straddling it leaves no part of itself (the probe padded 285 characters to leak 14)."""
    key = "sk-canary-ZQ8xK2mP7vL4nR9tB3wY"
    register_secret(key)
    text = "x" * pad_before + " " + key + " " + "y" * pad_after
    body = (
        json.dumps({"choices": [{"message": {"content": text}}]})
        if status == 200
        else json.dumps({"error": {"message": text}})
    )
    with ChatServer(default=Reply(status=status, raw_body=body.encode())) as server:
        backend = load_backend(entry(server), max_retries=0)
        [response] = backend.generate([VideoRequest(OPEN, None)])
        backend.close()
    stored = (response.error or "") + (response.raw_text or "")
    from itemscale.core.responses import redact

    stored = redact(stored)  # what the store keeps of the raw text
    for start in range(len(key) - 3):  # not even four characters of it in a row
        assert key[start : start + 4] not in stored


def test_a_completion_no_file_can_hold_is_a_model_error() -> None:
    """A lone surrogate escape (or a 5000-digit number) parses as JSON in Python but cannot be
    stored as UTF-8: the store's insert would have raised mid-sweep."""
    bodies = [
        b'{"choices": [{"message": {"content": "A \\ud800"}}]}',
        b'{"choices": [{"message": {"content": "B"}}], "n": ' + b"9" * 5000 + b"}",
    ]
    with ChatServer() as server:
        server.push(*(Reply(raw_body=b) for b in bodies))
        backend = load_backend(entry(server), concurrency=1)
        responses = backend.generate([VideoRequest(MCQA, None)] * 2)
        backend.close()
    assert [r.status for r in responses] == [Status.MODEL_ERROR] * 2
    assert all(r.error == "server reply is not JSON" and r.raw_text is None for r in responses)


def test_the_served_identity_is_what_the_replies_say() -> None:
    """The model id the server reports, its `server` and `*-version` headers and
    `system_fingerprint` where a reply carries one, each value it sent; other headers are not
    kept."""
    headers = {"Server": "uvicorn", "X-Vllm-Version": "0.11.0", "X-Request-Id": "r1"}
    with ChatServer(default=Reply(text="a ball rolls", headers=headers)) as server:
        backend = load_backend(entry(server))
        backend.generate([VideoRequest(OPEN, None), VideoRequest(OPEN, None)])
        identity = backend.served_identity()  # type: ignore[attr-defined]
        backend.close()
    assert identity == {
        "header server": ["uvicorn"],
        "header x-vllm-version": ["0.11.0"],
        "model": ["tiny-served"],
    }
