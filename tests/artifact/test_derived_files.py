"""Files computed from the responses after they were written (cascade.json, an intervention's
result, the audit) when the responses change after them: README workflow 4's order (cascade,
then intervene, which adds its re-runs as rows) ends with `verify` OK, and `verify` tells a file
the responses moved on from (stale) from one changed by hand (edited)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from _support.runs import make_run
from _support.sweep import pixel_factory, write_benchmark, write_protocol
from itemscale import intervene
from itemscale.cli import main
from itemscale.collect.protocol import load_protocol
from itemscale.collect.sweep import run_sweep
from itemscale.core.files import sha256_file
from itemscale.core.responses import RESPONSES_DIGEST_KEY, read_run, responses_digest, write_run
from itemscale.report import DERIVED_KEY, verify_artifact
from itemscale.report._manifest import write_manifest


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture
def workflow4(tmp_path: Path) -> Path:
    """A swept run taken through README workflow 4 in its order: cascade, intervene, audit."""
    suite = write_benchmark(tmp_path / "suite", 6, 3)
    proto = write_protocol(tmp_path / "protocol.toml", suite, frames=(2, 4, 8))
    run_sweep(load_protocol(proto), backend_factory=pixel_factory, progress=False)
    run = tmp_path / "run"
    assert main(["cascade", str(run), "--bootstrap", "50"]) == 0
    before = _json(run / "cascade.json")
    assert before[RESPONSES_DIGEST_KEY] == responses_digest(run)
    intervene(
        run,
        intervention="nested",
        bootstrap=50,
        seed=0,
        backend_factory=pixel_factory,
        progress=False,
    )
    assert responses_digest(run) != before[RESPONSES_DIGEST_KEY]  # the re-runs are new rows
    assert main(["audit", str(run)]) == 0
    return run


@pytest.mark.slow
def test_workflow_4_in_order_ends_with_verify_ok(
    workflow4: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = workflow4
    stale = _json(run / "cascade.json")
    capsys.readouterr()
    assert main(["report", str(run), "--bootstrap", "50"]) == 0
    printed = capsys.readouterr().out
    assert "cascade.json: recomputed" in printed and "responses changed" in printed
    art = run / "artifact"
    assert main(["verify", str(art)]) == 0
    assert ": OK (" in capsys.readouterr().out
    # the artifact's cascade sees the intervention's series; the run's own file is untouched
    fresh = _json(art / "cascade.json")
    series = {s["series"] for s in fresh["skipped"]}
    assert any(s.startswith("intervention:") for s in series)
    assert not any(s["series"].startswith("intervention:") for s in stale["skipped"])
    assert _json(run / "cascade.json") == stale
    assert fresh[RESPONSES_DIGEST_KEY] == responses_digest(run)
    derived = _json(art / "provenance.json")[DERIVED_KEY]
    assert set(derived) == {"cascade.json"}  # the intervention and the audit came after
    assert derived["cascade.json"]["status"] == "recomputed"
    html = (art / "report.html").read_text(encoding="utf-8")
    assert "cascade.json: recomputed" in html


@pytest.mark.slow
def test_verify_tells_stale_from_edited(workflow4: Path) -> None:
    run = workflow4
    assert main(["report", str(run), "--bootstrap", "50"]) == 0
    art = run / "artifact"
    clean = run.parent / "clean"
    shutil.copytree(art, clean)

    # stale: the run's own cascade.json (computed before intervene's rows), manifest rewritten
    shutil.copyfile(run / "cascade.json", art / "cascade.json")
    write_manifest(art)
    result = verify_artifact(art)
    assert not result.ok
    message = result.bad_files["cascade.json"]
    assert message.startswith("stale: ") and "itemscale report RUN" in message

    # edited: the same responses recorded, a number changed by hand
    shutil.rmtree(art)
    shutil.copytree(clean, art)
    payload = _json(art / "cascade.json")
    block = payload["results"][0]
    block["terminal"]["accuracy"]["value"] = 0.99
    (art / "cascade.json").write_text(json.dumps(payload), encoding="utf-8")
    write_manifest(art)
    result = verify_artifact(art)
    assert result.bad_files["cascade.json"].startswith("edited: ")
    assert "terminal.accuracy.value" in result.bad_files["cascade.json"]

    # an intervention's result edited by hand is found too (it is recomputed from its plan)
    shutil.rmtree(art)
    shutil.copytree(clean, art)
    nested = art / "intervention" / "nested.json"
    payload = _json(nested)
    payload["recovered_rate"]["value"] = 1.0
    nested.write_text(json.dumps(payload), encoding="utf-8")
    write_manifest(art)
    result = verify_artifact(art)
    assert result.bad_files["intervention/nested.json"].startswith("edited: ")


def test_an_audit_the_responses_moved_on_from_is_flagged_not_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    df, _ = make_run(run)  # writes audit.parquet for these responses
    assert _json(run / "audit.json")[RESPONSES_DIGEST_KEY] == responses_digest(run)
    # a second model arrives after the audit (an import): its transitions are not audited
    other = df.copy()
    other["model"] = "second"
    other.loc[other["config_label"] == "f32", "correct"] = 0.0
    other.loc[other["config_label"] == "f32", "answer"] = "B"
    _, meta = read_run(run)
    write_run(run, pd.concat([df, other], ignore_index=True), meta)
    capsys.readouterr()
    assert main(["report", str(run), "--bootstrap", "20"]) == 0
    printed = capsys.readouterr().out
    assert "audit.parquet: stale" in printed and "itemscale audit RUN" in printed
    art = run / "artifact"
    assert "audit.parquet: stale" in (art / "report.html").read_text(encoding="utf-8")
    result = verify_artifact(art)
    assert result.ok, result.problems
    assert any(n.startswith("audit.parquet: stale, flagged in the report") for n in result.notes)
    # a byte changed in the flagged file still fails: the manifest check is not excused
    with (art / "audit.json").open("a", encoding="utf-8") as fh:
        fh.write(" ")
    assert not verify_artifact(art).ok
    # the audit redone: nothing stale any more
    assert main(["audit", str(run)]) == 0
    assert main(["report", str(run), "--bootstrap", "20"]) == 0
    assert _json(art / "provenance.json")[DERIVED_KEY] == {}
    assert verify_artifact(art).notes == []


#: (file, the block that holds the resample count, its schema version before `bootstrap`, now)
_OLD_LAYOUTS = (
    ("measures.json", ("bootstrap",), 1, 4),
    ("cascade.json", ("settings",), 3, 4),
    ("intervention/nested.json", ("bootstrap",), 1, 2),
    ("provenance.json", ("measures",), 1, 2),  # last: it holds the others' sha256
)


def _as_written_before_the_rename(art: Path) -> None:
    """The artifact's files as the release before the rename wrote them: `n_boot` for
    `bootstrap` and each file's older schema version, the manifest written again to match."""
    from itemscale.report._crosscheck import canonical_json

    for name, keys, version, now in _OLD_LAYOUTS:
        payload = _json(art / name)
        assert payload["schema_version"] == now, name
        payload["schema_version"] = version
        block = payload
        for key in keys:
            block = block[key]
        block["n_boot"] = block.pop("bootstrap")
        if name == "provenance.json":  # the copied files as they were then
            copied = payload["inputs"]["files"]
            for rel in copied:
                copied[rel] = sha256_file(art / rel)
        (art / name).write_text(canonical_json(payload), encoding="utf-8")
    write_manifest(art)


@pytest.mark.slow
def test_an_artifact_of_the_layout_before_the_rename_still_verifies(
    workflow4: Path, tmp_path: Path
) -> None:
    """`bootstrap` is the key every file is written with now; an artifact written with `n_boot`
    (and the schema versions of then) is read alike: `verify` recomputes every file of it and
    finds nothing, while an edit to the old key is still found."""
    run = workflow4
    assert main(["report", str(run), "--bootstrap", "50"]) == 0
    art = run / "artifact"
    assert verify_artifact(art).ok
    for name, keys, _, _ in _OLD_LAYOUTS:
        block = _json(art / name)
        for key in keys:
            block = block[key]
        assert block["bootstrap"] == 50 and "n_boot" not in block, name
    old = tmp_path / "old"
    shutil.copytree(art, old)
    _as_written_before_the_rename(old)
    result = verify_artifact(old)
    assert result.ok, result.problems
    assert {"measures", "cascade", "intervention", "provenance", "report"} <= set(result.checks)
    # the old key is read, not skipped: a changed count is found in the old layout too
    payload = _json(old / "measures.json")
    payload["bootstrap"]["n_boot"] = 49
    (old / "measures.json").write_text(json.dumps(payload), encoding="utf-8")
    write_manifest(old)
    assert "measures.json" in verify_artifact(old).bad_files
