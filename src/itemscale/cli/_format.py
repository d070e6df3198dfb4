"""How the commands print a measure with its interval, so every summary reads the same."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TextIO

from ..analysis.measures import GLOSSARY, StatLike, stat_text


def points_text(stat: StatLike, note: str | None = None) -> str:
    """A rate as points with its interval, e.g. '61.2 [58.0, 64.1]' (`stat_text`)."""
    return stat_text(stat, 100, note=note)


def number_text(stat: StatLike) -> str:
    """A plain value with its interval, e.g. '3.5 [3.1, 3.9]'."""
    return stat_text(stat, 1)


def printer(out: TextIO | None) -> Callable[..., None]:
    """`print` to `out` (stdout for None), for a command's text written to a stream it is given."""
    return partial(print, file=out)


class Glosses:
    """Hands out each term's one-line explanation once per command output, so the first
    appearance explains and the rest stay short."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._shown: set[str] = set()

    def __call__(self, term: str) -> str:
        if not self.enabled or term in self._shown:
            return ""
        self._shown.add(term)
        return f"   ({GLOSSARY[term]})"
