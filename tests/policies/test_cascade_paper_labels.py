"""The prescription on the seed paper's released labels: with the paper's shared cost (`prefix`)
an answers-only stopping policy matches the terminal budget at a fraction of its frames.

The release holds answers only (no option probabilities), so the confidence cascade is not
available and the agreement and learned policies carry it. V1 short ships in the package;
V1 medium (in tests/data, keyed by Video-MME's question file) is a split nothing was tuned on.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _support.paths import DATA, shared
from itemscale.analysis.policies import CascadeSettings, cascade_report
from itemscale.core.responses import read_run
from itemscale.workflows import RELEASE_ANSWER_KEY as ANSWER_KEY
from itemscale.workflows import release_dir

MEDIUM = DATA / "scalegrid_v1_medium"


def _savers(report: dict) -> list[str]:
    """Models whose best matching policy saves at least 30% of the terminal's frames."""
    return [
        b["model"]
        for b in report["results"]
        if b["best_match"] is not None and b["best_match"]["cost_reduction"]["value"] >= 0.30
    ]


@pytest.fixture(scope="module")
def v1_short(shipped_release_run: Path) -> pd.DataFrame:
    df, _ = read_run(shipped_release_run)
    return df


def test_prefix_sharing_saves_frames_at_the_terminal_accuracy_on_v1_short(
    v1_short: pd.DataFrame,
) -> None:
    report = cascade_report(
        v1_short, CascadeSettings(bootstrap=1000, seed=0, sharing="prefix")
    ).as_json()
    assert len(report["results"]) == 5
    for block in report["results"]:
        assert block["cost"]["frames_basis"] == "prefix"
        assert block["cost"]["unshared_bound"] == "none"
        assert block["policies"]["confidence"]["available"] is False  # answers only
        best = block["best_match"]
        if best is not None:  # a match: the change's interval reaches 0, and it saves frames
            assert best["accuracy_change"]["ci"][1] >= 0
            assert best["cost_reduction"]["value"] > 0
    # Qwen3-VL-8B's 256f_151k repeats its 128f_151k (identical answers on 786 of 786 items):
    # the terminal is 128f_151k, and "stop at 128f" saves nothing against it
    assert sorted(_savers(report)) == ["InternVL3-8B", "Qwen2.5-VL-7B"]
    qwen3 = next(b for b in report["results"] if b["model"] == "Qwen3-VL-8B")
    assert qwen3["labels"][-1] == "128f_151k" and qwen3["terminal"]["label"] == "128f_151k"
    assert [
        (e["from"], e["to"], e["identical"], e["items"]) for e in qwen3["same_input_terminal"]
    ] == [("128f_151k", "256f_151k", 786, 786)]
    assert "256f_151k is costed as 128f_151k" in qwen3["same_input_note"]
    assert qwen3["best_match"] is None
    assert all("same_input_terminal" not in b for b in report["results"] if b is not qwen3)
    # auto sharing pays every stage in full on an imported run (no frame indices: nothing
    # shows that stages share frames), and says why; the same stops as `--sharing none`
    auto = cascade_report(v1_short, CascadeSettings(bootstrap=1000, seed=0)).as_json()
    none = cascade_report(v1_short, CascadeSettings(bootstrap=1000, seed=0, sharing="none"))
    for block, plain in zip(auto["results"], none.as_json()["results"], strict=True):
        assert block["cost"]["frames_basis"] == "none" and block["cost"]["unshared_bound"] is None
        assert block["cost"]["frames_note"].startswith("every stage that runs pays in full: the ")
        assert "no frame indices are recorded" in block["cost"]["frames_note"]
        assert "--sharing prefix" in block["cost"]["frames_note"]
        for name, rule in block["policies"].items():
            assert rule == plain["policies"][name], (block["model"], name)
    # under prefix, Qwen2.5-VL-7B's learned rule stops every item at 128f_151k: a fixed budget
    qwen25 = next(b for b in report["results"] if b["model"] == "Qwen2.5-VL-7B")
    shares = qwen25["policies"]["learned"]["stop_share"]
    assert shares["128f_151k"] == 1.0 and sum(shares.values()) == 1.0


def test_agreement_on_internvl3_is_the_rule_computed_by_hand(v1_short: pd.DataFrame) -> None:
    """Both folds fit "stop at 32 frames when 16 and 32 frames agree, else run 64": the held-out
    outcome is that rule on every item, computed here from the released table itself."""
    report = cascade_report(
        v1_short, CascadeSettings(bootstrap=0, seed=0, sharing="prefix")
    ).as_json()
    block = next(b for b in report["results"] if b["model"] == "InternVL3-8B")
    agreement = block["policies"]["agreement"]
    assert [f["thresholds"]["16f_151k"] for f in agreement["folds"]] == ["never", "never"]
    assert [f["thresholds"]["32f_151k"] for f in agreement["folds"]] == ["always", "always"]
    wide = pd.read_csv(release_dir() / "InternVL3-8B_V1_short_predictions_wide.csv", dtype=str)
    key = pd.read_csv(release_dir() / ANSWER_KEY, dtype=str)
    gold = wide["sample_id"].map(dict(zip(key["item_id"], key["gold"], strict=True)))
    right = {c: (wide[c] == gold).to_numpy() for c in ("16f_151k", "32f_151k", "64f_151k")}
    agree = (wide["16f_151k"] == wide["32f_151k"]).to_numpy() & wide["32f_151k"].notna().to_numpy()
    correct = np.where(agree, right["32f_151k"], right["64f_151k"])
    frames = np.where(agree, 32.0, 64.0)  # prefix: an item pays its stop stage's frames
    assert agreement["accuracy"]["value"] == pytest.approx(correct.mean())
    assert agreement["mean_cost_frames"]["value"] == pytest.approx(frames.mean())
    assert agreement["cost_reduction"]["value"] == pytest.approx(1 - frames.mean() / 64)
    # nothing shared, the same stops pay 16 + 32 or 16 + 32 + 64
    unshared = np.where(agree, 48.0, 112.0)
    assert agreement["unshared"]["mean_cost_frames"]["value"] == pytest.approx(unshared.mean())
    assert 100 * correct.mean() == pytest.approx(71.76, abs=0.005)  # terminal: 71.37
    assert 100 * (1 - frames.mean() / 64) == pytest.approx(43.64, abs=0.005)


def test_a_split_nothing_was_tuned_on(tmp_path: Path) -> None:
    from itemscale.collect.importers import (
        TableOptions,
        finish_import,
        import_table,
        key_from_benchmark,
    )
    from itemscale.collect.importers._common import import_record, source_record

    key = key_from_benchmark(shared("benchmarks/videomme-test.parquet"))
    for table in sorted(MEDIUM.glob("*_predictions_wide.csv")):
        model = table.name.split("_V1_medium")[0]
        rows, notes = import_table(
            table, TableOptions(wide=True, id_column="sample_id", model=model), key=key
        )
        finish_import(
            importer="table",
            run_dir=tmp_path,
            files=[str(table)],
            rows=rows,
            record=import_record("table", [source_record(table, rows=len(rows))]),
            skipped={},
            notes=notes,
        )
    df, _ = read_run(tmp_path)
    report = cascade_report(df, CascadeSettings(bootstrap=1000, seed=0, sharing="prefix")).as_json()
    assert len(report["results"]) == 4
    # both InternVL models save 80% and more; Qwen2.5-VL-7B's 30% sits on the edge (its change
    # interval ends at 0.0), Qwen3-VL-8B saves 14% (docs/policies.md)
    assert {"InternVL3-8B", "InternVL3.5-8B"} <= set(_savers(report))
