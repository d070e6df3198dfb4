"""An output under /proc, /sys or /dev is refused by name, in plain words (not "[Errno 2]" from
the first file written), by every command that writes a folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from _support.sweep import write_benchmark, write_protocol
from itemscale.cli import main


def _table(path: Path) -> Path:
    path.write_text("model,item_id,video_id,config,frames,correct\nm,q1,v1,8f,8,1\n")
    return path


@pytest.mark.parametrize("out", ["/proc/self", "/proc/self/run", "/sys/x", "/dev/null/x"])
def test_a_run_under_a_system_folder_is_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], out: str
) -> None:
    assert main(["import", "table", str(_table(tmp_path / "t.csv")), "-o", out]) == 2
    err = capsys.readouterr().err
    assert f"{out}: under /{out.split('/')[1]}, which holds the system's own views" in err
    assert "Errno" not in err


def test_sweep_and_report_refuse_it_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = write_benchmark(tmp_path / "suite", 1)
    proto = write_protocol(tmp_path / "p.toml", suite, frames=(2,), output=Path("/proc/self"))
    assert main(["sweep", str(proto), "--no-progress"]) == 2
    run_dir = tmp_path / "run"
    assert main(["import", "table", str(_table(tmp_path / "t.csv")), "-o", str(run_dir)]) == 0
    assert main(["report", str(run_dir), "--bootstrap", "0", "--out", "/proc/self/art"]) == 2
    err = capsys.readouterr().err
    assert err.count("which holds the system's own views") == 2, err
    assert "Errno" not in err
