"""Training the built-in model left the installed package for the recipe `recipes/builtin_model/`
(docs/builtin-model.md, "How it was trained"): `itemscale train-builtin` and the module path
`itemscale.builtin` say where it went, and the recipe keeps the command's path rules (an --out
never replaces a run's data, a --recipe that is a FIFO stops at once: docs/run-folders.md)."""

from __future__ import annotations

import hashlib
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _support.paths import REPO
from _support.runs import make_irt_run
from itemscale.cli import main as itemscale_main
from recipes.builtin_model import main as recipe_main

RULE = "no output replaces a run's data or records"


def _digests(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir() if p.is_file()
    }


def test_train_builtin_prints_the_recipe_s_command_with_its_arguments_and_trains_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "suite").mkdir()
    out = tmp_path / "my model"
    argv = ["--suite", str(tmp_path / "suite"), "--out", str(out), "--seed", "3"]
    assert itemscale_main(["train-builtin", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("itemscale train-builtin: error: training the built-in model is not")
    assert err.rstrip().endswith(
        f"from the checkout's root run: python -m recipes.builtin_model --suite "
        f"{tmp_path / 'suite'} --out '{out}' --seed 3"
    ), err
    assert not out.exists()
    assert itemscale_main(["train-builtin", "--help"]) == 0
    printed = capsys.readouterr()
    assert "recipes/builtin_model/" in printed.out and "python -m recipes.builtin_model --help" in (
        printed.out
    )
    assert not printed.err


def test_the_old_module_path_says_where_the_training_went() -> None:
    for old in ("itemscale.builtin", "itemscale.builtin._train"):
        with pytest.raises(
            ModuleNotFoundError, match=r"itemscale\.builtin: .*recipes/builtin_model/"
        ):
            importlib.import_module(old)


def test_the_recipe_s_out_never_replaces_a_run_s_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, suite = tmp_path / "R", tmp_path / "suite"
    make_irt_run(run)
    suite.mkdir()
    before = _digests(run)
    for target in ("responses.parquet", "run.json"):
        assert recipe_main(["--suite", str(suite), "--out", str(run / target)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("python -m recipes.builtin_model: error: --out ")
        assert RULE in err and f"{run}'s own {target}" in err, err
    # the recipe swaps its whole --out folder in: a run folder itself is refused too
    assert recipe_main(["--suite", str(suite), "--out", str(run)]) == 2
    assert "is a run folder" in capsys.readouterr().err
    assert _digests(run) == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_the_recipe_refuses_a_fifo_as_its_recipe_file_at_once(tmp_path: Path) -> None:
    """Run as the docs run it (`python -m recipes.builtin_model` from the root), in a child, so
    that a read that blocks fails the test instead of hanging it."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (tmp_path / "suite").mkdir()
    argv = ["--suite", str(tmp_path / "suite"), "--out", str(tmp_path / "m"), "--recipe", str(fifo)]
    done = subprocess.run(
        [sys.executable, "-m", "recipes.builtin_model", *argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 2, done.stderr
    assert f"error: --recipe {fifo}: not a regular file" in done.stderr, done.stderr
    assert not (tmp_path / "m").exists()
