"""A server that ignores max_tokens: each reply's stored text is cut at `max_reply_chars`
(redacted whole first), the excess counted in the row's text and in run.json, so the store
does not grow by megabytes a cell (docs/backends.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _support.openai_server import ChatServer, Reply
from _support.sweep import write_benchmark, write_protocol
from itemscale.cli import main
from itemscale.core.responses import read_run

KEY = "sk-Cap7Straddle3Key9Xy2Wv8Ut"


def test_long_replies_are_cut_counted_and_redacted_before_the_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    size = 1_000_000
    text = "B " + "x" * 1990 + KEY + "y" * (size - 1992 - len(KEY))  # the key across the cut
    with ChatServer(default=Reply(text=text)) as server:
        suite = write_benchmark(tmp_path / "suite", 2)
        proto = write_protocol(
            tmp_path / "p.toml",
            suite,
            frames=(2,),
            models=[
                {
                    "name": "served",
                    "backend": "openai",
                    "model": "m",
                    "options": {"base_url": server.base_url, "max_reply_chars": 2000},
                }
            ],
        )
        assert main(["sweep", str(proto), "--no-progress", "--max-retries", "0"]) == 0
    out = capsys.readouterr().out
    df, meta = read_run(tmp_path / "run")
    answered = df[df["raw_text"].notna()]
    assert len(answered) == len(df) > 0
    kept = 2000 - 1992  # characters of "[REDACTED]" before the cut
    for value in answered["raw_text"]:
        assert value.startswith("B " + "x" * 1990 + "[REDACTED]"[:kept])
        assert value.endswith(f"... ({size - len(KEY) + len('[REDACTED]') - 2000} more characters)")
        assert KEY[:6] not in value
    served = meta["sweep"]["served"]["served"]
    assert served["replies_cut"] == len(df)
    assert served["reply_chars_cut"] == len(df) * (size - 2000)
    assert any("were cut" in w for w in meta["sweep"]["warnings"])
    assert "were cut" in out
    # the store holds the cut text only: far below one reply per cell
    assert (tmp_path / "run" / "store.sqlite").stat().st_size < size
    assert json.dumps(meta).count(KEY[:6]) == 0
