"""itemscale's own entries are declared where they are defined: a module dropped into a
registry's package is found on the registry's first read, listed by its `order` (not by file
name), with no list edited; a module that fails to import is a `PluginError`, and one name
declared twice is refused where it is declared. The shipped registries list their entries in
the order the CLI has always printed them."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from itemscale.analysis.measures import BUILT_IN_MEASURES, MEASURES
from itemscale.collect.importers import IMPORTERS
from itemscale.collect.items import BENCHMARK_LOADERS
from itemscale.collect.models import BACKENDS, PluginError
from itemscale.core.plugins import Registry

#: the package's registry: entries are plain strings, so the test sees only the mechanism
INIT = """\
from itemscale.core.plugins import Registry

TOOLS = Registry(what="tool", group="itemscale_tests.no_such_group", kind=str, package=__name__)
"""


def _module(order: int, name: str) -> str:
    return f"from . import TOOLS\n\nTOOLS.declare({name!r}, 'the {name} tool', order={order})\n"


@pytest.fixture
def package(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A fresh importable package `declared_tools_<n>` with the registry in its `__init__`."""
    name = "declared_tools_" + re.sub(r"\W", "_", tmp_path.name)
    folder = tmp_path / name
    folder.mkdir()
    (folder / "__init__.py").write_text(INIT, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        yield name, folder
    finally:
        sys.path.remove(str(tmp_path))
        for loaded in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
            del sys.modules[loaded]


def _registry(name: str) -> Registry[str]:
    module: ModuleType = __import__(name)
    tools: Registry[str] = module.TOOLS
    return tools


def test_a_module_dropped_into_the_package_is_found_in_its_order(
    package: tuple[str, Path],
) -> None:
    name, folder = package
    (folder / "_a_last.py").write_text(_module(30, "last"), encoding="utf-8")
    (folder / "_b_first.py").write_text(_module(10, "first"), encoding="utf-8")
    tools = _registry(name)
    assert list(tools) == ["first", "last"]  # by order, not by file name
    assert tools["first"] == "the first tool"
    assert str(tools.origin("first")) == "itemscale (built in)"

    (folder / "_c_between.py").write_text(_module(20, "between"), encoding="utf-8")
    assert list(tools) == ["first", "last"]  # read once, as entry points are
    tools.reload()
    assert list(tools) == ["first", "between", "last"]


def test_a_module_that_cannot_be_imported_is_a_plugin_error(package: tuple[str, Path]) -> None:
    name, folder = package
    (folder / "_broken.py").write_text("import no_such_module_anywhere\n", encoding="utf-8")
    tools = _registry(name)
    for _ in range(2):  # said on every lookup: the registry is never half-filled
        with pytest.raises(PluginError) as info:
            _ = "first" in tools
        assert str(info.value) == (
            "tool plugin itemscale (built in) (group itemscale_tests.no_such_group) failed "
            "while registering: ModuleNotFoundError: No module named 'no_such_module_anywhere'"
        )


def test_a_name_declared_twice_is_refused_where_it_is_declared(
    package: tuple[str, Path],
) -> None:
    name, _ = package
    tools = _registry(name)
    tools.declare("once", "a tool", order=10)
    with pytest.raises(ValueError, match="tool 'once' is declared twice"):
        tools.declare("once", "another tool", order=20)


def test_a_declared_entry_of_the_wrong_type_is_refused_on_reading(
    package: tuple[str, Path],
) -> None:
    name, folder = package
    (folder / "_odd.py").write_text(
        "from . import TOOLS\n\nTOOLS.declare('odd', 42, order=10)\n", encoding="utf-8"
    )
    with pytest.raises(
        PluginError, match=re.escape("registers tool 'odd' as a int, not an builtins.str")
    ):
        _ = list(_registry(name))


def test_the_shipped_entries_are_declared_in_their_modules_in_the_order_printed() -> None:
    assert list(BACKENDS) == ["hf", "openai", "builtin"]
    assert list(IMPORTERS) == ["table", "lmms-eval", "vlmevalkit"]
    assert list(BENCHMARK_LOADERS) == [
        "videomme",
        "mlvu",
        "longvideobench",
        "mlvu_generation",
        "avsd",
    ]
    modules = {
        BACKENDS.group: {BACKENDS[n].load.__module__ for n in BACKENDS},
        IMPORTERS.group: {IMPORTERS[n].run.__module__ for n in IMPORTERS},
        BENCHMARK_LOADERS.group: {BENCHMARK_LOADERS[n].load.__module__ for n in BENCHMARK_LOADERS},
    }
    assert modules == {
        BACKENDS.group: {
            "itemscale.collect.models.backends.hf",
            "itemscale.collect.models.backends.openai",
            "itemscale.collect.models.backends.builtin",
        },
        IMPORTERS.group: {
            "itemscale.collect.importers._table_run",
            "itemscale.collect.importers._lmms_eval",
            "itemscale.collect.importers._vlmevalkit",
        },
        BENCHMARK_LOADERS.group: {
            "itemscale.collect.items._benchmarks",
            "itemscale.collect.items._generation",
        },
    }
    built_in = [n for n in MEASURES if MEASURES.origin(n).built_in]
    assert [f"{m.key}.{m.kinds[0]}" for m in BUILT_IN_MEASURES] == built_in
    assert built_in[:8] == [
        "best_fixed.binary",
        "oracle.binary",
        "oracle_headroom.binary",
        "harmful_rate.binary",
        "beneficial_rate.binary",
        "terminal_regression_rate.binary",
        "text_answerable_rate.binary",
        "text_overwrite_rate.binary",
    ]
