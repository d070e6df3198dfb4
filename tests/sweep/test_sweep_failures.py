"""Failed sweeps say so: a probe that times out stops the sweep as a refused one does (exit 1);
a sweep whose cells run this time fail more than a quarter of the time exits 3 and says how many
of which kind (fewer: exit 0 and the count); a `split` no item has is an error naming it and the
splits there are (docs/sweep.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from _support.openai_server import ChatServer, Reply
from _support.sweep import write_benchmark, write_protocol
from itemscale.cli import main


def _served(tmp_path: Path, server: ChatServer, n_items: int, extra: str = "") -> Path:
    suite = write_benchmark(tmp_path / "suite", n_items)
    return write_protocol(
        tmp_path / "p.toml",
        suite,
        frames=(2, 4),
        extra=extra,
        models=[
            {
                "name": "served",
                "backend": "openai",
                "model": "m",
                "options": {"base_url": server.base_url},
            }
        ],
    )


def _sweep(proto: Path, *flags: str) -> int:
    return main(["sweep", str(proto), "--no-progress", "--max-retries", "0", *flags])


def test_a_hung_server_stops_the_sweep_at_its_first_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ChatServer(default=Reply(delay_s=3.0)) as server:
        proto = _served(tmp_path, server, 3)
        assert _sweep(proto, "--timeout", "0.5") == 1
        assert len(server.received) == 1  # not one request per cell
    err = capsys.readouterr().err
    assert "did not answer the first request in time" in err
    assert "stopped before running the rest" in err


@pytest.mark.parametrize(("failing", "expected"), [(13, 3), (1, 0)])
def test_a_mostly_failed_sweep_exits_3_and_says_how_many_of_which_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], failing: int, expected: int
) -> None:
    with ChatServer(default=Reply(text="B")) as server:
        # the probe succeeds, then `failing` cells are refused and one times out
        server.push(Reply(text="B"), *[Reply(status=400)] * failing, Reply(delay_s=8.0))
        proto = _served(tmp_path, server, 6)  # 36 cells
        assert _sweep(proto, "--timeout", "3") == expected  # slack for a loaded machine
    err = capsys.readouterr().err
    assert f"{failing + 1} of 36 cells run failed (model_error {failing}, timeout 1)" in err
    assert ("the exit status is 3" in err) == (expected == 3)


def test_a_split_no_item_has_is_an_error_naming_the_splits_there_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ChatServer() as server:
        proto = _served(tmp_path, server, 2)
        text = proto.read_text().replace('kind = "synthetic"', 'kind = "synthetic"\nsplit = "tset"')
        proto.write_text(text)
        assert _sweep(proto) == 2
        assert not server.received
    err = capsys.readouterr().err
    assert "benchmark.split = 'tset' matches none of its 4 item(s)" in err
    assert "'test'" in err
    assert not (tmp_path / "run").exists()
