"""A real OpenAI-compatible chat-completions server on 127.0.0.1 for the backend tests.

It answers with a scripted sequence of behaviours (an HTTP error code, a slow reply, a reply
with chosen text and top log-probabilities, a malformed body) and records every request it
received (path, headers, JSON body), so the tests can check both what the backend sent and how it
handled each failure.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted behaviour. `status` other than 200 sends `body` as an error."""

    status: int = 200
    text: str = "B"
    top_logprobs: list[tuple[str, float]] | None = None
    delay_s: float = 0.0
    raw_body: bytes | None = None
    #: Answer with the first line of the request's last text part (to check ordering).
    echo: bool = False
    #: Compute (text, top log-probabilities) from the request body, like a real model server.
    respond: Callable[[dict[str, Any]], tuple[str, list[tuple[str, float]] | None]] | None = None
    #: Extra response headers (e.g. Retry-After).
    headers: dict[str, str] = field(default_factory=dict)
    #: Send the response one byte every `trickle_s` (the status line and headers too, unless
    #: `trickle_headers` is off: then they go at once and only the body trickles).
    trickle_s: float = 0.0
    trickle_headers: bool = True
    #: Send no Content-Length: the body ends when the connection closes.
    declare_length: bool = True


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    #: time.monotonic() when the request arrived
    at: float = 0.0


@dataclass
class ChatServer:
    """Start with `with ChatServer() as server:`; `server.base_url` ends with `/v1`."""

    default: Reply = field(default_factory=Reply)
    script: deque[Reply] = field(default_factory=deque)
    received: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    in_flight: int = 0
    max_in_flight: int = 0
    #: Report `usage.prompt_tokens` as (words of the text parts) + this many per image part,
    #: as a server whose processor turns each image into that many tokens; None: no usage.
    tokens_per_image: int | None = None
    #: A server that reads only the first N image parts of a request (a frame cap): the rest
    #: add no tokens.
    max_images: int | None = None
    #: A server that resamples every `video_url` part to this many frames, however many it
    #: holds (None: a video/jpeg data URL counts its comma-separated frames).
    video_frames: int | None = None

    def __enter__(self) -> ChatServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    server.received.append(
                        Recorded(self.path, dict(self.headers), body, time.monotonic())
                    )
                    reply = server.script.popleft() if server.script else server.default
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    if reply.delay_s:
                        time.sleep(reply.delay_s)
                finally:
                    # Counted out before the reply is written: once the client has the reply it
                    # may send its next request before this thread would run a `finally` after
                    # the write, which read as two requests in flight at concurrency 1.
                    with server.lock:
                        server.in_flight -= 1
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._answer(reply, body)

            def _answer(self, reply: Reply, body: dict[str, Any]) -> None:
                if reply.raw_body is not None:
                    payload = reply.raw_body
                elif reply.status != 200:
                    payload = json.dumps(
                        {"error": {"message": f"scripted {reply.status}"}}
                    ).encode()
                else:
                    payload = json.dumps(
                        completion(
                            reply,
                            body,
                            server.tokens_per_image,
                            max_images=server.max_images,
                            video_frames=server.video_frames,
                        )
                    ).encode()
                head = [f"HTTP/1.0 {reply.status} scripted", "Content-Type: application/json"]
                if reply.declare_length:
                    head.append(f"Content-Length: {len(payload)}")
                head += [f"{k}: {v}" for k, v in reply.headers.items()]
                header = ("\r\n".join(head) + "\r\n\r\n").encode()
                if not reply.trickle_s:
                    self.wfile.write(header + payload)
                    return
                slow = header + payload
                if not reply.trickle_headers:
                    self.wfile.write(header)
                    slow = payload
                for position in range(len(slow)):
                    self.wfile.write(slow[position : position + 1])
                    self.wfile.flush()
                    time.sleep(reply.trickle_s)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def push(self, *replies: Reply) -> None:
        with self.lock:
            self.script.extend(replies)


def last_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return str([p for p in content if p["type"] == "text"][-1]["text"])


def prompt_tokens(
    body: dict[str, Any],
    tokens_per_image: int,
    *,
    max_images: int | None = None,
    video_frames: int | None = None,
) -> int:
    """Words of the text parts plus `tokens_per_image` per frame the server reads: each image
    part (the first `max_images` only, with a cap), each frame of a video part (or
    `video_frames` of them, for a server that resamples a video to a fixed count)."""
    words = images = frames = 0
    for message in body.get("messages", []):
        content = message["content"]
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for part in parts:
            if part["type"] == "text":
                words += len(part["text"].split())
            elif part["type"] == "video_url":
                url = str(part["video_url"]["url"])
                held = len(url.split("base64,", 1)[-1].split(","))
                frames += video_frames if video_frames is not None else held
            else:
                images += 1
    if max_images is not None:
        images = min(images, max_images)
    return words + tokens_per_image * (images + frames)


def completion(
    reply: Reply,
    body: dict[str, Any],
    tokens_per_image: int | None = None,
    *,
    max_images: int | None = None,
    video_frames: int | None = None,
) -> dict[str, Any]:
    text = last_text(body).splitlines()[0] if reply.echo else reply.text
    if reply.respond is not None:
        text, tops = reply.respond(body)
        reply = Reply(text=text, top_logprobs=tops)
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": text},
        "finish_reason": "stop",
    }
    if body.get("logprobs") and reply.top_logprobs is not None:
        first = reply.top_logprobs[0]
        choice["logprobs"] = {
            "content": [
                {
                    "token": first[0],
                    "logprob": first[1],
                    "top_logprobs": [{"token": t, "logprob": lp} for t, lp in reply.top_logprobs],
                }
            ]
        }
    out: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": body.get("model"),
        "choices": [choice],
    }
    if tokens_per_image is not None:
        out["usage"] = {
            "prompt_tokens": prompt_tokens(
                body, tokens_per_image, max_images=max_images, video_frames=video_frames
            )
        }
    return out
