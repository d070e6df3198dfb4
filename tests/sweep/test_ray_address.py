"""A Ray address nothing answers on is refused at once, by name, before `ray.init` (which
would wait there for minutes without a word); nothing is stored."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from _support.sweep import pixel_factory, write_benchmark, write_protocol
from itemscale.collect.protocol import load_protocol
from itemscale.collect.sweep import RayUnreachableError, run_sweep
from itemscale.collect.sweep._ray import check_reachable


def _closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_closed_port_is_refused_by_name() -> None:
    port = _closed_port()
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        with pytest.raises(RayUnreachableError) as exc:
            check_reachable(address, timeout=2)
        assert repr(address) in str(exc.value) and "--ray-address" in str(exc.value)
        assert exc.value.exit_code == 2


def test_a_listening_port_passes_and_ray_own_rules_are_left_alone() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    accepted = threading.Thread(target=lambda: server.accept()[0].close(), daemon=True)
    accepted.start()
    try:
        check_reachable(f"127.0.0.1:{server.getsockname()[1]}", timeout=2)
    finally:
        accepted.join(timeout=5)
        server.close()
    for address in (None, "auto", "local", "not-an-address"):
        check_reachable(address, timeout=0.01)  # Ray's own rules or Ray's own error


def test_an_address_that_never_answers_times_out_within_the_bound() -> None:
    # 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never routed, so a connection there hangs (or is
    # refused at once by a machine without a route): either way a typed error, bounded.
    started = time.monotonic()
    with pytest.raises(RayUnreachableError):
        check_reachable("192.0.2.1:6379", timeout=1)
    assert time.monotonic() - started < 5


@pytest.mark.ray
def test_a_sweep_with_an_unreachable_address_stores_nothing(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    suite = write_benchmark(tmp_path / "suite", 1)
    protocol = load_protocol(
        write_protocol(
            tmp_path / "p.toml",
            suite,
            output=tmp_path / "run",
            models=[{"name": "pixel", "backend": "hf", "model": "x"}],
        )
    )
    with pytest.raises(RayUnreachableError):
        run_sweep(
            protocol,
            executor="ray",
            ray_address=f"127.0.0.1:{_closed_port()}",
            backend_factory=pixel_factory,  # type: ignore[arg-type]
            progress=False,
        )
    assert not (tmp_path / "run" / "responses.parquet").exists()
