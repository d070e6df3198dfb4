"""`itemscale audit` end to end on real H.264 files: pathways, contact sheets decoded with PyAV,
the coders' CSV round trip, and the audit carried into the artifact."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from itemscale.analysis.audit import read_annotations, read_audit
from itemscale.cli import main
from itemscale.collect.items import EvidenceSpan, Item, write_items_jsonl
from itemscale.core.responses import normalise_responses, write_run
from itemscale.report import verify_artifact

FPS = 8
N_FRAMES = 40


def _video(path: Path, seed: int) -> None:
    from itemscale.collect.video import encode_video

    rng = np.random.default_rng(seed)
    base = rng.integers(0, 255, (N_FRAMES, 3))
    frames = [
        np.broadcast_to(base[i].astype(np.uint8), (24, 32, 3)).copy() for i in range(N_FRAMES)
    ]
    encode_video(path, frames, fps=FPS)


def _row(
    item: str, label: str, frames: list[int], correct: float, answer: str, pixels: int | None
) -> dict[str, object]:
    n = len(frames)
    return {
        "model": "m",
        "item_id": item,
        "video_id": f"v-{item}",
        "task_kind": "mcqa",
        "series": "default",
        "config_id": f"c-{label}",
        "config_label": label,
        "axis_order": float(n),
        "frames": n,
        "pixels": pixels,
        "repeat": 0,
        "status": "ok",
        "answer": answer,
        "correct": correct,
        "raw_text": f"({answer})",
        "frame_indices": frames or None,
        "frame_timestamps": [f / FPS for f in frames] or None,
    }


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    (run / "videos").mkdir(parents=True)
    _video(run / "videos" / "a.mp4", 0)
    _video(run / "videos" / "b.mp4", 1)
    items = [
        # evidence at 1.0-1.2 s = frames 8-9: frame 8 is in f4's frames, not in f8's
        Item(
            item_id="a",
            video_id="v-a",
            question="?",
            options=("x", "y"),
            answer="A",
            video_path="videos/a.mp4",
            evidence=(EvidenceSpan(start=1.0, end=1.2),),
        ),
        # no evidence spans; f8 keeps every f4 frame: distractor_added
        Item(
            item_id="b",
            video_id="v-b",
            question="?",
            options=("x", "y"),
            answer="A",
            video_path="videos/b.mp4",
        ),
        # the video is missing: audited, but no sheet
        Item(
            item_id="c",
            video_id="v-c",
            question="?",
            options=("x", "y"),
            answer="A",
            video_path="videos/missing.mp4",
        ),
    ]
    write_items_jsonl(run / "items.jsonl", items)
    rows = [
        _row("a", "text-only", [], 0.0, "B", None),
        _row("a", "f4", [0, 8, 20, 30], 1.0, "A", 768),
        _row("a", "f8", [2, 6, 12, 16, 22, 26, 32, 36], 0.0, "B", 192),
        _row("b", "f4", [0, 10, 20, 30], 1.0, "A", 768),
        _row("b", "f8", [0, 5, 10, 15, 20, 25, 30, 35], 0.0, "B", 768),
        _row("c", "f4", [0, 10, 20, 30], 1.0, "A", 768),
        _row("c", "f8", [1, 5, 11, 15, 21, 25, 31, 35], 0.0, "B", 768),
    ]
    rows[0]["frames"] = 0
    rows[0]["axis_order"] = 0.0
    write_run(run, normalise_responses(pd.DataFrame(rows)), {"protocol": "cli test"})
    return run


@pytest.mark.slow
def test_audit_sheets_csv_round_trip_and_artifact(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from PIL import Image

    coders = tmp_path / "coders.csv"
    assert main(["audit", str(run_dir), "--sheets", "--export", str(coders)]) == 0
    out = capsys.readouterr().out
    assert "audited 3 harmful transition(s)" in out
    assert "no sheet: m / c (f4 -> f8)" in out
    audit = read_audit(run_dir).set_index("item_id")
    assert audit["pathway"].to_dict() == {
        "a": "evidence_dropped",
        "b": "distractor_added",
        "c": "unexplained",
    }
    assert list(audit.loc["b", "kept"]) == [0, 10, 20, 30]
    assert list(audit.loc["b", "added"]) == [5, 15, 25, 35]

    sheets = sorted((run_dir / "audit_sheets").glob("*.png"))
    assert [p.stem for p in sheets] == sorted(audit.loc[["a", "b"], "transition_id"])
    sheet = np.asarray(
        Image.open(run_dir / "audit_sheets" / f"{audit.loc['a', 'transition_id']}.png")
    )
    # 72-px tiles of 32x24 frames are 96 wide; cell = 96 + 2*3 + 2; 4 frames left, 8 right (8 per row)
    assert sheet.shape[1] == 4 * 104 + 12 + 8 * 104
    # a header of two text lines (the budget, its frame count) sits above the tiles
    top = 2 * 12 + 6
    assert (sheet[:top, :200].max(axis=2) < 60).any()
    # item a: every f4 frame was dropped (red borders); frame 8 is evidence (green bar)
    assert tuple(sheet[top + 1, 1]) == (215, 48, 39)
    assert tuple(sheet[top + 1 + 72 + 6, 104 + 1]) == (26, 152, 80)
    # the frame content is the decoded video's colour for frame 0
    expected = np.random.default_rng(0).integers(0, 255, (N_FRAMES, 3))[0]
    assert np.abs(sheet[top + 30, 30].astype(int) - expected).max() <= 12
    # each tile is captioned with its timestamp, below its evidence bar
    caption = sheet[top + 1 + 72 + 6 + 4 : top + 1 + 72 + 6 + 4 + 12, :100]
    assert (caption.max(axis=2) < 60).any()

    rows = list(csv.DictReader(io.StringIO(coders.read_text())))
    assert [r["automatic_label"] for r in rows] == [
        audit.set_index("transition_id").loc[r["transition_id"], "pathway"] for r in rows
    ]
    rows[0]["human_label"] = "unexplained"
    rows[0]["note"] = "<script>alert(1)</script> flicker"
    with coders.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert main(["audit", str(run_dir), "--import", str(coders), "--coder", "ana"]) == 0
    ann = read_annotations(run_dir / "annotations.parquet")
    assert (ann["source"] == "automatic").sum() == 3
    human = ann[ann["source"] == "human"]
    assert human["coder"].tolist() == ["ana"] and human["label"].tolist() == ["unexplained"]
    # a re-run keeps the coder's label
    assert main(["audit", str(run_dir)]) == 0
    assert (read_annotations(run_dir / "annotations.parquet")["source"] == "human").sum() == 1

    rows[1]["human_label"] = "blurry"
    with coders.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    capsys.readouterr()
    assert main(["audit", str(run_dir), "--import", str(coders), "--coder", "ana"]) == 2
    assert f"{coders}:3: column 'human_label'" in capsys.readouterr().err

    assert main(["report", str(run_dir), "--bootstrap", "10"]) == 0
    artifact = run_dir / "artifact"
    html = (artifact / "report.html").read_text()
    # two contact sheets in the gallery (the heat map's raster is a PNG too, inside its SVG)
    assert html.count("<img class='sheet'") == 2
    assert html.count("src='data:image/png;base64,") == 2
    assert "&lt;script&gt;alert(1)&lt;/script&gt; flicker" in html
    assert "<script>alert(1)" not in html
    found = verify_artifact(artifact)
    assert found.ok, found.problems


def test_audit_sheets_are_a_library_call(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from itemscale.analysis.audit import audit_transitions
    from itemscale.collect.items import read_items_jsonl
    from itemscale.core.responses import read_run
    from itemscale.workflows import write_audit_sheets

    df, _ = read_run(run_dir)
    items = read_items_jsonl(run_dir / "items.jsonl")
    transitions = audit_transitions(df, items)
    by_id = {it.item_id: it for it in items}
    written, failures = write_audit_sheets(run_dir, transitions, by_id, run_dir, limit=1)
    assert written == 1 and failures == []
    assert len(list((run_dir / "audit_sheets").glob("*.png"))) == 1
    # a second call replaces the folder whole: no sheet of the earlier call lingers
    written, failures = write_audit_sheets(run_dir, transitions, by_id, run_dir, limit=3)
    assert written == 2 and [f.split(":")[0] for f in failures] == ["m / c (f4 -> f8)"]
    assert len(list((run_dir / "audit_sheets").glob("*.png"))) == 2
    assert capsys.readouterr() == ("", "")
