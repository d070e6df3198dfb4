"""The synthetic suite on disk: real H.264 files decoded with PyAV, checked against the items."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import av
import numpy as np
import pytest

from _support.paths import DOCS
from itemscale.cli import main
from itemscale.collect.items import OPTION_LETTERS, Item, read_items_jsonl
from itemscale.collect.synth import (
    COLOURS,
    SuiteError,
    SuiteManifest,
    ensure_suite,
    generate_suite,
    read_manifest,
    verify_suite,
)
from itemscale.collect.synth._questions import QUESTION_KINDS
from itemscale.collect.synth._scene import SceneEvent
from itemscale.collect.synth._vocab import COUNT_WORDS, GLYPH_HEIGHT, GLYPH_WIDTH, GLYPHS
from itemscale.core.responses import TaskKind

SMALL = {"width": 160, "height": 120, "fps": 8, "duration_s": 8.0}
#: yuv420p with crf 18 keeps flat colours within a few levels; 40 leaves room for chroma bleed.
TOLERANCE = 40


def decode_all(path: Path) -> np.ndarray:
    with av.open(str(path)) as container:
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    return np.stack(frames)


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SuiteManifest]:
    out = tmp_path_factory.mktemp("suite")
    manifest = generate_suite(out, n_videos=6, seed=11, test_fraction=0.5, **SMALL)
    return out, manifest


@pytest.fixture(scope="module")
def decoded(suite: tuple[Path, SuiteManifest]) -> dict[str, np.ndarray]:
    out, manifest = suite
    return {v.video_id: decode_all(out / v.path) for v in manifest.videos}


def close_to(pixel: np.ndarray, rgb: tuple[int, int, int]) -> bool:
    return bool(np.all(np.abs(pixel.astype(int) - np.array(rgb)) <= TOLERANCE))


def centre_pixel(frame: np.ndarray, event: SceneEvent) -> np.ndarray:
    x0, y0, x1, y1 = event.bbox
    patch = frame[(y0 + y1) // 2 - 1 : (y0 + y1) // 2 + 2, (x0 + x1) // 2 - 1 : (x0 + x1) // 2 + 2]
    return np.median(patch.reshape(-1, 3), axis=0)


def frame_at(frames: np.ndarray, seconds: float, fps: int) -> np.ndarray:
    return frames[int(np.floor(seconds * fps + 1e-6))]


def read_sign(frame: np.ndarray, event: SceneEvent, scale: int) -> str:
    """Read the sign by matching each 5x7 cell of dark pixels against the glyph table."""
    x0, y0, _, _ = event.bbox
    assert event.text is not None
    text = ""
    for k in range(len(event.text)):
        dots = []
        for row in range(GLYPH_HEIGHT):
            line = ""
            for col in range(GLYPH_WIDTH):
                x = x0 + scale + k * (GLYPH_WIDTH + 1) * scale + col * scale + scale // 2
                y = y0 + scale + row * scale + scale // 2
                line += "#" if frame[y, x].mean() < 128 else "."
            dots.append(line)
        matches = [ch for ch, glyph in GLYPHS.items() if list(glyph) == dots]
        text += matches[0] if matches else "?"
    return text.lower()


def events_in(manifest: SuiteManifest, video_id: str) -> list[SceneEvent]:
    (video,) = [v for v in manifest.videos if v.video_id == video_id]
    return list(video.scene.events)


def event_for_span(events: list[SceneEvent], start: float, end: float, fps: int) -> SceneEvent:
    hits = [
        e
        for e in events
        if e.role != "lookalike" and abs(e.start_frame / fps - start) < 1e-9
        if abs(e.end_frame / fps - end) < 1e-9
    ]
    assert len(hits) >= 1, f"no scene event spans [{start}, {end}]"
    return hits[0]


def test_files_and_manifest(suite: tuple[Path, SuiteManifest]) -> None:
    out, manifest = suite
    assert (out / "items.jsonl").is_file()
    assert json.loads((out / "suite.json").read_text())["suite_schema_version"] == 1
    assert read_manifest(out) == manifest
    assert verify_suite(out) == []
    assert manifest.split_sizes == {"train": 3, "test": 3}
    assert manifest.encoder["x264_params"].startswith("mbtree=0")
    assert manifest.encoder["pyav"] == av.__version__
    assert sorted(p.name for p in (out / "videos").iterdir()) == sorted(
        f"{v.video_id}.mp4" for v in manifest.videos
    )
    with av.open(str(out / manifest.videos[0].path)) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264"
        assert stream.codec_context.pix_fmt == "yuv420p"
        assert (stream.codec_context.width, stream.codec_context.height) == (160, 120)


def test_every_item_validates_and_belongs_to_its_video(
    suite: tuple[Path, SuiteManifest], decoded: dict[str, np.ndarray]
) -> None:
    out, manifest = suite
    items = read_items_jsonl(out / "items.jsonl")
    assert len(items) == manifest.n_items == 12 * 6
    split_of = {v.video_id: v.split for v in manifest.videos}
    per_video = Counter(item.video_id for item in items)
    assert set(per_video.values()) == {12}
    for item in items:
        Item.model_validate(item.model_dump())
        assert item.video_path is not None and (out / item.video_path).is_file()
        frames = decoded[item.video_id]
        assert item.duration_s == pytest.approx(len(frames) / SMALL["fps"])
        assert item.split == split_of[item.video_id] == item.attributes["split"]
        assert item.attributes["question_kind"] in (*QUESTION_KINDS, "summary")
        assert item.evidence, item.item_id
        for span in item.evidence:
            assert 0 <= span.start < span.end <= item.duration_s
        if item.task_kind == TaskKind.MCQA:
            assert len(item.options) == 4 and len(set(item.options)) == 4
            assert not any(opt[:2] in {f"{x}." for x in OPTION_LETTERS} for opt in item.options)
        else:
            assert item.references and item.references[0]
        if item.task_kind == TaskKind.DIALOGUE:
            assert [t.role for t in item.history] == ["user", "assistant"]
            # The history names the subject but never gives the answer away.
            assert item.references[0] not in " ".join(t.text for t in item.history).lower()


def test_evidence_spans_show_the_answer(
    suite: tuple[Path, SuiteManifest], decoded: dict[str, np.ndarray]
) -> None:
    """Decode the frame at each span's middle and check the pixels that answer the question."""
    out, manifest = suite
    fps = SMALL["fps"]
    checked = Counter[str]()
    for item in read_items_jsonl(out / "items.jsonl"):
        if item.task_kind != TaskKind.MCQA:
            continue
        frames = decoded[item.video_id]
        events = events_in(manifest, item.video_id)
        assert item.answer is not None
        answer = item.options[OPTION_LETTERS.index(item.answer)]
        kind = item.attributes["question_kind"]
        spans = item.evidence
        mids = [frame_at(frames, (s.start + s.end) / 2, fps) for s in spans]
        targets = [event_for_span(events, s.start, s.end, fps) for s in spans]
        if kind == "small_detail":
            assert read_sign(mids[0], targets[0], scale=2) == answer
            before = round(spans[0].start * fps) - 1
            assert read_sign(frames[before], targets[0], scale=2) != answer
        elif kind == "counting":
            assert len(spans) == COUNT_WORDS.index(answer)
            colour = item.question.split()[-3]
            for frame, event in zip(mids, targets, strict=True):
                assert close_to(centre_pixel(frame, event), COLOURS[colour])
        elif kind == "ordering":
            names = answer.split(", ")
            assert len(spans) == 3
            for frame, event, name in zip(mids, targets, names, strict=True):
                assert close_to(centre_pixel(frame, event), COLOURS[name.split()[0]])
        elif kind == "brief_event":
            colour = answer.split()[0]
            (event,) = targets
            assert close_to(centre_pixel(mids[0], event), COLOURS[colour])
            # Tight span: the flash is absent just before and just after (unless a drifting
            # shape of that very colour passes behind the spot).
            video = next(v for v in manifest.videos if v.video_id == item.video_id)
            if all(a.colour != colour for a in video.scene.actors):
                for outside in (event.start_frame - 1, event.end_frame):
                    assert not close_to(centre_pixel(frames[outside], event), COLOURS[colour])
        else:
            assert kind == "distractor"
            (event,) = targets
            assert close_to(centre_pixel(mids[0], event), COLOURS[answer])
            # The look-alikes flash the same shape, in another colour that is one of the options.
            lookalikes = [e for e in events if e.role == "lookalike"]
            assert lookalikes and all(e.shape == event.shape for e in lookalikes)
            assert lookalikes[0].colour in item.options
            for lookalike in lookalikes:
                frame = frames[lookalike.start_frame]
                assert close_to(centre_pixel(frame, lookalike), COLOURS[lookalike.colour or ""])
        checked[kind] += 1
    assert checked == {kind: 6 for kind in QUESTION_KINDS}


def test_open_and_summary_references_match_the_scene(suite: tuple[Path, SuiteManifest]) -> None:
    out, manifest = suite
    items = {i.item_id: i for i in read_items_jsonl(out / "items.jsonl")}
    for video in manifest.videos:
        vid = video.video_id
        mcqa = {
            k: items[f"{vid}-{k}-mcqa"].options[
                OPTION_LETTERS.index(items[f"{vid}-{k}-mcqa"].answer or "")
            ]
            for k in QUESTION_KINDS
        }
        for kind in ("brief_event", "small_detail", "counting", "distractor"):
            assert items[f"{vid}-{kind}-open"].references == (mcqa[kind],)
        after = items[f"{vid}-ordering-open"]
        order = mcqa["ordering"].split(", ")
        anchor = after.question.removeprefix("Which shape takes its turn after the ")[:-1]
        assert after.references == (order[order.index(anchor) + 1],)
        summary = items[f"{vid}-summary"].references[0]
        # Turn order in the summary agrees with the ordering answer.
        positions = [summary.index(f"{name} takes a turn") for name in order]
        assert positions == sorted(positions)
        assert f"sign says {mcqa['small_detail']}" in summary


def test_answer_letters_balanced_within_split_and_kind(suite: tuple[Path, SuiteManifest]) -> None:
    out, _ = suite
    letters: dict[tuple[str, str], Counter[str]] = {}
    for item in read_items_jsonl(out / "items.jsonl"):
        if item.task_kind == TaskKind.MCQA:
            key = (item.split or "", item.attributes["question_kind"])
            letters.setdefault(key, Counter())[item.answer or ""] += 1
    assert len(letters) == 2 * len(QUESTION_KINDS)
    for counts in letters.values():
        full = [counts.get(letter, 0) for letter in "ABCD"]
        # 3 videos per split: three distinct letters, each once.
        assert sorted(full) == [0, 1, 1, 1]


def test_same_seed_same_suite(tmp_path: Path) -> None:
    """Same seed, same bytes and pixels, whether videos are made in one process or two."""
    a = generate_suite(tmp_path / "a", n_videos=2, seed=5, **SMALL)
    b = generate_suite(tmp_path / "b", n_videos=2, seed=5, workers=2, **SMALL)
    c = generate_suite(tmp_path / "c", n_videos=2, seed=6, **SMALL)
    assert (tmp_path / "a/items.jsonl").read_bytes() == (tmp_path / "b/items.jsonl").read_bytes()
    assert (tmp_path / "a/suite.json").read_bytes() == (tmp_path / "b/suite.json").read_bytes()
    for va, vb in zip(a.videos, b.videos, strict=True):
        assert np.array_equal(
            decode_all(tmp_path / "a" / va.path), decode_all(tmp_path / "b" / vb.path)
        )
    assert a.items_sha256 != c.items_sha256
    assert not np.array_equal(
        decode_all(tmp_path / "a" / a.videos[0].path), decode_all(tmp_path / "c" / c.videos[0].path)
    )


def test_bytes_do_not_depend_on_heap_contents(tmp_path: Path) -> None:
    """x264 once read uninitialised memory (with mbtree on): poison the heap of a second process
    and the videos must still come out byte for byte the same."""
    manifest = generate_suite(tmp_path / "here", n_videos=2, seed=2, **SMALL)
    env = {**os.environ, "MALLOC_PERTURB_": "85"}
    argv = ["--out", str(tmp_path / "there"), "--n", "2", "--seed", "2", "--fps", "8"]
    subprocess.run(
        [sys.executable, "-m", "itemscale", "synth", *argv, "--duration", "8"],
        check=True,
        env=env,
        capture_output=True,
    )
    assert [v.sha256 for v in read_manifest(tmp_path / "there").videos] == [
        v.sha256 for v in manifest.videos
    ]


def test_only_split_reproduces_that_split_of_the_full_suite(tmp_path: Path) -> None:
    full = generate_suite(tmp_path / "full", n_videos=4, seed=2, test_fraction=0.5, **SMALL)
    test = generate_suite(
        tmp_path / "test", n_videos=4, seed=2, test_fraction=0.5, only_split="test", **SMALL
    )
    assert [v.split for v in test.videos] == ["test", "test"]
    assert [(v.video_id, v.sha256) for v in test.videos] == [
        (v.video_id, v.sha256) for v in full.videos if v.split == "test"
    ]
    full_items = [i for i in read_items_jsonl(tmp_path / "full/items.jsonl") if i.split == "test"]
    assert read_items_jsonl(tmp_path / "test/items.jsonl") == full_items


def test_refuses_to_overwrite_and_rejects_bad_arguments(tmp_path: Path) -> None:
    generate_suite(tmp_path, n_videos=1, seed=0, **SMALL)
    with pytest.raises(SuiteError, match="already holds a suite"):
        generate_suite(tmp_path, n_videos=1, seed=1, **SMALL)
    (tmp_path / "suite.json").unlink()  # as if interrupted before the manifest
    with pytest.raises(SuiteError, match="already holds an incomplete suite"):
        generate_suite(tmp_path, n_videos=1, seed=1, **SMALL)
    replaced = generate_suite(tmp_path, n_videos=1, seed=1, overwrite=True, **SMALL)
    assert [p.name for p in (tmp_path / "videos").iterdir()] == ["synth-1-00000.mp4"]
    assert read_manifest(tmp_path) == replaced
    with pytest.raises(SuiteError, match="at least 8"):
        generate_suite(tmp_path / "x", n_videos=1, seed=0, duration_s=3.0)
    with pytest.raises(SuiteError, match="even width"):
        generate_suite(tmp_path / "y", n_videos=1, seed=0, width=161)
    with pytest.raises(SuiteError, match="n_videos"):
        generate_suite(tmp_path / "z", n_videos=0, seed=0)


def test_verify_detects_a_changed_video(tmp_path: Path) -> None:
    manifest = generate_suite(tmp_path, n_videos=1, seed=0, **SMALL)
    assert verify_suite(tmp_path) == []
    video = tmp_path / manifest.videos[0].path
    video.write_bytes(video.read_bytes()[:-10])
    assert verify_suite(tmp_path) == [manifest.videos[0].path]


def test_manifest_from_a_newer_schema_is_refused(tmp_path: Path) -> None:
    generate_suite(tmp_path, n_videos=1, seed=0, **SMALL)
    payload = json.loads((tmp_path / "suite.json").read_text())
    payload["suite_schema_version"] = 99
    (tmp_path / "suite.json").write_text(json.dumps(payload))
    with pytest.raises(SuiteError, match="newer"):
        read_manifest(tmp_path)


def test_cli_writes_what_it_says(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli"
    argv = ["synth", "--out", str(out), "--n", "3", "--seed", "4", "--fps", "8", "--duration", "8"]
    assert main([*argv, "--test-fraction", "0.34"]) == 0
    printed = capsys.readouterr().out
    assert "wrote 3 videos (train 2, test 1) and 36 items" in printed
    manifest = read_manifest(out)
    assert (manifest.seed, manifest.n_videos, manifest.fps, manifest.duration_s) == (4, 3, 8, 8.0)
    assert len(read_items_jsonl(out / "items.jsonl")) == 36
    assert len(list((out / "videos").glob("*.mp4"))) == 3
    assert decode_all(out / manifest.videos[0].path).shape == (64, 120, 160, 3)
    # A second run into the same folder is a user error, not a traceback...
    assert main(argv) == 2
    assert "already holds a suite" in capsys.readouterr().err
    # ...unless asked to reuse an identical suite (a different one is then replaced).
    assert main([*argv, "--test-fraction", "0.34", "--reuse"]) == 0
    assert "reused the intact suite" in capsys.readouterr().out
    assert main([*argv, "--reuse"]) == 0
    assert "wrote 3 videos (train 2, test 1)" in capsys.readouterr().out
    assert read_manifest(out).test_fraction == 0.2


def test_the_sweep_loader_reads_the_suite(suite: tuple[Path, SuiteManifest]) -> None:
    """The contract with the sweep: a suite folder is a `synthetic` benchmark, paths resolve."""
    from itemscale.collect.protocol import BenchmarkEntry
    from itemscale.collect.sweep import load_benchmark_items

    out, manifest = suite
    entry = BenchmarkEntry(kind="synthetic", path=str(out), split="test")
    items = load_benchmark_items(entry)
    test_videos = {v.video_id for v in manifest.videos if v.split == "test"}
    assert {i.video_id for i in items} == test_videos and len(items) == 12 * len(test_videos)
    for item in items:
        assert item.video_path is not None and Path(item.video_path).is_absolute()
        assert Path(item.video_path) == (out / "videos" / f"{item.video_id}.mp4").resolve()


def test_every_cli_option_is_documented() -> None:
    """docs/synthetic-suite.md names every flag `itemscale synth --help` lists."""
    from itemscale.cli import build_parser

    docs = (DOCS / "synthetic-suite.md").read_text()
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    synth = sub.choices["synth"]  # type: ignore[index]
    flags = [f for a in synth._actions for f in a.option_strings if f.startswith("--")]
    assert "--seed" in flags and "--workers" in flags
    missing = [f for f in flags if f != "--help" and f"`{f}" not in docs]
    assert missing == []


def test_ensure_suite_reuses_only_an_intact_identical_suite(tmp_path: Path) -> None:
    first = ensure_suite(tmp_path, n_videos=1, seed=3, **SMALL)
    video = tmp_path / first.videos[0].path
    stamp = video.stat().st_mtime_ns
    assert ensure_suite(tmp_path, n_videos=1, seed=3, **SMALL) == first
    assert video.stat().st_mtime_ns == stamp  # reused, not re-encoded
    # A changed file is regenerated, and comes back identical.
    video.write_bytes(b"not a video")
    again = ensure_suite(tmp_path, n_videos=1, seed=3, **SMALL)
    assert again == first and verify_suite(tmp_path) == []
    # Other arguments: a different suite replaces it.
    other = ensure_suite(tmp_path, n_videos=2, seed=4, **SMALL)
    assert [v.video_id for v in other.videos] == ["synth-4-00000", "synth-4-00001"]
    assert sorted(p.name for p in (tmp_path / "videos").iterdir()) == [
        "synth-4-00000.mp4",
        "synth-4-00001.mp4",
    ]


def test_a_video_depends_only_on_seed_and_index(
    tmp_path: Path, suite: tuple[Path, SuiteManifest]
) -> None:
    _, six = suite
    one = generate_suite(tmp_path, n_videos=1, seed=11, **SMALL)
    assert one.videos[0].scene == six.videos[0].scene
    assert one.videos[0].sha256 == six.videos[0].sha256
