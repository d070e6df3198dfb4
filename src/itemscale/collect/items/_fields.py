"""What every benchmark loader shares: its error type, the steps from a raw record to an `Item`
(a bad record named the same way, file, row and field, never a bare pydantic trace), and the
registry it declares itself in (`@benchmark(...)` on the loader).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

from pydantic import ValidationError

from ...core.errors import ItemscaleError, location_text
from ...core.items import Item
from ...core.plugins import BENCHMARKS_GROUP, Registry

L = TypeVar("L", bound=Callable[..., list[Item]])


class BenchmarkFileError(ItemscaleError, ValueError):
    """A benchmark file that cannot be read as the benchmark it claims to be."""


def video_path(video_dir: str | os.PathLike[str] | None, name: str) -> str:
    return str(Path(video_dir) / name) if video_dir is not None else name


def checked_item(where: str, **fields: Any) -> Item:
    try:
        return Item(**fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = location_text(err["loc"], empty="(item)")
        raise BenchmarkFileError(f"{where}: field '{loc}': {err['msg']}") from exc


def text_of(value: Any) -> str:
    return "" if value is None else str(value).strip()


@dataclass(frozen=True, slots=True)
class BenchmarkLoader:
    """One benchmark question file format: how to read it, its name in messages, and the
    columns (Parquet) or keys (JSON) that tell its files apart, so `load_benchmark` recognises
    it without being told. Called like the loader."""

    load: Callable[..., list[Item]]
    title: str
    columns: frozenset[str]
    suffixes: frozenset[str] = frozenset({".parquet"})

    def __call__(
        self, path: str | os.PathLike[str], *, video_dir: str | os.PathLike[str] | None = None
    ) -> list[Item]:
        return self.load(path, video_dir=video_dir)


#: Every benchmark question file format, by the name a protocol's `benchmark.kind` writes, in
#: the order `detect_benchmark` tries them: itemscale's own, then the entry points of
#: `itemscale.benchmarks`.
BENCHMARK_LOADERS: Final[Registry[BenchmarkLoader]] = Registry(
    what="benchmark",
    group=BENCHMARKS_GROUP,
    kind=BenchmarkLoader,
    package=__package__,
)


def benchmark(
    name: str,
    *,
    order: float,
    title: str,
    columns: Iterable[str],
    suffixes: Iterable[str] = (".parquet",),
) -> Callable[[L], L]:
    """Declare the decorated loader (`path, *, video_dir -> list[Item]`) one of itemscale's
    own formats in `BENCHMARK_LOADERS`, where it is defined; `order` is its place among them."""

    def declare(load: L) -> L:
        found = BenchmarkLoader(load, title, frozenset(columns), frozenset(suffixes))
        BENCHMARK_LOADERS.declare(name, found, order=order)
        return load

    return declare
