"""The curated public API resolves, each subpackage's face (`__init__.py`) exports exactly what it
imports, every name the docs show importable is there, and analysis does not pull in torch or a
decoder."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys

import pytest

import itemscale
from _support.paths import DOCS, REPO, SRC

#: The folders of the wings that are split into boxes: their `__init__.py` is a docstring
#: (what the wing holds), not a face; each box inside has its own.
WING_FOLDERS = ("analysis", "collect", "core")

#: Packages with a curated face (`analysis.measures`, `report`, ...); `cli` is the command line,
#: not a library face.
FACES = sorted(
    ".".join(p.parent.relative_to(SRC / "itemscale").parts)
    for p in (SRC / "itemscale").glob("**/__init__.py")
    if p.parent != SRC / "itemscale"
    and p.parent.name != "cli"
    and p.parent.relative_to(SRC / "itemscale").as_posix() not in WING_FOLDERS
)


@pytest.mark.parametrize("wing", WING_FOLDERS)
def test_a_wing_folder_is_a_docstring_not_a_face(wing: str) -> None:
    """Importing `itemscale.analysis` loads nothing else: a wing's names live in its boxes."""
    tree = ast.parse((SRC / "itemscale" / wing / "__init__.py").read_text(encoding="utf-8"))
    assert ast.get_docstring(tree), wing
    assert len(tree.body) == 1, f"itemscale/{wing}/__init__.py holds more than its docstring"


def test_every_public_name_resolves() -> None:
    for name in itemscale.__all__:
        assert getattr(itemscale, name) is not None, name


@pytest.mark.parametrize("box", FACES)
def test_a_face_exports_exactly_what_it_imports(box: str) -> None:
    """`__all__` is the face: no private name in it, every name resolves, and the face imports
    no name it does not export (a name another package needs goes into `__all__`; a name only
    tests need is imported by them from its private module). A name imported under a private
    alias (`as _x`) is the face's own machinery, such as the `__getattr__` that resolves a
    renamed name with a deprecation warning."""
    module = importlib.import_module(f"itemscale.{box}")
    exported = list(module.__all__)
    assert len(exported) == len(set(exported)), f"itemscale.{box}.__all__ repeats a name"
    assert not [n for n in exported if n.startswith("_")], exported
    for name in exported:
        assert getattr(module, name) is not None, f"itemscale.{box}.{name}"
    face = SRC / "itemscale" / box.replace(".", "/") / "__init__.py"
    tree = ast.parse(face.read_text(encoding="utf-8"))
    # a name the face resolves on first use (`__getattr__`) is imported for the type checker
    typing_only = [
        inner
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id.endswith("TYPE_CHECKING")
        for inner in node.body
    ]
    imported = {
        alias.asname or alias.name
        for node in [*tree.body, *typing_only]
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if not (alias.asname or "").startswith("_")
    }
    assert imported == set(exported), (
        f"imported, not exported: {sorted(imported - set(exported))}; "
        f"exported, not imported: {sorted(set(exported) - imported)}"
    )


def test_the_top_level_api_comes_from_the_faces() -> None:
    for name, box in itemscale._LAZY.items():
        assert name in importlib.import_module(f"itemscale.{box}").__all__, (name, box)


def _documented_names() -> set[tuple[str, str, str]]:
    """(document, module, name) for each `from itemscale.x import name` in a python block of
    README.md or docs/*.md, and each `itemscale.x.name` the prose names in backticks."""
    found: set[tuple[str, str, str]] = set()
    for doc in [REPO / "README.md", *sorted(DOCS.glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for block in re.findall(r"```python\n(.*?)```", text, re.S):
            try:
                tree = ast.parse(block)
            except SyntaxError:  # a sketch with elisions, not a program
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("itemscale"):
                    found |= {(doc.name, str(node.module), a.name) for a in node.names}
        for module, name in re.findall(r"`(itemscale\.[a-z_]+)\.([A-Za-z]\w*)[`(\[.]", text):
            found.add((doc.name, module, name))
    return found


def test_every_name_the_docs_show_importable_resolves() -> None:
    documented = _documented_names()
    assert len(documented) > 30, "the docs' references were not found"
    missing = []
    for doc, module, name in sorted(documented):
        if not hasattr(importlib.import_module(module), name):
            missing.append(f"{doc}: {module}.{name}")
    assert not missing, "\n".join(missing)


def test_analysis_imports_neither_torch_nor_a_decoder() -> None:
    code = (
        "import sys, itemscale\n"
        "from itemscale import analyze_responses, cascade_report, audit_transitions, import_table\n"
        "from itemscale.analysis.comparison import compare_sides\n"
        "import itemscale.cli.cmd_analyze\n"
        "bad = [m for m in ('torch', 'av', 'transformers', 'ray') if m in sys.modules]\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_analyze_s_help_loads_no_page_machinery() -> None:
    """`itemscale analyze --help` builds the parser from cmd_analyze: the report package it
    writes pages with (Jinja2, the figures, every section) comes only when a result is printed."""
    code = (
        "import sys\n"
        "from itemscale.cli import main\n"
        "try:\n"
        "    main(['analyze', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print([m for m in ('itemscale.report', 'jinja2') if m in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]", done.stdout[-300:]
