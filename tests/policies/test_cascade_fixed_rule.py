"""The seed paper's fixed cascade rule, on a hand-made table in its timed-JSONL shape.

The paper's released `code/cascade.py` reads rows `{sample_id, config_key, base_margin,
wall_clock_s}`, stops an item at the first stage before the last whose `base_margin >= theta`,
and charges (`--mode shared`) the first stage visited in full plus each later one's increase over
the previous stage, `max(0, wall_k - wall_{k-1})`, or (`--mode no_share`) every stage visited in
full. The expected stops and costs below are worked out by hand from that rule; the same file
run through the paper's script gave the same stops and latencies (docs/policies.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from itemscale.cli import main

STAGES = ("textonly", "16f", "32f", "128f")
# item: (margin per stage, wall-clock seconds per stage, correct per stage)
ROWS: dict[str, tuple[tuple[float, ...], tuple[float, ...], tuple[int, ...]]] = {
    # text-only margin clears 0.5: stops blind
    "a": ((0.6, 0.1, 0.1, 0.1), (0.5, 1.0, 2.0, 6.0), (1, 0, 0, 0)),
    # 16f clears it
    "b": ((0.2, 0.7, 0.1, 0.1), (0.5, 1.25, 2.0, 6.0), (0, 1, 0, 1)),
    # 32f clears it
    "c": ((0.1, 0.3, 0.9, 0.1), (0.5, 1.0, 2.0, 6.0), (1, 1, 0, 1)),
    # nothing before the last clears it (the last stage's margin is never read)
    "d": ((0.4, 0.45, 0.49, 0.95), (0.5, 1.0, 2.0, 6.0), (0, 0, 0, 1)),
    # exactly theta stops (>=)
    "e": ((0.0, 0.5, 0.1, 0.1), (0.25, 1.5, 2.0, 6.0), (1, 0, 1, 1)),
    # a stage faster than the one before adds nothing under the shared cost
    "f": ((0.3, 0.2, 0.1, 0.0), (0.75, 0.5, 1.0, 3.0), (0, 0, 0, 1)),
}
# By hand: the stop stage, shared latency (first stage in full, then max(0, increase)), the
# no-share latency (every stage visited in full) and the prefix frame cost (the stop stage's).
EXPECTED = {
    "a": ("textonly", 0.5, 0.5, 0),
    "b": ("16f", 0.5 + 0.75, 0.5 + 1.25, 16),
    "c": ("32f", 0.5 + 0.5 + 1.0, 0.5 + 1.0 + 2.0, 32),
    "d": ("128f", 0.5 + 0.5 + 1.0 + 4.0, 0.5 + 1.0 + 2.0 + 6.0, 128),
    "e": ("16f", 0.25 + 1.25, 0.25 + 1.5, 16),
    "f": ("128f", 0.75 + 0.0 + 0.5 + 2.0, 0.75 + 0.5 + 1.0 + 3.0, 128),
}


def _timed_jsonl(path: Path) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for sample, (margins, walls, correct) in ROWS.items():
            for k, stage in enumerate(STAGES):
                row = {
                    "sample_id": sample,
                    "config_key": stage,
                    "base_margin": margins[k],
                    "wall_clock_s": walls[k],
                    "correct": correct[k],
                }
                fh.write(json.dumps(row) + "\n")


@pytest.fixture
def timed_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    source = tmp_path / "timed.jsonl"
    _timed_jsonl(source)
    run = tmp_path / "run"
    argv = ["import", "table", str(source), "--model", "paper", "--id-column", "sample_id"]
    for rename in ("config_key=config", "base_margin=margin", "wall_clock_s=latency_s"):
        argv += ["--rename", rename]
    assert main([*argv, "-o", str(run)]) == 0
    capsys.readouterr()
    return run


def _fixed(run: Path, tmp_path: Path, *extra: str) -> dict:
    out = tmp_path / "cascade.json"
    argv = ["cascade", str(run), "--stages", "0,16f,32f,128f", "--score", "margin"]
    assert main([*argv, "--threshold", "0.5", "--bootstrap", "0", "--json", str(out), *extra]) == 0
    (block,) = json.loads(out.read_text())["results"]
    return dict(block)


def test_fixed_rule_stops_and_shared_latency_equal_the_papers_rule(
    timed_run: Path, tmp_path: Path
) -> None:
    block = _fixed(timed_run, tmp_path, "--cost", "latency", "--sharing", "prefix")
    assert block["labels"] == list(STAGES)
    fixed = block["fixed_rule"]
    per_item = {row["item_id"]: row for row in fixed["per_item"]}
    assert set(per_item) == set(EXPECTED)
    for item, (stop, shared, _, frames) in EXPECTED.items():
        assert per_item[item]["stop_stage"] == stop, item
        assert per_item[item]["cost_latency"] == pytest.approx(shared), item
        assert per_item[item]["cost_frames"] == frames, item
    assert fixed["stop_counts"] == {"textonly": 1, "16f": 2, "32f": 1, "128f": 2}
    n = len(EXPECTED)
    mean_shared = sum(e[1] for e in EXPECTED.values()) / n
    mean_unshared = sum(e[2] for e in EXPECTED.values()) / n
    assert fixed["mean_cost"]["value"] == pytest.approx(mean_shared)
    assert fixed["unshared"]["mean_cost_latency"]["value"] == pytest.approx(mean_unshared)
    # the baseline is the terminal stage alone: its own wall-clock time
    terminal = sum(walls[-1] for _, walls, _ in ROWS.values()) / n
    assert fixed["cost_reduction"]["value"] == pytest.approx(1 - mean_shared / terminal)
    # accuracy at the stop stage: a 1, b 1, c 0, d 1, e 0, f 1; at 128f: 0, 1, 1, 1, 1, 1
    assert fixed["accuracy"]["value"] == pytest.approx(4 / 6)
    assert fixed["accuracy_change"]["value"] == pytest.approx(4 / 6 - 5 / 6)


def test_fixed_rule_without_sharing_pays_every_stage_visited(
    timed_run: Path, tmp_path: Path
) -> None:
    block = _fixed(timed_run, tmp_path, "--cost", "latency", "--sharing", "none")
    fixed = block["fixed_rule"]
    per_item = {row["item_id"]: row for row in fixed["per_item"]}
    for item, (stop, _, unshared, _) in EXPECTED.items():
        assert per_item[item]["stop_stage"] == stop
        assert per_item[item]["cost_latency"] == pytest.approx(unshared)
    assert block["cost"]["latency_basis"] == "none" and "unshared" not in fixed


def test_union_is_refused_for_latency_and_for_a_run_without_indices(
    timed_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "c.json"
    base = ["cascade", str(timed_run), "--bootstrap", "0", "--json", str(out)]
    assert main([*base, "--cost", "latency", "--sharing", "union"]) == 2
    assert (
        "with --cost latency choose --sharing prefix or --sharing none" in capsys.readouterr().err
    )
    assert main([*base, "--sharing", "union"]) == 2
    assert "no recorded indices" in capsys.readouterr().err


def test_a_stage_the_axis_lacks_is_named(
    timed_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "c.json"
    code = main(["cascade", str(timed_run), "--stages", "0,64f", "--json", str(out)])
    assert code == 2
    err = capsys.readouterr().err
    assert "no configuration '64f'" in err and "16f, 32f, 128f, textonly" in err
