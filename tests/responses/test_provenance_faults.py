"""Provenance is never overwritten and the lock cannot be lost: a damaged run.json stops every
writer (a sweep as `analyze`), deleting run.lock under a running command does not let a second
one in, a killed first import is named as such by every command, and a read-only run folder
(a real read-only bind mount, which stops root too) is a typed error naming the folder
(docs/run-folders.md)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _support.sweep import pixel_factory, write_benchmark, write_protocol
from itemscale.cli import main
from itemscale.core.responses import IMPORT_MARKER, RunLockedError, read_run, run_lock

HEADER = "model,item_id,video_id,config,frames,correct"


def _table(path: Path, model: str = "m", n_items: int = 3) -> Path:
    lines = [HEADER]
    for i in range(n_items):
        lines += [f"{model},q{i},v{i},8f,8,{i % 2}", f"{model},q{i},v{i},16f,16,1"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _env() -> dict[str, str]:
    src = str(Path(__file__).resolve().parents[2] / "src")
    tests = str(Path(__file__).resolve().parents[1])
    return {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": f"{src}:{tests}"}


@pytest.mark.parametrize("damage", ['{"imports": [', "[1, 2]", '{"schema_version": "x"}'])
def test_a_damaged_run_json_stops_a_sweep_and_an_import_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    from itemscale.collect.sweep import run_sweep

    run_dir = tmp_path / "run"
    assert main(["import", "table", str(_table(tmp_path / "a.csv")), "-o", str(run_dir)]) == 0
    (run_dir / "run.json").write_text(damage, encoding="utf-8")
    before = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    suite = write_benchmark(tmp_path / "suite", 2)
    proto = write_protocol(tmp_path / "p.toml", suite, frames=(2,), output=run_dir)
    from itemscale.collect.protocol import load_protocol

    with pytest.raises(ValueError, match=r"run.json.*provenance is damaged"):
        run_sweep(load_protocol(proto), backend_factory=pixel_factory, progress=False)
    assert main(["sweep", str(proto), "--no-progress"]) == 2
    again = _table(tmp_path / "b.csv", model="m2")
    assert main(["import", "table", str(again), "-o", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert err.count("provenance is damaged") == 2 and "restore run.json" in err
    assert {p.name: p.read_bytes() for p in run_dir.iterdir()} == before  # no store, no rewrite


_HOLD = """
import sys, time
from itemscale.core.responses import run_lock
with run_lock(sys.argv[1], what="sweep"):
    print("held", flush=True)
    time.sleep(60)
"""


def test_deleting_run_lock_under_a_holder_does_not_let_a_second_command_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(run_dir)], stdout=subprocess.PIPE, text=True, env=_env()
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        (run_dir / "run.lock").unlink()  # what a user cleaning up "a stale lock" does
        with pytest.raises(RunLockedError), run_lock(run_dir, wait_s=0.2):
            pass
        # a sweep is refused at once, naming the folder as busy
        suite = write_benchmark(tmp_path / "suite", 1)
        proto = write_protocol(tmp_path / "p.toml", suite, frames=(2,), output=run_dir)
        assert main(["sweep", str(proto), "--no-progress"]) == 2
        assert "another itemscale command is running" in capsys.readouterr().err
        assert not (run_dir / "store.sqlite").exists()
        # a run.lock replaced by another file is not trusted either: still refused
        (run_dir / "run.lock").write_text("someone's file")
        with pytest.raises(RunLockedError), run_lock(run_dir, wait_s=0.2):
            pass
    finally:
        holder.kill()
        holder.wait()
    with run_lock(run_dir, wait_s=5):  # and free once the holder is gone
        pass


def test_a_killed_first_import_is_named_by_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = tmp_path / "big.csv"
    with big.open("w", encoding="utf-8") as fh:
        fh.write(HEADER + "\n")
        for i in range(150_000):
            fh.write(f"m,q{i},v{i % 97},8f,8,{i % 2}\nm,q{i},v{i % 97},16f,16,1\n")
    run_dir = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "itemscale", "import", "table", str(big), "-o", str(run_dir)],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    # a guard against a hang, not a time limit: the import's start (pandas, pyarrow) took over
    # 120 s on 2 cores at a load average of 12 beside the suite's other worker
    deadline = time.monotonic() + 600
    while not (run_dir / IMPORT_MARKER).exists() and proc.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (run_dir / "responses.parquet").exists(), "the import finished before the kill"
    for argv in (
        ["analyze", str(run_dir)],
        ["report", str(run_dir), "--bootstrap", "0"],
        ["cascade", str(run_dir)],
        ["audit", str(run_dir)],
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "an import into this folder was interrupted" in err, (argv, err)
        assert "no response table here" not in err
    # ... and the import run again completes and clears the mark
    assert main(["import", "table", str(_table(tmp_path / "a.csv")), "-o", str(run_dir)]) == 0
    assert not (run_dir / IMPORT_MARKER).exists()
    assert len(read_run(run_dir)[0]) == 6


def test_a_folder_left_with_only_run_lock_or_an_unexported_store_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    only_lock = tmp_path / "a"
    only_lock.mkdir()
    (only_lock / "run.lock").write_text("pid 1: import")
    assert main(["analyze", str(only_lock)]) == 2
    assert "holds only run.lock" in capsys.readouterr().err
    store = tmp_path / "b"
    store.mkdir()
    (store / "store.sqlite").write_bytes(b"")
    assert main(["analyze", str(store)]) == 2
    assert "has not exported its response table yet" in capsys.readouterr().err


# -- read-only run folders: a real read-only bind mount in a private mount namespace --------

_READ_ONLY = r"""
import json, subprocess, sys
root, run, suite_proto, table = sys.argv[1:5]
subprocess.run(["mount", "--bind", run, run], check=True)
subprocess.run(["mount", "-o", "remount,bind,ro", run], check=True)
out = {}
for name, argv in {
    "sweep": ["sweep", suite_proto, "--no-progress"],
    "report": ["report", run, "--bootstrap", "0"],
    "import": ["import", "table", table, "-o", run],
    "cascade": ["cascade", run, "--json", run + "/cascade.json"],
    "report elsewhere": ["report", run, "--bootstrap", "0", "--out", root + "/elsewhere"],
}.items():
    p = subprocess.run([sys.executable, "-m", "itemscale", *argv], capture_output=True, text=True)
    out[name] = [p.returncode, p.stderr]
print(json.dumps(out))
"""


def _can_bind_read_only() -> str | None:
    unshare = shutil.which("unshare")
    if unshare is None:
        return "no unshare(1)"
    probe = subprocess.run(
        [unshare, "-rm", "sh", "-c", "mount --bind /tmp /tmp && mount -o remount,bind,ro /tmp"],
        capture_output=True,
        text=True,
        check=False,
    )
    return None if probe.returncode == 0 else f"cannot bind-mount read-only: {probe.stderr}"


def test_a_read_only_run_folder_is_a_typed_error_naming_it(tmp_path: Path) -> None:
    reason = _can_bind_read_only()
    if reason:
        pytest.skip(reason)
    run_dir = tmp_path / "run"
    assert main(["import", "table", str(_table(tmp_path / "a.csv")), "-o", str(run_dir)]) == 0
    suite = write_benchmark(tmp_path / "suite", 1)
    proto = write_protocol(tmp_path / "p.toml", suite, frames=(2,), output=run_dir)
    before = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    script = tmp_path / "ro.py"
    script.write_text(_READ_ONLY)
    argv = [str(tmp_path), str(run_dir), str(proto), str(_table(tmp_path / "b.csv", "m2"))]
    proc = subprocess.run(
        ["unshare", "-rm", sys.executable, str(script), *argv],
        capture_output=True,
        text=True,
        env=_env(),
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    for name in ("sweep", "report", "import", "cascade"):
        code, err = out[name]
        assert code == 2, (name, err)
        assert "Traceback" not in err and "Errno" not in err, (name, err)
        assert f"{run_dir}: cannot write to this folder" in err, (name, err)
        assert "read-only file system" in err, (name, err)
    assert out["report elsewhere"][0] == 0, out["report elsewhere"][1]
    assert {p.name: p.read_bytes() for p in run_dir.iterdir()} == before
