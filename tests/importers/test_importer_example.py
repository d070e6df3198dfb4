"""docs/extending.md's importer runs as written: its code block ("An importer", step 1) is
taken from the page, imported as a module, and run on MyTool files written here, from Python
(`run_import`) and as `itemscale import mytool` of an installed package (a `*.dist-info` with
its entry point, beside the module, on a fresh process's path). The rows are checked against a
hand count, and the two imports against each other."""

from __future__ import annotations

import importlib.util
import inspect
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from _support.packages import itemscale_with
from _support.paths import DOCS
from itemscale.collect.importers import IMPORTERS, Importer, ImportInputError, run_import
from itemscale.core.responses import read_run

#: (item, video, options, gold, output) of each budget's file; right at 8f: q1 (1 of 3);
#: at 16f: q1, q2 (2 of 3); q3's output names no option (a NOANSWER)
ANSWERS = {
    "8f:8": [("q1", "v1", "A", "I think A"), ("q2", "v1", "B", "A"), ("q3", "v2", "A", "B")],
    "16f:16": [("q1", "v1", "A", "A."), ("q2", "v1", "B", "(B)"), ("q3", "v2", "A", "no idea")],
}


def _example_source() -> str:
    page = (DOCS / "extending.md").read_text(encoding="utf-8")
    section = page[page.index("## An importer") :]
    return re.search(r"```python\n(.*?)```", section, re.S)[1]  # type: ignore[index]


def _load(source: str, folder: Path) -> ModuleType:
    path = folder / "mytool_import.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("mytool_import", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mytool_import"] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop("mytool_import", None)
    return module


def _write_files(folder: Path) -> list[str]:
    configs = []
    for config, answers in ANSWERS.items():
        path = folder / f"{config.split(':')[0]}.jsonl"
        lines = [
            json.dumps({"id": i, "video": v, "options": ["red", "blue"], "gold": g, "output": out})
            for i, v, g, out in answers
        ]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        configs.append(f"{config}={path}")
    return configs


@pytest.fixture
def example(tmp_path: Path) -> ModuleType:
    return _load(_example_source(), tmp_path)


def _importer(module: ModuleType) -> Importer:
    found: dict[str, Importer] = {}
    module.register_importers(found.__setitem__)
    assert list(found) == ["mytool"]
    return found["mytool"]


def test_the_documented_importer_imports_a_run(example: ModuleType, tmp_path: Path) -> None:
    importer = _importer(example)
    params = inspect.signature(importer.run).parameters
    # what `itemscale import mytool` passes is what the run function takes
    assert {o.keyword for o in importer.options} == set(params) - {"run_dir", "dry_run"}
    configs = _write_files(tmp_path)
    with IMPORTERS.registered("mytool", importer):
        summary = run_import("mytool", run_dir=tmp_path / "run", configs=configs, model="m")
        with pytest.raises(ImportInputError, match="give --model"):
            run_import("mytool", run_dir=tmp_path / "other", configs=configs)
    assert summary.rows_added == 6
    df, meta = read_run(tmp_path / "run")
    right = df.groupby("config_label")["correct"].sum().to_dict()
    assert right == {"8f": 1.0, "16f": 2.0}
    assert list(df.sort_values("axis_order")["frames"].drop_duplicates()) == [8, 16]
    q3 = df[(df["item_id"] == "q3") & (df["config_label"] == "16f")].iloc[0]
    assert q3["status"] == "noanswer"
    assert meta["imports"][0]["importer"] == "mytool"


def test_the_documented_importer_runs_as_an_installed_package(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "mytool_import.py").write_text(_example_source(), encoding="utf-8")
    info = site / "mytool_import-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: mytool-import\nVersion: 0.1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[itemscale.importers]\nmytool = mytool_import:register_importers\n",
        encoding="utf-8",
    )
    configs = _write_files(tmp_path)
    args = [a for c in configs for a in ("--config", c)]
    done = itemscale_with(
        site, "import", "mytool", *args, "--model", "m", "-o", "run", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    df, _ = read_run(tmp_path / "run")
    assert len(df) == 6
    assert df.groupby("config_label")["correct"].sum().to_dict() == {"8f": 1.0, "16f": 2.0}
