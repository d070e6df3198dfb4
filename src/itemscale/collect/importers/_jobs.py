"""What the per-file importers (lmms-eval, VLMEvalKit) share: `--config LABEL[:FRAMES]=PATH`
arguments and the job list they make, the `--benchmark` file's index of items, and gold answers
as option letters.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..items import Item
from ._common import ImportInputError

#: An option as benchmarks and prompts list it: "A. Apples.", "(B) Pears".
OPTION_LINE: Final[re.Pattern[str]] = re.compile(r"^\s*\(?([A-J])[.)]\s*(.+?)\s*$")
_CONFIG_ARG = re.compile(r"^(?P<label>[^=:]+?)(?::(?P<frames>\d+))?=(?P<path>.+)$")


@dataclass(frozen=True)
class ConfigSpec:
    """One `--config LABEL[:FRAMES]=PATH` argument."""

    label: str
    frames: int | None
    path: Path


def parse_config_arg(text: str) -> ConfigSpec:
    m = _CONFIG_ARG.match(text.strip())
    if not m:
        raise ImportInputError(
            f"--config {text!r}: expected LABEL=PATH or LABEL:FRAMES=PATH (e.g. 16f:16=run.jsonl)"
        )
    frames = int(m["frames"]) if m["frames"] is not None else None
    return ConfigSpec(label=m["label"].strip(), frames=frames, path=Path(m["path"].strip()))


def config_jobs(
    specs: Sequence[ConfigSpec],
    paths: Sequence[str | Path],
    *,
    inputs: str,
    allow_mixed: bool = False,
) -> list[tuple[Path, ConfigSpec | None]]:
    """The files to import, each with its `--config` (None when files are given plainly).

    With `allow_mixed` (lmms-eval, whose files say their budget in results.json), plain files
    and `--config` files may be combined; otherwise, with any `--config`, every file must be
    one, so that the axis order is the order given.
    """
    spec_paths = {s.path.resolve() for s in specs}
    extra = [p for p in paths if Path(p).resolve() not in spec_paths]
    if specs and extra and not allow_mixed:
        raise ImportInputError(
            f"{extra[0]}: with --config, give every file as --config LABEL=PATH so the axis "
            "order is explicit"
        )
    jobs: list[tuple[Path, ConfigSpec | None]] = [(Path(p), None) for p in extra]
    jobs += [(s.path, s) for s in specs]
    if not jobs:
        raise ImportInputError(f"no input files (give {inputs} or --config LABEL=PATH)")
    return jobs


@dataclass
class BenchmarkIndex:
    """Finds the benchmark item of a logged sample: by id, by its question text when that is
    unique, or by position (lmms-eval's doc_id is the row number of the task's dataset) when the
    item at that position asks the same question."""

    by_id: dict[str, Item]
    by_question: dict[str, Item]
    ordered: tuple[Item, ...] = ()

    @classmethod
    def build(cls, items: Sequence[Item]) -> BenchmarkIndex:
        by_question: dict[str, Item] = {}
        seen: Counter[str] = Counter(_norm_q(i.question) for i in items)
        for item in items:
            q = _norm_q(item.question)
            if seen[q] == 1:
                by_question[q] = item
        return cls(
            by_id={i.item_id: i for i in items}, by_question=by_question, ordered=tuple(items)
        )

    def find(self, item_id: str, question: object, position: int | None = None) -> Item | None:
        if item_id in self.by_id:
            return self.by_id[item_id]
        if not question:
            return None
        q = _norm_q(question)
        if q in self.by_question:
            return self.by_question[q]
        if position is not None and 0 <= position < len(self.ordered):
            candidate = self.ordered[position]
            if _norm_q(candidate.question) == q:
                return candidate
        return None


def _norm_q(text: object) -> str:
    text = re.split(r"\n\s*\(?A[.)]", str(text), maxsplit=1)[0]
    return " ".join(text.lower().split())


def gold_letter(gold: object, options: Sequence[str]) -> str | None:
    """A gold answer as an option letter: a letter, an index digit, or the option text."""
    if gold is None:
        return None
    text = str(gold).strip()
    limit = len(options) if options else 10
    if len(text) == 1 and text.upper() in "ABCDEFGHIJ"[:limit]:
        return text.upper()
    if text.isdigit() and int(text) < limit and (options or len(text) == 1):
        return "ABCDEFGHIJ"[int(text)]
    m = OPTION_LINE.match(text)
    if m and m[1] in "ABCDEFGHIJ"[:limit]:
        return m[1]
    norm = text.lower().rstrip(".")
    hits = [i for i, o in enumerate(options) if o.strip().lower().rstrip(".") == norm]
    return "ABCDEFGHIJ"[hits[0]] if len(hits) == 1 else None


def load_benchmark_index(benchmark: str | os.PathLike[str] | None) -> BenchmarkIndex | None:
    """The `--benchmark` file's items, indexed; its errors become import input errors."""
    if benchmark is None:
        return None
    from ..items import BenchmarkFileError, ItemFileError, load_benchmark

    try:
        return BenchmarkIndex.build(load_benchmark(benchmark))
    except (BenchmarkFileError, ItemFileError) as exc:
        raise ImportInputError(str(exc)) from exc
