"""`itemscale import lmms-eval` takes what the source says: the task results.json scores (not
a suffix of the samples file's name), one series per call (`--series`), each copied log named
as one file, and the question each sample asked (the report's item explorer shows it).

Runs are Video-MME logs in the shape of the real ones (`_support.videomme_logs`), all at
`max_frames_num=16`, as frame selectors log them; every expected count is computed here from the
answers the test wrote."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from _support.videomme_logs import answers_right_at, videomme_questions, write_videomme_log
from itemscale.cli import cmd_analyze, main
from itemscale.collect.importers import ImportInputError, run_import
from itemscale.collect.items import read_items_jsonl
from itemscale.core.responses import read_run

N = 60


@pytest.fixture(autouse=True)
def _analyze_prints_to_a_live_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """cmd_analyze.print_summary binds `sys.stdout` as a default argument at import time; under
    pytest's capture that stream is closed by a later test. Give it a live one."""
    monkeypatch.setattr(cmd_analyze.print_summary, "__defaults__", (io.StringIO(),))


def _right(seed: int, p: float = 0.6) -> np.ndarray:
    return np.random.default_rng(seed).random(N) < p


def test_a_suffixed_samples_file_is_the_task_its_results_json_scores(tmp_path: Path) -> None:
    qs = videomme_questions(N)
    zero = write_videomme_log(tmp_path / "zero", qs, answers_right_at(qs, _right(0)))
    uniform = write_videomme_log(
        tmp_path / "uniform",
        qs,
        answers_right_at(qs, _right(1)),
        stamp="20251107_101010",
        task_in_name="videomme_aks",
    )
    assert uniform.name.endswith("_samples_videomme_aks.jsonl")
    run = tmp_path / "run"
    configs = [f"zero={zero.parent}", f"uniform={uniform.parent}"]
    summary = run_import("lmms-eval", configs=configs, run_dir=run)

    # the two runs asked the same prompts (0 of N inputs differ): compare lists no prompt or
    # task difference between them
    out = tmp_path / "compare.json"
    argv = ["compare", str(run), "--config", "zero", "--config", "uniform", "--bootstrap", "50"]
    assert main([*argv, "--json", str(out)]) == 0
    fields = {f["field"]: f for f in json.loads(out.read_text())["provenance"]}
    for name in ("prompt template", "task", "task version", "benchmark digest"):
        assert fields[name]["status"] == "same", fields[name]
    assert fields["task"]["a"] == "videomme"

    df, prov = read_run(run)
    (imp,) = prov["imports"]
    by_label = {s["config_label"]: s for s in imp["sources"]}
    assert {k: (s["task"], s["task_from"]) for k, s in by_label.items()} == {
        "zero": ("videomme", "results.json"),
        "uniform": ("videomme", "results.json"),
    }
    # results.json's entry for the task is found for both: the model class's post-prompt and
    # lmms-eval's own score (one score note per file)
    assert all(s["prompt"]["post_prompt"] == "The best answer is:" for s in by_label.values())
    assert all(s["reported"] is not None for s in by_label.values())
    assert sum("lmms-eval reported videomme_perception_score" in n for n in summary.notes) == 2
    (said,) = [n for n in summary.notes if "the file name says videomme_aks" in n]
    assert "task videomme as results.json names it" in said
    assert {json.loads(a)["task"] for a in df["attributes"]} == {"videomme"}


def test_a_file_results_json_does_not_name_keeps_its_file_name_task_and_says_so(
    tmp_path: Path,
) -> None:
    qs = videomme_questions(6)
    log = write_videomme_log(tmp_path / "a", qs, answers_right_at(qs, np.ones(6, dtype=bool)))
    results = log.with_name("20251106_202956_results.json")
    data = json.loads(results.read_text())
    # two tasks, neither named like the file, neither scored by the file's metric
    data["results"] = {"mlvu_dev": {"acc,none": 0.5}, "mvbench": {"acc,none": 0.5}}
    data["configs"] = {"mlvu_dev": {}, "mvbench": {}}
    results.write_text(json.dumps(data))
    renamed = log.rename(log.with_name("20251106_202956_samples_videomme_v2.jsonl"))
    summary = run_import("lmms-eval", [str(renamed)], run_dir=tmp_path / "run")
    _, prov = read_run(tmp_path / "run")
    (source,) = prov["imports"][0]["sources"]
    assert (source["task"], source["task_from"]) == ("videomme_v2", "file name")
    assert any(
        "task videomme_v2 from the file name (results.json scores mlvu_dev, mvbench)" in n
        for n in summary.notes
    )


def _selector_runs(tmp_path: Path) -> dict[str, tuple[Path, np.ndarray]]:
    """A frame-0 control and two selectors that each flip a seeded set of its answers."""
    qs = videomme_questions(N)
    control = _right(7)
    out = {}
    for n, (name, flips) in enumerate((("zero", 0), ("aks", 9), ("dbfp", 12))):
        right = control.copy()
        if flips:
            idx = np.random.default_rng(n).choice(N, flips, replace=False)
            right[idx] = ~right[idx]
        folder = tmp_path / "logs" / name
        write_videomme_log(folder, qs, answers_right_at(qs, right), stamp=f"2025110{n}_120000")
        out[name] = (folder, right)
    return out


def test_one_call_per_selector_with_series_gives_the_selector_record_against_the_control(
    tmp_path: Path,
) -> None:
    runs = _selector_runs(tmp_path)
    run = tmp_path / "run"
    for name, series in (("zero", "control"), ("aks", "selection:aks"), ("dbfp", "selection:dbfp")):
        folder, _ = runs[name]
        argv = ["import", "lmms-eval", "--series", series, "--config", f"16f={folder}"]
        assert main([*argv, "-o", str(run)]) == 0
    df, prov = read_run(run)
    assert set(df["series"]) == {"control", "selection:aks", "selection:dbfp"}
    assert set(df["config_label"]) == {"16f"}  # one label, three configurations (one per series)
    assert df["config_id"].nunique() == 3
    assert [s["series"] for i in prov["imports"] for s in i["sources"]] == [
        "control",
        "selection:aks",
        "selection:dbfp",
    ]
    assert [i["options"]["series"] for i in prov["imports"]] == [
        "control",
        "selection:aks",
        "selection:dbfp",
    ]

    measures = tmp_path / "m.json"
    assert main(["analyze", str(run), "--bootstrap", "30", "--json", str(measures)]) == 0
    (block,) = json.loads(measures.read_text())["models"].values()
    # three series of one configuration each at one budget: alternatives named by series, the
    # one series that is not a selector's the control, each selector's record against it
    assert block["kind"] == "alternatives"
    assert block["members"] == "series"
    assert (block["control"], block["control_from"]) == ("control", "series")
    _, control = runs["zero"]
    for name in ("aks", "dbfp"):
        _, right = runs[name]
        record = block["pairs"][f"control|selection:{name}"]
        assert (record["a"], record["b"]) == ("control", f"selection:{name}")
        assert record["n_fixed"] == int((right & ~control).sum())
        assert record["n_broken"] == int((control & ~right).sum())
        assert block["accuracy"][f"selection:{name}"]["value"] == pytest.approx(right.mean())
        assert record["accuracy_difference"]["value"] == pytest.approx(
            right.mean() - control.mean()
        )
    assert block["accuracy"]["control"]["value"] == pytest.approx(control.mean())


def test_series_needs_a_name(tmp_path: Path) -> None:
    runs = _selector_runs(tmp_path)
    with pytest.raises(ImportInputError, match="--series: give the series a name"):
        run_import("lmms-eval", [str(runs["zero"][0])], series=" ", run_dir=tmp_path / "r")


def test_a_copied_log_is_named_as_one_file_in_one_call_and_across_calls(tmp_path: Path) -> None:
    runs = _selector_runs(tmp_path)
    for copy in ("dbfp_8max", "dbfp_td2"):
        shutil.copytree(runs["dbfp"][0], tmp_path / "logs" / copy)
    logs = tmp_path / "logs"
    one = tmp_path / "one"
    labels = ("zero", "dbfp", "dbfp_8max", "dbfp_td2")
    summary = run_import("lmms-eval", configs=[f"{x}={logs / x}" for x in labels], run_dir=one)
    _, prov = read_run(one)
    digests = {s["config_label"]: s["sha256"] for s in prov["imports"][0]["sources"]}
    assert digests["dbfp"] == digests["dbfp_8max"] == digests["dbfp_td2"] != digests["zero"]
    (warning,) = [n for n in summary.notes if "the same log file" in n]
    assert warning.startswith(
        f"warning: dbfp_8max, dbfp_td2 are the same log file as dbfp (sha256 {digests['dbfp'][:12]}"
    )
    # one call per selector: the copy is named against the earlier import's record
    two = tmp_path / "two"
    run_import("lmms-eval", configs=[f"16f={logs / 'dbfp'}"], series="selection:dbfp", run_dir=two)
    again = run_import(
        "lmms-eval", configs=[f"16f={logs / 'dbfp_8max'}"], series="selection:8max", run_dir=two
    )
    (warning,) = [n for n in again.notes if "the same log file" in n]
    assert "16f of series selection:8max is the same log file as 16f of series selection:dbfp" in (
        warning
    )
    # importing the same file at the same configuration again is a re-import, not a copy
    same = run_import(
        "lmms-eval", configs=[f"16f={logs / 'dbfp'}"], series="selection:dbfp", run_dir=two
    )
    assert same.rows_added == 0
    assert not [n for n in same.notes if "the same log file" in n]


def test_runs_at_one_budget_are_said_to_be_alternatives(tmp_path: Path) -> None:
    runs = _selector_runs(tmp_path)
    configs = [f"{name}={folder}" for name, (folder, _) in runs.items()]
    summary = run_import("lmms-eval", configs=configs, run_dir=tmp_path / "run")
    (note,) = [n for n in summary.notes if "all ask one budget" in n]
    assert note.startswith("zero, aks, dbfp all ask one budget, 16 frames: alternatives")
    assert "--series NAME" in note


def test_each_samples_question_reaches_the_item_explorer(tmp_path: Path) -> None:
    runs = _selector_runs(tmp_path)
    run = tmp_path / "run"
    configs = [f"{name}={folder}" for name, (folder, _) in runs.items()]
    run_import("lmms-eval", configs=configs, run_dir=run)
    qs = videomme_questions(N)
    items = {i.item_id: i for i in read_items_jsonl(run / "items.jsonl")}
    assert len(items) == N
    first = items["001-1"]
    # the input without the instruction line, the option lines and the post-prompt every
    # sample shares: the question as Video-MME publishes it
    assert first.question == qs.loc[0, "question"]
    assert first.options == tuple(o.split(". ", 1)[1] for o in qs.loc[0, "options"])
    assert first.answer == qs.loc[0, "answer"] and first.video_id == "001"

    from itemscale.report import build_artifact
    from itemscale.report._build import load_report_inputs
    from itemscale.report._explorer import explorer_payload

    # the report reads the questions from the artifact's copy of the run's items.jsonl
    build_artifact(run, bootstrap=20)
    inputs = load_report_inputs(run / "artifact")
    payload = explorer_payload(
        inputs.trajectories,
        inputs.responses,
        {i: {"question": q, "options": ()} for i, q in inputs.questions.items()},
    )
    f = {name: n for n, name in enumerate(payload["fields"])}
    shown = {row[f["item"]]: row[f["question"]] for row in payload["rows"]}
    assert shown["001-1"] == qs.loc[0, "question"]
    assert all(shown[q] for q in qs["question_id"])
    assert qs.loc[0, "question"] in (run / "artifact" / "report.html").read_text(encoding="utf-8")
