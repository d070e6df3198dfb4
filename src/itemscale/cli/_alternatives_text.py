"""`analyze`'s console text for a set of alternatives (`AlternativesSeries`): each one's
accuracy, the oracle over them, the selector record of every pair (the control's first), the
all-pairs same-input matrix, and the configurations imported from one log file."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TextIO

from ..analysis.measures import (
    ALTERNATIVE_SYMBOLS,
    AlternativePair,
    AlternativesSeries,
    AnalysisResult,
    alternatives_title,
    control_source,
    counted_text,
    detected_note,
    p_value_text,
    pair_grade,
    pair_verdict_text,
    signed_text,
)
from ..core.responses import SourceFile, same_file_pairs, same_file_sentence
from ._format import Glosses, points_text, printer


def one_file(pair: AlternativePair, files: Mapping[str, SourceFile]) -> SourceFile | None:
    """The file both sides of a pair were imported from, where it is one."""
    fa, fb = files.get(pair.a), files.get(pair.b)
    return fa if fa is not None and fb is not None and fa.sha256 == fb.sha256 else None


def pair_line(pair: AlternativePair, files: Mapping[str, SourceFile], note: str | None) -> str:
    """One pair's selector record: difference, fixes and breaks, the clustered test, the share
    of the oracle's headroom over `a`, and the same-input verdict (or the one file)."""
    same = one_file(pair, files)
    verdict = (
        f"one log file (sha256 {same.sha256[:12]}...)"
        if same is not None
        else pair_verdict_text(pair)
    )
    share = pair.headroom_share
    headroom = f"{points_text(share, note)} ({pair.n_fixed} of {pair.n_headroom})"
    return (
        f"{signed_text(pair.accuracy_difference, note)}; "
        f"fixes {pair.n_fixed} / breaks {pair.n_broken}; "
        f"p={p_value_text(pair.clustered_mcnemar_p, note=note)}; headroom {headroom}; {verdict}"
    )


def _grid(block: AlternativesSeries, files: Mapping[str, SourceFile]) -> list[str]:
    """One row per alternative, numbered columns."""
    labels = block.configs
    cell: dict[tuple[str, str], str] = {}
    for pair in block.pairs.values():
        symbol = "F" if one_file(pair, files) is not None else pair_grade(pair)
        cell[(pair.a, pair.b)] = cell[(pair.b, pair.a)] = symbol
    width = max(len(label) for label in labels)
    numbers = len(str(len(labels)))
    head = " " * (numbers + width + 2) + " ".join(f"{i + 1:>{numbers}}" for i in range(len(labels)))
    rows = [head]
    for i, a in enumerate(labels):
        marks = " ".join(f"{('.' if a == b else cell.get((a, b), ' ')):>{numbers}}" for b in labels)
        rows.append(f"{i + 1:>{numbers}} {a:<{width}} {marks}")
    return rows


def print_alternatives(
    block: AlternativesSeries,
    out: TextIO,
    indent: str,
    gloss: Glosses,
    files: Mapping[str, SourceFile],
    note: str | None,
) -> None:
    """A set of alternatives on the console (`note` in place of intervals and p-values where
    too few videos make them untrustworthy)."""
    say = printer(out)
    say(f"{indent}{alternatives_title(block)}{gloss('alternatives')}")
    say(
        f"{indent}matched grid: {block.n_items} items on {block.n_videos} videos; "
        f"dropped {block.n_dropped}{gloss('matched grid')}"
    )
    say(f"{indent}accuracy (points, 95% CI):")
    width = max(len(label) for label in block.configs)
    for label in block.configs:
        line = f"{indent}  {label:<{width}}  {counted_text(block.accuracy[label], note=note)}"
        noans = block.noanswer_rate[label].value
        if noans:
            line += f"   noanswer {100 * noans:.1f}"
        if label == block.control:
            line += "   (control)"
        say(line)
    say(
        f"{indent}oracle over the alternatives: {counted_text(block.oracle, note=note)}"
        + gloss("oracle over the alternatives")
    )
    columns = (
        "accuracy difference, points; fixes / breaks; clustered McNemar p; headroom share, % "
        "(fixed of the items in the oracle's headroom over the reference); same input?"
    )
    against = [p for p in block.pairs.values() if p.a == block.control]
    others = [p for p in block.pairs.values() if p.a != block.control]
    if block.control is not None:
        say(
            f"{indent}against the control {block.control}{control_source(block)} ({columns}):"
            + gloss("headroom share")
        )
        for pair in against:
            say(f"{indent}  {pair.b:<{width}}  {pair_line(pair, files, note)}")
    heading = "each pair of the others" if against else f"each pair ({columns})"
    heading += "" if against else gloss("headroom share")
    copies = {copy.label: first.label for first, copy in same_file_pairs(files, block.configs)}
    shown = [p for p in others if p.a not in copies and p.b not in copies]
    if shown:
        left_out = "; copies of one log file (below) left out, --json lists them" if copies else ""
        say(f"{indent}{heading} (b against a{left_out}):")
        for pair in shown:
            say(f"{indent}  {pair.b} against {pair.a}: {pair_line(pair, files, note)}")
    legend = ", ".join(f"{s} {what}" for s, what in ALTERNATIVE_SYMBOLS.items())
    say(f"{indent}same input, every pair ({legend}, F one log file):")
    for row in _grid(block, files):
        say(f"{indent}  {row}")
    for first, copy in same_file_pairs(files, block.configs):
        say(f"{indent}same log file: {same_file_sentence(first, copy)}")


def add_control_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--control",
        metavar="LABEL",
        help="the reference among configurations that ask one budget (alternatives, not an "
        "axis: selectors, pipelines, prompts at the same frames and pixels): each alternative's "
        "record is given against it first, e.g. a frame-0 or uniform run (a configuration "
        "label, or a series name where each alternative is its own series)",
    )


def print_alternatives_notes(result: AnalysisResult, out: TextIO | None = None) -> None:
    """A note for each set of alternatives found in the record (or named without a control):
    what was detected, and how to name alternatives and their control."""
    for model, entry in result.models.items():
        entries = [entry, *(getattr(entry, "other_series", None) or {}).values()]
        for block in entries:
            if not isinstance(block, AlternativesSeries):
                continue
            if block.members == "configurations" or block.control is None:
                print(f"\nnote: {detected_note(model, block)}", file=out)
