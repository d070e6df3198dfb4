"""The Python API says what exists when a name is wrong, and `help(itemscale)` is one screen
that points at docs/python.md."""

from __future__ import annotations

import pydoc
from pathlib import Path

import pytest

from _support.runs import make_run
from itemscale.analysis.measures import AnalysisResult, analyze_responses


def test_help_itemscale_is_short_and_points_at_the_docs() -> None:
    import itemscale

    # the API is all there, and loads on use; help stays short after names were used
    assert "analyze" in itemscale.__all__
    assert callable(itemscale.analyze_responses)
    text = pydoc.render_doc(itemscale, renderer=pydoc.plaintext)
    assert "docs/python.md" in text
    assert len(text.splitlines()) < 120
    assert "class AnalysisResult" not in text


def test_a_wrong_measure_name_lists_the_valid_ones(tmp_path: Path) -> None:
    df, _ = make_run(tmp_path / "run", models=("m",), with_audit=False)
    result = AnalysisResult.from_json(analyze_responses(df, bootstrap=0).to_json())
    series = result["m"]
    with pytest.raises(KeyError) as exc:
        series.estimate("harmful")
    message = str(exc.value)
    assert "no measure 'harmful'" in message and "harmful_rate" in message
    with pytest.raises(KeyError) as exc:
        series.estimate("accuracy")
    assert "give a configuration: .estimate('accuracy', 'f8')" in str(exc.value)
    with pytest.raises(KeyError) as exc:
        series.estimate("accuracy", "f99")
    assert "configurations: f8, f16, f32" in str(exc.value)
    assert series.estimate("accuracy", "f8").value == series.accuracy["f8"].value
    assert "harmful_rate" in series.measures() and "accuracy" in series.measures()
