"""The package's shape, checked from the source: the import graph has no circle, no box imports
a box below it in the pipeline, no module is longer than a reader can hold, and analysis never
needs torch or a decoder. (README, "The pipeline", draws the same order.)"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

from _support.paths import SRC

PACKAGE = SRC / "itemscale"

#: Every box of the pipeline, lowest first: a box may import only boxes listed before it.
LAYERS: tuple[str, ...] = (
    "errors",
    "files",
    "responses",
    "sheets",
    "items",
    "models",
    "protocol",
    "synth",
    "video",
    "builtin",
    "store",
    "sweep",
    "importers",
    "measures",
    "policies",
    "audit",
    "artifact",
    "workflows",
    "cli",
)
#: Boxes that read a response table alone: no model, decoder or sweep below them.
ANALYSIS = ("measures", "policies", "audit", "artifact")
HEAVY = ("models", "video", "sweep", "builtin", "synth")
MAX_LINES = 600


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Absolute names of the itemscale modules `path` imports (at any depth of the file)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("itemscale")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join([*base, *([node.module] if node.module else [])])
            elif node.module and node.module.startswith("itemscale"):
                target = node.module
            else:
                continue
            found.add(target)
            for alias in node.names:  # `from . import x` may name a submodule
                found.add(f"{target}.{alias.name}")
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        for target in _imports(path):
            if target in modules and target != name:
                graph[name].add(target)
    return graph


def _box(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "itemscale"


def test_no_box_imports_a_box_below_it() -> None:
    wrong = []
    for source, targets in _graph().items():
        a = _box(source)
        for target in targets:
            b = _box(target)
            if a == b or "itemscale" in (a, b) or b == "__version__" or a == "__main__":
                continue
            if a not in LAYERS or b not in LAYERS:
                wrong.append(f"{source} -> {target}: a box missing from LAYERS")
            elif LAYERS.index(b) > LAYERS.index(a):
                wrong.append(f"{source} -> {target}")
    assert not wrong, "imports against the pipeline's order:\n" + "\n".join(sorted(wrong))


def test_analysis_needs_no_model_decoder_or_sweep() -> None:
    graph = _graph()
    wrong = [
        f"{s} -> {t}"
        for s, targets in graph.items()
        for t in targets
        if _box(s) in ANALYSIS and _box(t) in HEAVY
    ]
    assert not wrong, "\n".join(sorted(wrong))


def test_the_import_graph_has_no_circle() -> None:
    graph = _graph()
    packages = {_module_name(p) for p in PACKAGE.rglob("__init__.py")}

    def parent(module: str) -> str:
        return module.rsplit(".", 1)[0]

    # a package's face importing its own modules (and a module importing its own package's
    # name, as `from . import x` does) is how a package is built, not a circle
    edges = {
        s: {t for t in ts if t != parent(s) and not (s in packages and t.startswith(s + "."))}
        for s, ts in graph.items()
    }
    seen: dict[str, int] = {}
    stack: list[str] = []
    circles: list[str] = []

    def visit(node: str) -> None:
        seen[node] = 1
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if seen.get(target) == 1:
                circles.append(" -> ".join([*stack[stack.index(target) :], target]))
            elif target not in seen:
                visit(target)
        stack.pop()
        seen[node] = 2

    for node in sorted(edges):
        if node not in seen:
            visit(node)
    assert not circles, "import circles:\n" + "\n".join(circles)


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: _module_name(p))
def test_no_module_is_too_long(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{_module_name(path)}: {lines} lines (split it by what it does)"
