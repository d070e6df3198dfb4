"""`itemscale cascade` end to end on a real run directory."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from itemscale.cli import main
from itemscale.core.responses import write_run


def _write_run(run_dir: Path, n_items: int = 40) -> None:
    rng = np.random.default_rng(5)
    rows = []
    for i in range(n_items):
        for f in (8, 16, 32):
            right = float(rng.random() < 0.6)
            rows.append(
                {
                    "model": "tiny",
                    "item_id": f"q{i}",
                    "video_id": f"vid{i // 2}",
                    "task_kind": "mcqa",
                    "series": "default",
                    "config_id": f"f{f}",
                    "config_label": f"{f}f",
                    "axis_order": float(f),
                    "frames": f,
                    "repeat": 0,
                    "status": "ok",
                    "answer": "A" if right else "C",
                    "correct": right,
                    "confidence": float(0.4 + 0.5 * right * rng.random()),
                    "visual_tokens": 32 * f,
                    # phase-shifted budgets: almost nothing is shared
                    "frame_indices": np.arange(f) * (96 // f) + f % 3,
                }
            )
    write_run(run_dir, pd.DataFrame(rows), {"tool": "test"})


def test_cascade_command_writes_json_and_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    _write_run(run_dir)
    out = tmp_path / "cascade.json"
    code = main(["cascade", str(run_dir), "--json", str(out), "--bootstrap", "50", "--seed", "2"])
    assert code == 0
    text = capsys.readouterr().out
    assert "confidence" in text and "agreement" in text and "learned" in text
    assert "terminal 32f" in text
    report = json.loads(out.read_text())
    assert report["schema_version"] == 4
    assert report["settings"]["seed"] == 2 and report["settings"]["bootstrap"] == 50
    (block,) = report["results"]
    assert block["terminal"]["mean_cost_frames"]["value"] == 32
    assert block["cascade"]["cost_reduction"]["ci"] is not None
    # same seed, same file
    again = tmp_path / "again.json"
    assert (
        main(["cascade", str(run_dir), "--json", str(again), "--bootstrap", "50", "--seed", "2"])
        == 0
    )
    first, second = json.loads(out.read_text()), json.loads(again.read_text())
    first.pop("run_dir"), second.pop("run_dir")
    assert first == second


def test_cascade_command_errors_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cascade", str(tmp_path / "missing")]) == 2
    assert "missing" in capsys.readouterr().err
    run_dir = tmp_path / "run"
    _write_run(run_dir, n_items=6)
    assert main(["cascade", str(run_dir), "--model", "other"]) == 2
    assert "no responses for model(s) other" in capsys.readouterr().err
    assert main(["cascade", str(run_dir), "--bootstrap", "-1"]) == 2


def test_on_the_release_a_one_budget_rule_is_named_as_that_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`cascade --sharing prefix` on the release: Qwen2.5-VL-7B's learned rule stops every item
    at 128 frames, so it is the fixed budget 128f_151k, never "learned"; the data has answers
    only, so no line promises a confidence and no description names confidence features; and
    without `--sharing` the default pays every stage in full and says why."""
    from itemscale.analysis.policies import CascadeReport
    from itemscale.cli._paper import print_cascade_table
    from itemscale.workflows import import_release

    run = tmp_path / "release"
    import_release(run)
    capsys.readouterr()
    out_json = tmp_path / "cascade.json"
    args = ["cascade", str(run), "--bootstrap", "0", "--model", "Qwen2.5-VL-7B"]
    args += ["--model", "Qwen3-VL-8B"]
    assert main([*args, "--sharing", "prefix", "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert (
        "best match: the fixed budget 128f_151k (the learned rule stops every item there) saves "
        "50.0% of the terminal's frames" in out
    )
    assert "best match: learned" not in out
    assert "the learned rule stops every item at 128f_151k: that is the fixed budget" in out
    assert "stopping score: none recorded (no prob: probability of the chosen option" in out
    assert "stopping score: prob (" not in out
    # a rule that never stops early is the terminal, named as such, not a "fixed budget"
    assert "the learned rule never stops before the terminal budget 128f_151k" in out
    assert "fixed budget 128f_151k (the learned rule stops every item there)" in out
    report = CascadeReport.load(out_json)
    block = next(b for b in report.results if b.model == "Qwen2.5-VL-7B")
    for name, rule in block.policies.items():
        assert name == "confidence" or "confidence" not in rule.description, name
    assert "answer features" in block.policies["learned"].description
    table = io.StringIO()
    print_cascade_table(report, table)
    row = next(x for x in table.getvalue().splitlines() if x.startswith("  Qwen2.5-VL-7B"))
    assert " fixed 128f " in row and " learned " not in row
    assert "fixed budget, Qwen2.5-VL-7B: the learned rule stops every item at 128f_151k" in (
        table.getvalue()
    )

    assert main([*args, "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert (
        "cost model: none (every stage that runs pays in full: the default where no frame "
        "indices are recorded" in out
    )
