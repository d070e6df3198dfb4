"""Frame audit: transitions, pathway rules, annotations round trip, contact sheets."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _support.audit_items import item
from itemscale.analysis.audit import (
    PATHWAYS,
    AuditError,
    audit_transitions,
    automatic_annotations,
    contact_sheet,
    encode_png,
    export_annotations_csv,
    import_annotations_csv,
    merge_annotations,
    pathway_counts,
    read_annotations,
    read_audit,
    write_annotations,
    write_audit,
)
from itemscale.analysis.audit._frames import TransitionFacts, classify_pathway
from itemscale.collect.items import Item
from itemscale.core.responses import NOANSWER, normalise_responses

CONFIGS = {"text": (0, 0.0), "f8": (8, 1.0), "f16": (16, 2.0), "f32": (32, 3.0)}


def row(
    item: str,
    cfg: str,
    correct: float | None,
    answer: str | None,
    frames: list[int] | None = None,
    *,
    pixels: int | None = None,
    model: str = "m",
    series: str = "default",
    status: str = "ok",
) -> dict[str, object]:
    n, order = CONFIGS[cfg]
    return {
        "model": model,
        "item_id": item,
        "video_id": f"v_{item}",
        "task_kind": "mcqa",
        "series": series,
        "config_id": f"id_{cfg}",
        "config_label": "text-only" if cfg == "text" else cfg,
        "axis_order": order,
        "frames": n,
        "pixels": pixels,
        "repeat": 0,
        "status": status,
        "answer": answer,
        "correct": correct,
        "frame_indices": frames,
        # 1 fps video: a frame's timestamp is its index
        "frame_timestamps": [float(f) for f in frames] if frames is not None else None,
    }


@pytest.fixture
def table() -> pd.DataFrame:
    rows = [
        # evidence at t=2 seen at f8, lost at f16; the wrong answer also equals the text prior,
        # but evidence_dropped comes first
        row("drop", "text", 0.0, "B"),
        row("drop", "f8", 1.0, "A", [0, 2, 4, 6], pixels=1000),
        row("drop", "f16", 0.0, "B", [1, 3, 5, 7, 9, 11], pixels=1000),
        # no evidence spans, wrong answer equals the text-only answer
        row("text", "text", 0.0, "C"),
        row("text", "f8", 1.0, "A", [0, 4], pixels=1000),
        row("text", "f16", 0.0, "C", [1, 5], pixels=1000),
        # evidence [0, 1.5): 2 of 4 frames at f8, 2 of 8 at f16
        row("dilute", "text", 0.0, "A"),
        row("dilute", "f8", 1.0, "A", [0, 1, 4, 6], pixels=1000),
        row("dilute", "f16", 0.0, "C", [0, 1, 2, 3, 4, 5, 6, 7], pixels=1000),
        # evidence [0, 3.5): share 2/4 -> 4/8 (not lower), same pixels, 2 non-evidence frames added
        row("distract", "f8", 1.0, "A", [0, 2, 5, 7], pixels=1000),
        row("distract", "f16", 0.0, "D", [0, 1, 2, 3, 5, 7, 8, 9], pixels=1000),
        # evidence [0, 3.5): same share, fewer pixels per frame at k
        row("pixels", "f8", 1.0, "A", [0, 2, 5, 7], pixels=1000),
        row("pixels", "f16", 0.0, "D", [0, 1, 2, 3, 5, 7, 8, 9], pixels=500),
        # no evidence, not nested: unexplained
        row("unexpl", "f8", 1.0, "A", [0, 4], pixels=1000),
        row("unexpl", "f16", 0.0, "B", [1, 5, 9], pixels=1000),
        # no evidence, nested: distractor_added
        row("nested", "f8", 1.0, "A", [0, 8], pixels=1000),
        row("nested", "f16", 0.0, "B", [0, 4, 8, 12], pixels=1000),
        # never harmful
        row("good", "f8", 1.0, "A", [0], pixels=1000),
        row("good", "f16", 1.0, "A", [0, 1], pixels=1000),
        row("benef", "f8", 0.0, "B", [0], pixels=1000),
        row("benef", "f16", 1.0, "A", [0, 1], pixels=1000),
        # a failed cell is never audited
        row("failed", "f8", 1.0, "A", [0], pixels=1000),
        row("failed", "f16", None, None, None, status="timeout"),
    ]
    return normalise_responses(pd.DataFrame(rows))


@pytest.fixture
def items() -> list[Item]:
    return [
        item("drop", [(2.0, 2.5)]),
        item("text"),
        item("dilute", [(0.0, 1.5)]),
        item("distract", [(0.0, 3.5)]),
        item("pixels", [(0.0, 3.5)]),
        item("unexpl"),
        item("nested"),
    ]


def test_pathways_by_rule(table: pd.DataFrame, items: list[Item]) -> None:
    audit = audit_transitions(table, items).set_index("item_id")
    assert sorted(audit.index) == sorted(
        ["drop", "text", "dilute", "distract", "pixels", "unexpl", "nested"]
    )
    expected = {
        "drop": "evidence_dropped",
        "text": "text_prior",
        "dilute": "evidence_diluted",
        "distract": "distractor_added",
        "pixels": "evidence_diluted",
        "unexpl": "unexplained",
        "nested": "distractor_added",
    }
    assert audit["pathway"].to_dict() == expected
    drop = audit.loc["drop"]
    assert list(drop["kept"]) == []
    assert list(drop["dropped"]) == [0, 2, 4, 6]
    assert list(drop["added"]) == [1, 3, 5, 7, 9, 11]
    assert (drop["evidence_from"], drop["evidence_to"]) == (1, 0)
    assert drop["text_answer"] == "B" and drop["to_answer"] == "B"
    distract = audit.loc["distract"]
    assert list(distract["kept"]) == [0, 2, 5, 7]
    assert list(distract["added"]) == [1, 3, 8, 9]
    assert (distract["evidence_from"], distract["evidence_to"], distract["evidence_added"]) == (
        2,
        4,
        2,
    )
    assert audit.loc["pixels", "pixels_to"] == 500
    assert not bool(audit.loc["text", "evidence_known"])
    assert audit.loc["text", "from_label"] == "f8" and audit.loc["text", "to_label"] == "f16"
    counts = pathway_counts(audit.reset_index())
    assert counts == {
        "m": {
            "default": {
                "evidence_dropped": 1,
                "text_prior": 1,
                "evidence_diluted": 2,
                "distractor_added": 2,
                "unexplained": 1,
            }
        }
    }


def test_adjacent_versus_all_pairs() -> None:
    rows = [
        row("late", "f8", 1.0, "A", [0]),
        row("late", "f16", 1.0, "A", [0, 1]),
        row("late", "f32", 0.0, "B", [0, 1, 2]),
        row("early", "f8", 1.0, "A", [0]),
        row("early", "f16", 0.0, "B", [0, 1]),
        row("early", "f32", 0.0, "B", [0, 1, 2]),
    ]
    df = normalise_responses(pd.DataFrame(rows))
    adj = audit_transitions(df, pairs="adjacent")
    assert sorted(zip(adj["item_id"], adj["from_label"], adj["to_label"], strict=True)) == [
        ("early", "f8", "f16"),
        ("late", "f16", "f32"),
    ]
    assert adj["adjacent"].all()
    every = audit_transitions(df, pairs="all")
    assert sorted(zip(every["item_id"], every["from_label"], every["to_label"], strict=True)) == [
        ("early", "f8", "f16"),
        ("early", "f8", "f32"),
        ("late", "f16", "f32"),
        ("late", "f8", "f32"),
    ]
    assert sorted(every["adjacent"].tolist()) == [False, False, True, True]
    assert every["transition_id"].is_unique


def test_mismatched_timestamps_name_the_item(items: list[Item]) -> None:
    rows = [row("drop", "f8", 1.0, "A", [0, 2]), row("drop", "f16", 0.0, "B", [1, 3])]
    rows[1]["frame_timestamps"] = [1.0]
    with pytest.raises(AuditError, match="item 'drop'"):
        audit_transitions(normalise_responses(pd.DataFrame(rows)), items)


def test_no_frame_indices_only_text_prior_or_unexplained() -> None:
    rows = [
        row("a", "text", 0.0, "B"),
        row("a", "f8", 1.0, "A"),
        row("a", "f16", 0.0, "B"),
        row("b", "f8", 1.0, "A"),
        row("b", "f16", 0.0, "C"),
    ]
    audit = audit_transitions(normalise_responses(pd.DataFrame(rows))).set_index("item_id")
    assert audit["pathway"].to_dict() == {"a": "text_prior", "b": "unexplained"}
    assert audit.loc["b", "n_added"] == 0


facts_strategy = st.builds(
    TransitionFacts,
    frames_from=st.one_of(st.none(), st.lists(st.integers(0, 20), max_size=8).map(tuple)),
    frames_to=st.one_of(st.none(), st.lists(st.integers(0, 20), max_size=8).map(tuple)),
    evidence_from=st.one_of(st.none(), st.integers(0, 4)),
    evidence_to=st.one_of(st.none(), st.integers(0, 4)),
    evidence_added=st.one_of(st.none(), st.integers(0, 4)),
    pixels_from=st.one_of(st.none(), st.integers(1, 10)),
    pixels_to=st.one_of(st.none(), st.integers(1, 10)),
    to_answer=st.one_of(st.none(), st.sampled_from(["A", "B", "NOANSWER"])),
    text_answer=st.one_of(st.none(), st.sampled_from(["A", "B", "NOANSWER"])),
)


@given(facts_strategy)
@settings(max_examples=300, deadline=None)
def test_classify_precedence(facts: TransitionFacts) -> None:
    label, reason = classify_pathway(facts)
    assert label in PATHWAYS and reason
    known = facts.evidence_from is not None and facts.evidence_to is not None
    if known and facts.evidence_from and not facts.evidence_to:
        assert label == "evidence_dropped"
    elif facts.to_answer not in (None, "NOANSWER") and facts.to_answer == facts.text_answer:
        assert label == "text_prior"
    if label == "text_prior":
        assert facts.to_answer == facts.text_answer
    if label in ("evidence_dropped", "evidence_diluted"):
        assert known and facts.evidence_from


@given(
    st.lists(st.integers(0, 40), min_size=1, max_size=10, unique=True),
    st.lists(st.integers(0, 40), min_size=1, max_size=10, unique=True),
)
@settings(max_examples=25, deadline=None)
def test_kept_dropped_added_partition(a: list[int], b: list[int]) -> None:
    df = normalise_responses(
        pd.DataFrame([row("x", "f8", 1.0, "A", a), row("x", "f16", 0.0, "B", b)])
    )
    t = audit_transitions(df).iloc[0]
    kept, dropped, added = set(t["kept"]), set(t["dropped"]), set(t["added"])
    assert kept | dropped == set(a) and kept | added == set(b)
    assert not (kept & dropped) and not (kept & added) and not (dropped & added)
    assert t["n_kept"] + t["n_dropped"] == len(a)


def test_store_and_annotations_round_trip(
    tmp_path: Path, table: pd.DataFrame, items: list[Item]
) -> None:
    audit = audit_transitions(table, items)
    write_audit(tmp_path, audit, "adjacent")
    back = read_audit(tmp_path)
    assert back["transition_id"].tolist() == audit["transition_id"].tolist()
    assert back["pathway"].tolist() == audit["pathway"].tolist()
    auto = automatic_annotations(audit, now="2026-01-01T00:00:00+00:00")
    path = tmp_path / "annotations.parquet"
    write_annotations(path, auto)

    csv_path = tmp_path / "coders.csv"
    assert export_annotations_csv(audit, csv_path) == len(audit)
    with csv_path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["automatic_label"] for r in rows] == audit["pathway"].tolist()
    assert all(r["human_label"] == "" for r in rows)
    rows[0]["human_label"] = "unexplained"
    rows[0]["coder"] = "ana"
    rows[0]["note"] = 'looks like <b>"motion"</b>, not text'
    rows[1]["human_label"] = "text_prior"
    with csv_path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    human = import_annotations_csv(csv_path, audit, coder="bo", now=lambda: "T1")
    assert human["coder"].tolist() == ["ana", "bo"]
    assert human["label"].tolist() == ["unexplained", "text_prior"]
    assert set(human["source"]) == {"human"}

    merged = merge_annotations(read_annotations(path), human)
    write_annotations(path, merged)
    stored = read_annotations(path)
    assert (stored["source"] == "automatic").sum() == len(audit)
    assert (stored["source"] == "human").sum() == 2
    note = stored.loc[stored["coder"] == "ana", "note"].item()
    assert note == 'looks like <b>"motion"</b>, not text'
    # a re-run of the audit replaces automatic rows and keeps the coders' rows
    again = merge_annotations(stored, automatic_annotations(audit, now="T2"))
    assert (again["source"] == "human").sum() == 2
    assert set(again.loc[again["source"] == "automatic", "annotated_at"]) == {"T2"}


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)


def test_import_rejects_bad_rows(tmp_path: Path, table: pd.DataFrame, items: list[Item]) -> None:
    audit = audit_transitions(table, items)
    tid = audit["transition_id"].iloc[0]
    model, item_id = audit["model"].iloc[0], audit["item_id"].iloc[0]
    header = ["transition_id", "model", "item_id", "human_label", "coder", "note"]
    p = tmp_path / "c.csv"
    _write_csv(
        p, header, [[tid, model, item_id, "", "", ""], [tid, model, item_id, "blurry", "a", ""]]
    )
    with pytest.raises(AuditError, match=r"c\.csv:3: column 'human_label'"):
        import_annotations_csv(p, audit)
    _write_csv(p, header, [["nope", model, item_id, "unexplained", "a", ""]])
    with pytest.raises(AuditError, match=r"c\.csv:2: column 'transition_id'"):
        import_annotations_csv(p, audit)
    _write_csv(p, header, [[tid, model, "other-item", "unexplained", "a", ""]])
    with pytest.raises(AuditError, match=r"c\.csv:2: column 'item_id'"):
        import_annotations_csv(p, audit)
    _write_csv(p, header, [[tid, model, item_id, "unexplained", "", ""]])
    with pytest.raises(AuditError, match=r"c\.csv:2: column 'coder'"):
        import_annotations_csv(p, audit)
    _write_csv(p, ["transition_id", "model"], [[tid, model]])
    with pytest.raises(AuditError, match=r"c\.csv:1: missing column"):
        import_annotations_csv(p, audit)


def test_contact_sheet_layout() -> None:
    red = np.zeros((10, 20, 3), dtype=np.uint8)
    red[..., 0] = 200
    sheet = contact_sheet(
        [red, red],
        [red, red, red],
        status_from=["kept", "dropped"],
        status_to=["kept", "added", "added"],
        evidence_from=[True, False],
        evidence_to=[True, False, False],
        tile=20,
        columns=8,
    )
    assert sheet.dtype == np.uint8 and sheet.ndim == 3
    # tile 20 high -> 40 wide; cell = 40 + 2*3 + 2; left block 2 cells, gap 12, right 3 cells
    assert sheet.shape[1] == 2 * 48 + 12 + 3 * 48
    # the dropped frame's border is red, the added frames' borders blue
    assert tuple(sheet[1, 48 + 1]) == (215, 48, 39)
    assert tuple(sheet[1, 2 * 48 + 12 + 48 + 1]) == (49, 130, 189)
    # evidence bar under the first frame
    assert tuple(sheet[1 + 20 + 6, 1]) == (26, 152, 80)
    png = encode_png(sheet)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="unknown frame status"):
        contact_sheet([red], [red], status_from=["gone"], status_to=["kept"])


def test_contact_sheet_names_its_budgets_and_moments() -> None:
    grey = np.full((10, 20, 3), 128, dtype=np.uint8)
    bare = contact_sheet([grey], [grey, grey], status_from=["kept"], status_to=["kept", "added"])
    named = contact_sheet(
        [grey],
        [grey, grey],
        status_from=["kept"],
        status_to=["kept", "added"],
        label_from="8f@112",
        label_to="16f@112",
        times_from=[1.5],
        times_to=[1.5, 63.25],
    )
    # a header of two text lines above the tiles and a caption line under each
    assert named.shape[0] == bare.shape[0] + 2 * 12 + 6 + 12 + 2
    assert named.shape[1] == bare.shape[1]
    header = named[: 2 * 12 + 6]
    assert (header.max(axis=2) < 60).any(), "no label drawn in the header"
    relabelled = contact_sheet(
        [grey],
        [grey, grey],
        status_from=["kept"],
        status_to=["kept", "added"],
        label_from="8f@56",
        label_to="16f@112",
        times_from=[1.5],
        times_to=[1.5, 63.25],
    )
    assert not np.array_equal(named[:12], relabelled[:12])
    # the caption strip under the first tile carries ink (its timestamp)
    caption = named[2 * 12 + 6 + 10 + 6 + 4 + 2 :, :40]
    assert (caption.max(axis=2) < 60).any()
    with pytest.raises(ValueError, match="times_to"):
        contact_sheet([grey], [grey], status_from=["kept"], status_to=["kept"], times_to=[])


def test_scored_items_use_eps_in_a_mixed_series() -> None:
    def scored(item: str, cfg: str, score: float) -> dict[str, object]:
        r = row(item, cfg, None, None, [0])
        r.update(task_kind="open_qa", score=score, correct=None)
        return r

    rows = [
        scored("small_drop", "f8", 0.9),
        scored("small_drop", "f16", 0.85),
        scored("big_drop", "f8", 0.9),
        scored("big_drop", "f16", 0.5),
        row("mc", "f8", 1.0, "A", [0]),
        row("mc", "f16", 0.0, "B", [0, 1]),
    ]
    audit = audit_transitions(normalise_responses(pd.DataFrame(rows)), eps=0.1)
    assert sorted(audit["item_id"]) == ["big_drop", "mc"]
    assert audit.set_index("item_id").loc["big_drop", "to_value"] == 0.5


def test_coders_csv_defuses_spreadsheet_formulas(tmp_path: Path) -> None:
    model = '=HYPERLINK("http://x","click")'
    rows = [
        row("-1+1", "f8", 1.0, "A", [0], model=model),
        row("-1+1", "f16", 0.0, "@SUM(A1)", [0, 1], model=model),
    ]
    audit = audit_transitions(normalise_responses(pd.DataFrame(rows)))
    path = tmp_path / "c.csv"
    export_annotations_csv(audit, path)
    with path.open(newline="") as fh:
        rec = next(csv.DictReader(fh))
    assert rec["model"] == "'" + model
    assert rec["item_id"] == "'-1+1"
    assert rec["answer_to"] == "'@SUM(A1)"
    rec["human_label"] = "unexplained"
    rec["coder"] = "ana"
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rec))
        writer.writeheader()
        writer.writerow(rec)
    human = import_annotations_csv(path, audit)
    assert human["model"].tolist() == [model]
    assert human["item_id"].tolist() == ["-1+1"]


# ---- Review: kept, dropped and added sets, timestamp evidence (2 fps) and every pathway, by hand


HAND_CONFIGS = {"text": (0, 0.0), "lo": (4, 1.0), "hi": (8, 2.0)}


def hand_row(
    item: str,
    cfg: str,
    correct: float,
    answer: str,
    frames: list[int] | None = None,
    *,
    pixels: int | None = 1000,
    timestamps: bool = True,
) -> dict[str, object]:
    n, order = HAND_CONFIGS[cfg]
    return {
        "model": "m",
        "item_id": item,
        "video_id": f"v_{item}",
        "task_kind": "mcqa",
        "series": "default",
        "config_id": f"id_{cfg}",
        "config_label": cfg,
        "axis_order": order,
        "frames": n,
        "pixels": None if cfg == "text" else pixels,
        "repeat": 0,
        "status": "ok",
        "answer": answer,
        "correct": correct,
        "frame_indices": frames,
        "frame_timestamps": [f / 2 for f in frames] if frames is not None and timestamps else None,
    }


ROWS = [
    # span [5, 6) s = frames 10, 11. j sees frame 10 (t = 5.0), k sees t = 2.5, 7.5, ...
    hand_row("dropped", "lo", 1, "A", [0, 10, 20, 30]),
    hand_row("dropped", "hi", 0, "B", [0, 5, 15, 25, 35, 45]),
    # span [2.5, 5.0), end excluded: frame 5 (t = 2.5) is evidence, frame 10 (t = 5.0) is not;
    # at k frames 5, 6, 8; share 1/4 -> 3/8 is higher, pixels equal; added 6, 8 are evidence,
    # 1 and 30 are not
    hand_row("closed", "lo", 1, "A", [0, 5, 10, 20]),
    hand_row("closed", "hi", 0, "B", [0, 1, 5, 6, 8, 10, 20, 30]),
    # span [0, 1.5) s = frames 0..2: 2 of 4 at j, 2 of 8 at k -> diluted by share
    hand_row("share", "lo", 1, "A", [0, 2, 10, 20]),
    hand_row("share", "hi", 0, "B", [0, 2, 4, 6, 8, 10, 12, 14]),
    # same share (1/2 -> 2/4) but fewer pixels per frame at k -> diluted by pixels
    hand_row("pixels", "lo", 1, "A", [0, 10], pixels=2000),
    hand_row("pixels", "hi", 0, "B", [0, 2, 10, 20], pixels=1000),
    # every added frame is evidence and the share grows: nothing explains it
    hand_row("unexpl", "lo", 1, "A", [0, 10]),
    hand_row("unexpl", "hi", 0, "B", [0, 1, 2, 10]),
    # diluted as "share", but the wrong answer at k equals the text-only answer: text_prior first
    hand_row("prior", "text", 0, "C"),
    hand_row("prior", "lo", 1, "A", [0, 2, 10, 20]),
    hand_row("prior", "hi", 0, "C", [0, 2, 4, 6, 8, 10, 12, 14]),
    # NOANSWER at k equal to a NOANSWER text-only answer is not a text prior; no spans, nested
    hand_row("noans", "text", 0, NOANSWER),
    hand_row("noans", "lo", 1, "A", [0, 10]),
    hand_row("noans", "hi", 0, NOANSWER, [0, 5, 10, 15]),
    # spans but no timestamps: evidence unknown, not absent; not nested -> unexplained
    hand_row("nots", "lo", 1, "A", [0, 10], timestamps=False),
    hand_row("nots", "hi", 0, "B", [1, 5, 9, 13], timestamps=False),
    # span [2.5, 5.0): j's only frame inside [2.5, 5.0] is frame 10, exactly at the end (t = 5.0),
    # which the suite never draws the event on: no evidence at j, none at k. Counting the end
    # (rules version 1) made this "evidence_dropped"; the added frames 1, 3 are distractors.
    hand_row("at_end", "lo", 1, "A", [0, 10]),
    hand_row("at_end", "hi", 0, "B", [0, 1, 3]),
]
ITEMS = [
    item("dropped", ((5.0, 6.0),)),
    item("closed", ((2.5, 5.0),)),
    item("share", ((0.0, 1.5),)),
    item("pixels", ((0.0, 1.5),)),
    item("unexpl", ((0.0, 1.5),)),
    item("prior", ((0.0, 1.5),)),
    item("noans"),
    item("nots", ((0.0, 1.5),)),
    item("at_end", ((2.5, 5.0),)),
]


@pytest.fixture(scope="module")
def audit() -> pd.DataFrame:
    table = normalise_responses(pd.DataFrame(ROWS))
    return audit_transitions(table, ITEMS).set_index("item_id")


def test_one_transition_per_harmful_item(audit: pd.DataFrame) -> None:
    assert sorted(audit.index) == sorted(i.item_id for i in ITEMS)
    assert (audit["from_label"] == "lo").all() and (audit["to_label"] == "hi").all()


def test_kept_dropped_added_by_hand(audit: pd.DataFrame) -> None:
    r = audit.loc["dropped"]
    assert list(r["kept"]) == [0]
    assert list(r["dropped"]) == [10, 20, 30]
    assert list(r["added"]) == [5, 15, 25, 35, 45]
    assert (r["n_kept"], r["n_dropped"], r["n_added"]) == (1, 3, 5)
    r = audit.loc["closed"]
    assert (list(r["kept"]), list(r["dropped"]), list(r["added"])) == (
        [0, 5, 10, 20],
        [],
        [1, 6, 8, 30],
    )


def test_evidence_counts_from_timestamps(audit: pd.DataFrame) -> None:
    expect = {
        # (evidence at j, evidence at k, evidence frames among the added)
        "dropped": (1, 0, 0),
        "closed": (1, 3, 2),
        "at_end": (0, 0, 0),
        "share": (2, 2, 0),
        "pixels": (1, 2, 1),
        "unexpl": (1, 3, 2),
        "prior": (2, 2, 0),
    }
    for item_id, (ev_j, ev_k, ev_add) in expect.items():
        r = audit.loc[item_id]
        assert bool(r["evidence_known"]), item_id
        got = tuple(int(str(r[c])) for c in ("evidence_from", "evidence_to", "evidence_added"))
        assert got == (ev_j, ev_k, ev_add), item_id
    for item_id in ("noans", "nots"):
        r = audit.loc[item_id]
        assert not bool(r["evidence_known"])
        assert pd.isna(r["evidence_from"]) and pd.isna(r["evidence_to"])


def test_pathway_labels_by_hand(audit: pd.DataFrame) -> None:
    assert audit["pathway"].to_dict() == {
        "dropped": "evidence_dropped",
        "closed": "distractor_added",  # frames 1 and 30 are added non-evidence frames
        "share": "evidence_diluted",
        "pixels": "evidence_diluted",
        "unexpl": "unexplained",
        "prior": "text_prior",
        "noans": "distractor_added",  # no spans, j's frames {0, 10} all kept at k
        "nots": "unexplained",
        "at_end": "distractor_added",
    }
    assert audit.loc["share", "reason"] == "evidence share 2/4 -> 2/8"
    assert audit.loc["pixels", "reason"] == "pixels per frame 2000 -> 1000"
    assert audit.loc["closed", "reason"] == "2 non-evidence frame(s) added at k"
    counts = pathway_counts(audit.reset_index())["m"]["default"]
    assert counts == {
        "evidence_dropped": 1,
        "text_prior": 1,
        "evidence_diluted": 2,
        "distractor_added": 3,
        "unexplained": 2,
    }


def test_evidence_span_is_half_open() -> None:
    """[start, end): a frame exactly at a span's start is evidence, one exactly at its end is
    not, whatever the span's length; an empty span holds nothing."""
    from itemscale.analysis.audit import evidence_frames

    times = [0.0, 0.5, 1.0, 1.5, 2.0]
    assert evidence_frames(range(5), times, [(0.5, 1.5)]) == {1, 2}
    assert evidence_frames(range(5), times, [(1.5, 2.0), (0.0, 0.5)]) == {0, 3}
    assert evidence_frames(range(5), times, [(1.0, 1.0)]) == set()
    # the suite's own spans: an event drawn on frames [86, 88) at 10 fps is the span
    # [8.6, 8.8); frame 88 (t = 8.8, as the decoder computes it) shows the background
    span = (86 / 10, 88 / 10)
    assert evidence_frames([85, 86, 87, 88], [f * 1 / 10 for f in (85, 86, 87, 88)], [span]) == {
        86,
        87,
    }
