"""`itemscale import lmms-eval` on the real fixture runs (older format) and on files built in
the shape of the current format, with numbers hand-computed from the raw JSONL."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from itemscale.cli import cmd_analyze, main
from itemscale.collect.importers import ImportInputError, label_config_id
from itemscale.collect.importers._common import ImportOptions, ImportRecord, SourceRecord
from itemscale.collect.importers._lmms_eval import (
    gold_letter,
    options_from_prompt,
    parse_config_arg,
    parse_model_args,
    run_lmms_eval_import,
)
from itemscale.collect.protocol import Configuration
from itemscale.core.responses import NOANSWER, read_run

UNIFORM = "videomme-uniform16/20251106_202956_samples_videomme.jsonl"
DBFP = "videomme-dbfp8/20251105_220439_samples_videomme.jsonl"


@pytest.fixture(autouse=True)
def _analyze_prints_to_a_live_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """cmd_analyze.print_summary binds `sys.stdout` as a default argument at import time; under
    pytest's capture that stream is closed by a later test. Give it a live one."""
    monkeypatch.setattr(cmd_analyze.print_summary, "__defaults__", (io.StringIO(),))


def hand_correct(path: Path) -> dict[str, int]:
    """From the raw JSONL, without the importer: every response in these files is a bare
    letter with an optional full stop, so the letter is the response minus the stop."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        letter = d["filtered_resps"][0].strip().rstrip(".")
        assert letter in "ABCD"
        out[d["videomme_perception_score"]["question_id"]] = int(letter == d["target"])
    return out


def test_fixture_runs_import_and_analyze_match_hand_computation(
    fixtures_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    le = fixtures_dir / "lmms-eval"
    run = tmp_path / "run"
    argv = ["import", "lmms-eval", "--config", f"uniform16={le / UNIFORM}"]
    argv += ["--config", f"dbfp8:8={le / DBFP}", "-o", str(run)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "80 added" in out and "matched grid: 40 items" in out

    uni, dbf = hand_correct(le / UNIFORM), hand_correct(le / DBFP)
    assert len(uni) == len(dbf) == 40
    acc_uni, acc_dbf = sum(uni.values()) / 40, sum(dbf.values()) / 40
    right_then_wrong = sum(1 for q in uni if uni[q] == 1 and dbf[q] == 0)
    wrong_then_right = sum(1 for q in uni if uni[q] == 0 and dbf[q] == 1)
    videos = {q.split("-")[0] for q in uni}

    df, prov = read_run(run)
    assert len(df) == 80
    assert set(df["config_label"]) == {"uniform16", "dbfp8"}
    by = df.set_index(["config_label", "item_id"])
    assert by.loc[("dbfp8", "001-1"), "frames"] == 8
    assert by.loc[("uniform16", "001-1"), "frames"] == 16  # from model_args max_frames_num
    assert by.loc[("uniform16", "001-1"), "answer"] == "B"
    assert by.loc[("uniform16", "001-1"), "raw_text"] == "B."
    assert by.loc[("uniform16", "001-1"), "video_id"] == "001"
    assert json.loads(by.loc[("uniform16", "001-1"), "attributes"])["task_type"] == (
        "Counting Problem"
    )
    assert by.loc[("uniform16", "001-1"), "config_id"] == label_config_id("uniform16", 16)
    (imp,) = prov["imports"]
    assert imp["sources"][0]["seeds"] == {
        "random_seed": 0,
        "numpy_seed": 1234,
        "torch_seed": 1234,
        "fewshot_seed": 1234,
    }
    assert imp["sources"][0]["generation_kwargs"]["max_new_tokens"] == 16
    # what run.json records of the import has the keys its types declare, no others
    source_keys = SourceRecord.__required_keys__ | SourceRecord.__optional_keys__
    assert all(set(source) <= source_keys for source in imp["sources"])
    assert "prompt" in imp["sources"][0] and "results_json" in imp["sources"][0]
    assert set(imp["options"]) <= ImportOptions.__optional_keys__
    assert set(imp) == ImportRecord.__required_keys__

    measures = tmp_path / "m.json"
    assert main(["analyze", str(run), "--bootstrap", "30", "--json", str(measures)]) == 0
    m = json.loads(measures.read_text())["models"]["LLaVA-NeXT-Video-7B-Qwen2"]
    # the budget axis follows the frame counts (8 < 16), not the order the --config flags came in
    assert m["axis"] == ["dbfp8", "uniform16"]
    assert m["n_items"] == 40
    assert m["accuracy"]["uniform16"]["value"] == pytest.approx(acc_uni)
    assert m["accuracy"]["dbfp8"]["value"] == pytest.approx(acc_dbf)
    assert acc_uni == pytest.approx(21 / 40)  # and lmms-eval's own pred_answer agrees
    assert m["flip_down"]["dbfp8->uniform16"]["value"] == pytest.approx(wrong_then_right / 40)
    assert m["flip_up"]["dbfp8->uniform16"]["value"] == pytest.approx(right_then_wrong / 40)
    assert m["harmful_rate"]["value"] == pytest.approx(wrong_then_right / 40)
    assert len(videos) == 14


def test_fixture_runs_without_config_collide_and_say_so(fixtures_dir: Path, tmp_path: Path) -> None:
    le = fixtures_dir / "lmms-eval"
    with pytest.raises(
        ImportInputError,
        match=r"same task \(videomme\) and configuration \(16f\).*--config LABEL=PATH",
    ):
        run_lmms_eval_import(
            files=[str(le / UNIFORM), str(le / DBFP)],
            configs=[],
            model=None,
            benchmark=None,
            run_dir=tmp_path / "run",
        )
    assert not (tmp_path / "run").exists()


def test_benchmark_attaches_youtube_video_ids_and_categories(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    le = fixtures_dir / "lmms-eval"
    summary = run_lmms_eval_import(
        files=[str(le / UNIFORM)],
        configs=[],
        model=None,
        benchmark=fixtures_dir / "benchmarks" / "videomme-test.parquet",
        run_dir=tmp_path / "run",
    )
    assert summary.items_per_config == {"LLaVA-NeXT-Video-7B-Qwen2": {"16f": 40}}
    df, _ = read_run(tmp_path / "run")
    row = df.set_index("item_id").loc["001-1"]
    assert row["video_id"] == "fFjv93ACGo8"
    assert row["config_id"] == Configuration(frames=16).config_id
    assert row["config_label"] == "16f"
    assert json.loads(row["attributes"])["domain"] == "Knowledge"
    assert any("40 of 40 rows matched" in n for n in summary.notes)


# ---- the current format, built in the shape of real files (string filtered_resps) ----

OPTS = "A. yellow\nB. green\nC. blue\nD. red"


def lvb_sample(
    doc_id: int, qid: str, target: int, resp: str, parsed: str, group: int
) -> dict[str, Any]:
    return {
        "doc_id": doc_id,
        "target": str(target),
        "filtered_resps": resp,
        "token_counts": [{"output_tokens": 2}],
        "doc_hash": "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b",
        "lvb_acc": {
            "id": qid,
            "duration_group": group,
            "question_category": "T2A",
            "answer": "ABCD"[target],
            "parsed_pred": parsed,
        },
        "submission": {qid: resp},
        "input": f"What colour is the coat?\n{OPTS}\nAnswer with the option's letter from the given choices directly.\n",
    }


def write_run_files(
    folder: Path, stamp: str, samples: Sequence[dict[str, Any]], model_args: str | None
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stamp}_samples_longvideobench_val_v.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    if model_args is not None:
        results = {
            "results": {"longvideobench_val_v": {"lvb_acc,none": 0.5}},
            "configs": {"longvideobench_val_v": {"generation_kwargs": {"max_new_tokens": 8}}},
            "config": {"model": "qwen2_5_vl", "model_args": model_args, "random_seed": 0},
            "model_name": "Qwen/Qwen2.5-VL-7B-Instruct",
        }
        (folder / f"{stamp}_results.json").write_text(json.dumps(results), encoding="utf-8")
    return path


# item, target, (8-frame response, its parsed_pred), (32-frame response, its parsed_pred)
GRID = [
    ("vA_0", 0, ("A", "A"), ("C. blue", "C")),  # right -> wrong
    ("vA_1", 2, ("B", "B"), ("C", "C")),  # wrong -> right
    ("vB_0", 3, ("D. red", "D"), ("D", "D")),  # right -> right
    ("vB_1", 1, ("I don't know.", "I"), ("B", "B")),  # noanswer -> right
]


def build_current_format(tmp_path: Path) -> tuple[Path, Path]:
    k8 = [lvb_sample(i, q, t, r8, p8, 600) for i, (q, t, (r8, p8), _) in enumerate(GRID)]
    k32 = [lvb_sample(i, q, t, r, p, 600) for i, (q, t, _, (r, p)) in enumerate(GRID)]
    a = write_run_files(
        tmp_path / "k8",
        "20260830_001347",
        k8,
        "pretrained=Qwen/Qwen2.5-VL-7B-Instruct,max_num_frames=8,max_pixels=200704",
    )
    b = write_run_files(
        tmp_path / "k32",
        "20260830_123818",
        k32,
        "pretrained=Qwen/Qwen2.5-VL-7B-Instruct,max_num_frames=32,max_pixels=200704",
    )
    return a, b


def test_current_format_budget_from_model_args(tmp_path: Path) -> None:
    a, _ = build_current_format(tmp_path)
    run = tmp_path / "run"
    summary = run_lmms_eval_import(
        files=[str(tmp_path / "k32"), str(a)], configs=[], model=None, benchmark=None, run_dir=run
    )
    df, _ = read_run(run)
    assert set(df["model"]) == {"Qwen2.5-VL-7B-Instruct"}
    c8 = Configuration(frames=8, max_pixels=200704)
    c32 = Configuration(frames=32, max_pixels=200704)
    assert set(df["config_id"]) == {c8.config_id, c32.config_id}
    by = df.set_index(["config_label", "item_id"])
    label8, label32 = c8.label, c32.label
    assert by.loc[(label8, "vA_0"), "correct"] == 1.0
    assert by.loc[(label32, "vA_0"), "correct"] == 0.0
    assert by.loc[(label32, "vA_0"), "answer"] == "C"
    assert by.loc[(label8, "vB_1"), "answer"] == NOANSWER
    assert by.loc[(label8, "vB_1"), "status"] == "noanswer"
    assert by.loc[(label8, "vB_1"), "correct"] == 0.0
    assert by.loc[(label8, "vA_0"), "video_id"] == "vA"  # LongVideoBench id minus "_n"
    assert by.loc[(label8, "vA_0"), "pixels"] == 200704
    assert json.loads(by.loc[(label8, "vA_0"), "attributes"])["duration"] == "600"
    # lmms-eval's parse read "I don't know." as "I": the one disagreement
    assert any("disagree on 1 of 8" in n for n in summary.notes)
    assert summary.dropped == {"noanswer (no option recognised)": 1}
    assert summary.matched_items == {"Qwen2.5-VL-7B-Instruct": 4}

    measures = tmp_path / "m.json"
    assert main(["analyze", str(run), "--bootstrap", "0", "--json", str(measures)]) == 0
    m = json.loads(measures.read_text())["models"]["Qwen2.5-VL-7B-Instruct"]
    assert m["axis"] == [label8, label32]
    # 8f: 1,0,1,0 -> 0.5; 32f: 0,1,1,1 -> 0.75; harmful {vA_0}; beneficial {vA_1, vB_1}
    assert m["accuracy"][label8]["value"] == pytest.approx(0.5)
    assert m["accuracy"][label32]["value"] == pytest.approx(0.75)
    assert m["harmful_rate"]["value"] == pytest.approx(0.25)
    assert m["beneficial_rate"]["value"] == pytest.approx(0.5)


def test_text_only_run_and_labels_from_config(tmp_path: Path) -> None:
    a, b = build_current_format(tmp_path)
    blind = write_run_files(
        tmp_path / "blind",
        "20260830_000000",
        [lvb_sample(i, q, t, "A", "A", 600) for i, (q, t, _, _) in enumerate(GRID)],
        None,  # no results.json: --model and LABEL:FRAMES carry it
    )
    run = tmp_path / "run"
    run_lmms_eval_import(
        files=[],
        configs=[f"blind:0={blind}", f"picks8={a}", f"picks32={b}"],
        model="qwen-vl",
        benchmark=None,
        run_dir=run,
    )
    df, _ = read_run(run)
    order = df.drop_duplicates("config_label").set_index("config_label")
    assert order.loc["blind", "frames"] == 0 and order.loc["blind", "axis_order"] == 0.0
    # by frame count; a tie between named runs would keep the order they were given in
    assert order.loc["picks8", "axis_order"] == pytest.approx(8.001)
    assert order.loc["picks32", "axis_order"] == pytest.approx(32.002)
    assert order.loc["picks8", "frames"] == 8  # frames from results.json when not given


def test_reimport_is_idempotent_and_conflicts_are_errors(tmp_path: Path) -> None:
    a, _ = build_current_format(tmp_path)
    run = tmp_path / "run"
    kw: dict[str, Any] = {"configs": [], "model": None, "benchmark": None, "run_dir": run}
    first = run_lmms_eval_import(files=[str(a)], **kw)
    assert first.rows_added == 4
    blob = (run / "responses.parquet").read_bytes()
    again = run_lmms_eval_import(files=[str(a)], **kw)
    assert (again.rows_added, again.rows_unchanged) == (0, 4)
    assert (run / "responses.parquet").read_bytes() == blob
    other = [lvb_sample(i, q, t, "D", "D", 600) for i, (q, t, _, _) in enumerate(GRID)]
    c = write_run_files(
        tmp_path / "k8b",
        "20260901_000000",
        other,
        "pretrained=Qwen/Qwen2.5-VL-7B-Instruct,max_num_frames=8,max_pixels=200704",
    )
    with pytest.raises(ImportInputError, match=r"conflict with answers already in the run"):
        run_lmms_eval_import(files=[str(c)], **kw)
    assert (run / "responses.parquet").read_bytes() == blob


def test_bad_inputs_are_named(tmp_path: Path) -> None:
    a, b = build_current_format(tmp_path)
    kw: dict[str, Any] = {"configs": [], "model": None, "benchmark": None}
    lines = a.read_text(encoding="utf-8").splitlines()
    trunc = tmp_path / "k8" / "20260830_001347_samples_trunc.jsonl"
    trunc.write_text(lines[0] + "\n" + lines[1][:40] + "\n", encoding="utf-8")
    with pytest.raises(ImportInputError, match=r"samples_trunc\.jsonl:2: not valid JSON"):
        run_lmms_eval_import(files=[str(trunc)], run_dir=tmp_path / "r1", **kw)
    alone = tmp_path / "alone"
    alone.mkdir()
    lonely = alone / "x_samples_videomme.jsonl"
    lonely.write_text(lines[0] + "\n", encoding="utf-8")
    with pytest.raises(ImportInputError, match=r"x_samples_videomme\.jsonl: no results\.json"):
        run_lmms_eval_import(files=[str(lonely)], run_dir=tmp_path / "r2", **kw)
    other = tmp_path / "other.jsonl"
    other.write_text('{"question": "x"}\n', encoding="utf-8")
    with pytest.raises(ImportInputError, match=r"other\.jsonl:1: not an lmms-eval sample"):
        run_lmms_eval_import(files=[str(other)], run_dir=tmp_path / "r3", **kw)
    results = json.loads((tmp_path / "k32" / "20260830_123818_results.json").read_text())
    results["model_name"] = "llava-hf/LLaVA-Video-7B"
    (tmp_path / "k32" / "20260830_123818_results.json").write_text(json.dumps(results))
    with pytest.raises(ImportInputError, match=r"files of different models .*--model"):
        run_lmms_eval_import(files=[str(a), str(b)], run_dir=tmp_path / "r4", **kw)
    with pytest.raises(ImportInputError, match=r"--config 'nolabel': expected LABEL=PATH"):
        parse_config_arg("nolabel")
    for r in ("r1", "r2", "r3", "r4"):
        assert not (tmp_path / r).exists()


def test_helpers() -> None:
    assert parse_model_args("pretrained=a/b,max_frames_num=16,fps=2") == {
        "pretrained": "a/b",
        "max_frames_num": "16",
        "fps": "2",
    }
    assert options_from_prompt("Q?\nA. x\nB. y\nC. z\nAnswer:") == ("x", "y", "z")
    assert options_from_prompt("Q?\n(A) x\n(B) y") == ("x", "y")
    assert options_from_prompt("A man walks.\nB. y") == ()  # no A option line: no options
    assert gold_letter("C", ("a", "b", "c")) == "C"
    assert gold_letter("2", ("a", "b", "c")) == "C"
    assert gold_letter("b", ("a", "b", "c")) == "B"  # option text (one-letter option)
    assert gold_letter("(B) y", ("x", "y")) == "B"
    assert gold_letter("a cat", ("a dog", "a cat")) == "B"
    assert gold_letter("a bird", ("a dog", "a cat")) is None
    spec = parse_config_arg("picks:8=/x/y.jsonl")
    assert (spec.label, spec.frames, str(spec.path)) == ("picks", 8, "/x/y.jsonl")


def write_samples(folder: Path, task: str, samples: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"20260101_000000_samples_{task}.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    return path


def test_mlvu_payload_maps_to_benchmark_by_question_text(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    import pandas as pd

    bench = pd.read_parquet(fixtures_dir / "benchmarks" / "mlvu-test.parquet").head(3)
    samples = [
        {
            "doc_id": i,
            "target": row.answer,
            "filtered_resps": [resp],
            # lmms-eval's MLVU payload: question_id is the question text, options inlined
            "mlvu_percetion_score": {
                "question_id": row.question,
                "task_type": row.task_type,
                "pred_answer": resp[:1],
                "answer": row.answer,
            },
        }
        for i, (row, resp) in enumerate(zip(bench.itertuples(), ["A", "B", "(C)"], strict=True))
    ]
    path = write_samples(tmp_path / "mlvu", "mlvu_test", samples)
    run = tmp_path / "run"
    run_lmms_eval_import(
        files=[],
        configs=[f"16f:16={path}"],
        model="m",
        benchmark=fixtures_dir / "benchmarks" / "mlvu-test.parquet",
        run_dir=run,
    )
    df, _ = read_run(run)
    assert sorted(df["item_id"]) == sorted(bench["question_id"])
    first = df.set_index("item_id").loc[bench["question_id"].iloc[0]]
    assert first["video_id"] == Path(bench["video_name"].iloc[0]).stem
    assert first["answer"] == "A"
    assert first["correct"] == float(bench["answer"].iloc[0] == "A")
    assert json.loads(first["attributes"])["task_type"] == bench["task_type"].iloc[0]


def test_unknown_task_falls_back_to_target_and_response(tmp_path: Path) -> None:
    mc = [
        {
            "doc_id": 0,
            "target": "B",
            "filtered_resps": "The answer is B.",
            "input": "Q\nA. x\nB. y",
        },
        {
            "doc_id": 1,
            "target": "A",
            "filtered_resps": ["None of these."],
            "input": "Q\nA. x\nB. y",
        },
    ]
    mc_path = write_samples(tmp_path / "mc", "newbench", mc)
    oq = [
        {"doc_id": 0, "target": "a red ball", "filtered_resps": "red ball"},
        {"doc_id": 1, "target": "two dogs", "filtered_resps": "three cats"},
    ]
    oq_path = write_samples(tmp_path / "oq", "openbench", oq)
    run = tmp_path / "run"
    summary = run_lmms_eval_import(
        files=[],
        configs=[f"8f:8={mc_path}"],
        model="m",
        benchmark=None,
        run_dir=run,
    )
    assert summary.dropped == {"noanswer (no option recognised)": 1}
    run_lmms_eval_import(
        files=[], configs=[f"8f:8={oq_path}"], model="m", benchmark=None, run_dir=tmp_path / "r2"
    )
    mcq, _ = read_run(run)
    r = mcq.set_index("item_id")
    assert r.loc["newbench:0", "correct"] == 1.0 and r.loc["newbench:1", "answer"] == NOANSWER
    open_qa, _ = read_run(tmp_path / "r2")
    o = open_qa.set_index("item_id")
    assert set(open_qa["task_kind"]) == {"open_qa"}
    assert o.loc["openbench:0", "token_f1"] == pytest.approx(1.0)  # "a" is an article
    assert o.loc["openbench:0", "exact_match"] == 1.0
    assert o.loc["openbench:1", "score"] == 0.0


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    a, _ = build_current_format(tmp_path)
    summary = run_lmms_eval_import(
        files=[str(a)],
        configs=[],
        model=None,
        benchmark=None,
        run_dir=tmp_path / "run",
        dry_run=True,
    )
    assert summary.rows_added == 4
    assert not (tmp_path / "run").exists()


def test_egoschema_loglikelihood_choices_use_the_scored_option(tmp_path: Path) -> None:
    """mc_ppl tasks log (loglik, greedy) pairs per option, not text; the payload's `pred` is the
    option index the harness chose, and `submission`'s key is the question uid."""
    prompt = "Q?\nA. a\nB. b\nC. c\nD. d\nE. e"
    samples = [
        {
            "doc_id": i,
            "target": str(gt),
            "filtered_resps": [
                [-2.0, False],
                [-1.0, False],
                [-3.0, False],
                [-4.0, False],
                [-5.0, False],
            ],
            "submission": {f"uid-{i}": pred},
            "score": {"pred": pred, "ground_truth": gt},
            "input": prompt,
        }
        for i, (pred, gt) in enumerate([(1, 1), (1, 3)])
    ]
    path = write_samples(tmp_path / "ego", "egoschema_subset", samples)
    run = tmp_path / "run"
    run_lmms_eval_import(files=[], configs=[f"8f:8={path}"], model="m", benchmark=None, run_dir=run)
    df, _ = read_run(run)
    r = df.set_index("item_id")
    assert list(r.index) == ["uid-0", "uid-1"]
    assert r.loc["uid-0", "answer"] == "B" and r.loc["uid-0", "correct"] == 1.0
    assert r.loc["uid-1", "reference"] == "D" and r.loc["uid-1", "correct"] == 0.0
    assert r["raw_text"].isna().all()


def _multi_task_run(folder: Path, stamp: str, frames: int, grid_column: int) -> None:
    """One lmms-eval 0.7 run of two tasks at one configuration: a results.json listing both
    (Video-MME-style scores in points, the LongVideoBench-style one as a fraction), a samples
    file per task, `lmms_eval_version` and `config.resolved_cli_args`."""
    folder.mkdir(parents=True, exist_ok=True)
    samples = {"taska": [], "taskb": []}
    for task in samples:
        for i, (qid, target, *answers) in enumerate(GRID):
            resp, parsed = answers[grid_column]
            sample = lvb_sample(i, f"{task}_{qid}", target, resp, parsed, 600)
            samples[task].append(sample)
        path = folder / f"{stamp}_samples_{task}.jsonl"
        path.write_text("".join(json.dumps(s) + "\n" for s in samples[task]), encoding="utf-8")
    model_args = f"pretrained=Qwen/Qwen2.5-VL-7B-Instruct,max_num_frames={frames}"
    results = {
        "results": {
            "taska": {"lvb_acc,none": 0.5, "lvb_acc_stderr,none": 0.1},
            "taskb": {"acc,none": 50.0},
        },
        "config": {
            "model": "qwen2_5_vl",
            "model_args": model_args,
            "resolved_cli_args": {"tasks": "taska,taskb", "limit": 4, "model_args": model_args},
        },
        "lmms_eval_version": "0.7.3",
        "model_name": "Qwen/Qwen2.5-VL-7B-Instruct",
    }
    (folder / f"{stamp}_results.json").write_text(json.dumps(results), encoding="utf-8")


def test_a_run_of_several_tasks_imports_in_one_command(tmp_path: Path) -> None:
    _multi_task_run(tmp_path / "f8", "20261101_000001", 8, 0)
    _multi_task_run(tmp_path / "f32", "20261101_000002", 32, 1)
    run = tmp_path / "run"
    summary = run_lmms_eval_import(files=[str(tmp_path / "f8"), str(tmp_path / "f32")], run_dir=run)
    df, provenance = read_run(run)
    assert len(df) == 2 * 2 * len(GRID)  # two tasks x two configurations
    assert {json.loads(a)["task"] for a in df["attributes"]} == {"taska", "taskb"}
    by = df.set_index(["item_id", "frames"])
    assert (
        by.loc[("taska_vA_0", 8), "correct"] == 1.0 and by.loc[("taskb_vA_0", 32), "correct"] == 0.0
    )
    # the score note puts lmms-eval's fraction in points beside itemscale's accuracy
    note = next(n for n in summary.notes if "(taska)" in n and "samples_taska" in n)
    assert "lvb_acc 50.00 (0.5 as logged)" in note and "50.00 on 4 answered items (points;" in note
    assert any("(taskb)" in n and "acc 50.00;" in n for n in summary.notes)
    sources = [s for imp in provenance["imports"] for s in imp["sources"]]
    assert {s["lmms_eval_version"] for s in sources} == {"0.7.3"}
    assert all(s["resolved_cli_args"]["limit"] == 4 for s in sources)
    # a --config folder names every task file in it, all at one place on the axis: the
    # run's frame count (both tasks of the 8-frame run at 8.001, the first named run)
    named = tmp_path / "named"
    run_lmms_eval_import(
        files=[], configs=[f"u8={tmp_path / 'f8'}", f"u32={tmp_path / 'f32'}"], run_dir=named
    )
    labels = read_run(named)[0].drop_duplicates(["config_label", "axis_order"])
    assert sorted(zip(labels["axis_order"], labels["config_label"], strict=True)) == [
        (8.001, "u8"),
        (32.002, "u32"),
    ]


def test_a_rerun_in_the_same_folder_is_named_as_one(tmp_path: Path) -> None:
    _multi_task_run(tmp_path / "f8", "20261101_000001", 8, 0)
    _multi_task_run(tmp_path / "f8", "20261101_000009", 8, 1)
    with pytest.raises(
        ImportInputError, match=r"taska at .* is logged twice in .*second run of the same command"
    ):
        run_lmms_eval_import(files=[str(tmp_path / "f8")], run_dir=tmp_path / "run")
