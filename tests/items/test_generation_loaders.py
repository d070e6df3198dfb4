"""MLVU's generation tasks and AVSD (DSTC7) dialogue from their published JSON shapes: items with
references, fixed gold histories, and every bad file named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _support.paths import DATA
from itemscale.collect.items import (
    BENCHMARK_LOADERS,
    BenchmarkFileError,
    load_avsd,
    load_benchmark,
    load_mlvu_generation,
)
from itemscale.collect.items._benchmarks import detect_benchmark
from itemscale.collect.models._prompts import build_messages
from itemscale.core.responses import TaskKind

GEN = DATA / "generation"


def _write(tmp_path: Path, value: Any, name: str = "bad.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def test_mlvu_generation_items() -> None:
    items = load_mlvu_generation(GEN / "mlvu_generation.json", video_dir="/v")
    assert [i.item_id for i in items] == [
        "subPlot_new_all_1",
        "subPlot_new_all_2",
        "summary_1",
        "summary_1#2",  # a second question about one video
    ]
    first = items[0]
    assert first.task_kind == TaskKind.SUMMARY
    assert first.video_id == "subPlot_new_all_1"
    assert first.video_path == "/v/subPlot_new_all_1.mp4"
    assert first.references == (
        "A red square slides in from the left and stops in the middle of a grey room.",
    )
    assert first.attributes == {"task_type": "subPlot"}
    assert first.duration_s == 4.0
    assert items[3].video_id == "summary_1" and items[3].attributes["task_type"] == "summary"
    assert first.reference_text() == first.references[0]


def test_mlvu_generation_one_object_per_line(tmp_path: Path) -> None:
    records = json.loads((GEN / "mlvu_generation.json").read_text(encoding="utf-8"))
    path = tmp_path / "9_summary.json"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    assert detect_benchmark(path) == "mlvu_generation"
    lines = load_mlvu_generation(path)
    assert lines == load_mlvu_generation(GEN / "mlvu_generation.json")


def test_avsd_turns_carry_the_gold_history() -> None:
    items = load_avsd(GEN / "avsd_dstc7.json")
    assert [i.item_id for i in items] == ["QRB9X-1", "QRB9X-2", "QRB9X-3", "7UPGT-1", "7UPGT-2"]
    third = items[2]
    assert third.task_kind == TaskKind.DIALOGUE
    assert third.video_id == "QRB9X" and third.video_path == "QRB9X.mp4"
    assert third.question == "what does he do there"
    assert third.references == ("he opens the red fridge and takes a bottle",)
    assert [(t.role, t.text) for t in third.history] == [
        ("user", "is there a person in the video"),
        ("assistant", "yes there is one man"),
        ("user", "where is he"),
        ("assistant", "he is in the orange kitchen"),
    ]
    assert items[0].history == ()
    assert third.attributes == {"task_type": "dialogue", "turn": "3"}
    # the prompt: the gold history, then the current question, never the caption or summary
    messages = build_messages(third)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert messages[-1]["text"] == "what does he do there"
    assert not any("fridge" in m["text"] for m in messages[:-1])


def test_avsd_multi_reference_answers(tmp_path: Path) -> None:
    data = {
        "dialogs": [
            {
                "image_id": "A1",
                "dialog": [
                    {"question": "q1", "answer": "a1"},
                    {"question": "q2", "answer": ["a two", "second answer"]},
                ],
            }
        ]
    }
    items = load_avsd(_write(tmp_path, data))
    assert items[1].references == ("a two", "second answer")
    assert items[1].history[-1].text == "a1"


def test_json_files_are_detected_by_their_keys() -> None:
    assert detect_benchmark(GEN / "mlvu_generation.json") == "mlvu_generation"
    assert detect_benchmark(GEN / "avsd_dstc7.json") == "avsd"
    assert len(load_benchmark(GEN / "avsd_dstc7.json")) == 5
    assert BENCHMARK_LOADERS["avsd"].suffixes == frozenset({".json"})


def test_an_unknown_json_file_names_its_keys(tmp_path: Path) -> None:
    with pytest.raises(BenchmarkFileError, match=r"not a known benchmark file .*has a, b"):
        detect_benchmark(_write(tmp_path, {"a": 1, "b": 2}))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"not": "a list"}, r"a JSON list of questions, not a dict"),
        ([], r"no questions"),
        (
            [{"video": "v.mp4", "question": "q", "question_type": "summary"}],
            r"question 1: .*'answer'",
        ),
        (
            [{"video": "v.mp4", "question": "q", "answer": " ", "question_type": "summary"}],
            r"key 'answer' is empty",
        ),
        (
            [{"video": ["v"], "question": "q", "answer": "a", "question_type": "t"}],
            r"key 'video' is list, not text",
        ),
        (
            [{"video": "v", "question": "q", "answer": "a", "question_type": "t", "duration": "x"}],
            r"'duration' 'x' is not a number",
        ),
        (["text"], r"question 1: expected an object, got str"),
    ],
)
def test_bad_mlvu_generation_files_are_named(tmp_path: Path, value: Any, message: str) -> None:
    with pytest.raises(BenchmarkFileError, match=message):
        load_mlvu_generation(_write(tmp_path, value))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([1, 2], r"a JSON object with a 'dialogs' list"),
        ({"dialogs": []}, r"'dialogs' is not a non-empty list"),
        ({"dialogs": [{"dialog": []}]}, r"dialogs\[0\]: missing key 'image_id'"),
        ({"dialogs": [{"image_id": "a", "dialog": []}]}, r"'dialog' is not a non-empty list"),
        (
            {"dialogs": [{"image_id": "a", "dialog": [{"question": "q"}]}]},
            r"dialogs\[0\].dialog\[0\]: missing key 'answer'",
        ),
        (
            {
                "dialogs": [
                    {"image_id": "a", "dialog": [{"question": "q", "answer": "x"}]},
                    {"image_id": "a", "dialog": [{"question": "q", "answer": "y"}]},
                ]
            },
            r"dialogs\[1\]: image_id 'a' has a second dialog",
        ),
        (
            {
                "dialogs": [
                    {
                        "image_id": "a",
                        "dialog": [
                            {"question": "q1", "answer": "__UNDISCLOSED__"},
                            {"question": "q2", "answer": "y"},
                        ],
                    }
                ]
            },
            r"dialog\[1\]: follows .*dialog\[0\], which has no reference answer",
        ),
        (
            {"dialogs": [{"image_id": "a", "dialog": [{"question": "q", "answer": ""}]}]},
            r"no turn has a reference answer",
        ),
    ],
)
def test_bad_avsd_files_are_named(tmp_path: Path, value: Any, message: str) -> None:
    with pytest.raises(BenchmarkFileError, match=message):
        load_avsd(_write(tmp_path, value))


def test_a_file_that_is_not_json_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"dialogs": [\n  {"image_id": "a",,}\n]}', encoding="utf-8")
    with pytest.raises(BenchmarkFileError, match=r"broken.json:2: not valid JSON"):
        load_avsd(path)
