"""The registry of measures: the one registry that the block builders, the console, the report
and the glossary read, filled as the backends' is (`itemscale.core.plugins.Registry`): itemscale's
own units, each declared where it is defined (`builtin_measure`, below), then the entry points of
the group `itemscale.measures` of every installed package, sorted by distribution and entry point
name, then `register_measure` calls of the running program. So a measure from another package is
seen by every command that analyses (`analyze`, `report`, `verify`), in a fresh process too
(docs/extending.md, "A measure").
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final, TypeVar

from ...core.plugins import MEASURES_GROUP, Origin, Registry
from ._glossary import GLOSSARY
from ._measure import MEASURE_KINDS, Measure, MeasureKind

M = TypeVar("M", bound=Measure)

#: The glossary without any measure's line: the measures' lines are added to it from the
#: registry (so a plugin's term is explained beside its value, and leaves with it).
_BASE_GLOSSARY: Final[Mapping[str, str]] = MappingProxyType(dict(GLOSSARY))


def measure_name(measure: Measure) -> str:
    """The registry name `register_measure` gives a unit: its key and its first kind of block
    (`harmful_rate.binary`), since one key may mean one thing per kind."""
    return f"{measure.key}.{measure.kinds[0] if measure.kinds else 'none'}"


def _check(name: str, measure: Any, entries: Mapping[str, Measure]) -> None:
    """A unit's own rules: known kinds, no second unit with one key in one kind of block, no
    term explained two ways (ValueError; a plugin's is a PluginError naming it)."""
    unknown = [k for k in measure.kinds if k not in MEASURE_KINDS]
    if unknown or not measure.kinds:
        raise ValueError(
            f"measure {measure.key!r}: kinds {list(measure.kinds)}; each must be one of "
            f"{', '.join(MEASURE_KINDS)}"
        )
    for other in entries.values():
        clash = set(measure.kinds) & set(other.kinds)
        if other.key == measure.key and clash:
            raise ValueError(
                f"measure {measure.key!r} is already registered for {', '.join(sorted(clash))}"
            )
    if measure.gloss is not None:
        if not measure.term:
            raise ValueError(f"measure {measure.key!r}: a gloss needs the term it explains")
        known = _glossed(entries).get(measure.term, _BASE_GLOSSARY.get(measure.term))
        if known is not None and known != measure.gloss:
            raise ValueError(
                f"measure {measure.key!r}: the term {measure.term!r} is already explained as "
                f"{known!r}"
            )


def _glossed(entries: Mapping[str, Measure]) -> dict[str, str]:
    return {m.term: m.gloss for m in entries.values() if m.gloss is not None and m.term}


def _refresh_glossary(entries: Mapping[str, Measure]) -> None:
    """GLOSSARY: the base lines and every registered unit's, after each change."""
    GLOSSARY.clear()
    GLOSSARY.update(_BASE_GLOSSARY)
    GLOSSARY.update(_glossed(entries))


#: Every measure by registry name, in the order the console and the report show them.
MEASURES: Final[Registry[Measure]] = Registry(
    what="measure",
    group=MEASURES_GROUP,
    kind=Measure,
    package=__package__,
    check=_check,
    changed=_refresh_glossary,
)


def measures_for(kind: MeasureKind) -> tuple[Measure, ...]:
    """The registered measures of one kind of block, in registry order."""
    return tuple(m for m in MEASURES.values() if kind in m.kinds)


def measure_origins() -> list[tuple[Measure, Origin]]:
    """Every registered measure that is not itemscale's own, with where it came from."""
    found = []
    for name, unit in MEASURES.items():
        origin = MEASURES.origin(name)
        if not origin.built_in:
            found.append((unit, origin))
    return found


def register_measure(measure: Measure) -> Measure:
    """Add a measure after the registered ones (its glossary line too); returns it, so a module
    can write `MY_MEASURE = register_measure(MyMeasure(...))`. It lasts as long as the process:
    a measure every command should see is an entry point of `itemscale.measures`
    (docs/extending.md)."""
    return MEASURES.add(measure_name(measure), measure, package="register_measure")


def unregister_measure(measure: Measure) -> None:
    """Remove a measure added by `register_measure` (tests, notebooks trying one out); a
    ValueError for any other, as before the registry."""
    try:
        MEASURES.remove(measure_name(measure))
    except KeyError as exc:
        raise ValueError(f"measure {measure.key!r} was not added by register_measure") from exc


def builtin_measure(measure: M, *, order: float) -> M:
    """Declare one of itemscale's own measures below its definition (`builtin_measure(
    HARMFUL_RATE, order=40)`); `order` is its place in each block's listing (lower first). Its
    glossary line is there at once, for the console and report that read a term by name."""
    if measure.gloss is not None and measure.term:
        GLOSSARY.setdefault(measure.term, measure.gloss)
    return MEASURES.declare(measure_name(measure), measure, order=order)


def __getattr__(name: str) -> tuple[Measure, ...]:
    """`BUILT_IN_MEASURES`: itemscale's own units, in console order."""
    if name == "BUILT_IN_MEASURES":
        return tuple(MEASURES.declared().values())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
