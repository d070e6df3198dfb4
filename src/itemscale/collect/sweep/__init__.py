"""Running a protocol's grid: plan the cells, skip finished ones, run the rest (locally or on
Ray), commit results to the run store as they arrive, export the response table."""

from ._budget import BUDGET_GROWTH_TOLERANCE, BudgetNotHonouredError
from ._context import (
    FAILED_CELLS_EXIT,
    FAILED_SHARE_LIMIT,
    BackendFactory,
    RayActorsLostError,
    RayUnreachableError,
    RuntimeBackendFactory,
    SweepResult,
    SweepStop,
    VideoNotOnNodeError,
    default_backend_factory,
)
from ._loaders import BenchmarkLoadError, load_benchmark_items
from ._plan import ExtraConfig, PlanCost
from ._rerun_check import RerunCheck
from ._runner import ServerRefusedError, plan_sweep, run_sweep
from ._stack import STACK_OVERRIDE_ENV, Numerics, StackInfo, software_stack, stack_notice

__all__ = [
    "BUDGET_GROWTH_TOLERANCE",
    "FAILED_CELLS_EXIT",
    "FAILED_SHARE_LIMIT",
    "STACK_OVERRIDE_ENV",
    "BackendFactory",
    "BenchmarkLoadError",
    "BudgetNotHonouredError",
    "ExtraConfig",
    "Numerics",
    "PlanCost",
    "RayActorsLostError",
    "RayUnreachableError",
    "RerunCheck",
    "RuntimeBackendFactory",
    "ServerRefusedError",
    "StackInfo",
    "SweepResult",
    "SweepStop",
    "VideoNotOnNodeError",
    "default_backend_factory",
    "load_benchmark_items",
    "plan_sweep",
    "run_sweep",
    "software_stack",
    "stack_notice",
]
