"""The shipped built-in model: it is inside the package, small, loads through the same `hf`
backend as any user model (by the `builtin` name), and gives the answers recorded when it was
scored (CI does not retrain; this is how a test knows the weights are the scored ones)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from itemscale.collect.models import builtin_model_dir as model_dir
from itemscale.collect.models import load_backend
from itemscale.collect.protocol import ModelEntry
from recipes.builtin_model._config import BUILTIN_FORMAT_VERSION
from recipes.builtin_model._slice import (
    SLICE_FILE,
    read_slice,
    run_slice,
    slice_accuracy,
    slice_suite,
)

SHIPPED = model_dir()
MAX_BYTES = 20 * 1024 * 1024


def test_shipped_folder_is_complete_and_small() -> None:
    for name in (
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "processor_config.json",
        "chat_template.jinja",
        "builtin_meta.json",
        SLICE_FILE,
    ):
        assert (SHIPPED / name).is_file(), name
    total = sum(p.stat().st_size for p in SHIPPED.rglob("*") if p.is_file())
    assert total <= MAX_BYTES, f"{total / 1e6:.1f} MB shipped"
    meta = json.loads((SHIPPED / "builtin_meta.json").read_text())
    assert meta["builtin_format_version"] == BUILTIN_FORMAT_VERSION
    assert meta["steps_done"] == meta["train_settings"]["steps"]
    config = json.loads((SHIPPED / "config.json").read_text())
    assert config["model_type"] == "qwen2_5_vl"
    assert config["architectures"] == ["Qwen2_5_VLForConditionalGeneration"]


@pytest.mark.slow
def test_shipped_weights_reproduce_the_reference_slice(tmp_path: Path) -> None:
    expected = read_slice(SHIPPED / SLICE_FILE)
    backend = load_backend(
        ModelEntry(name="builtin", backend="builtin", model="builtin", dtype="float32"),
        batch_size=12,
    )
    assert backend.spec.backend == "builtin"
    answers = run_slice(backend, slice_suite(tmp_path / "slice"))
    recorded = {(a["item_id"], a["budget"]): a for a in expected["answers"]}
    assert {(a.item_id, a.budget) for a in answers} == set(recorded)
    for got in answers:
        want = recorded[(got.item_id, got.budget)]
        if got.option_probs is not None:
            assert want["option_probs"] is not None
            for letter, p in want["option_probs"].items():
                assert got.option_probs[letter] == pytest.approx(p, abs=2e-3), got.item_id
            top = sorted(want["option_probs"].values())[-2:]
            if top[1] - top[0] > 0.01:  # a near-tie may flip on another CPU; a clear win may not
                assert got.answer == want["answer"], got.item_id
        else:
            assert got.raw_text == want["raw_text"], got.item_id
    for label, accuracy in expected["mcqa_accuracy"].items():
        assert math.isclose(slice_accuracy(answers, label), accuracy, abs_tol=0.051), label
