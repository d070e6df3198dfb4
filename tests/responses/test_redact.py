"""`redact` and what is built on it: what it removes, that a cut comes after it, that the C++
pre-filter of a table's free-text columns never misses a text it would change. (Its speed on
10^6-character inputs is measured in benchmarks/redact.py, not here.)"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itemscale.cli import main
from itemscale.core.responses import (
    excerpt,
    normalise_responses,
    read_run,
    redact,
    register_secret,
)
from itemscale.core.responses._io import redact_free_text
from itemscale.core.responses._safety import redaction_trigger

KEY = "sk-redact-test-5f3a9c1e7b"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see http://user:pw@host/x", "see http://[REDACTED]@host/x"),
        ("9http://a:b@c", "9http://[REDACTED]@c"),  # a scheme after a digit: still found
        ("git+ssh://token@github.com/o/r", "git+ssh://[REDACTED]@github.com/o/r"),
        ("mail me: me@example.com", "mail me: me@example.com"),
        ("http://example.com/@user", "http://example.com/@user"),
        ("Authorization: Bearer abcdefgh12345", "Authorization: Bearer [REDACTED]"),
        ("Bearer short", "Bearer short"),
        ("GET /v1?api_key=abc&x=1", "GET /v1?api_key=[REDACTED]&x=1"),
        (f"the key {KEY}, again {KEY}", "the key [REDACTED], again [REDACTED]"),
        ("A" * 1000, "A" * 1000),
    ],
)
def test_what_redact_removes(text: str, expected: str) -> None:
    register_secret(KEY)
    assert redact(text) == expected
    assert redact(redact(text)) == redact(text)  # idempotent


def test_an_excerpt_is_cut_after_redaction() -> None:
    register_secret(KEY)
    body = "x" * 290 + " " + KEY + " tail"
    cut = excerpt(body, 300)
    assert KEY[:4] not in cut and "more characters" in cut
    naive = redact(body[:300])  # the old order: cut, then redact
    assert KEY[:9] in naive  # ... which kept the first nine characters of the key


FRAGMENTS = st.sampled_from(
    [
        "://",
        "http",
        "user:pw@",
        "@",
        "/",
        " ",
        "Bearer ",
        "bEaReR\t",
        "abcdefgh123",
        "?key=",
        "&TOKEN=",
        "api-key=",
        "=",
        "&",
        KEY,
        KEY[:10],
        "A",
        "\n",
        "é",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(FRAGMENTS | st.text(max_size=5), max_size=12).map("".join))
def test_the_prefilter_matches_every_text_redact_changes(text: str) -> None:
    register_secret(KEY)
    if redact(text) != text:
        assert re.search(redaction_trigger(), text)


def test_a_tables_free_text_is_redacted_however_many_rows() -> None:
    register_secret(KEY)
    rows = [
        {
            "model": "m",
            "item_id": f"q{i}",
            "video_id": "v",
            "task_kind": "mcqa",
            "series": "default",
            "config_id": "c",
            "config_label": "8f",
            "axis_order": 1.0,
            "frames": 8,
            "repeat": 0,
            "status": "ok",
            "correct": 1.0,
            "raw_text": f"answer {i} " + (KEY if i == 7 else "plain"),
            "reference": "http://u:secretpw@h" if i == 3 else "A",
        }
        for i in range(50)
    ]
    out = redact_free_text(normalise_responses(pd.DataFrame(rows)))
    assert out["raw_text"].iloc[7] == "answer 7 [REDACTED]"
    assert out["raw_text"].iloc[6] == "answer 6 plain"
    assert out["reference"].iloc[3] == "http://[REDACTED]@h"
    assert not out["raw_text"].str.contains(KEY, regex=False).any()


def test_an_imported_reply_holding_a_key_is_stored_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path
    monkeypatch.setenv("HF_TOKEN", KEY)
    table = root / "t.csv"
    table.write_text(
        "model,item_id,video_id,config,frames,correct,prediction\n"
        f"m,q1,v1,8f,8,1,my token is {KEY}\nm,q1,v1,16f,16,0,B\n",
        encoding="utf-8",
    )
    assert main(["import", "table", str(table), "-o", str(root / "run")]) == 0
    df, _ = read_run(root / "run")
    assert "[REDACTED]" in set(df["raw_text"].str.split().str[-1])
    assert KEY.encode() not in (root / "run" / "responses.parquet").read_bytes()
