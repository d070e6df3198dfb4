"""A plugin that exits or raises a `BaseException` (not an `Exception`) while it is imported or
while it registers is the usual `PluginError` naming its entry point, never a silent exit of the
CLI or a raw traceback; Ctrl-C still interrupts. The package is built and installed with pip
into a temporary folder, as `test_backend_plugins.py` does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from _support.packages import itemscale_with, pip_install
from itemscale.collect.models import Backend, PluginError
from itemscale.collect.models._load import register_backends
from itemscale.core.plugins import Registry

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "exit-cases"
version = "0.1.0"

[project.entry-points."itemscale.importers"]
exits = "exits_at_import:register"

[project.entry-points."itemscale_tests.base_at_import"]
odd = "odd_at_import:register"

[project.entry-points."itemscale_tests.exits_registering"]
later = "exit_plugins:exits"

[project.entry-points."itemscale_tests.base_registering"]
later = "exit_plugins:odd"

[project.entry-points."itemscale_tests.interrupted"]
stop = "exit_plugins:interrupted"

[tool.setuptools]
py-modules = ["exits_at_import", "odd_at_import", "exit_plugins"]
"""

EXITS_AT_IMPORT = "import sys\n\nsys.exit(3)\n\n\ndef register(register):\n    pass\n"

ODD_AT_IMPORT = """\
class Odd(BaseException):
    pass


raise Odd("not an Exception")


def register(register):
    pass
"""

EXIT_PLUGINS = """\
import sys


class Odd(BaseException):
    pass


def exits(register):
    sys.exit("bye")


def odd(register):
    raise Odd("while registering")


def interrupted(register):
    raise KeyboardInterrupt
"""


@pytest.fixture(scope="module")
def exit_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("setuptools", reason="building the package needs setuptools")
    root = tmp_path_factory.mktemp("exits")
    source = root / "exit-cases"
    source.mkdir()
    (source / "pyproject.toml").write_text(PYPROJECT)
    (source / "exits_at_import.py").write_text(EXITS_AT_IMPORT)
    (source / "odd_at_import.py").write_text(ODD_AT_IMPORT)
    (source / "exit_plugins.py").write_text(EXIT_PLUGINS)
    return pip_install(source, root / "site")


@pytest.fixture
def exit_path(exit_site: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(exit_site))
    yield exit_site


EXIT_SAID = (
    "itemscale import: error: importer plugin entry point 'exits = exits_at_import:register' "
    "of package exit-cases 0.1.0 (group itemscale.importers) cannot be imported: SystemExit: "
    "sys.exit(3)\n"
)


@pytest.mark.parametrize("args", [("import", "table", "t.csv", "-o", "run"), ("import", "--help")])
def test_a_plugin_exiting_at_import_is_an_error_naming_it(
    exit_site: Path, tmp_path: Path, args: tuple[str, ...]
) -> None:
    (tmp_path / "t.csv").write_text("model,item_id,config,frames,correct\nm,q1,8f,8,1\n")
    done = itemscale_with(exit_site, *args, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, EXIT_SAID)
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("group", "said"),
    [
        (
            "base_at_import",
            "entry point 'odd = odd_at_import:register' of package exit-cases 0.1.0 (group "
            "itemscale_tests.base_at_import) cannot be imported: Odd: not an Exception",
        ),
        (
            "exits_registering",
            "(group itemscale_tests.exits_registering) failed while registering: SystemExit: "
            "sys.exit('bye')",
        ),
        (
            "base_registering",
            "(group itemscale_tests.base_registering) failed while registering: Odd: while "
            "registering",
        ),
    ],
)
def test_a_base_exception_is_a_plugin_error(exit_path: Path, group: str, said: str) -> None:
    registry = Registry(
        what="backend", group=f"itemscale_tests.{group}", kind=Backend, builtin=register_backends
    )
    for _ in range(2):  # said again on every lookup: the registry is never half-filled
        with pytest.raises(PluginError) as info:
            _ = "hf" in registry
        assert said in str(info.value)


def test_ctrl_c_still_interrupts(exit_path: Path) -> None:
    registry = Registry(
        what="backend",
        group="itemscale_tests.interrupted",
        kind=Backend,
        builtin=register_backends,
    )
    with pytest.raises(KeyboardInterrupt):
        _ = "hf" in registry
