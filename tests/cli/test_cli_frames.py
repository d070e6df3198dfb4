"""`itemscale frames`: contact sheets and the JSON record, end to end on a real video."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from itemscale.cli import main
from itemscale.collect.video import encode_video


@pytest.fixture(scope="module")
def video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    frames = [np.full((48, 64, 3), (i * 4) % 256, dtype=np.uint8) for i in range(50)]
    return encode_video(tmp_path_factory.mktemp("cli") / "clip.mp4", frames, fps=25)


def test_frames_with_policy_writes_sheets_and_json(video: Path, tmp_path: Path) -> None:
    out, report = tmp_path / "sheets", tmp_path / "frames.json"
    code = main(
        [
            "frames", str(video), "--frames", "4,8,64", "--policy", "interior",
            "--pixels", "3136", "--out", str(out), "--json", str(report),
        ]
    )  # fmt: skip
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "4f_px3136_interior.png", "64f_px3136_interior.png", "8f_px3136_interior.png",
    ]  # fmt: skip
    with Image.open(out / "8f_px3136_interior.png") as image:
        assert image.format == "PNG" and image.mode == "RGB"
        # one row of 8 tiles of 96 px height (56x56 frames -> 96x96 tiles)
        assert image.width >= 8 * 96
    data = json.loads(report.read_text())
    assert set(data) == {"video", "n_frames", "fps", "configurations"}
    assert data["video"] == str(video) and data["n_frames"] == 50 and data["fps"] == 25.0
    configs = data["configurations"]
    assert [c["label"] for c in configs] == [
        "4f@px3136/interior", "8f@px3136/interior", "64f@px3136/interior",
    ]  # fmt: skip
    first = configs[0]
    assert set(first) == {
        "label", "frames", "policy", "effective_frames", "indices", "timestamps", "width", "height",
    }  # fmt: skip
    # interior, n = 50, K = 4: int(i * 50 / 5) = 10, 20, 30, 40
    assert first["indices"] == [10, 20, 30, 40]
    assert first["timestamps"] == pytest.approx([0.4, 0.8, 1.2, 1.6])
    assert (first["frames"], first["effective_frames"], first["policy"]) == (4, 4, "interior")
    assert (first["width"], first["height"]) == (56, 56)  # 48x64 rounded to 28s within 3136 px
    # 64 asked of a 50-frame video: 50 distinct frames, recorded as such
    assert configs[2]["frames"] == 64 and configs[2]["effective_frames"] == 50
    assert configs[2]["indices"] == list(range(50))


def test_frames_from_protocol(video: Path, tmp_path: Path) -> None:
    protocol = tmp_path / "protocol.toml"
    protocol.write_text(
        """
[[models]]
name = "tiny"
backend = "builtin"
model = "tiny"

[benchmark]
kind = "synthetic"

[grid]
frames = [2, 4]
short_side = [56]
sampling = ["linspace", { name = "left", phase = 0.5 }]
""",
        encoding="utf-8",
    )
    report = tmp_path / "f.json"
    assert main(["frames", str(video), "--protocol", str(protocol), "--out", str(tmp_path / "s"), "--json", str(report)]) == 0  # fmt: skip
    configs = json.loads(report.read_text())["configurations"]
    # the text-only baseline has no frames to show and is left out
    assert [c["label"] for c in configs] == ["2f@56", "4f@56", "2f@56/left+0.5", "4f@56/left+0.5"]
    assert configs[0]["indices"] == [0, 49]
    assert configs[3]["indices"] == [6, 18, 31, 43]  # int((i + 0.5) * 12.5)
    assert (configs[0]["width"], configs[0]["height"]) == (84, 56)
    assert len(list((tmp_path / "s").glob("*.png"))) == 4


def test_user_errors(video: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "o")
    assert main(["frames", str(video), "--frames", "8,x", "--out", out]) == 2
    assert "comma-separated integers" in capsys.readouterr().err
    assert main(["frames", str(video), "--frames", "8", "--policy", "middle", "--out", out]) == 2
    err = capsys.readouterr().err
    assert "name" in err and "'interior'" in err
    assert main(["frames", str(tmp_path / "none.mp4"), "--frames", "8", "--out", out]) == 2
    assert "missing_file" in capsys.readouterr().err
    protocol = tmp_path / "p.toml"
    protocol.write_text("[grid]\nframes = [1]\n")
    assert main(["frames", str(video), "--protocol", str(protocol), "--pixels", "9", "--out", out]) == 2  # fmt: skip
    assert "--pixels is only used with --frames" in capsys.readouterr().err
    assert main(["frames", str(video), "--protocol", str(protocol), "--out", out]) == 2
    assert "models" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["frames", str(video), "--frames", "8", "--protocol", str(protocol), "--out", out])
    assert not Path(out).exists()
