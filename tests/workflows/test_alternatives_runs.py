"""Nine lmms-eval runs of one model at 16 frames (a frame-0 control, a uniform run, selectors,
one log copied under four names: `_support.alternatives`), imported in one call with
`--config LABEL=DIR`: `analyze`, `compare` and the report treat them as alternatives at one
budget, never as a budget axis, and name the copied log as one file."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from _support.alternatives import COPIES, LABELS, write_alternative_runs
from itemscale.cli import main

MODEL = "LLaVA-NeXT-Video-7B-Qwen2"
#: a console line (or report sentence) of a measure along an order of budgets
BUDGET_LINES = re.compile(
    r"^\s*(best fixed|harmful rate|beneficial rate|terminal regression|adjacent flips|"
    r"additive model|oracle headroom)\b",
    re.MULTILINE,
)


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    root = tmp_path_factory.mktemp("alternatives")
    folders = write_alternative_runs(root / "logs")
    argv = ["import", "lmms-eval"]
    for label in LABELS:
        argv += ["--config", f"{label}={folders[label]}"]
    assert main([*argv, "-o", str(root / "run")]) == 0
    return root / "run", folders


def _right(folder: Path) -> dict[str, bool]:
    """Each question right or wrong, read from the samples file by hand."""
    (samples,) = folder.glob("*_samples_*.jsonl")
    out = {}
    for line in samples.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        qid = d["videomme_perception_score"]["question_id"]
        out[qid] = d["filtered_resps"][0].rstrip(".") == d["target"]
    return out


def _sha256(folder: Path) -> str:
    (samples,) = folder.glob("*_samples_*.jsonl")
    return hashlib.sha256(samples.read_bytes()).hexdigest()


def test_analyze_shows_alternatives_against_the_control(
    imported: tuple[Path, dict[str, Path]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, folders = imported
    capsys.readouterr()
    out_json = tmp_path / "m.json"
    argv = ["analyze", str(run), "--bootstrap", "20", "--control", "zero", "--json", str(out_json)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert not BUDGET_LINES.search(text), BUDGET_LINES.search(text)
    assert "9 configurations ask one budget (16 frames)" in text
    assert "against the control zero" in text
    assert "detected as alternatives" in text and "--series NAME" in text
    entry = json.loads(out_json.read_text())["models"][MODEL]
    assert entry["kind"] == "alternatives" and entry["control"] == "zero"
    assert entry["configs"] == list(LABELS)  # as given, not ordered as budgets
    zero, aks8 = _right(folders["zero"]), _right(folders["aks8"])
    pair = entry["pairs"]["zero|aks8"]
    assert pair["n_fixed"] == sum(aks8[q] and not zero[q] for q in zero)
    assert pair["n_broken"] == sum(zero[q] and not aks8[q] for q in zero)
    assert pair["differ"] == 240  # the generator moved 240 answers
    # the copies are named as one file, with its sha256
    digest = _sha256(folders[COPIES[0]])
    for copy in COPIES[1:]:
        assert f"{copy} is the same log file as {COPIES[0]}, sha256 {digest}" in text


def test_compare_names_a_copied_pair_as_one_file(
    imported: tuple[Path, dict[str, Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    run, folders = imported
    capsys.readouterr()
    argv = ["compare", str(run), "--config", COPIES[0], "--config", COPIES[1], "--bootstrap", "0"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert f"B is the same log file as A, sha256 {_sha256(folders[COPIES[0]])}" in text
    assert "was the setting applied?" not in text


def test_the_report_does_not_call_alternatives_budgets(
    imported: tuple[Path, dict[str, Path]], tmp_path: Path
) -> None:
    run, _ = imported
    out = tmp_path / "artifact"
    argv = ["report", str(run), "--out", str(out), "--bootstrap", "20", "--control", "zero"]
    assert main(argv) == 0
    html = (out / "report.html").read_text(encoding="utf-8")
    headline = re.search(r'<p class="headline">(.*?)</p>', html, re.DOTALL)
    assert headline is not None
    first = headline.group(1).split(". ")[0]
    assert "9 configurations that all ask 16 frames are alternatives, not budgets" in first
    assert "at some budget" not in first and "goes from" not in first
    assert "visual budget" not in html  # no figure has a budget axis
    assert "alternatives-accuracy" in html and "Same input, every pair" in html
    assert "is the same log file as dbfp1_16max" in html
    assert main(["verify", str(out)]) == 0  # recomputed with the recorded --control
