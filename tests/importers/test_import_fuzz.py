"""Fuzz: hostile edits of real lmms-eval logs, VLMEvalKit files, tables and protocol files give
rows or a typed, located `ItemscaleError`, never a traceback (issue 23: a 5000-digit integer,
100k-deep arrays, a truncated TSV and a binary item file all escaped as tracebacks).

Each example takes a valid input and damages it the way files get damaged: cut off at any byte,
a value replaced by a hostile atom (an integer past Python's 4300-digit limit, nesting deeper
than the stack, a boolean or string where a count belongs, 10^5 letters, non-UTF-8 bytes), or
bytes inserted anywhere.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from itemscale.collect.importers import run_import
from itemscale.collect.protocol import load_protocol
from itemscale.core.errors import ItemscaleError

PLACEHOLDER = "__HOSTILE__"
#: Raw JSON texts that defeat a naive `json.loads` or a naive reader of its result.
JSON_ATOMS = [
    "1" * 5000,
    "[" * 100_000 + "]" * 100_000,
    '{"a":' * 50_000 + "1" + "}" * 50_000,
    "true",
    "null",
    '"8"',
    "-1",
    "1e999",
    "NaN",
    "[]",
    "{}",
    '"' + "A" * 100_000 + '"',
    '"\\u0000\\ud800"',
    '["a", {"b": [1, 2]}]',
]
FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _replace_value(text: str, position: int, atom: str) -> str:
    """`text` (JSON lines, or one JSON document) with the value of one key of one line
    replaced by the raw `atom`."""
    lines = text.splitlines()
    line_no = position % len(lines)
    try:
        obj = json.loads(lines[line_no])
    except ValueError:
        return text
    if not isinstance(obj, dict) or not obj:
        return text
    keys = sorted(obj)
    key = keys[(position // len(lines)) % len(keys)]
    inner = obj[key]
    if isinstance(inner, dict) and inner and position % 3 == 0:  # one level down
        inner_key = sorted(inner)[position % len(inner)]
        inner[inner_key] = PLACEHOLDER
    else:
        obj[key] = PLACEHOLDER
    lines[line_no] = json.dumps(obj).replace(json.dumps(PLACEHOLDER), atom)
    return "\n".join(lines) + "\n"


@st.composite
def damaged(draw: st.DrawFn, original: bytes, *, json_text: bool = True) -> bytes:
    how = draw(
        st.sampled_from(
            ["truncate", "value", "insert", "value"] if json_text else ["truncate", "insert"]
        )
    )
    if how == "truncate":
        return original[: draw(st.integers(0, len(original)))]
    if how == "insert":
        at = draw(st.integers(0, len(original)))
        junk = draw(
            st.sampled_from([b"\xff\xfe", b"\x00", b"\n", b"\t", b'"', b"\r\n\r\n", b"1" * 5000])
            | st.binary(min_size=1, max_size=20)
        )
        return original[:at] + junk + original[at:]
    atom = draw(st.sampled_from(JSON_ATOMS))
    position = draw(st.integers(0, 10_000))
    return _replace_value(original.decode("utf-8"), position, atom).encode("utf-8")


def _parses_or_says_where(kind: str, files: list[Path], run: Path, **options: Any) -> None:
    try:
        run_import(kind, files, run_dir=run, dry_run=True, **options)
    except ItemscaleError as exc:
        assert str(exc), "a typed error says what is wrong"
    assert not run.exists()  # a dry run writes nothing, refused or not


@pytest.fixture
def lmms_folder(fixtures_dir: Path) -> Path:
    return fixtures_dir / "lmms-eval" / "videomme-uniform16"


@FUZZ
@given(data=st.data(), which=st.sampled_from(["samples", "results"]))
def test_lmms_eval_logs(tmp_path: Path, lmms_folder: Path, data: st.DataObject, which: str) -> None:
    folder = tmp_path / f"log-{which}"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(lmms_folder, folder)
    target = next(folder.glob(f"*_{which}*.json*"))
    target.chmod(0o644)
    target.write_bytes(data.draw(damaged(target.read_bytes())))
    _parses_or_says_where("lmms-eval", [folder], tmp_path / "run")


def _vlmevalkit_rows() -> list[dict[str, Any]]:
    return [
        {
            "index": i,
            "video": f"vid{i // 2}",
            "question": f"Which colour is shown in clip {i}?",
            "candidates": "['A. red', 'B. green', 'C. blue', 'D. grey']",
            "answer": "ABCD"[i % 4],
            "prediction": ["A", "The answer is B.", "C. blue", "I don't know"][i % 4],
            "duration": "short",
        }
        for i in range(6)
    ]


@FUZZ
@given(data=st.data(), suffix=st.sampled_from([".tsv", ".json"]))
def test_vlmevalkit_files(tmp_path: Path, data: st.DataObject, suffix: str) -> None:
    path = tmp_path / f"Model_Video-MME_8frame{suffix}"
    rows = _vlmevalkit_rows()
    if suffix == ".tsv":
        pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
        original = path.read_bytes()
        edited = data.draw(damaged(original, json_text=False))
    else:
        original = ("\n".join(json.dumps(r) for r in rows)).encode()
        edited = data.draw(damaged(original))
        lines = edited.split(b"\n")
        edited = b"[" + b",".join(line for line in lines if line.strip()) + b"]"
    path.write_bytes(edited)
    _parses_or_says_where("vlmevalkit", [path], tmp_path / "run")


@FUZZ
@given(data=st.data())
def test_table_jsonl(tmp_path: Path, data: st.DataObject) -> None:
    path = tmp_path / "t.jsonl"
    rows = [
        {"model": "m", "item_id": f"q{i}", "video_id": f"v{i}", "config": c, "frames": f}
        | {"correct": (i + f) % 2}
        for i in range(3)
        for c, f in (("8f", 8), ("16f", 16))
    ]
    original = ("\n".join(json.dumps(r) for r in rows) + "\n").encode()
    path.write_bytes(data.draw(damaged(original)))
    _parses_or_says_where("table", [path], tmp_path / "run")


PROTOCOL = """\
output = "runs/audit"
repeats = 2
seeds = [11, 12]

[[models]]
name = "m"
backend = "builtin"
model = "builtin"

[benchmark]
kind = "jsonl"
path = "items.jsonl"
limit = 10

[grid]
frames = [2, 4, 8]
short_side = [56, 112]
token_budgets = [4096]
sampling = ["linspace", { name = "random", seed = 3 }]

[decoding]
max_new_tokens = 8
"""
TOML_ATOMS = [
    "true",
    '"8"',
    "8.0",
    "0",
    "-1",
    "1" * 5000,
    "100000000000000000000",
    "[true]",
    '["8"]',
    "[1]",
    "[]",
    "{}",
    "[" * 50_000 + "]" * 50_000,
    "inf",
    "nan",
    '"' + "A" * 10_000 + '"',
]


@FUZZ
@given(data=st.data())
def test_protocol_files(tmp_path: Path, data: st.DataObject) -> None:
    path = tmp_path / "protocol.toml"
    lines = PROTOCOL.splitlines()
    how = data.draw(st.sampled_from(["value", "value", "truncate", "insert"]))
    if how == "value":
        assignments = [n for n, line in enumerate(lines) if " = " in line]
        n = data.draw(st.sampled_from(assignments))
        key = lines[n].split(" = ", 1)[0]
        lines[n] = f"{key} = {data.draw(st.sampled_from(TOML_ATOMS))}"
        raw = ("\n".join(lines) + "\n").encode()
    else:
        raw = data.draw(damaged(PROTOCOL.encode(), json_text=False))
    path.write_bytes(raw)
    try:
        protocol = load_protocol(path)
    except ItemscaleError as exc:
        assert str(path) in str(exc)  # the message names the file (and the key)
    else:
        configs = protocol.configurations()
        assert configs and all(0 <= c.frames <= 10_000 for c in configs)
