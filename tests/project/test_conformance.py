"""`itemscale.workflows.testing`: itemscale's own backends, importers and measures pass the conformance
checks a plugin's author runs, and a broken toy of each kind fails them with a message naming
every problem, so the checks can fail."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import BaseModel

from itemscale.analysis.measures import MEASURES, BlockData, ItemShare
from itemscale.collect.importers import IMPORTERS, Importer, ImportOption
from itemscale.collect.models import (
    BACKENDS,
    Backend,
    BackendSpec,
    BaseVideoLM,
    LoadSettings,
    ModelEntryLike,
    VideoLM,
    VideoRequest,
    VideoResponse,
)
from itemscale.core.responses import Status
from itemscale.workflows.testing import (
    ConformanceError,
    check_backend,
    check_importer,
    check_measure,
)


@pytest.mark.parametrize("name", list(MEASURES))
def test_every_built_in_measure_passes(name: str) -> None:
    check_measure(name)


@pytest.mark.parametrize("kind", list(IMPORTERS))
def test_every_built_in_importer_passes_without_files(kind: str) -> None:
    check_importer(kind)


def test_the_table_importer_passes_on_a_table(tmp_path: Path) -> None:
    rows = ["model,item_id,video_id,config,frames,correct"]
    rows += [f"m,i{n},v{n // 2},{f}f,{f},{(n + f) % 3 == 0:d}" for n in range(6) for f in (8, 16)]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    check_importer("table", files=[path])


@pytest.mark.parametrize("name", ["hf", "openai"])
def test_the_served_and_checkpoint_backends_pass_without_loading(name: str) -> None:
    check_backend(name)


def test_the_shipped_model_passes_loaded() -> None:
    assert "builtin" in BACKENDS
    check_backend("builtin", model="builtin", dtype="float32")


# -- broken toys ------------------------------------------------------------------------------


def _wrong_shape(data: BlockData) -> np.ndarray:
    return data.y[:1, 0]  # one item's value, not one per item


def test_a_broken_measure_fails_naming_its_problems() -> None:
    broken = ItemShare(key="First Rate", kinds=("binary",), indicator=_wrong_shape)
    with pytest.raises(ConformanceError) as caught:
        check_measure(broken)
    assert caught.value.failures == (
        "key 'First Rate' is not lower-case letters, digits and '_' (a JSON key of a block)",
    )
    renamed = ItemShare(key="first_rate", kinds=("binary",), indicator=_wrong_shape)
    with pytest.raises(ConformanceError, match="measure 'first_rate' fails 1 conformance check"):
        check_measure(renamed)
    assert "first_rate" not in {m.key for m in MEASURES.values()}  # registered for the check only


class _AnyOptions(BaseModel):  # no extra="forbid": a misspelt option would pass unnoticed
    pass


class _Short(BaseVideoLM):
    @property
    def spec(self) -> BackendSpec:
        return BackendSpec(backend="short", name="elsewhere", model="x")

    def generate(self, requests: Sequence[VideoRequest]) -> list[VideoResponse]:
        return [
            VideoResponse(
                raw_text="Z",
                answer="Z",
                option_probs=None,
                confidence=None,
                visual_tokens=None,
                latency_s=0.0,
                status=Status.OK,
            )
            for _ in requests[:2]
        ]


def _load_short(entry: ModelEntryLike, settings: LoadSettings) -> VideoLM:
    return _Short()


def test_a_broken_backend_fails_naming_its_problems() -> None:
    broken = Backend(parse_options=lambda options, name: _AnyOptions(**options), load=_load_short)
    with pytest.raises(ConformanceError) as caught:
        check_backend(broken, name="short", model="x")
    failures = caught.value.failures
    assert len(failures) == 3, failures
    assert "parse_options accepts the unknown option" in failures[0]
    assert failures[1] == "spec.name is 'elsewhere', not the entry's"
    assert failures[2].startswith("generate returned list of 2 for 3 requests")
    assert str(caught.value).startswith("backend 'short' fails 3 conformance checks:\n  - ")


def _run_broken(*, files: Sequence[str], run_dir: Any, dry_run: bool) -> Any:
    raise KeyError("column")  # a parser's bug, not an ImportInputError naming the file


def test_a_broken_importer_fails_naming_its_problems() -> None:
    broken = Importer(
        run=_run_broken,
        help="broken",
        description="",
        options=(ImportOption(("files",), nargs="+"), ImportOption(("--model",))),
    )
    with pytest.raises(ConformanceError) as caught:
        check_importer(broken, name="broken")
    assert caught.value.failures == (
        "description is empty",
        "run takes no keyword model, which the command line passes",
        "a file it cannot read raised KeyError ('column'), not an ImportInputError naming the file",
    )


@pytest.mark.parametrize(
    ("check", "kind"),
    [
        (check_backend, "itemscale.collect.models.Backend"),
        (check_importer, "itemscale.collect.importers.Importer"),
        (check_measure, "itemscale.analysis.measures.Measure"),
    ],
)
def test_something_of_another_type_is_one_failure(check: Any, kind: str) -> None:
    with pytest.raises(ConformanceError) as caught:
        check({"not": "a plugin"})
    assert caught.value.failures == (f"is a dict, not an {kind}",)
