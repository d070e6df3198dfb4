"""`grid_with_text` (the text-only answer as budget 0) and `--configs`, by hand and by property."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _support.tables import table
from itemscale.analysis.measures import UnknownConfigError, analyze_responses, select_configs
from itemscale.core.responses import normalise_responses

LABELS2 = ["8f", "16f"]
#        text  8f  16f
HAND = {
    "i1": (1, [0, 1]),  # harmful with text (text -> 8f), overwrite
    "i2": (0, [1, 0]),  # harmful on both grids
    "i3": (1, [1, 1]),
    "i4": (1, [0, 0]),  # right only blind: oracle with text, harmful, overwrite
    "i5": (0, [0, 1]),
}


def _hand_table(with_extra: bool = True) -> pd.DataFrame:
    matrix = {i: ys for i, (_, ys) in HAND.items()}
    text = {i: (float(t), "A" if t else "B") for i, (t, _) in HAND.items()}
    videos = {"i1": "v1", "i2": "v1", "i3": "v2", "i4": "v3", "i5": "v3", "i6": "v4"}
    if with_extra:
        matrix["i6"] = [1, 0]  # no text-only answer: in the visual grid only
    return normalise_responses(table(matrix, labels=LABELS2, text=text, videos=videos))


def test_grid_with_text_by_hand() -> None:
    block = analyze_responses(_hand_table(), bootstrap=200, seed=1).to_json()["models"]["m"]
    g = block["grid_with_text"]
    assert g["configs"] == ["text-only", "8f", "16f"]
    assert (g["n_items"], g["n_videos"], g["n_dropped"]) == (5, 3, 1)
    assert g["drop_reasons"] == {"no_text_only": 1}
    assert {k: v["value"] for k, v in g["accuracy"].items()} == pytest.approx(
        {"text-only": 0.6, "8f": 0.4, "16f": 0.6}
    )
    assert g["best_fixed"]["config"] == "text-only"  # tie with 16f: the earlier budget
    assert g["best_fixed"]["value"] == pytest.approx(0.6)
    assert g["oracle"]["value"] == pytest.approx(1.0)
    assert g["oracle_headroom"]["value"] == pytest.approx(0.4)
    assert g["harmful_rate"]["value"] == pytest.approx(3 / 5)  # i1, i2, i4
    assert g["overwrite_rate"]["value"] == pytest.approx(2 / 5)  # i1, i4
    for key in ("oracle", "oracle_headroom", "harmful_rate", "overwrite_rate"):
        low, high = g[key]["ci"]
        assert low <= g[key]["value"] <= high
    # the visual-only block keeps the text-only answer off the axis, and all six items
    assert block["axis"] == LABELS2
    assert block["n_items"] == 6
    assert block["oracle"]["value"] == pytest.approx(5 / 6)  # i4 is wrong at every budget
    assert block["harmful_rate"]["value"] == pytest.approx(2 / 6)  # i2, i6


def test_no_text_only_no_block() -> None:
    df = normalise_responses(table({"a": [1, 0], "b": [0, 1]}, labels=LABELS2))
    assert "grid_with_text" not in analyze_responses(df, bootstrap=0).to_json()["models"]["m"]


def test_continuous_grid_with_text_by_hand() -> None:
    matrix = {"a": [0.2, 0.9], "b": [0.5, 0.5], "c": [0.0, 0.3]}
    text = {"a": (0.8, ""), "b": (0.55, ""), "c": (0.0, "")}
    df = normalise_responses(table(matrix, labels=LABELS2, text=text, kind="open_qa"))
    g = analyze_responses(df, bootstrap=0, eps=0.1).to_json()["models"]["m"]["continuous"][
        "grid_with_text"
    ]
    assert g["configs"] == ["text-only", "8f", "16f"]
    assert g["mean_score"]["text-only"]["value"] == pytest.approx(1.35 / 3)
    assert g["best_fixed"]["config"] == "16f"
    assert g["oracle_score"]["value"] == pytest.approx((0.9 + 0.55 + 0.3) / 3)
    assert g["oracle_gap"]["value"] == pytest.approx((0.9 + 0.55 + 0.3) / 3 - 1.7 / 3)
    assert g["harmful_rate_eps"]["value"] == pytest.approx(1 / 3)  # a: 0.8 -> 0.2
    assert g["overwrite_rate_eps"]["value"] == pytest.approx(1 / 3)  # b: 0.55 - 0.5 < eps


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 1), min_size=4, max_size=4), min_size=1, max_size=25),
)
def test_grid_with_text_matches_its_definition(rows: list[list[int]]) -> None:
    """Every key against its definition, written as the plainest loops over items and pairs."""
    labels = ["8f", "16f", "32f"]
    matrix = {f"i{n}": r[1:] for n, r in enumerate(rows)}
    text = {f"i{n}": (float(r[0]), "A") for n, r in enumerate(rows)}
    df = normalise_responses(table(matrix, labels=labels, text=text))
    g = analyze_responses(df, bootstrap=0).to_json()["models"]["m"]["grid_with_text"]
    y = np.array(rows)
    k = y.shape[1]
    acc = y.mean(axis=0)
    assert [g["accuracy"][c]["value"] for c in g["configs"]] == pytest.approx(acc.tolist())
    assert g["best_fixed"]["value"] == pytest.approx(acc.max())
    assert g["configs"].index(g["best_fixed"]["config"]) == int(np.argmax(acc))
    oracle = np.mean([max(r) for r in rows])
    assert g["oracle"]["value"] == pytest.approx(oracle)
    assert g["oracle_headroom"]["value"] == pytest.approx(oracle - acc.max())
    harmful = [
        any(r[a] == 1 and r[b] == 0 for a, b in itertools.combinations(range(k), 2)) for r in rows
    ]
    assert g["harmful_rate"]["value"] == pytest.approx(np.mean(harmful))
    overwrite = [r[0] == 1 and 0 in r[1:] for r in rows]
    assert g["overwrite_rate"]["value"] == pytest.approx(np.mean(overwrite))
    assert g["overwrite_rate"]["value"] <= g["harmful_rate"]["value"] + 1e-12


def test_configs_restricts_every_measure_and_recomputes_the_matched_grid() -> None:
    labels = ["8f", "16f", "32f"]
    matrix = {"a": [1, 0, 1], "b": [0, 1, 0], "c": [1, 1, 0]}
    status = {("c", 2): "model_error"}  # c fails only at 32f
    text = {i: (1.0, "A") for i in matrix}
    df = normalise_responses(table(matrix, labels=labels, text=text, status=status))
    full = analyze_responses(df, bootstrap=0).to_json()
    assert full["models"]["m"]["n_items"] == 2  # c left out for its failure at 32f
    chosen = analyze_responses(df, bootstrap=0, configs=["16f", "8f", "text-only"]).to_json()
    block = chosen["models"]["m"]
    assert chosen["grid"] == {"configs": ["16f", "8f", "text-only"], "excluded_models": {}}
    assert block["axis"] == ["8f", "16f"]  # the table's axis order, not the order given
    assert block["n_items"] == 3  # c is back: 32f is not on this grid
    assert block["harmful_rate"]["value"] == pytest.approx(1 / 3)  # a
    assert block["grid_with_text"]["configs"] == ["text-only", "8f", "16f"]
    # without the text-only label the text measures go too
    visual = analyze_responses(df, bootstrap=0, configs=["8f", "16f"]).to_json()["models"]["m"]
    assert "grid_with_text" not in visual and visual["n_text_only"] == 0


def test_configs_errors_and_excluded_models() -> None:
    a = table({"x": [1, 0], "y": [0, 1]}, labels=LABELS2, model="a")
    b = table({"x": [1], "y": [1]}, labels=["8f"], model="b")
    df = normalise_responses(pd.concat([a, b], ignore_index=True))
    with pytest.raises(
        UnknownConfigError, match=r"unknown configuration label\(s\) '64f'.*has: 16f, 8f"
    ):
        select_configs(df, ["8f", "64f"])
    with pytest.raises(UnknownConfigError, match="named twice"):
        select_configs(df, ["8f", "8f"])
    result = analyze_responses(df, bootstrap=0, configs=["8f", "16f"]).to_json()
    assert result["grid"]["excluded_models"] == {"b": ["16f"]}
    assert list(result["models"]) == ["a"]


def test_cli_analyze_and_report_configs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from itemscale.cli import main
    from itemscale.core.responses import write_run
    from itemscale.report import verify_artifact

    run = tmp_path / "run"
    write_run(run, _hand_table(), {"note": "test"})
    assert main(["analyze", str(run), "--bootstrap", "0", "--configs", "text-only,16f"]) == 0
    out = capsys.readouterr().out
    assert "grid restricted to: text-only, 16f" in out
    assert "with the text-only answer as budget 0" in out
    assert "text-only < 16f: 5 items; dropped 1 (no_text_only: 1)" in out
    assert main(["analyze", str(run), "--configs", "16f,4f"]) == 2
    assert (
        "unknown configuration label(s) '4f'; the run has: 16f, 8f, text-only"
        in capsys.readouterr().err
    )
    assert main(["report", str(run), "--bootstrap", "20", "--configs", "text-only,16f"]) == 0
    artifact = run / "artifact"
    measures = json.loads((artifact / "measures.json").read_text(encoding="utf-8"))
    assert measures["grid"]["configs"] == ["text-only", "16f"]
    assert verify_artifact(artifact).ok
    html = (artifact / "report.html").read_text(encoding="utf-8")
    assert "With the text-only answer as budget 0" in html and "Visual budgets only" in html
    # provenance that claims another grid no longer matches the stored measures
    prov_path = artifact / "provenance.json"
    prov = json.loads(prov_path.read_text(encoding="utf-8"))
    prov["measures"]["configs"] = ["text-only", "8f"]
    prov_path.write_text(json.dumps(prov), encoding="utf-8")
    result = verify_artifact(artifact)
    assert not result.ok and "measures.json" in result.bad_files
