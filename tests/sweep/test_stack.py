"""Each sweep session records the software stack that computed its answers, each row names its
session, and a resume under another stack says so before it runs.

The model is the pixel backend (tests/_support/sweep.py) over real H.264 files; the second
transformers version is the test-only `ITEMSCALE_TEST_STACK` override (a second transformers
cannot be installed beside the first), which the session records as overridden.
"""

from __future__ import annotations

import json
import platform
import sys
from importlib import metadata
from pathlib import Path

import pytest

from _support.sweep import pixel_factory, write_benchmark, write_protocol
from itemscale.cli import main
from itemscale.collect.protocol import load_protocol
from itemscale.collect.sweep import STACK_OVERRIDE_ENV, run_sweep, software_stack
from itemscale.core.responses import read_run, stack_changes, stack_fields


def _sweep(tmp_path: Path, **kw: object) -> object:
    suite = tmp_path / "suite"
    if not suite.exists():
        write_benchmark(suite, 2)
    proto = write_protocol(
        tmp_path / "protocol.toml",
        suite,
        models=[{"name": "pixel", "backend": "hf", "model": "x"}],
    )
    return run_sweep(load_protocol(proto), backend_factory=pixel_factory, progress=False, **kw)


def test_each_session_records_its_stack_and_each_row_its_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(STACK_OVERRIDE_ENV, raising=False)
    _sweep(tmp_path, limit=2)
    df, prov = read_run(tmp_path / "run")
    (session,) = prov["sessions"]
    stack = session["stack"]
    assert stack["python"] == sys.version.split()[0]
    assert stack["machine"] == platform.machine()
    for name in ("transformers", "tokenizers", "Pillow", "numpy", "av", "torch"):
        assert stack["packages"][name] == metadata.version(name)
    assert stack["numerics"]["deterministic_algorithms"] in (True, False)
    assert stack["gpu"] is None  # a CPU session uses no GPU
    assert "overridden" not in stack
    assert set(df["session_id"]) == {session["session_id"]}
    # a resume under another transformers says so before it runs, and its rows say which
    # session computed them
    monkeypatch.setenv(STACK_OVERRIDE_ENV, json.dumps({"transformers": "5.17.0"}))
    capsys.readouterr()
    result = _sweep(tmp_path)
    said = capsys.readouterr().err
    real = metadata.version("transformers")
    assert f"transformers {real} -> 5.17.0" in said
    assert any("transformers" in w for w in result.warnings)  # type: ignore[attr-defined]
    df, prov = read_run(tmp_path / "run")
    first, second = prov["sessions"]
    assert second["stack"]["packages"]["transformers"] == "5.17.0"
    assert second["stack"]["overridden"] == ["transformers"]
    counts = df["session_id"].value_counts().to_dict()
    assert counts == {first["session_id"]: 2 * 4, second["session_id"]: len(df) - 8}
    # analyze names the series that mixes the two stacks, with each session's value and rows
    capsys.readouterr()
    assert main(["analyze", str(tmp_path / "run"), "--bootstrap", "0"]) == 0
    printed = capsys.readouterr().out
    assert "series linspace/cached mixes answers from sweep sessions" in printed
    assert f"transformers {real} (session 1, 6 rows) vs 5.17.0 (session 2, 6 rows)" in printed
    # text-only: 2 items in the first session (limit 2), the other 2 in the second
    assert (
        f"series text-only mixes answers from sweep sessions whose software stacks differ: "
        f"transformers {real} (session 1, 2 rows) vs 5.17.0 (session 2, 2 rows)" in printed
    )


def test_stack_fields_flatten_what_is_recorded_and_changes_name_both_values() -> None:
    stack = software_stack("cpu")
    fields = stack_fields(stack)
    assert fields["transformers"] == metadata.version("transformers")
    assert fields["PyAV"] == metadata.version("av") and fields["GPU"] == "none"
    other = json.loads(json.dumps(stack))
    other["packages"]["transformers"] = "5.17.0"
    other["gpu"] = {"name": "H200", "count": 1, "driver": "570.1", "capability": "9.0"}
    changes = stack_changes(stack, other)
    assert f"transformers {fields['transformers']} -> 5.17.0" in changes
    assert any(c.startswith("GPU none -> H200 x1") for c in changes)
    # an older or partial record reads as what it holds
    assert stack_fields({"packages": {"transformers": "4.57.1"}}) == {"transformers": "4.57.1"}
    assert stack_fields({}) == {}


def test_a_bad_override_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(STACK_OVERRIDE_ENV, "[1]")
    with pytest.raises(ValueError, match=STACK_OVERRIDE_ENV):
        software_stack("cpu")


def test_a_checkpoint_saved_with_another_transformers_is_said(tmp_path: Path) -> None:
    from itemscale.collect.models import builtin_model_dir, saved_with_note

    shipped = json.loads((builtin_model_dir() / "config.json").read_text())["transformers_version"]
    assert shipped == "5.24.0"
    assert saved_with_note(builtin_model_dir(), installed="5.24.0") is None
    note = saved_with_note(builtin_model_dir(), installed="5.17.0")
    assert note is not None
    assert "saved with transformers 5.24.0 and transformers 5.17.0 is the one imported" in note
    # a folder without config.json, or one that does not say, is no warning
    assert saved_with_note(tmp_path, installed="5.17.0") is None
    (tmp_path / "config.json").write_text("{}")
    assert saved_with_note(tmp_path, installed="5.17.0") is None


def test_deterministic_mode_is_applied_recorded_and_needs_batch_size_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import torch

    from itemscale.collect.sweep import Numerics

    monkeypatch.delenv(STACK_OVERRIDE_ENV, raising=False)
    with pytest.raises(ValueError, match="one request per model call"):
        _sweep(tmp_path, batch_size=2, numerics=Numerics(deterministic=True))
    assert not (tmp_path / "run").exists()  # refused before anything is created
    before = (
        torch.are_deterministic_algorithms_enabled(),
        torch.backends.cuda.matmul.allow_tf32,
        torch.backends.cudnn.allow_tf32,
        torch.get_float32_matmul_precision(),
        torch.backends.cudnn.deterministic,
    )
    try:
        _sweep(tmp_path, limit=1, numerics=Numerics(deterministic=True))
        assert torch.are_deterministic_algorithms_enabled()
    finally:  # the flags are the process's: put them back for the tests after this one
        torch.use_deterministic_algorithms(before[0])
        torch.backends.cuda.matmul.allow_tf32 = before[1]
        torch.backends.cudnn.allow_tf32 = before[2]
        torch.set_float32_matmul_precision(before[3])
        torch.backends.cudnn.deterministic = before[4]
    _, prov = read_run(tmp_path / "run")
    assert prov["sweep"]["deterministic"] is True
    (session,) = prov["sessions"]
    assert session["deterministic"] is True
    numerics = session["stack"]["numerics"]
    assert numerics["deterministic_algorithms"] is True
    assert numerics["tf32_matmul"] is False and numerics["matmul_precision"] == "highest"
    # the command refuses a batch under --deterministic before reading anything
    assert (
        main(["sweep", str(tmp_path / "protocol.toml"), "--deterministic", "--batch-size", "4"])
        == 2
    )
    assert "--deterministic runs one request per model call" in capsys.readouterr().err


def test_the_report_shows_the_sessions_stacks_apart_from_its_own_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(STACK_OVERRIDE_ENV, json.dumps({"transformers": "5.17.0"}))
    _sweep(tmp_path, limit=2)
    monkeypatch.delenv(STACK_OVERRIDE_ENV)
    assert main(["report", str(tmp_path / "run"), "--bootstrap", "0"]) == 0
    page = (tmp_path / "run" / "artifact" / "report.html").read_text()
    section = page[page.index('<section id="provenance">') :]
    session = section[section.index("stack of sweep session 1") :]
    drawn = section[section.index("packages of the machine that drew this report") :]
    # the session's transformers is the one that computed the answers; the report machine's
    # is the one installed here
    assert "5.17.0" in session[: session.index("</tr>")]
    assert metadata.version("transformers") in drawn[: drawn.index("</tr>")]
    assert "5.17.0" not in drawn[: drawn.index("</tr>")]
