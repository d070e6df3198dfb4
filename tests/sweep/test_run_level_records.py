"""A sweep's run-level records: `--batch-size auto` under `--executor ray` is a typed error
(exit 2) before anything is read, and `sweep.deterministic` in run.json says `mixed` when the
run's sessions ran with and without `--deterministic`."""

from __future__ import annotations

from pathlib import Path

import pytest

from _support.sweep import pixel_factory, write_benchmark, write_protocol
from itemscale.cli import main
from itemscale.collect.protocol import load_protocol
from itemscale.collect.sweep import Numerics, run_sweep
from itemscale.collect.sweep._run_file import run_deterministic
from itemscale.core.responses import read_run


def _protocol(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    if not suite.exists():
        write_benchmark(suite, 2)
    return write_protocol(
        tmp_path / "protocol.toml", suite, models=[{"name": "pixel", "backend": "hf", "model": "x"}]
    )


def test_auto_batches_under_ray_are_a_typed_error_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    proto = _protocol(tmp_path)
    argv = ["sweep", str(proto), "--executor", "ray", "--batch-size", "auto", "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "itemscale sweep: error: --batch-size 'auto' is for the local executor" in err
    assert "Traceback" not in err
    assert not (tmp_path / "run").exists()


def test_the_run_level_deterministic_flag_says_mixed_when_sessions_differ(
    tmp_path: Path,
) -> None:
    import torch

    proto = load_protocol(_protocol(tmp_path))
    run_sweep(proto, backend_factory=pixel_factory, progress=False, limit=1)
    _, prov = read_run(tmp_path / "run")
    assert prov["sweep"]["deterministic"] is False
    before = (
        torch.are_deterministic_algorithms_enabled(),
        torch.backends.cuda.matmul.allow_tf32,
        torch.backends.cudnn.allow_tf32,
        torch.get_float32_matmul_precision(),
        torch.backends.cudnn.deterministic,
    )
    try:
        run_sweep(
            proto,
            backend_factory=pixel_factory,
            progress=False,
            limit=2,
            numerics=Numerics(deterministic=True),
        )
    finally:  # the flags are the process's: put them back for the tests after this one
        torch.use_deterministic_algorithms(before[0])
        torch.backends.cuda.matmul.allow_tf32 = before[1]
        torch.backends.cudnn.allow_tf32 = before[2]
        torch.set_float32_matmul_precision(before[3])
        torch.backends.cudnn.deterministic = before[4]
    _, prov = read_run(tmp_path / "run")
    assert [s["deterministic"] for s in prov["sessions"]] == [False, True]
    assert prov["sweep"]["deterministic"] == "mixed"


def test_run_deterministic_of_sessions() -> None:
    yes, no, old = {"deterministic": True}, {"deterministic": False}, {"session_id": 1}
    assert run_deterministic([yes, yes]) is True
    assert run_deterministic([no, old]) is False  # a session before the flag was not
    assert run_deterministic([no, yes]) == "mixed"
    assert run_deterministic([old, yes]) == "mixed"
