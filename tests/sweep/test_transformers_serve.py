"""A sweep against a real OpenAI-compatible server: `transformers serve` (transformers'
own server, `pip install "transformers[serving]"`) on 127.0.0.1, serving the shipped built-in
model folder, swept through the `openai` backend with default options.

What this server does, which the backend must cope with: it accepts frames as image parts,
refuses an inline video (a 500 whose body says it wants an http(s) URL or a path), ignores
`logprobs`, and reports `usage.prompt_tokens`.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from _support.sweep import write_benchmark, write_protocol
from itemscale.collect.models import builtin_model_dir
from itemscale.collect.protocol import load_protocol
from itemscale.collect.sweep import ServerRefusedError, run_sweep
from itemscale.core.responses import read_run

pytestmark = pytest.mark.slow

SERVE = Path(sys.executable).with_name("transformers")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not SERVE.is_file() or shutil.which("uvicorn", path=str(SERVE.parent)) is None:
        pytest.skip('transformers serve is not installed (pip install "transformers[serving]")')
    port = _free_port()
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    argv = [str(SERVE), "serve", str(builtin_model_dir()), "--host", "127.0.0.1"]
    argv += ["--port", str(port), "--device", "cpu"]
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"transformers serve did not start:\n{log.read_text()[-2000:]}")
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def _protocol(tmp_path: Path, base_url: str, **options: object) -> Path:
    suite = write_benchmark(tmp_path / "suite", 2)
    return write_protocol(
        tmp_path / "p.toml",
        suite,
        frames=(2, 4),
        models=[
            {
                "name": "builtin-served",
                "backend": "openai",
                "model": str(builtin_model_dir()),
                "options": {"base_url": base_url, **options},
            }
        ],
    )


def test_a_default_sweep_keeps_requests_in_flight_and_answers_every_cell(
    tmp_path: Path, served: str
) -> None:
    result = run_sweep(load_protocol(_protocol(tmp_path, served)), progress=False)
    assert result.ran == 12 and set(result.by_status) <= {"ok", "noanswer"}
    seen = result.served["builtin-served"]
    assert seen["max_in_flight"] > 1  # --concurrency's default at --batch-size 1
    # the server ignores logprobs: said in the summary and in run.json, not left silent
    assert seen["logprob_missing"] == seen["logprob_requests"] > 0
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert any("no log-probabilities" in w for w in run["sweep"]["warnings"])
    df, _ = read_run(tmp_path / "run")
    visual = df[df["frames"] > 0]
    # the frames' share of usage.prompt_tokens, more frames more tokens
    assert visual["visual_tokens"].notna().all() and (visual["visual_tokens"] > 0).all()
    by_frames = visual.groupby("frames")["visual_tokens"].mean()
    assert by_frames[4] > by_frames[2]


def test_an_inline_video_is_refused_after_one_probe_with_the_servers_message(
    tmp_path: Path, served: str
) -> None:
    start = time.monotonic()
    with pytest.raises(ServerRefusedError, match="refused the first request") as info:
        run_sweep(load_protocol(_protocol(tmp_path, served, video_input=True)), progress=False)
    assert "HTTP 500" in str(info.value)
    assert time.monotonic() - start < 60  # not five retries with backoff per cell
    df, _ = read_run(tmp_path / "run")
    assert list(df["status"]) == ["model_error"]
