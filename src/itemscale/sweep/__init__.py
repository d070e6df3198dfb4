"""Running a protocol's grid: plan the cells, skip finished ones, run the rest (locally or on
Ray), commit results to the run store as they arrive, export the response table."""

from ._execute import SWEEP_SOURCE, JobStats, VideoJob, VideoJobRunner, parsed_answer
from ._loaders import VIDEO_EXTENSIONS, BenchmarkLoadError, find_video, load_benchmark_items
from ._plan import (
    Cell,
    ExtraConfig,
    ModelPlanInfo,
    PlanCost,
    PlannedConfig,
    estimate_visual_tokens,
    plan_cells,
    planned_configs,
    select_items,
)
from ._runner import ServerRefusedError, plan_sweep, run_sweep
from ._session import (
    INTERRUPTED_EXIT,
    BackendFactory,
    RuntimeBackendFactory,
    SweepResult,
    SweepStop,
    default_backend_factory,
)

__all__ = [
    "INTERRUPTED_EXIT",
    "SWEEP_SOURCE",
    "VIDEO_EXTENSIONS",
    "BackendFactory",
    "BenchmarkLoadError",
    "Cell",
    "ExtraConfig",
    "JobStats",
    "ModelPlanInfo",
    "PlanCost",
    "PlannedConfig",
    "RuntimeBackendFactory",
    "ServerRefusedError",
    "SweepResult",
    "SweepStop",
    "VideoJob",
    "VideoJobRunner",
    "default_backend_factory",
    "estimate_visual_tokens",
    "find_video",
    "load_benchmark_items",
    "parsed_answer",
    "plan_cells",
    "plan_sweep",
    "planned_configs",
    "run_sweep",
    "select_items",
]
