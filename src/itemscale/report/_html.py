"""report.html: one self-contained page, built from the artifact's own files alone, so it shows
exactly the numbers `verify` checks. Model outputs, item ids and model names are untrusted: the
templates escape every text, the data block escapes `<`, `>` and `&`, the script builds cells
with `textContent`, and a Content-Security-Policy allows only the page's own script.
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
from ._templating import Markup, render

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
    run: Mapping[str, object] = field(default_factory=dict)
    title: str = "itemscale report"
    #: item id -> question text (from the artifact's items.jsonl, when it has one)
    questions: Mapping[str, str] = field(default_factory=dict)
    options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def json_for_script(payload: Any) -> str:
    """No `<`, `>` or `&` survives, so no `</script>` or `<!--` in a model output ends the block."""
    text = json.dumps(payload, ensure_ascii=False, allow_nan=False, default=str)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _audit_section(inputs: ReportInputs) -> Markup:
    audit = inputs.audit
    if audit is None or audit.empty:
        return render("audit.html", audited=audit is not None, cards=[])
    counts = audit.groupby(["model", "series", "pathway"]).size().reset_index(name="n")
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
        ev = (
            f"evidence frames {t.evidence_from} at j, {t.evidence_to} at k"
            if bool(t.evidence_known)
            else "no evidence spans"
        )
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
        png = inputs.sheets.get(str(t.transition_id))
        sheet = "data:image/png;base64," + base64.b64encode(png).decode("ascii") if png else ""
        detail = (
            f"frames kept {t.n_kept}, dropped {t.n_dropped}, added {t.n_added}; pixels/frame "
            f"{_shown(t.pixels_from)} -> {_shown(t.pixels_to)}; {ev}; {change} (text-only {blind})"
        )
        cards.append((t, detail, human.get(str(t.transition_id), []), sheet))
    return render(
        "audit.html",
        audited=True,
        counts=[
            (c.model, c.series, c.pathway, int(str(c.n))) for c in counts.itertuples(index=False)
        ],
        cards=cards,
        more=len(audit) - len(shown),
    )


QUESTION_CHARS = 160


def _score(value: Any) -> str:
    return "n/a" if value is None or pd.isna(value) else f"{float(value):.2f}"


def _text_only_answers(responses: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(model, item) -> the text-only run's answer, or an open-ended item's score."""
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
    """An open-ended card shows what the model said, not only its scores."""
    rows = responses[
        (responses["repeat"] == 0) & responses["item_id"].isin(set(transitions["item_id"]))
    ]
    cols = [rows[c].to_numpy(dtype=object) for c in ("model", "series", "item_id", "config_label")]
    text = rows["raw_text"].to_numpy(dtype=object)
    return {(m, se, it, c): v for m, se, it, c, v in zip(*cols, text, strict=True)}


def _shown(value: Any, missing: str = "not recorded") -> str:
    if _missing(value):
        return missing
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _key_values(value: Any) -> Any:
    """A dict as its sorted (key, value) pairs, readable rather than an escaped JSON string."""
    if isinstance(value, dict):
        return [
            (str(k), _key_values(v)) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
        ]
    if isinstance(value, list):
        return ", ".join(json.dumps(v) if isinstance(v, dict | list) else str(v) for v in value)
    return "null" if value is None else str(value)


def _provenance_section(
    prov: Provenance, boot: BootstrapSettings, run: Mapping[str, object]
) -> Markup:
    tool = prov.get("tool", {})
    rows: list[tuple[str, Any]] = [
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
    rows += [(k, _key_values(v)) for k, v in nested]
    return render("provenance.html", rows=rows)


def _session_stacks(run: Mapping[str, object]) -> list[tuple[str, Any]]:
    """Kept apart from the packages of the machine that drew the report."""
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


def _derived_notes(prov: Provenance) -> list[tuple[str, str, str]]:
    """(file, status, reason) of each derived file the report recomputed or flagged."""
    record = prov.get(DERIVED_KEY) if isinstance(prov, dict) else None
    if not isinstance(record, dict):
        return []
    return [
        (name, str(entry.get("status")), str(entry.get("reason")))
        for name, entry in sorted(record.items())
        if isinstance(entry, dict)
    ]


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
    prov = inputs.provenance
    fit = report_fit(inputs.responses)
    page = render(
        "report.html",
        csp=csp,
        css=Markup(CSS),
        title=inputs.title,
        headline=headline_sentence(inputs.measures, inputs.comparison),
        models=", ".join(sorted({str(m) for m in inputs.trajectories["model"]})),
        counted=counted,
        irt_link=Markup(nav_link(fit)),
        comparison=comparison_section(inputs.comparison),
        measures=measures_section(inputs.measures, inputs.trajectories, source_files(inputs.run)),
        irt=Markup(irt_section(fit)),
        derived_notes=_derived_notes(prov),
        cascade_file=CASCADE_FILE,
        cascade=Markup(cascade_section(inputs.cascade)),
        intervention_dir=INTERVENTION_DIR,
        intervention=Markup(intervention_section(inputs.intervention, GALLERY_LIMIT)),
        audit_file=AUDIT_FILE,
        audit=_audit_section(inputs),
        items=Markup(explorer_section(payload)),
        provenance=_provenance_section(prov, inputs.measures.bootstrap, inputs.run),
        data=Markup(json_for_script(payload)),
        script=Markup(JS),
    )
    return str(page) + "\n"
