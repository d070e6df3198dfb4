"""`verify` after the manifest was written again (issue 23): the edits a hash check alone
passed (a gold answer, a video digest, run.json, the README, JSON whitespace, audit statistics)
are found by re-deriving what can be re-derived, and any edit at all by the published digest.
Also: `report` prints that digest, and cleans up the temporary folders of killed builds."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from _support.runs import make_run
from _support.sweep import pixel_factory, write_benchmark, write_protocol
from itemscale.cli import main
from itemscale.core.files import sha256_file
from itemscale.report import manifest_digest, verify_artifact
from itemscale.report._build import load_report_inputs
from itemscale.report._html import render_report
from itemscale.report._manifest import write_manifest


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A swept run over real H.264 videos named by the items, with its cascade, reported."""
    from itemscale.collect.protocol import load_protocol
    from itemscale.collect.sweep import run_sweep

    root = tmp_path_factory.mktemp("swept")
    suite = write_benchmark(root / "suite", 3)
    items = suite / "items.jsonl"
    lines = items.read_text(encoding="utf-8").splitlines()
    with_paths = [lines[0]]
    for line in lines[1:]:
        item = json.loads(line)
        item["video_path"] = f"videos/{item['video_id']}.mp4"
        with_paths.append(json.dumps(item))
    items.write_text("\n".join(with_paths) + "\n", encoding="utf-8")
    proto = write_protocol(root / "p.toml", suite, frames=(2, 4, 8))
    text = proto.read_text().replace('kind = "synthetic"', 'kind = "jsonl"')
    proto.write_text(text.replace(f'path = "{suite}"', f'path = "{items}"'))
    run_sweep(load_protocol(proto), backend_factory=pixel_factory, progress=False)
    run = root / "run"
    assert main(["cascade", str(run), "--bootstrap", "0", "--json", str(run / "cascade.json")]) in (
        0,
        2,
    )
    assert main(["report", str(run), "--bootstrap", "20"]) == 0
    return run / "artifact", manifest_digest(run / "artifact")


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("audited") / "run"
    make_run(run)
    assert main(["report", str(run), "--bootstrap", "0"]) == 0
    return run / "artifact"


def _forged(artifact: Path, tmp_path: Path, edit: Callable[[Path], None]) -> Path:
    copy = tmp_path / f"forged-{len(list(tmp_path.iterdir()))}"
    shutil.copytree(artifact, copy)
    edit(copy)
    write_manifest(copy)  # the forger writes the manifest again
    return copy


def _json_edit(name: str, change: Callable[[dict], None]) -> Callable[[Path], None]:  # type: ignore[type-arg]
    def edit(root: Path) -> None:
        data = json.loads((root / name).read_text(encoding="utf-8"))
        change(data)
        (root / name).write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")

    return edit


def _gold(root: Path) -> None:
    lines = (root / "items.jsonl").read_text(encoding="utf-8").splitlines()
    item = json.loads(lines[1])
    item["answer"] = "D" if item["answer"] != "D" else "C"
    lines[1] = json.dumps(item)
    (root / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _video_digest(data: dict) -> None:  # type: ignore[type-arg]
    video = sorted(data["inputs"]["videos"])[0]
    data["inputs"]["videos"][video]["sha256"] = "0" * 64


def _spaces(name: str) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        path = root / name
        path.write_text(path.read_text(encoding="utf-8").replace(": ", ":  ", 1))

    return edit


def _readme(root: Path) -> None:
    path = root / "README.md"
    path.write_text(path.read_text(encoding="utf-8").replace("B = 20", "B = 2000"))


EDITS: dict[str, tuple[Callable[[Path], None], str]] = {
    "a gold answer in items.jsonl": (_gold, "items.jsonl"),
    "a video digest in provenance.json": (
        _json_edit("provenance.json", _video_digest),
        "provenance.json",
    ),
    "the protocol in run.json": (
        _json_edit("run.json", lambda d: d["protocol"]["decoding"].update(temperature=0.7)),
        "run.json",
    ),
    "the README": (_readme, "README.md"),
    "whitespace in measures.json": (_spaces("measures.json"), "measures.json"),
    "whitespace in provenance.json": (_spaces("provenance.json"), "provenance.json"),
    "whitespace in run.json": (_spaces("run.json"), "run.json"),
    "whitespace in cascade.json": (_spaces("cascade.json"), "cascade.json"),
}


@pytest.mark.parametrize("what", list(EDITS))
def test_an_edit_behind_a_rewritten_manifest_is_found(
    swept: tuple[Path, str], tmp_path: Path, what: str
) -> None:
    artifact, digest = swept
    assert verify_artifact(artifact).ok
    edit, blamed = EDITS[what]
    forged = _forged(artifact, tmp_path, edit)
    found = verify_artifact(forged)
    assert blamed in found.bad_files, (what, found.problems)
    with_digest = verify_artifact(forged, digest=digest)
    assert "MANIFEST.json" in with_digest.bad_files and "digest" in with_digest.checks


def test_audit_statistics_behind_a_rewritten_manifest_are_found(
    audited: Path, tmp_path: Path
) -> None:
    assert verify_artifact(audited).ok

    def stats(root: Path) -> None:
        table = pq.read_table(root / "audit.parquet")
        frame = table.to_pandas()
        number = next(c for c in frame.columns if pd.api.types.is_float_dtype(frame[c]))
        frame.loc[0, number] = frame.loc[0, number] + 0.5
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), root / "audit.parquet")

    found = verify_artifact(_forged(audited, tmp_path, stats))
    assert "audit.parquet" in found.bad_files, found.problems


def test_a_consistent_forgery_is_caught_by_the_published_digest_only(
    swept: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A raw text edited in responses.parquet (no measure moves), its hash in provenance.json
    edited to match, the report rendered again, the manifest written again: only the digest
    published elsewhere knows."""
    artifact, digest = swept

    def forge(root: Path) -> None:
        table = pq.read_table(root / "responses.parquet")
        frame = table.to_pandas()
        frame.loc[0, "raw_text"] = "edited after the fact"
        pq.write_table(
            pa.Table.from_pandas(frame, preserve_index=False).replace_schema_metadata(
                table.schema.metadata
            ),
            root / "responses.parquet",
        )
        prov = json.loads((root / "provenance.json").read_text(encoding="utf-8"))
        prov["inputs"]["responses.parquet"]["sha256"] = sha256_file(root / "responses.parquet")
        (root / "provenance.json").write_text(
            json.dumps(prov, indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
        html = render_report(load_report_inputs(root))  # and the report, with the tool's help
        (root / "report.html").write_text(html, encoding="utf-8")

    forged = _forged(artifact, tmp_path, forge)
    quiet = verify_artifact(forged)
    assert quiet.ok, quiet.problems  # hashes and re-derivations agree with each other
    assert main(["verify", str(forged), "--digest", digest]) == 1
    assert "not the published" in capsys.readouterr().err
    assert main(["verify", str(artifact), "--digest", digest.upper()]) == 0
    assert main(["verify", str(artifact), "--digest", "abc"]) == 2
    assert "expected the 64 hex digits" in capsys.readouterr().err


def test_report_prints_the_digest_verify_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    make_run(run, with_audit=False)
    capsys.readouterr()
    assert main(["report", str(run), "--bootstrap", "0"]) == 0
    out = capsys.readouterr().out
    digest = manifest_digest(run / "artifact")
    assert f"digest: {digest}" in out
    assert f"itemscale verify {run / 'artifact'} --digest {digest}" in out
    assert digest == sha256_file(run / "artifact" / "MANIFEST.json")


def test_a_killed_reports_temporary_folder_is_cleaned_by_the_next(tmp_path: Path) -> None:
    run = tmp_path / "run"
    make_run(run, n_items=200, with_audit=False)
    proc = subprocess.Popen(
        [sys.executable, "-m", "itemscale", "report", str(run), "--bootstrap", "3000"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list(run.glob(".artifact-tmp-*")):
        time.sleep(0.05)
    assert list(run.glob(".artifact-tmp-*")), "the build never started"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    [left] = list(run.glob(".artifact-*"))  # what the kill left behind
    legacy = run / ".artifact-k3j9x0qa"  # a killed build of an older itemscale
    shutil.copytree(left, legacy)
    users = run / ".artifact-notes"  # named alike, not ours: never touched
    users.mkdir()
    (users / "mine.txt").write_text("keep", encoding="utf-8")
    assert main(["report", str(run), "--bootstrap", "0"]) == 0
    assert sorted(p.name for p in run.glob(".artifact*")) == [".artifact-notes"]
    assert (users / "mine.txt").read_text(encoding="utf-8") == "keep"
    assert verify_artifact(run / "artifact").ok
