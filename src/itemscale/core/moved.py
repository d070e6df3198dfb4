"""The module paths of itemscale 0.1 before the wings (`itemscale.measures`, ...), kept for one
release: an old path gives the module at its new path (the same object) with the retired names'
`DeprecationWarning` (docs/glossary.md, "Retired names"). The finder sits first on
`sys.meta_path`, so an old path never loads a second copy; `itemscale/__init__.py` installs it."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Final

from .errors import warn_renamed

#: old path below `itemscale.` -> new path (a package's modules move with it)
MOVED_MODULES: Final[dict[str, str]] = {
    "errors": "core.errors",
    "files": "core.files",
    "plugins": "core.plugins",
    "sheets": "core.sheets",
    "responses": "core.responses",
    "protocol": "collect.protocol",
    "items": "collect.items",
    "video": "collect.video",
    "models": "collect.models",
    "sweep": "collect.sweep",
    "store": "collect.store",
    "importers": "collect.importers",
    "synth": "collect.synth",
    "measures": "analysis.measures",
    "comparison": "analysis.comparison",
    "policies": "analysis.policies",
    "audit": "analysis.audit",
    "artifact": "report",
    "testing": "workflows.testing",
}

#: old path below `itemscale.` -> where it went, for a module that left the installed package:
#: importing it (or a module below it) is a `ModuleNotFoundError` that says so
LEFT_PACKAGE: Final[dict[str, str]] = {
    "builtin": "training the built-in model is the recipe recipes/builtin_model/ of an itemscale "
    "checkout, not part of the installed package: import recipes.builtin_model from the "
    "checkout's root (docs/builtin-model.md)",
}

_ROOT = __name__.rsplit(".", 2)[0]  # "itemscale"


def moved_to(fullname: str) -> str | None:
    """The new path of an old module path, or None when it did not move."""
    prefix = _ROOT + "."
    if not fullname.startswith(prefix):
        return None
    rest = fullname[len(prefix) :]
    head, _, tail = rest.partition(".")
    new = MOVED_MODULES.get(head)
    if new is None:
        return None
    return f"{prefix}{new}" + (f".{tail}" if tail else "")


class _Alias(importlib.abc.Loader):
    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warn_renamed(f"the module path {spec.name}", self.new, stacklevel=8)
        module = importlib.import_module(self.new)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """The import system has just set the module's `__spec__` to the alias's: put its own
        back, or its package data (the report's templates) could not be found."""
        module.__spec__ = self.spec


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds an old module path as an alias of its new one."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        head = fullname.removeprefix(_ROOT + ".").partition(".")[0]
        if fullname.startswith(_ROOT + ".") and head in LEFT_PACKAGE:
            raise ModuleNotFoundError(f"{fullname}: {LEFT_PACKAGE[head]}")
        new = moved_to(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(new))


def install() -> None:
    """Put the finder first on `sys.meta_path` (once)."""
    if not any(isinstance(f, MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder())
