"""What each side of a comparison recorded about its set-up, and where the two differ.

A field comes from the response table (frames asked and sent, pixels, sampling, visual tokens,
the scoring rule), from a sweep's `run.json` (the protocol's model entry, decoding, the prompt
template and extractor versions) or from an import's record of its source file (lmms-eval's
`model_args`, generation arguments, task version and hash, prompt; VLMEvalKit's dataset name).
A field a side did not record is None, shown as unknown: two unknowns are never "the same".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

import numpy as np
import pandas as pd

from ._records import STACK_FIELDS, FieldStatus, ProvenanceField

#: The imported file a side's rows came from, and its SHA-256 (byte-identical files are one run)
SOURCE_FILE = "source file"
SOURCE_SHA256 = "source file sha256"
#: whether that file holds this configuration alone (an lmms-eval or VLMEvalKit log) or several
#: (a table): only files of one configuration each are "the same log file" across two labels
SOURCE_HOLDS = "source file holds"
ONE_CONFIGURATION = "this configuration alone"

#: model_args keys lmms-eval's model classes use for pixels per frame and fps
_PIXEL_KEYS = ("max_pixels", "max_pixel", "image_max_pixels", "video_max_pixels")
_FPS_KEYS = ("fps", "video_fps")


#: How a model entry of run.json's protocol sends frames to its model (`Backend.transport`'s
#: description), None when its backend is not installed: a question for the backend registry,
#: which sits above the comparison, so whoever compares passes it in.
Transport = Callable[[Mapping[str, Any]], str | None]


@dataclass(frozen=True)
class SideSetup:
    """One side's recorded fields (None: unknown) and its prompt text where one is stored."""

    fields: dict[str, str | None]
    prompt_text: dict[str, str] | None


def _plain(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value if value.strip() else None
    return json.dumps(value, sort_keys=True, default=str)


def _column(rows: pd.DataFrame, name: str, *, median: bool = False) -> str | None:
    """The values a side recorded in one column: one value, `a | b` when several, or None."""
    if name not in rows.columns:
        return None
    values = rows[name].dropna()
    if values.empty:
        return None
    if median:
        return f"{float(np.median(values.to_numpy(dtype=float))):g} (median of {len(values)} rows)"
    distinct = sorted({_num_text(v) for v in values.tolist()})
    text = " | ".join(distinct[:5]) + (
        f" | ... ({len(distinct)} values)" if len(distinct) > 5 else ""
    )
    return text


def _num_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _model_args(text: Any) -> dict[str, str]:
    """lmms-eval's `key=value,key=value` model arguments."""
    out: dict[str, str] = {}
    if not isinstance(text, str):
        return out
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def _sweep_fields(
    run: Mapping[str, Any], model: str, transport: Transport | None
) -> dict[str, str | None]:
    protocol = run.get("protocol")
    if not isinstance(protocol, Mapping):
        return {}
    entry: Mapping[str, Any] = {}
    for candidate in protocol.get("models") or []:
        if isinstance(candidate, Mapping) and candidate.get("name") == model:
            entry = candidate
    benchmark = protocol.get("benchmark") or {}
    options = entry.get("options") or {}
    spec = _stored_spec(run, model)
    return {
        "source": "itemscale sweep",
        "model id": _plain(entry.get("model")),
        "model revision": _plain(spec.get("revision") or entry.get("revision")),
        "dtype": _plain(spec.get("dtype") or entry.get("dtype")),
        "processor settings": (
            (_plain(spec["processor"]) if spec["processor"] else "none set")
            if "processor" in spec
            else None
        ),
        "backend": _plain(entry.get("backend")),
        "backend options": _plain(options) if options else "none",
        "transport": transport(entry) if transport is not None else None,
        "decoding": _plain(protocol.get("decoding")),
        "prompt template": _plain(run.get("prompt_template_version")),
        "answer extractor": _version("itemscale", run.get("extractor_version")),
        "benchmark": _plain(
            {k: benchmark.get(k) for k in ("kind", "path", "split", "limit") if benchmark.get(k)}
        ),
        "tool version": _plain((run.get("tool") or {}).get("version")),
    }


def _stack_fields(run: Mapping[str, Any], rows: pd.DataFrame) -> dict[str, str | None]:
    """The software stack of the sessions behind these rows (every session of the run for rows
    stored before `session_id`), `a | b` where they differ; a run older than session stacks
    reads its run-level record (`_run_level_stack`)."""
    from ...core.responses import stack_fields

    sessions = [s for s in run.get("sessions") or [] if isinstance(s, Mapping)]
    ids = (
        set(pd.to_numeric(rows["session_id"], errors="coerce").dropna().astype(int).tolist())
        if "session_id" in rows.columns
        else set()
    )
    if ids:
        sessions = [s for s in sessions if s.get("session_id") in ids]
    stacks = [s["stack"] for s in sessions if isinstance(s.get("stack"), Mapping)]
    if not stacks:
        return _run_level_stack(run)
    values: dict[str, list[str | None]] = {}
    for stack in stacks:
        for name, value in stack_fields(stack).items():
            values.setdefault(name, []).append(value)
    out: dict[str, str | None] = {}
    for name, seen in values.items():
        known = sorted({v for v in seen if v is not None})
        out[name] = " | ".join(known) if known else None
    return out


def _run_level_stack(run: Mapping[str, Any]) -> dict[str, str | None]:

    def block(parent: Mapping[str, Any], key: str) -> Mapping[str, Any]:
        value = parent.get(key)
        return value if isinstance(value, Mapping) else {}

    host, decoder, tool = block(run, "host"), block(run, "decoder"), block(run, "tool")
    ffmpeg = block(decoder, "ffmpeg")
    out = {
        "Python": _plain(host.get("python")),
        "PyAV": _plain(decoder.get("version")),
        "FFmpeg": _plain(ffmpeg.get("libavcodec")),
        "itemscale": _plain(tool.get("version")),
    }
    return {k: v for k, v in out.items() if v is not None}


def _stored_spec(run: Mapping[str, Any], model: str) -> Mapping[str, Any]:
    """The backend's own record of the model (`model_specs`: resolved revision, dtype, processor
    settings); the latest session's when a model name has several."""
    found: Mapping[str, Any] = {}
    for entry in (run.get("model_specs") or {}).values():
        if isinstance(entry, Mapping) and entry.get("name") == model:
            spec = entry.get("spec")
            found = spec if isinstance(spec, Mapping) else found
    return found


def _version(name: str, version: Any) -> str | None:
    return None if version in (None, "") else f"{name} v{version}"


def _import_sources(
    run: Mapping[str, object], config_id: str
) -> list[tuple[Mapping[str, object], Mapping[str, object]]]:
    """(import record, source record) pairs whose source made this configuration."""
    found: list[tuple[Mapping[str, object], Mapping[str, object]]] = []
    imports = run.get("imports")
    for record in imports if isinstance(imports, list) else []:
        if not isinstance(record, Mapping):
            continue
        sources = record.get("sources")
        for source in sources if isinstance(sources, list) else []:
            if isinstance(source, Mapping) and source.get("config_id") in (config_id, None):
                found.append((dict(record), dict(source)))
    return found


def _lmms_eval_fields(source: Mapping[str, Any]) -> dict[str, str | None]:
    margs = _model_args(source.get("model_args"))
    pixels = next((margs[k] for k in _PIXEL_KEYS if k in margs), None)
    fps = next((margs[k] for k in _FPS_KEYS if k in margs), None)
    decoding = {
        "generation_kwargs": source.get("generation_kwargs"),
        "gen_kwargs": source.get("gen_kwargs") or None,
    }
    version = source.get("lmms_eval_version") or source.get("lmms_eval_git_hash")
    stated = source.get("package_versions")
    packages = {
        ("PyAV" if name == "av" else name): _plain(value)
        for name, value in (stated.items() if isinstance(stated, Mapping) else [])
    }
    return packages | {
        "source": "lmms-eval log",
        "model id": margs.get("pretrained"),
        "backend": _plain(source.get("model")),
        "lmms-eval model_args": _plain(source.get("model_args")),
        "pixels per frame (asked)": pixels,
        "fps (asked)": fps,
        "decoding": _plain(decoding) if any(decoding.values()) else None,
        "task": _plain(source.get("task")),
        "task version": _plain(source.get("task_version")),
        "benchmark digest": _plain(source.get("task_hash")),
        "seeds": _plain(source.get("seeds")),
        "tool version": _plain(version),
    }


def _import_fields(
    run: Mapping[str, Any], config_id: str
) -> tuple[dict[str, str | None], dict[str, str] | None]:
    pairs = _import_sources(run, config_id)
    if not pairs:
        return {}, None
    record, source = pairs[-1]
    importer = str(record.get("importer") or "")
    recorded = record.get("options")
    options: Mapping[str, object] = recorded if isinstance(recorded, Mapping) else {}
    fields: dict[str, str | None] = {
        "source": f"{importer} import" if importer else None,
        "answer extractor": _version("itemscale", options.get("extractor_version")),
        SOURCE_FILE: PurePath(str(source.get("path") or "")).name or None,
        SOURCE_SHA256: _plain(source.get("sha256")),
        SOURCE_HOLDS: ONE_CONFIGURATION
        if source.get("config_id") == config_id
        else "several configurations",
    }
    prompt_text = None
    if importer == "lmms-eval":
        fields.update(_lmms_eval_fields(source))
        prompt_text = _prompt_text(source.get("prompt"))
    elif importer == "vlmevalkit":
        fields["VLMEvalKit dataset"] = _plain(source.get("dataset"))
    for key in ("benchmark", "answer_key"):
        given = options.get(key)
        if isinstance(given, Mapping) and given.get("sha256"):
            fields["benchmark digest"] = str(given["sha256"])
    return fields, prompt_text


def _prompt_text(prompt: Any) -> dict[str, str] | None:
    """An lmms-eval import's prompt by part: pre and post prompt, the first sample's input."""
    if not isinstance(prompt, Mapping):
        return None
    parts: dict[str, str] = {}
    for key in ("pre_prompt", "post_prompt", "example_input"):
        if isinstance(prompt.get(key), str):
            name = key if key != "example_input" else f"input of doc {prompt.get('example_doc_id')}"
            parts[name] = prompt[key]
    return parts or None


def side_setup(
    run: Mapping[str, Any],
    rows: pd.DataFrame,
    model: str,
    config: str,
    config_id: str,
    *,
    transport: Transport | None = None,
) -> SideSetup:
    """Every field this side recorded (None: unknown); `transport` describes how a recorded
    model entry's frames reach the model (None: the field is unknown)."""
    fields: dict[str, str | None] = {
        "model": model,
        "configuration": config,
        "scoring rule": _column(rows, "scoring_rule"),
        "task kind": _column(rows, "task_kind"),
        "frames (asked)": _column(rows, "frames"),
        "frames sent (effective)": _column(rows, "effective_frames", median=True),
        "sampling formula": _column(rows, "sampling"),
        "pixels per frame": _column(rows, "pixels"),
        "visual tokens": _column(rows, "visual_tokens", median=True),
        "pipeline": _column(rows, "pipeline"),
    }
    sampling = fields["sampling formula"]
    if sampling and sampling.startswith("fps") and "|" not in sampling:
        fields["fps (asked)"] = sampling[3:].split("+")[0]
    # a run folder may hold swept rows (with a cell id) and imported ones: each side reads the
    # provenance of the way its own rows came in
    cells = rows["cell_id"] if "cell_id" in rows.columns else pd.Series([None] * len(rows))
    if cells.notna().any():
        fields.update(
            {k: v for k, v in _sweep_fields(run, model, transport).items() if k not in fields or v}
        )
        fields.update(_stack_fields(run, rows))
    imported: dict[str, str | None] = {}
    prompt_text = None
    if cells.isna().any():
        imported, prompt_text = _import_fields(run, config_id)
    for key, value in imported.items():
        if value is not None or key not in fields:
            fields[key] = value
    if prompt_text is not None:
        fields["prompt template"] = (
            "sha256:"
            + hashlib.sha256(json.dumps(prompt_text, sort_keys=True).encode()).hexdigest()[:12]
        )
    return SideSetup(fields, prompt_text)


def first_differing_line(a: Mapping[str, str], b: Mapping[str, str]) -> str | None:
    """`first differing line N of PART: A 'x' | B 'y'` for the first line where two prompts
    differ, part by part (None when equal)."""
    for part in [*a, *(k for k in b if k not in a)]:
        la = a[part].splitlines() if part in a else []
        lb = b[part].splitlines() if part in b else []
        for n in range(max(len(la), len(lb))):
            x = la[n] if n < len(la) else "(no line)"
            y = lb[n] if n < len(lb) else "(no line)"
            if x != y:
                return f"first differing line {n + 1} of {part}: A {x[:160]!r} | B {y[:160]!r}"
    return None


#: field order on the page and in the JSON (within differs / unknown / same)
FIELD_ORDER = (
    "source",
    "model",
    "configuration",
    "model id",
    "model revision",
    "dtype",
    "processor settings",
    "backend",
    "transport",
    "backend options",
    "scoring rule",
    "task kind",
    "frames (asked)",
    "frames sent (effective)",
    "sampling formula",
    "fps (asked)",
    "pixels per frame",
    "pixels per frame (asked)",
    "visual tokens",
    "pipeline",
    "prompt template",
    "decoding",
    "answer extractor",
    "benchmark",
    "benchmark digest",
    "task",
    "task version",
    "lmms-eval model_args",
    "VLMEvalKit dataset",
    "seeds",
    "tool version",
    *STACK_FIELDS,
)


def provenance_diff(a: SideSetup, b: SideSetup) -> tuple[ProvenanceField, ...]:
    """Every field either side recorded, differences first, then unknown, then the same."""
    names = [f for f in FIELD_ORDER if f in a.fields or f in b.fields]
    names += sorted((set(a.fields) | set(b.fields)) - set(names))
    out: list[ProvenanceField] = []
    for name in names:
        va, vb = a.fields.get(name), b.fields.get(name)
        status: FieldStatus = (
            "unknown" if va is None or vb is None else "same" if va == vb else "differs"
        )
        note = None
        if name == "prompt template" and status == "differs" and a.prompt_text and b.prompt_text:
            note = first_differing_line(a.prompt_text, b.prompt_text)
        out.append(ProvenanceField(field=name, a=va, b=vb, status=status, note=note))
    rank = {"differs": 0, "unknown": 1, "same": 2}
    return tuple(sorted(out, key=lambda f: rank[f.status]))
