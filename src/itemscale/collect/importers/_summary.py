"""The summary printed after every import: what was read, what landed, and what did not.

A researcher comparing budgets must see at once whether the grid is complete: items per
configuration, how many items the matched grid keeps, and every dropped or unparsed item
counted by reason, so nothing leaves a denominator silently.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import TypedDict, cast

import pandas as pd

from ...core.responses import ANSWERED_STATUSES, Status
from ._absent import ABSENT_MARKER, AbsentItems, AbsentRecord


class AbsentSummary(AbsentRecord):
    """A model's absent items in the summary: the record and the sentence the summary prints."""

    line: str


class SummaryRecord(TypedDict):
    """`ImportSummary` as `import --summary-json` writes it."""

    importer: str
    run_dir: str
    files: list[str]
    rows_read: int
    rows_added: int
    rows_unchanged: int
    items_per_config: dict[str, dict[str, int]]
    matched_items: dict[str, int]
    unmatched_items: dict[str, int]
    dropped: dict[str, int]
    notes: list[str]
    absent: dict[str, AbsentSummary]
    rows_absent: int


@dataclass
class ImportSummary:
    importer: str
    run_dir: str
    files: list[str]
    #: rows (log lines, table rows or cells) read from the files: the rows imported plus those
    #: not imported, which `dropped` lists by reason
    rows_read: int
    rows_added: int
    rows_unchanged: int
    #: model -> config label -> rows of that configuration in the run (all repeats)
    items_per_config: dict[str, dict[str, int]]
    #: model -> items with an answer at every configuration of every series (text-only
    #: excluded), each item once
    matched_items: dict[str, int]
    #: model -> items left out of the matched grid
    unmatched_items: dict[str, int]
    #: reason -> count: lines not imported, failures and unparsed answers among imported rows
    dropped: dict[str, int]
    notes: list[str] = field(default_factory=list)
    #: model -> the benchmark's or key's items without any row for it (docs/importers.md)
    absent: dict[str, AbsentSummary] = field(default_factory=dict)
    #: rows added for those items by `--absent noanswer` (not counted in `rows_read`)
    rows_absent: int = 0

    def to_dict(self) -> SummaryRecord:
        return cast(SummaryRecord, asdict(self))

    def format(self) -> str:
        lines = [f"itemscale import {self.importer} -> {self.run_dir}"]
        lines.append(f"  files read: {len(self.files)}")
        lines.extend(f"    {f}" for f in self.files)
        absent = f" (+{self.rows_absent} for absent items)" if self.rows_absent else ""
        lines.append(
            f"  rows: {self.rows_read} read{absent}, {self.rows_added} added, "
            f"{self.rows_unchanged} already in the run"
        )
        for model, per_config in self.items_per_config.items():
            lines.append(f"  model {model}:")
            width = max([24, *(len(label) + 1 for label in per_config)])
            for label, n in per_config.items():
                lines.append(f"    {label:<{width}} {n:>7} rows")
            lines.append(
                f"    matched grid: {self.matched_items.get(model, 0)} items "
                f"({self.unmatched_items.get(model, 0)} left out)"
            )
            gone = self.absent.get(model)
            if gone is not None:
                lines.append(f"    {gone['line']}")
        groups: dict[str, dict[str, int]] = {"wrong": {}, "failed": {}, "out": {}}
        failures = {s.value for s in Status} - {Status.OK.value, Status.NOANSWER.value}
        for reason, n in self.dropped.items():
            if reason.startswith(("noanswer", "absent item, added as noanswer")):
                groups["wrong"][reason] = n
            elif reason in failures:
                groups["failed"][reason] = n
            else:
                groups["out"][reason] = n
        for key, title in (
            ("wrong", "kept, counted wrong (no option recognised)"),
            ("failed", "kept as failed cells (out of the matched grid), by status"),
        ):
            if groups[key]:
                lines.append(f"  {title}:")
                lines.extend(f"    {r:<40} {n:>7}" for r, n in sorted(groups[key].items()))
        if groups["out"]:
            lines.append("  not imported, by reason:")
            lines.extend(f"    {r:<40} {n:>7}" for r, n in sorted(groups["out"].items()))
        else:
            lines.append("  not imported: none")
        lines.extend(f"  note: {note}" for note in self.notes)
        return "\n".join(lines)


def _rows_per_config(rows: pd.DataFrame) -> dict[str, int]:
    """Rows per configuration, in axis order, each named by its label, and by its series too
    where the model has several (two series at one label are two configurations)."""
    cells = ["series", "config_id"]
    order = rows.drop_duplicates(cells).sort_values(["axis_order", "frames", "series"])
    sizes = rows.groupby(cells, as_index=False).size()
    counts = {
        (str(s), str(c)): int(n)
        for s, c, n in zip(sizes["series"], sizes["config_id"], sizes["size"], strict=True)
    }
    several = rows["series"].nunique() > 1
    return {
        (f"{r.series}: {r.config_label}" if several else str(r.config_label)): counts[
            (str(r.series), str(r.config_id))
        ]
        for r in order.itertuples(index=False)
    }


def _matched_grid(rows: pd.DataFrame) -> tuple[int, int]:
    """(items answered at every non-text configuration of every series of one model, the
    model's other items): an item counts once whatever the number of series it is in."""
    visual = rows[rows["frames"] > 0]
    answered = visual[visual["status"].isin(ANSWERED_STATUSES)]
    n_cells = len(visual.drop_duplicates(["series", "config_id"]))
    cells = answered.drop_duplicates(["item_id", "series", "config_id"])
    full = cells.groupby("item_id").size()
    n_matched = int((full == n_cells).sum())
    return n_matched, int(visual["item_id"].nunique()) - n_matched


def summarise(
    *,
    importer: str,
    run_dir: str,
    files: list[str],
    imported: pd.DataFrame,
    run_table: pd.DataFrame,
    rows_added: int,
    rows_unchanged: int,
    skipped: Counter[str],
    notes: list[str] | None = None,
    absent: list[AbsentItems] | None = None,
) -> ImportSummary:
    """Summarise one import: `imported` are this import's rows, `run_table` the merged run,
    `absent` the key's items each model has no row for."""
    per_config: dict[str, dict[str, int]] = {}
    matched: dict[str, int] = {}
    unmatched: dict[str, int] = {}
    models = list(dict.fromkeys(imported["model"].tolist()))
    for model in models:
        rows = run_table[run_table["model"] == model]
        per_config[model] = _rows_per_config(rows)
        matched[model], unmatched[model] = _matched_grid(rows)
    dropped: Counter[str] = Counter(skipped)
    marked = imported["error"].eq(ABSENT_MARKER).fillna(False).to_numpy(dtype=bool)
    if marked.any():
        dropped["absent item, added as noanswer (--absent noanswer)"] += int(marked.sum())
    for status, n in imported.loc[~marked, "status"].value_counts().items():
        if status == Status.OK.value:
            continue
        reason = (
            "noanswer (no option recognised)" if status == Status.NOANSWER.value else str(status)
        )
        dropped[reason] += int(n)
    absent_by_model = {a.model: AbsentSummary(**a.to_dict(), line=a.line()) for a in (absent or [])}
    return ImportSummary(
        importer=importer,
        run_dir=run_dir,
        files=files,
        rows_read=len(imported) - int(marked.sum()) + sum(skipped.values()),
        rows_added=rows_added,
        rows_unchanged=rows_unchanged,
        items_per_config=per_config,
        matched_items=matched,
        unmatched_items=unmatched,
        dropped=dict(dropped),
        notes=list(notes or []),
        absent=absent_by_model,
        rows_absent=int(marked.sum()),
    )
