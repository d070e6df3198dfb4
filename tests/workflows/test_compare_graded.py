"""`compare`'s graded "same input" verdict (identical / within a rerun / different) and its stack
diff, end to end through the command.

- Two sweeps whose sessions record different transformers versions and whose answers differ
  beyond a rerun. A second transformers cannot be installed beside the first, so the second
  sweep's stack is the test-only `ITEMSCALE_TEST_STACK` override (the session records it as
  overridden) and its answers come from the pixel backend with some letters moved (what another
  library version does to a model's numerics); everything else is the real sweep, store and
  export.
- Generated lmms-eval logs shaped like Video-MME's (900 videos x 3 questions, the fields of
  lmms-eval's `videomme` samples): a pair differing on 5 of 2,700 answers with nothing recorded
  to tell the inputs apart is the same input within a rerun; a pair differing on 15 of 80 is
  not.
"""

from __future__ import annotations

import dataclasses
import json
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from _support.sweep import PixelBackend, write_benchmark, write_protocol
from itemscale import compare
from itemscale.cli import main
from itemscale.collect.models import VideoRequest, VideoResponse
from itemscale.collect.protocol import ModelEntry, load_protocol
from itemscale.collect.sweep import STACK_OVERRIDE_ENV, run_sweep
from itemscale.workflows import WorkflowError

#: the items whose letter the "other stack" moves
MOVED = {"v0-q0", "v1-q1", "v2-q0", "v3-q1", "v4-q0"}


class MovedPixelBackend(PixelBackend):
    """The pixel backend with the letters of `MOVED` items shifted by one option."""

    def generate(self, requests: Any) -> list[VideoResponse]:
        out = []
        for request, response in zip(requests, super().generate(requests), strict=True):
            assert isinstance(request, VideoRequest)
            if request.item.item_id in MOVED and response.option_probs:
                letters = request.item.option_letters
                was = max(response.option_probs, key=lambda x: response.option_probs[x])
                moved = letters[(letters.index(was) + 1) % len(letters)]
                probs = {x: (0.7 if x == moved else 0.1) for x in letters}
                response = dataclasses.replace(
                    response, raw_text=f"The answer is {moved}.", option_probs=probs
                )
            out.append(response)
        return out


def moved_factory(entry: ModelEntry, device: str, batch_size: int) -> PixelBackend:
    return MovedPixelBackend(None, 0.0, name=entry.name)


def _pixel_factory(entry: ModelEntry, device: str, batch_size: int) -> PixelBackend:
    return PixelBackend(None, 0.0, name=entry.name)


def test_two_stacks_same_input_answers_beyond_a_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_benchmark(tmp_path / "suite", 10)
    runs = {}
    for name, factory, stack in (
        ("a", _pixel_factory, None),
        ("b", moved_factory, {"transformers": "5.17.0"}),
    ):
        if stack is None:
            monkeypatch.delenv(STACK_OVERRIDE_ENV, raising=False)
        else:
            monkeypatch.setenv(STACK_OVERRIDE_ENV, json.dumps(stack))
        proto = write_protocol(
            tmp_path / f"{name}.toml",
            suite,
            frames=(4,),
            output=tmp_path / name,
            extra="text_only = false",
        )
        run_sweep(load_protocol(proto), backend_factory=factory, progress=False)
        runs[name] = tmp_path / name
    real = metadata.version("transformers")
    for name, version in (("a", real), ("b", "5.17.0")):
        recorded = json.loads((runs[name] / "run.json").read_text())["sessions"]
        assert recorded[0]["stack"]["packages"]["transformers"] == version

    out = tmp_path / "c.json"
    capsys.readouterr()
    assert main(["compare", str(runs["a"]), str(runs["b"]), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    result = json.loads(out.read_text())
    fields = {f["field"]: f for f in result["provenance"]}
    assert (fields["transformers"]["a"], fields["transformers"]["b"]) == (real, "5.17.0")
    assert fields["transformers"]["status"] == "differs"
    assert fields["tokenizers"]["status"] == "same"
    sentences = {v["key"]: v["sentence"] for v in result["verdicts"]}
    same = sentences["same_input"]
    # no repeat, no rerun, no floor stated: 5 differing answers of 20 cannot be judged
    assert same.startswith(
        "Same input; answers differ, whether beyond a rerun cannot be told (5 of 20 answers "
        "differ; no rerun floor is measured"
    )
    assert f"transformers {real} vs 5.17.0" in same
    assert "software stack that computed the answers differs" in same
    assert f"transformers: A {real} vs B 5.17.0" in sentences["setup"]
    assert result["same_input"]["answers"] == "cannot_tell"
    assert (result["same_input"]["differ"], result["same_input"]["answered"]) == (5, 20)
    assert result["rerun_floor"] is None
    assert "rerun floor:" not in printed
    # a floor the user states (0.3%: a rerun moves at most 1 of 20) judges them: beyond it
    capsys.readouterr()
    argv = ["compare", str(runs["a"]), str(runs["b"]), "--rerun-floor", "0.3"]
    assert main([*argv, "--json", str(tmp_path / "s.json")]) == 0
    printed = capsys.readouterr().out
    stated = json.loads((tmp_path / "s.json").read_text())
    same = next(v["sentence"] for v in stated["verdicts"] if v["key"] == "same_input")
    assert same.startswith(
        "Same input; answers differ beyond a rerun (5 of 20 answers differ, beyond what a "
        "rerun moves (at most 1 at the stated floor, 0.30% per answer"
    )
    assert stated["same_input"]["answers"] == "different"
    assert stated["rerun_floor"]["stated"] is True
    assert "  rerun floor: stated, 0.3% per answer (--rerun-floor 0.3)" in printed


def _videomme_sample(doc: int, qid: str, target: str, letter: str) -> dict[str, Any]:
    return {
        "doc_id": doc,
        "target": target,
        "filtered_resps": [f"{letter}."],
        "doc_hash": "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b",
        "videomme_perception_score": {
            "question_id": qid,
            "duration": ("short", "medium", "long")[doc % 3],
            "category": "Knowledge",
            "sub_category": "Humanity & History",
            "task_category": "Counting Problem",
            "pred_answer": letter,
            "answer": target,
        },
        "input": f"Question {qid}?\nA. one\nB. two\nC. three\nD. four\nThe best answer is:",
    }


def _lmms_eval_log(
    folder: Path, stamp: str, answers: list[str], targets: list[str], transformers: str
) -> Path:
    """One lmms-eval run folder: a samples file and its results.json (frames asked: 16)."""
    folder.mkdir(parents=True, exist_ok=True)
    samples = [
        _videomme_sample(i, f"{i // 3 + 1:03d}-{i % 3 + 1}", targets[i], answers[i])
        for i in range(len(answers))
    ]
    (folder / f"{stamp}_samples_videomme.jsonl").write_text(
        "".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8"
    )
    results = {
        "results": {"videomme": {"videomme_perception_score,none": 60.0}},
        "configs": {"videomme": {"generation_kwargs": {"max_new_tokens": 16}}},
        "config": {"model": "llava_vid", "model_args": "pretrained=x/V7B,max_frames_num=16"},
        "git_hash": "55057fb",
        "transformers_version": transformers,
        "model_name": "x/V7B",
    }
    (folder / f"{stamp}_results.json").write_text(json.dumps(results), encoding="utf-8")
    return folder


def _imported_pair(tmp_path: Path, n: int, differ: int) -> tuple[Path, Path]:
    targets = ["ABCD"[(7 * i) % 4] for i in range(n)]
    answers = ["ABCD"[(3 * i) % 4] for i in range(n)]
    other = list(answers)
    for i in range(differ):
        j = (i * 97) % n
        other[j] = "ABCD"[("ABCD".index(answers[j]) + 1) % 4]
    assert sum(a != b for a, b in zip(answers, other, strict=True)) == differ
    runs = []
    for name, given, version in (("uniform16", answers, "4.57.1"), ("picked16", other, "4.51.3")):
        log = _lmms_eval_log(tmp_path / f"log-{name}", "20260101_000000", given, targets, version)
        run = tmp_path / name
        argv = ["import", "lmms-eval", "--config", f"{name}={log}", "-o", str(run)]
        assert main(argv) == 0
        runs.append(run)
    return runs[0], runs[1]


def test_lmms_eval_pair_without_a_floor_cannot_tell(tmp_path: Path) -> None:
    """Done when (issue: same-input verdicts from evidence): a pair of lmms-eval runs over
    2,700 Video-MME-shaped questions differing on 7 answers, nothing recorded telling the inputs
    apart and no repeats: no verdict grades it within a rerun; with a stated floor of 0.3% it is
    within that floor."""
    a, b = _imported_pair(tmp_path, 2700, 7)
    r = compare(a, b, bootstrap=0)
    assert r.counts.matched == 2700 and r.same_input is None and r.rerun_floor is None
    assert r.answer_agreement is not None
    assert (r.answer_agreement.differ, r.answer_agreement.answered) == (7, 2700)
    assert r.answer_agreement.answers == "cannot_tell" and r.input_scale is None
    sentence = next(v.sentence for v in r.verdicts if v.key == "same_input")
    assert sentence.startswith(
        "Not identical: 7 of 2700 answers differ; no "
        "rerun floor is measured, so whether a rerun moves that many cannot be told (measure "
        "one with repeats of one configuration"
    )
    assert all("within" not in v.sentence and "a rerun:" not in v.sentence for v in r.verdicts)
    stated = compare(a, b, bootstrap=0, rerun_floor=0.3)
    assert stated.same_input is not None and stated.same_input.basis == "rerun_answers"
    assert (stated.same_input.differ, stated.same_input.rerun_bound) == (7, 13)
    sentence = next(v.sentence for v in stated.verdicts if v.key == "same_input")
    assert sentence.startswith(
        "Same input within the stated rerun floor: 7 of 2700 answers differ; a rerun moves at "
        "most 13 (floor 0.30% per answer, stated: 0.3% per answer (--rerun-floor 0.3))"
    )


def test_compare_command_prints_the_counts_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = _imported_pair(tmp_path, 2700, 7)
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "--bootstrap", "0"]) == 0
    printed = capsys.readouterr().out
    assert "Not identical: 7 of 2700 answers differ" in printed
    assert "within" not in printed.split("verdict:")[1].split("Set-up")[0]
    assert main(["compare", str(a), str(b), "--bootstrap", "0", "--rerun-floor", "0.3"]) == 0
    printed = capsys.readouterr().out
    assert "Same input within the stated rerun floor: 7 of 2700 answers differ" in printed
    assert main(["compare", str(a), str(b), "--rerun-floor", "-1"]) == 2
    assert "--rerun-floor -1.0: give a percent of answers in [0, 100]" in capsys.readouterr().err


def test_lmms_eval_pair_beyond_a_rerun(tmp_path: Path) -> None:
    a, b = _imported_pair(tmp_path, 80, 15)
    r = compare(a, b, bootstrap=0, rerun_floor=0.26)
    assert r.same_input is None
    sentence = next(v.sentence for v in r.verdicts if v.key == "same_input")
    assert sentence.startswith("The two sides do not look like the same input")
    assert "15 of 80 answers differ, beyond what a rerun moves (at most 1 at the stated" in sentence
    # the package version each results.json states is the import's part of the stack
    fields = {f.field: f for f in r.provenance}
    assert (fields["transformers"].a, fields["transformers"].b) == ("4.57.1", "4.51.3")
    assert fields["transformers"].status == "differs"
    assert fields["tool version"].a == "55057fb"  # lmms-eval's git_hash


def _moved(answers: list[str], differ: int, step: int = 97) -> list[str]:
    other = list(answers)
    for i in range(differ):
        j = (i * step + 13) % len(answers)
        other[j] = "ABCD"[("ABCD".index(answers[j]) + 2) % 4]
    return other


def test_a_rerun_imported_with_rerun_of_measures_the_floor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`import lmms-eval --rerun-of LABEL --config LABEL2=DIR` stores the second execution as
    reruns of LABEL; compare grades against the floor they measure, labelled measured."""
    n = 2700
    a, b = _imported_pair(tmp_path, n, 7)
    targets = ["ABCD"[(7 * i) % 4] for i in range(n)]
    answers = ["ABCD"[(3 * i) % 4] for i in range(n)]
    again = _lmms_eval_log(
        tmp_path / "log-again", "20260102_000000", _moved(answers, 5, 101), targets, "4.57.1"
    )
    argv = ["import", "lmms-eval", "--rerun-of", "uniform16", "--config", f"again={again}"]
    capsys.readouterr()
    assert main([*argv, "-o", str(a)]) == 0
    printed = capsys.readouterr().out
    assert (
        "again: 2700 rows stored as a rerun of uniform16 (repeats from 1000, marked rerun_of): "
        "no measure counts them; same-input verdicts are graded against the floor they "
        "measure; rerun floor measured, 5 of 2700 answers moved between the run's cells and "
        "their reruns (0.19% per answer, 95% CI 0.06% to 0.43%)"
    ) in printed
    from itemscale.core.responses import read_run

    table, provenance = read_run(a)
    reruns = table[table["rerun_of"].notna()]
    assert len(reruns) == n and set(reruns["repeat"]) == {1000}
    assert set(reruns["config_label"]) == {"uniform16"}
    imports = provenance["imports"]
    assert isinstance(imports, list) and imports[-1]["options"]["rerun_of"] == "uniform16"
    # a second import of the same file adds nothing
    assert main([*argv, "-o", str(a)]) == 0
    assert len(read_run(a)[0]) == 2 * n
    r = compare(a, b, bootstrap=0)
    assert r.rerun_floor is not None and r.rerun_floor.measured
    assert (r.rerun_floor.moved, r.rerun_floor.answers) == (5, 2700)
    assert r.counts.matched == n and r.counts.only_a == 0  # the reruns are no side's rows
    assert r.same_input is not None and r.same_input.basis == "rerun_answers"
    sentence = next(v.sentence for v in r.verdicts if v.key == "same_input")
    assert sentence.startswith(
        "Same input within the measured rerun floor: 7 of 2700 answers differ; a rerun moves "
        "at most 9 (floor 0.19% per answer, measured: 5 of 2700 answers moved between A's "
        "cells and their reruns)"
    )
    # analyze prints the floor per model
    capsys.readouterr()
    assert main(["analyze", str(a), "--bootstrap", "0"]) == 0
    assert "  rerun floor: measured, 5 of 2700 answers moved between the run's cells and" in (
        capsys.readouterr().out
    )


def test_a_rerun_named_on_the_command_line(tmp_path: Path) -> None:
    """`compare A B --rerun RUN`: a run folder holding a second execution of A's configuration;
    without any evidence of its own the pair is graded against it."""
    n = 2700
    a, b = _imported_pair(tmp_path, n, 7)
    targets = ["ABCD"[(7 * i) % 4] for i in range(n)]
    answers = ["ABCD"[(3 * i) % 4] for i in range(n)]
    again = _lmms_eval_log(
        tmp_path / "log-again", "20260102_000000", _moved(answers, 30, 89), targets, "4.57.1"
    )
    rerun = tmp_path / "rerun"
    assert main(["import", "lmms-eval", "--config", f"uniform16={again}", "-o", str(rerun)]) == 0
    r = compare(a, b, bootstrap=0, rerun=rerun)
    assert r.rerun_floor is not None and (r.rerun_floor.moved, r.rerun_floor.answers) == (30, n)
    assert r.rerun_floor.source == (
        f"measured: 30 of 2700 answers moved between side A ({a}, uniform16) and its rerun "
        f"({rerun}, uniform16)"
    )
    assert r.same_input is not None and r.same_input.answers == "rerun"
    with pytest.raises(WorkflowError, match="not a run folder, nor a configuration label"):
        compare(a, b, bootstrap=0, rerun="nothing-here")


def test_rerun_of_a_configuration_of_the_same_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    n = 300
    targets = ["ABCD"[(7 * i) % 4] for i in range(n)]
    answers = ["ABCD"[(3 * i) % 4] for i in range(n)]
    first = _lmms_eval_log(tmp_path / "l1", "20260101_000000", answers, targets, "4.57.1")
    again = _lmms_eval_log(
        tmp_path / "l2", "20260102_000000", _moved(answers, 4), targets, "4.57.1"
    )
    run = tmp_path / "run"
    argv = ["import", "lmms-eval", "--config", f"u16={first}", "--config", f"u16b={again}"]
    assert main([*argv, "--rerun-of", "u16", "-o", str(run)]) == 0
    from itemscale.core.responses import read_run

    table, _ = read_run(run)
    assert set(table["config_label"]) == {"u16"}
    assert (table["rerun_of"].notna().sum(), len(table)) == (n, 2 * n)
    capsys.readouterr()
    assert main(["analyze", str(run), "--bootstrap", "0"]) == 0
    out = capsys.readouterr().out
    assert "rerun floor: measured, 4 of 300 answers moved between the run's cells and their" in out
    # a label no import and no run holds is refused, naming what the run holds
    assert (
        main(
            [
                "import",
                "lmms-eval",
                "--config",
                f"x={again}",
                "--rerun-of",
                "nosuch",
                "-o",
                str(run),
            ]
        )
        == 2
    )
    assert "--rerun-of nosuch: model 'V7B' has no configuration 'nosuch'" in capsys.readouterr().err
