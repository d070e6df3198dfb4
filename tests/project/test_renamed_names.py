"""Names retired by issue 27 ("one name per concept", docs/glossary.md) still work for one
release: each resolves to what its new name is, with a DeprecationWarning that names it."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

#: (module, retired name, its one name now)
RENAMED_MODULE_NAMES = [
    ("itemscale.core.responses", "normalize_answer", "normalise_answer"),
    ("itemscale.collect.protocol", "POLICY_NAMES", "SAMPLING_POLICY_NAMES"),
    ("itemscale.collect.protocol", "PolicyName", "SamplingPolicyName"),
    ("itemscale.collect.protocol", "PHASED_POLICIES", "PHASED_SAMPLING_POLICIES"),
    ("itemscale.analysis.policies", "POLICY_NAMES", "STOPPING_RULE_NAMES"),
    ("itemscale.analysis.policies", "POLICY_DESCRIPTIONS", "STOPPING_RULE_DESCRIPTIONS"),
    ("itemscale.analysis.policies", "run_policies", "run_stopping_rules"),
    ("itemscale.analysis.policies", "Statistic", "Estimate"),
    ("itemscale.analysis.policies", "Record", "ReportRecord"),
]


@pytest.mark.parametrize(("module", "old", "new"), RENAMED_MODULE_NAMES)
def test_a_retired_module_name_warns_and_is_the_new_one(module: str, old: str, new: str) -> None:
    face = importlib.import_module(module)
    with pytest.deprecated_call(match=rf"{module}\.{old} is deprecated: use {module}\.{new}"):
        value = getattr(face, old)
    assert value is getattr(face, new)
    assert old not in face.__all__ and new in face.__all__


def test_a_retired_keyword_warns_and_means_the_new_one() -> None:
    from itemscale.analysis.policies import intervention_configuration
    from itemscale.collect.protocol import Configuration

    terminal = Configuration(frames=8)
    now = intervention_configuration(terminal, intervention="phase-shift")
    with pytest.deprecated_call(
        match=r"intervention_configuration\(policy=\.\.\.\) is deprecated: use "
        r"intervention_configuration\(intervention=\.\.\.\)"
    ):
        before = intervention_configuration(terminal, policy="phase-shift")  # type: ignore[call-arg]
    assert before == now
    with pytest.raises(TypeError, match="got both policy= and intervention="):
        intervention_configuration(terminal, policy="nested", intervention="nested")  # type: ignore[call-arg]


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    face = importlib.import_module("itemscale.core.responses")
    with pytest.raises(AttributeError, match="has no attribute 'normalise_answers'"):
        face.normalise_answers  # noqa: B018


def test_the_pixel_array_is_array_and_frames_still_reads_it() -> None:
    import numpy as np

    from itemscale.collect.items import Item
    from itemscale.collect.models import Frames, VideoRequest
    from itemscale.collect.video import FrameSet

    pixels = np.zeros((2, 4, 4, 3), dtype=np.uint8)
    plain = Frames(pixels, (0, 5), (0.0, 0.5))
    served = FrameSet(pixels, np.array([0, 5]), np.array([0.0, 0.5]), 4, 4, effective_frames=2)
    for frame_set, name in ((plain, "Frames"), (served, "FrameSet")):
        with pytest.deprecated_call(match=rf"{name}\.frames is deprecated: use {name}\.array"):
            assert frame_set.frames is pixels

    class Legacy:  # a frame set written against FramesLike before issue 27
        frames = pixels
        indices = (0, 5)
        timestamps = (0.0, 0.5)

    item = Item(item_id="q", video_id="v", question="?", options=("a", "b"))
    with pytest.deprecated_call(match=r"Legacy\.frames is deprecated"):
        request = VideoRequest(item, Legacy())  # type: ignore[arg-type]
    assert request.frames is not None and request.frames.array is pixels
    assert tuple(request.frames.indices) == (0, 5)


def test_a_frame_set_argument_is_frame_set() -> None:
    """The public helpers that take a frame set name it `frame_set`; `frames=` (the frame
    count's name elsewhere) still works for one release, warned."""
    import numpy as np

    from itemscale.collect.models import Frames, source_fps, video_metadata

    frame_set = Frames(np.zeros((2, 4, 6, 3), dtype=np.uint8), (0, 10), (0.0, 0.5))
    assert source_fps(frame_set=frame_set) == 20.0
    for helper in (source_fps, video_metadata):
        name = helper.__name__
        with pytest.deprecated_call(match=rf"{name}\(frames=\.\.\.\) is deprecated: use"):
            assert helper(frames=frame_set) == helper(frame_set)  # type: ignore[call-arg]


def test_num_workers_is_the_retired_keyword_of_workers() -> None:
    """`run_sweep` counts its Ray actors per model in `workers`, as `--workers` and
    `AnalysisSettings.workers` do; `num_workers=` still reaches it for one release, warned."""
    import inspect

    from itemscale.collect.sweep import run_sweep

    assert "workers" in inspect.signature(run_sweep).parameters
    assert "num_workers" not in inspect.signature(run_sweep).parameters
    with pytest.raises(TypeError, match="got both num_workers= and workers="):
        run_sweep(None, num_workers=1, workers=1)  # type: ignore[arg-type, call-arg]
    with (
        pytest.deprecated_call(match=r"run_sweep\(num_workers=\.\.\.\) is deprecated"),
        pytest.raises(AttributeError),  # reached run_sweep, which reads the (absent) protocol
    ):
        run_sweep(None, num_workers=1)  # type: ignore[arg-type, call-arg]


def test_the_videos_length_is_video_frames(tmp_path: Path) -> None:
    from _support.sweep import make_video
    from itemscale.collect.video import probe_video

    info = probe_video(make_video(tmp_path / "v.mp4", n_frames=6))
    assert info.video_frames == 6
    with pytest.deprecated_call(match=r"VideoInfo\.n_frames is deprecated"):
        assert info.n_frames == 6


def test_the_glossary_table_lists_every_retired_module_name() -> None:
    from _support.paths import REPO

    page = (REPO / "docs" / "glossary.md").read_text(encoding="utf-8")
    table = page[page.index("## One name per concept") :]
    missing = [f"{old} -> {new}" for _, old, new in RENAMED_MODULE_NAMES if old not in table]
    missing += [f"{old} -> {new}" for _, old, new in RENAMED_MODULE_NAMES if new not in table]
    assert not missing, f"docs/glossary.md, 'One name per concept', does not list {missing}"


def test_retired_names_go_at_their_stated_release() -> None:
    """Each shim says it is removed in RENAMED_REMOVED_IN: a release at or past it with shims
    still in place would break that promise (remove them, then this test and the table)."""
    import itemscale
    from itemscale.core.errors import RENAMED_REMOVED_IN

    def version(text: str) -> tuple[int, ...]:
        return tuple(int(part) for part in text.split(".")[:3])

    assert version(itemscale.__version__) < version(RENAMED_REMOVED_IN), (
        f"itemscale {itemscale.__version__} still has the names retired for {RENAMED_REMOVED_IN}"
    )
    with pytest.deprecated_call(match=rf"removed in itemscale {RENAMED_REMOVED_IN}"):
        importlib.import_module("itemscale.core.responses").normalize_answer  # noqa: B018


def test_intervene_policy_is_the_retired_flag_of_intervention(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--policy` still selects the intervention, with a note naming `--intervention`; the
    new flag gives none, and one of the two is required."""
    from itemscale.cli import main

    missing = str(tmp_path / "nope")
    assert main(["intervene", missing, "--intervention", "nested"]) == 2
    assert "deprecated" not in capsys.readouterr().err
    assert main(["intervene", missing, "--policy", "nested"]) == 2
    err = capsys.readouterr().err
    assert "--policy is deprecated: use --intervention (removed in itemscale 0.2.0" in err
    assert "nope" in err  # the same run as with --intervention: the missing folder is named
    with pytest.raises(SystemExit) as stopped:
        main(["intervene", missing])
    assert stopped.value.code == 2
    assert "--intervention is required" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["intervene", missing, "--intervention", "nested", "--policy", "nested"])


def test_n_boot_is_the_retired_name_of_bootstrap() -> None:
    """`bootstrap` is the resample count's one name; `n_boot` as a keyword or an attribute
    warns; files are written with the key `bootstrap`, and `n_boot`, the key files of the older
    schema versions hold, is read back without a warning."""
    import warnings

    import numpy as np
    from pydantic import ValidationError

    from itemscale.analysis.measures import AnalysisSettings, BootstrapSettings, VideoBootstrap
    from itemscale.analysis.policies import CascadeSettings, InterventionSettings
    from itemscale.core.errors import STORED

    for cls, extra in (
        (AnalysisSettings, {}),
        (CascadeSettings, {}),
        (InterventionSettings, {"intervention": "nested"}),
    ):
        name = cls.__name__
        with pytest.deprecated_call(
            match=rf"{name}\(n_boot=\.\.\.\) is deprecated: use {name}\(bootstrap=\.\.\.\)"
        ):
            old = cls(n_boot=7, **extra)
        assert old == cls(bootstrap=7, **extra)
    with pytest.raises(ValidationError, match="got both n_boot and bootstrap"):
        CascadeSettings(n_boot=1, bootstrap=2)  # type: ignore[call-arg]
    with pytest.deprecated_call(match=r"CascadeSettings\.n_boot is deprecated"):
        assert CascadeSettings(bootstrap=3).n_boot == 3
    boot = VideoBootstrap(np.array(["a", "b"], dtype=object), 4, 0)
    with pytest.deprecated_call(match=r"VideoBootstrap\.n_boot is deprecated"):
        assert boot.n_boot == boot.bootstrap == 4

    dumped = CascadeSettings(bootstrap=5).model_dump(mode="json")
    assert dumped["bootstrap"] == 5 and "n_boot" not in dumped  # cascade.json's key, schema 4
    record = BootstrapSettings(bootstrap=3, seed=0, unit="video", ci_level=0.95, interval="bca")
    written = record.model_dump(mode="json")
    assert written["bootstrap"] == 3 and "n_boot" not in written  # measures.json's, schema 3
    # a file of the older schema versions holds n_boot: read without a warning
    dumped = {"n_boot" if k == "bootstrap" else k: v for k, v in dumped.items()}
    stored = {"n_boot" if k == "bootstrap" else k: v for k, v in written.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert CascadeSettings.model_validate(dumped, context=STORED).bootstrap == 5
        assert BootstrapSettings.model_validate(stored, context=STORED) == record


def test_every_record_of_the_bootstrap_count_takes_n_boot_one_way() -> None:
    """The analysis's, the intervention's and the comparison's records of the video bootstrap
    are one record (`BootstrapRecord`: count and seed) with their layouts' extra keys, and share
    its one check of the retired `n_boot`: warned from code, read silently from a stored file."""
    import warnings

    from itemscale.analysis.comparison import BootstrapInfo
    from itemscale.analysis.measures import AnalysisSettings, BootstrapRecord, BootstrapSettings
    from itemscale.analysis.policies import InterventionResult
    from itemscale.core.errors import STORED

    assert InterventionResult.model_fields["bootstrap"].annotation is BootstrapRecord
    assert issubclass(BootstrapSettings, BootstrapRecord)
    info = BootstrapInfo(bootstrap=3, seed=1, method="bca")
    assert isinstance(info, BootstrapRecord)
    with pytest.deprecated_call(match=r"BootstrapInfo\(n_boot=\.\.\.\) is deprecated"):
        assert BootstrapInfo(n_boot=3, seed=1, method="bca") == info  # type: ignore[call-arg]
    with pytest.deprecated_call(match=r"BootstrapInfo\.n_boot is deprecated"):
        assert info.n_boot == 3
    with pytest.deprecated_call(match=r"AnalysisSettings\.n_boot is deprecated"):
        assert AnalysisSettings(bootstrap=4).n_boot == 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stored = {"n_boot": 3, "seed": 1, "method": "bca"}
        assert BootstrapInfo.model_validate(stored, context=STORED) == info
        assert info.model_dump(mode="json") == {"bootstrap": 3, "seed": 1, "method": "bca"}


def test_frames_used_is_the_retired_name_of_effective_frames() -> None:
    """A backend's `VideoResponse` records the frames the model was given as `effective_frames`,
    the response table's column; a backend written with `frames_used` keeps working, warned."""
    import dataclasses

    from itemscale.collect.models import VideoResponse
    from itemscale.core.responses import Status

    fields = {
        "raw_text": "A",
        "answer": "A",
        "option_probs": None,
        "confidence": None,
        "visual_tokens": 12,
        "latency_s": 0.1,
        "status": Status.OK,
    }
    new = VideoResponse(**fields, effective_frames=4)
    assert "frames_used" not in {f.name for f in dataclasses.fields(VideoResponse)}
    with pytest.deprecated_call(
        match=r"VideoResponse\(frames_used=\.\.\.\) is deprecated: use "
        r"VideoResponse\(effective_frames=\.\.\.\)"
    ):
        old = VideoResponse(**fields, frames_used=4)  # type: ignore[call-arg]
    assert old == new
    with pytest.deprecated_call(match=r"VideoResponse\.frames_used is deprecated"):
        assert new.frames_used == 4
    with pytest.raises(TypeError, match="both frames_used= and effective_frames="):
        VideoResponse(**fields, frames_used=4, effective_frames=4)  # type: ignore[call-arg]
    assert dataclasses.replace(new, effective_frames=2).effective_frames == 2


def test_the_retired_default_floor_warns_and_says_why() -> None:
    """`itemscale.analysis.measures.DEFAULT_RERUN_FLOOR` (issue: same-input verdicts from evidence) works
    for one more release as the value it was, warning that a floor is measured or stated and
    that the default came from the selector runs it judged; nothing in the package uses it."""
    import itemscale.analysis.measures as measures

    with pytest.deprecated_call(
        match=r"itemscale\.analysis\.measures\.DEFAULT_RERUN_FLOOR is deprecated: use a measured or "
        r"stated floor .* the default was taken from the selector runs it judged"
    ):
        floor = measures.DEFAULT_RERUN_FLOOR
    assert floor.rate == pytest.approx(7 / 2700) and not floor.measured and not floor.stated
    assert "DEFAULT_RERUN_FLOOR" not in measures.__all__
    # passed explicitly it is a floor like any other, with its source said
    assert measures.grade_answers(5, 2700, floor) == "rerun"
    assert "taken from the selector runs it judged" in floor.source


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("itemscale.measures", "itemscale.analysis.measures"),
        ("itemscale.responses", "itemscale.core.responses"),
        ("itemscale.errors", "itemscale.core.errors"),
        ("itemscale.models", "itemscale.collect.models"),
        ("itemscale.artifact", "itemscale.report"),
        ("itemscale.testing", "itemscale.workflows.testing"),
        ("itemscale.policies._cascade", "itemscale.analysis.policies._cascade"),
    ],
)
def test_a_module_path_before_the_wings_is_the_module_at_its_new_path(old: str, new: str) -> None:
    """`import itemscale.measures` still works until 0.2.0, with a warning, and gives the very
    module at its new path (one object: isinstance and monkeypatching see one module)."""
    import sys

    for name in [n for n in sys.modules if n == old or n.startswith(old + ".")]:
        del sys.modules[name]  # an earlier test may have imported it already
    with pytest.deprecated_call(
        match=rf"the module path {re.escape(old)} is deprecated: use {re.escape(new)}"
    ):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert sys.modules[old] is module
    # the module keeps its own spec: its package data is still found through it
    assert module.__spec__ is not None and module.__spec__.name == new
    assert importlib.util.find_spec(new) is module.__spec__
