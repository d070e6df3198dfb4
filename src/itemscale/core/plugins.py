"""Registries that installed packages can add to: backends, importers, benchmarks, measures.

A registry maps names (a protocol's `backend = "hf"`, `itemscale import KIND`) to entries of one
type. itemscale's own are declared where they are defined (`REGISTRY.declare(name, entry,
order=...)`), every module of the registry's `package` imported on first read, so adding one is
one file. Another package adds a *plugin* (a function called with `register(name, entry)`)
through an entry point of the registry's group:

[project.entry-points."itemscale.backends"] toy = "toy_backend:register"

Nothing is imported until a name is looked up or listed (`itemscale --help` stays fast). A plugin
that cannot be used is a `PluginError` naming the entry point and its package, raised on every
lookup until fixed: a registry is never half-filled. The order is stated: itemscale's own by
`order` (then name), then entry points by (distribution, entry point name), then run-time
additions (`add`) as added, so the same packages print the same on every machine.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from .errors import ItemscaleError

#: The entry point groups of `BACKENDS`, `IMPORTERS`, `BENCHMARK_LOADERS` and `MEASURES`.
BACKENDS_GROUP = "itemscale.backends"
IMPORTERS_GROUP = "itemscale.importers"
BENCHMARKS_GROUP = "itemscale.benchmarks"
MEASURES_GROUP = "itemscale.measures"

#: What a registered name may be: it is written in protocol files and on command lines.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")

T = TypeVar("T")
E = TypeVar("E")


class PluginError(ItemscaleError, RuntimeError):
    """An installed plugin cannot be registered (entry point, package and what is wrong named).
    Exit status 2: fix or uninstall the package."""


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a registered name came from: itemscale itself, a test, or an entry point."""

    #: `toy = toy_backend:register`, or None for itemscale's own and test registrations
    entry_point: str | None
    #: the package (distribution) and its version: `toy-backend 0.1.0`
    package: str
    #: the installed distribution's name and version, apart (None unless from an entry point)
    distribution: str | None = None
    version: str | None = None

    @property
    def built_in(self) -> bool:
        """itemscale's own entry (its built-in plugin)."""
        return self is BUILTIN or self == BUILTIN

    def __str__(self) -> str:
        if self.entry_point is None:
            return self.package
        return f"entry point '{self.entry_point}' of package {self.package}"


#: The origin of itemscale's own entries (no installed entry point, so a stale install of
#: itemscale's metadata never loses them).
BUILTIN = Origin(None, "itemscale (built in)")


#: A plugin: called with `register`, it registers its entries by name.
Plugin = Callable[[Callable[[str, Any], None]], None]

#: A registry's own rule for a new entry (a measure's key and glossary term): raises ValueError;
#: gets the entries registered so far.
Check = Callable[[str, Any, Mapping[str, Any]], None]

#: Told the registry's entries after every change (the measures refresh the glossary).
Changed = Callable[[Mapping[str, Any]], None]


class Registry(Mapping[str, T], Generic[T]):
    """Names to entries of type `kind`: itemscale's own (declared in `package`'s modules), then
    the entry points of `group`. Read as a mapping; `origin(name)` names the registering package;
    `builtin` replaces `builtins` as the plugin of itemscale's own entries (a test's registry)."""

    def __init__(
        self,
        *,
        what: str,
        group: str,
        kind: type[T],
        package: str | None = None,
        builtin: Plugin | None = None,
        check: Check | None = None,
        changed: Changed | None = None,
    ) -> None:
        self._what = what
        self._group = group
        self._kind = kind
        self._package = package
        self._builtin: Plugin = self.builtins if builtin is None else builtin
        #: itemscale's own entries by name, with their `order` (filled by `declare`)
        self._declared: dict[str, tuple[float, T]] = {}
        self._rule = check
        self._changed = changed
        self._entries: dict[str, T] | None = None
        self._origins: dict[str, Origin] = {}
        #: what `add` registered at run time, re-applied after a `reload`
        self._added: dict[str, tuple[T, Origin]] = {}
        self._lock = threading.RLock()

    @property
    def group(self) -> str:
        return self._group

    # -- reading ---------------------------------------------------------------------------

    def _loaded(self) -> dict[str, T]:
        entries = self._entries
        if entries is not None:
            return entries
        with self._lock:
            if self._entries is None:
                entries, origins = self._load()
                for name, (entry, origin) in self._added.items():
                    self._check(name, entry, origin, entries, origins)
                    entries[name] = entry
                    origins[name] = origin
                self._entries, self._origins = entries, origins
                self._tell(entries)
            return self._entries

    def _tell(self, entries: Mapping[str, T]) -> None:
        if self._changed is not None:
            self._changed(entries)

    def __getitem__(self, name: str) -> T:
        return self._loaded()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._loaded()))

    def __len__(self) -> int:
        return len(self._loaded())

    def __contains__(self, name: object) -> bool:
        return name in self._loaded()

    def __repr__(self) -> str:
        return f"Registry({self._group!r}, {list(self)})"

    def origin(self, name: str) -> Origin:
        """The package that registered `name` (KeyError when none did)."""
        self._loaded()
        return self._origins[name]

    # -- filling ---------------------------------------------------------------------------

    def declare(self, name: str, entry: E, *, order: float) -> E:
        """Declare one of itemscale's own entries where it is defined; returns the entry. `order`
        places it among itemscale's own (the shipped ones use multiples of 10, so a new one fits
        between). It is registered and checked on the registry's first read."""
        with self._lock:
            if name in self._declared:
                raise ValueError(f"{self._what} {name!r} is declared twice")
            self._declared[name] = (order, cast("T", entry))
        return entry

    def import_package(self) -> None:
        """Import every module of `package`, so that each declares the entries it defines."""
        if self._package is not None:
            package = importlib.import_module(self._package)
            for module in pkgutil.iter_modules(package.__path__, f"{self._package}."):
                importlib.import_module(module.name)

    def declared(self) -> dict[str, T]:
        """itemscale's own entries by `order` then name (no entry point read)."""
        self.import_package()
        ordered = sorted(self._declared.items(), key=lambda d: (d[1][0], d[0]))
        return {name: entry for name, (_, entry) in ordered}

    def builtins(self, register: Callable[[str, Any], None]) -> None:
        """itemscale's own plugin: registers what `declared` finds."""
        for name, entry in self.declared().items():
            register(name, entry)

    def _load(self) -> tuple[dict[str, T], dict[str, Origin]]:
        """The built-in plugin first, then each entry point by package and name (not file-system
        order)."""
        from importlib.metadata import entry_points

        entries: dict[str, T] = {}
        origins: dict[str, Origin] = {}
        self._run_plugin(self._builtin, BUILTIN, entries, origins)
        found = sorted(
            entry_points(group=self._group),
            key=lambda ep: (_package(ep).lower(), ep.name, ep.value),
        )
        for ep in found:
            dist = getattr(ep, "dist", None)
            origin = Origin(
                f"{ep.name} = {ep.value}",
                _package(ep),
                _dist_name(dist),
                None if dist is None else str(dist.version),
            )
            try:
                plugin = ep.load()
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # a plugin that calls sys.exit must not end the CLI
                raise self._error(origin, f"cannot be imported: {_said(exc)}") from exc
            if not callable(plugin):
                raise self._error(
                    origin,
                    f"is a {type(plugin).__name__}, not a function that takes `register` and "
                    f"registers {self._what}s",
                )
            self._run_plugin(plugin, origin, entries, origins)
        return entries, origins

    def _run_plugin(
        self, plugin: Plugin, origin: Origin, entries: dict[str, T], origins: dict[str, Origin]
    ) -> None:
        def register(name: str, entry: Any) -> None:
            self._check(name, entry, origin, entries, origins)
            entries[name] = entry
            origins[name] = origin

        try:
            plugin(register)
        except (PluginError, KeyboardInterrupt):
            raise
        except BaseException as exc:  # SystemExit and the like too: the CLI names the plugin
            raise self._error(origin, f"failed while registering: {_said(exc)}") from exc

    def _check(
        self,
        name: Any,
        entry: Any,
        origin: Origin,
        entries: Mapping[str, T],
        origins: Mapping[str, Origin],
    ) -> None:
        if not isinstance(name, str) or not NAME.fullmatch(name):
            raise self._error(
                origin,
                f"registers the {self._what} name {name!r}: a name is letters, digits, '_', "
                "'.' and '-', starting with a letter or digit (at most 64 characters)",
            )
        if not isinstance(entry, self._kind):
            raise self._error(
                origin,
                f"registers {self._what} {name!r} as a {type(entry).__name__}, not an "
                f"{self._kind.__module__.split('._')[0]}.{self._kind.__name__}",
            )
        if self._rule is not None:
            try:
                self._rule(name, entry, entries)
            except ValueError as exc:
                if origin.entry_point is None:  # at run time: the caller's own ValueError
                    raise
                raise self._error(origin, f"registers {self._what} {name!r}: {exc}") from exc
        if name in entries:
            raise self._error(
                origin,
                f"registers {self._what} {name!r}, which {origins[name]} registered already; "
                "uninstall one of the two packages",
            )

    def _error(self, origin: Origin, what: str) -> PluginError:
        return PluginError(f"{self._what} plugin {origin} (group {self._group}) {what}")

    @contextmanager
    def registered(self, name: str, entry: T, *, package: str = "a test") -> Iterator[None]:
        """`name` registered for the length of the block (how a test adds an entry)."""
        self.add(name, entry, package=package)
        try:
            yield
        finally:
            self.remove(name)

    def add(self, name: str, entry: T, *, package: str = "added at run time") -> T:
        """Register `name` at run time (after every plugin; kept across `reload`), checked as a
        plugin's."""
        origin = Origin(None, package)
        with self._lock:
            entries = self._loaded()
            self._check(name, entry, origin, entries, self._origins)
            entries[name] = entry
            self._origins[name] = origin
            self._added[name] = (entry, origin)
            self._tell(entries)
        return entry

    def remove(self, name: str) -> None:
        """Take back what `add` registered (KeyError for any other name)."""
        with self._lock:
            if name not in self._added:
                raise KeyError(f"{self._what} {name!r} was not added at run time")
            del self._added[name]
            entries = self._loaded()
            entries.pop(name, None)
            self._origins.pop(name, None)
            self._tell(entries)

    def reload(self) -> None:
        """Forget what was loaded (a package was installed meanwhile); what `add` registered
        stays."""
        with self._lock:
            self._entries, self._origins = None, {}


def _package(ep: Any) -> str:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "(unknown package)"
    name = dist.metadata["Name"] or getattr(dist, "name", None) or "(unnamed package)"
    return f"{name} {dist.version}"


def _dist_name(dist: Any) -> str | None:
    if dist is None:
        return None
    name = dist.metadata["Name"] or getattr(dist, "name", None)
    return None if name is None else str(name)


def _said(exc: BaseException) -> str:
    """`ModuleNotFoundError: No module named 'x'` on one line (an exit: `SystemExit:
    sys.exit(3)`)."""
    if isinstance(exc, SystemExit):
        return f"SystemExit: sys.exit({exc.code!r})"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
