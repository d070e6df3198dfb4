"""The run store: schema and migrations, identity, resume semantics, export."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from itemscale.collect.items import Item
from itemscale.collect.store import (
    MIGRATIONS,
    CellRow,
    RunStore,
    StoreError,
    cell_identity,
    open_store,
)
from itemscale.collect.store._migrations import SCHEMA_VERSION
from itemscale.core.responses import read_run

# The final schema, written out by hand: a migration that changes it must change this too.
EXPECTED_SCHEMA = {
    "cells": [
        ("cell_id", "TEXT", 0, 1),
        ("spec_id", "TEXT", 1, 0),
        ("model", "TEXT", 1, 0),
        ("item_id", "TEXT", 1, 0),
        ("video_id", "TEXT", 1, 0),
        ("task_kind", "TEXT", 1, 0),
        ("series", "TEXT", 1, 0),
        ("config_id", "TEXT", 1, 0),
        ("config_label", "TEXT", 1, 0),
        ("axis_order", "REAL", 1, 0),
        ("frames", "INTEGER", 1, 0),
        ("effective_frames", "INTEGER", 0, 0),
        ("pixels", "INTEGER", 0, 0),
        ("sampling", "TEXT", 0, 0),
        ("pipeline", "TEXT", 0, 0),
        ("repeat", "INTEGER", 1, 0),
        ("status", "TEXT", 1, 0),
        ("error", "TEXT", 0, 0),
        ("raw_text", "TEXT", 0, 0),
        ("answer", "TEXT", 0, 0),
        ("correct", "REAL", 0, 0),
        ("score", "REAL", 0, 0),
        ("token_f1", "REAL", 0, 0),
        ("rouge_l", "REAL", 0, 0),
        ("exact_match", "REAL", 0, 0),
        ("confidence", "REAL", 0, 0),
        ("option_probs", "TEXT", 0, 0),
        ("reference", "TEXT", 0, 0),
        ("visual_tokens", "INTEGER", 0, 0),
        ("frame_indices", "TEXT", 0, 0),
        ("frame_timestamps", "TEXT", 0, 0),
        ("latency_s", "REAL", 0, 0),
        ("attributes", "TEXT", 0, 0),
        ("source", "TEXT", 0, 0),
        ("attempts", "INTEGER", 1, 0),
        ("finished_at", "TEXT", 1, 0),
        ("margin", "REAL", 0, 0),
        ("scoring_rule", "TEXT", 0, 0),
        ("session_id", "INTEGER", 0, 0),
        ("rerun_of", "INTEGER", 0, 0),
    ],
    "models": [("spec_id", "TEXT", 0, 1), ("name", "TEXT", 1, 0), ("spec_json", "TEXT", 1, 0)],
    "videos": [("video_id", "TEXT", 0, 1), ("path", "TEXT", 0, 0), ("content_hash", "TEXT", 0, 0)],
    "sessions": [
        ("session_id", "INTEGER", 0, 1),
        ("started_at", "TEXT", 1, 0),
        ("finished_at", "TEXT", 0, 0),
        ("outcome", "TEXT", 0, 0),
        ("host", "TEXT", 1, 0),
        ("info_json", "TEXT", 1, 0),
    ],
    "model_loads": [
        ("fingerprint", "TEXT", 0, 1),
        ("spec_id", "TEXT", 1, 0),
        ("name", "TEXT", 1, 0),
        ("recorded_at", "TEXT", 1, 0),
    ],
}


def _schema(path: Path) -> dict[str, list[tuple[str, str, int, int]]]:
    db = sqlite3.connect(path)
    try:
        tables = [
            r[0]
            for r in db.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        return {
            t: [(r[1], r[2], r[3], r[5]) for r in db.execute(f"PRAGMA table_info({t})")]
            for t in sorted(tables)
        }
    finally:
        db.close()


def _row(cell_id: str = "c1", **overrides: object) -> CellRow:
    base: dict[str, object] = {
        "cell_id": cell_id,
        "spec_id": "spec-a",
        "model": "m",
        "item_id": "i1",
        "video_id": "v1",
        "task_kind": "mcqa",
        "series": "default",
        "config_id": "cfg8",
        "config_label": "8f",
        "axis_order": 8.0,
        "frames": 8,
        "repeat": 0,
        "status": "ok",
        "answer": "B",
        "correct": 1.0,
        "frame_indices": (0, 5, 9),
        "frame_timestamps": (0.0, 0.5, 0.9),
        "attributes": json.dumps({"duration": "short"}),
    }
    base.update(overrides)
    return CellRow(**base)  # type: ignore[arg-type]


def test_final_schema_and_version(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        assert store.schema_version == SCHEMA_VERSION == len(MIGRATIONS) == 7
    assert _schema(tmp_path / "store.sqlite") == EXPECTED_SCHEMA
    db = sqlite3.connect(tmp_path / "store.sqlite")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()


def test_migrates_an_old_store_keeping_its_cells(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    db = sqlite3.connect(path)
    db.executescript(MIGRATIONS[0])
    db.execute("PRAGMA user_version = 1")
    db.execute(
        "INSERT INTO cells (cell_id, spec_id, model, item_id, video_id, task_kind, series, "
        "config_id, config_label, axis_order, frames, repeat, status, finished_at, "
        "option_probs) VALUES "
        "('old', 's', 'm', 'i', 'v', 'mcqa', 'default', 'c', '8f', 8, 8, 0, 'ok', 't', "
        '\'{"A": 0.625, "B": 0.25, "C": 0.125}\'), '
        "('one', 's', 'm', 'j', 'v', 'mcqa', 'default', 'c', '8f', 8, 8, 0, 'ok', 't', "
        "'{\"A\": 0.75}'), "
        "('none', 's', 'm', 'k', 'v', 'mcqa', 'default', 'c', '8f', 8, 8, 0, 'ok', 't', NULL)"
    )
    db.commit()
    db.close()
    with RunStore(path) as store:
        assert store.schema_version == 7
        # an old cell is an ordinary one, no rerun (migration 7)
        assert store.cells_frame()["rerun_of"].isna().all()
        # an old cell does not say which session produced it (migration 6): unknown
        assert store.cells_frame()["session_id"].isna().all()
        # an old cell does not say how its answer was chosen (migration 5): unknown
        assert store.cells_frame()["scoring_rule"].isna().all()
        # migration 4 derives the top-two margin from the probabilities already stored
        margins = store.cells_frame().set_index("cell_id")["margin"]
        assert margins["old"] == 0.375 and margins["one"] == 0.75
        assert margins.isna()["none"]
        assert store.done_cell_ids() == {"old", "one", "none"}
        assert store.loaded_spec("fp") is None
        store.record_load("fp", "s", "m")
        assert store.loaded_spec("fp") == "s"
        store.record_video("v", "/x.mp4", "abc")
        assert store.video_hashes() == {"v": "abc"}
    assert _schema(path) == EXPECTED_SCHEMA


def test_refuses_a_newer_store_and_a_non_store(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 99")
    db.close()
    with pytest.raises(StoreError, match="schema version 99 is newer"):
        RunStore(path)
    junk = tmp_path / "junk" / "store.sqlite"
    junk.parent.mkdir()
    junk.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError, match="not a readable run store"):
        open_store(junk.parent)


def test_done_cells_and_retry_errors(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        store.record(
            [
                _row("ok"),
                _row("na", item_id="i2", status="noanswer", answer="NOANSWER", correct=0.0),
                _row(
                    "me",
                    item_id="i3",
                    status="media_error",
                    error="truncated",
                    answer=None,
                    correct=None,
                ),
                _row("to", item_id="i4", status="timeout", answer=None, correct=None),
            ]
        )
        assert store.done_cell_ids() == {"ok", "na", "me", "to"}
        assert store.done_cell_ids(retry_errors=True) == {"ok", "na"}
        # A retried error is replaced, not duplicated, and its attempts counted.
        store.record([_row("me", item_id="i3", answer="A", correct=0.0)])
        assert store.count() == 4
        assert store.attempts()["me"] == 2
        assert store.attempts()["ok"] == 1
        assert store.count(status="media_error") == 0
        assert store.done_cell_ids(retry_errors=True) == {"ok", "na", "me"}


def test_unknown_status_is_rejected() -> None:
    with pytest.raises(StoreError, match="unknown status 'done'"):
        _row(status="done")


def test_results_survive_reopening_and_export_round_trips(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        store.record(
            [
                _row("a"),
                _row(
                    "b",
                    config_id="cfg16",
                    config_label="16f",
                    frames=16,
                    axis_order=16.0,
                    answer="C",
                    correct=0.0,
                    option_probs=json.dumps({"A": 0.2, "B": 0.3, "C": 0.5}),
                    confidence=0.5,
                    visual_tokens=128,
                    latency_s=0.25,
                ),
            ]
        )
        store.record_model("spec-a", "m", {"backend": "hf", "name": "tiny"})
        session = store.start_session({"argv": ["sweep"]})
        store.end_session(session, "completed")
    with open_store(tmp_path) as store:
        table = store.export(tmp_path / "run", {"tool": {"version": "x"}})
    df, prov = read_run(tmp_path / "run")
    assert len(df) == 2 == len(table)
    row16 = df[df["config_id"] == "cfg16"].iloc[0]
    assert row16["answer"] == "C" and row16["correct"] == 0.0
    assert json.loads(row16["option_probs"]) == {"A": 0.2, "B": 0.3, "C": 0.5}
    assert list(df[df["config_id"] == "cfg8"].iloc[0]["frame_indices"]) == [0, 5, 9]
    assert row16["visual_tokens"] == 128
    assert prov["model_specs"] == {
        "spec-a": {"name": "m", "spec": {"backend": "hf", "name": "tiny"}}
    }
    assert prov["store"]["cells"] == 2 and prov["store"]["by_status"]["ok"] == 2
    assert prov["sessions"][0]["outcome"] == "completed"
    assert prov["sessions"][0]["argv"] == ["sweep"]
    assert prov["tool"] == {"version": "x"}


def test_row_key_collisions_prefer_the_current_plan(tmp_path: Path) -> None:
    # Two identities for one row key (e.g. the prompt changed): the planned one wins, else the
    # most recent.
    with open_store(tmp_path) as store:
        store.record([_row("old-prompt", answer="A", correct=0.0)])
        store.record([_row("new-prompt", answer="B", correct=1.0)])
        assert store.responses()["cell_id"].tolist() == ["new-prompt"]
        assert store.responses(prefer={"old-prompt"})["cell_id"].tolist() == ["old-prompt"]


def _item(**kw: object) -> Item:
    base: dict[str, object] = {
        "item_id": "i1",
        "video_id": "v1",
        "question": "What colour?",
        "options": ("red", "blue"),
        "answer": "A",
    }
    base.update(kw)
    return Item(**base)  # type: ignore[arg-type]


def _cid(item: Item, **kw: object) -> str:
    args: dict[str, object] = {
        "item": item,
        "spec_id": "s",
        "config_id": "c",
        "prompt_template_version": "p1",
        "decoding": {"max_new_tokens": 8, "temperature": 0.0},
        "extractor_version": "e1",
        "repeat": 0,
    }
    args.update(kw)
    return cell_identity(**args)  # type: ignore[arg-type]


def test_cell_identity_tracks_what_changes_an_answer() -> None:
    base = _cid(_item())
    assert len(base) == 32
    assert _cid(_item()) == base
    # Not part of the identity: where the video lives, analysis attributes.
    assert _cid(_item(video_path="/elsewhere/v1.mp4", attributes={"k": "v"})) == base
    # Part of it: everything that can change the answer.
    changed = [
        _cid(_item(question="What shape?")),
        _cid(_item(answer="B")),
        _cid(_item(), spec_id="s2"),
        _cid(_item(), config_id="c2"),
        _cid(_item(), prompt_template_version="p2"),
        _cid(_item(), decoding={"max_new_tokens": 9, "temperature": 0.0}),
        _cid(_item(), extractor_version="e2"),
        _cid(_item(), repeat=1),
    ]
    assert len(set(changed)) == len(changed) and base not in changed
    # Key order of the decoding settings does not matter.
    assert _cid(_item(), decoding={"temperature": 0.0, "max_new_tokens": 8}) == base


_status = st.sampled_from(["ok", "noanswer", "media_error", "model_error", "timeout"])


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    cells=st.lists(
        st.tuples(
            st.integers(0, 5),
            st.integers(0, 3),
            st.integers(0, 1),
            _status,
            st.lists(st.integers(0, 10_000), max_size=6),
        ),
        max_size=30,
        unique_by=lambda t: (t[0], t[1], t[2]),
    )
)
def test_store_keeps_every_recorded_cell(
    tmp_path_factory: pytest.TempPathFactory, cells: list[tuple[int, int, int, str, list[int]]]
) -> None:
    run = tmp_path_factory.mktemp("prop")
    rows = [
        _row(
            f"{i}-{c}-{r}",
            item_id=f"i{i}",
            config_id=f"c{c}",
            config_label=f"{c}f",
            frames=c,
            axis_order=float(c),
            repeat=r,
            status=s,
            answer="B" if s in ("ok", "noanswer") else None,
            correct=(1.0 if s == "ok" else 0.0) if s in ("ok", "noanswer") else None,
            frame_indices=tuple(idx),
            frame_timestamps=tuple(x / 10 for x in idx),
        )
        for i, c, r, s, idx in cells
    ]
    with open_store(run) as store:
        # Arbitrary batch boundaries.
        store.record(rows[: len(rows) // 2])
        store.record(rows[len(rows) // 2 :])
        table = store.responses()
        assert store.done_cell_ids() == {r.cell_id for r in rows}
        assert store.done_cell_ids(retry_errors=True) == {
            r.cell_id for r in rows if r.status in ("ok", "noanswer")
        }
    assert sorted(table["cell_id"]) == sorted(r.cell_id for r in rows)
    by_id = {r.cell_id: r for r in rows}
    for rec in table.to_dict("records"):
        src = by_id[rec["cell_id"]]
        assert rec["status"] == src.status
        assert list(rec["frame_indices"]) == list(src.frame_indices or ())
