"""Running cells: decode a video once for all its cells, batch the model calls, build rows. The
same `VideoJobRunner` runs locally and inside each Ray actor, so both executors produce identical
rows for identical cells."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from ...core.responses import (
    NOANSWER,
    Status,
    TaskKind,
    extract_choice,
    option_margin,
    score_open_answer,
)
from ..items import Item
from ..models import DecodingSettings, VideoLM, VideoRequest, VideoResponse
from ..protocol import PER_ITEM_SAMPLING_POLICIES, Configuration
from ..store import CellRow
from ._memory import (
    DEFAULT_BYTES_PER_VISUAL_TOKEN,
    FRAMES_HELD_BYTES,
    auto_batch_size,
    estimated_visual_tokens,
    is_out_of_memory,
    release_device_memory,
)
from ._plan import Cell
from ._response_check import ResponseFieldError, checked_response

if TYPE_CHECKING:
    from ..video import FrameCache, FrameSet

    #: A job's decoded frame sets by (config id, item key, repeat) (`_pass_key`).
    FrameSets = dict[tuple[str, str, int], FrameSet]

#: Cells that may share a model call (`VideoJobRunner.batch_key`): configuration id, task
#: kind, decoding settings (greedy: seed 0), frame array shape (None: text-only).
BatchKey = tuple[str, str, DecodingSettings, tuple[int, ...] | None]


class RowIdentity(TypedDict):
    """The `cell` part of a `CellRow`, which `base_row` fills; written from `RESPONSE_COLUMNS` by
    `python -m itemscale.core.responses._row_fields`, so mypy holds `base_row` to a new column."""

    # <row fields parts=cell sequence=tuple first=cell_id:str,spec_id:str>
    cell_id: str
    spec_id: str
    model: str
    item_id: str
    video_id: str
    task_kind: str
    series: str
    config_id: str
    config_label: str
    axis_order: float
    frames: int
    sampling: str | None
    pipeline: str | None
    repeat: int
    reference: str | None
    attributes: str | None
    source: str | None
    rerun_of: int | None
    # </row fields>


class FrameFields(TypedDict):
    """The `frames` part of a `CellRow` (`pixels` per frame, None for a text-only cell), written
    like `RowIdentity`."""

    # <row fields parts=frames sequence=tuple>
    effective_frames: int | None
    pixels: int | None
    frame_indices: tuple[int, ...] | None
    frame_timestamps: tuple[float, ...] | None
    # </row fields>


#: The `source` column of every row a sweep writes.
SWEEP_SOURCE = "itemscale-sweep"


@dataclass(frozen=True)
class VideoJob:
    """All pending cells of one model on one video (text-only cells of its items included)."""

    video_id: str
    video_path: str | None
    cells: tuple[Cell, ...]
    hash_video: bool = False


@dataclass
class JobStats:
    """Where a job's time went: the benchmark splits itemscale's overhead from the model's."""

    decode_s: float = 0.0
    model_s: float = 0.0
    model_calls: int = 0
    video_hash: str | None = None
    #: model calls that ran out of device memory (their batch was halved and run again)
    out_of_memory: int = 0
    #: what the reader must know about this video (a declared duration far from the video's)
    warnings: list[str] = field(default_factory=list)
    #: backend values of the right type that cannot be measurements, nulled, by reason
    nulled: dict[str, int] = field(default_factory=dict)


#: How far an item's declared duration may be from its video's before the sweep warns: more
#: than this share of the video's duration and more than `DURATION_TOLERANCE_S` seconds.
DURATION_TOLERANCE_SHARE = 0.10
DURATION_TOLERANCE_S = 2.0


def duration_mismatches(video_path: str, cells: Sequence[Cell]) -> list[str]:
    """A warning for each item whose declared `duration_s` disagrees with its video's by more
    than the tolerance: the sampling uses the video's, so a wrong declaration is said, not
    silently kept."""
    declared = {c.item.item_id: c.item.duration_s for c in cells if c.item.duration_s is not None}
    if not declared:
        return []
    from ..video import MediaError, probe_video

    try:
        actual = float(probe_video(video_path).duration_s)
    except (MediaError, OSError):
        return []
    out = []
    for item_id, said in sorted(declared.items()):
        gap = abs(float(said) - actual)
        if gap > DURATION_TOLERANCE_S and gap > DURATION_TOLERANCE_SHARE * actual:
            out.append(
                f"item {item_id!r}: declares a duration of {float(said):,.1f} s but its video "
                f"{Path(video_path).name} lasts {actual:,.1f} s (more than "
                f"{DURATION_TOLERANCE_SHARE:.0%} and {DURATION_TOLERANCE_S:g} s apart); the "
                "video's own duration is used"
            )
    return out


def group_by_video(cells: Sequence[Cell], known_hashes: set[str] | None = None) -> list[VideoJob]:
    """One job per video, in first-seen order, cells sorted by configuration, so a batch holds
    one budget (similar token counts, little padding)."""
    groups: dict[str, list[Cell]] = {}
    paths: dict[str, str | None] = {}
    for cell in cells:
        groups.setdefault(cell.item.video_id, []).append(cell)
        paths.setdefault(cell.item.video_id, cell.item.video_path)
    known = known_hashes if known_hashes is not None else set()
    jobs = []
    for video_id, group in groups.items():
        group.sort(key=lambda c: (c.config.config_id, c.repeat))
        jobs.append(
            VideoJob(
                video_id=video_id,
                video_path=paths[video_id],
                cells=tuple(group),
                hash_video=video_id not in known and paths[video_id] is not None,
            )
        )
    return jobs


def repeat_decoding(base: DecodingSettings, seed: int) -> DecodingSettings:
    """The decoding settings with one repeat's seed: what the backend gets and the cell identity
    hashes."""
    return base.model_copy(update={"seed": int(seed)})


def _cell_max_pixels(config: Configuration) -> int | None:
    if config.max_pixels is not None:
        return config.max_pixels
    if config.token_budget is not None and config.frames > 0:
        from ..video import allocation_max_pixels

        return int(allocation_max_pixels(config.token_budget, config.frames))
    return None


def _score_fields(
    item: Item, status: Status, answer: str | None, raw_text: str | None
) -> dict[str, float]:
    if not status.answered:
        return {}
    if item.task_kind == TaskKind.MCQA:
        if item.answer is None:
            return {}
        return {"correct": 1.0 if answer == item.answer else 0.0}
    if not item.references or raw_text is None:
        return {}
    return score_open_answer(raw_text, item.references).columns()


def parsed_answer(item: Item, response: VideoResponse) -> tuple[Status, str | None]:
    """The status and answer to record, checked whatever the backend did: a multiple-choice
    answer that is no option letter is re-read from the raw text by the shared extractor, and is
    NOANSWER when the text names no option: never a guessed letter."""
    status = Status(response.status)
    if not status.answered:
        return status, None
    if item.task_kind != TaskKind.MCQA:
        return Status.OK, response.answer
    answer = response.answer
    if answer != NOANSWER and (
        answer is None or len(answer) != 1 or answer not in item.option_letters
    ):
        answer = extract_choice(response.raw_text, item.options)
    if answer == NOANSWER:
        return Status.NOANSWER, NOANSWER
    return Status.OK, answer


def base_row(cell: Cell) -> RowIdentity:
    """The fields of a cell's row that its identity and its item decide."""
    config = cell.config
    item = cell.item
    return {
        "cell_id": cell.cell_id,
        "spec_id": cell.spec_id,
        "model": cell.model,
        "item_id": item.item_id,
        "video_id": item.video_id,
        "task_kind": item.task_kind.value,
        "series": cell.planned.series,
        "config_id": config.config_id,
        "config_label": config.label,
        "axis_order": config.axis_order,
        "frames": config.frames,
        "repeat": cell.repeat,
        "sampling": None if config.is_text_only else config.sampling.tag,
        "pipeline": None if config.is_text_only else config.pipeline,
        "reference": item.reference_text(),
        "attributes": json.dumps(item.attributes, sort_keys=True) if item.attributes else None,
        "source": SWEEP_SOURCE,
        "rerun_of": cell.rerun_of,
    }


def failure_row(
    cell: Cell, status: Status, error: str, frame_set: FrameSet | None = None
) -> CellRow:
    if frame_set is None:
        return CellRow(**base_row(cell), status=status.value, error=error)
    return CellRow(**base_row(cell), **_frame_fields(frame_set), status=status.value, error=error)


def _frame_fields(frame_set: FrameSet) -> FrameFields:
    indices = tuple(int(i) for i in frame_set.indices)
    return {
        "frame_indices": indices,
        "frame_timestamps": tuple(float(t) for t in frame_set.timestamps),
        "effective_frames": len(indices),
        "pixels": int(frame_set.width) * int(frame_set.height),
    }


def response_row(cell: Cell, frame_set: FrameSet | None, response: VideoResponse) -> CellRow:
    """The stored row of one answered (or failed) model call."""
    status, answer = parsed_answer(cell.item, response)
    sent: FrameFields
    if frame_set is None:
        sent = {"effective_frames": 0, "pixels": None, "frame_indices": (), "frame_timestamps": ()}
    else:
        sent = _frame_fields(frame_set)
        if response.effective_frames is not None:
            sent["effective_frames"] = int(response.effective_frames)
        if response.pixels is not None:
            sent["pixels"] = int(response.pixels)
    probs = response.option_probs
    confidence = response.confidence
    if status.answered and cell.item.task_kind == TaskKind.MCQA and probs and answer in probs:
        confidence = probs[answer] if confidence is None else confidence
    if not status.answered or answer == NOANSWER:
        confidence = None
    return CellRow(
        **base_row(cell),
        **sent,
        status=status.value,
        error=response.error,
        raw_text=response.raw_text,
        answer=answer,
        confidence=confidence,
        option_probs=json.dumps(dict(sorted(probs.items()))) if probs else None,
        margin=option_margin(probs) if confidence is not None else None,
        visual_tokens=response.visual_tokens,
        scoring_rule=response.scoring_rule if status.answered else None,
        latency_s=response.latency_s,
        session_id=None,  # set when the sweep records the row (`SweepContext.record`)
        **_score_fields(cell.item, status, answer, response.raw_text),
    )


def checked_row(
    cell: Cell, frame_set: FrameSet | None, response: object, stats: JobStats
) -> CellRow:
    """The row of one response after the boundary check (`_response_check`): a field of a wrong
    type makes a `model_error` naming it; impossible values are nulled and counted."""
    try:
        clean, nulled = checked_response(response)
    except ResponseFieldError as exc:
        return failure_row(cell, Status.MODEL_ERROR, str(exc), frame_set)
    for reason, n in nulled.items():
        stats.nulled[reason] = stats.nulled.get(reason, 0) + n
    return response_row(cell, frame_set, clean)


@dataclass(frozen=True)
class PreparedJob:
    """A job's decoded frames, keyed by (config id, item key, repeat), and its media failures."""

    frame_sets: FrameSets
    failed: dict[str, tuple[Status, str]]
    stats: JobStats


@dataclass
class VideoJobRunner:
    """Runs jobs on one loaded backend, through a frame cache when `cache` is one."""

    backend: VideoLM
    batch_size: int = 1
    cache: FrameCache | None = None
    decodings: dict[int, DecodingSettings] = field(default_factory=dict)
    #: the protocol's decoding settings (`Protocol.decoding`); each repeat adds its seed
    decoding_base: DecodingSettings = field(default_factory=DecodingSettings)
    #: `--batch-size auto`: each batch key's size from its visual tokens and `free_memory()`
    auto_batch: bool = False
    free_memory: Callable[[], int | None] = lambda: None
    bytes_per_visual_token: int = DEFAULT_BYTES_PER_VISUAL_TOKEN
    #: the decoded frames held while batches fill across videos (`FRAMES_HELD_BYTES`)
    frames_held_bytes: int = FRAMES_HELD_BYTES
    #: per batch key: the size decided, and the bound an out-of-memory error set
    sizes: dict[BatchKey, int] = field(default_factory=dict)
    size_caps: dict[BatchKey, int] = field(default_factory=dict)

    def size_for(self, key: BatchKey, frame_set: FrameSet | None) -> int:
        """Decided once per key (`auto` reads the free memory then), lowered for good by an
        out-of-memory error."""
        if key not in self.sizes:
            self.sizes[key] = (
                auto_batch_size(
                    estimated_visual_tokens(frame_set),
                    self.bytes_per_visual_token,
                    self.free_memory(),
                )
                if self.auto_batch
                else self.batch_size
            )
        return min(self.sizes[key], self.size_caps.get(key, self.sizes[key]))

    def sizes_by_config(self, label_of: Mapping[str, str]) -> dict[str, int]:
        """The batch size each configuration ended with (by label; the smallest of its keys')."""
        out: dict[str, int] = {}
        for key, size in self.sizes.items():
            label = label_of.get(key[0], key[0])
            size = min(size, self.size_caps.get(key, size))
            out[label] = min(size, out.get(label, size))
        return dict(sorted(out.items()))

    def _decoding(self, seed: int) -> DecodingSettings:
        if seed not in self.decodings:
            self.decodings[seed] = repeat_decoding(self.decoding_base, seed)
        return self.decodings[seed]

    def _decode(
        self, job: VideoJob, stats: JobStats
    ) -> tuple[FrameSets, dict[str, tuple[Status, str]]]:
        """Frame sets keyed by `_pass_key`, and failures by cell id. A selection that cannot be
        replayed (`SelectionError`) stops the sweep: a wrong protocol, not a failure of this
        cell."""
        frame_sets: FrameSets = {}
        failed: dict[str, tuple[Status, str]] = {}
        video_cells = [c for c in job.cells if c.needs_video]
        if not video_cells:
            return frame_sets, failed
        from ..video import (
            MediaError,
            SelectionError,
            decode_for_configs,
            remember_questions,
            video_content_hash,
        )

        remember_questions(c.item for c in video_cells)  # a file whose ids repeat: by question

        start = time.perf_counter()
        if job.video_path is None:
            for cell in video_cells:
                failed[cell.cell_id] = (
                    Status.MEDIA_ERROR,
                    f"missing_file: no video file for video_id {job.video_id!r}",
                )
            return frame_sets, failed
        passes: dict[tuple[str, int], dict[str, Configuration]] = {}
        for cell in video_cells:
            key = _pass_key(cell)
            passes.setdefault(key, {})[cell.config.config_id] = cell.config
        errors: dict[tuple[str, int], str] = {}
        for (item_key, repeat), configs in passes.items():
            try:
                got = decode_for_configs(
                    job.video_path,
                    list(configs.values()),
                    item_key=item_key,
                    repeat=repeat,
                    cache=self.cache,
                )
            except MediaError as exc:
                errors[(item_key, repeat)] = f"{exc.reason}: {exc.detail or exc}"
                continue
            except SelectionError:
                raise
            except Exception as exc:  # a decoder bug must not stop the sweep either
                errors[(item_key, repeat)] = f"decode_error: {type(exc).__name__}: {exc}"
                continue
            for config_id, frame_set in got.items():
                frame_sets[(config_id, item_key, repeat)] = frame_set
        for cell in video_cells:
            key = _pass_key(cell)
            if key in errors:
                failed[cell.cell_id] = (Status.MEDIA_ERROR, errors[key])
            elif (cell.config.config_id, *key) not in frame_sets:
                failed[cell.cell_id] = (Status.MEDIA_ERROR, "decode_error: no frames returned")
        if len(errors) < len(passes):
            stats.warnings += duration_mismatches(job.video_path, video_cells)
        notice = self.cache.fault_notice() if self.cache is not None else None
        if notice is not None:  # an entry bypassed: said once, no cell's fault
            stats.warnings.append(notice)
        if job.hash_video and len(errors) < len(passes):
            try:
                stats.video_hash = video_content_hash(job.video_path)
            except (MediaError, OSError):
                stats.video_hash = None
        stats.decode_s += time.perf_counter() - start
        return frame_sets, failed

    def prepare(self, job: VideoJob) -> PreparedJob:
        """Decode a job's frames; thread-safe (the local executor decodes the next video in the
        background)."""
        stats = JobStats()
        frame_sets, failed = self._decode(job, stats)
        return PreparedJob(frame_sets, failed, stats)

    def run(
        self,
        job: VideoJob,
        stats: JobStats | None = None,
        should_stop: Callable[[], bool] | None = None,
        prepared: PreparedJob | None = None,
    ) -> Iterator[list[CellRow]]:
        """Rows per batch, as they are computed. Stops between batches when `should_stop()`."""
        stats = stats if stats is not None else JobStats()
        prepared = prepared if prepared is not None else self.prepare(job)
        frame_sets, failed = prepared.frame_sets, prepared.failed
        stats.decode_s += prepared.stats.decode_s
        stats.video_hash = prepared.stats.video_hash
        stats.warnings += prepared.stats.warnings
        if failed:
            yield [failure_row(c, *failed[c.cell_id]) for c in job.cells if c.cell_id in failed]
        runnable = [c for c in job.cells if c.cell_id not in failed]
        for start in range(0, len(runnable), self.batch_size):
            if should_stop is not None and should_stop():
                return
            batch = [
                (c, self.frames_of(c, frame_sets))
                for c in runnable[start : start + self.batch_size]
            ]
            yield from self.run_batch(batch, stats)

    def batch_key(self, cell: Cell, frame_set: FrameSet | None) -> BatchKey:
        """Cells that may share a model call: one configuration, task kind, decoding settings
        (the seed only under sampling) and frame geometry; the video does not matter."""
        decoding = self._decoding(cell.seed)
        if decoding.greedy:
            decoding = self._decoding(0)
        shape = None if frame_set is None else tuple(getattr(frame_set.array, "shape", ()))
        return (cell.config.config_id, cell.item.task_kind.value, decoding, shape)

    def run_batch(
        self, batch: Sequence[tuple[Cell, FrameSet | None]], stats: JobStats
    ) -> Iterator[list[CellRow]]:
        """Rows of one batch, as each model call returns. A call out of device memory is split in
        halves run in turn (counted); a single cell out of memory is a `model_error` that says
        so."""
        remaining, size = list(batch), len(batch)
        while remaining:
            part = remaining[:size]
            requests = [
                VideoRequest(
                    item=c.item,
                    frames=f,
                    decoding=self._decoding(c.seed),
                    max_pixels=_cell_max_pixels(c.config),
                )
                for c, f in part
            ]
            t0 = time.perf_counter()
            try:
                responses = self.backend.generate(requests)
                if len(responses) != len(requests):
                    raise RuntimeError(
                        f"backend returned {len(responses)} responses for {len(requests)} requests"
                    )
            except Exception as exc:  # a backend must not raise; if it does, record it
                stats.model_s += time.perf_counter() - t0
                if is_out_of_memory(exc):
                    stats.out_of_memory += 1
                    release_device_memory()
                    if len(part) > 1:
                        size = len(part) // 2
                        self.shrink(self.batch_key(*part[0]), size)
                        continue
                    error = f"out of memory at batch size 1: {type(exc).__name__}: {exc}"
                else:
                    error = f"{type(exc).__name__}: {exc}"
                stats.model_calls += len(requests)
                remaining = remaining[len(part) :]
                yield [failure_row(c, Status.MODEL_ERROR, error, f) for c, f in part]
                continue
            stats.model_s += time.perf_counter() - t0
            stats.model_calls += len(requests)
            remaining = remaining[len(part) :]
            yield [checked_row(c, f, r, stats) for (c, f), r in zip(part, responses, strict=True)]

    def shrink(self, key: BatchKey, size: int) -> None:
        """After an out-of-memory error: batches of `key` hold at most `size` cells for the
        session."""
        self.size_caps[key] = min(size, self.size_caps.get(key, size))

    @staticmethod
    def frames_of(cell: Cell, frame_sets: FrameSets) -> FrameSet | None:
        if not cell.needs_video:
            return None
        return frame_sets[(cell.config.config_id, *_pass_key(cell))]


def _pass_key(cell: Cell) -> tuple[str, int]:
    """The decode pass of a cell's frames: one per video (deterministic policies), per item and
    repeat for `random` (each repeat draws its own), per item for `selection` (same frames every
    repeat)."""
    name = cell.config.sampling.name
    if name in PER_ITEM_SAMPLING_POLICIES:
        return (cell.item.item_id, cell.draw if name == "random" else 0)
    return ("", 0)
