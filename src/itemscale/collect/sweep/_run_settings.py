"""A sweep's run settings, checked before anything is read: the executor, the batch size (a
number, or `auto` sized from free memory), the numerics (`--deterministic`), and what a
session adds to its record when it ends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ...core.errors import ItemscaleError
from ._memory import AUTO_MAX_BATCH
from ._records import SweepSettings
from ._stack import Numerics

if TYPE_CHECKING:
    from ._context import SweepResult


class RunSettingsError(ItemscaleError, ValueError):
    """An executor or batch size a sweep cannot run with (`auto` under Ray, a batch below 1):
    input to fix, exit 2, before anything is read or stored."""


@dataclass(frozen=True)
class RunSettings:
    """The checked settings: the numerics, what run.json records, the batch size a backend
    loads with, and whether `auto` sizes the batches (then that size is the largest it may
    pick)."""

    numerics: Numerics
    settings: SweepSettings
    batch_size: int
    auto_batch: bool


def checked_settings(
    batch_size: int | Literal["auto"],
    executor: str,
    limit: int | None,
    retry: bool,
    numerics: Numerics | None,
) -> RunSettings:
    """The run's settings checked before anything is read: the batch size (1 under
    `--deterministic`, which refuses `auto`) and the executor; a bad value is a ValueError
    (`RunSettingsError` for the executor and the batch size).
    The numerics default to not deterministic."""
    fixed_size, auto = _batch_setting(executor, batch_size)
    numerics = numerics if numerics is not None else Numerics()
    numerics.check_batch_size(batch_size)
    settings: SweepSettings = {
        "executor": executor,
        "limit": limit,
        "retry_errors": retry,
        "deterministic": numerics.deterministic,
    }
    return RunSettings(numerics, settings, fixed_size, auto)


def _batch_setting(executor: str, batch_size: int | Literal["auto"]) -> tuple[int, bool]:
    """The batch size a backend loads with and whether `auto` sizes the batches (then the
    backend's own cap is the largest batch `auto` may pick); a bad value is a
    `RunSettingsError`."""
    if executor not in ("local", "ray"):
        raise RunSettingsError(f"executor must be 'local' or 'ray', got {executor!r}")
    if batch_size == "auto":
        if executor == "ray":
            raise RunSettingsError(
                "--batch-size 'auto' is for the local executor (it sizes batches from this "
                "machine's free memory); give --executor ray a number, e.g. --batch-size 4"
            )
        return AUTO_MAX_BATCH, True
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise RunSettingsError(f"batch_size must be at least 1 or 'auto', got {batch_size!r}")
    return batch_size, False


def session_batches(result: SweepResult) -> dict[str, object]:
    """What a session adds to its record when it ends (run.json `sessions[]`): per model and
    configuration the batch size its cells ran with (after any halving), and the model calls
    that ran out of memory."""
    return {"batch_sizes": result.batch_sizes, "out_of_memory": result.out_of_memory}
