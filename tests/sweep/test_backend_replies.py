"""A backend's reply is checked at the boundary: a field of the wrong type makes that cell a
`model_error` naming the field (the sweep goes on, every other cell is stored); a NaN or
infinite probability, negative visual tokens, a NaN latency are stored as null and counted in a
sweep warning, and the store never holds non-standard JSON."""

from __future__ import annotations

import dataclasses
import json
import math
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from _support.sweep import PixelBackend, write_benchmark, write_protocol
from itemscale.collect.models import VideoRequest, VideoResponse
from itemscale.collect.protocol import ModelEntry, load_protocol
from itemscale.collect.sweep import run_sweep
from itemscale.core.responses import Status, read_run

NAN, INF = float("nan"), float("inf")

#: per item id: the fields a hostile backend puts on its otherwise good reply
HOSTILE: dict[str, dict[str, Any]] = {
    "v0-q0": {"answer": 7},
    "v0-q1": {"option_probs": {"A": NAN, "B": 0.2, "C": 0.1, "D": 0.1}},
    "v1-q0": {"option_probs": {"A": INF, "B": 0.0, "C": 0.0, "D": 0.0}, "visual_tokens": -5},
    "v1-q1": {"latency_s": NAN, "confidence": INF},
    "v2-q0": {"status": "great"},
    "v2-q1": {"raw_text": b"bytes"},
    "v3-q0": {"visual_tokens": 4.5},
    "v3-q1": {"option_probs": {"A": np.float32(0.5), "B": np.float64(0.5)}, "pixels": np.int64(12)},
}


class HostileBackend(PixelBackend):
    """The pixel backend whose replies carry `HOSTILE`'s fields at frames > 0."""

    def generate(self, requests: Sequence[VideoRequest]) -> list[VideoResponse]:
        out = []
        for request, response in zip(requests, super().generate(requests), strict=True):
            bad = HOSTILE.get(request.item.item_id, {}) if request.frames is not None else {}
            out.append(dataclasses.replace(response, **bad))
        return out


def _factory(entry: ModelEntry, device: str, batch_size: int) -> HostileBackend:
    return HostileBackend(name=entry.name)


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, Path]:
    root = tmp_path_factory.mktemp("hostile")
    suite = write_benchmark(root / "suite", 4)
    proto = write_protocol(root / "protocol.toml", suite, frames=(2,))
    result = run_sweep(load_protocol(proto), backend_factory=_factory, progress=False)
    df, _ = read_run(root / "run")
    return result, df, root / "run"


def test_wrong_types_are_model_errors_naming_the_field(swept: tuple[Any, Any, Path]) -> None:
    result, df, _ = swept
    at2 = df[df["frames"] == 2].set_index("item_id")
    assert len(df) == 16  # every cell stored: 8 items x (text-only, 2 frames)
    errors = {
        "v0-q0": "backend response field 'answer': expected a string or None, got int 7",
        "v2-q0": "backend response field 'status': expected one of",
        "v2-q1": "backend response field 'raw_text': expected a string or None, got bytes",
        "v3-q0": "backend response field 'visual_tokens': expected an integer or None, got float",
    }
    for item, message in errors.items():
        assert at2.loc[item, "status"] == Status.MODEL_ERROR.value
        assert message in at2.loc[item, "error"]
    assert result.by_status[Status.MODEL_ERROR.value] == 4


def test_impossible_values_are_nulled_and_counted(swept: tuple[Any, Any, Path]) -> None:
    result, df, _ = swept
    at2 = df[df["frames"] == 2].set_index("item_id")
    for item in ("v0-q1", "v1-q0", "v1-q1", "v3-q1"):
        assert at2.loc[item, "status"] in ("ok", "noanswer")
    assert at2["option_probs"].isna()["v0-q1"] and at2["confidence"].isna()["v0-q1"]
    assert at2["option_probs"].isna()["v1-q0"] and at2["visual_tokens"].isna()["v1-q0"]
    assert at2["latency_s"].isna()["v1-q1"]
    # the refused confidence is read from the option probabilities, as for any reply without one
    probs = json.loads(at2.loc["v1-q1", "option_probs"])
    assert at2.loc["v1-q1", "confidence"] == probs[at2.loc["v1-q1", "answer"]] == 0.7
    # numpy numbers are stored as plain ones
    assert json.loads(at2.loc["v3-q1", "option_probs"]) == {"A": 0.5, "B": 0.5}
    assert at2.loc["v3-q1", "pixels"] == 12
    (line,) = [w for w in result.warnings if "stored as null" in w]
    assert (
        "option_probs (a value not a probability in [0, 1]: NaN, infinite or out of range): 2"
        in line
    )
    assert "visual_tokens (below 0): 1" in line
    assert "latency_s (not finite and >= 0): 1" in line
    assert "confidence (not in [0, 1]): 1" in line
    run_json = json.loads((swept[2] / "run.json").read_text())
    assert line in json.dumps(run_json)


def test_the_store_holds_standard_json_only(swept: tuple[Any, Any, Path]) -> None:
    _, _, run = swept
    stores = list(run.glob("*.sqlite"))
    assert stores
    with sqlite3.connect(stores[0]) as db:
        texts = [t for (t,) in db.execute("SELECT option_probs FROM cells") if t is not None]
    assert texts
    for text in texts:
        for value in json.loads(text, parse_constant=lambda c: pytest.fail(c)).values():
            assert math.isfinite(value) and 0 <= value <= 1
