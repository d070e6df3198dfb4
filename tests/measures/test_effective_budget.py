"""`analyze`'s `effective_budget` block: the same-input rule on each adjacent pair of a block,
on hand-made tables whose answer is known, and `cascade` claiming no saving on such a terminal."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from _support.tables import table
from itemscale.analysis.measures import analyze_responses
from itemscale.analysis.policies import CascadeSettings, cascade_report
from itemscale.cli.cmd_analyze import print_summary
from itemscale.core.responses import normalise_responses, read_run

LABELS = ["8f", "16f", "32f"]


def _answers(n: int, seed: int, same_last: bool) -> tuple[dict[str, list[float]], dict]:
    """n items, three budgets, answers drawn at random; with `same_last` the 32f answers copy
    the 16f ones. Gold is always A."""
    rng = np.random.default_rng(seed)
    matrix: dict[str, list[float]] = {}
    answers: dict[str, list[str]] = {}
    for i in range(n):
        row = [str(rng.choice(list("ABCD"))) for _ in LABELS]
        if same_last:
            row[2] = row[1]
        answers[f"q{i}"] = row
        matrix[f"q{i}"] = [float(a == "A") for a in row]
    return matrix, answers


def _with(df: pd.DataFrame, column: str, by_label: dict[str, float]) -> pd.DataFrame:
    df = df.copy()
    df[column] = df["config_label"].map(by_label)
    return df


def _entries(df: pd.DataFrame, rerun_floor: float | None = None) -> list[dict]:
    out = analyze_responses(df, bootstrap=0, rerun_floor=rerun_floor).to_json()
    entries: list[dict] = out["models"]["m"]["effective_budget"]
    return entries


def test_identical_answers_flag_the_step_on_50_items_not_49() -> None:
    matrix, answers = _answers(50, seed=1, same_last=True)
    entries = _entries(table(matrix, labels=LABELS, answers=answers))
    assert entries == [
        {
            "from": "16f",
            "to": "32f",
            "identical": 50,
            "items": 50,
            "evidence": {
                "basis": "identical_answers",
                "recorded": 50,
                "median_from": None,
                "median_to": None,
                "sentence": "32f looks like the same input as 16f: identical answers on 50 "
                "of 50 items",
            },
        }
    ]
    fewer = {k: v for k, v in matrix.items() if k != "q0"}
    fewer_answers = {k: v for k, v in answers.items() if k != "q0"}
    assert _entries(table(fewer, labels=LABELS, answers=fewer_answers)) == []


def test_recorded_tokens_decide_before_answers() -> None:
    # answers differ at every step, but the server's tokens stop growing at 16f: a cap
    matrix, answers = _answers(12, seed=2, same_last=False)
    df = table(matrix, labels=LABELS, answers=answers)
    capped = _with(df, "visual_tokens", {"8f": 96.0, "16f": 192.0, "32f": 192.0})
    (entry,) = _entries(capped)
    assert (entry["from"], entry["to"], entry["items"]) == ("16f", "32f", 12)
    assert entry["evidence"]["basis"] == "visual_tokens"
    assert entry["evidence"]["recorded"] == 12
    assert (entry["evidence"]["median_from"], entry["evidence"]["median_to"]) == (192.0, 192.0)
    assert entry["identical"] == sum(a[1] == a[2] for a in answers.values())
    # tokens that grow: no entry, even where every answer is identical (a robust model)
    matrix, answers = _answers(60, seed=3, same_last=True)
    df = table(matrix, labels=LABELS, answers=answers)
    grown = _with(df, "visual_tokens", {"8f": 96.0, "16f": 192.0, "32f": 384.0})
    assert _entries(grown) == []


def test_effective_frames_count_when_tokens_are_absent() -> None:
    matrix, answers = _answers(6, seed=4, same_last=False)
    df = _with(table(matrix, labels=LABELS, answers=answers), "effective_frames", {})
    df["effective_frames"] = df["frames"].clip(upper=16)  # a video of 16 frames
    (entry,) = _entries(df)
    assert (entry["from"], entry["to"], entry["evidence"]["basis"]) == (
        "16f",
        "32f",
        "effective_frames",
    )


def test_console_says_it_beside_the_curve() -> None:
    matrix, answers = _answers(50, seed=1, same_last=True)
    result = analyze_responses(table(matrix, labels=LABELS, answers=answers), bootstrap=0).to_json()
    out = io.StringIO()
    print_summary(result, out)
    lines = out.getvalue().splitlines()
    at = next(i for i, line in enumerate(lines) if "same input:" in line)
    assert "32f looks like the same input as 16f: identical answers on 50 of 50" in lines[at]
    assert lines[at - 1].strip().startswith("32f")  # right under the curve's last budget


def test_cascade_costs_a_repeated_terminal_as_its_predecessor() -> None:
    matrix, answers = _answers(60, seed=5, same_last=True)
    videos = {f"q{i}": f"v{i // 2}" for i in range(60)}
    df = normalise_responses(table(matrix, labels=LABELS, answers=answers, videos=videos))
    report = cascade_report(df, CascadeSettings(bootstrap=0, seed=0, sharing="prefix")).as_json()
    (block,) = report["results"]
    assert block["labels"] == ["8f", "16f"]
    assert block["terminal"]["label"] == "16f"
    assert block["terminal"]["mean_cost_frames"]["value"] == 16.0
    assert [(e["from"], e["to"]) for e in block["same_input_terminal"]] == [("16f", "32f")]
    assert "32f is costed as 16f" in block["same_input_note"]
    # the same stages asked for by name: the same answer, with the reason
    named = cascade_report(
        df, CascadeSettings(bootstrap=0, seed=0, sharing="prefix", stages=("8f", "16f", "32f"))
    ).as_json()
    assert named["results"][0]["labels"] == ["8f", "16f"]
    # two stages, the second a repeat of the first: nothing left to cascade, said so
    two = cascade_report(df, CascadeSettings(bootstrap=0, seed=0, stages=("16f", "32f"))).as_json()
    assert two["results"] == []
    (skipped,) = two["skipped"]
    assert "32f looks like the same input as 16f" in skipped["reason"]
    assert "fewer than two budgets remain" in skipped["reason"]


def test_the_shipped_release_names_qwen3_vl_8b_128f_to_256f(shipped_release_run: Path) -> None:
    """On the seed paper's labels (nothing recorded but answers), exactly one step of one model
    is the same input: Qwen3-VL-8B's 256f_151k repeats its 128f_151k on all 786 items."""
    df, _ = read_run(shipped_release_run)
    result = analyze_responses(df, bootstrap=0).to_json()
    flagged = {
        model: [(e["from"], e["to"], e["identical"], e["items"]) for e in block["effective_budget"]]
        for model, block in result["models"].items()
    }
    assert flagged == {
        "InternVL3-8B": [],
        "InternVL3.5-8B": [],
        "LLaVA-NeXT-Video-7B": [],
        "Qwen2.5-VL-7B": [],
        "Qwen3-VL-8B": [("128f_151k", "256f_151k", 786, 786)],
    }


def test_a_rerun_level_step_is_flagged_only_against_a_floor() -> None:
    """160 items whose 32f answers copy 16f's but for 2: without a rerun floor the step is not
    identical and nothing says a rerun moves 2 answers, so it stays a budget step; against a
    stated floor of 0.26% (bound 2 at 160) it is within a rerun, flagged as such, and the
    cascade costs 32f as 16f; 3 changed answers are beyond it and the flag goes."""
    matrix, answers = _answers(160, seed=6, same_last=True)
    for item in ("q0", "q1"):
        row = answers[item]
        row[2] = "B" if row[1] != "B" else "C"
        matrix[item] = [float(a == "A") for a in row]
    videos = {f"q{i}": f"v{i // 2}" for i in range(160)}
    df = normalise_responses(table(matrix, labels=LABELS, answers=answers, videos=videos))
    assert _entries(df) == []
    plain = cascade_report(df, CascadeSettings(bootstrap=0, seed=0, sharing="prefix")).as_json()
    assert plain["results"][0]["labels"] == ["8f", "16f", "32f"]
    (entry,) = _entries(df, rerun_floor=0.26)
    assert (entry["from"], entry["to"], entry["identical"], entry["items"]) == (
        "16f",
        "32f",
        158,
        160,
    )
    assert entry["evidence"]["basis"] == "rerun_answers"
    assert (
        "within the rerun floor (2 of 160 answers differ; a rerun moves at most 2 (floor 0.26% "
        "per answer, stated: 0.26% per answer (--rerun-floor 0.26))"
        in (entry["evidence"]["sentence"])
    )
    settings = CascadeSettings(bootstrap=0, seed=0, sharing="prefix", rerun_floor=0.26)
    report = cascade_report(df, settings).as_json()
    (block,) = report["results"]
    assert block["labels"] == ["8f", "16f"]
    assert [(e["from"], e["to"]) for e in block["same_input_terminal"]] == [("16f", "32f")]
    row = answers["q2"]
    row[2] = "B" if row[1] != "B" else "C"
    matrix["q2"] = [float(a == "A") for a in row]
    df = normalise_responses(table(matrix, labels=LABELS, answers=answers, videos=videos))
    assert _entries(df, rerun_floor=0.26) == []
