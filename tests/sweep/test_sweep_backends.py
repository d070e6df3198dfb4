"""Acceptance: `itemscale sweep` runs a real tiny transformers Video LLM (the `hf` backend) and a
served model (the `openai` backend, against a real HTTP server on 127.0.0.1) over a 5-budget
grid, survives SIGKILL and resumes exactly, and `itemscale analyze` reads the result."""

from __future__ import annotations

import base64
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from _support.sweep import write_benchmark, write_protocol
from itemscale.cli import main
from itemscale.collect.protocol import load_protocol
from itemscale.collect.sweep import run_sweep
from itemscale.core.responses import read_run

FRAMES = (2, 4, 6, 8, 12)


@pytest.fixture(scope="module")
def tiny_qwen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from _support.models_tiny import build_qwen2_vl

    return build_qwen2_vl(tmp_path_factory.mktemp("tiny-qwen25"), version="2.5")


def _sweep_cli(protocol: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "itemscale",
            "sweep",
            str(protocol),
            "--batch-size",
            "1",
            "--no-progress",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _stored_cells(run: Path) -> int:
    store = run / "store.sqlite"
    if not store.exists():
        return 0
    try:
        db = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1)
        try:
            return int(db.execute("SELECT COUNT(*) FROM cells").fetchone()[0])
        finally:
            db.close()
    except sqlite3.OperationalError:
        return 0


@pytest.mark.slow
def test_hf_tiny_model_sweep_survives_kill_and_resumes_exactly(
    tmp_path: Path, tiny_qwen: Path
) -> None:
    suite = write_benchmark(tmp_path / "suite", 4)  # 8 items x (text-only + 5 budgets) = 48
    model = [{"name": "tiny-qwen2.5-vl", "backend": "hf", "model": str(tiny_qwen)}]
    killed = write_protocol(
        tmp_path / "killed.toml", suite, frames=FRAMES, models=model, output=tmp_path / "killed"
    )
    reference = write_protocol(
        tmp_path / "reference.toml",
        suite,
        frames=FRAMES,
        models=model,
        output=tmp_path / "reference",
    )
    proc = _sweep_cli(killed)
    deadline = time.monotonic() + 120
    while _stored_cells(tmp_path / "killed") < 10:
        if proc.poll() is not None:
            pytest.fail(f"sweep ended before the kill: {proc.stderr.read().decode()}")  # type: ignore[union-attr]
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("sweep made no progress")
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    stored = _stored_cells(tmp_path / "killed")
    assert 10 <= stored < 48

    # Resume with the CLI in-process: only the missing cells run.
    assert main(["sweep", str(killed), "--batch-size", "1", "--no-progress", "--json"]) == 0
    # An uninterrupted run of the same protocol.
    assert main(["sweep", str(reference), "--batch-size", "1", "--no-progress"]) == 0
    resumed, prov = read_run(tmp_path / "killed")
    whole, _ = read_run(tmp_path / "reference")
    assert prov["sweep"]["skipped_cells"] == stored and prov["sweep"]["ran_cells"] == 48 - stored
    key = ["item_id", "config_id"]
    a = resumed.drop(columns=["latency_s", "session_id"]).sort_values(key).reset_index(drop=True)
    b = whole.drop(columns=["latency_s", "session_id"]).sort_values(key).reset_index(drop=True)
    assert a.equals(b)
    assert len(a) == 48 and set(a["status"]) <= {"ok", "noanswer"}
    # What the processor actually produced: Qwen2.5-VL merges 2 frames x 28x28 pixels per
    # token; the 64x48 frames are resized to 56x56 (multiples of 28).
    video_rows = a[a["frames"] > 0]
    assert (video_rows["pixels"] == 56 * 56).all()
    assert (video_rows["visual_tokens"] == np.ceil(video_rows["frames"] / 2) * 4).all()
    assert (video_rows["effective_frames"] == video_rows["frames"]).all()
    assert (
        prov["model_specs"][a["cell_id"].size and next(iter(prov["model_specs"]))]["spec"][
            "backend"
        ]
        == "hf"
    )
    answered = a[a["status"] == "ok"]
    assert answered["confidence"].between(0, 1).all()
    for probs in answered["option_probs"]:
        assert sum(json.loads(probs).values()) == pytest.approx(1.0, abs=1e-6)
    out = tmp_path / "measures.json"
    assert main(["analyze", str(tmp_path / "killed"), "--bootstrap", "0", "--json", str(out)]) == 0
    assert out.stat().st_size > 0


def _image_parts(body: dict[str, object]) -> list[dict[str, object]]:
    content = body["messages"][0]["content"]  # type: ignore[index]
    if isinstance(content, str):  # text-only: a plain string message
        return []
    return [p for p in content if p.get("type") == "image_url"]  # type: ignore[union-attr]


def test_openai_served_model_sweep_against_a_local_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from PIL import Image

    from _support.openai_server import ChatServer, Reply

    secret = "sk-test-never-stored-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    suite = write_benchmark(tmp_path / "suite", 2)
    with ChatServer(default=Reply(text="C", top_logprobs=[("C", -0.2), ("A", -2.0)])) as server:
        options = {"base_url": server.base_url, "backoff_base_s": 0.01, "backoff_max_s": 0.02}
        proto = load_protocol(
            write_protocol(
                tmp_path / "p.toml",
                suite,
                frames=FRAMES,
                models=[
                    {
                        "name": "served",
                        "backend": "openai",
                        "model": "tiny-served",
                        "options": options,
                    }
                ],
            )
        )
        # The first request meets a 429 (retried), the second a 400 (no retry: model_error).
        server.push(
            Reply(status=429),
            Reply(status=200, text="C", top_logprobs=[("C", -0.2), ("A", -2.0)]),
            Reply(status=400),
        )
        assert main(["sweep", str(tmp_path / "p.toml"), "--no-progress", "--json"]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["planned"] == 24 and summary["by_status"] == {"ok": 23, "model_error": 1}
        df, _ = read_run(tmp_path / "run")
        err = df[df["status"] == "model_error"]
        assert len(err) == 1 and "400" in err.iloc[0]["error"] and err["answer"].isna().all()
        ok = df[df["status"] == "ok"]
        assert set(ok["answer"]) == {"C"}
        # Probabilities renormalised over the option letters the server returned.
        pc, pa = np.exp(-0.2), np.exp(-2.0)
        assert ok["confidence"].to_numpy() == pytest.approx(pc / (pc + pa))
        # Every request carried exactly the frames the table records, as images.
        bodies = [r.body for r in server.received]
        assert len(bodies) == 25  # 24 cells + one retry
        counts = sorted(len(_image_parts(b)) for b in bodies[1:])
        assert counts == sorted(df["effective_frames"].fillna(0).astype(int).tolist())
        part = next(p for b in bodies for p in _image_parts(b))
        data = base64.b64decode(str(part["image_url"]["url"]).split(",", 1)[1])  # type: ignore[index]
        assert Image.open(io.BytesIO(data)).size == (64, 48)
        # Rerun: nothing is sent; --retry-errors re-sends only the failed cell.
        before = len(server.received)
        again = run_sweep(proto, progress=False)
        assert again.ran == 0 and len(server.received) == before
        retry = run_sweep(proto, progress=False, retry_errors=True)
        assert retry.ran == 1 and len(server.received) == before + 1
        assert retry.by_status == {"ok": 1}
    df, _ = read_run(tmp_path / "run")
    assert set(df["status"]) == {"ok"}
    # The key was sent to the server but is stored nowhere in the run.
    assert server.received[0].headers.get("Authorization") == f"Bearer {secret}"
    for path in (tmp_path / "run").iterdir():
        assert secret.encode() not in path.read_bytes(), path


def test_cli_sweep_shows_progress_and_prints_a_summary(
    tmp_path: Path, tiny_qwen: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_benchmark(tmp_path / "suite", 1)
    proto = write_protocol(
        tmp_path / "p.toml",
        suite,
        frames=(2, 4),
        models=[{"name": "tiny", "backend": "hf", "model": str(tiny_qwen)}],
    )
    assert main(["sweep", str(proto), "--json", "--batch-size", "2"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["planned"] == 6 and summary["ran"] == 6 and summary["rows"] == 6
    assert summary["interrupted"] is False
    # tqdm on stderr: count, rate in cells per second, elapsed<remaining (the ETA).
    assert "6/6" in captured.err and "cell/s" in captured.err and "<00:00" in captured.err
    assert main(["sweep", str(proto)]) == 0
    assert "6 cells planned, 6 already done, 0 run" in capsys.readouterr().out


def test_cli_runtime_options_reach_the_served_backend(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--timeout, --max-retries and --concurrency from the command line bound the served model:
    a reply slower than --timeout becomes a `timeout` row (not retried), a 500 with
    --max-retries 0 becomes `model_error` at once, and no more than --concurrency requests are
    in flight. None of them changes a cell's identity."""
    from _support.openai_server import ChatServer, Reply

    suite = write_benchmark(tmp_path / "suite", 2)

    def protocol(server: ChatServer) -> Path:
        options = {"base_url": server.base_url, "backoff_base_s": 0.01, "backoff_max_s": 0.02}
        return write_protocol(
            tmp_path / "p.toml",
            suite,
            frames=(2, 4),
            models=[{"name": "served", "backend": "openai", "model": "m", "options": options}],
        )

    with ChatServer(default=Reply(text="A")) as server:
        proto = protocol(server)
        # the first request is the probe (a slow or refused one stops the sweep: exit 1)
        server.push(Reply(text="A"), Reply(text="A", delay_s=2.0), Reply(status=500))
        argv = ["sweep", str(proto), "--no-progress", "--json", "--timeout", "0.5"]
        assert main([*argv, "--max-retries", "0"]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["by_status"] == {"ok": 10, "timeout": 1, "model_error": 1}
        sent = len(server.received)
        assert sent == 12  # nothing retried
        # Other runtime settings, same cells: nothing runs again.
        assert main([*argv, "--concurrency", "4", "--max-retries", "3"]) == 0
        assert json.loads(capsys.readouterr().out)["ran"] == 0
        assert len(server.received) == sent

    for concurrency, most in ((1, 1), (4, 4)):
        with ChatServer(default=Reply(text="A", delay_s=0.1)) as server:
            proto = protocol(server)
            out = tmp_path / f"c{concurrency}"
            argv = ["sweep", str(proto), "--no-progress", "--json", "--output", str(out)]
            assert main([*argv, "--batch-size", "6", "--concurrency", str(concurrency)]) == 0
            capsys.readouterr()
            assert len(server.received) == 12
            assert server.max_in_flight <= most
            if concurrency > 1:
                assert server.max_in_flight > 1  # the batch really went out in parallel
    for bad in (["--concurrency", "0"], ["--timeout", "0"], ["--max-retries", "-1"]):
        assert main(["sweep", str(proto), *bad]) == 2
