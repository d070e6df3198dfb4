"""The sweep on the local executor: table contents, resumption, typed failures, plan costs.

Videos are real H.264 files made by PyAV; the model is the pixel backend (answers computed
from the frames' mean pixel value, see tests/_support/sweep.py), so every expected answer below is
recomputed independently from the video with PyAV.
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import itemscale.collect.video
from _support.paths import DOCS
from _support.sweep import (
    PixelBackend,
    make_video,
    pixel_factory,
    read_log,
    write_benchmark,
    write_protocol,
)
from itemscale.cli import main
from itemscale.collect.items import Item
from itemscale.collect.protocol import Configuration, ModelEntry, SamplingPolicy, load_protocol
from itemscale.collect.store import open_store
from itemscale.collect.sweep import ExtraConfig, SweepStop, plan_sweep, run_sweep
from itemscale.collect.sweep._plan import ModelPlanInfo, plan_cells, planned_configs
from itemscale.core.responses import read_run

LETTERS = "ABCD"


def _decoded_frames(path: Path) -> list[np.ndarray]:
    import av

    with av.open(str(path)) as container:
        return [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]


@pytest.fixture
def bench(tmp_path: Path) -> dict[str, Any]:
    suite = write_benchmark(tmp_path / "suite", 2)
    log = tmp_path / "calls.jsonl"
    proto = write_protocol(
        tmp_path / "protocol.toml",
        suite,
        models=[{"name": "pixel", "backend": "hf", "model": "x", "options": {"log": str(log)}}],
    )
    return {
        "root": tmp_path,
        "suite": suite,
        "log": log,
        "protocol": load_protocol(proto),
        "protocol_file": proto,
    }


def _run(bench: dict[str, Any], **kw: Any) -> Any:
    kw.setdefault("backend_factory", pixel_factory)
    kw.setdefault("progress", False)
    return run_sweep(bench["protocol"], **kw)


def test_sweep_fills_the_response_table(bench: dict[str, Any]) -> None:
    result = _run(bench, batch_size=3)
    df, prov = read_run(bench["root"] / "run")
    # 2 videos x 2 items x (text-only + 2, 4, 8 frames) x 1 repeat
    assert result.planned == 16 and result.ran == 16 and result.model_calls == 16
    assert len(df) == 16 and set(df["status"]) == {"ok"}
    # linspace = np.linspace(0, n-1, k, dtype=int); video v has n = 30 + 5v frames at 10 fps.
    expected_indices = {
        ("v0", 2): [0, 29],
        ("v0", 4): [0, 9, 19, 29],
        ("v0", 8): [0, 4, 8, 12, 16, 20, 24, 29],
        ("v1", 2): [0, 34],
        ("v1", 4): [0, 11, 22, 34],
        ("v1", 8): [0, 4, 9, 14, 19, 24, 29, 34],
    }
    decoded = {v: _decoded_frames(bench["suite"] / "videos" / f"{v}.mp4") for v in ("v0", "v1")}
    items = {f"v{v}-q{q}": "ABCD"[(v + q) % 4] for v in range(2) for q in range(2)}
    for row in df.to_dict("records"):
        k = row["frames"]
        assert row["model"] == "pixel" and row["source"] == "itemscale-sweep"
        assert row["config_id"] == Configuration(frames=k).config_id
        assert json.loads(row["attributes"]) == {
            "group": "even" if row["video_id"] == "v0" else "odd"
        }
        assert row["reference"] == items[row["item_id"]]
        if k == 0:
            assert row["series"] == "text-only" and row["config_label"] == "text-only"
            assert list(row["frame_indices"]) == [] and row["effective_frames"] == 0
            question_len = len(
                f"Which colour is shown in clip {row['video_id'][1]} part {row['item_id'][-1]}?"
            )
            assert row["answer"] == LETTERS[question_len % 4]
            continue
        idx = expected_indices[(row["video_id"], k)]
        assert list(row["frame_indices"]) == idx
        assert list(row["frame_timestamps"]) == pytest.approx([i / 10 for i in idx])
        assert row["series"] == "linspace/cached" and row["config_label"] == f"{k}f"
        assert row["axis_order"] == pytest.approx(Configuration(frames=k).axis_order)
        assert row["effective_frames"] == k and row["pixels"] == 64 * 48
        assert row["visual_tokens"] == 4 * k
        mean = int(np.stack([decoded[row["video_id"]][i] for i in idx]).mean())
        assert row["answer"] == LETTERS[mean % 4], (row["item_id"], k)
        assert row["confidence"] == pytest.approx(0.7)
        assert json.loads(row["option_probs"])[row["answer"]] == pytest.approx(0.7)
        assert row["raw_text"] == f"The answer is {row['answer']}."
    assert (df["correct"] == (df["answer"] == df["reference"]).astype(float)).all()
    # Provenance
    assert prov["protocol"]["grid"]["frames"] == [2, 4, 8]
    assert prov["decoder"]["name"] == "PyAV" and prov["decoder"]["version"]
    assert prov["tool"]["name"] == "itemscale"
    assert set(prov["video_content_hashes"]) == {"v0", "v1"}
    assert all(len(h) == 64 for h in prov["video_content_hashes"].values())
    assert [s["outcome"] for s in prov["sessions"]] == ["completed"]
    assert prov["sweep"]["ran_cells"] == 16 and not prov["sweep"]["interrupted"]
    spec = next(iter(prov["model_specs"].values()))
    assert spec["name"] == "pixel" and spec["spec"]["model"] == "pixel-test"
    # `itemscale analyze` reads it.
    out = bench["root"] / "measures.json"
    assert (
        main(["analyze", str(bench["root"] / "run"), "--bootstrap", "0", "--json", str(out)]) == 0
    )
    assert out.exists()


def test_rerun_recomputes_nothing_and_batch_size_is_not_identity(bench: dict[str, Any]) -> None:
    _run(bench, batch_size=1)
    first, _ = read_run(bench["root"] / "run")
    calls = len(read_log(bench["log"]))
    again = _run(bench, batch_size=4)
    assert again.ran == 0 and again.skipped == 16 and len(read_log(bench["log"])) == calls == 16
    second, prov = read_run(bench["root"] / "run")
    assert second.equals(first)
    assert [s["outcome"] for s in prov["sessions"]] == ["completed", "completed"]


def test_a_resume_with_every_cell_done_says_so(
    bench: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    _run(bench, progress=True)
    first = capsys.readouterr().err
    assert "/16 [" in first and "already done" not in first  # a bar over the 16 cells
    again = _run(bench, progress=True)
    err = capsys.readouterr().err
    assert again.ran == 0
    assert err.strip() == "all 16 cells already done; nothing to run"  # no `0cell [00:00` bar


def test_each_video_is_decoded_once_for_all_its_configurations(
    bench: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = itemscale.collect.video.decode_for_configs
    calls: list[tuple[str, int, str, int]] = []

    def counting(path: Any, configs: Any, **kw: Any) -> Any:
        configs = list(configs)
        calls.append((Path(path).name, len(configs), kw["item_key"], kw["repeat"]))
        return real(path, configs, **kw)

    monkeypatch.setattr(itemscale.collect.video, "decode_for_configs", counting)
    _run(bench)
    assert sorted(calls) == [("v0.mp4", 3, "", 0), ("v1.mp4", 3, "", 0)]
    # Seeded random sampling draws per item (and repeat): one extra pass per item for it.
    calls.clear()
    rand = Configuration(frames=3, sampling=SamplingPolicy(name="random", seed=7))
    result = _run(bench, extra_configs=[rand])
    assert result.ran == 4
    assert sorted(calls) == [
        ("v0.mp4", 1, "v0-q0", 0),
        ("v0.mp4", 1, "v0-q1", 0),
        ("v1.mp4", 1, "v1-q0", 0),
        ("v1.mp4", 1, "v1-q1", 0),
    ]


def test_corrupt_video_gives_media_error_rows_and_the_sweep_goes_on(tmp_path: Path) -> None:
    suite = write_benchmark(tmp_path / "suite", 3, corrupt=["v1"])
    (suite / "videos" / "v2.mp4").unlink()  # and one missing file
    log = tmp_path / "calls.jsonl"
    proto = load_protocol(
        write_protocol(
            tmp_path / "p.toml",
            suite,
            models=[{"name": "pixel", "backend": "hf", "model": "x", "options": {"log": str(log)}}],
        )
    )
    result = run_sweep(proto, backend_factory=pixel_factory, progress=False)
    df, _ = read_run(tmp_path / "run")
    assert len(df) == 24
    bad = df[df["video_id"].isin(["v1", "v2"]) & (df["frames"] > 0)]
    assert len(bad) == 12 and set(bad["status"]) == {"media_error"}
    assert bad["answer"].isna().all() and bad["correct"].isna().all()
    assert set(bad[bad["video_id"] == "v2"]["error"].str.split(":").str[0]) == {"missing_file"}
    assert bad[bad["video_id"] == "v1"]["error"].str.len().min() > 0
    good = df.drop(bad.index)
    assert len(good) == 12 and set(good["status"]) == {"ok"}  # v0 and every text-only cell
    assert result.model_calls == 12 == len(read_log(log))
    assert result.by_status == {"ok": 12, "media_error": 12}

    # Errors are not re-run by default...
    again = run_sweep(proto, backend_factory=pixel_factory, progress=False)
    assert again.ran == 0 and len(read_log(log)) == 12
    # ...only with retry_errors, and a repaired video then answers.
    make_video(suite / "videos" / "v1.mp4", seed=1, n_frames=35)
    retry = run_sweep(proto, backend_factory=pixel_factory, progress=False, retry_errors=True)
    assert retry.ran == 12 and retry.by_status == {"ok": 6, "media_error": 6}
    df2, _ = read_run(tmp_path / "run")
    assert set(df2[df2["video_id"] == "v1"]["status"]) == {"ok"}
    with open_store(tmp_path / "run") as store:
        attempts = store.attempts()
    retried = df2[(df2["video_id"] != "v0") & (df2["frames"] > 0)]["cell_id"]
    assert {attempts[c] for c in retried} == {2}


def test_unparseable_output_becomes_noanswer(tmp_path: Path) -> None:
    suite = write_benchmark(tmp_path / "suite", 1, garble=["v0-q1"])
    proto = load_protocol(write_protocol(tmp_path / "p.toml", suite))
    run_sweep(proto, backend_factory=pixel_factory, progress=False)
    df, _ = read_run(tmp_path / "run")
    garbled = df[df["item_id"] == "v0-q1"]
    assert set(garbled["status"]) == {"noanswer"} and set(garbled["answer"]) == {"NOANSWER"}
    assert (garbled["correct"] == 0.0).all() and garbled["confidence"].isna().all()
    assert set(garbled["raw_text"]) == {"I cannot tell from this."}
    assert set(df[df["item_id"] == "v0-q0"]["status"]) == {"ok"}


def test_limit_item_filter_and_extra_configurations(bench: dict[str, Any]) -> None:
    first = _run(bench, limit=1)
    assert first.planned == 4 and set(first.table["item_id"]) == {"v0-q0"}
    shifted = Configuration(frames=4, sampling=SamplingPolicy(name="linspace", phase=0.5))
    extra = ExtraConfig(shifted, series="intervention:phase-shift", item_ids=frozenset({"v1-q1"}))
    result = _run(bench, item_filter={"v0-q0", "v1-q1"}, extra_configs=[extra])
    # v0-q0's four cells are done; v1-q1 gets the four grid cells plus the extra one.
    assert result.skipped == 4 and result.ran == 5
    df, prov = read_run(bench["root"] / "run")
    extra_rows = df[df["series"] == "intervention:phase-shift"]
    assert extra_rows["item_id"].tolist() == ["v1-q1"]
    # linspace over n=35, k=4 shifted by half a spacing: positions 0, 11.33, 22.67, 34 + 5.67
    assert list(extra_rows.iloc[0]["frame_indices"]) == [5, 17, 28, 34]
    assert extra_rows.iloc[0]["config_id"] == shifted.config_id
    assert prov["sweep"]["extra_configs"][0]["series"] == "intervention:phase-shift"
    assert len(df) == 9


def test_stop_request_commits_what_ran_and_resumes(bench: dict[str, Any]) -> None:
    stop = SweepStop()

    class StoppingBackend(PixelBackend):
        def generate(self, requests: Any) -> Any:
            out = super().generate(requests)
            if len(read_log(bench["log"])) >= 5:
                stop.set()
            return out

    def factory(entry: ModelEntry, device: str, batch_size: int) -> PixelBackend:
        return StoppingBackend(str(bench["log"]))

    result = _run(bench, backend_factory=factory, stop=stop, batch_size=1)
    assert result.interrupted and result.exit_code == 130
    assert result.ran == 5 == len(read_log(bench["log"]))
    df, prov = read_run(bench["root"] / "run")
    assert len(df) == 5 and prov["sweep"]["interrupted"] is True
    assert prov["sessions"][-1]["outcome"] == "interrupted"
    resumed = _run(bench)
    assert resumed.ran == 11 and resumed.skipped == 5 and len(read_log(bench["log"])) == 16


def test_dry_run_prints_plan_and_cost(
    bench: dict[str, Any], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the test backend's options (`log`) are not the real hf backend's, which --dry-run checks
    monkeypatch.setattr("itemscale.collect.sweep._runner.check_models", lambda protocol: None)
    assert main(["sweep", str(bench["protocol_file"]), "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    # 4 items x (2+4+8) frames; a 64x48 frame is resized to 56x56 as the processor rounds it:
    # 2x2 tokens of 28 px, 2 frames per token.
    assert plan["cells"] == 16 and plan["cells_todo"] == 16 and plan["cells_done"] == 0
    assert plan["frames"] == 4 * 14
    assert plan["visual_tokens_estimated"] == 4 * 4 * (1 + 2 + 4)
    assert plan["by_config"]["8f"] == {
        "cells": 4,
        "cells_todo": 4,
        "frames": 32,
        "visual_tokens_estimated": 64,
    }
    # the stack the session would record, as a sweep records it
    assert plan["stack"]["packages"]["transformers"] == metadata.version("transformers")
    assert plan["stack_notes"] == []
    assert not (bench["root"] / "run" / "store.sqlite").exists()
    _run(bench, limit=1)
    cost = plan_sweep(bench["protocol"])
    assert (cost.cells_done, cost.cells_todo) == (4, 12)
    monkeypatch.setenv("ITEMSCALE_TEST_STACK", '{"transformers": "5.17.0"}')
    assert main(["sweep", str(bench["protocol_file"]), "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert "total" in text and "4 cells already done" in text
    assert "software stack: " in text and "transformers 5.17.0" in text
    real = metadata.version("transformers")
    assert "note: this session's software stack differs from that of session 1 (4 cells)" in text
    assert f"transformers {real} -> 5.17.0" in text


def test_cli_errors_are_clear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", str(tmp_path / "nope.toml")]) == 2
    assert "protocol file not found" in capsys.readouterr().err
    bad = tmp_path / "p.toml"
    write_protocol(bad, tmp_path / "no-suite")
    assert main(["sweep", str(bad), "--dry-run"]) == 2
    assert f"{tmp_path / 'no-suite'}: no such folder" in capsys.readouterr().err
    assert main(["sweep", str(bad), "--limit", "0"]) == 2


@settings(max_examples=30, deadline=None)
@given(
    n_items=st.integers(1, 6),
    videos=st.integers(1, 3),
    frames=st.lists(st.integers(1, 64), min_size=1, max_size=4, unique=True),
    text_only=st.booleans(),
    repeats=st.integers(1, 3),
)
def test_plan_is_the_full_cross_product_with_unique_ids(
    n_items: int, videos: int, frames: list[int], text_only: bool, repeats: int
) -> None:
    items = [
        Item(item_id=f"i{i}", video_id=f"v{i % videos}", question="Q?", options=("a", "b"))
        for i in range(n_items)
    ]
    grid = ([Configuration(frames=0)] if text_only else []) + [
        Configuration(frames=f) for f in frames
    ]
    configs = planned_configs(grid, [Configuration(frames=frames[0])])  # a duplicate extra
    cells = plan_cells(
        ModelPlanInfo("m", "spec"),
        items,
        configs,
        repeat_seeds=list(range(repeats)),
        prompt_template_version="p",
        decoding_for_seed=lambda s: {"seed": s},
        extractor_version="e",
    )
    assert len(cells) == n_items * len(grid) * repeats
    assert len({c.cell_id for c in cells}) == len(cells)
    assert len({(c.item.item_id, c.config.config_id, c.repeat) for c in cells}) == len(cells)
    # A video's cells are contiguous, so its frames are decoded once and then released.
    order = [c.item.video_id for c in cells]
    assert order == sorted(order, key=lambda v: order.index(v))
    seen: list[str] = []
    for video in order:
        if not seen or seen[-1] != video:
            assert video not in seen
            seen.append(video)


def test_every_cli_option_is_documented() -> None:
    from itemscale.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    sweep = sub.choices["sweep"]  # type: ignore[index]
    options = {s for a in sweep._actions for s in a.option_strings if s.startswith("--")}
    options.discard("--help")
    docs = (DOCS / "sweep.md").read_text()
    assert options and {o for o in options if f"`{o}" not in docs} == set()


def test_rerun_keeps_provenance_other_commands_added(bench: dict[str, Any]) -> None:
    _run(bench, limit=1)
    run_json = bench["root"] / "run" / "run.json"
    written = json.loads(run_json.read_text())
    written["interventions"] = {"nested": {"n_regressions": 3}}
    run_json.write_text(json.dumps(written))
    _run(bench)
    _, prov = read_run(bench["root"] / "run")
    assert prov["interventions"] == {"nested": {"n_regressions": 3}}
    assert prov["sweep"]["ran_cells"] == 12 and prov["store"]["cells"] == 16
    assert len(prov["sessions"]) == 2


def test_a_second_sweep_on_the_same_run_directory_is_refused(bench: dict[str, Any]) -> None:
    import os

    from itemscale.collect.store import StoreError, run_dir_lock

    with run_dir_lock(bench["root"] / "run"):
        with pytest.raises(
            StoreError, match=rf"another itemscale command is running .*pid {os.getpid()}: sweep"
        ):
            _run(bench)
        assert read_log(bench["log"]) == []
    assert _run(bench).ran == 16  # released on exit


def test_two_models_share_decoded_frames_through_the_frame_cache(tmp_path: Path) -> None:
    from itemscale.collect.video import FrameCache

    suite = write_benchmark(tmp_path / "suite", 2)
    logs = {name: tmp_path / f"{name}.jsonl" for name in ("a", "b")}
    proto = load_protocol(
        write_protocol(
            tmp_path / "p.toml",
            suite,
            models=[
                {"name": n, "backend": "hf", "model": "x", "options": {"log": str(p)}}
                for n, p in logs.items()
            ],
        )
    )
    cache = FrameCache(tmp_path / "cache")
    result = run_sweep(proto, backend_factory=pixel_factory, progress=False, frame_cache=cache)
    assert result.planned == 32 and result.ran == 32
    assert len(read_log(logs["a"])) == len(read_log(logs["b"])) == 16
    # Model a decoded the union of each video's indices (linspace 2, 4, 8 share frames); model b
    # was served every frame from the cache.
    distinct = len({0, 29, 9, 19, 4, 8, 12, 16, 20, 24}) + len(
        {0, 34, 11, 22, 4, 9, 14, 19, 24, 29}
    )
    assert cache.stats.writes == distinct and cache.stats.hits >= distinct
    df = result.table
    a = (
        df[df["model"] == "a"]
        .drop(columns=["model", "cell_id", "latency_s"])
        .reset_index(drop=True)
    )
    b = (
        df[df["model"] == "b"]
        .drop(columns=["model", "cell_id", "latency_s"])
        .reset_index(drop=True)
    )
    assert a.equals(b)  # same frames, same deterministic backend: same answers
    assert df.groupby("model")["cell_id"].nunique().to_dict() == {"a": 16, "b": 16}


def test_a_no_op_resume_does_not_load_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The shipped model through the real loader: a resume whose cells are all done under the
    spec an identical load produced skips loading; a changed entry or device loads again."""
    import itemscale.collect.models

    loads: list[str] = []
    real_load = itemscale.collect.models.load_backend

    def counting_load(entry: Any, **kw: Any) -> Any:
        loads.append(entry.name)
        return real_load(entry, **kw)

    monkeypatch.setattr(itemscale.collect.models, "load_backend", counting_load)
    suite = write_benchmark(tmp_path / "suite", 2, per_video=1)
    entry = {"name": "tiny", "backend": "builtin", "model": "builtin", "dtype": "float32"}
    proto = write_protocol(tmp_path / "p.toml", suite, frames=(2,), models=[entry])
    first = run_sweep(load_protocol(proto), progress=False)
    assert loads == ["tiny"] and first.ran == 4 and first.not_loaded == []
    again = run_sweep(load_protocol(proto), progress=False)
    assert loads == ["tiny"] and again.ran == 0 and again.skipped == 4
    assert again.not_loaded == ["tiny"]
    assert read_run(tmp_path / "run")[0].equals(first.table)
    # the CLI says why nothing was loaded
    assert main(["sweep", str(proto), "--no-progress"]) == 0
    assert "not loaded (every cell already done" in capsys.readouterr().out
    assert loads == ["tiny"]
    # another device is another load (dtype `auto` may differ), even with every cell done
    run_sweep(load_protocol(proto), progress=False, device="cpu:0")
    assert loads == ["tiny", "tiny"]
    # a failed cell to retry needs the model
    with open_store(tmp_path / "run") as store:
        store._db.execute("UPDATE cells SET status = 'model_error' WHERE rowid = 1")
    retried = run_sweep(load_protocol(proto), progress=False, retry_errors=True)
    assert loads == ["tiny", "tiny", "tiny"] and retried.ran == 1


def test_the_load_fingerprint_follows_the_entry_device_and_folder(tmp_path: Path) -> None:
    from itemscale.collect.models import load_fingerprint

    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text('{"a": 1}')
    (folder / "model.safetensors").write_bytes(b"0" * 10)
    entry = ModelEntry(name="m", backend="hf", model=str(folder))
    base = load_fingerprint(entry, device="cpu")
    assert base is not None and base == load_fingerprint(entry, device="cpu")
    assert load_fingerprint(entry, device="cuda") != base
    assert load_fingerprint(entry.model_copy(update={"dtype": "bfloat16"}), device="cpu") != base
    with_option = ModelEntry(name="m", backend="hf", model=str(folder), options={"fps": 2.0})
    assert load_fingerprint(with_option, device="cpu") != base
    (folder / "config.json").write_text('{"a": 2}')
    changed_config = load_fingerprint(entry, device="cpu")
    assert changed_config != base
    (folder / "model.safetensors").write_bytes(b"0" * 11)
    assert load_fingerprint(entry, device="cpu") not in (base, changed_config)
    # a hub id resolves to whatever the hub's head is, unless its revision is pinned
    hub = ModelEntry(name="m", backend="hf", model="org/model")
    assert load_fingerprint(hub, device="cpu") is None
    assert load_fingerprint(hub.model_copy(update={"revision": "abc"}), device="cpu") is not None
    served = ModelEntry(name="m", backend="openai", model="gpt", options={"base_url": "http://x"})
    assert load_fingerprint(served, device="cpu") is None


def test_the_progress_bar_has_its_total_while_the_model_loads(
    bench: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    def loading_factory(entry: ModelEntry, device: str, batch_size: int) -> PixelBackend:
        print("<<loading>>", file=sys.stderr, flush=True)
        return pixel_factory(entry, device, batch_size)

    _run(bench, backend_factory=loading_factory, progress=True, limit=1)
    before_load = capsys.readouterr().err.split("<<loading>>")[0]
    # 1 item x (text-only + 3 frame budgets), nothing stored yet: 4 cells expected
    assert "loading pixel" in before_load and "0/4" in before_load
    _run(bench, backend_factory=loading_factory, progress=True)
    before_load = capsys.readouterr().err.split("<<loading>>")[0]
    assert "0/12" in before_load  # 16 planned, the 4 finished above not counted
