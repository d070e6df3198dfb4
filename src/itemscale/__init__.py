"""itemscale: item-level audits of how Video LLMs behave as their visual budget changes.

Start with docs/python.md (the Python API, with examples) and README.md; every measure is
defined in docs/measures.md. The public names are in `itemscale.__all__`, e.g.

    import itemscale
    result = itemscale.analyze("runs/demo")      # AnalysisResult
    result["builtin"].estimate("harmful_rate")   # Estimate(value, ci_low, ci_high)

Every name loads on first use, so `import itemscale` is quick and needs neither torch nor a
video decoder until a name that does (video decoding, model backends, the sweep, the synthetic
suite) is used. `help(itemscale.NAME)` documents one name.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .core.moved import install as _install_moved_modules
from .core.version import __version__

_install_moved_modules()

# name -> submodule that defines it; resolved lazily by __getattr__.
_LAZY: dict[str, str] = {
    # responses: the one table every stage shares
    "NOANSWER": "core.responses",
    "EXTRACTOR_VERSION": "core.responses",
    "Status": "core.responses",
    "TaskKind": "core.responses",
    "SchemaError": "core.responses",
    "extract_choice": "core.responses",
    "read_responses": "core.responses",
    "write_responses": "core.responses",
    "read_run": "core.responses",
    "write_run": "core.responses",
    "normalise_responses": "core.responses",
    "token_f1": "core.responses",
    "rouge_l": "core.responses",
    "exact_match": "core.responses",
    "score_open_answer": "core.responses",
    # items and benchmark question files
    "Item": "collect.items",
    "read_items_jsonl": "collect.items",
    "write_items_jsonl": "collect.items",
    "load_benchmark": "collect.items",
    # measures
    "analyze_responses": "analysis.measures",
    "AnalysisResult": "analysis.measures",
    "AnalysisSettings": "analysis.measures",
    "Estimate": "analysis.measures",
    "SeriesResult": "analysis.measures",
    "Measure": "analysis.measures",
    "ItemShare": "analysis.measures",
    "register_measure": "analysis.measures",
    "build_matrices": "analysis.measures",
    "per_item_labels": "analysis.measures",
    "ResponseMatrix": "analysis.measures",
    "VideoBootstrap": "analysis.measures",
    # policies
    "cascade_report": "analysis.policies",
    "CascadeReport": "analysis.policies",
    "CascadeSettings": "analysis.policies",
    "intervention_outcomes": "analysis.policies",
    "InterventionResult": "analysis.policies",
    "InterventionSettings": "analysis.policies",
    # audit and artifact
    "audit_transitions": "analysis.audit",
    "build_artifact": "report",
    "verify_artifact": "report",
    # importers
    "import_table": "collect.importers",
    # protocol and video
    "Configuration": "collect.protocol",
    "SamplingPolicy": "collect.protocol",
    "Protocol": "collect.protocol",
    "load_protocol": "collect.protocol",
    "sample_indices": "collect.video",
    "decode_for_configs": "collect.video",
    "FrameCache": "collect.video",
    "MediaError": "collect.video",
    # models, sweep, synthetic suite
    "load_backend": "collect.models",
    "VideoRequest": "collect.models",
    "VideoResponse": "collect.models",
    "run_sweep": "collect.sweep",
    "plan_sweep": "collect.sweep",
    "generate_suite": "collect.synth",
    # workflows: several stages on a run folder as one call
    "analyze": "workflows",
    "response_table": "workflows",
    "intervene": "workflows",
    "compare": "workflows",
    "CompareResult": "analysis.comparison",
}

#: A list a type checker can read (it cannot run `sorted(_LAZY)`); a test checks it is
#: `__version__` and every name of `_LAZY`.
__all__ = [
    "EXTRACTOR_VERSION",
    "NOANSWER",
    "AnalysisResult",
    "AnalysisSettings",
    "CascadeReport",
    "CascadeSettings",
    "CompareResult",
    "Configuration",
    "Estimate",
    "FrameCache",
    "InterventionResult",
    "InterventionSettings",
    "Item",
    "ItemShare",
    "Measure",
    "MediaError",
    "Protocol",
    "ResponseMatrix",
    "SamplingPolicy",
    "SchemaError",
    "SeriesResult",
    "Status",
    "TaskKind",
    "VideoBootstrap",
    "VideoRequest",
    "VideoResponse",
    "__version__",
    "analyze",
    "analyze_responses",
    "audit_transitions",
    "build_artifact",
    "build_matrices",
    "cascade_report",
    "compare",
    "decode_for_configs",
    "exact_match",
    "extract_choice",
    "generate_suite",
    "import_table",
    "intervene",
    "intervention_outcomes",
    "load_backend",
    "load_benchmark",
    "load_protocol",
    "normalise_responses",
    "per_item_labels",
    "plan_sweep",
    "read_items_jsonl",
    "read_responses",
    "read_run",
    "register_measure",
    "response_table",
    "rouge_l",
    "run_sweep",
    "sample_indices",
    "score_open_answer",
    "token_f1",
    "verify_artifact",
    "write_items_jsonl",
    "write_responses",
    "write_run",
]

if TYPE_CHECKING:
    # Each lazy name as a type checker sees it (the package ships `py.typed`), never run:
    # tests/project/test_public_types.py checks it agrees with `_LAZY`.
    from .analysis.audit import audit_transitions
    from .analysis.comparison import CompareResult
    from .analysis.measures import (
        AnalysisResult,
        AnalysisSettings,
        Estimate,
        ItemShare,
        Measure,
        ResponseMatrix,
        SeriesResult,
        VideoBootstrap,
        analyze_responses,
        build_matrices,
        per_item_labels,
        register_measure,
    )
    from .analysis.policies import (
        CascadeReport,
        CascadeSettings,
        InterventionResult,
        InterventionSettings,
        cascade_report,
        intervention_outcomes,
    )
    from .collect.importers import import_table
    from .collect.items import Item, load_benchmark, read_items_jsonl, write_items_jsonl
    from .collect.models import VideoRequest, VideoResponse, load_backend
    from .collect.protocol import Configuration, Protocol, SamplingPolicy, load_protocol
    from .collect.sweep import plan_sweep, run_sweep
    from .collect.synth import generate_suite
    from .collect.video import FrameCache, MediaError, decode_for_configs, sample_indices
    from .core.responses import (
        EXTRACTOR_VERSION,
        NOANSWER,
        SchemaError,
        Status,
        TaskKind,
        exact_match,
        extract_choice,
        normalise_responses,
        read_responses,
        read_run,
        rouge_l,
        score_open_answer,
        token_f1,
        write_responses,
        write_run,
    )
    from .report import build_artifact, verify_artifact
    from .workflows import analyze, compare, intervene, response_table


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'itemscale' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    # the module's own names: pydoc documents every name dir() lists, and listing the API made
    # `help(itemscale)` 4,500 lines; `itemscale.__all__` lists the API
    return sorted(n for n in globals() if n not in _LAZY)
