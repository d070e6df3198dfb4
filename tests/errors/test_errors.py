"""The error family: every typed error is an `ItemscaleError` and still what it was before
(`except ValueError` in a user's code keeps working), pydantic errors read as the keys a user
writes, `sha256_file` hashes the whole file, and the CLI prints a typed error once."""

from __future__ import annotations

import hashlib
import importlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from itemscale.core.errors import ItemscaleError, location_text, validation_message
from itemscale.core.files import HASH_BLOCK, sha256_file

#: (module that defines it, public module that re-exports it, class, built-in base it keeps,
#: CLI exit code). Every exit code is 2 (input to fix) but a full disk's: the run failed, 1.
FAMILY: list[tuple[str, str, str, type[BaseException], int]] = [
    (
        "itemscale.analysis.measures._select",
        "itemscale.measures",
        "UnknownConfigError",
        ValueError,
        2,
    ),
    (
        "itemscale.collect.protocol._protocol",
        "itemscale.collect.protocol",
        "ProtocolError",
        ValueError,
        2,
    ),
    (
        "itemscale.analysis.policies._intervention",
        "itemscale.analysis.policies",
        "InterventionError",
        ValueError,
        2,
    ),
    ("itemscale.analysis.audit._frames", "itemscale.analysis.audit", "AuditError", ValueError, 2),
    (
        "itemscale.collect.sweep._loaders",
        "itemscale.collect.sweep",
        "BenchmarkLoadError",
        ValueError,
        2,
    ),
    (
        "itemscale.collect.items._benchmarks",
        "itemscale.collect.items",
        "BenchmarkFileError",
        ValueError,
        2,
    ),
    ("itemscale.core.items", "itemscale.collect.items", "ItemFileError", ValueError, 2),
    (
        "itemscale.collect.importers._common",
        "itemscale.importers",
        "ImportInputError",
        ValueError,
        2,
    ),
    (
        "itemscale.collect.importers._common",
        "itemscale.importers",
        "ImportConflictError",
        ValueError,
        2,
    ),
    (
        "itemscale.collect.models._types",
        "itemscale.collect.models",
        "BackendError",
        RuntimeError,
        2,
    ),
    ("itemscale.collect.store._store", "itemscale.collect.store", "StoreError", RuntimeError, 2),
    ("itemscale.report._build", "itemscale.report", "ArtifactError", ValueError, 2),
    ("itemscale.core.responses._io", "itemscale.core.responses", "SchemaError", ValueError, 2),
    (
        "itemscale.core.responses._safety",
        "itemscale.core.responses",
        "RunLockedError",
        RuntimeError,
        2,
    ),
    (
        "itemscale.core.responses._safety",
        "itemscale.core.responses",
        "OutputFolderError",
        ValueError,
        2,
    ),
    ("itemscale.collect.video._errors", "itemscale.collect.video", "MediaError", Exception, 2),
    ("itemscale.collect.synth._suite", "itemscale.collect.synth", "SuiteError", ValueError, 2),
    ("itemscale.cli", "itemscale.cli", "CommandError", Exception, 2),
    ("itemscale.core.errors", "itemscale.core.errors", "DiskFullError", OSError, 1),
]


def _instance(cls: type[BaseException]) -> BaseException:
    if cls.__name__ == "MediaError":
        return cls("missing_file", "clip.mp4")
    return cls("clip.mp4: something is wrong")


@pytest.mark.parametrize("home,face,name,base,code", FAMILY, ids=[f[2] for f in FAMILY])
def test_every_typed_error_is_an_itemscale_error_and_keeps_its_base(
    home: str, face: str, name: str, base: type[BaseException], code: int
) -> None:
    cls = getattr(importlib.import_module(home), name)
    assert getattr(importlib.import_module(face), name) is cls  # the public name is unchanged
    assert issubclass(cls, ItemscaleError)
    assert issubclass(cls, base)
    exc = _instance(cls)
    assert isinstance(exc, ItemscaleError)
    assert isinstance(exc, base)
    assert cls.exit_code == code
    with pytest.raises(base):  # a caller's `except ValueError` still catches it
        raise exc


def test_itemscale_is_the_only_base_the_family_adds() -> None:
    assert ItemscaleError.exit_code == 2
    assert ItemscaleError.__bases__ == (Exception,)


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fps: float = Field(default=1.0, gt=0)


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    options: _Options = _Options()


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    models: tuple[_Entry, ...] = Field(min_length=1)


def _errors(data: dict[str, Any]) -> list[Any]:
    with pytest.raises(ValidationError) as info:
        _File.model_validate(data)
    return info.value.errors()


def test_a_list_index_reads_as_the_user_writes_it() -> None:
    errors = _errors({"models": [{"name": "a"}, {"name": "b", "options": {"fps": -1}}]})
    assert validation_message(errors) == "models[1].options.fps: Input should be greater than 0"
    assert location_text(("models", 1, "options", "fps")) == "models[1].options.fps"
    assert location_text((0, "start")) == "[0].start"
    assert location_text(()) == "(top level)"
    assert location_text((), empty="(item)") == "(item)"


def test_a_nested_key_and_several_errors_are_joined() -> None:
    errors = _errors({"models": [{"name": "a", "options": {"fsp": 2}}], "extra": 1})
    assert validation_message(errors) == (
        "models[0].options.fsp: Extra inputs are not permitted; extra: Extra inputs are not permitted"
    )
    assert validation_message(errors, separator="\n", indent="  ") == (
        "  models[0].options.fsp: Extra inputs are not permitted\n"
        "  extra: Extra inputs are not permitted"
    )


def test_a_too_short_list_is_reported_only_when_it_is_the_whole_story() -> None:
    # an empty list: too_short is the error
    assert validation_message(_errors({"models": []})) == (
        "models: Tuple should have at least 1 item after validation, not 0"
    )
    # a list whose items fail: pydantic adds too_short as a consequence, which is left out
    errors = _errors({"models": [{"name": ""}]})
    assert {e["type"] for e in errors} == {"string_too_short", "too_short"}
    assert validation_message(errors) == "models[0].name: String should have at least 1 character"


def test_show_input_names_the_offending_scalar_only() -> None:
    errors = _errors({"models": [{"name": "a", "options": {"fps": -1}}, {"name": "b", "bad": [1]}]})
    assert validation_message(errors, show_input=True) == (
        "models[0].options.fps: Input should be greater than 0 (got -1); "
        "models[1].bad: Extra inputs are not permitted"
    )


def test_pydantic_tags_in_a_location_are_dropped() -> None:
    err = {"loc": ("grid", "function-after[_check(), tuple[int, ...]]", 0), "msg": "bad"}
    assert validation_message([err]) == "grid[0]: bad"


def test_the_protocol_message_is_unchanged() -> None:
    from itemscale.collect.protocol import ProtocolError, parse_protocol

    with pytest.raises(ProtocolError) as info:
        parse_protocol(
            {
                "models": [{"name": ""}],
                "benchmark": {"kind": "jsonl"},
                "grid": {"frames": [4], "sampling": ["linspace", {"name": "fps", "fps": -1}]},
            },
            source="p.toml",
        )
    assert str(info.value) == (
        "p.toml: invalid protocol:\n"
        "  models[0].name: String should have at least 1 character (got '')\n"
        "  models[0].backend: Field required\n"
        "  models[0].model: Field required\n"
        "  benchmark: Value error, benchmark kind 'jsonl' needs a path\n"
        "  grid.sampling[1].fps: Input should be greater than 0 (got -1)"
    )


def test_sha256_file_hashes_the_whole_file(tmp_path: Path) -> None:
    data = bytes(range(256)) * (3 * HASH_BLOCK // 256) + b"a tail past the last block"
    path = tmp_path / "blob.bin"
    path.write_bytes(data)
    assert len(data) > 3 * HASH_BLOCK
    assert sha256_file(path) == hashlib.sha256(data).hexdigest()
    assert sha256_file(str(path)) == hashlib.sha256(data).hexdigest()
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert sha256_file(empty) == hashlib.sha256(b"").hexdigest()


def test_the_old_homes_of_sha256_file_are_the_one_function() -> None:
    import itemscale.collect.importers._common
    import itemscale.collect.synth._suite
    import itemscale.report._manifest

    assert vars(itemscale.report._manifest)["sha256_file"] is sha256_file
    assert vars(itemscale.collect.importers._common)["sha256_file"] is sha256_file
    assert vars(itemscale.collect.synth._suite)["sha256_file"] is sha256_file


#: What `import itemscale` itself loads (the version and the old module paths' aliases, which
#: need the error family): any module of the package comes with them.
ROOT_LEAVES = frozenset(
    {"itemscale.core", "itemscale.core.errors", "itemscale.core.moved", "itemscale.core.version"}
)


def test_the_file_helpers_need_nothing_of_itemscale_but_its_errors() -> None:
    code = (
        "import sys, itemscale.core.files\n"
        "mods = sorted(m for m in sys.modules if m.startswith('itemscale.'))\n"
        "print(mods)\n"
        f"sys.exit(0 if mods == {sorted(ROOT_LEAVES | {'itemscale.core.files'})} else 1)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_cli_prints_a_typed_error_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from itemscale.cli import main

    missing = tmp_path / "nowhere"
    assert main(["analyze", str(missing)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"itemscale analyze: error: {missing}: not a run directory\n"


def test_cli_reports_a_bad_protocol_with_list_indexes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from itemscale.cli import main

    protocol = tmp_path / "p.toml"
    protocol.write_text(
        '[[models]]\nname = "a"\nbackend = "openai"\nmodel = "x"\n'
        '[benchmark]\nkind = "synthetic"\n[grid]\nframes = [4]\n'
        'sampling = ["linspace", {name = "fps", fps = -1}]\n',
        encoding="utf-8",
    )
    assert main(["sweep", str(protocol), "--dry-run"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"itemscale sweep: error: {protocol}: invalid protocol:\n"
        "  grid.sampling[1].fps: Input should be greater than 0 (got -1)\n"
    )


def test_cli_exits_with_the_errors_own_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import itemscale.cli.cmd_verify as cmd_verify
    from itemscale.cli import main
    from itemscale.collect.store import StoreError

    class RunFailed(ItemscaleError):
        exit_code = 1

    def raise_(exc: BaseException) -> Any:
        def run(args: Any) -> int:
            raise exc

        return run

    monkeypatch.setattr(cmd_verify, "run", raise_(StoreError("s.sqlite: the run store is newer")))
    assert main(["verify", "x"]) == 2
    assert capsys.readouterr().err == "itemscale verify: error: s.sqlite: the run store is newer\n"
    monkeypatch.setattr(cmd_verify, "run", raise_(RunFailed("the run failed")))
    assert main(["verify", "x"]) == 1
    assert capsys.readouterr().err == "itemscale verify: error: the run failed\n"
    monkeypatch.setattr(cmd_verify, "run", raise_(KeyboardInterrupt()))
    assert main(["verify", "x"]) == 130
    assert capsys.readouterr().err == "itemscale verify: interrupted\n"
