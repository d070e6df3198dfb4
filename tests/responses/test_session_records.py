"""run.json's sweep sessions against the rows that name them: a `session_id` recorded twice is
refused on read (which stack computed that session's rows cannot be told), and rows naming a
session run.json does not record make `analyze` warn and `verify` fail, naming the sessions."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from _support.tables import table
from itemscale.cli import main
from itemscale.core.responses import normalise_responses, read_provenance, write_run
from itemscale.core.responses._io import SchemaError

STACK = {"packages": {"transformers": "5.24.0"}, "python": "3.11.7"}


def _run(run: Path, sessions: list[dict[str, object]]) -> Path:
    """Two models x 3 budgets x 12 items; model m0's rows from session 1, m1's from session 2."""
    frames = []
    for m in range(2):
        matrix = {f"q{j:02d}": [float((j + k + m) % 3 > 0) for k in range(3)] for j in range(12)}
        videos = {f"q{j:02d}": f"v{j // 2}" for j in range(12)}
        part = table(matrix, videos=videos, model=f"m{m}")
        frames.append(part.assign(session_id=m + 1))
    df = normalise_responses(pd.concat(frames, ignore_index=True))
    write_run(run, df, {"sessions": sessions})
    return run


def test_a_session_recorded_twice_is_refused_on_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run(tmp_path / "R", [{"session_id": s, "stack": STACK} for s in (1, 2, 2)])
    with pytest.raises(SchemaError, match=r"session_id 2 \(2 times\) recorded more than once"):
        read_provenance(run)
    for argv in (["analyze", str(run)], ["compare", str(run), str(run)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "run.json: key 'sessions': session_id 2 (2 times)" in err, err


def test_rows_of_a_session_run_json_lacks_make_analyze_warn_and_verify_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run(tmp_path / "R", [{"session_id": 1, "stack": STACK}, "not a record"])
    said = "rows name sweep session(s) 2 (36 rows) that run.json does not record"
    assert main(["analyze", str(run), "--bootstrap", "0"]) == 0
    assert f"warning: {said}" in capsys.readouterr().out
    assert main(["report", str(run), "--bootstrap", "0"]) == 0
    capsys.readouterr()
    assert main(["verify", str(run / "artifact")]) == 1
    out = capsys.readouterr()
    assert said in out.out + out.err


def test_every_session_recorded_once_says_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run(tmp_path / "R", [{"session_id": s, "stack": STACK} for s in (1, 2)])
    assert main(["analyze", str(run), "--bootstrap", "0"]) == 0
    assert "does not record" not in capsys.readouterr().out
