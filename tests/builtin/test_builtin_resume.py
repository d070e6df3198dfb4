"""The recipe's `--stop-at` / `--resume` (`python -m recipes.builtin_model`): a run split into
sessions ends with exactly the weights of the same run made in one go (weights, optimiser
moments and RNG states carried)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

import torch
from safetensors.torch import load_file

from _support.builtin_tiny import TINY
from itemscale.collect.synth import SuiteError, generate_suite
from recipes.builtin_model import TrainSettings, main, train_builtin
from recipes.builtin_model._checkpoint import CHECKPOINT_DIR

RECIPE = {
    "steps": 6,
    "frame_counts": (2, 4),
    "short_sides": (56,),
    "warmup_steps": 2,
    "threads": 1,
    "checkpoint_every": 0,
    "text_only_fraction": 0.2,
    "word_align_weight": 1.0,
    "teacher_until": 0.3,
    "teacher_anneal_until": 0.6,
    "mcqa_target": "option_text",
}


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("focus")
    generate_suite(root, n_videos=4, seed=1, layout="focus", duration_s=4.0, test_fraction=0.25)
    return root


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    return load_file(str(folder / "model.safetensors"))


def test_a_run_split_in_two_sessions_equals_the_run_in_one(suite: Path, tmp_path: Path) -> None:
    settings = TrainSettings(**RECIPE)  # type: ignore[arg-type]
    whole = train_builtin(suite, tmp_path / "whole", settings, TINY)
    first = train_builtin(suite, tmp_path / "split", settings, TINY, stop_at=3)
    assert first.steps_done == 3 and (tmp_path / "split" / CHECKPOINT_DIR).is_dir()
    second = train_builtin(
        suite, tmp_path / "split", settings, TINY, resume=tmp_path / "split" / CHECKPOINT_DIR
    )
    assert second.steps_done == whole.steps_done == 6
    a, b = _weights(tmp_path / "whole"), _weights(tmp_path / "split")
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert [r.loss for r in second.log] == [r.loss for r in whole.log]
    # a checkpoint of another recipe is refused, naming what differs
    other = TrainSettings(**{**RECIPE, "learning_rate": 1e-3})  # type: ignore[arg-type]
    with pytest.raises(SuiteError, match="learning_rate"):
        train_builtin(
            suite, tmp_path / "x", other, TINY, resume=tmp_path / "split" / CHECKPOINT_DIR
        )


def test_cli_resume_flag_errors(
    tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            [
                "--suite",
                str(suite),
                "--out",
                str(tmp_path / "o"),
                "--resume",
                str(tmp_path),
            ]
        )
        == 2
    )
    assert "not a training checkpoint" in capsys.readouterr().err
