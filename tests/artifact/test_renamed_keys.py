"""The resample count's key in every file itemscale writes is `bootstrap`; the files written
before the rename hold `n_boot` under an older schema version, and every reader reads both
alike, silently (docs/glossary.md, "Retired names")."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from _support.runs import make_run
from itemscale.analysis.measures import ANALYSIS_SCHEMA_VERSION, AnalysisResult, analyze_responses
from itemscale.analysis.policies import CASCADE_SCHEMA_VERSION, CascadeReport
from itemscale.cli import main
from itemscale.report._provenance import recorded_bootstrap


def _renamed_back(payload: dict[str, Any], block: str, version: int) -> dict[str, Any]:
    """PAYLOAD as the release before the rename wrote it: `n_boot` in BLOCK, VERSION."""
    old = json.loads(json.dumps(payload))
    old["schema_version"] = version
    old[block]["n_boot"] = old[block].pop("bootstrap")
    return old


@pytest.mark.parametrize("version", [1, 2])
def test_an_analysis_file_with_n_boot_reads_as_one_with_bootstrap(
    tmp_path: Path, version: int
) -> None:
    df, _ = make_run(tmp_path / "run")
    new = analyze_responses(df, bootstrap=7, seed=1).to_json()
    assert new["schema_version"] == ANALYSIS_SCHEMA_VERSION == 4
    assert new["bootstrap"]["bootstrap"] == 7 and "n_boot" not in new["bootstrap"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a stored file's old key is no deprecation
        old = AnalysisResult.from_json(_renamed_back(new, "bootstrap", version))
    assert old.schema_version == version and old.bootstrap.bootstrap == 7
    assert {**old.to_json(), "schema_version": ANALYSIS_SCHEMA_VERSION} == new
    with pytest.raises(Exception, match="both n_boot and bootstrap"):
        AnalysisResult.from_json({**new, "bootstrap": {**new["bootstrap"], "n_boot": 7}})


def test_a_cascade_report_of_layout_3_reads_as_one_of_layout_4(tmp_path: Path) -> None:
    run = tmp_path / "run"
    make_run(run)
    out = tmp_path / "cascade.json"
    assert main(["cascade", str(run), "--bootstrap", "0", "--json", str(out)]) in (0, 2)
    new = json.loads(out.read_text(encoding="utf-8"))
    assert new["schema_version"] == CASCADE_SCHEMA_VERSION == 4
    assert new["settings"]["bootstrap"] == 0 and "n_boot" not in new["settings"]
    out.write_text(json.dumps(_renamed_back(new, "settings", 3)), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        old = CascadeReport.load(out)
    assert old.schema_version == 3 and old.settings.bootstrap == 0
    assert {**json.loads(old.to_json()), "schema_version": 4} == new


def test_provenance_records_the_count_under_either_key() -> None:
    assert recorded_bootstrap({"bootstrap": 5, "seed": 0}) == 5
    assert recorded_bootstrap({"n_boot": 6, "seed": 0}) == 6  # provenance.json version 1
    with pytest.raises(KeyError, match="bootstrap"):
        recorded_bootstrap({"seed": 0})
