"""The report's item explorer: one row per item trajectory, filters, search, and a click that
opens the item. Its data is one JSON block `static/explorer.js` reads (`textContent` only). At
most `EMBED_LIMIT` rows are embedded, harmful and mixed items first, so a 2-million-row run
still gives a report of a few MB.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

import numpy as np
import pandas as pd

from ..core.responses import redact
from ._templating import Markup, render
from ._trajectories import KEY_COLUMNS, PATTERN_NAMES, PATTERNS, partial_orders

#: Rows embedded in report.html at most (the rest: trajectories.parquet).
EMBED_LIMIT: Final[int] = 20_000
#: Rows the explorer draws at once ("show more" draws the next page).
PAGE: Final[int] = 200
QUESTION_CHARS: Final[int] = 300
OUTPUT_CHARS: Final[int] = 400
FIELDS: Final[tuple[str, ...]] = (
    "model",
    "series",
    "item",
    "video",
    "pattern",
    "kind",
    "question",
    "values",
    "answers",
    "text_value",
    "text_answer",
    "gold",
    "output",
    "attributes",
)


def json_value(value: Any) -> Any:
    """Numbers as numbers, NaN and pd.NA as null, anything else as its text."""
    if value is None:
        return None
    if isinstance(value, float | np.floating):
        return None if np.isnan(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    if value is pd.NA:
        return None
    return str(value)


def _attributes(raw: Any) -> list[str]:
    if raw is None or (isinstance(raw, float) and np.isnan(raw)):
        return []
    try:
        parsed = json.loads(str(raw)) if not isinstance(raw, dict) else raw
    except ValueError:
        return []
    return [f"{k}={v}" for k, v in sorted(parsed.items())] if isinstance(parsed, dict) else []


def _per_item(responses: pd.DataFrame) -> dict[str, dict[tuple[Any, ...], Any]]:
    base = responses[responses["repeat"] == 0]
    col = {
        c: base[c].to_numpy(dtype=object)
        for c in ("model", "series", "item_id", "config_label", "answer", "raw_text", "reference")
    }
    attrs = base["attributes"].to_numpy(dtype=object) if "attributes" in base else None
    frames = base["frames"].to_numpy()
    out: dict[str, dict[tuple[Any, ...], Any]] = {
        k: {} for k in ("gold", "text", "answer", "last", "attrs")
    }
    order = np.argsort(base["axis_order"].to_numpy(dtype=float), kind="stable").tolist()
    for r in order:
        model, series, item = col["model"][r], col["series"][r], col["item_id"][r]
        ref = col["reference"][r]
        if ref is not None and not pd.isna(ref):
            out["gold"].setdefault((model, item), ref)
        if frames[r] == 0:
            out["text"].setdefault((model, item), col["answer"][r])
            continue
        out["answer"][(model, series, item, col["config_label"][r])] = col["answer"][r]
        out["last"][(model, series, item)] = col["raw_text"][r]
        if attrs is not None:
            out["attrs"].setdefault((item,), attrs[r])
    return out


def _audit_index(audit: pd.DataFrame | None, sheets: Mapping[str, bytes]) -> dict[str, list[Any]]:
    if audit is None or audit.empty:
        return {}
    out: dict[str, list[Any]] = {}
    cols = ("model", "series", "item_id", "from_label", "to_label", "pathway", "reason")
    for rec in audit[[*cols, "transition_id"]].itertuples(index=False):
        key = "\x1f".join(str(x) for x in rec[:3])
        tid = str(rec.transition_id)
        out.setdefault(key, []).append(
            [
                str(rec.from_label),
                str(rec.to_label),
                str(rec.pathway),
                str(rec.reason),
                tid,
                tid in sheets,
            ]
        )
    return out


def explorer_payload(
    traj: pd.DataFrame,
    responses: pd.DataFrame,
    items: Mapping[str, Mapping[str, Any]] | None = None,
    audit: pd.DataFrame | None = None,
    sheets: Mapping[str, bytes] | None = None,
    limit: int = EMBED_LIMIT,
) -> dict[str, Any]:
    """One row per trajectory (FIELDS), the budget labels, filter choices and the audit
    transitions. `items` maps item ids to {"question", "options"}."""
    items = items or {}
    labels = [c for c in traj.columns if c not in (*KEY_COLUMNS, "text_only")]
    rank = {p: n for n, p in enumerate(PATTERNS)}
    # harmful and mixed items first when the table is cut, then the rest in table order
    total = len(traj)
    patterns = traj["pattern"].astype(str).to_numpy()
    ranks = np.array([rank.get(p, len(rank)) for p in patterns], dtype=np.int64)
    order = (
        np.sort(np.argsort(ranks, kind="stable")[:limit]).tolist()
        if total > limit
        else list(range(total))
    )
    keys = traj[["model", "series", "item_id", "video_id", "pattern", "kind"]].to_numpy(
        dtype=object
    )
    numbers = traj[["text_only", *labels]].to_numpy(dtype=float)
    if total > limit:  # look-ups for the embedded items only, not a dict entry per row
        responses = responses[responses["item_id"].isin({keys[n][2] for n in order})]
    look = _per_item(responses)
    rows: list[list[Any]] = []
    attr_values: set[str] = set()
    for n in order:
        model, series, item, video, pattern, kind = keys[n]
        info = items.get(str(item)) or {}
        question = info.get("question")
        values = [None if np.isnan(v) else float(v) for v in numbers[n]]
        attributes = _attributes(look["attrs"].get((item,)))
        attr_values.update(attributes)
        output = look["last"].get((model, series, item))
        rows.append(
            [
                json_value(model),
                json_value(series),
                json_value(item),
                json_value(video),
                json_value(pattern),
                json_value(kind),
                None if question is None else redact(str(question))[:QUESTION_CHARS],
                values[1:],
                [json_value(look["answer"].get((model, series, item, lab))) for lab in labels],
                values[0],
                json_value(look["text"].get((model, item))),
                json_value(look["gold"].get((model, item))),
                # redacted whole, then cut: a cut first could split a key and hide it
                None if output is None or pd.isna(output) else redact(str(output))[:OUTPUT_CHARS],
                attributes,
            ]
        )
    return {
        "fields": list(FIELDS),
        "labels": labels,
        "rows": rows,
        "options": {
            str(i): [str(o) for o in info.get("options") or ()]
            for i, info in items.items()
            if info.get("options")
        },
        "audit": _audit_index(audit, sheets or {}),
        # the budgets each (model, series) has: its trajectory shows only those
        "axes": {
            f"{m}\x1f{se}": [j for j, lab in enumerate(labels) if group[lab].notna().any()]
            for (m, se), group in traj.groupby(["model", "series"], sort=False)
        },
        # on a grid of frames x pixels, the pairs [smaller, larger] (label positions) the
        # budget order compares: the strip marks where it does not, the item lists its flips
        "orders": _orders(responses, labels),
        "patterns": [p for p in PATTERNS if p in set(traj["pattern"])],
        "pattern_names": dict(PATTERN_NAMES),
        "models": sorted({str(m) for m in traj["model"]}),
        "series": sorted({str(s) for s in traj["series"]}),
        "videos": sorted({str(v) for v in traj["video_id"]}),
        "attributes": sorted(attr_values),
        "total": total,
        "page": PAGE,
    }


def _orders(responses: pd.DataFrame, labels: list[str]) -> dict[str, list[list[int]]]:
    where = {lab: j for j, lab in enumerate(labels)}
    return {
        f"{m}\x1f{se}": [[where[a], where[b]] for a, b in pairs if a in where and b in where]
        for (m, se), pairs in partial_orders(responses).items()
    }


def explorer_section(payload: Mapping[str, Any]) -> Markup:
    embedded, total = len(payload["rows"]), payload["total"]
    return render(
        "explorer.html",
        partial_order=bool(payload.get("orders")),
        cut=total > embedded,
        embedded=f"{embedded:,}",
        total=f"{total:,}",
    )
