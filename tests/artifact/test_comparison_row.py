"""The report reads comparison.json rows as `ComparisonRow`; the paper comparison writes them as
`asdict(PaperNumber)`. The two declarations must name the same fields with the same types."""

from __future__ import annotations

import dataclasses
import typing

from itemscale.report._html_measures import ComparisonRow
from itemscale.workflows._paper import PaperNumber


def test_the_row_the_report_reads_is_the_row_the_comparison_writes() -> None:
    declared = typing.get_type_hints(ComparisonRow)
    assert list(declared) == [f.name for f in dataclasses.fields(PaperNumber)]
    assert declared == typing.get_type_hints(PaperNumber)
