"""A key that comes back transformed: JSON-escaped, `\\u`-escaped, URL-encoded, base64 (alone,
as "Bearer KEY", as "user:KEY"), its case changed, split by whitespace or a newline, or as a
partial echo keeping its first and last characters. Each is removed by `redact`, and a canary
echoed in each form by a real server on 127.0.0.1 reaches no file of the run folder, its
artifact, or the console (docs/run-folders.md)."""

from __future__ import annotations

import base64
import json
import re
import sqlite3
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _support.sweep import write_benchmark, write_protocol
from itemscale.cli import main
from itemscale.core.responses import redact, register_secret
from itemscale.core.responses._safety import REDACTED, _base64_cores, redaction_trigger

KEY = "sk-zq7Xv/Pm3+Rt9KwLhJ4nYgQsT8uVd"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


#: How each server echoes the key (the names the tests report).
ECHOES: dict[str, Callable[[str], str]] = {
    "as sent": lambda k: k,
    "json escaped slash": lambda k: k.replace("/", "\\/"),
    "json unicode escapes": lambda k: "".join(f"\\u{ord(c):04x}" for c in k),
    "json unicode, upper hex": lambda k: "".join(f"\\u{ord(c):04X}" for c in k),
    "url encoded": lambda k: urllib.parse.quote(k, safe=""),
    "base64 of the key": _b64,
    "base64 of bearer key": lambda k: _b64(f"Bearer {k}"),
    "base64 of user:key": lambda k: _b64(f"user:{k}"),
    "urlsafe base64": lambda k: base64.urlsafe_b64encode(f"xx{k}".encode()).decode(),
    "upper case": str.upper,
    "lower case": str.lower,
    "split by a newline": lambda k: k[:11] + "\n" + k[11:],
    "split by an indented newline": lambda k: k[:7] + "\r\n    " + k[7:],
    "split by spaces": lambda k: " ".join(k[i : i + 5] for i in range(0, len(k), 5)),
    "split by an escaped newline": lambda k: k[:9] + "\\n" + k[9:],
    "partial ...": lambda k: f"{k[:6]}...{k[-4:]}",
    "partial stars": lambda k: f"{k[:8]}{'*' * 24}{k[-4:]}",
    "partial ellipsis": lambda k: f"{k[:3]}\u2026{k[-3:]}",
}


def _leaks(text: str, echo: str) -> list[str]:
    """What of the key is still readable in `text`: the echo itself, six characters of the
    key in a row (any case), or eight of a base64 spelling of it."""
    found = [echo] if echo in text else []
    low = text.lower()
    for start in range(len(KEY) - 5):
        if KEY[start : start + 6].lower() in low:
            found.append(KEY[start : start + 6])
    for core in _base64_cores(KEY):
        found += [core[s : s + 8] for s in range(len(core) - 7) if core[s : s + 8] in text]
    return found


@pytest.mark.parametrize("name", sorted(ECHOES))
def test_redact_removes_every_spelling_of_a_known_key(name: str) -> None:
    register_secret(KEY)
    echo = ECHOES[name](KEY)
    for before, after in [("", ""), ("invalid key: ", "."), ("A" * 997, " " + "B" * 3)]:
        text = f"{before}{echo}{after}"
        clean = redact(text)
        assert REDACTED in clean
        assert not _leaks(clean, echo), (name, clean)
        assert re.search(redaction_trigger(), text)  # the table pre-filter sees it too
        assert redact(clean) == clean


def test_ordinary_text_and_short_words_are_left_alone() -> None:
    register_secret(KEY)
    for text in ["sk-learn is a library", "the answer is B", "SK-CANARY", "Pm3+Rt9K", "a" * 99]:
        assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a key written into a URL's path or query, never known to the process
        (
            "http://127.0.0.1:8000/k/AbCdEf0123456789GhIjKl/v1",
            f"http://127.0.0.1:8000/k/{REDACTED}/v1",
        ),
        ("https://h/v1?x=1&auth=Zx9Qw8Er7Ty6Ui5Op4As3D", f"https://h/v1?x=1&auth={REDACTED}"),
        ("http://h/v1#frag0123456789abcdefghij", f"http://h/v1#{REDACTED}"),
        # a token with a provider's key prefix, anywhere
        ("use hf_abcdEFGH1234ijklMNOP now", f"use {REDACTED} now"),
        ("key sk-proj-Ab3dEf6hIj9kLmNoPq2s end", f"key {REDACTED} end"),
        ("sk-ant-api03-x9Y8z7W6v5U4t3S2r1Q0 is it", f"{REDACTED} is it"),
        ("ghp_16C7e42F292c6912E7710c838347Ae178B4a", REDACTED),
        # ... but not an identifier made of words with a digit, a model's name, a path of words
        ("load hf_model_v2_checkpoint_final now", "load hf_model_v2_checkpoint_final now"),
        ("pip install sk-learn-0-24-compat-shim", "pip install sk-learn-0-24-compat-shim"),
        ("http://h/v1/models/Qwen2.5-VL-7B-Instruct", "http://h/v1/models/Qwen2.5-VL-7B-Instruct"),
        ("http://h/some/ordinary/path/words", "http://h/some/ordinary/path/words"),
    ],
)
def test_keys_in_any_part_of_a_url_and_prefixed_keys_are_redacted(text: str, expected: str) -> None:
    assert redact(text) == expected


SPELLINGS = st.sampled_from([f(KEY) for f in ECHOES.values()])


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30), SPELLINGS, st.text(max_size=30))
def test_a_spelling_at_any_offset_of_any_text_is_redacted(
    before: str, echo: str, after: str
) -> None:
    register_secret(KEY)
    text = before + echo + after
    assert re.search(redaction_trigger(), text)
    clean = redact(text)
    assert KEY not in clean and echo not in clean


def _readable(path: Path) -> str:
    """A stored file's text as a reader gets it back (compressed Parquet decoded, SQLite
    dumped), plus its raw bytes."""
    raw = path.read_bytes().decode("utf-8", errors="replace")
    if path.suffix == ".parquet":
        return raw + pd.read_parquet(path).to_csv()
    if path.suffix == ".sqlite":
        with sqlite3.connect(path) as con:
            return raw + "\n".join(con.iterdump())
    return raw


@pytest.mark.parametrize(
    ("name", "where", "pad"),
    [(name, "reply", 3 + 37 * i) for i, name in enumerate(sorted(ECHOES))]
    + [
        ("json escaped slash", "error body", 0),
        ("json unicode escapes", "error body", 251),
        ("base64 of bearer key", "error body", 290),
        ("split by a newline", "error body", 40),
        ("partial ...", "error body", 7),
        ("upper case", "error body", 100),
    ],
)
def test_a_canary_echoed_in_any_spelling_reaches_no_file_and_not_the_console(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    where: str,
    pad: int,
) -> None:
    from _support.openai_server import ChatServer, Reply

    monkeypatch.setenv("ITEMSCALE_API_KEY", KEY)
    echo = ECHOES[name](KEY)
    said = "A" * pad + f" invalid key {echo} " + "B" * 20
    if where == "reply":
        status, body = 200, json.dumps({"choices": [{"message": {"content": said}}]})
    else:  # the raw body as such a server writes it: the echo is in the JSON text itself
        status, body = 401, '{"error": {"message": "' + said.replace("\n", "\\n") + '"}}'
    suite = write_benchmark(tmp_path / "suite", 1)
    with ChatServer(default=Reply(status=status, raw_body=body.encode())) as server:
        write_protocol(
            tmp_path / "p.toml",
            suite,
            frames=(2,),
            models=[
                {
                    "name": "served",
                    "backend": "openai",
                    "model": "m",
                    "options": {"base_url": server.base_url, "api_key_env": "ITEMSCALE_API_KEY"},
                }
            ],
        )
        code = main(["sweep", str(tmp_path / "p.toml"), "--no-progress", "--max-retries", "0"])
        assert server.received[0].headers["Authorization"] == f"Bearer {KEY}"
    assert code in (0, 1)
    run_dir = tmp_path / "run"
    assert main(["report", str(run_dir), "--bootstrap", "0"]) in (0, 2)
    printed = capsys.readouterr()
    assert not _leaks(printed.out + printed.err, echo)
    stored = [p for p in sorted(run_dir.rglob("*")) if p.is_file()]
    names = {p.name for p in stored}
    assert {"store.sqlite", "responses.parquet", "run.json"} <= names
    assert any(p.parent.name == "artifact" for p in stored), names
    for path in stored:
        assert not _leaks(_readable(path), echo), path
