"""The registry of measures: the one registry that the block builders, the console, the report
and the glossary read, filled as the backends' is (`itemscale.core.plugins.Registry`): itemscale's
own units through its built-in plugin (`register_measures`, below), then the entry points of the
group `itemscale.measures` of every installed package, sorted by distribution and entry point
name, then `register_measure` calls of the running program. So a measure from another package is
seen by every command that analyses (`analyze`, `report`, `verify`), in a fresh process too
(docs/extending.md, "A measure").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

from ...core.plugins import MEASURES_GROUP, Origin, Registry
from ._glossary import GLOSSARY
from ._headline import (
    BENEFICIAL_RATE,
    BENEFICIAL_RATE_EPS,
    BEST_FIXED,
    BEST_FIXED_SCORE,
    HARMFUL_RATE,
    HARMFUL_RATE_EPS,
    ORACLE,
    ORACLE_GAP,
    ORACLE_HEADROOM,
    ORACLE_SCORE,
    OVERWRITE_RATE,
    OVERWRITE_RATE_EPS,
    TERMINAL_REGRESSION_RATE,
    TEXT_ANSWERABLE_RATE,
    TEXT_MEAN_SCORE,
    TEXT_OVERWRITE_RATE,
    VISUAL_CONFUSION,
    WITH_TEXT_BEST_FIXED,
    WITH_TEXT_HARMFUL_RATE_EPS,
    WITH_TEXT_ORACLE,
    WITH_TEXT_ORACLE_GAP,
    WITH_TEXT_ORACLE_HEADROOM,
    WITH_TEXT_ORACLE_SCORE,
)
from ._measure import MEASURE_KINDS, Measure, MeasureKind

#: Every built-in measure, in the order the console and the report show each block's.
BUILT_IN_MEASURES: Final[tuple[Measure, ...]] = (
    BEST_FIXED,
    ORACLE,
    ORACLE_HEADROOM,
    HARMFUL_RATE,
    BENEFICIAL_RATE,
    TERMINAL_REGRESSION_RATE,
    TEXT_ANSWERABLE_RATE,
    TEXT_OVERWRITE_RATE,
    BEST_FIXED_SCORE,
    ORACLE_SCORE,
    ORACLE_GAP,
    HARMFUL_RATE_EPS,
    BENEFICIAL_RATE_EPS,
    TEXT_MEAN_SCORE,
    WITH_TEXT_BEST_FIXED,
    WITH_TEXT_ORACLE,
    WITH_TEXT_ORACLE_HEADROOM,
    VISUAL_CONFUSION,
    OVERWRITE_RATE,
    WITH_TEXT_ORACLE_SCORE,
    WITH_TEXT_ORACLE_GAP,
    WITH_TEXT_HARMFUL_RATE_EPS,
    OVERWRITE_RATE_EPS,
)

#: The glossary without any measure's line: the measures' lines are added to it from the
#: registry (so a plugin's term is explained beside its value, and leaves with it).
_BASE_GLOSSARY: Final[Mapping[str, str]] = MappingProxyType(dict(GLOSSARY))


def measure_name(measure: Measure) -> str:
    """The registry name `register_measure` gives a unit: its key and its first kind of block
    (`harmful_rate.binary`), since one key may mean one thing per kind."""
    return f"{measure.key}.{measure.kinds[0] if measure.kinds else 'none'}"


def register_measures(register: Callable[[str, Measure], None]) -> None:
    """itemscale's own plugin of `MEASURES`: the built-in units, in console order."""
    for unit in BUILT_IN_MEASURES:
        register(measure_name(unit), unit)


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
    builtin=register_measures,
    check=_check,
    changed=_refresh_glossary,
)


def measures_for(kind: MeasureKind) -> tuple[Measure, ...]:
    """The registered measures of one kind of block, in registry order (the first call reads
    the installed plugins)."""
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


# the built-in units' glossary lines before any lookup (read by name, without the registry)
_refresh_glossary({measure_name(m): m for m in BUILT_IN_MEASURES})
