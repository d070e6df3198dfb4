"""Independent review of the frame audit (MEASURES.md "Frame audit", docs/report.md rules): kept,
dropped and added sets, evidence at j and k from timestamps and spans (a 2 fps video, so a
frame's time is index / 2, not its index), and every pathway label on a hand-made case."""

from __future__ import annotations

import pandas as pd
import pytest

from audit_items import item
from itemscale.audit import audit_transitions, pathway_counts
from itemscale.responses import NOANSWER, normalise_responses

CONFIGS = {"text": (0, 0.0), "lo": (4, 1.0), "hi": (8, 2.0)}


def row(
    item: str,
    cfg: str,
    correct: float,
    answer: str,
    frames: list[int] | None = None,
    *,
    pixels: int | None = 1000,
    timestamps: bool = True,
) -> dict[str, object]:
    n, order = CONFIGS[cfg]
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
    # span [5, 6] s = frames 10..12. j sees frame 10 (t = 5.0), k sees t = 2.5, 7.5, ...
    row("dropped", "lo", 1, "A", [0, 10, 20, 30]),
    row("dropped", "hi", 0, "B", [0, 5, 15, 25, 35, 45]),
    # span [2.5, 5.0], ends included: frames 5 (t = 2.5) and 10 (t = 5.0) at j; 6 and 8 at k
    # too; share 2/4 -> 4/8 is equal, pixels equal; added 6, 8 are evidence, 1 is not
    row("closed", "lo", 1, "A", [0, 5, 10, 20]),
    row("closed", "hi", 0, "B", [0, 1, 5, 6, 8, 10, 20, 30]),
    # span [0, 1] s = frames 0..2: 2 of 4 at j, 2 of 8 at k -> diluted by share
    row("share", "lo", 1, "A", [0, 2, 10, 20]),
    row("share", "hi", 0, "B", [0, 2, 4, 6, 8, 10, 12, 14]),
    # same share (1/2 -> 2/4) but fewer pixels per frame at k -> diluted by pixels
    row("pixels", "lo", 1, "A", [0, 10], pixels=2000),
    row("pixels", "hi", 0, "B", [0, 2, 10, 20], pixels=1000),
    # every added frame is evidence and the share grows: nothing explains it
    row("unexpl", "lo", 1, "A", [0, 10]),
    row("unexpl", "hi", 0, "B", [0, 1, 2, 10]),
    # diluted as "share", but the wrong answer at k equals the text-only answer: text_prior first
    row("prior", "text", 0, "C"),
    row("prior", "lo", 1, "A", [0, 2, 10, 20]),
    row("prior", "hi", 0, "C", [0, 2, 4, 6, 8, 10, 12, 14]),
    # NOANSWER at k equal to a NOANSWER text-only answer is not a text prior; no spans, nested
    row("noans", "text", 0, NOANSWER),
    row("noans", "lo", 1, "A", [0, 10]),
    row("noans", "hi", 0, NOANSWER, [0, 5, 10, 15]),
    # spans but no timestamps: evidence unknown, not absent; not nested -> unexplained
    row("nots", "lo", 1, "A", [0, 10], timestamps=False),
    row("nots", "hi", 0, "B", [1, 5, 9, 13], timestamps=False),
]
ITEMS = [
    item("dropped", ((5.0, 6.0),)),
    item("closed", ((2.5, 5.0),)),
    item("share", ((0.0, 1.0),)),
    item("pixels", ((0.0, 1.0),)),
    item("unexpl", ((0.0, 1.0),)),
    item("prior", ((0.0, 1.0),)),
    item("noans"),
    item("nots", ((0.0, 1.0),)),
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
        "closed": (2, 4, 2),
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
    }
    assert audit.loc["share", "reason"] == "evidence share 2/4 -> 2/8"
    assert audit.loc["pixels", "reason"] == "pixels per frame 2000 -> 1000"
    assert audit.loc["closed", "reason"] == "2 non-evidence frame(s) added at k"
    counts = pathway_counts(audit.reset_index())["m"]["default"]
    assert counts == {
        "evidence_dropped": 1,
        "text_prior": 1,
        "evidence_diluted": 2,
        "distractor_added": 2,
        "unexplained": 2,
    }
