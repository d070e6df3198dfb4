"""Same-input verdicts from evidence, end to end on tables imported with `import table` (the
issue's generated tables 2 to 5): thin evidence (one disagreeing repeat, visual tokens on one
item, no answer on both sides) never makes two budgets "the same input", and open-ended items
compare their raw outputs. Each table goes through `compare`, `analyze` and, for table 3,
`cascade`, as a user would run them."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from itemscale import compare
from itemscale.analysis.measures import BinarySeries
from itemscale.analysis.policies import CascadeSettings
from itemscale.cli import main
from itemscale.workflows import analyze, cascade

COLUMNS = [
    "model",
    "item_id",
    "video_id",
    "config",
    "frames",
    "repeat",
    "task_kind",
    "answer",
    "correct",
    "prediction",
    "score",
    "visual_tokens",
    "confidence",
]


def _row(item: int, config: str, **values: Any) -> dict[str, Any]:
    frames = int(config.removesuffix("f"))
    return {
        "model": "m",
        "item_id": f"q{item}",
        "video_id": f"v{item // 2}",
        "config": config,
        "frames": frames,
        **values,
    }


def _import(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    table = tmp_path / "R.csv"
    with table.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    run = tmp_path / "R"
    assert main(["import", "table", str(table), "-o", str(run)]) == 0
    return run


def _same_sentence(result: Any) -> str:
    return str(next(v.sentence for v in result.verdicts if v.key == "same_input"))


def _effective(run: Path) -> list[Any]:
    block = analyze(run, bootstrap=0).models["m"]
    assert isinstance(block, BinarySeries)
    return list(block.effective_budget or [])


def test_one_disagreeing_repeat_sets_no_floor(tmp_path: Path) -> None:
    """Table 2: 100 items right (A) at 8f, wrong (B) at 16f, one repeat row at 8f answering C."""
    rows = [_row(i, "8f", answer="A", correct=1) for i in range(100)]
    rows += [_row(i, "16f", answer="B", correct=0) for i in range(100)]
    rows.append(_row(0, "8f", answer="C", correct=0, repeat=1))
    run = _import(tmp_path, rows)
    r = compare(run, configs=["8f", "16f"], bootstrap=0)
    assert r.same_input is None
    assert r.rerun_floor is not None and (r.rerun_floor.moved, r.rerun_floor.answers) == (1, 1)
    assert r.answer_agreement is not None and r.answer_agreement.answers == "cannot_tell"
    sentence = _same_sentence(r)
    assert sentence.startswith("Not identical: 100 of 100")
    assert "measured, 1 of 1 answers moved between A's own repeats" in sentence
    assert "too thin to call it a rerun" in sentence
    assert "same input as" not in sentence and "within" not in sentence
    assert _effective(run) == []


def test_tokens_on_one_item_decide_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Table 3: visual tokens (100) recorded on one item only; 4f/8f/16f right on 41/45/90%."""
    rows = []
    for config, right in (("4f", 41), ("8f", 45), ("16f", 90)):
        for i in range(100):
            ok = i < right
            tokens = 100 if i == 0 else None
            rows.append(
                _row(
                    i,
                    config,
                    answer="A" if ok else "B",
                    correct=int(ok),
                    visual_tokens=tokens,
                    confidence=0.9 if ok else 0.4,
                )
            )
    run = _import(tmp_path, rows)
    r = compare(run, configs=["8f", "16f"], bootstrap=0)
    assert r.same_input is None
    sentence = _same_sentence(r)
    assert "same input as" not in sentence and "did not change the input" not in sentence
    assert "45 of 100 answers differ" in sentence
    assert _effective(run) == []
    report = cascade(run, CascadeSettings(bootstrap=0), write=False)
    (block,) = report.results
    assert block.same_input_terminal is None and block.same_input_note is None
    assert block.labels[-1] == "16f"
    capsys.readouterr()
    assert main(["cascade", str(run), "--bootstrap", "0", "--json", str(tmp_path / "c.json")]) == 0
    assert "terminal 8f, not 16f" not in capsys.readouterr().out


def test_open_ended_items_compare_their_raw_outputs(tmp_path: Path) -> None:
    """Table 4: 60 multiple-choice and 60 open-ended items, identical at 8f and 16f."""
    rows = []
    for config in ("8f", "16f"):
        rows += [_row(i, config, answer="ABCD"[i % 4], correct=i % 2) for i in range(60)]
        rows += [
            _row(
                100 + i, config, task_kind="open_qa", prediction=f"a red car number {i}", score=0.5
            )
            for i in range(60)
        ]
    run = _import(tmp_path, rows)
    only = compare(run, configs=["8f", "16f"], bootstrap=0, task_kind="open_ended")
    assert only.same_input is not None and only.same_input.basis == "identical_answers"
    assert (only.same_input.identical, only.same_input.answered) == (60, 60)
    sentence = _same_sentence(only)
    assert "B looks like the same input as A: identical answers on 60 of 60 items" in sentence
    assert "do not look like the same input" not in sentence
    both = compare(run, configs=["8f", "16f"], bootstrap=0)
    assert both.same_input is not None and both.same_input.identical == 120
    # a changed raw output of one open-ended item is a differing answer (no floor: not one input)
    changed = [dict(r) for r in rows]
    changed[-1]["prediction"] = "a blue car"
    (tmp_path / "x").mkdir()
    other = _import(tmp_path / "x", changed)
    moved = compare(other, configs=["8f", "16f"], bootstrap=0, task_kind="open_ended")
    assert moved.same_input is None and moved.answer_agreement is not None
    assert moved.answer_agreement.differ == 1


def test_no_answer_on_both_sides_is_never_identical(tmp_path: Path) -> None:
    """Table 5: 60 items answering NOANSWER at both budgets."""
    rows = [_row(i, c, answer="NOANSWER", correct=0) for c in ("8f", "16f") for i in range(60)]
    run = _import(tmp_path, rows)
    r = compare(run, configs=["8f", "16f"], bootstrap=0)
    assert r.same_input is None
    assert r.answer_agreement is not None and r.answer_agreement.no_answer == 60
    sentence = _same_sentence(r)
    assert sentence.startswith("Cannot tell whether the two sides are the same input: no matched")
    assert "60 where neither side gave one, of 60" in sentence
    assert "was the setting applied" not in sentence
    assert _effective(run) == []


def test_without_a_floor_the_runs_own_scale_is_given(tmp_path: Path) -> None:
    """No floor, and nothing recorded deciding for the pair: the verdict gives the smallest answer
    change the run shows between configurations whose recorded visual tokens differ."""
    rows = []
    for i in range(100):
        # 8f and 16f record their visual tokens (100, 200): 12 answers change between them
        rows.append(
            _row(i, "8f", answer="B" if i < 12 else "A", correct=int(i >= 12), visual_tokens=100)
        )
        rows.append(_row(i, "16f", answer="A", correct=1, visual_tokens=200))
        # 32f (imported without tokens) differs from 16f on 3 answers
        rows.append(_row(i, "32f", answer="C" if i < 3 else "A", correct=int(i >= 3)))
    run = _import(tmp_path, rows)
    r = compare(run, configs=["16f", "32f"], bootstrap=0)
    assert r.same_input is None and r.rerun_floor is None
    assert r.input_scale is not None
    assert (r.input_scale.config_a, r.input_scale.config_b) == ("8f", "16f")
    assert (r.input_scale.changed, r.input_scale.items) == (12, 100)
    assert _same_sentence(r) == (
        "Not identical: 3 of 100 answers differ; no rerun floor is measured, so whether a rerun "
        "moves that many cannot be told (measure one with repeats of one configuration, a rerun "
        "of it (`compare A B --rerun RUN`, `import lmms-eval --rerun-of LABEL`) or `sweep "
        "--rerun-check 0.2`, or state one with `--rerun-floor PERCENT`); the runs' own scale: 8f "
        "and 16f, whose recorded visual tokens differ, change 12 of 100 answers (12.00%)."
    )
    # with a floor the scale is not needed, and not computed
    stated = compare(run, configs=["16f", "32f"], bootstrap=0, rerun_floor=1.0)
    assert stated.input_scale is None and stated.same_input is not None
