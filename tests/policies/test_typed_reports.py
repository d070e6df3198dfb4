"""The cascade and intervention reports as typed records: `cascade_report(...).to_json()` is what
`itemscale cascade --json` writes, byte for byte; a stored report is validated on loading (a
damaged one names the file and the key); each accuracy carries the count it comes from; and
`InterventionSettings` holds every `intervene` option with its checks, which the command line
names by flag."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError

import itemscale
from itemscale.analysis.policies import (
    CascadeReport,
    CascadeSettings,
    InterventionResult,
    InterventionSettings,
    ReportFileError,
)
from itemscale.cli import main
from itemscale.core.responses import read_run, responses_digest, write_run


def _write_run(run_dir: Path, n_items: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    rows = []
    for i in range(n_items):
        for f in (8, 16, 32):
            right = float(rng.random() < 0.3 + f / 64)
            rows.append(
                {
                    "model": "tiny", "item_id": f"q{i}", "video_id": f"vid{i // 2}",
                    "task_kind": "mcqa", "series": "default", "config_id": f"f{f}",
                    "config_label": f"{f}f", "axis_order": float(f), "frames": f, "repeat": 0,
                    "status": "ok", "answer": "A" if right else "C", "correct": right,
                    "confidence": float(0.4 + 0.5 * right * rng.random()),
                }
            )  # fmt: skip
    frame = pd.DataFrame(rows)
    write_run(run_dir, frame, {"tool": "test"})
    return frame


def test_the_typed_report_is_the_command_s_file_byte_for_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    _write_run(run)
    out = tmp_path / "cascade.json"
    argv = ["cascade", str(run), "--bootstrap", "30", "--seed", "1", "--threshold", "0.6"]
    assert main([*argv, "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    df, _ = read_run(run)
    settings = itemscale.CascadeSettings(bootstrap=30, seed=1, threshold=0.6)
    report = itemscale.cascade_report(df, settings)
    assert isinstance(report, CascadeReport)
    text = out.read_text(encoding="utf-8")
    assert report.for_run(str(run), responses_digest(run)).to_json() == text
    # without the run it read, the layout is the same less the keys the command adds
    stored = json.loads(text)
    assert {k: v for k, v in stored.items() if k not in ("run_dir", "responses_sha256")} == (
        report.as_json()
    )
    # reading it back gives the same record and the same text
    loaded = CascadeReport.load(out)
    assert loaded.to_json() == text and loaded.results[0].policies.keys() == {
        "agreement", "agreement_3", "confidence", "learned"
    }  # fmt: skip
    # every accuracy printed carries the count it comes from, the JSON's `count`
    block = report.results[0]
    terminal = block.terminal.accuracy
    assert terminal.count is not None and terminal.count.n == 40
    assert terminal.count.k == int(df[df["frames"] == 32]["correct"].sum())
    assert f"accuracy {100 * terminal.value:.1f}" in printed
    assert f"({terminal.count.k} of 40), " in printed
    lines = [line for line in printed.splitlines() if re.search(r" accuracy \d", line)]
    assert lines and all(re.search(r"\(\d+ of \d+\)", line) for line in lines)
    for point in block.frontier:
        assert point.count is not None and point.count.k / point.count.n == pytest.approx(
            point.accuracy
        )
    fixed = block.fixed_rule
    assert fixed is not None and fixed.stop_counts is not None
    assert sum(fixed.stop_counts.values()) == 40


def test_a_rule_s_counts_are_its_held_out_items(tmp_path: Path) -> None:
    """Hand-checked: the counts behind a rule's accuracy and its stop shares are the items."""
    df = _write_run(tmp_path / "run", n_items=20)
    report = itemscale.cascade_report(
        itemscale.response_table(df), CascadeSettings(bootstrap=0, seed=0)
    )
    (block,) = report.results
    for rule in block.policies.values():
        if not rule.available:
            continue
        assert rule.accuracy.count is not None and rule.accuracy.value is not None
        assert rule.accuracy.count.n == 20
        assert rule.accuracy.count.k == round(rule.accuracy.value * 20)
        assert rule.stop_counts is not None and sum(rule.stop_counts.values()) == 20
        for label, share in rule.stop_share.items():
            assert rule.stop_counts[label] == round(share * 20)
        # an accuracy change is a difference, not a share of items: no count
        assert rule.accuracy_change.count is None


def _stored(tmp_path: Path) -> tuple[Path, dict[str, object]]:
    run = tmp_path / "run"
    _write_run(run, n_items=16)
    assert main(["cascade", str(run), "--bootstrap", "0"]) == 0
    path = run / "cascade.json"
    return path, json.loads(path.read_text(encoding="utf-8"))


def test_a_damaged_cascade_json_names_the_file_and_the_key(tmp_path: Path) -> None:
    path, payload = _stored(tmp_path)
    results = payload["results"]
    assert isinstance(results, list)
    del results[0]["terminal"]["accuracy"]["value"]
    results[0]["policies"]["learned"]["acuracy"] = 0.5
    results[0]["cost"]["primery"] = "frames"
    path.write_text(json.dumps(payload), encoding="utf-8")
    with pytest.raises(ReportFileError) as caught:
        CascadeReport.load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert "results[0].terminal.accuracy.value: Field required" in message
    assert "results[0].policies.learned.acuracy: Extra inputs are not permitted" in message
    assert "results[0].cost.primery: Extra inputs are not permitted (did you mean 'primary'?)" in (
        message
    )
    assert isinstance(caught.value, ValueError)  # `except ValueError` keeps working

    payload["schema_version"] = 2
    path.write_text(json.dumps(payload), encoding="utf-8")
    with pytest.raises(ReportFileError, match=r"schema_version: .*schema version 2, this"):
        CascadeReport.load(path)
    path.write_text('{"schema_version": 3, "results": [', encoding="utf-8")
    with pytest.raises(ReportFileError, match=r"cascade.json: not a JSON report"):
        CascadeReport.load(path)
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(ReportFileError, match=r"cascade.json: not a JSON object"):
        CascadeReport.load(path)


def test_a_file_from_before_the_counts_still_loads(tmp_path: Path) -> None:
    """The counts were added without a schema bump: a version-3 file without them reads."""
    path, payload = _stored(tmp_path)

    def strip(value: object) -> object:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("count", "stop_counts")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    path.write_text(json.dumps(strip(payload)), encoding="utf-8")
    loaded = CascadeReport.load(path)
    assert loaded.results[0].terminal.accuracy.count is None
    assert '"count"' not in json.dumps(loaded.as_json())


def test_an_intervention_result_loads_and_names_a_damaged_key(tmp_path: Path) -> None:
    path = tmp_path / "nested.json"
    path.write_text(json.dumps({"schema_version": 1, "policy": "sideways"}), encoding="utf-8")
    with pytest.raises(ReportFileError) as caught:
        InterventionResult.load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert "policy: Input should be 'nested' or 'phase-shift' (got 'sideways')" in message
    assert "recovered_rate: Field required" in message


# -- InterventionSettings ---------------------------------------------------------------------


def test_intervention_settings_hold_every_option_with_its_defaults() -> None:
    settings = InterventionSettings(intervention="nested")
    assert settings.model_dump() == {
        "intervention": "nested", "n_control": None, "seed": 0, "bootstrap": 1000, "model": None,
        "series": None, "execute": True, "executor": "local", "device": "cpu", "batch_size": 1,
        "progress": True,
    }  # fmt: skip
    with pytest.raises(ValidationError):
        settings.seed = 3  # type: ignore[misc]  # frozen


@pytest.mark.parametrize(
    ("values", "setting", "message"),
    [
        ({"intervention": "sideways"}, "intervention", "Input should be 'nested' or"),
        ({"intervention": "nested", "n_control": -1}, "n_control", "greater than or equal to 0"),
        ({"intervention": "nested", "bootstrap": -5}, "bootstrap", "greater than or equal to 0"),
        ({"intervention": "nested", "batch_size": 0}, "batch_size", "greater than or equal to 1"),
        ({"intervention": "nested", "executor": "slurm"}, "executor", "'local' or 'ray'"),
        ({"intervention": "nested", "controls": 3}, "controls", "Extra inputs are not permitted"),
        ({}, "intervention", "Field required"),
    ],
)
def test_intervention_settings_refuse_bad_values_by_name(
    values: dict[str, object], setting: str, message: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        InterventionSettings(**values)  # type: ignore[arg-type]
    (error,) = caught.value.errors()
    assert error["loc"] == (setting,) and message in error["msg"]


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--control", "-1"], "--control: Input should be greater than or equal to 0"),
        (["--bootstrap", "-1"], "--bootstrap: Input should be greater than or equal to 0"),
        (["--batch-size", "0"], "--batch-size: Input should be greater than or equal to 1"),
    ],
)
def test_the_command_line_names_the_flag_of_a_refused_setting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], said: str
) -> None:
    """The rule lives in the settings: refused before the run folder is even read."""
    assert main(["intervene", str(tmp_path / "nowhere"), "--policy", "nested", *flags]) == 2
    assert said in capsys.readouterr().err


def test_cascade_rules_live_in_the_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--bootstrap -1` and `--stages` with one stage are refused by `CascadeSettings` itself,
    with the flag named on the command line and the setting named in Python."""
    run = tmp_path / "run"
    _write_run(run, n_items=8)
    assert main(["cascade", str(run), "--bootstrap", "-1"]) == 2
    assert "--bootstrap: Input should be greater than or equal to 0" in capsys.readouterr().err
    assert main(["cascade", str(run), "--stages", "16f, "]) == 2
    assert "--stages: stages=['16f', ' ']: a cascade needs at least two stages" in (
        capsys.readouterr().err
    )
    with pytest.raises(ValidationError, match="a cascade needs at least two stages"):
        CascadeSettings(stages=("16f",))
    assert CascadeSettings(stages=(" 8f", "16f ")).stages == ("8f", "16f")


def test_the_report_names_a_damaged_cascade_in_its_section(tmp_path: Path) -> None:
    from itemscale.analysis.policies import optional_report
    from itemscale.report._html_policies import cascade_section

    path, payload = _stored(tmp_path)
    results = payload["results"]
    assert isinstance(results, list)
    results[0]["model"] = ["<b>not a name</b>"]
    path.write_text(json.dumps(payload), encoding="utf-8")
    found = optional_report(CascadeReport, path)
    assert isinstance(found, ReportFileError)
    html = cascade_section(found)
    assert "cascade.json cannot be read" in html and "results[0].model: Input should be" in html
    assert "<b>" not in html  # the file's text stays text
    assert optional_report(CascadeReport, tmp_path / "absent.json") is None
