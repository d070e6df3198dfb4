"""`sweep --rerun-check FRACTION`: a seeded sample of finished cells run again after the grid, in
a shuffled order and at another batch size, stored as reruns (`rerun_of`) that measure the run's
rerun floor, recorded per session in run.json and printed by `analyze`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from _support.sweep import PixelBackend, write_benchmark, write_protocol
from itemscale.cli import main
from itemscale.collect.models import VideoRequest, VideoResponse
from itemscale.collect.protocol import ModelEntry, load_protocol
from itemscale.collect.sweep import RerunCheck, run_sweep
from itemscale.core.responses import RERUN_REPEAT_BASE, read_run

#: the number of requests of every model call, in order (the factory's backends append)
CALLS: list[int] = []


class SizedPixelBackend(PixelBackend):
    """The pixel backend, noting each call's size."""

    def generate(self, requests: Sequence[VideoRequest]) -> list[VideoResponse]:
        CALLS.append(len(requests))
        return super().generate(requests)


def sized_factory(entry: ModelEntry, device: str, batch_size: int) -> PixelBackend:
    return SizedPixelBackend(str(entry.options["log"]), name=entry.name)


def _protocol(tmp_path: Path) -> Path:
    suite = write_benchmark(tmp_path / "suite", 10)
    log = tmp_path / "calls.jsonl"
    return write_protocol(
        tmp_path / "p.toml",
        suite,
        frames=(2, 4, 8),
        output=tmp_path / "run",
        models=[
            {"name": "pixel", "backend": "hf", "model": "pixel-test", "options": {"log": str(log)}}
        ],
        extra="text_only = false",
    )


def test_a_seeded_sample_is_run_again_as_reruns(tmp_path: Path) -> None:
    proto = load_protocol(_protocol(tmp_path))
    CALLS.clear()
    check = RerunCheck(0.2, seed=5)
    result = run_sweep(proto, backend_factory=sized_factory, progress=False, rerun_check=check)
    # 10 videos x 2 items x 3 budgets = 60 cells, each run once at batch size 1
    assert result.planned == 60 and result.ran == 60 + 12
    assert CALLS[:60] == [1] * 60
    assert sum(CALLS[60:]) == 12 and max(CALLS[60:]) > 1  # the reruns at batch size 8
    table, provenance = read_run(tmp_path / "run")
    reruns = table[table["rerun_of"].notna()]
    assert len(reruns) == 12 and set(reruns["repeat"]) == {RERUN_REPEAT_BASE}
    assert set(reruns["rerun_of"]) == {0}
    # the sample is the seeded one, drawn from the model's finished cells in planned order
    ordinary = table[table["rerun_of"].isna()]
    assert len(ordinary) == 60
    # each rerun sent the frames its cell sent, and (a deterministic model) the same answer
    merged = reruns.merge(ordinary, on=["item_id", "config_id"], suffixes=("", "_first"))
    assert len(merged) == 12
    assert [list(a) for a in merged["frame_indices"]] == [
        list(b) for b in merged["frame_indices_first"]
    ]
    assert (merged["answer"] == merged["answer_first"]).all()
    (session,) = provenance["sessions"]  # type: ignore[misc]
    record = session["rerun_check"]["pixel"]
    assert (record["cells_finished"], record["cells_sampled"], record["cells_run"]) == (60, 12, 12)
    assert (record["answers"], record["moved"], record["batch_size"]) == (12, 0, 8)
    assert record["floor"].startswith(
        "measured, 0 of 12 answers moved between the run's cells and their reruns"
    )
    assert result.rerun_checks["pixel"] == record
    # a resumed sweep draws the same sample and runs none of it again
    CALLS.clear()
    again = run_sweep(proto, backend_factory=sized_factory, progress=False, rerun_check=check)
    assert again.ran == 0 and CALLS == []
    assert again.rerun_checks["pixel"]["cells_run"] == 0
    assert again.rerun_checks["pixel"]["answers"] == 12
    assert len(read_run(tmp_path / "run")[0]) == 72


def test_the_sample_and_its_order_follow_the_seed() -> None:
    check = RerunCheck(0.25, seed=3)
    cells: list[Any] = list(range(40))
    chosen = check.sample(cells)
    expected = np.random.default_rng(3).choice(40, size=10, replace=False).tolist()
    assert chosen == expected and chosen != sorted(chosen)
    assert RerunCheck(0.01).sample(cells[:5]) == RerunCheck(0.01).sample(cells[:5])
    assert len(RerunCheck(0.01).sample(cells[:5])) == 1  # at least one cell
    assert RerunCheck(0.5).size_for(1, auto=False) == 8
    assert RerunCheck(0.5).size_for(8, auto=False) == 1
    assert RerunCheck(0.5).size_for(8, auto=True) == 1
    assert RerunCheck(0.5, batch_size=4).size_for(1, auto=False) == 4
    for bad in ({"fraction": 0.0}, {"fraction": 1.5}, {"fraction": 0.2, "seed": -1}):
        with pytest.raises(ValueError):
            RerunCheck(**bad)


def test_a_rerun_draws_the_frames_of_the_cell_it_repeats() -> None:
    from itemscale.collect.items import Item
    from itemscale.collect.protocol import Configuration, SamplingPolicy
    from itemscale.collect.sweep._execute import _pass_key
    from itemscale.collect.sweep._plan import Cell, PlannedConfig

    item = Item(item_id="q", video_id="v", question="?", options=("a", "b"), answer="A")
    config = Configuration(frames=4, sampling=SamplingPolicy(name="random"))
    cell = Cell("c", "m", "s", item, PlannedConfig(config, "default"), repeat=2, seed=2)
    import dataclasses

    rerun = dataclasses.replace(cell, cell_id="r", repeat=RERUN_REPEAT_BASE + 2, rerun_of=2)
    assert _pass_key(rerun) == _pass_key(cell) == ("q", 2)


def test_flags_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    proto = _protocol(tmp_path)
    for argv, message in (
        (["--rerun-check", "0"], "--rerun-check: rerun check fraction 0.0: give a share in (0, 1]"),
        (["--rerun-batch-size", "4"], "--rerun-batch-size needs --rerun-check FRACTION"),
        (
            ["--rerun-check", "0.2", "--executor", "ray"],
            "--rerun-check runs on the local executor",
        ),
    ):
        assert main(["sweep", str(proto), *argv]) == 2
        assert message in capsys.readouterr().err
    with pytest.raises(ValueError, match="local executor"):
        run_sweep(load_protocol(proto), executor="ray", rerun_check=RerunCheck(0.2))


@pytest.mark.slow
def test_the_built_in_model_measures_its_floor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Done when: `sweep P --rerun-check 0.2` on a small synthetic suite with the built-in model
    records a measured floor in run.json; `analyze RUN` prints `rerun floor: measured, k of n`."""
    suite = tmp_path / "suite"
    argv = ["synth", "--out", str(suite), "--n", "4", "--seed", "3", "--layout", "focus"]
    assert main([*argv, "--test-fraction", "1.0", "--duration", "6"]) == 0
    run = tmp_path / "run"
    proto = tmp_path / "p.toml"
    proto.write_text(
        "\n".join(
            [
                "version = 1",
                f"output = {json.dumps(str(run))}",
                "text_only = false",
                "[[models]]",
                'name = "builtin"',
                'backend = "builtin"',
                'model = "builtin"',
                "[benchmark]",
                'kind = "synthetic"',
                f"path = {json.dumps(str(suite))}",
                'split = "test"',
                "[grid]",
                "frames = [4, 8]",
                "short_side = [56]",
                "[decoding]",
                "max_new_tokens = 24",
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    assert main(["sweep", str(proto), "--rerun-check", "0.2", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert (
        "rerun check, model builtin: 3 of 16 finished cells run again (3 this time) at batch size 8"
        in printed
    )
    record = json.loads((run / "run.json").read_text())["sessions"][-1]["rerun_check"]["builtin"]
    assert record["answers"] == 3 and record["moved"] is not None
    assert record["floor"].startswith(f"measured, {record['moved']} of 3 answers moved")
    assert main(["analyze", str(run), "--bootstrap", "0"]) == 0
    out = capsys.readouterr().out
    assert (
        f"  rerun floor: measured, {record['moved']} of 3 answers moved between the run's cells"
        in out
    )
