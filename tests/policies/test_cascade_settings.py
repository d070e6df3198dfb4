"""CascadeSettings holds each rule about a combination of options once: the command line and
the Python API refuse the same input with the same reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from _support.runs import make_grid_run
from itemscale.cli import main
from itemscale.policies import CascadeSettings


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
