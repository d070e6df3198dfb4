"""The stack a session records is the one that ran, and a resume compares it with the sessions
whose cells are stored.

A library imported from a copy first on `PYTHONPATH` (a source checkout: the usual case for a
researcher patching a model) is recorded by the imported module's `__version__` and file, and
every place that reads the stack says when that differs from the installed metadata. The
model is the pixel backend (tests/_support/sweep.py) over real H.264 files; another stack is
set by patching the imported module's version (what a checkout does) or, for a stack that
must differ in a field no patch reaches, by the test-only `ITEMSCALE_TEST_STACK`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from _support.sweep import pixel_factory, write_benchmark, write_protocol
from itemscale.cli import main
from itemscale.collect.models import builtin_model_dir, imported_package, saved_with_note
from itemscale.collect.protocol import load_protocol
from itemscale.collect.sweep import STACK_OVERRIDE_ENV, run_sweep, software_stack, stack_notice
from itemscale.core.responses import read_run

INSTALLED = metadata.version("transformers")


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


def test_a_copy_first_on_pythonpath_is_recorded_by_its_own_version_and_file(
    tmp_path: Path,
) -> None:
    """A real copy of Pillow whose `__version__` differs, first on `PYTHONPATH`: the probe
    records the copy (version and file), the installed metadata beside it, and that they
    disagree."""
    import PIL

    checkout = tmp_path / "checkout"
    shutil.copytree(
        Path(PIL.__file__).parent, checkout / "PIL", ignore=shutil.ignore_patterns("__pycache__")
    )
    (checkout / "PIL" / "_version.py").write_text('__version__ = "1.2.3"\n')
    code = (
        "import json; from itemscale.collect.models import imported_package; "
        "p = imported_package('Pillow'); "
        "print(json.dumps({**p.record(), 'running': p.running_version}))"
    )
    env = {**os.environ, "PYTHONPATH": str(checkout), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout.strip().splitlines()[-1])
    assert record["version"] == record["running"] == "1.2.3"
    assert record["file"] == str(checkout / "PIL" / "__init__.py")
    assert record["metadata_version"] == metadata.version("Pillow")
    assert record["matches_metadata"] is False
    # the installed one, in this process, agrees with its metadata and records its version
    here = imported_package("Pillow")
    assert here.matches_metadata is True and here.running_version == metadata.version("Pillow")


def test_the_session_the_notice_analyze_and_the_builtin_check_name_the_imported_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import transformers

    monkeypatch.delenv(STACK_OVERRIDE_ENV, raising=False)
    _sweep(tmp_path, limit=2)
    # the imported transformers is now 5.17.0 while the installed metadata still says 5.24.0
    monkeypatch.setattr(transformers, "__version__", "5.17.0")
    source = f"imported from {transformers.__file__}; the installed metadata says {INSTALLED}"
    capsys.readouterr()
    result = _sweep(tmp_path)
    said = capsys.readouterr().err
    assert f"transformers 5.17.0 is {source}: the session records the imported version" in said
    assert f"transformers {INSTALLED} -> 5.17.0 ({source})" in said
    assert any(source in w for w in result.warnings)  # type: ignore[attr-defined]
    _, prov = read_run(tmp_path / "run")
    first, second = prov["sessions"]
    assert first["stack"]["packages"]["transformers"] == INSTALLED
    assert first["stack"]["modules"]["transformers"]["matches_metadata"] is True
    assert second["stack"]["packages"]["transformers"] == "5.17.0"
    assert second["stack"]["modules"]["transformers"] == {
        "module": "transformers",
        "version": "5.17.0",
        "file": transformers.__file__,
        "metadata_version": INSTALLED,
        "matches_metadata": False,
    }
    assert "overridden" not in second["stack"]  # a real record, not the test-only override
    # analyze's mixing warning names each session's version, and where the newer came from
    capsys.readouterr()
    assert main(["analyze", str(tmp_path / "run"), "--bootstrap", "0"]) == 0
    printed = capsys.readouterr().out
    assert (
        f"transformers {INSTALLED} (session 1, 6 rows) vs 5.17.0 (session 2, 6 rows, {source})"
        in printed
    )
    # the built-in model's check compares with the version imported, not the metadata's
    note = saved_with_note(builtin_model_dir())
    assert note is not None
    assert (
        "saved with transformers 5.24.0 and transformers 5.17.0 is the one imported (from "
        f"{transformers.__file__}; the installed metadata says {INSTALLED})" in note
    )


def test_a_checkout_of_the_same_version_is_still_told_apart(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Same `__version__`, another file (a patched checkout that kept the version): the record
    says the module is not the installed distribution, and two such stacks differ."""
    import transformers

    before = software_stack("cpu")
    monkeypatch.setattr(transformers, "__file__", str(tmp_path / "transformers" / "__init__.py"))
    after = software_stack("cpu")
    assert after["packages"]["transformers"] == before["packages"]["transformers"] == INSTALLED
    assert after["modules"]["transformers"]["matches_metadata"] is False
    (line,) = stack_notice([], after, cells_by_session={})
    assert line.startswith(f"transformers {INSTALLED} is imported from {tmp_path}")
    sessions: list[dict[str, object]] = [{"session_id": 1, "stack": before}]
    (change,) = stack_notice(sessions, after, cells_by_session={1: 4})[1:]
    assert f"transformers {INSTALLED} -> {INSTALLED} (imported from {tmp_path}" in change


def test_a_resume_is_compared_with_the_sessions_that_own_stored_cells(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(STACK_OVERRIDE_ENV, raising=False)
    _sweep(tmp_path, limit=2)  # session 1: computes the first 2 items' cells
    _sweep(tmp_path, limit=2)  # session 2: same stack, computes nothing
    monkeypatch.setenv(STACK_OVERRIDE_ENV, json.dumps({"transformers": "5.17.0"}))
    capsys.readouterr()
    _sweep(tmp_path, limit=2)  # session 3: another stack, a no-op resume
    said = capsys.readouterr().err
    # named: session 1, whose cells are stored; never session 2, which computed none
    assert "differs from that of session 1 (8 cells), which computed stored cells" in said
    assert "session 2" not in said
    result = _sweep(tmp_path)  # session 4: the new stack computes the other items' cells
    said = capsys.readouterr().err
    assert result.ran == 8  # type: ignore[attr-defined]
    assert (
        f"session 1 (8 cells), which computed stored cells of this run: transformers {INSTALLED} -> 5.17.0"
        in said
    )
    assert "session 3" not in said  # same stack as this one, and no cells
    _sweep(tmp_path)  # session 5: the stored cells are session 1's (old) and session 4's (new)
    said = capsys.readouterr().err
    assert "session 1 (8 cells)" in said and "session 4" not in said
    df, prov = read_run(tmp_path / "run")
    assert df["session_id"].value_counts().to_dict() == {1: 8, 4: 8}
    assert len(prov["sessions"]) == 5
