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
from typing import Any

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
    "CompareResult": "workflows",
}

__all__ = ["__version__", *sorted(_LAZY)]


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
