"""The artifact's analysis settings and what it records: `build_artifact` takes
`AnalysisSettings` (or its fields as keywords) and refuses the settings `verify` could not
recompute with; `itemscale report` checks its flags through the settings (the error names the
flag); provenance.json records the plotting library's version; the page and `verify` read
measures.json through the typed result, so a damaged one is named with its key."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from _support.runs import make_run
from itemscale.analysis.measures import AnalysisResult, AnalysisSettings
from itemscale.cli import main
from itemscale.core.responses import SchemaError
from itemscale.report import ArtifactError, build_artifact, verify_artifact
from itemscale.report._build import load_report_inputs
from itemscale.report._manifest import write_manifest


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("settings") / "run"
    make_run(run, n_items=24, with_audit=False)
    return run


@pytest.fixture(scope="module")
def artifact(run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("built") / "artifact"
    settings = AnalysisSettings(bootstrap=20, seed=4, ci="percentile")
    return build_artifact(run, settings, out=out)


def test_settings_are_recorded_and_reproduced(artifact: Path, run: Path, tmp_path: Path) -> None:
    prov = json.loads((artifact / "provenance.json").read_text(encoding="utf-8"))
    assert prov["measures"] == {
        "function": "itemscale.analysis.measures.analyze_responses",
        "bootstrap": 20,
        "seed": 4,
        "interval": "percentile",
    }
    stored = AnalysisResult.read(artifact / "measures.json")
    assert (stored.bootstrap.bootstrap, stored.bootstrap.seed) == (20, 4)
    assert stored.bootstrap.interval == "percentile"
    # the keywords of before give the same artifact
    again = build_artifact(run, out=tmp_path / "again", bootstrap=20, seed=4, ci="percentile")
    for name in ("measures.json", "trajectories.parquet"):
        assert (again / name).read_bytes() == (artifact / name).read_bytes(), name
    assert verify_artifact(artifact).ok


def test_settings_an_artifact_cannot_record_are_refused(run: Path, tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match="not by"):
        build_artifact(run, AnalysisSettings(bootstrap=0, by=("duration",)), out=tmp_path / "a")
    with pytest.raises(TypeError, match="not both"):
        build_artifact(run, AnalysisSettings(bootstrap=0), out=tmp_path / "b", seed=1)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_report_checks_its_flags_through_the_settings(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "artifact"
    assert main(["report", str(run), "--bootstrap", "-1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--bootstrap" in err and "resamples must be >= 0 (got -1)" in err
    assert not out.exists()


def test_provenance_records_matplotlib(artifact: Path) -> None:
    import matplotlib

    prov = json.loads((artifact / "provenance.json").read_text(encoding="utf-8"))
    assert prov["packages"]["matplotlib"] == matplotlib.__version__
    assert {"numpy", "pandas", "pydantic"} <= set(prov["packages"])


def _damaged(artifact: Path, tmp_path: Path) -> Path:
    """A copy whose measures.json has a string where a number belongs."""
    copy = tmp_path / "damaged"
    shutil.copytree(artifact, copy)
    path = copy / "measures.json"
    measures = json.loads(path.read_text(encoding="utf-8"))
    model = next(iter(measures["models"]))
    measures["models"][model]["harmful_rate"]["value"] = "0.5"
    path.write_text(json.dumps(measures, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    write_manifest(copy)  # so that only the recomputation can find it
    return copy


def test_a_damaged_measures_file_is_named_with_its_key(artifact: Path, tmp_path: Path) -> None:
    copy = _damaged(artifact, tmp_path)
    with pytest.raises(SchemaError, match=r"measures\.json: .*harmful_rate\.value"):
        load_report_inputs(copy)
    found = verify_artifact(copy)
    # blamed on measures.json alone: the report is rendered again from the recomputation
    assert list(found.bad_files) == ["measures.json"], found.problems
    assert "cannot be read" in found.bad_files["measures.json"]
    assert "harmful_rate.value: must be a number (got '0.5')" in found.bad_files["measures.json"]
    assert "report" in found.checks  # and found nothing wrong with report.html
