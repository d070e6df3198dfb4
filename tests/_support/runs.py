"""Hand-made runs for the artifact and report tests: every model answers every item at three
budgets plus a text-only baseline, one model output tries to run script (`XSS_TEXT`), and a
mixed run adds a timeout, a NOANSWER and open-ended (scored) items."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from itemscale.analysis.audit import (
    audit_transitions,
    automatic_annotations,
    write_annotations,
    write_audit,
)
from itemscale.collect.items import EvidenceSpan, Item, write_items_jsonl
from itemscale.core.responses import normalise_responses, write_run

XSS_TEXT = (
    'The answer is <script>window.__pwned=1</script> <img src=x onerror="window.__pwned=2"> B'
)
LABELS = (("f8", 8, 4000), ("f16", 16, 2000), ("f32", 32, 1000))
N_SOURCE_FRAMES = 64
FPS = 8.0


def make_run(
    run_dir: Path,
    *,
    seed: int = 0,
    n_items: int = 24,
    models: tuple[str, ...] = ("tiny<b>model</b>",),
    with_audit: bool = True,
) -> tuple[pd.DataFrame, list[Item]]:
    """A small run: every model answers every item at 3 budgets plus a text-only baseline."""
    rng = np.random.default_rng(seed)
    items: list[Item] = []
    rows: list[dict[str, object]] = []
    for n in range(n_items):
        start = float(rng.integers(0, 7))
        items.append(
            Item(
                item_id=f"item{n:02d}<i>",
                video_id=f"video{n // 2}",
                question=f"question {n}?",
                options=("red", "green", "blue", "grey"),
                answer="A",
                evidence=(EvidenceSpan(start=start, end=start + 0.5),),
            )
        )
    for model in models:
        for it in items:
            text_answer = str(rng.choice(list("ABCD")))
            rows.append(_row(model, it, "text-only", 0, 0, None, text_answer, rng))
            for label, frames, pixels in LABELS:
                answer = "A" if rng.random() < 0.6 else str(rng.choice(list("BCD")))
                rows.append(_row(model, it, label, frames, pixels, frames, answer, rng))
    df = normalise_responses(pd.DataFrame(rows))
    # one model output that tries to run script, on the largest budget
    df.loc[(df["config_label"] == "f32") & (df["item_id"] == items[0].item_id), "raw_text"] = (
        XSS_TEXT
    )
    write_run(
        run_dir, df, {"protocol": {"name": "unit <test>"}, "started_at": "2026-01-01T00:00:00Z"}
    )
    write_items_jsonl(run_dir / "items.jsonl", items)
    if with_audit:
        audit = audit_transitions(df, items)
        write_audit(run_dir, audit, "adjacent")
        write_annotations(run_dir / "annotations.parquet", automatic_annotations(audit))
    return df, items


def _row(
    model: str,
    it: Item,
    label: str,
    frames: int,
    pixels: int,
    k: int | None,
    answer: str,
    rng: np.random.Generator,
) -> dict[str, object]:
    indices = None
    if k:
        indices = np.linspace(0, N_SOURCE_FRAMES - 1, k).round().astype(int).tolist()
    return {
        "model": model,
        "item_id": it.item_id,
        "video_id": it.video_id,
        "task_kind": "mcqa",
        "series": "default",
        "config_id": f"cfg-{label}",
        "config_label": label,
        "axis_order": float(frames),
        "frames": frames,
        "pixels": pixels or None,
        "repeat": 0,
        "status": "ok",
        "raw_text": f"Answer: {answer}",
        "answer": answer,
        "correct": float(answer == it.answer),
        "confidence": float(rng.uniform(0.25, 1.0)),
        "frame_indices": indices,
        "frame_timestamps": [i / FPS for i in indices] if indices else None,
    }


def make_mixed_run(run: Path) -> list[Item]:
    """A run with a timeout, a NOANSWER and two open-ended (scored) items."""
    df, items = make_run(run, n_items=8, with_audit=False)
    df = df.copy()
    fail = (df["item_id"] == items[1].item_id) & (df["config_label"] == "f16")
    df.loc[fail, ["status", "answer", "correct", "raw_text"]] = ["timeout", None, None, None]
    noans = (df["item_id"] == items[2].item_id) & (df["config_label"] == "f8")
    df.loc[noans, ["status", "answer", "correct"]] = ["noanswer", "NOANSWER", 0.0]
    scored = df["item_id"].isin([items[3].item_id, items[4].item_id])
    df.loc[scored, "task_kind"] = "open_qa"
    df.loc[scored, "score"] = np.where(df.loc[scored, "config_label"] == "f32", 0.2, 0.9)
    df.loc[scored, "correct"] = np.nan
    write_run(run, normalise_responses(df), {"protocol": "mixed"})
    return items


GRID = tuple(
    (f"{frames}f@{side}", frames, side * side, 10 * frames + n)
    for frames in (2, 4, 8)
    for n, side in enumerate((56, 112))
)


def make_grid_run(run_dir: Path, *, n_items: int = 40, seed: int = 1) -> pd.DataFrame:
    """A frames x resolution grid (2, 4, 8 frames at short side 56 and 112), as the demo sweeps:
    accuracy rises with frames, one item regresses only at the largest budget (a group of one
    in the heat map), and one model output is long enough to need wrapping in the item table."""
    rng = np.random.default_rng(seed)
    rows: list[dict[str, object]] = []
    for n in range(n_items):
        it = Item(
            item_id=f"grid{n:02d}",
            video_id=f"gv{n // 2}",
            question=f"question {n}?",
            options=("red", "green", "blue", "grey"),
            answer="A",
        )
        for label, frames, pixels, order in GRID:
            p_right = 0.2 + 0.09 * frames
            answer = "A" if rng.random() < p_right else str(rng.choice(list("BCD")))
            if n == 0:  # right everywhere but the largest budget
                answer = "B" if label == "8f@112" else "A"
            row = _row("grid model", it, label, frames, pixels, frames, answer, rng)
            row.update(config_id=f"cfg-{label}", axis_order=float(order))
            rows.append(row)
    df = normalise_responses(pd.DataFrame(rows))
    long_output = "word " * 400
    df.loc[df["config_label"] == "8f@112", "raw_text"] = long_output + "Answer: A"
    write_run(run_dir, df, {"protocol": {"name": "grid"}})
    return df


#: The item response run's planted items: their outcome falls as ability rises (a < 0).
IRT_PLANTED = 5


def irt_table(*, seed: int = 48, n_items: int = 80, models: int = 3) -> pd.DataFrame:
    """Outcomes drawn from a known 2PL: `models` models at six budgets each (the ability rises
    with the budget, each model a little above the last), `n_items` items with positive
    discriminations except the first `IRT_PLANTED` (a = -2.5): enough respondents (>= 10) and
    items (>= 50) for the report's item response section."""
    from _support.tables import table

    rng = np.random.default_rng(seed)
    a = np.exp(rng.normal(0.3, 0.3, n_items))
    b = rng.normal(0.0, 1.5, n_items)
    a[:IRT_PLANTED], b[:IRT_PLANTED] = -2.5, 0.0
    labels = [f"{8 * 2**k}f" for k in range(6)]
    frames = []
    for m in range(models):
        theta = -1.5 + 0.6 * np.arange(6) + 0.4 * m
        p = 1.0 / (1.0 + np.exp(-a[None, :] * (theta[:, None] - b[None, :])))
        y = (rng.random(p.shape) < p).astype(float)
        matrix = {f"q{j:03d}": [float(v) for v in y[:, j]] for j in range(n_items)}
        videos = {f"q{j:03d}": f"v{j // 2}" for j in range(n_items)}
        frames.append(table(matrix, labels=labels, videos=videos, model=f"model {m}"))
    return normalise_responses(pd.concat(frames, ignore_index=True))


def make_irt_run(run_dir: Path, **kwargs: int) -> pd.DataFrame:
    """`irt_table` written as a run."""
    df = irt_table(**kwargs)
    write_run(run_dir, df, {"protocol": {"name": "irt"}})
    return df
