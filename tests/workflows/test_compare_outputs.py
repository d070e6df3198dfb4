"""compare's outputs never land on a run's data, and it overwrites only its own files: a path
inside either run folder is refused (the run's files byte-identical afterwards), an existing
file compare did not write is refused, and its own earlier output needs --force."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from _support.compare_rows import compare_row
from itemscale.cli import main
from itemscale.core.responses import normalise_responses, write_run


def _row(item: str, video: str, correct: int) -> dict[str, Any]:
    return compare_row(item, video, correct, answer="A" if correct else "B")


def _runs(tmp_path: Path) -> tuple[Path, Path]:
    a = [_row(f"i{j}", f"v{j // 2}", j % 2) for j in range(6)]
    b = [_row(f"i{j}", f"v{j // 2}", (j // 3) % 2) for j in range(6)]
    for folder, rows in ((tmp_path / "a", a), (tmp_path / "b", b)):
        write_run(folder, normalise_responses(pd.DataFrame(rows)), {})
    return tmp_path / "a", tmp_path / "b"


def _hashes(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("flag", ["--json", "--html"])
@pytest.mark.parametrize("side", ["a", "b"])
@pytest.mark.parametrize("name", ["responses.parquet", "run.json", "new.json", "sub/x.html"])
def test_refuses_any_path_inside_a_run_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, side: str, name: str
) -> None:
    run_a, run_b = _runs(tmp_path)
    (run_a / "sub").mkdir()
    (run_b / "sub").mkdir()
    before = {run: _hashes(run) for run in (run_a, run_b)}
    target = (run_a if side == "a" else run_b) / name
    code = main(["compare", str(run_a), str(run_b), "--bootstrap", "0", flag, str(target)])
    assert code == 2
    assert "inside the run folder" in capsys.readouterr().err
    assert {run: _hashes(run) for run in (run_a, run_b)} == before
    assert name in ("responses.parquet", "run.json") or not target.exists()


def test_refuses_a_symlink_into_a_run_and_the_run_of_one_run_compare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_a, run_b = _runs(tmp_path)
    before = _hashes(run_a)
    link = tmp_path / "innocent.html"
    link.symlink_to(run_a / "responses.parquet")
    code = main(["compare", str(run_a), str(run_b), "--bootstrap", "0", "--html", str(link)])
    assert code == 2 and "inside the run folder" in capsys.readouterr().err
    code = main(
        [
            "compare",
            str(run_a),
            "--config",
            "16f",
            "--model",
            "m",
            "--model",
            "m",
            "--json",
            str(run_a / "responses.parquet"),
        ]
    )
    assert code == 2
    assert _hashes(run_a) == before


def test_overwrites_only_its_own_output_and_only_with_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_a, run_b = _runs(tmp_path)
    out, page = tmp_path / "out" / "c.json", tmp_path / "out" / "c.html"
    out.parent.mkdir()
    base = ["compare", str(run_a), str(run_b), "--bootstrap", "0"]
    assert main([*base, "--json", str(out), "--html", str(page)]) == 0
    first = (out.read_bytes(), page.read_bytes())
    capsys.readouterr()
    # a second run without --force: refused, both files untouched
    assert main([*base, "--json", str(out), "--html", str(page)]) == 2
    assert "add --force" in capsys.readouterr().err
    assert (out.read_bytes(), page.read_bytes()) == first
    # with --force: rewritten (same content, so compare the modification instead)
    out.write_text(out.read_text().replace('"seed": 0', '"seed": 0 '))
    assert main([*base, "--json", str(out), "--html", str(page), "--force"]) == 0
    assert out.read_bytes() == first[0]
    assert json.loads(out.read_text())["a"]["name"] == "A"


@pytest.mark.parametrize(
    "content",
    [
        "my notes\n",
        '{"schema_version": 1}\n',
        "<!DOCTYPE html>\n<html><head><title>report</title></head></html>\n",
        "",
    ],
)
def test_refuses_an_existing_file_it_did_not_write_even_with_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str
) -> None:
    run_a, run_b = _runs(tmp_path)
    target = tmp_path / "notes.html"
    target.write_text(content)
    for extra in ([], ["--force"]):
        code = main(
            ["compare", str(run_a), str(run_b), "--bootstrap", "0", "--html", str(target), *extra]
        )
        assert code == 2
        assert "not a file compare wrote" in capsys.readouterr().err
        assert target.read_text() == content


def test_json_and_html_on_one_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_a, run_b = _runs(tmp_path)
    same = str(tmp_path / "c.out")
    code = main(["compare", str(run_a), str(run_b), "--json", same, "--html", same])
    assert code == 2 and "name one file" in capsys.readouterr().err
    assert not Path(same).exists()
