"""The package's shape, checked from the source: a core and two wings, each importing only the
wings it may (the analysis never imports the write wing, so it never needs torch or a
decoder), and no box importing the package root; within them the boxes import one another only
in the order of docs/architecture.md's tiers, never through another box's private modules,
with no circle; no module or function is longer than a reader can hold.

Each rule is a function of plain data (a module's source, an import graph), applied to the real
package by one test and to a planted violation by another, so a rule that stopped catching
anything would fail too.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from _support.paths import SRC

PACKAGE = SRC / "itemscale"

#: The boxes in docs/architecture.md's tiers, lowest first: a box may import only boxes of an
#: earlier tier, never one of its own tier or a later one. The page is the one statement of the
#: order; the test reads it (`layers_from_page`), so page and code cannot drift apart.
ARCHITECTURE_PAGE = SRC.parent / "docs" / "architecture.md"


def layers_from_page(text: str) -> tuple[tuple[str, ...], ...]:
    """The tiers of the page's table (`| 3 | `items` | ... |`), in order, each as its boxes."""
    tiers: list[tuple[int, tuple[str, ...]]] = []
    for line in text.splitlines():
        match = re.match(r"^\| (\d+) \| ([^|]*) \|", line)
        if match:
            tiers.append((int(match[1]), tuple(re.findall(r"`([\w.]+)`", match[2]))))
    numbers = [n for n, _ in tiers]
    if numbers != list(range(len(tiers))):
        raise ValueError(f"docs/architecture.md: tiers are not numbered 0, 1, 2, ...: {numbers}")
    return tuple(boxes for _, boxes in tiers)


LAYERS: tuple[tuple[str, ...], ...] = layers_from_page(ARCHITECTURE_PAGE.read_text("utf-8"))
#: The wings (docs/architecture.md, "Two wings and a core") and the wings each may import: the
#: core is the contract both wings share; the write wing (`collect`) produces rows and the
#: analysis wing reads them, neither importing the other; the presentation (`report`) renders
#: the analysis; only `workflows` and `cli` import every wing.
WINGS: dict[str, frozenset[str]] = {
    "core": frozenset(),
    "collect": frozenset({"core"}),
    "analysis": frozenset({"core"}),
    "report": frozenset({"core", "analysis"}),
    "workflows": frozenset({"core", "collect", "analysis", "report"}),
    "cli": frozenset({"core", "collect", "analysis", "report", "workflows"}),
}
#: Folders of the repository run from a checkout, beside the package (training the built-in
#: model): users of the package's faces, never imported by it.
RECIPES = SRC.parent / "recipes"
#: Wings whose subpackages and modules are boxes of their own (`collect.sweep`, `core.errors`);
#: `report`, `workflows` and `cli` are one box each.
SPLIT_WINGS = ("core", "collect", "analysis")
MAX_LINES = 600
#: Statements of a function body after its docstring (blank lines and comments among them count).
MAX_FUNCTION_LINES = 100


# -- reading the source -----------------------------------------------------------------------


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _box(module: str) -> str:
    """`itemscale.collect.sweep._plan` -> `collect.sweep`, `itemscale.core.errors` ->
    `core.errors`, `itemscale.report._html` -> `report`; the package root, and a wing's own
    face (`itemscale.collect`, which imports nothing), are the box `itemscale`."""
    parts = module.split(".")
    if len(parts) == 1:
        return "itemscale"
    if parts[1] in SPLIT_WINGS:
        return f"{parts[1]}.{parts[2]}" if len(parts) > 2 else "itemscale"
    return parts[1]


def _wing(module: str) -> str:
    """`itemscale.collect.sweep._plan` -> `collect`; the package root is `itemscale`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "itemscale"


def _is_private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def imports_of(name: str, source: str, *, is_package: bool) -> list[tuple[str, tuple[str, ...]]]:
    """(absolute module, names taken from it) of every itemscale import in `source`, at any
    depth of the file (imports inside functions count), for the module called `name`."""
    package = name if is_package else name.rsplit(".", 1)[0]
    found: list[tuple[str, tuple[str, ...]]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(a.name, ()) for a in node.names if a.name.split(".")[0] == "itemscale"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            elif node.module and node.module.split(".")[0] == "itemscale":
                target = node.module
            else:
                continue
            found.append((target, tuple(a.name for a in node.names)))
    return found


def import_graph(sources: Mapping[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """module -> the modules of `sources` it imports; `sources`: name -> (source, is_package).
    `from x import y` counts as importing `x`, and `x.y` when `y` is a module."""
    graph: dict[str, set[str]] = defaultdict(set)
    for name, (source, is_package) in sources.items():
        for target, names in imports_of(name, source, is_package=is_package):
            submodules = [f"{target}.{n}" for n in names if f"{target}.{n}" in sources]
            # `from .. import x` takes a module x from its package, not the package's face
            # (the root's face only where a name is not a module: `from .. import __version__`)
            faces = [] if submodules and len(submodules) == len(names) else [target]
            for module in (*faces, *submodules):
                if module in sources and module != name:
                    graph[name].add(module)
    return graph


def _package_sources() -> dict[str, tuple[str, bool]]:
    return {
        name: (path.read_text(encoding="utf-8"), path.name == "__init__.py")
        for name, path in _modules().items()
    }


# -- the rules, as functions of plain data -------------------------------------------------------


def order_violations(
    graph: Mapping[str, Iterable[str]], layers: tuple[tuple[str, ...], ...]
) -> list[str]:
    """Imports of a box of the same or a later tier, and boxes missing from `layers`. No import
    is excepted by name: a box that needs a later one is drawn in the wrong tier."""
    tier = {box: i for i, boxes in enumerate(layers) for box in boxes}
    wrong = []
    for source, targets in graph.items():
        a = _box(source)
        for target in targets:
            b = _box(target)
            if a == b or "itemscale" in (a, b) or a == "__main__":
                continue
            if a not in tier or b not in tier:
                wrong.append(f"{source} -> {target}: a box missing from LAYERS")
            elif tier[b] >= tier[a]:
                wrong.append(f"{source} -> {target}")
    return sorted(wrong)


def wing_violations(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """Imports of a wing the importing wing may not use (`WINGS`), and modules outside any
    wing."""
    wrong = []
    for source, targets in graph.items():
        a = _wing(source)
        if a in ("itemscale", "__main__"):
            continue
        for target in targets:
            b = _wing(target)
            if a == b or b == "itemscale":
                continue
            if a not in WINGS or b not in WINGS:
                wrong.append(f"{source} -> {target}: a module outside the wings")
            elif b not in WINGS[a]:
                wrong.append(f"{source} -> {target}: {a} may not import {b}")
    return sorted(wrong)


def root_imports(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """Imports of the package root (`from .. import __version__`, `import itemscale`) by any
    module but `itemscale.__main__`: the root's lazy names are for users, and a box that reads
    them runs back up the pipeline."""
    return sorted(
        f"{source} -> itemscale"
        for source, targets in graph.items()
        if source not in ("itemscale", "itemscale.__main__") and "itemscale" in targets
    )


def misplaced_boxes(
    graph: Mapping[str, Iterable[str]], layers: tuple[tuple[str, ...], ...]
) -> list[str]:
    """Boxes not drawn one tier above the highest box they import (tier 0: none), each with the
    tier its imports put it in: the table is the real order, not a plan the code has left (a
    box drawn higher than it needs says it depends on what it does not)."""
    tier = {box: i for i, boxes in enumerate(layers) for box in boxes}
    needs: dict[str, int] = dict.fromkeys(tier, 0)
    for source, targets in graph.items():
        a = _box(source)
        for target in targets:
            b = _box(target)
            if a != b and a in tier and b in tier:
                needs[a] = max(needs[a], tier[b] + 1)
    return sorted(
        f"{box}: drawn in tier {tier[box]}, its imports put it in tier {needs[box]}"
        for box in tier
        if needs[box] != tier[box]
    )


def private_imports(name: str, source: str, *, is_package: bool) -> set[tuple[str, str]]:
    """(module, private module or name) for each import of another box's private part:
    `from ..x._y import z`, `import itemscale.x._y`, `from ..x import _y`."""
    found = set()
    for target, names in imports_of(name, source, is_package=is_package):
        if _box(target) in (_box(name), "itemscale"):
            continue
        parts = target.split(".")
        private = next((i for i, p in enumerate(parts) if _is_private(p)), None)
        if private is not None:
            found.add((name, ".".join(parts[: private + 1])))
        found |= {(name, f"{target}.{n}") for n in names if _is_private(n)}
    return found


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def long_functions(module: str, source: str, limit: int) -> dict[str, int]:
    """`module.qualified.name` -> body lines, for each function whose body after its docstring
    runs over `limit` lines (by the AST's line numbers, so comments and blank lines count)."""
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                body = child.body
                if len(body) > 1 and _is_docstring(body[0]):
                    body = body[1:]
                lines = (child.end_lineno or child.lineno) - body[0].lineno + 1
                if lines > limit:
                    found[f"{prefix}{child.name}"] = lines
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source), f"{module}.")
    return found


def circles(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """Every cycle a depth-first walk of `graph` meets, as `a -> b -> a`."""
    seen: dict[str, int] = {}
    stack: list[str] = []
    found: list[str] = []

    def visit(node: str) -> None:
        seen[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if seen.get(target) == 1:
                found.append(" -> ".join([*stack[stack.index(target) :], target]))
            elif target not in seen:
                visit(target)
        stack.pop()
        seen[node] = 2

    for node in sorted(graph):
        if node not in seen:
            visit(node)
    return found


# -- the package --------------------------------------------------------------------------------


def test_every_box_is_in_layers_once() -> None:
    boxes = {_box(m) for m in _modules()} - {"itemscale", "__main__"}
    listed = [box for tier in LAYERS for box in tier]
    assert len(listed) == len(set(listed)), f"a box listed twice: {sorted(listed)}"
    assert set(listed) == boxes, f"missing: {boxes - set(listed)}; gone: {set(listed) - boxes}"


def test_no_box_imports_a_box_of_its_tier_or_above() -> None:
    wrong = order_violations(import_graph(_package_sources()), LAYERS)
    assert not wrong, "imports against the pipeline's order:\n" + "\n".join(wrong)


def test_each_box_is_drawn_just_above_what_it_imports() -> None:
    wrong = misplaced_boxes(import_graph(_package_sources()), LAYERS)
    assert not wrong, "move these boxes in docs/architecture.md's table:\n" + "\n".join(wrong)


def test_each_wing_imports_only_the_wings_it_may() -> None:
    wrong = wing_violations(import_graph(_package_sources()))
    assert not wrong, "imports across the wings (docs/architecture.md):\n" + "\n".join(wrong)


def test_no_box_imports_the_package_root() -> None:
    wrong = root_imports(import_graph(_package_sources()))
    assert not wrong, "import the name from its own module:\n" + "\n".join(wrong)


def test_the_subpackages_are_the_wings() -> None:
    subpackages = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))
    assert subpackages == sorted(WINGS), subpackages


def test_the_recipes_use_the_package_s_faces_and_the_package_never_imports_them() -> None:
    """The built-in model's training left the package (docs/architecture.md): the package runs
    without a checkout's recipes, and a recipe reads only what the package exports."""
    wrong = [
        f"{name} imports the recipes"
        for name, (source, _) in _package_sources().items()
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import | ast.ImportFrom)
        and any(
            (n or "").split(".")[0] == "recipes"
            for n in (
                [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            )
        )
    ]
    for path in sorted(RECIPES.rglob("*.py")):
        name = ".".join(path.relative_to(RECIPES.parent).with_suffix("").parts)
        for target, _ in imports_of(name, path.read_text(encoding="utf-8"), is_package=False):
            if target.startswith("itemscale") and any(map(_is_private, target.split("."))):
                wrong.append(f"{name} imports {target}")
    assert len(list(RECIPES.rglob("*.py"))) > 10
    assert not wrong, "\n".join(wrong)


def test_no_box_imports_another_box_s_private_modules() -> None:
    found: set[tuple[str, str]] = set()
    for name, (source, is_package) in _package_sources().items():
        found |= private_imports(name, source, is_package=is_package)
    assert not found, "import these through the package's __init__ (its __all__):\n" + "\n".join(
        f"{s} imports {t}" for s, t in sorted(found)
    )


def test_the_import_graph_has_no_circle() -> None:
    graph = import_graph(_package_sources())
    packages = {_module_name(p) for p in PACKAGE.rglob("__init__.py")}

    def parent(module: str) -> str:
        return module.rsplit(".", 1)[0]

    # a package's face importing its own modules (and a module importing its own package's
    # name, as `from . import x` does) is how a package is built, not a circle
    edges = {
        s: {t for t in ts if t != parent(s) and not (s in packages and t.startswith(s + "."))}
        for s, ts in graph.items()
    }
    found = circles(edges)
    assert not found, "import circles:\n" + "\n".join(found)


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: _module_name(p))
def test_no_module_is_too_long(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{_module_name(path)}: {lines} lines (split it by what it does)"


def test_no_function_is_too_long() -> None:
    found: dict[str, int] = {}
    for name, (source, _) in _package_sources().items():
        found |= long_functions(name, source, MAX_FUNCTION_LINES)
    assert not found, (
        f"functions over {MAX_FUNCTION_LINES} lines (split them by step):\n"
        + "\n".join(f"{f}: {n}" for f, n in sorted(found.items()))
    )


# -- each rule catches a planted violation ---------------------------------------------------------


def test_order_rule_catches_an_import_of_a_later_or_same_tier() -> None:
    layers = (("responses",), ("video", "synth"), ("sweep",))
    graph = {
        "itemscale.video._pipeline": {"itemscale.responses", "itemscale.sweep"},
        "itemscale.synth._suite": {"itemscale.video"},
        "itemscale.sweep._plan": {"itemscale.video", "itemscale.sweep._cells", "itemscale"},
        "itemscale.audit._frames": {"itemscale.responses"},
    }
    assert order_violations(graph, layers) == [
        "itemscale.audit._frames -> itemscale.responses: a box missing from LAYERS",
        "itemscale.synth._suite -> itemscale.video",
        "itemscale.video._pipeline -> itemscale.sweep",
    ]


def test_wing_rule_catches_an_import_across_the_wings() -> None:
    graph = {
        "itemscale.analysis.measures._analyze": {
            "itemscale.core.responses",
            "itemscale.collect.sweep",
            "itemscale.analysis.comparison",
        },
        "itemscale.collect.importers._run": {"itemscale.analysis.measures", "itemscale.core"},
        "itemscale.report._html": {"itemscale.analysis.measures", "itemscale.workflows"},
        "itemscale.cli.cmd_analyze": {"itemscale.workflows", "itemscale.collect.models"},
        "itemscale.extra._x": {"itemscale.core.errors"},
    }
    assert wing_violations(graph) == [
        "itemscale.analysis.measures._analyze -> itemscale.collect.sweep: analysis may not "
        "import collect",
        "itemscale.collect.importers._run -> itemscale.analysis.measures: collect may not "
        "import analysis",
        "itemscale.extra._x -> itemscale.core.errors: a module outside the wings",
        "itemscale.report._html -> itemscale.workflows: report may not import workflows",
    ]


def test_root_rule_catches_an_import_of_the_package_root() -> None:
    sources = {
        "itemscale": ("__version__ = '0'", True),
        "itemscale.__main__": ("from .cli import main", False),
        "itemscale.cli": ("from .. import __version__", True),
        "itemscale.core": ("", True),
        "itemscale.core.version": ("__version__ = '0'", False),
        "itemscale.report._build": ("from ..core import version", False),
        "itemscale.collect.synth._suite": ("import itemscale", False),
    }
    graph = import_graph(sources)
    assert root_imports(graph) == [
        "itemscale.cli -> itemscale",
        "itemscale.collect.synth._suite -> itemscale",
    ]
    assert graph["itemscale.report._build"] == {"itemscale.core.version"}


def test_placement_rule_catches_a_box_drawn_too_high_or_too_low() -> None:
    layers = (("responses", "audit"), ("video",), ("sweep", "measures"))
    graph = {
        "itemscale.video._pipeline": {"itemscale.responses"},
        "itemscale.sweep._plan": {"itemscale.video", "itemscale.responses"},
        "itemscale.measures._analyze": {"itemscale.responses"},
        "itemscale.audit._frames": {"itemscale.video"},
    }
    assert misplaced_boxes(graph, layers) == [
        "audit: drawn in tier 0, its imports put it in tier 2",
        "measures: drawn in tier 2, its imports put it in tier 1",
    ]
    assert misplaced_boxes(graph, (("responses",), ("video", "measures"), ("sweep", "audit"))) == []


def test_private_import_rule_catches_every_spelling() -> None:
    source = (
        "from ..protocol._config import IMAGE_FACTOR\n"
        "from ..protocol import Configuration\n"
        "from ..models import _hf\n"
        "from ._cache import FrameCache\n"
        "from .. import __version__\n"
        "import itemscale.store._store\n"
        "def later():\n"
        "    from itemscale.responses._extract import extract_choice\n"
    )
    assert private_imports("itemscale.video._resize", source, is_package=False) == {
        ("itemscale.video._resize", "itemscale.protocol._config"),
        ("itemscale.video._resize", "itemscale.models._hf"),
        ("itemscale.video._resize", "itemscale.store._store"),
        ("itemscale.video._resize", "itemscale.responses._extract"),
    }
    face = "from ._resize import smart_resize\nfrom ..protocol import IMAGE_FACTOR\n"
    assert private_imports("itemscale.video", face, is_package=True) == set()


def test_function_length_rule_counts_the_body_after_the_docstring() -> None:
    source = textwrap.dedent(
        '''
        def five():
            """A docstring over
            two lines, not counted."""
            a = 1
            b = 2

            # a comment and a blank line count: they are lines a reader reads
            return a + b

        class Holder:
            def six(self):
                def inner():
                    return 1

                a = inner()
                b = a
                return b
        '''
    )
    assert long_functions("m", source, 5) == {"m.Holder.six": 6}
    assert long_functions("m", source, 4) == {"m.five": 5, "m.Holder.six": 6}
    nested = long_functions("m", source, 0)
    assert nested == {"m.five": 5, "m.Holder.six": 6, "m.Holder.six.inner": 1}


def test_circle_rule_finds_a_cycle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a -> b -> c -> a"]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_page_table_is_what_the_layers_come_from() -> None:
    page = "| tier | boxes |\n| --- | --- |\n| 0 | `errors`, `sheets` | x |\n| 1 | `files` | y |\n"
    assert layers_from_page(page) == (("errors", "sheets"), ("files",))
    with pytest.raises(ValueError, match="not numbered"):
        layers_from_page("| 0 | `errors` | x |\n| 2 | `files` | y |\n")
    # every box of the package is in some tier of the real page
    boxes = {_box(m) for m in _modules()} - {"itemscale", "__main__"}
    assert boxes <= {b for tier in LAYERS for b in tier}
