"""Which copy of a library this process really runs: the imported module's `__version__` and
file, beside what the installed distribution's metadata says. The two disagree when a source
checkout comes first on `PYTHONPATH` (the metadata then names a library that never ran), so
every version itemscale records or compares for a model's answers comes from here.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Final, TypedDict

#: distribution name -> the module it is imported as, where the two differ
IMPORT_NAMES: Final[dict[str, str]] = {"Pillow": "PIL"}


class ModuleRecord(TypedDict):
    """run.json `sessions[].stack.modules[DISTRIBUTION]`: the module as imported."""

    module: str
    #: the imported module's `__version__` (None: not importable, or it has none)
    version: str | None
    #: where it was imported from (None: not importable)
    file: str | None
    #: the installed distribution's metadata version (None: no metadata)
    metadata_version: str | None
    #: whether the imported module is the installed distribution's (its version and its
    #: file); None when either side is unknown
    matches_metadata: bool | None


@dataclass(frozen=True)
class ImportedPackage:
    """A distribution as this process imports it, and as its installed metadata says."""

    distribution: str
    module: str
    version: str | None
    file: str | None
    metadata_version: str | None
    #: the file the installed distribution would import the module from (None: no metadata)
    metadata_file: str | None

    @property
    def matches_metadata(self) -> bool | None:
        """Whether the module that runs is the installed one: the same version (a local label
        such as torch's `+cu130`, which only one side carries, is no difference) and the same
        file. None when the module was not imported or no metadata is installed."""
        if self.version is None or self.file is None or self.metadata_version is None:
            return None
        same_file = self.metadata_file is not None and _same_file(self.file, self.metadata_file)
        return same_file and _same_version(self.version, self.metadata_version)

    @property
    def running_version(self) -> str | None:
        """The version to record for what ran: the installed metadata's when the imported
        module is that distribution (so records stay comparable with earlier ones, which
        read the metadata), else the imported module's own."""
        if self.matches_metadata is False or self.metadata_version is None:
            return self.version if self.version is not None else self.metadata_version
        return self.metadata_version

    def record(self) -> ModuleRecord:
        return {
            "module": self.module,
            "version": self.version,
            "file": self.file,
            "metadata_version": self.metadata_version,
            "matches_metadata": self.matches_metadata,
        }


def imported_package(distribution: str) -> ImportedPackage:
    """`distribution` as this process imports it (imported now when it was not yet); one that
    fails to import is recorded with no version and no file."""
    module_name = IMPORT_NAMES.get(distribution, distribution)
    version: str | None = None
    file: str | None = None
    module = sys.modules.get(module_name)
    if module is None:
        try:
            module = importlib.import_module(module_name)
        except Exception:  # a broken install: its metadata is all there is to record
            module = None
    if module is not None:
        raw = getattr(module, "__version__", None)
        version = None if raw is None else str(raw)
        where = getattr(module, "__file__", None)
        file = None if where is None else str(where)
    meta_version: str | None = None
    meta_file: str | None = None
    try:
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        meta_version = dist.version
        if file is not None:
            name = Path(file).name
            relative = f"{module_name}/{name}" if name.startswith("__init__.") else name
            meta_file = str(dist.locate_file(relative))
    return ImportedPackage(distribution, module_name, version, file, meta_version, meta_file)


def _same_version(imported: str, installed: str) -> bool:
    if imported == installed:
        return True
    public_a, _, local_a = imported.partition("+")
    public_b, _, local_b = installed.partition("+")
    return public_a == public_b and not (local_a and local_b)


def _same_file(a: str, b: str) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return a == b
