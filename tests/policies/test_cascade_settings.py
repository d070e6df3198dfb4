"""CascadeSettings holds each rule about a combination of options once: the command line and
the Python API refuse the same input with the same reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from _support.runs import make_grid_run
from itemscale.analysis.policies import CascadeSettings
from itemscale.cli import main


def test_union_sharing_needs_a_frame_cost_in_the_library() -> None:
    with pytest.raises(ValidationError, match=r"sharing='union' counts distinct frame indices"):
        CascadeSettings(cost="tokens", sharing="union")
    assert CascadeSettings(cost="tokens", sharing="prefix").sharing == "prefix"
    assert CascadeSettings(cost="frames", sharing="union").cost == "frames"


def test_a_cascade_needs_two_stages_in_the_library() -> None:
    with pytest.raises(ValidationError, match="at least two stages"):
        CascadeSettings(stages=("8f",))
    assert CascadeSettings(stages=("8f", "16f")).stages == ("8f", "16f")


def test_the_command_line_shows_the_settings_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    make_grid_run(run, n_items=8)
    code = main(["cascade", str(run), "--bootstrap", "0", "--cost", "tokens", "--sharing", "union"])
    err = capsys.readouterr().err
    assert code == 2
    assert (
        "--sharing union counts distinct frame indices; with --cost tokens choose --sharing "
        "prefix or --sharing none"
    ) in err
    assert main(["cascade", str(run), "--bootstrap", "0", "--stages", "2f@56"]) == 2
    assert (
        "--stages: stages=['2f@56']: a cascade needs at least two stages" in capsys.readouterr().err
    )


def test_the_model_filter_is_a_setting_the_library_applies(tmp_path: Path) -> None:
    """`cascade --model` is `CascadeSettings.models`: the library filters, refuses a model with
    no responses, and the report records the filter once (its `models`, not in `settings`)."""
    import json

    from _support.runs import make_run
    from itemscale.analysis.policies import cascade_report

    with pytest.raises(ValidationError, match="name at least one model"):
        CascadeSettings(models=())
    with pytest.raises(ValidationError, match="none empty"):
        CascadeSettings(models=("a", " "))
    assert CascadeSettings(models=("b", "a", "b")).models == ("b", "a")
    df, _ = make_run(tmp_path / "run", n_items=24, models=("m1", "m2"), with_audit=False)
    every = cascade_report(df, CascadeSettings(bootstrap=0))
    one = cascade_report(df, CascadeSettings(bootstrap=0, models=("m2",)))
    assert {b.model for b in every.results} == {"m1", "m2"}
    assert {b.model for b in one.results} == {"m2"}
    assert one.models == ("m2",) and every.models is None
    written = json.loads(one.to_json())
    assert written["models"] == ["m2"] and "models" not in written["settings"]
    assert "models" not in json.loads(every.to_json())
    with pytest.raises(ValueError, match=r"no responses for model\(s\) nobody"):
        cascade_report(df, CascadeSettings(bootstrap=0, models=("m1", "nobody")))


def test_the_command_line_names_the_model_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    make_grid_run(run, n_items=8)
    code = main(["cascade", str(run), "--bootstrap", "0", "--model", ""])
    assert code == 2
    assert "--model: models=['']: name at least one model, none empty" in capsys.readouterr().err
