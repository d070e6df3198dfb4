"""No output flag of any command replaces a run's data or records (docs/run-folders.md, "Outputs
never replace a run's data"): every user-given output path is checked by one rule,
`itemscale.core.files.check_output_path`, before the command reads or computes anything.

Each flag is run against `R/responses.parquet`, `R/run.json` and `R/store.sqlite` of a real run
(an imported table, a sweep's store beside it), directly and through a symlinked folder; the
command must stop with exit 2 naming the rule, and every byte of the run must be unchanged.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from _support.runs import make_irt_run
from itemscale.cli import OUTPUT_FLAGS, main
from itemscale.collect.store import open_store
from itemscale.core.files import OutputPathError, check_output_path

RULE = "no output replaces a run's data or records"
TARGETS = ("responses.parquet", "run.json", "store.sqlite")

#: Every command's every output flag, `{P}` the path under test (`{R}` the run, `{R2}` a second
#: run, `{W}` a scratch folder). Inputs that do not exist are fine: the rule runs first.
CASES: dict[str, list[str]] = {
    "analyze --json": ["analyze", "{R}", "--json", "{P}"],
    "analyze --per-item": ["analyze", "{R}", "--per-item", "{P}"],
    "analyze --anchors --json": [
        "analyze", "{R}", "--anchors", "{W}/a.txt", "--irt", "{W}/fit.json", "--json", "{P}"
    ],
    "anchors --out": ["anchors", "{R}", "--k", "10", "--out", "{P}"],
    "audit --export": ["audit", "{R}", "--export", "{P}"],
    "cascade --json": ["cascade", "{R}", "--json", "{P}"],
    "compare --json": ["compare", "{R}", "{R2}", "--json", "{P}"],
    "compare --html": ["compare", "{R}", "{R2}", "--html", "{P}"],
    "frames --json": ["frames", "{W}/v.mp4", "--frames", "2", "--out", "{W}/s", "--json", "{P}"],
    "frames --out": ["frames", "{W}/v.mp4", "--frames", "2", "--out", "{P}"],
    "import --summary-json": ["import", "table", "{W}/t.csv", "-o", "{W}/new", "--summary-json", "{P}"],
    "import --out": ["import", "table", "{W}/t.csv", "-o", "{P}"],
    "intervene --json": ["intervene", "{R}", "--intervention", "nested", "--no-run", "--json", "{P}"],
    "irt --json": ["irt", "{R}", "--json", "{P}"],
    "report --out": ["report", "{R}", "--out", "{P}"],
    "select --out": ["select", "{W}/p.toml", "--frames", "2", "--out", "{P}"],
    "sweep --output": ["sweep", "{W}/p.toml", "--output", "{P}"],
    "synth --out": ["synth", "--out", "{P}", "--n", "2", "--seed", "0"],
    "demo --out": ["demo", "--out", "{P}"],
}  # fmt: skip


def _digests(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(a run with responses.parquet, run.json and a sweep's store.sqlite; a second run; a
    scratch folder with a symlink `link` to the first run)."""
    root = tmp_path_factory.mktemp("outputs")
    run, other, scratch = root / "R", root / "R2", root / "work"
    make_irt_run(run)
    make_irt_run(other, seed=7)
    with open_store(run):
        pass
    scratch.mkdir()
    (scratch / "link").symlink_to(run, target_is_directory=True)
    assert {p.name for p in run.iterdir()} >= set(TARGETS)
    return run, other, scratch


def test_the_cases_cover_every_output_flag_of_the_table() -> None:
    covered = {(name.split()[0], name.split()[-1]) for name in CASES}
    listed = {(command, flag) for command, flags in OUTPUT_FLAGS.items() for flag in flags}
    listed |= {("compare", "--json"), ("compare", "--html")}  # checked within compare's rule
    assert listed <= covered, f"output flags without a case: {sorted(listed - covered)}"


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("target", TARGETS)
def test_no_output_flag_replaces_a_run_file(
    runs: tuple[Path, Path, Path],
    case: str,
    target: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run, other, scratch = runs
    before = _digests(run)
    for path in (run / target, scratch / "link" / target):
        argv = [a.format(R=run, R2=other, W=scratch, P=path) for a in CASES[case]]
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        if case.startswith("compare"):  # its own rule speaks first for the runs it compares
            assert f"inside the run folder {run}" in err, err
        else:
            assert RULE in err and f"{run}'s own {target}" in err, err
        assert _digests(run) == before, f"{case} changed the run through {path}"


def test_a_run_folder_itself_is_refused_only_where_the_command_swaps_the_folder_in(
    runs: tuple[Path, Path, Path],
) -> None:
    run, _, scratch = runs
    with pytest.raises(OutputPathError, match="is a run folder"):
        check_output_path(scratch / "link", flag="--out", replaces_folder=True)
    # a run folder is where `import -o` and `sweep --output` write by design
    assert check_output_path(run, flag="--out") == run


def test_files_of_those_names_outside_any_run_and_other_files_in_a_run_are_outputs(
    runs: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    run, _, _ = runs
    assert check_output_path(tmp_path / "run.json", flag="--json") == tmp_path / "run.json"
    assert check_output_path(run / "measures.json", flag="--json") == run / "measures.json"
    (tmp_path / "art").mkdir()
    (tmp_path / "art" / "MANIFEST.json").write_text("{}")
    with pytest.raises(OutputPathError, match=r"MANIFEST\.json"):
        check_output_path(tmp_path / "art" / "MANIFEST.json", flag="--json")
    with pytest.raises(OutputPathError, match=r"annotations\.parquet"):
        check_output_path(run / "annotations.parquet", flag="--export")


def test_compare_refuses_a_third_runs_files_by_the_shared_rule(
    runs: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, other, _ = runs
    third = tmp_path / "R3"
    make_irt_run(third, seed=3)
    before = _digests(third)
    for flag in ("--json", "--html"):
        argv = ["compare", str(run), str(other), flag, str(third / "run.json")]
        assert main(argv) == 2
        assert RULE in capsys.readouterr().err
    assert _digests(third) == before


def test_a_symlinked_file_is_followed_to_the_run_file_it_names(
    runs: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    run, _, _ = runs
    (tmp_path / "out.json").symlink_to(run / "run.json")
    with pytest.raises(OutputPathError, match=r"it resolves to .*run\.json"):
        check_output_path(tmp_path / "out.json", flag="--json")


def test_the_workflows_keep_the_rule_for_python_callers(runs: tuple[Path, Path, Path]) -> None:
    from itemscale.analysis.policies import CascadeSettings
    from itemscale.workflows import audit, cascade, check_per_item_path

    run, _, _ = runs
    before = _digests(run)
    with pytest.raises(OutputPathError, match="json_out"):
        cascade(run, CascadeSettings(), json_out=run / "run.json")
    with pytest.raises(OutputPathError, match="export"):
        audit(run, export=run / "responses.parquet")
    with pytest.raises(OutputPathError, match="per-item file"):
        check_per_item_path(run / "responses.parquet")
    assert _digests(run) == before
