"""`run_sweep`: plan, skip what is finished, run the rest, commit as results arrive, export.

The driver (this process) is the only writer of the run store, whichever executor runs the
model: a crash loses at most the cells in flight, and every rerun recomputes nothing finished.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, Literal

import pandas as pd

from ..items import Item
from ..models import PROMPT_TEMPLATE_VERSION, BackendSpec, VideoLM
from ..protocol import Configuration, ModelEntry, Protocol
from ..responses import EXTRACTOR_VERSION, RESPONSES_FILE, RUN_FILE, Status, read_responses
from ..store import CellRow, RunStore, StoreError, open_store, run_dir_lock, utc_now
from ._execute import (
    JobStats,
    PreparedJob,
    VideoJob,
    VideoJobRunner,
    decoding_settings,
    group_by_video,
)
from ._loaders import load_benchmark_items
from ._plan import (
    Cell,
    ExtraConfig,
    ModelPlanInfo,
    PlanCost,
    PlannedConfig,
    estimate_cost,
    plan_cells,
    planned_configs,
    select_items,
)
from ._provenance import decoder_info, host_info, tool_info

#: Builds a loaded backend from a model entry, a device and a batch size. Must be picklable for
#: the Ray executor (a module-level function).
BackendFactory = Callable[[ModelEntry, str, int], VideoLM]
Executor = Literal["local", "ray"]

#: Exit status of an interrupted sweep (128 + SIGINT), as shells report it.
INTERRUPTED_EXIT = 130


@contextmanager
def _damage_is_typed(run_dir: Path) -> Iterator[None]:
    """A store page that turns out damaged mid-sweep is a `StoreError`, not a traceback."""
    import sqlite3

    try:
        yield
    except sqlite3.DatabaseError as exc:
        raise StoreError(
            f"{run_dir / 'store.sqlite'}: the run store is damaged ({exc}); the cells committed "
            "before the damage are kept"
        ) from exc


def check_models(protocol: Protocol) -> None:
    """Every model entry's backend options, validated without loading a model."""
    from ..models import check_backend_options

    for entry in protocol.models:
        check_backend_options(entry)


def default_backend_factory(entry: ModelEntry, device: str, batch_size: int) -> VideoLM:
    from ..models import load_backend

    return load_backend(entry, device=device, batch_size=batch_size)


@dataclass(frozen=True)
class RuntimeBackendFactory:
    """Loads backends with the served-model runtime settings a user chose on the command line
    (requests in flight, timeout, retries). Like batch size, none of them is part of a cell's
    identity. A frozen dataclass, so Ray can ship it to its actors."""

    concurrency: int = 8
    timeout_s: float = 120.0
    max_retries: int = 4

    def __call__(self, entry: ModelEntry, device: str, batch_size: int) -> VideoLM:
        from ..models import load_backend

        return load_backend(
            entry,
            device=device,
            batch_size=batch_size,
            concurrency=self.concurrency,
            timeout_s=self.timeout_s,
            max_retries=self.max_retries,
        )


@dataclass
class SweepResult:
    """What a sweep did. `table` is the exported response table (all cells in the store)."""

    run_dir: Path
    planned: int = 0
    skipped: int = 0
    ran: int = 0
    model_calls: int = 0
    by_status: dict[str, int] = field(default_factory=dict)
    #: models whose cells were all done under the spec they loaded with before: not loaded
    not_loaded: list[str] = field(default_factory=list)
    interrupted: bool = False
    decode_s: float = 0.0
    model_s: float = 0.0
    wall_s: float = 0.0
    table: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def exit_code(self) -> int:
        return INTERRUPTED_EXIT if self.interrupted else 0


class SweepStop:
    """A stop request shared by the driver loop and the SIGINT handler."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()


@contextmanager
def stop_on_sigint(stop: SweepStop) -> Iterator[None]:
    """First Ctrl-C: finish the cells in flight, commit, export. Second: abort at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        print(
            "\nitemscale sweep: stopping after the cells in flight (Ctrl-C again to abort)",
            file=sys.stderr,
        )

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _progress(total: int, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(
        total=total,
        unit="cell",
        file=sys.stderr,
        disable=not enabled,
        dynamic_ncols=True,
        smoothing=0.1,
    )


@dataclass
class _Session:
    """Everything the executors share while a sweep runs."""

    protocol: Protocol
    store: RunStore
    items: list[Item]
    configs: list[PlannedConfig]
    done: set[str]
    known_hashes: set[str]
    batch_size: int
    device: str
    factory: BackendFactory
    stop: SweepStop
    result: SweepResult
    bar: Any
    frame_cache: Any = None
    num_workers: int | None = None
    planned_ids: set[str] = field(default_factory=set)
    retry_errors: bool = False
    _expected: int = 0

    def _cells(self, entry: ModelEntry, spec_id: str) -> list[Cell]:
        return plan_cells(
            ModelPlanInfo(entry.name, spec_id),
            self.items,
            self.configs,
            repeat_seeds=self.protocol.repeat_seeds,
            prompt_template_version=PROMPT_TEMPLATE_VERSION,
            decoding_for_seed=lambda s: decoding_settings(self.protocol.decoding, s).canonical(),
            extractor_version=EXTRACTOR_VERSION,
        )

    def _fingerprint(self, entry: ModelEntry) -> str | None:
        # a caller's own factory may build anything from an entry: only the loaders whose spec
        # follows from the entry, the device and the folder are trusted with a fingerprint
        if self.factory is not default_backend_factory and not isinstance(
            self.factory, RuntimeBackendFactory
        ):
            return None
        from ..models import load_fingerprint

        return load_fingerprint(entry, device=self.device)

    def finished_without_loading(self, entry: ModelEntry) -> bool:
        """True, and the entry's cells counted as done, when an earlier load of this very
        model (same entry, device and checkpoint folder) produced a spec whose every planned
        cell is finished: a no-op resume then costs no model load."""
        fingerprint = self._fingerprint(entry)
        spec_id = None if fingerprint is None else self.store.loaded_spec(fingerprint)
        if spec_id is None:
            return False
        if any(c.cell_id not in self.done for c in self._cells(entry, spec_id)):
            return False
        self.plan(entry, spec_id)
        self.result.not_loaded.append(entry.name)
        return True

    def expect(self, entry: ModelEntry) -> None:
        """Before a model loads: grow the bar's total by the cells it will likely run (those
        whose item, configuration and repeat no earlier spec finished), so the bar has a
        total while the weights load; `plan` then puts the exact count in its place."""
        done = self.store.done_row_keys(entry.name, retry_errors=self.retry_errors)
        cells = self._cells(entry, "not-loaded-yet")
        self._expected = sum(
            (c.item.item_id, c.config.config_id, c.repeat) not in done for c in cells
        )
        self.bar.total = (self.bar.total or 0) + self._expected
        self.bar.set_description_str(f"loading {entry.name}")

    def loaded(self, entry: ModelEntry, spec: BackendSpec) -> None:
        """Record a freshly loaded backend's spec (and what it was loaded from)."""
        self.store.record_model(spec.spec_id, entry.name, spec.model_dump(mode="json"))
        fingerprint = self._fingerprint(entry)
        if fingerprint is not None:
            self.store.record_load(fingerprint, spec.spec_id, entry.name)

    def plan(self, entry: ModelEntry, spec_id: str) -> tuple[list[Cell], list[VideoJob]]:
        cells = self._cells(entry, spec_id)
        self.planned_ids.update(c.cell_id for c in cells)
        pending = [c for c in cells if c.cell_id not in self.done]
        self.result.planned += len(cells)
        self.result.skipped += len(cells) - len(pending)
        self.bar.total = (self.bar.total or 0) - self._expected + len(pending)
        self._expected = 0
        self.bar.refresh()
        return cells, group_by_video(pending, self.known_hashes)

    def record(self, rows: Sequence[CellRow]) -> None:
        self.store.record(rows)
        self.result.ran += len(rows)
        for row in rows:
            self.result.by_status[row.status] = self.result.by_status.get(row.status, 0) + 1
        self.bar.update(len(rows))

    def record_stats(self, job: VideoJob, stats: JobStats) -> None:
        self.result.decode_s += stats.decode_s
        self.result.model_s += stats.model_s
        self.result.model_calls += stats.model_calls
        if job.hash_video:
            self.store.record_video(job.video_id, job.video_path, stats.video_hash)
            if stats.video_hash:
                self.known_hashes.add(job.video_id)


def _run_local(session: _Session) -> None:
    for entry in session.protocol.models:
        if session.stop.is_set():
            return
        if session.finished_without_loading(entry):
            continue
        session.expect(entry)
        backend = session.factory(entry, session.device, session.batch_size)
        session.bar.set_description_str(entry.name)
        session.bar.unpause()  # the loading time is no cell's: keep it out of the rate and ETA
        try:
            spec = backend.spec
            session.loaded(entry, spec)
            _, jobs = session.plan(entry, spec.spec_id)
            runner = VideoJobRunner(
                backend,
                batch_size=session.batch_size,
                cache=session.frame_cache,
                decoding_base=session.protocol.decoding,
            )
            _run_jobs(session, runner, jobs)
        finally:
            backend.close()


def _run_jobs(session: _Session, runner: VideoJobRunner, jobs: Sequence[VideoJob]) -> None:
    """Run jobs in order, decoding the next video in a background thread while the model
    works on the current one, so decoding costs no wall time when the model is the slower."""
    if not jobs:
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="itemscale-decode") as pool:
        ahead: Future[PreparedJob] | None = pool.submit(runner.prepare, jobs[0])
        for position, job in enumerate(jobs):
            if session.stop.is_set() or ahead is None:
                break
            prepared = ahead.result()
            following = position + 1
            ahead = pool.submit(runner.prepare, jobs[following]) if following < len(jobs) else None
            stats = JobStats()
            for rows in runner.run(job, stats, session.stop.is_set, prepared=prepared):
                session.record(rows)
            session.record_stats(job, stats)
        if ahead is not None:
            ahead.cancel()


def load_sweep_items(
    protocol: Protocol,
    *,
    items: Sequence[Item] | None = None,
    item_filter: Callable[[Item], bool] | Collection[str] | None = None,
    limit: int | None = None,
) -> list[Item]:
    source = list(items) if items is not None else load_benchmark_items(protocol.benchmark)
    return select_items(source, item_filter=item_filter, limit=limit)


def run_sweep(
    protocol: Protocol,
    *,
    executor: Executor = "local",
    limit: int | None = None,
    retry_errors: bool = False,
    extra_configs: Sequence[Configuration | ExtraConfig] | None = None,
    item_filter: Callable[[Item], bool] | Collection[str] | None = None,
    items: Sequence[Item] | None = None,
    run_dir: str | Path | None = None,
    device: str = "cpu",
    batch_size: int = 1,
    backend_factory: BackendFactory | None = None,
    frame_cache: Any = None,
    num_workers: int | None = None,
    progress: bool = True,
    stop: SweepStop | None = None,
    provenance: Mapping[str, Any] | None = None,
) -> SweepResult:
    """Run (or resume) a protocol's sweep into `run_dir` (default: the protocol's output).

    `extra_configs` adds configurations to the grid (an `ExtraConfig` can name its own series
    and restrict itself to some items); `item_filter` keeps items by predicate or by id; `items`
    replaces the benchmark loader. Finished cells are never run again; cells stored with a
    failure status are re-run only with `retry_errors`. On SIGINT (or `stop.set()`) the cells
    in flight finish, everything is committed and exported, and `result.interrupted` is true.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if executor not in ("local", "ray"):
        raise ValueError(f"executor must be 'local' or 'ray', got {executor!r}")
    t0 = time.perf_counter()
    started = utc_now()
    out_dir = Path(run_dir if run_dir is not None else protocol.output)
    if backend_factory is None or isinstance(backend_factory, RuntimeBackendFactory):
        check_models(protocol)  # a bad option stops here, before a store or session exists
    chosen = load_sweep_items(protocol, items=items, item_filter=item_filter, limit=limit)
    configs = planned_configs(protocol.configurations(), list(extra_configs or ()))
    stop = stop if stop is not None else SweepStop()
    result = SweepResult(run_dir=out_dir)
    with (
        run_dir_lock(out_dir),
        _damage_is_typed(out_dir),
        open_store(out_dir) as store,
        stop_on_sigint(stop),
    ):
        session_id = store.start_session(
            {
                "executor": executor,
                "limit": limit,
                "retry_errors": retry_errors,
                "items": len(chosen),
                "configs": [p.config.label for p in configs],
                "device": device,
                "batch_size": batch_size,
            }
        )
        bar = _progress(0, progress)
        session = _Session(
            protocol=protocol,
            store=store,
            items=chosen,
            configs=configs,
            done=store.done_cell_ids(retry_errors=retry_errors),
            retry_errors=retry_errors,
            known_hashes={v for v, h in store.video_hashes().items() if h},
            batch_size=batch_size,
            device=device,
            factory=backend_factory or default_backend_factory,
            stop=stop,
            result=result,
            bar=bar,
            frame_cache=frame_cache,
            num_workers=num_workers,
        )
        outcome = "completed"
        try:
            if executor == "local":
                _run_local(session)
            else:
                from ._ray import run_ray

                run_ray(session)
        except KeyboardInterrupt:
            stop.set()
        finally:
            bar.close()
            if stop.is_set():
                outcome = "interrupted"
            store.end_session(session_id, outcome)
        result.interrupted = stop.is_set()
        result.wall_s = time.perf_counter() - t0
        payload = {
            "protocol": protocol.model_dump(mode="json"),
            "tool": tool_info(),
            "decoder": decoder_info(),
            "host": host_info(),
            "prompt_template_version": PROMPT_TEMPLATE_VERSION,
            "extractor_version": EXTRACTOR_VERSION,
            "times": {"started": started, "finished": utc_now()},
            "sweep": {
                "executor": executor,
                "limit": limit,
                "retry_errors": retry_errors,
                "interrupted": result.interrupted,
                "planned_cells": result.planned,
                "skipped_cells": result.skipped,
                "ran_cells": result.ran,
                "by_status": dict(result.by_status),
                "extra_configs": [
                    {
                        "config_id": p.config_id,
                        "label": p.config.label,
                        "series": p.series,
                        "config": p.config.model_dump(mode="json"),
                    }
                    for p in configs[len(protocol.configurations()) :]
                ],
            },
            **dict(provenance or {}),
        }
        payload = _carry_over(out_dir, payload)
        result.table = store.export(
            out_dir, payload, prefer=session.planned_ids, imported=imported_rows(out_dir)
        )
    return result


def imported_rows(run_dir: Path) -> pd.DataFrame | None:
    """The rows of the run's response table that no sweep wrote (they came by `import`: no
    cell id), which every export keeps."""
    path = run_dir / RESPONSES_FILE
    if not path.is_file():
        return None
    try:
        table = read_responses(path)
    except (OSError, ValueError) as exc:
        raise StoreError(
            f"{path}: cannot read the run's response table to keep its imported rows ({exc}); "
            "nothing was exported (the store keeps every cell)"
        ) from exc
    rows = table[table["cell_id"].isna()]
    return rows.reset_index(drop=True) if len(rows) else None


#: run.json keys every export recomputes (from this sweep or from the store).
_RECOMPUTED_KEYS = frozenset(
    {"schema_version", "model_specs", "video_content_hashes", "sessions", "store"}
)


def _carry_over(run_dir: Path, payload: dict[str, Any]) -> dict[str, Any]:
    """Keep what earlier writers put in run.json (e.g. `interventions` by `itemscale intervene`)
    and this sweep does not set, so a later sweep does not erase another command's provenance.
    The previous run's own `times`/`sweep` are replaced by this one's (sessions keep them all)."""
    previous_file = run_dir / RUN_FILE
    if not previous_file.is_file():
        return payload
    try:
        previous = json.loads(previous_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return payload  # an unreadable run.json is rewritten from the store
    if not isinstance(previous, dict):
        return payload
    kept = {k: v for k, v in previous.items() if k not in payload and k not in _RECOMPUTED_KEYS}
    return {**kept, **payload}


def plan_sweep(
    protocol: Protocol,
    *,
    limit: int | None = None,
    retry_errors: bool = False,
    extra_configs: Sequence[Configuration | ExtraConfig] | None = None,
    item_filter: Callable[[Item], bool] | Collection[str] | None = None,
    items: Sequence[Item] | None = None,
    run_dir: str | Path | None = None,
) -> PlanCost:
    """The plan's cost without loading any model: `--dry-run`.

    Backend specs are not known before a model loads, so a cell counts as done here when the
    store holds a result for its row (model, item, configuration, repeat); the real run decides
    by full cell identity. Visual tokens are estimated from each video's probed size.
    """
    check_models(protocol)
    chosen = load_sweep_items(protocol, items=items, item_filter=item_filter, limit=limit)
    configs = planned_configs(protocol.configurations(), list(extra_configs or ()))
    out_dir = Path(run_dir if run_dir is not None else protocol.output)
    stored: set[tuple[str, str, str, int]] = set()
    store_file = out_dir / "store.sqlite"
    if store_file.exists():
        with RunStore(store_file) as store:
            frame = store.cells_frame()
        if retry_errors:
            frame = frame[frame["status"].isin([Status.OK.value, Status.NOANSWER.value])]
        stored = {
            (str(m), str(i), str(c), int(r))
            for m, i, c, r in zip(
                frame["model"], frame["item_id"], frame["config_id"], frame["repeat"], strict=True
            )
        }
    cells: list[Cell] = []
    for entry in protocol.models:
        cells += plan_cells(
            ModelPlanInfo(entry.name, "dry-run"),
            chosen,
            configs,
            repeat_seeds=protocol.repeat_seeds,
            prompt_template_version=PROMPT_TEMPLATE_VERSION,
            decoding_for_seed=lambda s: {"seed": s},
            extractor_version=EXTRACTOR_VERSION,
        )
    probes: dict[str, Any] = {}

    def probe(cell: Cell) -> Any:
        path = cell.item.video_path
        if path is None:
            return None
        if path not in probes:
            from ..video import MediaError, probe_video

            try:
                probes[path] = probe_video(path)
            except (MediaError, OSError):
                probes[path] = None
        return probes[path]

    def frame_size(cell: Cell) -> tuple[int, int] | None:
        info = probe(cell)
        if info is None:
            return None
        from ..video import target_size

        return target_size(cell.config, int(info.height), int(info.width))

    def n_frames(cell: Cell) -> int | None:
        info = probe(cell)
        return None if info is None else int(info.n_frames)

    return estimate_cost(
        cells,
        is_done=lambda c: (c.model, c.item.item_id, c.config.config_id, c.repeat) in stored,
        frame_size=frame_size,
        n_frames=n_frames,
    )
