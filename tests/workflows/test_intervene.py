"""`itemscale intervene` end to end: a real sweep over real H.264 files with the pixel backend
(answers computed from decoded pixels, see tests/_support/sweep.py), the intervention re-run through
the sweep, and every outcome recomputed independently from the video with PyAV."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from _support.sweep import pixel_factory, read_log, write_benchmark, write_protocol
from itemscale import intervene
from itemscale.analysis.policies import InterventionSettings
from itemscale.cli import main
from itemscale.collect.protocol import Configuration, load_protocol
from itemscale.collect.sweep import run_sweep
from itemscale.collect.video import sample_indices
from itemscale.core.responses import read_run, write_run

LETTERS = "ABCD"


def _decoded(path: Path) -> np.ndarray:
    import av

    with av.open(str(path)) as container:
        return np.stack([f.to_ndarray(format="rgb24") for f in container.decode(video=0)])


@pytest.fixture
def swept(tmp_path: Path) -> dict[str, Any]:
    suite = write_benchmark(tmp_path / "suite", 6, 3)
    log = tmp_path / "calls.jsonl"
    proto = write_protocol(
        tmp_path / "protocol.toml",
        suite,
        frames=(2, 4, 8),
        models=[{"name": "pixel", "backend": "hf", "model": "x", "options": {"log": str(log)}}],
    )
    run_sweep(load_protocol(proto), backend_factory=pixel_factory, progress=False)
    return {"suite": suite, "run": tmp_path / "run", "log": log}


def _expected_correct(suite: Path, video_id: str, indices: np.ndarray, answer: str) -> float:
    frames = _decoded(suite / "videos" / f"{video_id}.mp4")
    mean = int(frames[indices].mean())
    return float(LETTERS[mean % 4] == answer)


@pytest.mark.slow
def test_nested_intervention_end_to_end(swept: dict[str, Any]) -> None:
    run_dir, suite = swept["run"], swept["suite"]
    before_calls = len(read_log(swept["log"]))
    typed = intervene(
        run_dir, intervention="nested", n_control=3, bootstrap=200, seed=1,
        backend_factory=pixel_factory, progress=False,
    )  # fmt: skip
    # the typed result is the stored file, byte for byte
    assert typed.to_json() == (run_dir / "intervention" / "nested.json").read_text()
    result = typed.as_json()
    df, prov = read_run(run_dir)
    plan = json.loads((run_dir / "intervention" / "nested.plan.json").read_text())
    items = plan["items"]
    n_reg = sum(i["group"] == "regression" for i in items)
    assert n_reg == result["n_regressions"] > 0
    assert sum(i["group"] == "control" for i in items) == 3
    # exactly the planned cells reached the model
    assert len(read_log(swept["log"])) - before_calls == len(items)

    references = {
        (r["item_id"], r["frames"]): r
        for r in df[df["series"] == "linspace/cached"].to_dict("records")
    }
    recovered, broken = [], []
    for item in items:
        config = Configuration.model_validate(plan["configs"][item["config_id"]])
        row = df[(df["item_id"] == item["item_id"]) & (df["config_id"] == item["config_id"])]
        assert len(row) == 1
        row = row.iloc[0]
        assert row["series"] == plan["config_series"][item["config_id"]]
        lower = int(item["reference_label"].rstrip("f"))
        assert config.sampling.keep_frames == lower and config.frames == 8
        # the re-run's frames keep every frame of the lower budget that was right
        lower_frames = set(references[(item["item_id"], lower)]["frame_indices"].tolist())
        assert lower_frames <= set(row["frame_indices"].tolist())
        n = len(_decoded(suite / "videos" / f"{row['video_id']}.mp4"))
        expected_idx = sample_indices(config.sampling, n, 8, fps=10.0)
        assert row["frame_indices"].tolist() == expected_idx.tolist()
        right = _expected_correct(suite, row["video_id"], expected_idx, row["reference"])
        assert row["correct"] == right
        (recovered if item["group"] == "regression" else broken).append(
            right if item["group"] == "regression" else 1.0 - right
        )
    assert result["recovered_rate"]["value"] == pytest.approx(np.mean(recovered))
    assert result["broken_rate"]["value"] == pytest.approx(np.mean(broken))
    assert result["regressions"]["reference_frames_kept"] == 1.0
    for key in ("recovered_rate", "broken_rate"):
        assert result[key]["ci"] is not None
    # provenance: the full protocol stays, the intervention is recorded
    assert prov["interventions"]["nested"]["n_regressions"] == n_reg
    # each changed configuration as its JSON object, the plan's and the result's alike
    assert prov["interventions"]["nested"]["configs"] == plan["configs"] == result["configs"]
    assert all(isinstance(c, dict) for c in plan["configs"].values())
    assert [m["name"] for m in prov["protocol"]["models"]] == ["pixel"]
    stored = json.loads((run_dir / "intervention" / "nested.json").read_text())
    assert stored["recovered_rate"] == result["recovered_rate"]

    # a second run resumes: nothing is run again, the numbers are the same
    calls = len(read_log(swept["log"]))
    again = intervene(
        run_dir,
        InterventionSettings(
            intervention="nested", n_control=3, bootstrap=200, seed=1, progress=False
        ),
        backend_factory=pixel_factory,
    ).as_json()
    assert len(read_log(swept["log"])) == calls
    assert again["recovered_rate"] == result["recovered_rate"]
    assert again["broken_rate"] == result["broken_rate"]

    # analyze keeps the re-runs apart from the budget axes
    from itemscale.analysis.measures import analyze_responses

    block = analyze_responses(df, bootstrap=0).to_json()["models"]["pixel"]
    assert not block["series"].startswith("intervention:")
    assert block["interventions"] and all(
        s.startswith("intervention:nested") for s in block["interventions"]
    )
    assert not any(s.startswith("intervention:") for s in block.get("other_series", {}))
    assert not any("intervention:" in k for k in block.get("membership", {}))


@pytest.mark.slow
def test_phase_shift_and_the_command_line(
    swept: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir, suite = swept["run"], swept["suite"]
    result = intervene(
        run_dir,
        intervention="phase-shift",
        bootstrap=100,
        backend_factory=pixel_factory,
        progress=False,
    ).as_json()
    df, _ = read_run(run_dir)
    ((cid, config),) = result["configs"].items()
    assert Configuration.model_validate(config).sampling.phase == 0.5
    for record in result["items"]:
        row = df[(df["item_id"] == record["item_id"]) & (df["config_id"] == cid)].iloc[0]
        n = len(_decoded(suite / "videos" / f"{row['video_id']}.mp4"))
        idx = sample_indices(Configuration.model_validate(config).sampling, n, 8, fps=10.0)
        assert row["frame_indices"].tolist() == idx.tolist()
        assert record["after"] == _expected_correct(suite, row["video_id"], idx, row["reference"])
    # the command line computes the same rates from the stored cells (no model needed)
    out = run_dir / "pt.json"
    code = main(
        ["intervene", str(run_dir), "--policy", "phase-shift", "--no-run", "--bootstrap", "100",
         "--json", str(out)]
    )  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    regressions = [r for r in result["items"] if r["group"] == "regression"]
    controls = [r for r in result["items"] if r["group"] == "control"]
    recovered = sum(r["after"] == 1.0 for r in regressions)
    broken = sum(r["after"] == 0.0 for r in controls)
    assert f"recovered: {recovered} of {len(regressions)} regressions" in text
    assert f"broken:    {broken} of {len(controls)} controls" in text
    cli = json.loads(out.read_text())
    assert cli["recovered_rate"] == result["recovered_rate"]
    assert cli["broken_rate"] == result["broken_rate"]
    # the cascade does not mistake the re-runs for a budget axis
    assert main(["cascade", str(run_dir), "--bootstrap", "0"]) == 0
    assert "intervention re-runs are not a budget axis" in capsys.readouterr().out


def test_intervene_errors_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["intervene", str(tmp_path / "nope"), "--policy", "nested"]) == 2
    assert "nope" in capsys.readouterr().err
    # an imported table has no protocol to re-run
    rows = [
        {
            "model": "m", "item_id": f"i{i}", "video_id": f"v{i}", "task_kind": "mcqa",
            "series": "default", "config_id": f"c{f}", "config_label": f"{f}f",
            "axis_order": float(f), "frames": f, "repeat": 0, "status": "ok",
            "correct": float((i + f) % 3 == 0),
        }
        for i in range(6)
        for f in (4, 8)
    ]  # fmt: skip
    import pandas as pd

    write_run(tmp_path / "imported", pd.DataFrame(rows), {"source": "lmms-eval"})
    assert main(["intervene", str(tmp_path / "imported"), "--policy", "nested"]) == 2
    assert "no protocol recorded" in capsys.readouterr().err
    assert (
        main(["intervene", str(tmp_path / "imported"), "--policy", "nested", "--control", "-1"])
        == 2
    )


def test_intervention_sets_aside_the_series_that_already_uses_its_policy() -> None:
    from types import SimpleNamespace

    from itemscale.workflows import WorkflowError
    from itemscale.workflows._intervene import pick_axis

    def axis(model: str, series: str) -> Any:
        return SimpleNamespace(model=model, series=series, kind="binary", n_configs=3)

    axes = [axis("m", "linspace/cached"), axis("m", "nested/cached")]
    picked, note = pick_axis(axes, None, None, "runs/x", "nested")
    assert picked.series == "linspace/cached"
    assert note == (
        "intervening on series linspace/cached (series nested/cached already samples with "
        "nested; --series picks another)"
    )
    # the policy decides nothing when both series differ from it, or when --series is given
    with pytest.raises(WorkflowError, match="several budget axes"):
        pick_axis(axes, None, None, "runs/x", "phase-shift")
    picked, note = pick_axis(axes, None, "nested/cached", "runs/x", "nested")
    assert picked.series == "nested/cached" and note is None
    two_models = [*axes, axis("n", "linspace/cached")]
    with pytest.raises(WorkflowError, match="--model n --series linspace/cached"):
        pick_axis(two_models, None, None, "runs/x", "nested")


def test_intervene_is_a_library_call_that_prints_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from itemscale.workflows import WorkflowError

    with pytest.raises(WorkflowError, match="nope"):
        intervene(tmp_path / "nope", intervention="nested")
    with pytest.raises(ValidationError, match=r"intervention\n  Input should be 'nested' or"):
        intervene(tmp_path, intervention="sideways")
    with pytest.raises(TypeError, match=r"settings and keywords \(seed\)"):
        intervene(tmp_path, InterventionSettings(intervention="nested"), seed=2)
    assert capsys.readouterr() == ("", "")
