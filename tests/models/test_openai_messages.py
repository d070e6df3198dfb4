"""What a failed served request says, in plain words: a redirect named as a redirect (with its
target, redacted), a malformed completion by what it lacks, connection failures without Python
exception class names (docs/backends.md)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from _support.openai_server import ChatServer, Reply
from itemscale.collect.items import Item
from itemscale.collect.models import Frames, VideoRequest, load_backend
from itemscale.collect.protocol import ModelEntry
from itemscale.core.responses import Status

MCQA = Item(item_id="q1", video_id="v1", question="Which?", options=("red", "blue"), answer="B")
#: Python exception class names a message must not show.
CLASS_NAME = re.compile(r"\b(?:[A-Z][a-z]+){1,3}(?:Error|Exception|Timeout)\b")


def _frames() -> Frames:
    pixels = np.zeros((2, 8, 8, 3), dtype=np.uint8)
    return Frames(pixels, (0, 1), (0.0, 0.5))


def _one(server: ChatServer, reply: Reply) -> str:
    server.push(reply)
    backend = load_backend(
        ModelEntry(
            name="served",
            backend="openai",
            model="m",
            options={"base_url": server.base_url, "backoff_base_s": 0.01},
        ),
        max_retries=0,
    )
    [response] = backend.generate([VideoRequest(MCQA, _frames())])
    backend.close()
    assert response.status == Status.MODEL_ERROR
    assert response.error is not None
    assert not CLASS_NAME.search(response.error), response.error
    return response.error


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_is_named_as_one_with_its_target(status: int) -> None:
    with ChatServer() as server:
        said = _one(
            server,
            Reply(
                status=status,
                raw_body=b"",
                headers={"Location": "https://new.example/v1/chat?api_key=sk-Zz9Yy8Xx7Ww6Vv5Uu4"},
            ),
        )
    assert f"the server redirected the request (HTTP {status} to https://new.example" in said
    assert "api_key=[REDACTED]" in said and "Zz9Yy8" not in said
    assert "not JSON" not in said


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b'{"choices": []}', "'choices' is not a non-empty list"),
        (b'{"id": "x"}', "no 'choices'"),
        (b'{"choices": [{"message": {"role": "assistant"}}]}', "the message has no 'content'"),
        (b'{"choices": [{"index": 0}]}', "the first choice has no 'message'"),
        (b'{"choices": ["text"]}', "the first choice has no 'message'"),
        (b'{"choices": [{"message": {"content": 7}}]}', "the message's content is not text"),
    ],
)
def test_a_malformed_completion_says_what_it_lacks(body: bytes, said: str) -> None:
    with ChatServer() as server:
        error = _one(server, Reply(raw_body=body))
    assert error == f"malformed chat completion: {said}"
