"""`itemscale.collect.importers.run_import` is the import the CLI runs: from Python it writes the same run
folder, byte for byte (the import's timestamp aside), and returns the summary the CLI prints."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any

import pytest

from itemscale.cli import main
from itemscale.collect.importers import (
    IMPORTERS,
    Importer,
    ImportInputError,
    ImportOption,
    run_import,
)

UNIFORM = "lmms-eval/videomme-uniform16"
BENCHMARK = "benchmarks/videomme-test.parquet"


def folder_bytes(run: Path) -> dict[str, bytes]:
    """Every file of a run folder; the import time in run.json is the one field that differs
    between two imports of the same files, and the lock names the process that held it."""
    out = {}
    for path in sorted(p for p in run.rglob("*") if p.is_file() and p.name != "run.lock"):
        data = path.read_bytes()
        if path.name == "run.json":
            data = re.sub(rb'"time": "[^"]*"', b'"time": "T"', data)
        out[path.relative_to(run).as_posix()] = data
    return out


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """What `itemscale import` prints, its run folder named as the Python import's is."""
    capsys.readouterr()
    assert main(argv) == 0
    return capsys.readouterr().out.replace(argv[argv.index("-o") + 1], "RUN")


def test_lmms_eval_from_python_equals_the_cli(
    fixtures_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = str(fixtures_dir / UNIFORM)
    summary = run_import("lmms-eval", [logs], run_dir=tmp_path / "py")
    out = cli(["import", "lmms-eval", logs, "-o", str(tmp_path / "cli")], capsys)
    assert out == summary.format().replace(str(tmp_path / "py"), "RUN") + "\n"
    assert folder_bytes(tmp_path / "py") == folder_bytes(tmp_path / "cli")
    # items.jsonl: the questions the log's samples asked, for the report's item explorer
    assert set(folder_bytes(tmp_path / "py")) == {"responses.parquet", "run.json", "items.jsonl"}


def test_lmms_eval_options_from_python_equal_the_cli(
    fixtures_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    logs = fixtures_dir / UNIFORM
    options = {"model": "llava", "benchmark": str(fixtures_dir / BENCHMARK)}
    summary = run_import(
        "lmms-eval", run_dir=tmp_path / "py", configs=[f"u16:16={logs}"], **options
    )
    argv = ["import", "lmms-eval", "--config", f"u16:16={logs}", "--model", "llava"]
    argv += ["--benchmark", options["benchmark"], "-o", str(tmp_path / "cli")]
    argv += ["--summary-json", "s.json"]
    assert cli(argv, capsys) == summary.format().replace(str(tmp_path / "py"), "RUN") + "\n"
    written = json.loads(Path("s.json").read_text())
    assert written == {**summary.to_dict(), "run_dir": str(tmp_path / "cli")}
    assert folder_bytes(tmp_path / "py") == folder_bytes(tmp_path / "cli")


def test_table_from_python_equals_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "wide.csv"
    table.write_text("sample_id,text,8f,16f\nq1,A,B,B\nq2,,C,D\n")
    key = tmp_path / "key.csv"
    key.write_text("item_id,gold\nq1,B\nq2,D\n")
    options = {"wide": True, "id_column": "sample_id", "model": "m", "empty": "missing"}
    summary = run_import(
        "table", [table], run_dir=tmp_path / "py", answer_key=str(key), frames=["text=0"], **options
    )
    argv = ["import", "table", "--wide", "--id-column", "sample_id", "--model", "m"]
    argv += ["--empty", "missing", "--answer-key", str(key), "--frames", "text=0", str(table)]
    printed = cli([*argv, "-o", str(tmp_path / "cli")], capsys)
    assert printed == summary.format().replace(str(tmp_path / "py"), "RUN") + "\n"
    assert folder_bytes(tmp_path / "py") == folder_bytes(tmp_path / "cli")


def test_a_dry_run_writes_nothing_and_errors_are_the_importers(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    summary = run_import("lmms-eval", [fixtures_dir / UNIFORM], run_dir=run, dry_run=True)
    assert summary.rows_added > 0 and not run.exists()
    assert list(IMPORTERS) == ["table", "lmms-eval", "vlmevalkit"]
    with pytest.raises(ImportInputError, match="unknown importer 'nope'; known: table, lmms-eval"):
        run_import("nope", [], run_dir=run)
    with pytest.raises(ImportInputError, match=r"no input files \(give samples JSONL files"):
        run_import("lmms-eval", run_dir=run)
    with pytest.raises(ImportInputError, match="no input files"):
        run_import("table", run_dir=run)
    with pytest.raises(ImportInputError, match="give --benchmark or --answer-key, not both"):
        run_import("table", ["t.csv"], run_dir=run, benchmark="a", answer_key="b")


@pytest.mark.parametrize("kind", list(IMPORTERS))
def test_the_cli_options_are_the_run_functions_keywords(kind: str) -> None:
    """What `itemscale import KIND` takes and what `run_import(KIND, ...)` takes are one list."""
    importer = IMPORTERS[kind]
    params = inspect.signature(importer.run).parameters
    keywords = [option.keyword for option in importer.options]
    assert len(set(keywords)) == len(keywords)
    assert set(keywords) == set(params) - {"run_dir", "dry_run"}


def test_a_registered_importer_gets_its_subcommand(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    received: dict[str, Any] = {}

    def run_fake_import(**options: Any) -> Any:
        received.update(options)
        raise ImportInputError("fake: recorded")

    fake = Importer(
        run=run_fake_import,
        help="fake result files",
        description="Import fake results.",
        options=(
            ImportOption(("files",), nargs="+", metavar="FILE"),
            ImportOption(("--split-by",), metavar="KEY", help="a key"),
            ImportOption(("--tag",), repeatable=True, fills="tags"),
            ImportOption(("--strict",), switch=True),
            ImportOption(("--mode",), choices=("a", "b"), default="a"),
        ),
    )
    with IMPORTERS.registered("fake", fake):
        _the_fake_importers_subcommand(capsys, tmp_path, received)
    assert "fake" not in IMPORTERS


def _the_fake_importers_subcommand(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, received: dict[str, Any]
) -> None:
    run = tmp_path / "run"
    argv = ["import", "fake", "x.txt", "--tag", "t1", "--tag", "t2", "--split-by", "k"]
    assert main([*argv, "-o", str(run), "--dry-run"]) == 2
    assert received == {
        "files": ["x.txt"],
        "split_by": "k",
        "tags": ["t1", "t2"],
        "strict": False,
        "mode": "a",
        "run_dir": str(run),
        "dry_run": True,
    }
    assert capsys.readouterr().err == "itemscale import: error: fake: recorded\n"
    with pytest.raises(SystemExit):
        main(["import", "--help"])
    assert "fake result files" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["import", "fake", "--help"])
    printed = capsys.readouterr().out
    assert "Import fake results." in printed
    assert "--split-by KEY" in printed and "--mode {a,b}" in printed
