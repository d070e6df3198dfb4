"""One scoring rule per model folder: `hf` on a folder whose builtin_meta.json asks for option
likelihood uses it, as `builtin` does; the rule is stated at the start, recorded per cell and in
run.json, and a resume says when earlier cells were scored by another rule."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from _support.sweep import write_benchmark, write_protocol
from itemscale.collect.models import builtin_model_dir, scoring_rule_of
from itemscale.collect.protocol import ModelEntry, load_protocol
from itemscale.collect.store import open_store
from itemscale.collect.sweep import run_sweep
from itemscale.core.responses import read_run


def test_hf_and_builtin_on_the_builtin_folder_answer_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_benchmark(tmp_path / "suite", 2, per_video=1)
    models = [
        {"name": "builtin", "backend": "builtin", "model": "builtin", "dtype": "float32"},
        {"name": "hf", "backend": "hf", "model": str(builtin_model_dir()), "dtype": "float32"},
    ]
    proto = write_protocol(tmp_path / "p.toml", suite, frames=(2,), models=models)
    run_sweep(load_protocol(proto), progress=False)
    err = capsys.readouterr().err
    meta = builtin_model_dir() / "builtin_meta.json"
    assert f"model 'hf': multiple choice scored by likelihood ({meta} asks for it" in err
    df, run = read_run(tmp_path / "run")
    mcqa = df[df["task_kind"] == "mcqa"]
    assert set(mcqa["scoring_rule"]) == {"likelihood"}
    by_model = mcqa.pivot_table(
        index=["item_id", "config_label"], columns="model", values="answer", aggfunc="first"
    )
    assert len(by_model) == 4  # 2 items at 2 frames and text-only
    assert (by_model["hf"] == by_model["builtin"]).all()
    assert run["sweep"]["scoring_rules"]["hf"]["rule"] == "likelihood"
    assert run["sweep"]["scoring_rules"]["builtin"]["rule"] == "likelihood"


def test_the_rule_comes_from_the_options_the_folder_or_the_default(tmp_path: Path) -> None:
    folder = tmp_path / "ckpt"
    folder.mkdir()
    assert scoring_rule_of(ModelEntry(name="m", backend="hf", model=str(folder)))[0] == "letter"
    shutil.copy(builtin_model_dir() / "builtin_meta.json", folder / "builtin_meta.json")
    rule, why = scoring_rule_of(ModelEntry(name="m", backend="hf", model=str(folder)))
    assert rule == "likelihood" and "builtin_meta.json asks for it" in why
    entry = ModelEntry(
        name="m", backend="hf", model=str(folder), options={"mcqa_scoring": "letter"}
    )
    assert scoring_rule_of(entry) == ("letter", "the protocol's options set mcqa_scoring")
    served = ModelEntry(name="s", backend="openai", model="m")
    assert scoring_rule_of(served)[0] == "letter"


def test_a_resume_says_that_letter_scored_cells_are_not_reused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run whose `hf` cells on the built-in folder were scored by letter (as before this
    release, or with the option set) runs them again under likelihood, and says so."""
    suite = write_benchmark(tmp_path / "suite", 1, per_video=1)
    entry = {"name": "hf", "backend": "hf", "model": str(builtin_model_dir()), "dtype": "float32"}
    letter = {**entry, "options": {"mcqa_scoring": "letter"}}
    proto = write_protocol(tmp_path / "p.toml", suite, frames=(2,), models=[letter])
    first = run_sweep(load_protocol(proto), progress=False)
    assert first.ran == 2  # one item at 2 frames and text-only
    proto = write_protocol(tmp_path / "p.toml", suite, frames=(2,), models=[entry])
    capsys.readouterr()
    again = run_sweep(load_protocol(proto), progress=False)
    assert again.ran == 2 and again.skipped == 0
    (warning,) = [w for w in again.warnings if "scored by letter" in w]
    assert "stay in the store, are not reused, and run again under this rule" in warning
    assert warning in capsys.readouterr().err
    with open_store(tmp_path / "run") as store:
        rules = store.cells_frame().groupby("scoring_rule")["cell_id"].count().to_dict()
    assert rules == {"letter": 2, "likelihood": 2}
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert warning in run["sweep"]["warnings"]
