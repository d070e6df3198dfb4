"""`run_sweep`: plan, skip what is finished, run the rest, commit as results arrive, export. The
driver is the only writer of the run store, whichever executor runs the model."""

from __future__ import annotations

import dataclasses
import signal
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Never

from ...core.errors import ItemscaleError, renamed_keywords
from ...core.responses import (
    EXTRACTOR_VERSION,
    Status,
    read_provenance,
)
from ..items import Item
from ..models import PROMPT_TEMPLATE_VERSION, FrameTransport, serving_of, transport_of
from ..protocol import Configuration, Protocol
from ..store import STORE_FILE, RunStore, StoreError, open_store, run_dir_lock, utc_now
from ._batching import run_across_videos
from ._budget import BudgetNotHonouredError, budget_message, budget_verdict, probe_pair
from ._context import (
    BackendFactory,
    RayActorsLostError,
    RuntimeBackendFactory,
    SweepContext,
    SweepResult,
    SweepStop,
    VideoNotOnNodeError,
    default_backend_factory,
)
from ._execute import VideoJob, VideoJobRunner
from ._loaders import load_benchmark_items
from ._memory import DEFAULT_BYTES_PER_VISUAL_TOKEN, free_memory_bytes
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
from ._rerun_check import RerunCheck
from ._rerun_run import run_rerun_check
from ._run_file import carry_over, imported_rows, run_level, run_record
from ._run_settings import checked_settings, session_batches
from ._selections import (
    check_selections,
    session_selections,
    superseded_selections,
    superseded_warning,
)
from ._stack import Numerics, start_session

if TYPE_CHECKING:
    from tqdm import tqdm

    from ..video import FrameCache, VideoInfo

Executor = Literal["local", "ray"]


@contextmanager
def _damage_is_typed(run_dir: Path) -> Iterator[None]:
    """A store page that turns out damaged mid-sweep is a `StoreError`, not a traceback."""
    import sqlite3

    from ..store import full_store_error, is_full

    try:
        yield
    except sqlite3.DatabaseError as exc:
        if is_full(exc):  # the disk, not the store: every committed cell is intact
            raise full_store_error(run_dir / STORE_FILE, exc) from exc
        raise StoreError(
            f"{run_dir / STORE_FILE}: the run store is damaged ({exc}); the cells committed "
            "before the damage are kept"
        ) from exc


def check_models(protocol: Protocol, *, device: str | None = None) -> None:
    """Every model entry's backend options (and `device`, when given) checked without loading a
    model."""
    from ..models import BACKENDS, check_backend_options, check_device

    for entry in protocol.models:
        check_backend_options(entry)
    if device is not None and any(BACKENDS[m.backend].on_device for m in protocol.models):
        check_device(device)


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


def _progress(total: int, enabled: bool) -> tqdm[Never]:
    from tqdm import tqdm

    # `delay`: a resume with every cell done prints one sentence, not an empty bar
    return tqdm(
        total=total,
        unit="cell",
        file=sys.stderr,
        disable=not enabled,
        dynamic_ncols=True,
        smoothing=0.1,
        delay=0.5,
    )


def _run_local(context: SweepContext) -> None:
    for entry in context.protocol.models:
        if context.stop.is_set():
            return
        if context.finished_without_loading(entry):
            continue
        context.expect(entry)
        backend = context.factory(entry, context.device, context.load_batch_size)
        context.bar.set_description_str(entry.name, refresh=bool(context.bar.total))
        context.bar.unpause()  # the loading time is no cell's: keep it out of the rate and ETA
        runner: VideoJobRunner | None = None
        try:
            spec = backend.spec
            context.loaded(entry, spec, backend)
            cells, jobs = context.plan(entry, spec.spec_id)
            # a served model gets `requests_in_flight` requests at once (else `--concurrency`
            # does nothing at batch size 1)
            serving = serving_of(backend)
            # `auto` sizes only a model held here (a served model's memory is the server's)
            local = serving.requests_in_flight == 1 and not serving.probes_first
            runner = VideoJobRunner(
                backend,
                batch_size=max(context.batch_size, serving.requests_in_flight),
                cache=context.frame_cache,
                decoding_base=context.protocol.decoding,
                auto_batch=context.auto_batch and local,
                free_memory=lambda: free_memory_bytes(context.device),
                bytes_per_visual_token=(
                    serving.bytes_per_visual_token or DEFAULT_BYTES_PER_VISUAL_TOKEN
                ),
            )
            if serving.probes_first:
                jobs = _probe(context, runner, entry.name, jobs)
                jobs = _probe_budget(context, runner, entry.name, jobs)
            run_across_videos(context, runner, jobs)
            if context.rerun_check is not None and not context.stop.is_set():
                run_rerun_check(context, backend, entry.name, cells)
        finally:
            if runner is not None:
                labels = {p.config_id: p.config.label for p in context.configs}
                used = runner.sizes_by_config(labels)
                if used:
                    context.result.batch_sizes[entry.name] = used
            context.backend_notes(entry.name, backend)
            backend.close()


class ServerRefusedError(ItemscaleError, RuntimeError):
    """A served model refused the sweep's first request: every cell would fail alike, so the
    sweep stops with the server's message (exit status 1; the cell is stored and tried again on
    resume)."""

    exit_code: ClassVar[int] = 1


def _probe(
    context: SweepContext, runner: VideoJobRunner, model: str, jobs: Sequence[VideoJob]
) -> list[VideoJob]:
    """Run the first cell with frames alone; `ServerRefusedError` when the server refuses it."""
    for position, job in enumerate(jobs):
        cell = next((c for c in job.cells if c.needs_video), None)
        if cell is None:
            continue
        probe_job = dataclasses.replace(job, cells=(cell,))
        rows = [row for batch in runner.run(probe_job) for row in batch]
        context.record(rows)
        (row,) = rows
        if row.status in (Status.MODEL_ERROR.value, Status.TIMEOUT.value):
            what = (
                "did not answer the first request in time"
                if row.status == Status.TIMEOUT.value
                else "refused the first request"
            )
            raise ServerRefusedError(
                f"model {model!r}: the server {what} ({cell.config.label}, item "
                f"{cell.item.item_id}), so the sweep stopped before running the rest: {row.error}"
            )
        rest = dataclasses.replace(job, cells=tuple(c for c in job.cells if c is not cell))
        return [*jobs[:position], rest, *jobs[position + 1 :]]
    return list(jobs)


def _probe_budget(
    context: SweepContext, runner: VideoJobRunner, model: str, jobs: Sequence[VideoJob]
) -> list[VideoJob]:
    """Run one item at the smallest and the largest frame budget first; `BudgetNotHonouredError`
    when the visual tokens do not grow with the frames (unless the session accepts it)."""
    pending = [c for job in jobs for c in job.cells]
    pair = probe_pair(pending)
    if pair is None:
        return list(jobs)
    position = next(p for p, job in enumerate(jobs) if pair[0] in job.cells)
    job = jobs[position]
    rows = [row for batch in runner.run(dataclasses.replace(job, cells=pair)) for row in batch]
    context.record(rows)
    by_cell = {row.cell_id: row for row in rows}
    record = budget_verdict(by_cell[pair[0].cell_id], by_cell[pair[1].cell_id])
    record["accepted"] = context.result.accept_budget_cap
    context.result.budget_probe[model] = record
    if record["honoured"] is False:
        message = budget_message(model, record)
        if not context.result.accept_budget_cap:
            raise BudgetNotHonouredError(message)
        context.result.warnings.append(f"accepted with --accept-budget-cap: {message}")
    rest = dataclasses.replace(job, cells=tuple(c for c in job.cells if c not in pair))
    return [*jobs[:position], rest, *jobs[position + 1 :]]


def load_sweep_items(
    protocol: Protocol,
    *,
    items: Sequence[Item] | None = None,
    item_filter: Callable[[Item], bool] | Collection[str] | None = None,
    limit: int | None = None,
) -> list[Item]:
    source = list(items) if items is not None else load_benchmark_items(protocol.benchmark)
    return select_items(source, item_filter=item_filter, limit=limit)


#: What stops a sweep before its cells are run, after the table is exported.
_Stopped = ServerRefusedError | BudgetNotHonouredError | RayActorsLostError | VideoNotOnNodeError


@renamed_keywords(num_workers="workers")
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
    batch_size: int | Literal["auto"] = 1,
    backend_factory: BackendFactory | None = None,
    frame_cache: FrameCache | None = None,
    workers: int | None = None,
    ray_address: str | None = None,
    progress: bool = True,
    stop: SweepStop | None = None,
    provenance: Mapping[str, Any] | None = None,
    accept_budget_cap: bool = False,
    numerics: Numerics | None = None,
    rerun_check: RerunCheck | None = None,
) -> SweepResult:
    """Run (or resume) a protocol's sweep into `run_dir` (default: the protocol's output).

    `extra_configs` adds configurations (an `ExtraConfig` may name its series and items);
    `item_filter` keeps items by predicate or id; `items` replaces the benchmark loader. Cells
    stored with a failure status run again only with `retry_errors`. `ray_address`: the Ray
    cluster (default: Ray's rule, `RAY_ADDRESS` first). On SIGINT (or `stop.set()`) the cells in
    flight finish, everything is committed and exported, and `result.interrupted` is true.
    `Numerics(deterministic=True)` needs batch size 1. `rerun_check` runs a seeded sample of each
    model's finished cells again (local executor only), stored as reruns.
    """
    run = checked_settings(batch_size, executor, limit, retry_errors, numerics)
    if rerun_check is not None and executor != "local":
        raise ValueError("a rerun check runs on the local executor (it reuses the loaded model)")
    t0, started = time.perf_counter(), utc_now()
    out_dir = Path(run_dir if run_dir is not None else protocol.output)
    if backend_factory is None or isinstance(backend_factory, RuntimeBackendFactory):
        # a bad option, or a missing device, stops before a store exists (Ray actors check theirs)
        check_models(protocol, device=device if executor == "local" else None)
    chosen = load_sweep_items(protocol, items=items, item_filter=item_filter, limit=limit)
    configs = planned_configs(protocol.configurations(), list(extra_configs or ()))
    # a bad selection stops before any model; fewer distinct frames than the budget: a cap
    configs, selections = check_selections(configs, chosen)
    stop = stop if stop is not None else SweepStop()
    result = SweepResult(out_dir, selections=selections, accept_budget_cap=accept_budget_cap)
    # a damaged run.json stops the sweep before anything is created: the export would lose it
    read_provenance(out_dir)
    with (
        run_dir_lock(out_dir),
        _damage_is_typed(out_dir),
        open_store(out_dir) as store,
        stop_on_sigint(stop),
    ):
        read_provenance(out_dir)  # again under the lock (a writer may have come between)
        _note_superseded(result, store.stored_configs(), configs)
        session_id = start_session(
            store,
            protocol,
            result.warnings,
            run.numerics,
            {
                **run.settings,
                "items": len(chosen),
                "configs": [p.config.label for p in configs],
                "device": device,
                "batch_size": batch_size,
                "selections": session_selections(selections),
            },
        )
        bar = _progress(0, progress)
        context = SweepContext(
            protocol=protocol,
            store=store,
            items=chosen,
            configs=configs,
            done=store.done_cell_ids(retry_errors=retry_errors),
            retry_errors=retry_errors,
            known_hashes={v for v, h in store.video_hashes().items() if h},
            batch_size=run.batch_size,
            auto_batch=run.auto_batch,
            device=device,
            factory=backend_factory or default_backend_factory,
            stop=stop,
            result=result,
            bar=bar,
            frame_cache=frame_cache,
            workers=workers,
            ray_address=ray_address,
            session_id=session_id,
            rerun_check=rerun_check,
        )
        refused = _execute(context, session_id, executor, progress)
        result.interrupted = stop.is_set()
        result.wall_s = time.perf_counter() - t0
        whole_run = run_level(run.settings, store.sessions())
        record = run_record(protocol, configs, result, started=started, settings=whole_run)
        # the caller's own keys last (they may replace the sweep's)
        payload = carry_over(out_dir, {**record, **dict(provenance or {})})
        exported = time.perf_counter()
        result.table = store.export(
            out_dir, payload, prefer=context.planned_ids, imported=imported_rows(out_dir)
        )
        result.store_s += time.perf_counter() - exported
    if refused is not None:
        raise refused
    return result


def _execute(
    context: SweepContext, session_id: int, executor: Executor, progress: bool
) -> _Stopped | None:
    """Run the session's cells and end the session with its outcome; a refusal is returned, to be
    raised after the export."""
    stop, result, bar = context.stop, context.result, context.bar
    outcome = "completed"
    refused: _Stopped | None = None
    try:
        if executor == "local":
            _run_local(context)
        else:
            from ._ray import run_ray

            run_ray(context)
    except KeyboardInterrupt:
        stop.set()
    except (ServerRefusedError, BudgetNotHonouredError) as exc:  # exported, then raised
        refused = exc
        outcome = "refused"
    except (RayActorsLostError, VideoNotOnNodeError) as exc:  # the same
        refused = exc
        outcome = "failed"
    finally:
        if bar.n:  # the final count shown even when it came within the bar's `delay`
            bar.refresh()
        bar.close()
        if progress and result.planned and not result.ran and not stop.is_set():
            print(f"all {result.planned} cells already done; nothing to run", file=sys.stderr)
        if stop.is_set():
            outcome = "interrupted"
        context.store.end_session(session_id, outcome, session_batches(result))
    return refused


def _note_superseded(
    result: SweepResult,
    stored: Sequence[tuple[str, str, str, int]],
    configs: Sequence[PlannedConfig],
) -> None:
    """Record (and warn of) the stored selection configurations an edited file replaced."""
    result.superseded_selections = superseded_selections(stored, configs)
    for config_id, superseded in result.superseded_selections.items():
        result.warnings.append(superseded_warning(config_id, superseded))


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
    """The plan's cost without loading any model: `--dry-run`. Specs are unknown before a model
    loads, so a cell counts as done when the store holds its row key; visual tokens are estimated
    from each video's probed size."""
    check_models(protocol)
    chosen = load_sweep_items(protocol, items=items, item_filter=item_filter, limit=limit)
    configs = planned_configs(protocol.configurations(), list(extra_configs or ()))
    configs, _ = check_selections(configs, chosen)  # the run's checks: a bad file is no plan
    out_dir = Path(run_dir if run_dir is not None else protocol.output)
    stored: set[tuple[str, str, str, int]] = set()
    store_file = out_dir / STORE_FILE
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
    probes: dict[str, VideoInfo | None] = {}

    def probe(cell: Cell) -> VideoInfo | None:
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

    def video_frames(cell: Cell) -> int | None:
        info = probe(cell)
        return None if info is None else int(info.video_frames)

    image_parts = {m.name for m in protocol.models if transport_of(m) == FrameTransport.IMAGE_PARTS}
    return estimate_cost(
        cells,
        is_done=lambda c: (c.model, c.item.item_id, c.config.config_id, c.repeat) in stored,
        frame_size=frame_size,
        video_frames=video_frames,
        as_images=lambda c: c.model in image_parts,
    )
