"""The budget probe of a served sweep, against real HTTP servers on 127.0.0.1 that cap frames
or resample a video part to a fixed count (and report `usage.prompt_tokens` for what they
read): the sweep stops naming the budgets and the token counts, unless accepted, and counts
the cells whose visual tokens do not grow with their frames."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _support.openai_server import ChatServer, Reply
from _support.sweep import write_benchmark, write_protocol
from itemscale.analysis.measures import analyze_responses
from itemscale.cli import main
from itemscale.collect.protocol import load_protocol
from itemscale.collect.store import CellRow
from itemscale.collect.sweep import BudgetNotHonouredError, run_sweep
from itemscale.collect.sweep._budget import budget_verdict, unfit_cells
from itemscale.core.responses import read_run

FAST = {"backoff_base_s": 0.01, "backoff_max_s": 0.02}
FRAMES = (2, 4, 8, 16)
PER_IMAGE = 7


def _protocol(tmp_path: Path, server: ChatServer, **options: object) -> Path:
    suite = write_benchmark(tmp_path / "suite", 2)
    return write_protocol(
        tmp_path / "p.toml",
        suite,
        frames=FRAMES,
        models=[
            {
                "name": "served",
                "backend": "openai",
                "model": "m",
                "options": {"base_url": server.base_url, **FAST, **options},
            }
        ],
    )


def test_a_server_that_caps_frames_stops_the_sweep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ChatServer(default=Reply(text="A"), tokens_per_image=PER_IMAGE, max_images=4) as server:
        proto = _protocol(tmp_path, server)
        with pytest.raises(BudgetNotHonouredError) as caught:
            run_sweep(load_protocol(proto), progress=False)
        message = str(caught.value)
        # 2 frames -> 14 tokens, 16 frames -> 28 (the server read 4): 8x the frames, 2x the
        # tokens, at least 1 + 0.5 * 7 = 4.5x expected
        assert "2f sent 2 frames and added 14 prompt tokens" in message
        assert "16f sent 16 frames and added 28" in message
        assert "8x the frames, 2x the tokens; at least 4.5x expected" in message
        assert "--limit-mm-per-prompt" in message and "--accept-budget-cap" in message
        run = json.loads((tmp_path / "run" / "run.json").read_text())
        probe = run["sweep"]["budget_probe"]["served"]
        assert probe["honoured"] is False and probe["accepted"] is False
        assert (probe["small"]["visual_tokens"], probe["large"]["visual_tokens"]) == (14, 28)
        # nothing past the probes ran: the first cell alone, then the two probe cells
        assert len(read_run(tmp_path / "run")[0]) == 3
        assert main(["sweep", str(proto), "--no-progress"]) == 1
        assert "does not show the model the frames it is sent" in capsys.readouterr().err


def test_accepting_the_cap_sweeps_and_counts_the_cells_that_do_not_fit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ChatServer(default=Reply(text="A"), tokens_per_image=PER_IMAGE, max_images=4) as server:
        proto = _protocol(tmp_path, server)
        argv = ["sweep", str(proto), "--no-progress", "--accept-budget-cap"]
        assert main(argv) == 0
    out = capsys.readouterr().out
    assert "budget probe NOT honoured (accepted): 2f 2 frames -> 14 visual tokens" in out
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["sweep"]["accept_budget_cap"] is True
    assert run["sweep"]["budget_probe"]["served"]["accepted"] is True
    # 4 items x 4 budgets with tokens 14, 28, 28, 28: 8f and 16f add frames but no tokens
    served = run["sweep"]["served"]["served"]
    assert (served["cells_tokens_checked"], served["cells_tokens_not_fitting"]) == (16, 8)
    warnings = run["sweep"]["warnings"]
    assert any(w.startswith("accepted with --accept-budget-cap") for w in warnings)
    assert any("8 of 16 cells with recorded visual tokens" in w for w in warnings)
    # analyze names the steps that add nothing, from the recorded tokens
    df, _ = read_run(tmp_path / "run")
    block = analyze_responses(df, bootstrap=0).to_json()["models"]["served"]
    flagged = [(e["from"], e["to"], e["evidence"]["basis"]) for e in block["effective_budget"]]
    assert flagged == [("4f", "8f", "visual_tokens"), ("8f", "16f", "visual_tokens")]


def test_a_server_that_resamples_a_video_part_stops_the_sweep(tmp_path: Path) -> None:
    with ChatServer(default=Reply(text="A"), tokens_per_image=PER_IMAGE, video_frames=4) as server:
        proto = _protocol(tmp_path, server, video_input=True)
        with pytest.raises(BudgetNotHonouredError, match=r"1x the tokens"):
            run_sweep(load_protocol(proto), progress=False)
    probe = json.loads((tmp_path / "run" / "run.json").read_text())["sweep"]["budget_probe"]
    assert probe["served"]["small"]["visual_tokens"] == probe["served"]["large"]["visual_tokens"]


def test_a_server_that_reads_every_frame_passes(tmp_path: Path) -> None:
    reply = Reply(text="A", top_logprobs=[("A", -0.1)])
    with ChatServer(default=reply, tokens_per_image=PER_IMAGE) as server:
        result = run_sweep(load_protocol(_protocol(tmp_path, server)), progress=False)
    assert result.by_status == {"ok": 20}
    probe = result.budget_probe["served"]
    assert probe["honoured"] is True and probe["token_ratio"] == 8.0
    assert result.served["served"]["cells_tokens_not_fitting"] == 0
    assert result.warnings == []


def _row(label: str, frames: int, tokens: int | None, status: str = "ok") -> CellRow:
    return CellRow(
        cell_id=label,
        spec_id="s",
        model="m",
        item_id="q",
        video_id="v",
        task_kind="mcqa",
        series="default",
        config_id=label,
        config_label=label,
        axis_order=float(frames),
        frames=frames,
        repeat=0,
        status=status,
        effective_frames=frames,
        visual_tokens=tokens,
    )


def test_the_verdict_by_hand() -> None:
    # 4 -> 8 frames (2x) needs tokens >= 1.5x: 100 -> 150 passes, 100 -> 149 does not
    assert budget_verdict(_row("4f", 4, 100), _row("8f", 8, 150))["honoured"] is True
    assert budget_verdict(_row("4f", 4, 100), _row("8f", 8, 149))["honoured"] is False
    unknown = budget_verdict(_row("4f", 4, None), _row("8f", 8, 150))
    assert unknown["honoured"] is None and "usage.prompt_tokens" in unknown["reason"]
    failed = budget_verdict(_row("4f", 4, 100), _row("8f", 8, None, status="timeout"))
    assert failed["honoured"] is None and "failed" in failed["reason"]


def test_unfit_cells_compare_each_budget_with_the_next_smaller() -> None:
    a, b = ("q", 0), ("r", 0)
    records = [(a, 2, 10), (a, 4, 20), (a, 8, 20), (a, 16, 15), (b, 2, 10), (b, 4, 10)]
    assert unfit_cells(records) == 3  # a: 8f and 16f; b: 4f
    assert unfit_cells([(a, 4, 20), (a, 4, 20)]) == 0  # the same frames sent: nothing to say
