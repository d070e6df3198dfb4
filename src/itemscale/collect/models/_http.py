"""The served backend's HTTP plumbing: a whole-attempt deadline, a reply size cap, Retry-After.

httpx's `timeout` bounds each socket operation, not a request: a server that sends one byte
every half second never trips a 3-second read timeout and holds a cell for minutes. Here every
connect, read and write of an attempt gets at most the time left before the attempt's deadline
(a thread-local set around the attempt: a sync httpx client does its I/O in the calling thread),
so the attempt ends at its deadline whatever the server's pace. The body is read in chunks and
refused past `max_bytes` rather than held whole in memory.
"""

from __future__ import annotations

import math
import threading
import time
import urllib.request
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpcore
import httpx

_DEADLINE = threading.local()

#: httpcore's exceptions as httpx names them (httpx's own transport maps them the same way).
_EXCEPTIONS: dict[type[Exception], type[httpx.TransportError]] = {
    httpcore.ConnectTimeout: httpx.ConnectTimeout,
    httpcore.ReadTimeout: httpx.ReadTimeout,
    httpcore.WriteTimeout: httpx.WriteTimeout,
    httpcore.PoolTimeout: httpx.PoolTimeout,
    httpcore.ConnectError: httpx.ConnectError,
    httpcore.ReadError: httpx.ReadError,
    httpcore.WriteError: httpx.WriteError,
    httpcore.RemoteProtocolError: httpx.RemoteProtocolError,
    httpcore.LocalProtocolError: httpx.LocalProtocolError,
    httpcore.ProxyError: httpx.ProxyError,
    httpcore.UnsupportedProtocol: httpx.UnsupportedProtocol,
}


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Every socket operation of this thread's requests inside the block ends by `seconds`
    from now (a passed deadline is a timeout of the operation in progress)."""
    _DEADLINE.at = time.monotonic() + seconds
    try:
        yield
    finally:
        _DEADLINE.at = None


def _bounded(timeout: float | None, expired: type[Exception]) -> float | None:
    at: float | None = getattr(_DEADLINE, "at", None)
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise expired("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _bounded(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _bounded(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, bounded))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._backend = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, httpcore.ConnectTimeout)
        stream = self._backend.connect_tcp(host, port, bounded, local_address, socket_options)
        return _DeadlineStream(stream)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


@contextmanager
def _as_httpx() -> Iterator[None]:
    try:
        yield
    except (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError) as exc:
        kind = next((_EXCEPTIONS[c] for c in type(exc).__mro__ if c in _EXCEPTIONS), None)
        raise (kind or httpx.TransportError)(str(exc)) from exc
    except (httpcore.ProxyError, httpcore.UnsupportedProtocol) as exc:
        raise _EXCEPTIONS[type(exc)](str(exc)) from exc


class _Body(httpx.SyncByteStream):
    def __init__(self, stream: Iterable[bytes]) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        with _as_httpx():
            yield from self._stream

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()


def environment_proxy(base_url: str) -> str | None:
    """The proxy the environment names for `base_url` (None: connect directly)."""
    url = httpx.URL(base_url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(url.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(url.host):
        return None
    return proxy


class DeadlineTransport(httpx.BaseTransport):
    """httpcore's connection pool on a network backend that honours `deadline`."""

    def __init__(self, *, max_connections: int, proxy: str | None = None) -> None:
        ssl_context = httpx.create_ssl_context()
        backend = _DeadlineBackend()
        self._pool: httpcore.ConnectionPool
        if proxy is not None:
            self._pool = httpcore.HTTPProxy(
                proxy_url=proxy,
                ssl_context=ssl_context,
                max_connections=max_connections,
                network_backend=backend,
            )
        else:
            self._pool = httpcore.ConnectionPool(
                ssl_context=ssl_context, max_connections=max_connections, network_backend=backend
            )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.SyncByteStream)
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _as_httpx():
            response = self._pool.handle_request(core)
        assert isinstance(response.stream, Iterable)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_Body(response.stream),
            extensions=response.extensions,
        )

    def close(self) -> None:
        self._pool.close()


class ReplyTooLarge(Exception):
    """A reply body past the size cap: not read further, and none of it kept."""

    def __init__(self, limit: int, declared: int | None) -> None:
        seen = f"declares {declared} bytes" if declared is not None else "went on past it"
        super().__init__(
            f"reply larger than {limit} bytes (it {seen}; raise the model's max_reply_bytes "
            "option if it is genuine); its body was not kept"
        )


@dataclass(frozen=True, slots=True)
class Reply:
    status_code: int
    headers: httpx.Headers
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")


def read_reply(response: httpx.Response, max_bytes: int) -> Reply:
    """The whole body of a streamed response, or `ReplyTooLarge` once it passes `max_bytes`
    (decoded bytes: a compressed body counts at its decompressed size)."""
    declared = response.headers.get("content-length")
    size_said = int(declared) if declared is not None and declared.isdigit() else None
    if size_said is not None and size_said > max_bytes:
        raise ReplyTooLarge(max_bytes, size_said)
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise ReplyTooLarge(max_bytes, None)
        chunks.append(chunk)
    return Reply(response.status_code, response.headers, b"".join(chunks))


def retry_after_s(headers: httpx.Headers, *, now: datetime | None = None) -> float | None:
    """Seconds a `Retry-After` header asks to wait (delay-seconds or an HTTP date), None when
    absent or unreadable."""
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    wait = (when - (now or datetime.now(UTC))).total_seconds()
    return max(0.0, wait) if math.isfinite(wait) else None
