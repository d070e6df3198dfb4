"""Writing a suite: H.264 videos, the item file and the manifest.

Every video's content comes from its own child of the suite seed (`SeedSequence(seed).spawn`),
so video i is the same whatever `n_videos` is and a test-only subset regenerates exactly the
test videos; the split and answer positions come from a separate child. `suite.json` (with the
hashes of all files) is written last: a suite with a manifest is complete.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, Required, TypedDict, Unpack

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ...core.errors import ItemscaleError
from ...core.files import sha256_file
from ...core.responses import write_json_atomic
from ...core.version import __version__
from ..items import ITEMS_FILE, Item, write_items_jsonl
from ._focus import (
    ALL_FOCUS_KINDS,
    FOCUS_KINDS,
    FocusKind,
    build_focus_items,
    check_focus_parameters,
    plan_focus_scene,
)
from ._questions import N_OPTIONS, QUESTION_KINDS, QuestionKind, build_items
from ._scene import VideoScene, check_scene_parameters, iter_frames, plan_scene

SUITE_SCHEMA_VERSION: Final[int] = 1
#: Bump when the same seed would produce different videos or items.
GENERATOR_VERSION: Final[str] = "itemscale-synth-1"
#: The same for the `focus` layout (one large storyline per video, `_focus`).
FOCUS_GENERATOR_VERSION: Final[str] = "itemscale-synth-focus-1"

Layout = Literal["grid", "focus"]
LAYOUTS: Final[tuple[str, ...]] = ("grid", "focus")


def generator_version(layout: Layout) -> str:
    return FOCUS_GENERATOR_VERSION if layout == "focus" else GENERATOR_VERSION


def check_layout_parameters(
    layout: Layout, *, width: int, height: int, fps: int, duration_s: float
) -> None:
    if layout == "focus":
        check_focus_parameters(width=width, height=height, fps=fps, duration_s=duration_s)
    else:
        check_scene_parameters(width=width, height=height, fps=fps, duration_s=duration_s)


SUITE_FILE: Final[str] = "suite.json"
VIDEOS_DIR: Final[str] = "videos"

Split = Literal["train", "test"]

X264_PARAMS: Final[str] = "mbtree=0:colorprim=smpte170m:transfer=smpte170m:colormatrix=smpte170m"

_VIDEO_NAME = re.compile(r"^synth-\d+-\d{5}\.mp4$")


class SuiteVideo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    video_id: str
    index: int
    split: Split
    path: str
    sha256: str
    n_items: int
    scene: VideoScene


class SuiteManifest(BaseModel):
    """`suite.json`: what was generated, from what, and the hashes to check it by."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    suite_schema_version: int = SUITE_SCHEMA_VERSION
    generator_version: str = GENERATOR_VERSION
    itemscale_version: str = __version__
    seed: int
    #: `grid` (five storylines per video) or `focus` (one large storyline per video).
    layout: Layout = "grid"
    #: The storyline kinds of a focus suite, dealt to its videos in turn.
    focus_kinds: tuple[FocusKind, ...] = FOCUS_KINDS
    n_videos: int
    width: int
    height: int
    fps: int
    duration_s: float
    test_fraction: float
    only_split: Split | None = None
    codec: str
    crf: int
    #: Everything else the encoder was given, and the library versions: MP4 hashes are only
    #: comparable between machines with the same x264/libavcodec build.
    encoder: dict[str, str] = Field(default_factory=dict)
    items_file: str = ITEMS_FILE
    items_sha256: str
    n_items: int
    videos: tuple[SuiteVideo, ...]
    split_sizes: dict[str, int] = Field(default_factory=dict)


class SuiteError(ItemscaleError, ValueError):
    """A suite cannot be generated or read as asked."""


X264_PRESET: Final[str] = "medium"


def encoder_provenance() -> dict[str, str]:
    import av

    versions = av.library_versions
    return {
        "preset": X264_PRESET,
        "x264_params": X264_PARAMS,
        "threads": "1",
        "pix_fmt": "yuv420p",
        "pyav": str(av.__version__),
        "libavcodec": ".".join(str(v) for v in versions.get("libavcodec", ())),
        "libavformat": ".".join(str(v) for v in versions.get("libavformat", ())),
    }


def rgb_to_yuv420p(rgb: np.ndarray) -> np.ndarray:
    """BT.601 limited-range YUV 4:2:0, planar, as PyAV's `yuv420p` ndarray (height * 3/2 rows),
    in numpy integers rather than swscale, whose SIMD paths may round differently on another
    CPU. Chroma is the rounded mean of each 2x2 block."""
    h, w, _ = rgb.shape
    r, g, b = (rgb[..., i].astype(np.int32) for i in range(3))
    y = ((66 * r + 129 * g + 25 * b + 128) >> 8) + 16

    def chroma(cr: int, cg: int, cb: int) -> np.ndarray:
        full = cr * r + cg * g + cb * b
        block_sum = full.reshape(h // 2, 2, w // 2, 2).sum(axis=(1, 3))
        plane: np.ndarray = ((block_sum + 512) >> 10) + 128
        return plane

    u, v = chroma(-38, -74, 112), chroma(112, -94, -18)
    out = np.concatenate([y.ravel(), u.ravel(), v.ravel()])
    yuv: np.ndarray = np.clip(out, 0, 255).astype(np.uint8).reshape(h * 3 // 2, w)
    return yuv


def encode_h264(
    frames: Iterable[np.ndarray], path: Path, *, width: int, height: int, fps: int, crf: int
) -> None:
    """Encode RGB frames as an H.264 (yuv420p, BT.601) MP4 via a temporary file; keyframes
    every two seconds, B-frames kept. Reproducible bytes need one encoder thread (x264's output
    depends on its thread count) and no macroblock tree (with mbtree, x264 core 165 read
    uninitialised memory and encoded the same frames differently run to run; MALLOC_PERTURB_)."""
    import av

    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with av.open(str(tmp), mode="w", format="mp4") as container:
            stream = container.add_stream("libx264", rate=fps)
            stream.width = width
            stream.height = height
            stream.pix_fmt = "yuv420p"
            stream.codec_context.thread_count = 1
            stream.options = {
                "crf": str(crf),
                "preset": X264_PRESET,
                "g": str(2 * fps),
                "threads": "1",
                "x264-params": X264_PARAMS,
            }
            for index, rgb in enumerate(frames):
                frame = av.VideoFrame.from_ndarray(rgb_to_yuv420p(rgb), format="yuv420p")
                frame.pts = index
                for packet in stream.encode(frame):
                    container.mux(packet)
            for packet in stream.encode(None):
                container.mux(packet)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def assign_splits(rng: np.random.Generator, n_videos: int, test_fraction: float) -> list[Split]:
    """Split per video (the bootstrap cluster); with two or more videos and 0 < `test_fraction`
    < 1, each split gets at least one."""
    n_test = round(n_videos * test_fraction)
    if n_videos >= 2 and 0 < test_fraction < 1:
        n_test = min(max(n_test, 1), n_videos - 1)
    test = set(int(i) for i in rng.permutation(n_videos)[:n_test])
    return ["test" if i in test else "train" for i in range(n_videos)]


def balanced_positions(rng: np.random.Generator, n: int) -> list[int]:
    """Correct-option positions for n questions: every letter used equally often (up to one)."""
    blocks = [rng.permutation(N_OPTIONS) for _ in range(-(-n // N_OPTIONS))]
    return [int(p) for p in np.concatenate(blocks)[:n]] if blocks else []


@dataclass(frozen=True)
class _VideoJob:
    """Everything one video needs, so videos can be made in worker processes in any order."""

    out_dir: Path
    seed_seq: np.random.SeedSequence
    video_id: str
    index: int
    split: Split
    width: int
    height: int
    fps: int
    duration_s: float
    crf: int
    answer_positions: dict[QuestionKind, int]
    dialogue_kind: QuestionKind
    layout: Layout = "grid"
    focus_kind: FocusKind = "flash"
    focus_position: int = 0


def _make_video(job: _VideoJob) -> tuple[list[Item], SuiteVideo]:
    rng = np.random.default_rng(job.seed_seq)
    size = {"width": job.width, "height": job.height, "fps": job.fps, "duration_s": job.duration_s}
    try:
        if job.layout == "focus":
            scene = plan_focus_scene(rng, job.video_id, job.focus_kind, **size)  # type: ignore[arg-type]
        else:
            scene = plan_scene(rng, job.video_id, **size)  # type: ignore[arg-type]
    except ValueError as exc:
        raise SuiteError(f"video {job.video_id}: {exc}") from exc
    rel_path = f"{VIDEOS_DIR}/{job.video_id}.mp4"
    path = job.out_dir / rel_path
    encode_h264(
        iter_frames(scene), path, width=job.width, height=job.height, fps=job.fps, crf=job.crf
    )
    if job.layout == "focus":
        items = build_focus_items(
            rng, scene, video_path=rel_path, split=job.split, position=job.focus_position
        )
    else:
        items = build_items(
            rng,
            scene,
            video_path=rel_path,
            split=job.split,
            answer_positions=job.answer_positions,
            dialogue_kind=job.dialogue_kind,
        )
    video = SuiteVideo(
        video_id=job.video_id,
        index=job.index,
        split=job.split,
        path=rel_path,
        sha256=sha256_file(path),
        n_items=len(items),
        scene=scene,
    )
    return items, video


def _prepare_out_dir(out_dir: Path, overwrite: bool) -> None:
    videos = out_dir / VIDEOS_DIR
    existing = [p for p in (out_dir / SUITE_FILE, out_dir / ITEMS_FILE) if p.exists()]
    if videos.is_dir():
        existing.extend(videos.iterdir())
    if existing and not overwrite:
        what = "a suite" if (out_dir / SUITE_FILE).exists() else "an incomplete suite"
        raise SuiteError(
            f"{out_dir} already holds {what} ({existing[0].name}); pass overwrite=True "
            "(--overwrite) to replace it"
        )
    if overwrite:
        # Remove the manifest first: a half-replaced suite must not look complete.
        (out_dir / SUITE_FILE).unlink(missing_ok=True)
        if videos.is_dir():
            for path in videos.iterdir():
                if _VIDEO_NAME.match(path.name):
                    path.unlink()
    videos.mkdir(parents=True, exist_ok=True)


def generate_suite(
    out_dir: Path,
    *,
    n_videos: int,
    seed: int,
    width: int = 160,
    height: int = 120,
    fps: int = 10,
    duration_s: float = 12.0,
    test_fraction: float = 0.2,
    only_split: Split | None = None,
    crf: int = 18,
    overwrite: bool = False,
    workers: int = 1,
    layout: Layout = "grid",
    focus_kinds: tuple[FocusKind, ...] = FOCUS_KINDS,
) -> SuiteManifest:
    """Generate the synthetic video suite into `out_dir` (`videos/`, `items.jsonl`, `suite.json`)
    and return its manifest. The same arguments give byte-identical `items.jsonl` and the same
    decoded frames, whatever `workers`; `only_split` writes that split of the full suite."""
    out_dir = Path(out_dir)
    focus_kinds = _checked_arguments(
        n_videos=n_videos,
        seed=seed,
        test_fraction=test_fraction,
        width=width,
        height=height,
        fps=fps,
        duration_s=duration_s,
        layout=layout,
        focus_kinds=focus_kinds,
    )
    _prepare_out_dir(out_dir, overwrite)

    root = np.random.SeedSequence(seed)
    suite_seq, *video_seqs = root.spawn(n_videos + 1)
    suite_rng = np.random.default_rng(suite_seq)
    splits = assign_splits(suite_rng, n_videos, test_fraction)
    positions, dialogue_kinds, kind_of, focus_positions = _answer_plan(
        suite_rng, splits, layout, focus_kinds
    )

    jobs = [
        _VideoJob(
            out_dir=out_dir,
            seed_seq=video_seqs[index],
            video_id=f"synth-{seed}-{index:05d}",
            index=index,
            split=splits[index],
            width=width,
            height=height,
            fps=fps,
            duration_s=duration_s,
            crf=crf,
            answer_positions={kind: positions[(index, kind)] for kind in QUESTION_KINDS},
            dialogue_kind=dialogue_kinds[index],
            layout=layout,
            focus_kind=kind_of.get(index, "flash"),
            focus_position=focus_positions.get(index, 0),
        )
        for index in range(n_videos)
        if only_split is None or splits[index] == only_split
    ]
    if workers > 1 and len(jobs) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
            results = list(pool.map(_make_video, jobs))
    else:
        results = [_make_video(job) for job in jobs]
    all_items = [item for items, _ in results for item in items]
    videos = [video for _, video in results]

    write_items_jsonl(out_dir / ITEMS_FILE, all_items)
    manifest = SuiteManifest(
        seed=seed,
        layout=layout,
        focus_kinds=focus_kinds,
        generator_version=generator_version(layout),
        n_videos=n_videos,
        width=width,
        height=height,
        fps=fps,
        duration_s=duration_s,
        test_fraction=test_fraction,
        only_split=only_split,
        codec="libx264",
        crf=crf,
        encoder=encoder_provenance(),
        items_sha256=sha256_file(out_dir / ITEMS_FILE),
        n_items=len(all_items),
        videos=tuple(videos),
        split_sizes={
            split: sum(1 for v in videos if v.split == split) for split in ("train", "test")
        },
    )
    write_json_atomic(out_dir / SUITE_FILE, manifest.model_dump(mode="json"))
    (out_dir / SUITE_FILE).chmod(0o644)  # the temporary file it was renamed from was private
    return manifest


def _checked_arguments(
    *,
    n_videos: int,
    seed: int,
    test_fraction: float,
    width: int,
    height: int,
    fps: int,
    duration_s: float,
    layout: Layout,
    focus_kinds: tuple[FocusKind, ...],
) -> tuple[FocusKind, ...]:
    """Refuse arguments no suite can be made from, before anything is written; the focus
    kinds as a tuple."""
    if n_videos < 1:
        raise SuiteError(f"n_videos must be at least 1, got {n_videos}")
    if seed < 0:
        raise SuiteError(f"seed must be a non-negative integer, got {seed}")
    if not 0 <= test_fraction <= 1:
        raise SuiteError(f"test_fraction must lie in [0, 1], got {test_fraction}")
    if width % 2 or height % 2:
        raise SuiteError(f"yuv420p needs an even width and height, got {width}x{height}")
    if layout not in LAYOUTS:
        raise SuiteError(f"unknown layout {layout!r}; use one of {', '.join(LAYOUTS)}")
    focus_kinds = tuple(focus_kinds)
    unknown = [k for k in focus_kinds if k not in ALL_FOCUS_KINDS]
    if unknown or not focus_kinds or len(set(focus_kinds)) != len(focus_kinds):
        raise SuiteError(
            f"focus_kinds {list(focus_kinds)}: name each of {', '.join(ALL_FOCUS_KINDS)} at most "
            "once, and at least one"
        )
    try:
        check_layout_parameters(layout, width=width, height=height, fps=fps, duration_s=duration_s)
    except ValueError as exc:
        raise SuiteError(str(exc)) from exc
    return focus_kinds


def _answer_plan(
    suite_rng: np.random.Generator,
    splits: list[Split],
    layout: Layout,
    focus_kinds: tuple[FocusKind, ...],
) -> tuple[
    dict[tuple[int, QuestionKind], int], list[QuestionKind], dict[int, FocusKind], dict[int, int]
]:
    """Where each video's answers sit, which kind its dialogue asks, and with the focus layout
    its kind and answer position; drawn from `suite_rng` in this order (a seed, one suite)."""
    n_videos = len(splits)
    # Positions balanced within each (split, question kind), so each split is balanced alone.
    positions: dict[tuple[int, QuestionKind], int] = {}
    for split in ("train", "test"):
        members = [i for i in range(n_videos) if splits[i] == split]
        for kind in QUESTION_KINDS:
            for i, position in zip(
                members, balanced_positions(suite_rng, len(members)), strict=True
            ):
                positions[(i, kind)] = position
    dialogue_kinds = [QUESTION_KINDS[int(k)] for k in suite_rng.integers(0, 5, size=n_videos)]
    # focus layout: kinds alternate within each split, answer positions balanced per kind
    kind_of: dict[int, FocusKind] = {}
    focus_positions: dict[int, int] = {}
    if layout == "focus":
        for split in ("train", "test"):
            members = [i for i in range(n_videos) if splits[i] == split]
            order = suite_rng.permutation(len(members))
            for rank, pos in enumerate(order):
                kind_of[members[int(pos)]] = focus_kinds[rank % len(focus_kinds)]
            for fkind in focus_kinds:
                of_kind = [i for i in members if kind_of[i] == fkind]
                for i, position in zip(
                    of_kind, balanced_positions(suite_rng, len(of_kind)), strict=True
                ):
                    focus_positions[i] = position
    return positions, dialogue_kinds, kind_of, focus_positions


def read_manifest(suite_dir: Path) -> SuiteManifest:
    """Read `suite.json`, refusing one written by a newer suite schema."""
    import json

    path = Path(suite_dir) / SUITE_FILE
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise SuiteError(
            f"{path}: no suite manifest (was the suite generated completely?)"
        ) from exc
    except json.JSONDecodeError as exc:
        raise SuiteError(f"{path}: not valid JSON ({exc.msg})") from exc
    version = payload.get("suite_schema_version") if isinstance(payload, dict) else None
    if not isinstance(version, int):
        raise SuiteError(f"{path}: key 'suite_schema_version' is missing")
    if version > SUITE_SCHEMA_VERSION:
        raise SuiteError(
            f"{path}: suite schema version {version} is newer than this itemscale reads "
            f"({SUITE_SCHEMA_VERSION})"
        )
    return SuiteManifest.model_validate(payload)


def verify_suite(suite_dir: Path) -> list[str]:
    """Files whose hash no longer matches the manifest (empty when the suite is intact)."""
    suite_dir = Path(suite_dir)
    manifest = read_manifest(suite_dir)
    bad: list[str] = []
    checks = [(manifest.items_file, manifest.items_sha256)]
    checks += [(v.path, v.sha256) for v in manifest.videos]
    for rel, expected in checks:
        path = suite_dir / rel
        if not path.is_file() or sha256_file(path) != expected:
            bad.append(rel)
    return bad


def reusable_suite(
    out_dir: Path,
    *,
    n_videos: int,
    seed: int,
    width: int = 160,
    height: int = 120,
    fps: int = 10,
    duration_s: float = 12.0,
    test_fraction: float = 0.2,
    only_split: Split | None = None,
    crf: int = 18,
    layout: Layout = "grid",
    focus_kinds: tuple[FocusKind, ...] = FOCUS_KINDS,
) -> SuiteManifest | None:
    """The manifest of the suite in `out_dir` if it is intact, made by this generator version
    from exactly these arguments; else None."""
    wanted = {
        "layout": layout,
        "focus_kinds": tuple(focus_kinds),
        "n_videos": n_videos,
        "seed": seed,
        "width": width,
        "height": height,
        "fps": fps,
        "duration_s": duration_s,
        "test_fraction": test_fraction,
        "only_split": only_split,
        "crf": crf,
        "generator_version": generator_version(layout),
        "suite_schema_version": SUITE_SCHEMA_VERSION,
    }
    try:
        existing = read_manifest(out_dir)
    except (SuiteError, ValueError):
        return None
    if existing.model_dump(include=set(wanted)) != wanted or verify_suite(out_dir):
        return None
    return existing


class SuiteArgs(TypedDict, total=False):
    """The arguments of `reusable_suite` (and `generate_suite`'s, less `overwrite`/`workers`):
    those that decide a suite's content. Absent ones take those functions' defaults."""

    n_videos: Required[int]
    seed: Required[int]
    width: int
    height: int
    fps: int
    duration_s: float
    test_fraction: float
    only_split: Split | None
    crf: int
    layout: Layout
    focus_kinds: tuple[FocusKind, ...]


def ensure_suite(out_dir: Path, *, workers: int = 1, **params: Unpack[SuiteArgs]) -> SuiteManifest:
    """The suite these arguments describe: reused when `out_dir` holds it intact
    (`reusable_suite`: a second run costs a hash check), otherwise regenerated in place."""
    existing = reusable_suite(out_dir, **params)
    if existing is not None:
        return existing
    return generate_suite(out_dir, overwrite=True, workers=workers, **params)
