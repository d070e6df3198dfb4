"""An item's declared duration far from its video's (36,000 s on a 3 s clip) is a sweep warning
with both figures, in the result and run.json; one within the tolerance says nothing
(docs/sweep.md)."""

from __future__ import annotations

from pathlib import Path

from _support.sweep import make_items, make_video, pixel_factory, write_protocol
from itemscale.collect.items import write_items_jsonl
from itemscale.collect.protocol import load_protocol
from itemscale.collect.sweep import run_sweep
from itemscale.core.responses import read_run


def test_a_declared_duration_far_from_the_videos_is_a_warning_with_the_figures(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "suite"
    items = make_items(1, per_video=3)  # v0: 30 frames at 10 fps, 3.0 s
    declared = {"v0-q0": 36_000.0, "v0-q1": 3.4, "v0-q2": None}
    items = [i.model_copy(update={"duration_s": declared[i.item_id]}) for i in items]
    write_items_jsonl(suite / "items.jsonl", items)
    make_video(suite / "videos" / "v0.mp4", n_frames=30)
    proto = write_protocol(tmp_path / "p.toml", suite, frames=(2,))
    result = run_sweep(load_protocol(proto), backend_factory=pixel_factory, progress=False)
    said = [w for w in result.warnings if "declares a duration" in w]
    assert said == [
        "item 'v0-q0': declares a duration of 36,000.0 s but its video v0.mp4 lasts 3.0 s "
        "(more than 10% and 2 s apart); the video's own duration is used"
    ]
    _, meta = read_run(tmp_path / "run")
    assert said[0] in meta["sweep"]["warnings"]
