"""report.html: one self-contained page that answers "which items does a bigger budget hurt, why,
and how much compute can I save".

Everything on the page is built from the artifact's own files (measures, trajectories,
responses, audit, cascade, intervention), so the page shows exactly the numbers `verify`
checks. This module assembles the page and draws the audit, the item table and the provenance;
the measures section is `_html_measures`, the cascade and intervention sections
`_html_policies`. Model outputs, item ids and model names are untrusted: text goes through `html.escape`,
the item table's data is a JSON block with `<`, `>` and `&` written as unicode escapes, the
script builds cells with `textContent`, and a Content-Security-Policy allows only the page's
own script.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import pandas as pd

from ..analysis.audit import AUDIT_FILE
from ..analysis.measures import INTERVENTION_SERIES_PREFIX, AnalysisResult, BootstrapSettings
from ..analysis.policies import (
    CASCADE_FILE,
    INTERVENTION_DIR,
    CascadeReport,
    InterventionResult,
    ReportFileError,
)
from ..core.responses import redact, source_files, stack_fields
from ._assets import CSS, JS, script_hash
from ._comparison import PaperComparison
from ._derived import DERIVED_KEY
from ._escape import esc
from ._explorer import explorer_payload, explorer_section
from ._html_irt import irt_section, nav_link, report_fit
from ._html_measures import (
    comparison_section,
    headline_sentence,
    interval_method_text,
    measures_section,
)
from ._html_policies import cascade_section, intervention_section
from ._provenance import Provenance

ROW_LIMIT: Final[int] = 2000
GALLERY_LIMIT: Final[int] = 60
OUTPUT_CHARS: Final[int] = 400


#: The response columns the page reads (the audit cards and the item explorer): the report
#: reads only these (`read_response_columns`), so a large table's other columns are not held.
REPORT_COLUMNS: Final[frozenset[str]] = frozenset(
    {
        *("model", "series", "item_id", "config_label", "task_kind", "axis_order", "frames"),
        *("repeat", "status", "answer", "score", "raw_text", "reference", "attributes"),
        *("config_id", "correct"),  # the item response section's fit
        "pixels",  # the explorer draws a grid of frames x pixels as the partial order it is
    }
)


@dataclass(frozen=True)
class ReportInputs:
    #: measures.json, validated
    measures: AnalysisResult
    trajectories: pd.DataFrame
    #: the responses' REPORT_COLUMNS (any others are not read)
    responses: pd.DataFrame
    provenance: Provenance
    audit: pd.DataFrame | None = None
    annotations: pd.DataFrame | None = None
    sheets: Mapping[str, bytes] = field(default_factory=dict)
    #: cascade.json validated (a file that does not fit its layout: the error, shown as such)
    cascade: CascadeReport | ReportFileError | None = None
    #: the seed paper's numbers beside itemscale's, when the run is its release (comparison.json)
    comparison: PaperComparison | None = None
    #: intervention/<name>.json validated, or its error; the one-file layout before as its dict
    intervention: Mapping[str, InterventionResult | ReportFileError | dict[str, Any]] | None = None
    #: run.json as the sweep or importer wrote it
    run: Mapping[str, object] = field(default_factory=dict)
    title: str = "itemscale report"
    #: item id -> question text (from the artifact's items.jsonl, when it has one)
    questions: Mapping[str, str] = field(default_factory=dict)
    #: item id -> its answer options (the same file)
    options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def json_for_script(payload: Any) -> str:
    """JSON safe inside <script type="application/json">: no `<`, `>` or `&` survives, so no
    `</script>` or `<!--` in a model output can end the block."""
    text = json.dumps(payload, ensure_ascii=False, allow_nan=False, default=str)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _audit_section(inputs: ReportInputs) -> str:
    audit = inputs.audit
    if audit is None:
        return "<p class='muted'>not run (no audit.parquet; run <code>itemscale audit RUN_DIR --sheets</code>)</p>"
    if audit.empty:
        return "<p>No harmful transitions to audit.</p>"
    counts = audit.groupby(["model", "series", "pathway"]).size().reset_index(name="n")
    rows = "".join(
        f"<tr><td>{esc(c.model)}</td><td>{esc(c.series)}</td><td>{esc(c.pathway)}</td>"
        f"<td class='num'>{int(str(c.n))}</td></tr>"
        for c in counts.itertuples(index=False)
    )
    human: dict[str, list[str]] = {}
    ann = inputs.annotations
    if ann is not None and not ann.empty:
        for rec in ann[ann["source"] == "human"].itertuples(index=False):
            note = f" ({rec.note!s})" if rec.note else ""
            human.setdefault(str(rec.transition_id), []).append(
                f"{rec.coder!s}: {rec.label!s}{note}"
            )
    text_only = _text_only_answers(inputs.responses)
    cards = []
    shown = audit.sort_values(["pathway", "model", "series", "item_id"], kind="stable").head(
        GALLERY_LIMIT
    )
    outputs = _outputs_of(inputs.responses, shown)
    kinds = inputs.responses[["model", "item_id", "task_kind"]].drop_duplicates()
    open_ended = {(str(m), str(i)) for m, i, k in kinds.itertuples(index=False) if str(k) != "mcqa"}
    for t in shown.itertuples(index=False):
        img = ""
        png = inputs.sheets.get(str(t.transition_id))
        if png:
            uri = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
            img = f"<img class='sheet' alt='frames at {esc(t.from_label)} (left) and {esc(t.to_label)} (right)' src='{uri}'>"
        ev = (
            f"evidence frames {t.evidence_from} at j, {t.evidence_to} at k"
            if bool(t.evidence_known)
            else "no evidence spans"
        )
        labels = "".join(f"<li>{esc(h)}</li>" for h in human.get(str(t.transition_id), []))
        # an open-ended item (scored, not a letter; its answers may be NaN from Parquet)
        scored = (t.model, t.item_id) in open_ended or (
            _missing(t.from_answer) and _missing(t.to_answer)
        )
        change = (
            f"score {_score(t.from_value)} -> {_score(t.to_value)}; output "
            f"{_quoted(outputs.get((t.model, t.series, t.item_id, t.from_label)))} -> "
            f"{_quoted(outputs.get((t.model, t.series, t.item_id, t.to_label)))}"
            if scored
            else f"answer {_shown(t.from_answer)} -> {_shown(t.to_answer)}"
        )
        blind = text_only.get((str(t.model), str(t.item_id)), "not run")
        cards.append(
            f"<div class='card' data-transition='{esc(t.transition_id)}'>"
            f"<div><span class='tag'>{esc(t.pathway)}</span><b>{esc(t.item_id)}</b> "
            f"<span class='muted'>{esc(t.model)} / {esc(t.series)}: {esc(t.from_label)} -> {esc(t.to_label)}</span></div>"
            f"<div>frames kept {t.n_kept}, dropped {t.n_dropped}, added {t.n_added}; pixels/frame "
            f"{esc(_shown(t.pixels_from))} -> {esc(_shown(t.pixels_to))}; {esc(ev)}; "
            f"{esc(change)} (text-only {esc(blind)})</div>"
            f"<div class='muted'>rule: {esc(t.reason)}</div>"
            + (f"<div>human labels:<ul>{labels}</ul></div>" if labels else "")
            + img
            + "</div>"
        )
    more = len(audit) - len(shown)
    return (
        "<table><thead><tr><th>model</th><th>series</th><th>pathway</th><th>transitions</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
        "<p class='legend muted'>contact sheets: budget j left, k right; <span style='background:#969696'>kept</span>"
        "<span style='background:#d73027'>dropped</span><span style='background:#3182bd'>added</span>"
        "<span style='background:#1a9850'>evidence</span></p>"
        f"<div class='gallery'>{''.join(cards)}</div>"
        + (f"<p class='muted'>{more} more transitions in audit.parquet</p>" if more > 0 else "")
    )


QUESTION_CHARS = 160


def _score(value: Any) -> str:
    return "n/a" if value is None or pd.isna(value) else f"{float(value):.2f}"


def _text_only_answers(responses: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(model, item) -> what the text-only run gave: its answer, or for an open-ended item its
    score (an audit card says "not run" only when there is no text-only response at all)."""
    rows = responses[(responses["frames"] == 0) & (responses["repeat"] == 0)]
    out: dict[tuple[str, str], str] = {}
    for rec in rows[["model", "item_id", "answer", "score", "status"]].to_dict("records"):
        answer: Any = rec["answer"]
        score: Any = rec["score"]
        if answer is not None and not pd.isna(answer):
            text = str(answer)
        elif score is not None and not pd.isna(score):
            text = f"score {float(score):.2f}"
        else:
            text = str(rec["status"])
        out[(str(rec["model"]), str(rec["item_id"]))] = text
    return out


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


def _quoted(text: Any, limit: int = 80) -> str:
    if _missing(text):
        return "not recorded"
    cut = redact(str(text))
    return repr(cut if len(cut) <= limit else cut[: limit - 3] + "...")


def _outputs_of(responses: pd.DataFrame, transitions: pd.DataFrame) -> dict[tuple[Any, ...], Any]:
    """(model, series, item, config label) -> the stored model output, for the transitions'
    items (an open-ended card shows what the model said, not only its scores)."""
    rows = responses[
        (responses["repeat"] == 0) & responses["item_id"].isin(set(transitions["item_id"]))
    ]
    cols = [rows[c].to_numpy(dtype=object) for c in ("model", "series", "item_id", "config_label")]
    text = rows["raw_text"].to_numpy(dtype=object)
    return {(m, se, it, c): v for m, se, it, c, v in zip(*cols, text, strict=True)}


def _shown(value: Any, missing: str = "not recorded") -> str:
    """A value for a reader: `None`/NaN say what they mean instead of printing "None"."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return missing
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _key_values(value: Any, depth: int = 0) -> str:
    """A JSON value as nested key: value lines, readable rather than an escaped JSON string."""
    if isinstance(value, dict):
        if not value:
            return "<span class='muted'>(none)</span>"
        items = "".join(
            f"<li><b>{esc(str(k))}</b>: {_key_values(v, depth + 1)}</li>"
            for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
        )
        return f"<ul class='kv'>{items}</ul>"
    if isinstance(value, list):
        return esc(
            ", ".join(json.dumps(v) if isinstance(v, dict | list) else str(v) for v in value)
        )
    return esc("null" if value is None else str(value))


def _provenance_section(
    prov: Provenance, boot: BootstrapSettings, run: Mapping[str, object]
) -> str:
    tool = prov.get("tool", {})
    rows = [
        (
            "itemscale",
            f"{tool.get('version', '?')} (commit {tool.get('git_commit') or 'unknown'}{' + local edits' if tool.get('git_dirty') else ''})",
        ),
        ("host", str(prov.get("host", {}).get("hostname", "?"))),
        ("artifact written", str(prov.get("times", {}).get("artifact_written", "?"))),
        (
            "bootstrap",
            f"{boot.bootstrap} video resamples, seed {boot.seed}; {interval_method_text(boot)}",
        ),
        (
            "responses sha256",
            # the key is RESPONSES_FILE
            str(prov.get("inputs", {}).get("responses.parquet", {}).get("sha256", "?")),
        ),
    ]
    nested: list[tuple[str, Any]] = []
    specs = run.get("model_specs")
    if isinstance(specs, dict):
        for entry in specs.values():
            if isinstance(entry, dict):
                nested.append((f"model {entry.get('name', '?')}", entry.get("spec")))
    if run.get("decoder"):
        nested.append(("decoder (run)", run["decoder"]))
    nested += _session_stacks(run)
    packages = prov.get("packages")
    if isinstance(packages, dict):
        nested.append(("packages of the machine that drew this report", packages))
    protocol = run.get("protocol")
    if isinstance(protocol, dict) and isinstance(protocol.get("benchmark"), dict):
        nested.append(("benchmark", protocol["benchmark"]))
    body = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows)
    body += "".join(f"<tr><th>{esc(k)}</th><td>{_key_values(v)}</td></tr>" for k, v in nested)
    return (
        f"<table><tbody>{body}</tbody></table><p>Every number here is recomputed from "
        "<code>responses.parquet</code> by <code>itemscale verify ARTIFACT</code>; README.md lists "
        "the commands.</p>"
    )


def _session_stacks(run: Mapping[str, object]) -> list[tuple[str, Any]]:
    """Each sweep session's software stack (what computed its answers, run.json `sessions[]`),
    kept apart from the packages of the machine that drew the report."""
    sessions = run.get("sessions")
    out: list[tuple[str, Any]] = []
    for session in sessions if isinstance(sessions, list) else []:
        if isinstance(session, dict) and isinstance(session.get("stack"), dict):
            fields = stack_fields(session["stack"])
            label = (
                f"stack of sweep session {session.get('session_id', '?')} "
                f"({session.get('started_at', '?')}, the answers' software)"
            )
            out.append((label, {k: "unknown" if v is None else v for k, v in fields.items()}))
    return out


def _derived_notes(prov: Provenance, *names: str) -> str:
    """What the report did with a derived file that no longer fit the responses (recomputed it,
    or shows it flagged as stale), said where its section starts."""
    record = prov.get(DERIVED_KEY) if isinstance(prov, dict) else None
    if not isinstance(record, dict):
        return ""
    return "".join(
        f"<p class='derived {esc(entry.get('status'))}'><b>{esc(name)}: "
        f"{esc(entry.get('status'))}</b>. {esc(entry.get('reason'))}</p>"
        for name, entry in sorted(record.items())
        if isinstance(entry, dict) and any(name.startswith(n) for n in names)
    )


def render_report(inputs: ReportInputs) -> str:
    payload = explorer_payload(
        inputs.trajectories,
        inputs.responses,
        {
            i: {"question": q, "options": inputs.options.get(i, ())}
            for i, q in inputs.questions.items()
        },
        inputs.audit,
        inputs.sheets,
    )
    csp = (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src {script_hash(JS)}; base-uri 'none'; form-action 'none'"
    )
    traj = inputs.trajectories
    on_axis = traj[~traj["series"].astype(str).str.startswith(INTERVENTION_SERIES_PREFIX)]
    # items, not (model, series, item) rows: an intervention's re-runs are not more items
    n_items = on_axis["item_id"].nunique()
    n_traj = on_axis[["model", "series", "item_id"]].drop_duplicates().shape[0]
    counted = f"{n_items} items" + (
        f" ({n_traj} trajectories over models and series)" if n_traj != n_items else ""
    )
    models = ", ".join(sorted({str(m) for m in inputs.trajectories["model"]}))
    prov = inputs.provenance
    fit = report_fit(inputs.responses)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{esc(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{esc(inputs.title)}</title>
<style>{CSS}</style>
</head>
<body>
<header>
<h1>{esc(inputs.title)}</h1>
<p class="headline">{esc(headline_sentence(inputs.measures, inputs.comparison))}</p>
<div class="muted">models: {esc(models)}; {esc(counted)}</div>
<nav><a href="#measures">curves and trajectories</a>{nav_link(fit)}<a href="#cascade">compute savings</a><a href="#intervention">intervention</a><a href="#audit">frame audit</a><a href="#items">items</a><a href="#provenance">provenance</a></nav>
</header>
<main>
<section id="measures"><h2>Which items does a bigger budget hurt?</h2>{comparison_section(inputs.comparison)}{measures_section(inputs.measures, inputs.trajectories, source_files(inputs.run))}</section>
{irt_section(fit)}<section id="cascade"><h2>How much compute can I save? (cascade and stopping policies)</h2>{_derived_notes(prov, CASCADE_FILE)}{cascade_section(inputs.cascade)}</section>
<section id="intervention"><h2>Sampling intervention</h2>{_derived_notes(prov, INTERVENTION_DIR)}{intervention_section(inputs.intervention, GALLERY_LIMIT)}</section>
<section id="audit"><h2>Why? The frame audit</h2>{_derived_notes(prov, AUDIT_FILE)}{_audit_section(inputs)}</section>
<section id="items"><h2>Items</h2>{explorer_section(payload)}</section>
<section id="provenance"><h2>Provenance</h2>{_provenance_section(inputs.provenance, inputs.measures.bootstrap, inputs.run)}</section>
</main>
<script type="application/json" id="itemscale-data">{json_for_script(payload)}</script>
<script>{JS}</script>
</body>
</html>
"""
