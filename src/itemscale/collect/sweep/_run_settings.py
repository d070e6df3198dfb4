"""A sweep's run settings, checked before anything is read: executor, batch size, numerics, and
what a session adds to its record when it ends."""

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
    """An executor or batch size a sweep cannot run with (`auto` under Ray, below 1): exit 2."""


@dataclass(frozen=True)
class RunSettings:
    """The checked settings; with `auto_batch`, `batch_size` is the largest `auto` may pick."""

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
    """The run's settings checked before anything is read (`--deterministic` needs batch size 1);
    a bad value is a ValueError (`RunSettingsError` for the executor and the batch size)."""
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
    """What a session adds to its record when it ends: per model and configuration the batch size
    its cells ran with, and the out-of-memory calls."""
    return {"batch_sizes": result.batch_sizes, "out_of_memory": result.out_of_memory}
