"""`[benchmark] items = "FILE"`: the anchors `itemscale anchors` writes drive a sweep of only
those items (the built-in model on a synthetic-layout suite, real videos, real sweep)."""

from __future__ import annotations

from pathlib import Path

import pytest

from _support.sweep import write_benchmark, write_protocol
from itemscale.cli import main
from itemscale.collect.protocol import load_protocol
from itemscale.collect.sweep import run_sweep
from itemscale.core.errors import ItemscaleError
from itemscale.core.responses import read_run

BUILTIN = {"name": "tiny", "backend": "builtin", "model": "builtin", "dtype": "float32"}


def _with_items(proto: Path, line: str) -> Path:
    text = proto.read_text().replace("[benchmark]\n", f"[benchmark]\n{line}\n")
    proto.write_text(text)
    return proto


def test_anchors_output_drives_a_sweep_of_only_those_items(tmp_path: Path) -> None:
    suite = write_benchmark(tmp_path / "suite", 6, per_video=2)
    full = write_protocol(tmp_path / "full.toml", suite, frames=(2, 4, 8), models=[BUILTIN])
    run_sweep(load_protocol(full), progress=False)
    all_items = set(read_run(tmp_path / "run")[0]["item_id"])
    assert len(all_items) == 12
    anchors = tmp_path / "anchors.txt"
    assert main(["anchors", str(tmp_path / "run"), "--k", "4", "--out", str(anchors)]) == 0
    chosen = [ln for ln in anchors.read_text().splitlines() if ln and not ln.startswith("#")]
    assert len(chosen) == 4 and set(chosen) <= all_items
    sub = write_protocol(
        tmp_path / "sub.toml", suite, frames=(2, 4), models=[BUILTIN], output=tmp_path / "sub"
    )
    _with_items(sub, 'items = "anchors.txt"')  # relative to the protocol's folder
    result = run_sweep(load_protocol(sub), progress=False)
    swept = read_run(tmp_path / "sub")[0]
    assert set(swept["item_id"]) == set(chosen)
    assert result.ran == len(swept) == 4 * swept["config_id"].nunique()


def test_an_unknown_item_in_the_list_is_refused_with_its_line(tmp_path: Path) -> None:
    suite = write_benchmark(tmp_path / "suite", 2, per_video=1)
    (tmp_path / "list.txt").write_text("# a comment\n\nnot-an-item\n")
    proto = write_protocol(tmp_path / "p.toml", suite, frames=(2,), models=[BUILTIN])
    _with_items(proto, 'items = "list.txt"')
    with pytest.raises(ItemscaleError, match=r"list.txt: line 3: item 'not-an-item'"):
        run_sweep(load_protocol(proto), progress=False)
