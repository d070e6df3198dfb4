"""A measure from another installed package: `tests/data/toy_measure` (the package
docs/extending.md shows) is installed with pip into a temporary folder, and fresh `itemscale`
processes with that folder on their path compute it in `analyze --json` and the console, record
where it came from (`plugin_measures`), write it into an artifact and verify it; without the
package, `verify` names the package to install instead of a difference of numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _support.packages import install_copy, itemscale_with
from _support.paths import DATA, DOCS
from _support.runs import make_run
from itemscale.analysis.measures import ANALYSIS_SCHEMA_VERSION

TOY = DATA / "toy_measure"
TRACE = {
    "key": "first_budget_rate",
    "kinds": ["binary"],
    "distribution": "toy-measure",
    "version": "0.1.0",
    "entry_point": "first_budget = toy_measure:register_measures",
}


@pytest.fixture(scope="module")
def toy_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("setuptools", reason="building the toy package needs setuptools")
    return install_copy(TOY, tmp_path_factory.mktemp("toy_measure"))


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    """A run, and the share of its items right at the smallest budget (8 frames), counted."""
    run_dir = tmp_path_factory.mktemp("run") / "run"
    df, _ = make_run(run_dir, n_items=12, with_audit=False)
    at_8 = df[df["frames"] == 8]
    assert len(at_8) == 12
    return run_dir, float(at_8["correct"].astype(bool).sum()) / len(at_8)


@pytest.fixture(scope="module")
def run(made: tuple[Path, float]) -> Path:
    return made[0]


def test_analyze_computes_and_traces_an_installed_plugin_measure(
    toy_site: Path, made: tuple[Path, float], tmp_path: Path
) -> None:
    run, right_at_8 = made
    out = tmp_path / "with.json"
    done = itemscale_with(
        toy_site, "analyze", str(run), "--bootstrap", "20", "--json", str(out), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert data["schema_version"] == ANALYSIS_SCHEMA_VERSION == 4
    assert data["plugin_measures"] == [TRACE]
    block = next(iter(data["models"].values()))
    assert block["first_budget_rate"]["value"] == pytest.approx(right_at_8)
    low, high = block["first_budget_rate"]["ci"]
    assert low <= right_at_8 <= high
    assert "first-budget rate:" in done.stdout
    assert "items right at the smallest budget of the axis" in done.stdout

    bare = tmp_path / "without.json"
    done = itemscale_with(
        None, "analyze", str(run), "--bootstrap", "20", "--json", str(bare), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    plain = json.loads(bare.read_text())
    assert plain["schema_version"] == ANALYSIS_SCHEMA_VERSION  # one layout, plugins or not
    assert "plugin_measures" not in plain
    assert "first_budget_rate" not in json.dumps(plain)
    assert "first-budget rate" not in done.stdout


def test_verify_recomputes_a_plugin_measure_and_names_a_missing_plugin(
    toy_site: Path, run: Path, tmp_path: Path
) -> None:
    artifact = tmp_path / "artifact"
    done = itemscale_with(
        toy_site, "report", str(run), "--bootstrap", "20", "--out", str(artifact), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    stored = json.loads((artifact / "measures.json").read_text())
    assert stored["plugin_measures"] == [TRACE]
    assert "first-budget rate" in (artifact / "report.html").read_text(encoding="utf-8")

    done = itemscale_with(toy_site, "verify", str(artifact), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr

    done = itemscale_with(None, "verify", str(artifact), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    said = done.stdout + done.stderr
    assert (
        "measures.json: holds measure 'first_budget_rate' of package toy-measure 0.1.0 "
        "(entry point 'first_budget = toy_measure:register_measures', group "
        "itemscale.measures), which is not installed here: install toy-measure==0.1.0"
    ) in said


def test_the_docs_show_the_toy_measure_package() -> None:
    """docs/extending.md's "A measure as a separate package" shows these very files."""
    page = (DOCS / "extending.md").read_text(encoding="utf-8")
    for name, fence in (("pyproject.toml", "toml"), ("toy_measure.py", "python")):
        text = (TOY / name).read_text(encoding="utf-8")
        assert f"```{fence}\n{text}```\n" in page, f"docs/extending.md does not show {name}"


def _site(root: Path, packages: dict[str, tuple[str, str]]) -> Path:
    """A folder with one module and one `*.dist-info` per package (name -> (entry point line,
    module source)): installed packages, as importlib.metadata sees them."""
    site = root / "site"
    site.mkdir()
    for name, (entry, source) in packages.items():
        module = name.replace("-", "_")
        (site / f"{module}.py").write_text(source, encoding="utf-8")
        info = site / f"{module}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8"
        )
        (info / "entry_points.txt").write_text(f"[itemscale.measures]\n{entry}\n", encoding="utf-8")
    return site


def _share_plugin(key: str) -> str:
    return (
        "from itemscale.analysis.measures import ItemShare\n\n"
        f"UNIT = ItemShare(key={key!r}, kinds=('binary',), console_label={key!r},\n"
        "                 indicator=lambda d: d.y[:, -1])\n\n\n"
        f"def register(register):\n    register({key!r}, UNIT)\n"
    )


def test_plugin_measures_come_in_distribution_order(run: Path, tmp_path: Path) -> None:
    """Built-ins first, then by distribution name (zeta's package is installed first, and its
    entry point name sorts first, yet alpha-measure's comes first)."""
    site = _site(
        tmp_path,
        {
            "zeta-measure": ("a_first = zeta_measure:register", _share_plugin("zeta_rate")),
            "alpha-measure": ("z_last = alpha_measure:register", _share_plugin("alpha_rate")),
        },
    )
    out = tmp_path / "m.json"
    done = itemscale_with(
        site, "analyze", str(run), "--bootstrap", "0", "--json", str(out), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert [p["distribution"] for p in data["plugin_measures"]] == [
        "alpha-measure",
        "zeta-measure",
    ]
    said = done.stdout  # the console prints a block's measures in registry order
    assert said.index("terminal regression") < said.index("alpha_rate:")
    assert said.index("alpha_rate:") < said.index("zeta_rate:")


def test_a_broken_measure_plugin_is_one_line_naming_it(run: Path, tmp_path: Path) -> None:
    site = _site(
        tmp_path,
        {"clash-measure": ("clash = clash_measure:register", _share_plugin("harmful_rate"))},
    )
    done = itemscale_with(site, "analyze", str(run), "--bootstrap", "0", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "itemscale analyze: error: measure plugin entry point 'clash = clash_measure:register' "
        "of package clash-measure 1.0 (group itemscale.measures) registers measure "
        "'harmful_rate': measure 'harmful_rate' is already registered for binary"
    )
