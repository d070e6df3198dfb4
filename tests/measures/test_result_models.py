"""The typed result is the `analyze --json` layout byte for byte: every scenario's real output
(and, where ../shared/fixtures holds it, the seed paper's release) read through the models and
dumped again is the same text, with the same key order in memory; a damaged stored file is a
`SchemaError` naming the file and the key path."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _support.analyses import N_BOOT, scenarios
from _support.paths import shared
from _support.runs import make_mixed_run
from itemscale.analysis.measures import (
    AnalysisResult,
    BinarySeries,
    Estimate,
    ItemShare,
    OpenEndedSeries,
    analyze_responses,
    register_measure,
    unregister_measure,
)
from itemscale.analysis.measures._result_series import AnalysisLayout
from itemscale.cli import main
from itemscale.core.responses import SchemaError, write_json_atomic


def _written(data: Any) -> str:
    """What `analyze --json` writes for `data` (`write_json_atomic`'s dump options)."""
    return json.dumps(data, indent=2, sort_keys=True, default=str) + "\n"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict[str, Any], str]]:
    """Each scenario's in-memory result and the text `analyze --json` writes for it."""
    tmp = tmp_path_factory.mktemp("scenarios")
    out = {}
    for name, df, kwargs in scenarios(tmp):
        result = analyze_responses(df, bootstrap=N_BOOT, **kwargs).to_json()
        path = tmp / (re.sub(r"\W+", "_", name) + ".json")
        write_json_atomic(path, result)
        out[name] = (result, path.read_text(encoding="utf-8"))
    return out


def test_every_scenario_reads_back_to_the_same_text(
    outputs: dict[str, tuple[dict[str, Any], str]],
) -> None:
    for name, (result, text) in outputs.items():
        record = AnalysisLayout.model_validate(json.loads(text))
        assert _written(record.model_dump(mode="json")) == text, name
        # the same key order as the producer's, not only after sort_keys
        in_memory = AnalysisLayout.model_validate(result)
        assert json.dumps(in_memory.model_dump(mode="json")) == json.dumps(result), name


def test_the_scenarios_reach_every_block(outputs: dict[str, tuple[dict[str, Any], str]]) -> None:
    """A block no scenario writes would be a block the byte-for-byte test never checks."""
    keys: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            keys.update(value)
            for inner in value.values():
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    for _, text in outputs.values():
        walk(json.loads(text))
    wanted = {
        "grid_with_text", "continuous", "tasks", "chains", "paired_tests", "requested",
        "power", "heterogeneity", "noise", "skipped", "churn", "selector", "same_input",
        "membership", "other_series", "interventions", "by", "small_sample", "noise_floor",
        "repeat_mean_accuracy", "effective_budget", "evidence", "grid", "excluded_models",
        "scoring_rule_warnings", "text_overwrite_counts", "count", "greedy_cover",
        "noise_floor_p", "noise_floor_q",
    }  # fmt: skip
    assert wanted <= keys, wanted - keys


def test_the_record_is_typed(outputs: dict[str, tuple[dict[str, Any], str]]) -> None:
    result = AnalysisResult.from_json(outputs["two models, text-only"][0])
    block = result.models["a"]
    assert isinstance(block, BinarySeries)
    point = block.curve["f16"]
    assert isinstance(point, Estimate)
    assert point.ci_low is not None and point.ci_high is not None
    assert point.ci_low <= point.value <= point.ci_high  # type: ignore[operator]
    assert point.count is not None and point.count.n == block.n_items
    assert block.accuracy["f16"] == result["a"].accuracy["f16"]
    assert block.grid_with_text is not None and block.grid_with_text.harmful_rate.value is not None
    assert result.bootstrap.bootstrap == N_BOOT
    with pytest.raises(Exception, match="frozen"):
        block.series = "other"  # type: ignore[misc]
    open_ended = AnalysisResult.from_json(outputs["same input, open-ended only"][0])
    assert isinstance(open_ended.models["open"], OpenEndedSeries)
    assert open_ended.models["open"].kind == "continuous" == open_ended["open"].kind
    (step,) = open_ended.models["same"].effective_budget  # type: ignore[union-attr]
    assert (step.from_, step.to, step.evidence.basis) == ("8f", "16f", "identical_answers")


def test_the_cli_json_reads_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    make_mixed_run(run)
    out = tmp_path / "m.json"
    assert main(["analyze", str(run), "--bootstrap", "20", "--json", str(out)]) == 0
    capsys.readouterr()
    text = out.read_text(encoding="utf-8")
    assert _written(AnalysisResult.read(out).to_json()) == text


@pytest.mark.slow
def test_the_release_reads_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The seed paper's release (5 models, 786 questions, its configurations) as kept in
    ../shared/fixtures/scalegrid, scored with the packaged answer key, imported and analysed."""
    import shutil

    from itemscale.workflows import RELEASE_ANSWER_KEY as ANSWER_KEY
    from itemscale.workflows import import_release, release_dir

    release = tmp_path / "scalegrid"
    shutil.copytree(shared("scalegrid"), release)
    shutil.copy(release_dir() / ANSWER_KEY, release / ANSWER_KEY)
    run = tmp_path / "run"
    import_release(run, release)
    out = tmp_path / "m.json"
    assert main(["analyze", str(run), "--bootstrap", "20", "--json", str(out)]) == 0
    capsys.readouterr()
    text = out.read_text(encoding="utf-8")
    record = AnalysisResult.read(out)
    assert len(record.models) == 5
    assert _written(record.to_json()) == text


def _damaged(tmp_path: Path, outputs: dict[str, tuple[dict[str, Any], str]]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(outputs["two models, text-only"][1])
    return data


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (
            lambda d: d["models"]["a"]["accuracy"]["f8"].update(value="high"),
            r"m\.json: not analyze's JSON layout: models\.a\.accuracy\.f8\.value: "
            r"must be a number \(got 'high'\)",
        ),
        (
            lambda d: d["models"]["b"]["paired_tests"].update(extra_key=1),
            r"m\.json: .*models\.b\.paired_tests\.extra_key: unknown key",
        ),
        (
            lambda d: d["models"]["a"]["grid_with_text"].pop("oracle"),
            r"m\.json: .*models\.a\.grid_with_text\.oracle: missing required key",
        ),
        (
            lambda d: d["models"]["b"]["oracle"].pop("ci"),
            r"models\.b\.oracle\.ci: missing required key",
        ),
        (
            lambda d: d["bootstrap"].update(seed=True),
            r"m\.json: .*bootstrap\.seed: Input should be a valid integer",
        ),
        (
            lambda d: d["models"]["a"]["accuracy"]["f8"].update(ci=[0.1]),
            r"models\.a\.accuracy\.f8\.ci: List should have at least 2 items",
        ),
    ],
)
def test_a_damaged_file_names_the_key(
    tmp_path: Path,
    outputs: dict[str, tuple[dict[str, Any], str]],
    damage: Any,
    message: str,
) -> None:
    data = _damaged(tmp_path, outputs)
    damage(data)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SchemaError, match=message):
        AnalysisResult.read(path)


def test_a_newer_or_foreign_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text('{"schema_version": 5, "models": {}}', encoding="utf-8")
    with pytest.raises(SchemaError, match=r"m\.json: schema_version 5 is newer"):
        AnalysisResult.read(path)
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(SchemaError, match=r"m\.json: not a JSON object"):
        AnalysisResult.read(path)
    path.write_text("{", encoding="utf-8")
    with pytest.raises(SchemaError, match=r"m\.json: not JSON"):
        AnalysisResult.read(path)


def _first_budget_right(data: Any) -> np.ndarray:
    return np.asarray(data.y[:, 0] >= 1)


def test_a_registered_measure_is_kept_in_place(
    outputs: dict[str, tuple[dict[str, Any], str]],
) -> None:
    df = next(d for n, d, _ in scenarios_for_registry())
    toy = ItemShare(key="first_budget_rate", kinds=("binary",), indicator=_first_budget_right)
    register_measure(toy)
    try:
        result = analyze_responses(df, bootstrap=0).to_json()
        record = AnalysisResult.from_json(result)
        assert json.dumps(record.to_json()) == json.dumps(result)
        assert record.models["m"].registered["first_budget_rate"]["value"] is not None  # type: ignore[union-attr]
    finally:
        unregister_measure(toy)
    with pytest.raises(SchemaError, match=r"models\.m\.first_budget_rate: unknown key"):
        AnalysisResult.from_json(result)


def scenarios_for_registry() -> list[tuple[str, Any, dict[str, Any]]]:
    from _support.tables import table

    matrix = {f"i{i}": [float(i % 2), float(i % 3 == 0), 1.0] for i in range(6)}
    return [("toy", table(matrix, videos={k: f"v{i // 2}" for i, k in enumerate(matrix)}), {})]


numbers = st.one_of(
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False),
    st.just(math.nan),
)


@settings(max_examples=200, deadline=None)
@given(
    value=st.none() | numbers,
    ci=st.none() | st.lists(numbers, min_size=2, max_size=2),
    count=st.none() | st.tuples(st.none() | st.integers(0, 99), st.integers(0, 99)),
)
def test_an_estimate_reads_back_to_the_same_text(
    value: float | None, ci: list[float] | None, count: tuple[int | None, int] | None
) -> None:
    """Any `{"value", "ci"[, "count"]}` entry, integers, floats and NaN included, is written
    back as it was read; `ci_low` and `ci_high` are the interval's ends."""
    entry: dict[str, Any] = {"value": value, "ci": ci}
    if count is not None:
        entry["count"] = {"k": count[0], "n": count[1]}
    text = json.dumps(entry)
    est = Estimate.model_validate(json.loads(text))
    assert json.dumps(est.model_dump(mode="json")) == text
    assert (est.ci_low, est.ci_high) == ((None, None) if ci is None else (ci[0], ci[1])) or (
        ci is not None and any(isinstance(x, float) and math.isnan(x) for x in ci)
    )


#: Keys added to schema 1 after its first files were written: a file without them still loads.
ADDED_WITHIN_SCHEMA_1 = (
    "effective_budget",
    "scoring_rules",
    "order",
    "multi_axis",
    "paired_tests",
    "power",
    "heterogeneity",
)


def test_a_file_written_before_the_added_keys_still_loads_unchanged(
    outputs: dict[str, tuple[dict[str, Any], str]],
) -> None:
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ADDED_WITHIN_SCHEMA_1}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    stripped_any = False
    for name, (_, text) in outputs.items():
        data = json.loads(text)
        older = strip(data)
        stripped_any |= older != data
        record = AnalysisLayout.model_validate(older)
        assert _written(record.model_dump(mode="json")) == _written(older), name
    assert stripped_any
