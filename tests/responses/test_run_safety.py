"""Nothing lost, ever: output folders, concurrent writers, sweeps over imported runs, secrets,
located errors instead of tracebacks (docs/run-folders.md)."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _support.sweep import pixel_factory, write_benchmark, write_protocol
from itemscale.cli import main
from itemscale.collect.importers import ImportInputError, import_table, run_import
from itemscale.core.responses import read_run, run_lock

HEADER = "model,item_id,video_id,config,frames,correct"


def _table(path: Path, model: str, n_items: int = 3) -> Path:
    lines = [HEADER]
    for i in range(n_items):
        lines += [f"{model},q{i},v{i},8f,8,{i % 2}", f"{model},q{i},v{i},16f,16,1"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _cli(*argv: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "itemscale", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1", **(env or {})},
    )


def _tree_bytes(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.fixture
def run(tmp_path: Path) -> Path:
    run_dir = tmp_path / "runs" / "a"
    assert main(["import", "table", str(_table(tmp_path / "a.csv", "m")), "-o", str(run_dir)]) == 0
    return run_dir


# -- 1. report --out never deletes what it did not write ------------------------------------


def test_report_refuses_to_replace_the_run_its_parent_or_a_users_folder(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sibling = tmp_path / "runs" / "b"
    sibling.mkdir()
    (sibling / "notes.txt").write_text("mine", encoding="utf-8")
    users = tmp_path / "figures"
    users.mkdir()
    (users / "plot.png").write_bytes(b"png")
    before = {p: _tree_bytes(p) for p in (run, sibling, users)}
    for out in (run, run.parent, tmp_path, users):
        assert main(["report", str(run), "--bootstrap", "0", "--out", str(out)]) == 2
        assert "refusing" in capsys.readouterr().err
    for path in (run, run.parent):  # not even with --force
        assert main(["report", str(run), "--bootstrap", "0", "--out", str(path), "--force"]) == 2
    assert {p: _tree_bytes(p) for p in (run, sibling, users)} == before
    # its own artifact folder is replaced freely; a user's folder only with --force
    assert main(["report", str(run), "--bootstrap", "0"]) == 0
    assert main(["report", str(run), "--bootstrap", "0"]) == 0
    assert main(["report", str(run), "--bootstrap", "0", "--out", str(users), "--force"]) == 0
    assert (users / "report.html").is_file() and not (users / "plot.png").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["report", str(run), "--bootstrap", "0", "--out", str(empty)]) == 0


# -- 2. two imports at once both land -------------------------------------------------------


def test_commands_on_a_missing_run_create_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mistyped run folder is an error, not a new empty folder with a lock file in it."""
    for command in (["report"], ["audit"], ["cascade"], ["intervene", "--policy", "nested"]):
        missing = tmp_path / f"typo-{command[0]}"
        assert main([command[0], str(missing), *command[1:]]) == 2
        assert f"{missing}: not a run directory" in capsys.readouterr().err
        assert not missing.exists()


def test_two_import_processes_at_once_lose_nothing(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    a, b = _table(tmp_path / "a.csv", "ma", 40), _table(tmp_path / "b.csv", "mb", 40)
    with run_lock(run_dir, what="test"):  # both start while the run is busy, then race
        procs = [_cli("import", "table", str(p), "-o", str(run_dir)) for p in (a, b)]
        import time

        time.sleep(1.5)
        assert all(p.poll() is None for p in procs)  # waiting for the lock, not failing
    for p in procs:
        _out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    df, meta = read_run(run_dir)
    assert sorted(df["model"].unique()) == ["ma", "mb"] and len(df) == 160
    assert len(meta["imports"]) == 2


def test_a_held_lock_is_a_typed_error_after_the_wait(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    table = _table(tmp_path / "a.csv", "m")
    with run_lock(run_dir, what="sweep"):
        proc = _cli(
            "import", "table", str(table), "-o", str(run_dir), env={"ITEMSCALE_LOCK_WAIT_S": "0.3"}
        )
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert "locked by another itemscale command (pid" in err and ": sweep)" in err
    assert not (run_dir / "responses.parquet").exists()


# -- 3. a sweep keeps the run's imported rows ---------------------------------------------


def test_sweep_after_import_keeps_the_imported_rows(tmp_path: Path) -> None:
    from itemscale.collect.protocol import load_protocol
    from itemscale.collect.sweep import run_sweep

    suite = write_benchmark(tmp_path / "suite", 2)
    proto = load_protocol(write_protocol(tmp_path / "p.toml", suite))
    run_dir = Path(proto.output)
    table = _table(tmp_path / "imported.csv", "imported-model")
    proc = _cli("import", "table", str(table), "-o", str(run_dir))
    assert proc.wait(timeout=120) == 0
    result = run_sweep(proto, backend_factory=pixel_factory, progress=False)
    assert result.ran == 16
    df, meta = read_run(run_dir)
    assert len(df) == 16 + 6 and set(df["model"]) == {"pixel", "imported-model"}
    assert len(meta["imports"]) == 1
    again = run_sweep(proto, backend_factory=pixel_factory, progress=False)
    assert again.ran == 0 and len(read_run(run_dir)[0]) == 22


# -- 4. one damaged lmms-eval sample does not rename the others ------------------------------


def test_a_sample_without_its_id_is_left_out_not_renaming_the_rest(
    tmp_path: Path, fixtures_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = fixtures_dir / "lmms-eval" / "videomme-uniform16"
    damaged = tmp_path / "damaged"
    shutil.copytree(src, damaged)
    samples = next(damaged.glob("*samples*.jsonl"))
    lines = samples.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    payload_key = next(k for k, v in first.items() if isinstance(v, dict) and "question_id" in v)
    first[payload_key]["question_id"] = None
    second = json.loads(lines[1])
    del second[payload_key]
    lines[0], lines[1] = json.dumps(first), json.dumps(second)
    samples.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run_dir = tmp_path / "run"
    argv = ["import", "lmms-eval", "--model", "llava"]
    assert (
        main(
            [
                *argv,
                "--config",
                f"clean:16={next(src.glob('*samples*'))}",
                "--config",
                f"damaged:16={samples}",
                "-o",
                str(run_dir),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "no item id" in out
    df, _ = read_run(run_dir)
    assert not df["item_id"].str.startswith("videomme:").any()
    per_config = df.groupby("config_label")["item_id"].nunique()
    assert per_config["clean"] == 40 and per_config["damaged"] == 38


# -- 5. secrets are never stored --------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "pad"),
    [
        (401, 0),
        (400, 249),  # the key straddles the 300-character cut of a stored error body
        (503, 255),
        (200, 380),  # a reply: straddles the report's 400-character cut of the output
        (200, 40_000),  # a long unbroken run of letters before it (redact stays linear)
    ],
)
def test_a_key_echoed_by_the_server_is_stored_nowhere(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    status: int,
    pad: int,
) -> None:
    from _support.openai_server import ChatServer, Reply

    key = "sk-canary-0123456789abcdef"
    password = "canary-password-42"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    suite = write_benchmark(tmp_path / "suite", 1)
    said = "A" * pad + f" invalid key {key} (Authorization: Bearer {key}) " + "B" * 50
    echo = json.dumps(
        {"choices": [{"message": {"content": said}}]}
        if status == 200
        else {"error": {"message": said}}
    )
    with ChatServer(default=Reply(status=status, raw_body=echo.encode())) as server:
        url = server.base_url.replace("http://", f"http://user:{password}@")
        options = {"base_url": url}
        write_protocol(
            tmp_path / "p.toml",
            suite,
            frames=(2,),
            models=[{"name": "served", "backend": "openai", "model": "m", "options": options}],
        )
        code = main(["sweep", str(tmp_path / "p.toml"), "--no-progress", "--max-retries", "0"])
    # A refused first request stops the sweep (exit 1) with the server's words, redacted;
    # the failed cell is still stored, so the store is searched for the key all the same.
    assert code == (0 if status == 200 else 1)
    printed = capsys.readouterr()
    for start in range(len(key) - 5):
        assert key[start : start + 6] not in printed.out + printed.err
    assert password not in printed.out + printed.err
    run_dir = tmp_path / "run"
    df, _meta = read_run(run_dir)
    if status == 200:
        assert set(df["status"]) == {"noanswer"}
        # a reply past max_reply_chars (32,768) is cut after redaction, the excess counted
        kept = "more characters)" if pad > 32_768 else "[REDACTED]"
        assert df["raw_text"].str.contains(kept, regex=False).all()
    else:
        assert set(df["status"]) == {"model_error"} and f"HTTP {status}" in df["error"].iloc[0]
    assert main(["report", str(run_dir), "--bootstrap", "0"]) in (0, 2)
    stored = [p for p in sorted(run_dir.rglob("*")) if p.is_file()]
    assert {"store.sqlite", "responses.parquet", "run.json"} <= {p.name for p in stored}
    for path in stored:
        data = path.read_bytes()
        for start in range(len(key) - 5):  # no six characters of the key in a row
            assert key[start : start + 6].encode() not in data, path
        assert password.encode() not in data, path


# -- 6. verify re-derives everything it can ------------------------------------------------


@pytest.fixture
def artifact(run: Path) -> Path:
    assert main(["cascade", str(run), "--bootstrap", "0", "--json", str(run / "cascade.json")]) in (
        0,
        2,
    )
    assert main(["report", str(run), "--bootstrap", "20"]) == 0
    return run / "artifact"


def _rebuilt(artifact: Path, tmp_path: Path, edit: Any) -> Any:
    from itemscale.report import verify_artifact
    from itemscale.report._manifest import write_manifest

    copy = tmp_path / f"copy-{len(list(tmp_path.iterdir()))}"
    shutil.copytree(artifact, copy)
    edit(copy)
    write_manifest(copy)  # the forger rebuilt the manifest too
    return verify_artifact(copy)


def test_verify_catches_edits_behind_a_rebuilt_manifest(artifact: Path, tmp_path: Path) -> None:
    from itemscale.report import verify_artifact

    assert verify_artifact(artifact).ok

    def report(root: Path) -> None:
        html = (root / "report.html").read_text(encoding="utf-8")
        (root / "report.html").write_text(
            html.replace("oracle headroom", "oracle gain", 1), encoding="utf-8"
        )

    def provenance(root: Path) -> None:
        prov = json.loads((root / "provenance.json").read_text(encoding="utf-8"))
        prov["times"]["run_started"] = "1999-01-01T00:00:00+00:00"
        (root / "provenance.json").write_text(json.dumps(prov), encoding="utf-8")

    def folder(root: Path) -> None:
        (root / "hidden").mkdir()

    def items(root: Path) -> None:
        (root / "items.jsonl").write_text("{not json\n", encoding="utf-8")
        (root / "audit.parquet").write_bytes((root / "trajectories.parquet").read_bytes())
        (root / "audit.json").write_text("{}", encoding="utf-8")

    assert "report.html" in _rebuilt(artifact, tmp_path, report).bad_files
    assert "provenance.json" in _rebuilt(artifact, tmp_path, provenance).bad_files
    copy = tmp_path / "with-folder"
    shutil.copytree(artifact, copy)
    folder(copy)  # an added empty folder, manifest untouched
    found = verify_artifact(copy)
    assert "hidden/" in found.bad_files and not found.ok
    damaged = _rebuilt(artifact, tmp_path, items)
    assert "items.jsonl" in damaged.bad_files  # flagged, not a traceback
    if (artifact / "cascade.json").is_file():

        def cascade(root: Path) -> None:
            data = json.loads((root / "cascade.json").read_text(encoding="utf-8"))
            data["settings"]["seed"] = data["settings"].get("seed", 0) + 1
            (root / "cascade.json").write_text(json.dumps(data), encoding="utf-8")

        assert "cascade.json" in _rebuilt(artifact, tmp_path, cascade).bad_files


# -- 7. and 8. typed, located errors ----------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("big.csv", HEADER + "\nm,q1,v1,8f,1e20,1\n", r"big\.csv:2: column 'frames': .* too large"),
        ("latin.csv", HEADER + "\nm,q\xe9,v1,8f,8,1\n", r"latin\.csv:2: not UTF-8"),
        ("bin.jsonl", '{"model": "m"}\n\xff\xfe\n', r"bin\.jsonl:2: not UTF-8"),
        ("nul.csv", HEADER + "\nm,q1\x00,v1,8f,8,1\n", r"nul\.csv:2: "),
        (
            "bool.jsonl",
            '{"model":"m","item_id":"q","config":"8f","frames":true,"correct":1}\n',
            r"bool\.jsonl:1: column 'frames': True is not a whole number",
        ),
        (
            "obj.jsonl",
            '{"model":"m","item_id":{"a":1},"config":"8f","frames":8,"correct":1}\n',
            r"obj\.jsonl:1: column 'item_id': dict value",
        ),
        (
            "digits.jsonl",
            '{"model":"m","item_id":"q","config":"8f","frames":8,"correct":1}\n'
            '{"model":"m","item_id":"q","config":"8f","frames":' + "9" * 5000 + ',"correct":1}\n',
            r"digits\.jsonl:2: not valid JSON \(an integer with more than 4300 digits\)$",
        ),
        (
            "surrogate.jsonl",
            '{"model":"m","item_id":"q\\ud800","config":"8f","frames":8,"correct":1}\n',
            r"surrogate\.jsonl:1: not valid JSON \(a lone UTF-16 surrogate escape",
        ),
        (
            "inf.jsonl",
            '{"model":"m","item_id":"q","config":1e999,"frames":8,"correct":1}\n',
            r"inf\.jsonl:1: column 'config': inf is not a text id",
        ),
        (
            "deep.jsonl",
            '{"model":"m","item_id":"q","x":' + "[" * 100_000 + "]" * 100_000 + "}\n",
            r"deep\.jsonl:1: not valid JSON \(nested too deeply\)$",
        ),
    ],
)
def test_bad_bytes_and_values_are_located(
    tmp_path: Path, name: str, content: str, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content.encode("latin-1"))
    with pytest.raises(ImportInputError, match=message):
        import_table(path)


@pytest.mark.parametrize(
    ("which", "value", "message"),
    [
        ("samples", "9" * 5000, r"_samples_videomme\.jsonl:1: not valid JSON \(an integer with"),
        ("samples", "[" * 100_000 + "]" * 100_000, r"_samples_videomme\.jsonl:1: .*too deeply"),
        ("results", "[" * 100_000 + "]" * 100_000, r"_results\.json:1: .*nested too deeply"),
        ("samples", '["a", {"b": 1}]', r"_samples_videomme\.jsonl:1: key 'doc_id': expected a"),
    ],
)
def test_lmms_eval_logs_past_the_json_limits_are_located(
    tmp_path: Path, fixtures_dir: Path, which: str, value: str, message: str
) -> None:
    """A 5000-digit integer (`Exceeds the limit (4300 digits)`) and 100k-deep arrays
    (`RecursionError`) were tracebacks from `import lmms-eval`."""
    log = tmp_path / "log"
    shutil.copytree(fixtures_dir / "lmms-eval" / "videomme-uniform16", log)
    target = next(log.glob(f"*_{which}*.json*"))
    target.chmod(0o644)
    if which == "samples":
        lines = target.read_text(encoding="utf-8").splitlines()
        lines[0] = lines[0].replace('"doc_id": 0', f'"doc_id": {value}', 1)
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        target.write_text(value, encoding="utf-8")
    with pytest.raises(ImportInputError, match=message):
        run_import("lmms-eval", [log], run_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_padded_ids_are_said_and_kinds_stay_apart_across_imports(tmp_path: Path) -> None:
    path = tmp_path / "pad.csv"
    path.write_text(HEADER + "\nm, q1 ,v1,8f,8,1\nm,q1,v1,16f,16,0\n", encoding="utf-8")
    rows, notes = import_table(path)
    assert set(rows["item_id"]) == {"q1"} and any("spaces around them" in n for n in notes)
    run_dir = tmp_path / "run"
    assert main(["import", "table", str(path), "-o", str(run_dir)]) == 0
    score = tmp_path / "score.csv"
    score.write_text(
        "model,item_id,video_id,config,frames,score\nm,q1,v1,32f,32,0.5\n", encoding="utf-8"
    )
    before = (run_dir / "responses.parquet").read_bytes()
    assert main(["import", "table", str(score), "-o", str(run_dir)]) == 2
    assert (run_dir / "responses.parquet").read_bytes() == before


def test_tracebacks_become_typed_errors(
    tmp_path: Path, run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "notadir"
    blocker.write_text("x", encoding="utf-8")
    table = _table(tmp_path / "t.csv", "m")
    assert main(["import", "table", str(table), "-o", str(blocker / "sub")]) == 2
    assert "notadir" in capsys.readouterr().err
    (run / "run.json").write_text("{broken", encoding="utf-8")
    assert main(["report", str(run), "--bootstrap", "0"]) == 2
    assert "run.json: not valid JSON" in capsys.readouterr().err
    results = tmp_path / "lm"
    results.mkdir()
    (results / "x_samples_videomme.jsonl").write_text(
        '{"doc_id": 0, "resps": ["A"]}\n', encoding="utf-8"
    )
    (results / "x_results.json").write_text("[1, 2]", encoding="utf-8")
    assert main(["import", "lmms-eval", str(results), "-o", str(tmp_path / "r2")]) == 2
    assert "expected lmms-eval's results object, got a JSON list" in capsys.readouterr().err


def test_a_damaged_store_and_a_bad_backend_option_are_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_benchmark(tmp_path / "suite", 1)
    bad = write_protocol(
        tmp_path / "bad.toml",
        suite,
        output=tmp_path / "bad-run",
        models=[{"name": "m", "backend": "hf", "model": "x", "options": {"no_such_option": 1}}],
    )
    for extra in (["--dry-run"], []):
        assert main(["sweep", str(bad), "--no-progress", *extra]) == 2
        assert "option 'no_such_option'" in capsys.readouterr().err
    assert not (tmp_path / "bad-run" / "store.sqlite").exists()
    good = write_protocol(tmp_path / "good.toml", suite, output=tmp_path / "run")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "store.sqlite").write_bytes(b"SQLite format 3\x00" + os.urandom(4096))
    assert main(["sweep", str(good), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "store.sqlite" in err and "Traceback" not in err
    with pytest.raises(sqlite3.DatabaseError):  # the bytes really are a damaged database
        sqlite3.connect(tmp_path / "run" / "store.sqlite").execute("SELECT * FROM cells").fetchall()


def test_a_sweep_refuses_bad_items_a_huge_grid_and_a_missing_gpu_before_any_store(
    tmp_path: Path,
) -> None:
    """Each was a traceback (UnicodeDecodeError; MemoryError or a kill; "Found no NVIDIA
    driver" after an empty store was made); now exit 2 with the file or flag named, and the
    run folder never created."""
    video = tmp_path / "clip.mp4"
    video.write_bytes(b"\x00\x00\x00\x18ftypmp42\xff\xfe\x80\x00" * 64)
    items = tmp_path / "items.jsonl"
    items.write_text(
        json.dumps({"item_id": "q", "video_id": "v", "question": "?", "options": ["a", "b"]})
        + "\n",
        encoding="utf-8",
    )

    def protocol(name: str, path: Path, extra: str = "") -> Path:
        out = tmp_path / f"{name}.toml"
        out.write_text(
            f'output = "run-{name}"\n{extra}\n[[models]]\nname = "m"\nbackend = "builtin"\n'
            f'model = "builtin"\n[benchmark]\nkind = "jsonl"\npath = "{path.name}"\n'
            "[grid]\nframes = [2]\n",
            encoding="utf-8",
        )
        return out

    cases = [
        (protocol("video", video), ["--dry-run"], r"clip\.mp4:1: not UTF-8 text"),
        (protocol("video", video), [], r"clip\.mp4:1: not UTF-8 text"),
        (
            protocol("huge", items, "repeats = 1000000000"),
            ["--dry-run"],
            r"repeats: .*1000000000 repeats is more than the 1000",
        ),
        (protocol("gpu", items), ["--device", "cuda"], r"--device cuda: torch sees no CUDA GPU"),
        (protocol("gpu", items), ["--device", "cuda:x"], r"--device 'cuda:x': not a device"),
    ]
    for path, flags, message in cases:
        proc = _cli("sweep", str(path), "--no-progress", *flags, env={"CUDA_VISIBLE_DEVICES": ""})
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 2, err
        assert re.search(message, err) and "Traceback" not in err, err
        assert not (tmp_path / f"run-{path.stem}").exists()


# -- fuzz: any bytes give rows or a typed, located error, never a half-written run -----------


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.binary(max_size=400)
    | st.text(max_size=300).map(lambda t: (HEADER + "\n" + t).encode()),
    suffix=st.sampled_from([".csv", ".tsv", ".jsonl", ".parquet"]),
)
def test_importers_never_trace_back_on_any_bytes(tmp_path: Path, data: bytes, suffix: str) -> None:
    path = tmp_path / f"fuzz{suffix}"
    path.write_bytes(data)
    run_dir = tmp_path / "fuzz-run"
    shutil.rmtree(run_dir, ignore_errors=True)
    try:
        rows, _ = import_table(path)
    except ImportInputError as exc:
        assert str(path) in str(exc)
    else:
        assert isinstance(rows, pd.DataFrame)
    code = main(["import", "table", str(path), "-o", str(run_dir)])
    assert code in (0, 2)
    if code == 2:
        assert not run_dir.exists()  # refused: nothing left behind
    else:
        assert read_run(run_dir)[0].shape[0] > 0
