"""`check_measure`: a measure unit is well formed (its key, kinds and glossary line), and on a
small generated run `analyze` puts its entry in every block of its kinds, as JSON, the same on a
second run with the same seed, and its console and report text are strings."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from ...analysis.measures import MEASURE_KINDS, MEASURES, Measure, analyze_responses, measure_name
from ._report import Findings
from ._tables import conformance_table

#: What a measure's JSON key may be: it is a key of every block of its kinds.
KEY = re.compile(r"[a-z][a-z0-9_]{0,63}")
#: Where each kind of block sits in a model's entry of `analyze --json`.
BLOCK_PATHS: Mapping[str, tuple[str, ...]] = {
    "binary": (),
    "binary_with_text": ("grid_with_text",),
    "continuous": ("continuous",),
    "continuous_with_text": ("continuous", "grid_with_text"),
}


def check_measure(measure: Measure | str, *, bootstrap: int = 30) -> None:
    """Check a measure (a `Measure`, or a name of `itemscale.analysis.measures.MEASURES`); raises a
    `ConformanceError` listing every failure. A unit not registered yet is registered for the
    length of the check (and must not clash with the registered ones)."""
    named = MEASURES.get(measure) if isinstance(measure, str) else measure
    found = Findings(f"measure {getattr(named, 'key', measure)!r}")
    unit = found.instance_of(named, Measure, "itemscale.analysis.measures.Measure")
    _check_shape(unit, found)
    if found.failures:  # analyze would refuse it, or fail on it, for the same reasons
        found.done()
    ok, during = found.attempt("registering it", lambda: _registered(unit))
    if ok:
        with during:
            _check_blocks(unit, bootstrap, found)
    found.done()


def _check_shape(unit: Measure, found: Findings) -> None:
    found.check(
        isinstance(unit.key, str) and bool(KEY.fullmatch(unit.key)),
        f"key {unit.key!r} is not lower-case letters, digits and '_' (a JSON key of a block)",
    )
    kinds = tuple(unit.kinds) if isinstance(unit.kinds, tuple | list) else ()
    found.check(
        bool(kinds) and all(k in MEASURE_KINDS for k in kinds),
        f"kinds {unit.kinds!r}: a non-empty tuple of {', '.join(MEASURE_KINDS)}",
    )
    if unit.gloss is not None:
        found.check(bool(unit.term), "has a gloss but no term for it to explain")
    found.check(
        unit.placement in ("headline", "text"),
        f"placement {unit.placement!r}: headline or text",
    )


def _registered(unit: Measure) -> AbstractContextManager[None]:
    if any(other is unit for other in MEASURES.values()):
        return nullcontext()
    return MEASURES.registered(measure_name(unit), unit, package="itemscale.workflows.testing")


def _blocks(result: Mapping[str, Any], kinds: tuple[str, ...]) -> Iterator[tuple[str, Any]]:
    model = result["models"]["m"]
    for kind in kinds:
        block: Any = model
        for part in BLOCK_PATHS[kind]:
            block = block.get(part) if isinstance(block, Mapping) else None
        yield kind, block


def _check_blocks(unit: Measure, bootstrap: int, found: Findings) -> None:
    table = conformance_table()
    runs = []
    for _ in range(2):
        ok, result = found.attempt(
            "analyze with it",
            lambda: analyze_responses(table, bootstrap=bootstrap, seed=0).to_json(),
        )
        if not ok:
            return
        runs.append(result)
    for kind, block in _blocks(runs[0], tuple(unit.kinds)):
        if not found.check(
            isinstance(block, Mapping) and unit.key in block,
            f"analyze's {kind} block has no entry {unit.key!r}",
        ):
            continue
        ok, _ = found.attempt(f"its {kind} entry as JSON", json.dumps, block[unit.key])
        again = dict(_blocks(runs[1], (kind,)))[kind]
        found.check(
            not ok or json.dumps(block[unit.key]) == json.dumps(again[unit.key]),
            f"its {kind} entry differs between two runs with the same seed",
        )
        for part in ("text", "report_text"):
            ok, said = found.attempt(f"{part} of its {kind} block", _say, unit, part, block)
            if ok:
                found.check(isinstance(said, str), f"{part} returned a {type(said).__name__}")


def _say(unit: Measure, part: str, block: Mapping[str, Any]) -> Any:
    return getattr(unit, part)(block)
