"""The registry of measures: the one list that the block builders, the console, the report and
the glossary read. Adding a measure is a unit in its own module and one line in `MEASURES`
(docs/extending.md, "A measure"); `register_measure` does the same from outside the package.
"""

from __future__ import annotations

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

#: Every measure, in the order the console and the report show each block's.
MEASURES: list[Measure] = [
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
]


def measures_for(kind: MeasureKind) -> tuple[Measure, ...]:
    """The registered measures of one kind of block, in registry order."""
    return tuple(m for m in MEASURES if kind in m.kinds)


def _check(measure: Measure, others: list[Measure]) -> None:
    unknown = [k for k in measure.kinds if k not in MEASURE_KINDS]
    if unknown or not measure.kinds:
        raise ValueError(
            f"measure {measure.key!r}: kinds {list(measure.kinds)}; each must be one of "
            f"{', '.join(MEASURE_KINDS)}"
        )
    for other in others:
        clash = set(measure.kinds) & set(other.kinds)
        if other.key == measure.key and clash:
            raise ValueError(
                f"measure {measure.key!r} is already registered for {', '.join(sorted(clash))}"
            )
    if measure.gloss is not None:
        if not measure.term:
            raise ValueError(f"measure {measure.key!r}: a gloss needs the term it explains")
        known = GLOSSARY.get(measure.term)
        if known is not None and known != measure.gloss:
            raise ValueError(
                f"measure {measure.key!r}: the term {measure.term!r} is already explained as "
                f"{known!r}"
            )


def register_measure(measure: Measure) -> Measure:
    """Add a measure after the registered ones (its glossary line too); returns it, so a module
    can write `MY_MEASURE = register_measure(MyMeasure(...))`."""
    _check(measure, MEASURES)
    MEASURES.append(measure)
    if measure.gloss is not None and measure.term:
        GLOSSARY[measure.term] = measure.gloss
    return measure


def unregister_measure(measure: Measure) -> None:
    """Remove a measure added by `register_measure` (tests, notebooks trying one out)."""
    MEASURES.remove(measure)
    if measure.term and not any(m.term == measure.term and m.gloss for m in MEASURES):
        GLOSSARY.pop(measure.term, None)


for _measure in MEASURES:  # the built-in units' glossary lines, checked as any other's
    _check(_measure, [m for m in MEASURES if m is not _measure])
    if _measure.gloss is not None and _measure.term:
        GLOSSARY[_measure.term] = _measure.gloss
