"""The top-level names are typed for a user's type checker, not `Any`.

`itemscale/__init__.py` resolves its names lazily (`__getattr__` over `_LAZY`), which a type
checker cannot follow; its `if TYPE_CHECKING:` imports say what each name is. These tests check
that the two lists agree name for name and box for box, that `__all__` is a list a checker can
read, that the imports never run (`import itemscale` loads no box), and that mypy, run on a
user's script outside the repository, reports a wrong call of `itemscale.analyze` against its
real signature.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, get_type_hints

import pytest
from pydantic import BaseModel

import itemscale
from _support.paths import REPO, SRC
from itemscale.analysis.measures import AnalysisOptions, AnalysisSettings
from itemscale.analysis.policies import InterventionSettings
from itemscale.workflows import InterventionOptions

INIT = SRC / "itemscale" / "__init__.py"


def type_checking_imports(source: str) -> dict[str, str]:
    """name -> box of every `from .box import name` inside the module's `if TYPE_CHECKING:`."""
    found: dict[str, str] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.level == 1 and stmt.module:
                for alias in stmt.names:
                    name = alias.asname or alias.name
                    assert name not in found, f"{name} imported twice"
                    found[name] = stmt.module
    return found


def test_the_reader_finds_type_checking_imports_only() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from .errors import ItemscaleError\n"
        "if TYPE_CHECKING:\n"
        "    from .measures import Estimate, analyze_responses\n"
        "    from .workflows import analyze\n"
        "if other:\n"
        "    from .sweep import run_sweep\n"
    )
    assert type_checking_imports(source) == {
        "Estimate": "measures",
        "analyze_responses": "measures",
        "analyze": "workflows",
    }


def test_type_checking_imports_are_the_lazy_names() -> None:
    typed = type_checking_imports(INIT.read_text(encoding="utf-8"))
    lazy = dict(itemscale._LAZY)
    assert typed == lazy, (
        f"lazy, not typed: {sorted(set(lazy) - set(typed))}; "
        f"typed, not lazy: {sorted(set(typed) - set(lazy))}; "
        f"other box: {sorted(n for n in set(typed) & set(lazy) if typed[n] != lazy[n])}"
    )


def test_all_is_a_literal_list_of_the_lazy_names() -> None:
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    value = next(
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    )
    # a checker reads `__all__` only when it is written out, not computed
    names = ast.literal_eval(value)
    assert sorted(names) == sorted(["__version__", *itemscale._LAZY])
    assert len(names) == len(set(names))


def test_importing_the_package_loads_no_box() -> None:
    code = (
        "import sys, itemscale\n"
        "print(sorted(m for m in sys.modules if m.startswith('itemscale.')))\n"
        "itemscale.Estimate\n"
        "print('itemscale.analysis.measures' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    # the leaves the package root needs: the version and the aliases of the old module paths
    leaves = "['itemscale.core', 'itemscale.core.errors', 'itemscale.core.moved', 'itemscale.core.version']"
    assert done.stdout.splitlines() == [leaves, "True"]


USER_SCRIPT = """\
import itemscale

wrong = itemscale.analyze(42)
count: int = itemscale.analyze("runs/demo")
fine = itemscale.analyze("runs/demo").models
typo = itemscale.analyze("runs/demo", bootstraps=200)
method = itemscale.analyze("runs/demo", ci="bcaa")
"""


@pytest.mark.slow
def test_a_user_s_mypy_sees_analyze_s_signature(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    (tmp_path / "user.py").write_text(USER_SCRIPT, encoding="utf-8")
    # the package found as a user's checker finds an installed one. Checked with the project's
    # own settings and cache: `make typecheck` has just checked the package and its stubs there,
    # so this check reads them (3 s) instead of checking them again from cold (about a minute);
    # a user's default settings report the same four errors
    env = {**os.environ, "MYPYPATH": str(SRC)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "user.py",
            "--config-file",
            str(REPO / "pyproject.toml"),
            "--no-error-summary",
            "--cache-dir",
            str(REPO / ".mypy_cache"),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        'user.py:3: error: Argument 1 to "analyze" has incompatible type "int"; expected '
        '"str | PathLike[str] | DataFrame"  [arg-type]',
        "user.py:4: error: Incompatible types in assignment (expression has type "
        '"AnalysisResult", variable has type "int")  [assignment]',
        'user.py:6: error: Unexpected keyword argument "bootstraps" for "analyze"; did you mean '
        '"bootstrap"?  [call-arg]',
        'user.py:6: note: "analyze" defined in "itemscale.workflows._analyze"',
        'user.py:7: error: Argument "ci" to "analyze" has incompatible type "Literal[\'bcaa\']"; '
        "expected \"Literal['bca', 'percentile']\"  [arg-type]",
    ]


@pytest.mark.parametrize(
    ("options", "settings"),
    [(AnalysisOptions, AnalysisSettings), (InterventionOptions, InterventionSettings)],
    ids=["analysis", "intervention"],
)
def test_typed_keywords_are_the_settings_fields(
    options: type[Any], settings: type[BaseModel]
) -> None:
    # `**options: Unpack[...]` types the keywords a call may give in place of the settings:
    # a field the typed dict lacks would be refused by a checker, a key the settings lack by
    # pydantic (an old name a field is still read by is left untyped, so a checker points a
    # call that uses it to the field's one name)
    assert set(get_type_hints(options)) == set(settings.model_fields)
    assert not options.__required_keys__
