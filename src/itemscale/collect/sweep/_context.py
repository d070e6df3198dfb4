"""What both executors share while a sweep runs: its context, its result, and the backend
factories. Kept apart from the orchestration (`_runner`), so the Ray executor (`_ray`) knows the
context without knowing the orchestration that loads it: one direction, no circle."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Never

import pandas as pd

from ...core.errors import ItemscaleError
from ...core.responses import ANSWERED_STATUSES, EXTRACTOR_VERSION
from ..items import Item
from ..models import PROMPT_TEMPLATE_VERSION, BackendSpec, VideoLM, usage_of
from ..protocol import ModelEntry, Protocol
from ..store import CellRow, RunStore
from ._budget import TokenRecord, token_record, unfit_cells
from ._execute import JobStats, VideoJob, group_by_video, repeat_decoding
from ._plan import Cell, ModelPlanInfo, PlannedConfig, plan_cells
from ._records import BudgetProbeRecord, SelectionRecord, SupersededSelection
from ._rerun_check import RerunCheck
from ._stack import model_as_loaded

if TYPE_CHECKING:
    from tqdm import tqdm

    from ..video import FrameCache

#: Builds a loaded backend from a model entry, a device and a batch size (picklable for Ray).
BackendFactory = Callable[[ModelEntry, str, int], VideoLM]

#: Exit status of an interrupted sweep (128 + SIGINT), as shells report it.
INTERRUPTED_EXIT = 130
#: Exit status of a sweep whose cells run this time failed more often than `FAILED_SHARE_LIMIT`:
#: everything is stored, but a script must not take it for a result.
FAILED_CELLS_EXIT = 3
FAILED_SHARE_LIMIT = 0.25


def default_backend_factory(entry: ModelEntry, device: str, batch_size: int) -> VideoLM:
    from ..models import load_backend

    return load_backend(entry, device=device, batch_size=batch_size)


@dataclass(frozen=True)
class RuntimeBackendFactory:
    """Loads backends with the served-model runtime settings chosen on the command line (none of
    them part of a cell's identity); frozen, so Ray can ship it to its actors."""

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


class RayActorsLostError(ItemscaleError, RuntimeError):
    """Every actor of a model was lost and none could be started again; the stored cells are
    kept. Exit status 1: the run failed, not its input."""

    exit_code: ClassVar[int] = 1


class RayUnreachableError(ItemscaleError, RuntimeError):
    """`--ray-address` (or `RAY_ADDRESS`) names a host and port nothing answers on (`ray.init`
    would wait there without a word). Exit status 2: the address is the user's input."""

    exit_code: ClassVar[int] = 2


class VideoNotOnNodeError(ItemscaleError, RuntimeError):
    """A video the driver reads is not readable on an actor's Ray node (every node must see the
    videos at the same paths): the sweep stops before storing a false `media_error`."""


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
    #: model calls that ran out of device memory (each halved and run again)
    out_of_memory: int = 0
    #: per model, per configuration label: the batch size its cells ran with at the end
    batch_sizes: dict[str, dict[str, int]] = field(default_factory=dict)
    #: the cells' visual tokens and the time spent storing them: the throughput line
    visual_tokens: int = 0
    store_s: float = 0.0
    table: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: per served model: its usage counts and the visual-token fit check (run.json `sweep.served`)
    served: dict[str, dict[str, int]] = field(default_factory=dict)
    #: what the reader must know about the run's numbers (run.json `sweep.warnings`)
    warnings: list[str] = field(default_factory=list)
    #: per model: the multiple-choice scoring rule and why (run.json `sweep.scoring_rules`)
    scoring_rules: dict[str, dict[str, str]] = field(default_factory=dict)
    #: per served model: the budget probe's record (run.json `sweep.budget_probe`)
    budget_probe: dict[str, BudgetProbeRecord] = field(default_factory=dict)
    #: sweep a served model whose probe finds the budget not honoured (`--accept-budget-cap`)
    accept_budget_cap: bool = False

    #: per `selection` configuration (by label): run.json `sweep.selections`
    selections: dict[str, SelectionRecord] = field(default_factory=dict)
    #: stored selection configurations an edited file replaced (`sweep.superseded_selections`)
    superseded_selections: dict[str, SupersededSelection] = field(default_factory=dict)
    #: the Ray executor's figures (run.json `sweep.ray`)
    ray: dict[str, int] = field(default_factory=dict)
    #: per model, `--rerun-check`'s record (run.json `sessions[].rerun_check`)
    rerun_checks: dict[str, dict[str, Any]] = field(default_factory=dict)

    def throughput(self) -> dict[str, float]:
        """Rates over the sweep's wall time (model loading included) and the seconds in the
        model, in decoding (overlapping the model) and in the store."""
        wall = self.wall_s
        return {  # (no wall time, no rate: JSON has no NaN)
            "cells_per_s": round(self.ran / wall, 3) if wall > 0 else 0.0,
            "visual_tokens_per_s": round(self.visual_tokens / wall, 1) if wall > 0 else 0.0,
            "wall_s": round(self.wall_s, 3),
            "model_s": round(self.model_s, 3),
            "decode_s": round(self.decode_s, 3),
            "store_s": round(self.store_s, 3),
        }

    def throughput_line(self) -> str:
        """`throughput: 12.5 cells/s, 3,400 visual tokens/s over 10.2 s (...)`"""
        t = self.throughput()
        return (
            f"throughput: {t['cells_per_s']:,.2f} cells/s, {t['visual_tokens_per_s']:,.0f} visual "
            f"tokens/s over {t['wall_s']:,.1f} s (model loading included); time in the model "
            f"{t['model_s']:,.1f} s, decoding {t['decode_s']:,.1f} s (beside the model), the "
            f"store {t['store_s']:,.1f} s"
        )

    @property
    def failed(self) -> dict[str, int]:
        """Cells run this time that failed, by status."""
        return {k: v for k, v in sorted(self.by_status.items()) if k not in ANSWERED_STATUSES and v}

    @property
    def mostly_failed(self) -> bool:
        return self.ran > 0 and sum(self.failed.values()) > FAILED_SHARE_LIMIT * self.ran

    def failure_summary(self) -> str:
        """`23 of 36 cells run failed (model_error 20, timeout 3)`, or '' when none did."""
        failed = self.failed
        if not failed:
            return ""
        kinds = ", ".join(f"{k} {v}" for k, v in failed.items())
        return f"{sum(failed.values())} of {self.ran} cells run failed ({kinds})"

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return INTERRUPTED_EXIT
        return FAILED_CELLS_EXIT if self.mostly_failed else 0


class SweepStop:
    """A stop request shared by the driver loop and the SIGINT handler."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()


@dataclass
class SweepContext:
    """Everything the executors share while a sweep runs (not a session: the store's record of
    one execution; docs/glossary.md)."""

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
    #: the progress bar (disabled, not absent, without `--progress`)
    bar: tqdm[Never]
    frame_cache: FrameCache | None = None
    workers: int | None = None
    planned_ids: set[str] = field(default_factory=set)
    retry_errors: bool = False
    #: `--batch-size auto`: batches sized per configuration from the free memory
    auto_batch: bool = False
    #: the Ray cluster to connect to (`--ray-address`); None: Ray's own rule (`RAY_ADDRESS`, ...)
    ray_address: str | None = None
    #: the store's session this sweep runs as (None: not recorded)
    session_id: int | None = None
    #: `--rerun-check`: after each model's grid, run a sample of its cells again
    rerun_check: RerunCheck | None = None
    _expected: int = 0
    #: the pending cells by id, and per model what the per-cell budget check keeps
    _cell_of: dict[str, Cell] = field(default_factory=dict)
    _tokens: dict[str, list[TokenRecord]] = field(default_factory=dict)
    #: each loaded model's scoring-rule line, printed when it has cells to run
    _rule_lines: dict[str, str] = field(default_factory=dict)
    #: backend values stored as null over the sweep, by reason, and the warning saying so
    _nulled: dict[str, int] = field(default_factory=dict)
    _nulled_line: str = ""
    #: the last entry's planned cells (name, spec_id, cells), shared by the checks and the plan
    _last_plan: tuple[str, str, list[Cell]] | None = None

    @property
    def load_batch_size(self) -> int:
        """The grid's batch size, or the rerun check's when larger (a backend never runs more at
        once than it loaded for)."""
        if self.rerun_check is None:
            return self.batch_size
        return max(self.batch_size, self.rerun_check.size_for(self.batch_size, self.auto_batch))

    def _cells(self, entry: ModelEntry, spec_id: str) -> list[Cell]:
        if self._last_plan is not None and self._last_plan[:2] == (entry.name, spec_id):
            return self._last_plan[2]
        cells = plan_cells(
            ModelPlanInfo(entry.name, spec_id),
            self.items,
            self.configs,
            repeat_seeds=self.protocol.repeat_seeds,
            prompt_template_version=PROMPT_TEMPLATE_VERSION,
            decoding_for_seed=lambda s: repeat_decoding(self.protocol.decoding, s).canonical(),
            extractor_version=EXTRACTOR_VERSION,
        )
        self._last_plan = (entry.name, spec_id, cells)
        return cells

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
        """True, and the entry's cells counted as done, when an earlier load of this very model
        produced a spec whose every planned cell is finished: a no-op resume loads no model."""
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
        """Before a model loads: grow the bar's total by the cells likely to run, so the bar has
        a total while the weights load; `plan` then puts the exact count in its place."""
        done = self.store.done_row_keys(entry.name, retry_errors=self.retry_errors)
        # the row keys do not depend on the spec: cells planned under a recorded one will do
        last = self._last_plan
        cells = (
            last[2]
            if last is not None and last[0] == entry.name
            else self._cells(entry, "not-loaded-yet")
        )
        self._expected = sum(
            (c.item.item_id, c.config.config_id, c.repeat) not in done for c in cells
        )
        self.bar.total = (self.bar.total or 0) + self._expected
        # nothing likely to run: no bar (the sweep then says every cell is done)
        self.bar.set_description_str(f"loading {entry.name}", refresh=bool(self._expected))

    def loaded(self, entry: ModelEntry, spec: BackendSpec, backend: VideoLM | None = None) -> None:
        """Record a freshly loaded backend's spec and origin, and say its multiple-choice scoring
        rule (and when an earlier spec of the model in this run used another)."""
        self._scoring_rule(entry, spec)
        self._saved_with(entry)
        self.store.record_model(spec.spec_id, entry.name, spec.model_dump(mode="json"))
        if self.session_id is not None and backend is not None:
            self.store.add_session_info(
                self.session_id, "models_loaded", entry.name, model_as_loaded(backend, spec)
            )
        fingerprint = self._fingerprint(entry)
        if fingerprint is not None:
            self.store.record_load(fingerprint, spec.spec_id, entry.name)

    def _saved_with(self, entry: ModelEntry) -> None:
        """A local checkpoint saved with another transformers than the one answering now is
        warned of."""
        from ..models import FrameTransport, builtin_model_dir, saved_with_note, transport_of

        if entry.backend == "builtin":
            folder = builtin_model_dir()
        elif entry.backend == "hf" and Path(entry.model).is_dir():
            folder = Path(entry.model)
        else:
            return
        try:
            if transport_of(entry) != FrameTransport.IN_PROCESS:
                return
        except (ItemscaleError, ValueError):
            return
        note = saved_with_note(folder)
        if note is not None and not any(note in w for w in self.result.warnings):
            line = f"model {entry.name!r}: {note}"
            print(f"itemscale sweep: {line}", file=sys.stderr)
            self.result.warnings.append(line)

    def _scoring_rule(self, entry: ModelEntry, spec: BackendSpec) -> None:
        from ..models import BACKENDS, scoring_rule_of

        rule, why = scoring_rule_of(entry)
        self.result.scoring_rules[entry.name] = {"rule": rule, "why": why}
        line = f"model {entry.name!r}: multiple choice scored by {rule} ({why})"

        def ruled(name: Any) -> bool:  # the backend's rule is a setting (`Backend.scoring_rule`)
            registered = BACKENDS.get(name) if isinstance(name, str) else None
            return registered is not None and registered.scoring_rule is not None

        earlier = {
            str(known["spec"].get("processor", {}).get("mcqa_scoring", "letter"))
            for spec_id, known in self.store.models().items()
            if known["name"] == entry.name
            and spec_id != spec.spec_id
            and ruled(known["spec"].get("backend"))
        }
        changed = sorted(earlier - {rule}) if ruled(entry.backend) else []
        if changed:
            line += (
                f"; earlier cells of {entry.name!r} in this run were scored by "
                f"{', '.join(changed)}, another identity: they stay in the store, are not "
                "reused, and run again under this rule"
            )
            self.result.warnings.append(line)
        self._rule_lines[entry.name] = line  # said once its cells are known to run

    def plan(self, entry: ModelEntry, spec_id: str) -> tuple[list[Cell], list[VideoJob]]:
        cells = self._cells(entry, spec_id)
        self._last_plan = None  # planned once; the caller holds the cells from here
        self.planned_ids.update(c.cell_id for c in cells)
        pending = [c for c in cells if c.cell_id not in self.done]
        self._cell_of.update((c.cell_id, c) for c in pending)
        line = self._rule_lines.pop(entry.name, None)
        if line is not None and pending:
            print(f"itemscale sweep: {line}", file=sys.stderr)
        self.result.planned += len(cells)
        self.result.skipped += len(cells) - len(pending)
        self.bar.total = (self.bar.total or 0) - self._expected + len(pending)
        self._expected = 0
        if pending:  # a model with nothing left to run draws no bar
            self.bar.refresh()
        return cells, group_by_video(pending, self.known_hashes)

    def record(self, rows: Sequence[CellRow]) -> None:
        if self.session_id is not None:
            rows = [replace(row, session_id=self.session_id) for row in rows]
        start = time.perf_counter()
        self.store.record(rows)
        self.result.store_s += time.perf_counter() - start
        self.result.ran += len(rows)
        for row in rows:
            self.result.visual_tokens += row.visual_tokens or 0
            self.result.by_status[row.status] = self.result.by_status.get(row.status, 0) + 1
            cell = self._cell_of.pop(row.cell_id, None)
            record = None if cell is None else token_record(cell, row)
            if record is not None:
                self._tokens.setdefault(row.model, []).append(record)
        self.bar.update(len(rows))

    def backend_notes(self, model: str, backend: VideoLM) -> None:
        """What a served backend counted while it ran (`VideoLM.usage()`); a server that ignores
        `logprobs` leaves every confidence empty, and nothing else would say so."""
        identity = getattr(backend, "served_identity", None)
        if self.session_id is not None and callable(identity):
            self.store.add_session_info(self.session_id, "served", model, identity())
        usage = usage_of(backend)
        if usage is None:
            return
        asked, missing, cut = usage.logprob_requests, usage.logprob_missing, usage.replies_cut
        checked = self._tokens.pop(model, [])
        unfit = unfit_cells(checked)
        self.result.served[model] = {
            **usage.model_dump(),
            "cells_tokens_checked": len(checked),
            "cells_tokens_not_fitting": unfit,
        }
        if unfit:
            self.result.warnings.append(
                f"model {model!r}: {unfit} of {len(checked)} cells with recorded visual tokens "
                "sent more frames than the same item's next smaller budget but added no more "
                "prompt tokens: the server did not show the model those frames "
                "(docs/backends.md, 'Does the server honour the budget?')"
            )
        if cut:
            self.result.warnings.append(
                f"model {model!r}: {cut} replies were longer than max_reply_chars and were cut "
                f"({usage.reply_chars_cut} characters not kept); the "
                "server may be ignoring max_tokens"
            )
        if asked and missing == asked:
            self.result.warnings.append(
                f"model {model!r}: the server returned no log-probabilities for any of its "
                f"{asked} multiple-choice replies, so no answer has a confidence (the "
                "confidence cascade and `cascade --score` cannot run on it); serve with "
                "log-probabilities enabled (vLLM and SGLang return them; docs/backends.md)"
            )
        elif missing:
            self.result.warnings.append(
                f"model {model!r}: {missing} of {asked} multiple-choice replies carried no "
                "log-probabilities (those answers have no confidence)"
            )

    def record_model_time(self, stats: JobStats) -> None:
        self.result.model_s += stats.model_s
        self.result.model_calls += stats.model_calls
        self.result.out_of_memory += stats.out_of_memory
        self._note_nulled(stats.nulled)

    def _note_nulled(self, nulled: dict[str, int]) -> None:
        """Backend values stored as null, counted over the sweep in one warning line (replaced as
        it grows)."""
        if not nulled:
            return
        for reason, n in nulled.items():
            self._nulled[reason] = self._nulled.get(reason, 0) + n
        counts = "; ".join(f"{reason}: {n}" for reason, n in sorted(self._nulled.items()))
        line = f"backend values that cannot be measurements were stored as null ({counts})"
        warnings = self.result.warnings
        if self._nulled_line in warnings:
            warnings[warnings.index(self._nulled_line)] = line
        else:
            warnings.append(line)
        self._nulled_line = line

    def record_stats(self, job: VideoJob, stats: JobStats) -> None:
        self.result.decode_s += stats.decode_s
        self.result.model_s += stats.model_s
        self.result.model_calls += stats.model_calls
        self.result.out_of_memory += getattr(stats, "out_of_memory", 0)
        # (a worker of another itemscale version may send stats without warnings)
        said = getattr(stats, "warnings", [])
        self.result.warnings += [w for w in said if w not in self.result.warnings]
        self._note_nulled(getattr(stats, "nulled", {}))
        if job.hash_video:
            self.store.record_video(job.video_id, job.video_path, stats.video_hash)
            if stats.video_hash:
                self.known_hashes.add(job.video_id)
