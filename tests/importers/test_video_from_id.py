"""`import table --video-from-id PATTERN`: bootstrap clusters read from Video-MME-style ids, only
when asked, and said in the summary."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from itemscale.cli import cmd_analyze, main
from itemscale.collect.importers import ImportInputError, run_import
from itemscale.core.responses import read_run

LONG = (
    "model,item_id,config,frames,correct\n"
    "m,001-1,8f,8,1\nm,001-2,8f,8,0\nm,002-1,8f,8,1\nm,extra,8f,8,0\n"
    "m,001-1,16f,16,0\nm,001-2,16f,16,1\nm,002-1,16f,16,1\nm,extra,16f,16,1\n"
)


def _table(tmp_path: Path, text: str = LONG) -> Path:
    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8")
    return path


def _videos(run: Path) -> dict[str, str]:
    df, _ = read_run(run)
    return dict(zip(df["item_id"], df["video_id"], strict=True))


def test_without_the_option_each_item_is_its_own_cluster(tmp_path: Path) -> None:
    summary = run_import("table", [_table(tmp_path)], run_dir=tmp_path / "r")
    assert _videos(tmp_path / "r") == {i: i for i in ("001-1", "001-2", "002-1", "extra")}
    assert any("--video-from-id PATTERN" in n for n in summary.notes)


def test_the_videomme_preset_groups_questions_by_video(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = run_import(
        "table", [_table(tmp_path)], run_dir=tmp_path / "r", video_from_id="videomme"
    )
    assert _videos(tmp_path / "r") == {
        "001-1": "001",
        "001-2": "001",
        "002-1": "002",
        "extra": "extra",
    }
    (note,) = [n for n in summary.notes if "--video-from-id" in n]
    assert "3 items on 2 videos are resampled by video" in note
    assert "1 id(s) do not match and stay their own cluster (e.g. extra)" in note
    _, run = read_run(tmp_path / "r")
    assert run["imports"][0]["options"]["video_from_id"] == "videomme"
    monkeypatch.setattr(cmd_analyze.print_summary, "__defaults__", (io.StringIO(),))
    out = tmp_path / "m.json"
    assert main(["analyze", str(tmp_path / "r"), "--bootstrap", "20", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["models"]["m"]["n_videos"] == 3


def test_a_named_group_and_what_the_key_says_first(tmp_path: Path) -> None:
    key = tmp_path / "key.csv"
    table = _table(
        tmp_path,
        "model,item_id,config,frames,answer\n"
        "m,clipA_q1,8f,8,A\nm,clipB_q1,8f,8,B\nm,clipB_q2,8f,8,C\n",
    )
    key.write_text(
        "item_id,gold,video_id\nclipA_q1,A,from-key\nclipB_q1,B,\nclipB_q2,C,\nclipC_q1,D,\n",
        encoding="utf-8",
    )
    run_import(
        "table",
        [table],
        run_dir=tmp_path / "r",
        answer_key=key,
        video_from_id=r"(?P<video>clip\w)_q\d+",
        absent="noanswer",
    )
    assert _videos(tmp_path / "r") == {
        "clipA_q1": "from-key",  # the key's video wins
        "clipB_q1": "clipB",
        "clipB_q2": "clipB",
        "clipC_q1": "clipC",  # an absent item's video from its id too
    }


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        (r"\d+-\d+", r"needs a group for the video id"),
        (r"(\d+", r"not a regular expression"),
        (r"(zzz)-\d+", r"no item id matches it \(e.g. '001-1'\)"),
    ],
)
def test_bad_patterns_are_refused(tmp_path: Path, pattern: str, message: str) -> None:
    with pytest.raises(ImportInputError, match=message):
        run_import("table", [_table(tmp_path)], run_dir=tmp_path / "r", video_from_id=pattern)
    assert not (tmp_path / "r").exists()


def test_the_cli_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["import", "table", str(_table(tmp_path)), "--video-from-id", "videomme"]
    assert main([*argv, "-o", str(tmp_path / "r")]) == 0
    assert "3 items on 2 videos are resampled by video" in capsys.readouterr().out
