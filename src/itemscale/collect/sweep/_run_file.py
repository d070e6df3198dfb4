"""run.json as a sweep writes it: the run-level record, the earlier writers' keys it keeps, and
the imported rows every export keeps beside the store's cells."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import pandas as pd

from ...core.responses import (
    EXTRACTOR_VERSION,
    RESPONSES_FILE,
    read_provenance,
    read_responses,
)
from ..models import PROMPT_TEMPLATE_VERSION
from ..protocol import Protocol
from ..store import StoreError, utc_now
from ._context import (
    SweepResult,
)
from ._plan import (
    PlannedConfig,
)
from ._provenance import decoder_info, host_info, tool_info
from ._records import RunRecord, SweepRecord, SweepSettings


def run_level(settings: SweepSettings, sessions: Sequence[Mapping[str, object]]) -> SweepSettings:
    """This session's settings as run.json's `sweep` records them, `deterministic` over every
    session."""
    return {**settings, "deterministic": run_deterministic(sessions)}


def run_deterministic(sessions: Sequence[Mapping[str, object]]) -> bool | Literal["mixed"]:
    """run.json `sweep.deterministic`: true when every session ran with `--deterministic`, false
    when none did (nor one recorded before the flag), "mixed" when they differ."""
    kinds = {s.get("deterministic") is True for s in sessions}
    return kinds.pop() if len(kinds) == 1 else "mixed"


def run_record(
    protocol: Protocol,
    configs: Sequence[PlannedConfig],
    result: SweepResult,
    *,
    started: str,
    settings: SweepSettings,
) -> RunRecord:
    """run.json as this sweep writes it, before the caller's own provenance keys."""
    sweep: SweepRecord = {
        "executor": settings["executor"],
        "limit": settings["limit"],
        "retry_errors": settings["retry_errors"],
        "deterministic": settings["deterministic"],
        "interrupted": result.interrupted,
        "planned_cells": result.planned,
        "skipped_cells": result.skipped,
        "ran_cells": result.ran,
        "by_status": dict(result.by_status),
        "served": dict(result.served),
        "accept_budget_cap": result.accept_budget_cap,
        "budget_probe": dict(result.budget_probe),
        "scoring_rules": dict(result.scoring_rules),
        "warnings": list(result.warnings),
        "selections": dict(result.selections),
        "superseded_selections": dict(result.superseded_selections),
        "extra_configs": [
            {
                "config_id": p.config_id,
                "label": p.config.label,
                "series": p.series,
                "config": p.config.model_dump(mode="json"),
            }
            for p in configs[len(protocol.configurations()) :]
        ],
    }
    if settings["executor"] == "ray":
        sweep["ray"] = dict(result.ray)
    return {
        "protocol": protocol.model_dump(mode="json"),
        "tool": tool_info(),
        "decoder": decoder_info(),
        "host": host_info(),
        "prompt_template_version": PROMPT_TEMPLATE_VERSION,
        "extractor_version": EXTRACTOR_VERSION,
        "times": {"started": started, "finished": utc_now()},
        "sweep": sweep,
    }


def imported_rows(run_dir: Path) -> pd.DataFrame | None:
    """The rows of the run's table that came by `import` (no cell id), which every export keeps."""
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


def carry_over(run_dir: Path, payload: Mapping[str, object]) -> dict[str, object]:
    """Keep what earlier writers put in run.json (`interventions`, ...) and this sweep does not
    set; the previous `times`/`sweep` are replaced (sessions keep them all)."""
    previous = read_provenance(run_dir)  # damaged: refused at the sweep's start already
    kept = {k: v for k, v in previous.items() if k not in payload and k not in _RECOMPUTED_KEYS}
    return {**kept, **payload}
