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

__version__ = "0.1.0"

# name -> submodule that defines it; resolved lazily by __getattr__.
_LAZY: dict[str, str] = {
    # responses: the one table every stage shares
    "NOANSWER": "responses",
    "EXTRACTOR_VERSION": "responses",
    "Status": "responses",
    "TaskKind": "responses",
    "SchemaError": "responses",
    "extract_choice": "responses",
    "read_responses": "responses",
    "write_responses": "responses",
    "read_run": "responses",
    "write_run": "responses",
    "normalise_responses": "responses",
    "token_f1": "responses",
    "rouge_l": "responses",
    "exact_match": "responses",
    "score_open_answer": "responses",
    # items and benchmark question files
    "Item": "items",
    "read_items_jsonl": "items",
    "write_items_jsonl": "items",
    "load_benchmark": "items",
    # measures
    "analyze_responses": "measures",
    "AnalysisResult": "measures",
    "AnalysisSettings": "measures",
    "Estimate": "measures",
    "SeriesResult": "measures",
    "Measure": "measures",
    "ItemShare": "measures",
    "register_measure": "measures",
    "build_matrices": "measures",
    "per_item_labels": "measures",
    "ResponseMatrix": "measures",
    "VideoBootstrap": "measures",
    # policies
    "cascade_report": "policies",
    "CascadeReport": "policies",
    "CascadeSettings": "policies",
    "intervention_outcomes": "policies",
    "InterventionResult": "policies",
    "InterventionSettings": "policies",
    # audit and artifact
    "audit_transitions": "audit",
    "build_artifact": "artifact",
    "verify_artifact": "artifact",
    # importers
    "import_table": "importers",
    # protocol and video
    "Configuration": "protocol",
    "SamplingPolicy": "protocol",
    "Protocol": "protocol",
    "load_protocol": "protocol",
    "sample_indices": "video",
    "decode_for_configs": "video",
    "FrameCache": "video",
    "MediaError": "video",
    # models, sweep, synthetic suite
    "load_backend": "models",
    "VideoRequest": "models",
    "VideoResponse": "models",
    "run_sweep": "sweep",
    "plan_sweep": "sweep",
    "generate_suite": "synth",
    # workflows: several stages on a run folder as one call
    "analyze": "workflows",
    "response_table": "workflows",
    "intervene": "workflows",
    "compare": "workflows",
    "CompareResult": "comparison",
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
    # Each lazy name as a type checker sees it (the package ships `py.typed`): the same name
    # from the same box as `_LAZY`, so a user's mypy checks a call of `itemscale.analyze`
    # against its signature instead of taking it as `Any`. Never run: `import itemscale`
    # stays as quick. tests/project/test_public_types.py checks the two lists agree.
    from .artifact import build_artifact, verify_artifact
    from .audit import audit_transitions
    from .comparison import CompareResult
    from .importers import import_table
    from .items import Item, load_benchmark, read_items_jsonl, write_items_jsonl
    from .measures import (
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
    from .models import VideoRequest, VideoResponse, load_backend
    from .policies import (
        CascadeReport,
        CascadeSettings,
        InterventionResult,
        InterventionSettings,
        cascade_report,
        intervention_outcomes,
    )
    from .protocol import Configuration, Protocol, SamplingPolicy, load_protocol
    from .responses import (
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
    from .sweep import plan_sweep, run_sweep
    from .synth import generate_suite
    from .video import FrameCache, MediaError, decode_for_configs, sample_indices
    from .workflows import analyze, compare, intervene, response_table


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'itemscale' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    # the module's own names, not the API's: pydoc documents every name dir() lists, so
    # listing the API made `help(itemscale)` 4,500 lines of every class (even names already
    # used, which `__getattr__` keeps in globals); `itemscale.__all__` lists the API
    return sorted(n for n in globals() if n not in _LAZY)
