"""A session's recorded software stack (run.json `sessions[].stack`) as flat, comparable fields
for `compare`, `analyze` and the report, importing nothing the sweep needs (docs/compare.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: the packages whose version changes answers (distribution names), as the sweep records them
STACK_PACKAGES = ("torch", "transformers", "tokenizers", "Pillow", "numpy", "av")


def stack_fields(stack: Mapping[str, Any]) -> dict[str, str | None]:
    """A recorded stack as flat fields (`transformers` -> `5.24.0`; None: not recorded), read
    without failing from older or partial records."""
    packages = stack.get("packages")
    packages = packages if isinstance(packages, Mapping) else {}
    fields: dict[str, str | None] = {
        name: _text(packages.get(name)) for name in STACK_PACKAGES if name in packages
    }
    if "av" in fields:
        fields["PyAV"] = fields.pop("av")
    for key, label in (("python", "Python"), ("cuda", "CUDA"), ("cudnn", "cuDNN")):
        if key in stack:
            fields[label] = _text(stack.get(key))
    ffmpeg = stack.get("ffmpeg")
    if isinstance(ffmpeg, Mapping) and ffmpeg:
        fields["FFmpeg"] = _text(ffmpeg.get("libavcodec") or sorted(ffmpeg.items())[0][1])
    if "gpu" in stack:
        gpu = stack.get("gpu")
        fields["GPU"] = (
            f"{gpu.get('name')} x{gpu.get('count')} (capability {gpu.get('capability')}, "
            f"driver {gpu.get('driver') or 'unknown'})"
            if isinstance(gpu, Mapping)
            else "none"
        )
    numerics = stack.get("numerics")
    if isinstance(numerics, Mapping) and any(v is not None for v in numerics.values()):
        fields["numerics flags"] = ", ".join(f"{k}={v}" for k, v in sorted(numerics.items()))
    tool = stack.get("itemscale")
    if isinstance(tool, Mapping):
        fields["itemscale"] = _text(tool.get("version"))
    return fields


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def stack_sources(stack: Mapping[str, Any]) -> dict[str, str]:
    """Field -> `imported from FILE; the installed metadata says V`, for each library not
    imported from its installed distribution (a checkout first on `PYTHONPATH`); older records
    say nothing."""
    modules = stack.get("modules")
    if not isinstance(modules, Mapping):
        return {}
    out: dict[str, str] = {}
    for name, record in modules.items():
        if isinstance(record, Mapping) and record.get("matches_metadata") is False:
            field = "PyAV" if name == "av" else str(name)
            out[field] = (
                f"imported from {record.get('file')}; the installed metadata says "
                f"{record.get('metadata_version')}"
            )
    return out


def _shown_values(stack: Mapping[str, Any]) -> dict[str, str | None]:
    """Each library imported from elsewhere shown with where from, so two records compare equal
    only when the same code ran."""
    fields = stack_fields(stack)
    for name, source in stack_sources(stack).items():
        if fields.get(name) is not None:
            fields[name] = f"{fields[name]} ({source})"
    return fields


def stack_disagreements(stack: Mapping[str, Any]) -> list[str]:
    """One sentence per library a session imported from elsewhere than its installed
    distribution."""
    fields = stack_fields(stack)
    return [
        f"{name} {fields.get(name)} is {source}: the session records the imported version"
        for name, source in stack_sources(stack).items()
    ]


def stack_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """`transformers 5.17.0 -> 5.24.0` for each stack field recorded in both that differs."""
    a, b = _shown_values(before), _shown_values(after)
    return [
        f"{name} {a[name]} -> {b[name]}"
        for name in a
        if name in b and a[name] is not None and b[name] is not None and a[name] != b[name]
    ]


def repeated_sessions(provenance: Mapping[str, Any]) -> str | None:
    """What is wrong when run.json records a `session_id` twice (two stacks for the same rows),
    or None."""
    counts: dict[str, int] = {}
    sessions = provenance.get("sessions")
    for session in sessions if isinstance(sessions, list) else []:
        if isinstance(session, Mapping) and "session_id" in session:
            key = repr(session["session_id"])
            counts[key] = counts.get(key, 0) + 1
    repeated = {k: n for k, n in counts.items() if n > 1}
    if not repeated:
        return None
    shown = ", ".join(f"{k} ({n} times)" for k, n in sorted(repeated.items())[:10])
    return (
        f"key 'sessions': session_id {shown} recorded more than once, so which stack "
        "computed that session's rows cannot be told"
    )


def unrecorded_sessions(table: Any, provenance: Mapping[str, Any]) -> str | None:
    """The sessions rows name that run.json does not record, with their rows, or None: the stack
    behind those rows is unknown."""
    if "session_id" not in getattr(table, "columns", ()):
        return None
    sessions = provenance.get("sessions")
    recorded = {
        s.get("session_id")
        for s in (sessions if isinstance(sessions, list) else [])
        if isinstance(s, Mapping)
    }
    named = table["session_id"].dropna().astype(int).value_counts().sort_index()
    missing = [(int(s), int(n)) for s, n in named.items() if int(s) not in recorded]
    if not missing:
        return None
    shown = ", ".join(f"{s} ({n} rows)" for s, n in missing[:10])
    more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
    return (
        f"rows name sweep session(s) {shown}{more} that run.json does not record: the software "
        "stack that computed them is unknown (restore run.json from a copy or the run's "
        "artifact/run.json, or rerun those cells)"
    )


def stack_warnings(table: Any, provenance: Mapping[str, Any]) -> list[str]:
    """One line per (model, series) whose rows come from sessions with different stacks, naming
    each differing field per session and each session's rows: such a curve mixes the stack's
    effect with the budget's (`analyze` prints these). First, one line for rows of unrecorded
    sessions; rows without a session and sessions without a stack are left out."""
    if "session_id" not in getattr(table, "columns", ()):
        return []
    unknown = unrecorded_sessions(table, provenance)
    return ([unknown] if unknown is not None else []) + _stack_lines(table, provenance)


def _stack_lines(table: Any, provenance: Mapping[str, Any]) -> list[str]:
    """`stack_warnings`' lines of sessions whose stacks differ."""
    stacks = {
        s.get("session_id"): (stack_fields(s["stack"]), stack_sources(s["stack"]))
        for s in provenance.get("sessions") or []
        if isinstance(s, Mapping) and isinstance(s.get("stack"), Mapping)
    }
    if len(stacks) < 2:
        return []
    rows = table[table["session_id"].notna()]
    out = []
    for (model, series), group in rows.groupby(["model", "series"], sort=True, observed=True):
        counts = group["session_id"].astype(int).value_counts().sort_index()
        known = [int(s) for s in counts.index if int(s) in stacks]
        if len(known) < 2:
            continue
        fields = sorted({f for s in known for f in stacks[s][0]})
        parts = []
        for name in fields:
            values = {s: (stacks[s][0].get(name), stacks[s][1].get(name)) for s in known}
            if len({v for v in values.values() if v[0] is not None}) > 1:
                shown = " vs ".join(
                    f"{v} (session {s}, {int(counts[s])} rows{f', {where}' if where else ''})"
                    for s, (v, where) in values.items()
                )
                parts.append(f"{name} {shown}")
        if parts:
            out.append(
                f"model {model}, series {series} mixes answers from sweep sessions whose "
                f"software stacks differ: {'; '.join(parts)}; its budget differences may be "
                "the stack's (rerun the older cells under one stack, or compare the sessions "
                "with `itemscale compare`)"
            )
    return out
