"""A full disk (issue 23): a typed "no space left on <path>" (exit 1), nothing half-written, the
store intact and resumable once there is room, and a WAL that stays small.

The end-to-end test mounts a real 3 MB tmpfs in a private mount namespace (`unshare -rm`, no
privileges needed where user namespaces are allowed) and runs `import table`, `report --out`
and a served-model sweep on it. SQLite's own `max_page_count` gives the store a real
SQLITE_FULL without a file system; the one injected fault is an ENOSPC from pyarrow's writer,
for the Parquet path on machines that cannot mount.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from _support.paths import REPO
from itemscale.cli import main
from itemscale.collect.store import CellRow, RunStore
from itemscale.collect.store._store import WAL_CHECKPOINT_PAGES
from itemscale.core.errors import DiskFullError

HEADER = "model,item_id,video_id,config,frames,correct,prediction"
CONFIGS = (("8f", 8), ("16f", 16))
LEFT = ("responses.parquet", "run.json", "run.lock", "store.sqlite")


def _row(n: int, text: str = "") -> CellRow:
    return CellRow(
        cell_id=f"c{n}",
        spec_id="s",
        model="m",
        item_id=f"i{n}",
        video_id="v",
        task_kind="mcqa",
        series="default",
        config_id="cfg8",
        config_label="8f",
        axis_order=8.0,
        frames=8,
        repeat=0,
        status="ok",
        answer="A",
        correct=1.0,
        raw_text=text,
    )


def test_a_full_store_is_typed_keeps_every_commit_and_resumes(tmp_path: Path) -> None:
    """SQLITE_FULL rolls the batch back itself; our ROLLBACK then failed ("cannot rollback -
    no transaction is active") and the sweep called a healthy store damaged."""
    path = tmp_path / "run" / "store.sqlite"
    with RunStore(path) as store:
        store.record([_row(n, "x" * 2000) for n in range(5)])
        pages = store._db.execute("PRAGMA page_count").fetchone()[0]
        store._db.execute(f"PRAGMA max_page_count = {pages + 2}")
        with pytest.raises(DiskFullError, match=r"no space left on .*run \(writing store\.sqlite"):
            store.record([_row(n, os.urandom(4000).hex()) for n in range(5, 40)])
        assert not store._db.in_transaction
        assert store.count() == 5  # the five committed cells, nothing of the refused batch
        store._db.execute("PRAGMA max_page_count = 1073741823")  # room again: resume
        store.record([_row(n, "y") for n in range(5, 40)])
        assert store.count() == 40
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_the_wal_is_checkpointed_as_it_grows_and_truncated_at_close(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    wal = Path(f"{path}-wal")
    biggest = 0
    with RunStore(path) as store:
        for batch in range(120):  # ~120 x 20 KB: 2.4 MB of cells
            store.record([_row(batch, os.urandom(10_000).hex())])
            biggest = max(biggest, wal.stat().st_size)
        assert store.count() == 120
    # SQLite's default checkpoints only past 1000 pages (4 MB): the whole run stayed in the WAL
    assert biggest < (WAL_CHECKPOINT_PAGES + 16) * 4096
    assert not wal.exists() or wal.stat().st_size == 0


def test_an_enospc_writing_the_table_is_typed_and_leaves_the_run_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "t.csv"
    table.write_text(HEADER + "\nm,q1,v1,8f,8,1,A\nm,q1,v1,16f,16,0,B\n", encoding="utf-8")
    run = tmp_path / "run"
    assert main(["import", "table", str(table), "-o", str(run)]) == 0
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.name != "run.lock"}
    more = tmp_path / "more.csv"
    more.write_text(HEADER + "\nm,q2,v2,8f,8,1,C\n", encoding="utf-8")

    def full(*args: object, **kwargs: object) -> None:  # pyarrow's writer meets a full disk
        raise OSError(errno.ENOSPC, "Error writing bytes to file. No space left on device")

    monkeypatch.setattr(pq, "write_table", full)
    assert main(["import", "table", str(more), "-o", str(run)]) == 1
    err = capsys.readouterr().err
    assert f"no space left on {run} (writing responses.parquet)" in err
    assert "Traceback" not in err
    after = {p.name: p.read_bytes() for p in run.iterdir() if p.name != "run.lock"}
    assert after == before  # no temporary file left, nothing changed


def _can_mount_tmpfs() -> str | None:
    unshare = shutil.which("unshare")
    if unshare is None:
        return "no unshare(1)"
    probe = subprocess.run(
        [unshare, "-rm", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt || exit 3"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    return None if probe.returncode == 0 else f"cannot mount a tmpfs: {probe.stderr.strip()}"


#: Runs inside the private mount namespace: every check of the tmpfs happens before it ends.
INNER = textwrap.dedent(
    """
    import json, os, subprocess, sys
    from pathlib import Path

    sys.path.insert(0, sys.argv[2])
    work, mnt = Path(sys.argv[1]), Path(sys.argv[1]) / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mnt)], check=True)
    from _support.openai_server import ChatServer, Reply
    from _support.sweep import write_benchmark, write_protocol
    from itemscale.cli import main
    from itemscale.collect.store import RunStore

    out = {}
    def tree(root):
        return sorted(str(p.relative_to(mnt)) for p in root.rglob("*")) if root.exists() else []

    # 1. an import bigger than the disk: refused, no run folder left
    out["import"] = main(["import", "table", str(work / "big.csv"), "-o", str(mnt / "imp")])
    out["import_left"] = tree(mnt)

    # 2. a report onto the full disk: the run is kept, no artifact or temporary folder left
    small = work / "small-run"
    filler = mnt / "filler"
    with open(filler, "wb", buffering=0) as fh:  # every last block
        try:
            while True:
                fh.write(b"\\0" * 4096)
        except OSError:
            pass
    out["report"] = main(["report", str(small), "--bootstrap", "0", "--out", str(mnt / "art")])
    out["report_left"] = tree(mnt)
    filler.unlink()

    # 3. a sweep whose cells fill the disk: typed, the store intact, resumed once there is room
    suite = write_benchmark(work / "suite", 6)
    reply = lambda body: (os.urandom(30000).hex(), None)
    with ChatServer(default=Reply(respond=reply)) as server:
        options = {"base_url": server.base_url, "max_reply_chars": 100000}  # whole replies
        proto = write_protocol(work / "p.toml", suite, frames=(2, 4, 8, 16, 32), output=mnt / "run",
            models=[{"name": "served", "backend": "openai", "model": "m", "options": options}])
        out["sweep"] = main(["sweep", str(proto), "--no-progress"])
        with RunStore(mnt / "run" / "store.sqlite") as store:
            out["stored"] = store.count()
            out["integrity"] = store._db.execute("PRAGMA integrity_check").fetchone()[0]
        subprocess.run(["mount", "-o", "remount,size=64m", str(mnt)], check=True)
        out["resume"] = main(["sweep", str(proto), "--no-progress", "--json"])
    out["run_left"] = tree(mnt / "run")
    print("RESULT " + json.dumps(out))
    """
)


def test_a_real_full_tmpfs_import_report_and_sweep(tmp_path: Path) -> None:
    reason = _can_mount_tmpfs()
    if reason is not None:
        pytest.skip(reason + "; the injected-fault tests above cover the same paths")
    rows = [HEADER]
    for i in range(4000):  # 8000 predictions of 200 random bytes: over 3 MB in Parquet
        rows += [f"m,q{i},v{i},{c},{f},{i % 2},{os.urandom(200).hex()}" for c, f in CONFIGS]
    (tmp_path / "big.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    small = tmp_path / "small.csv"
    small.write_text(HEADER + "\nm,q1,v1,8f,8,1,A\nm,q1,v1,16f,16,0,B\n", encoding="utf-8")
    assert main(["import", "table", str(small), "-o", str(tmp_path / "small-run")]) == 0
    script = tmp_path / "inner.py"
    script.write_text(INNER, encoding="utf-8")
    done = subprocess.run(
        ["unshare", "-rm", sys.executable, str(script), str(tmp_path), str(REPO / "tests")],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert "Traceback" not in done.stderr, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    out = json.loads(line.removeprefix("RESULT "))
    assert done.stderr.count("no space left on") == 3, done.stderr
    assert out["import"] == 1 and out["import_left"] == []
    assert out["report"] == 1 and out["report_left"] == ["filler"]
    assert out["sweep"] == 1 and out["integrity"] == "ok" and 0 < out["stored"] < 72
    assert out["resume"] == 0
    summary = json.loads(done.stdout.splitlines()[-2])
    assert summary["ran"] == 72 - out["stored"] and summary["skipped"] == out["stored"]
    assert out["run_left"] == [f"run/{name}" for name in LEFT]  # no WAL: truncated at close
