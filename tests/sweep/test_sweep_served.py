"""Served sweeps that work out of the box, against a real HTTP server on 127.0.0.1: the first
request alone as a probe, deterministic failures not retried, `--concurrency` requests in flight
at the default batch size, a warning when no reply has log-probabilities, and visual tokens read
from `usage.prompt_tokens`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _support.openai_server import ChatServer, Reply
from _support.sweep import write_benchmark, write_protocol
from itemscale.cli import main
from itemscale.collect.protocol import load_protocol
from itemscale.collect.sweep import ServerRefusedError, plan_sweep, run_sweep
from itemscale.core.responses import read_run

FAST = {"backoff_base_s": 0.01, "backoff_max_s": 0.02}


def _protocol(
    tmp_path: Path, server: ChatServer, frames: tuple[int, ...] = (2, 4), **options: object
) -> Path:
    suite = write_benchmark(tmp_path / "suite", 2)
    return write_protocol(
        tmp_path / "p.toml",
        suite,
        frames=frames,
        models=[
            {
                "name": "served",
                "backend": "openai",
                "model": "m",
                "options": {"base_url": server.base_url, **FAST, **options},
            }
        ],
    )


def test_a_refused_first_request_stops_the_sweep_with_the_servers_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = b'{"error": {"message": "video input is only accepted as an http(s) URL"}}'
    with ChatServer(default=Reply(status=500, raw_body=body)) as server:
        proto = _protocol(tmp_path, server, video_input=True)
        with pytest.raises(ServerRefusedError, match=r"refused the first request .*http\(s\) URL"):
            run_sweep(load_protocol(proto), progress=False)
        # the same 500 twice for one request is not retried further: 2 requests in all
        assert len(server.received) == 2
        assert main(["sweep", str(proto), "--no-progress"]) == 1
        err = capsys.readouterr().err
        assert "the same reply twice: not retried" in err and "http(s) URL" in err
    # each run's probe failure is stored like any failure (`--retry-errors` tries it again);
    # the second run probed with the next cell
    df, _ = read_run(tmp_path / "run")
    assert list(df["status"]) == ["model_error", "model_error"]


def test_overload_is_retried_to_the_limit_even_when_its_body_repeats(tmp_path: Path) -> None:
    with ChatServer(default=Reply(text="A")) as server:
        proto = load_protocol(_protocol(tmp_path, server, frames=(2,)))
        server.push(*[Reply(status=503)] * 3)
        result = run_sweep(proto, progress=False)
        assert result.by_status == {"ok": 8}  # 4 items at 2 frames and text-only
        assert len(server.received) == 8 + 3  # the first cell tried 4 times


def test_concurrency_is_used_at_the_default_batch_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ChatServer(default=Reply(text="A", delay_s=0.15)) as server:
        proto = _protocol(tmp_path, server)
        argv = ["sweep", str(proto), "--no-progress", "--json", "--concurrency", "4"]
        assert main(argv) == 0
        summary = json.loads(capsys.readouterr().out)
    assert summary["by_status"] == {"ok": 12}
    assert 1 < server.max_in_flight <= 4
    assert 1 < summary["served"]["served"]["max_in_flight"] <= 4
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert (
        run["sweep"]["served"]["served"]["max_in_flight"]
        == summary["served"]["served"]["max_in_flight"]
    )


def test_a_server_without_log_probabilities_is_said_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ChatServer(default=Reply(text="A", top_logprobs=None)) as server:
        proto = _protocol(tmp_path, server)
        assert main(["sweep", str(proto), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "returned no log-probabilities for any of its 12 multiple-choice replies" in out
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    (warning,) = run["sweep"]["warnings"]
    assert "no answer has a confidence" in warning
    assert read_run(tmp_path / "run")[0]["confidence"].isna().all()


def test_visual_tokens_are_the_prompt_tokens_the_frames_added(tmp_path: Path) -> None:
    with ChatServer(
        default=Reply(text="A", top_logprobs=[("A", -0.1)]), tokens_per_image=7
    ) as server:
        proto = _protocol(tmp_path, server, frames=(2, 4))
        run_sweep(load_protocol(proto), progress=False)
    df, _ = read_run(tmp_path / "run")
    # each image part costs 7 prompt tokens at this server: 2 frames 14, 4 frames 28
    by_frames = df.groupby("effective_frames")["visual_tokens"].unique()
    assert {int(k): list(v) for k, v in by_frames.items()} == {0: [0], 2: [14], 4: [28]}
    # the prompt without frames is read off the item's text-only cell, or, when a cell with
    # frames comes first, off one short text-only request (at most one per item)
    text_only = [r for r in server.received if r.body["max_tokens"] == 1]
    assert len(text_only) <= df["item_id"].nunique()
    assert all(isinstance(m["content"], str) for r in text_only for m in r.body["messages"])


def test_the_dry_run_counts_image_parts_as_a_server_does(tmp_path: Path) -> None:
    with ChatServer() as server:
        images = plan_sweep(load_protocol(_protocol(tmp_path / "a", server, frames=(4,))))
        video = plan_sweep(
            load_protocol(_protocol(tmp_path / "b", server, frames=(4,), video_input=True))
        )

    # 64x48 frames -> the processor's smart_resize rounds both sides to 56: 2 x 2 = 4 merged
    # patches; 4 frames: as images 4 x (4 + 2 markers) = 24 per cell, as a video 2 x 4 = 8
    def per_cell(plan: object) -> float:
        (entry,) = [e for e in plan.by_config.values() if e["frames"]]  # type: ignore[attr-defined]
        return float(entry["visual_tokens_estimated"] / entry["cells_todo"])

    assert (per_cell(images), per_cell(video)) == (24, 8)
