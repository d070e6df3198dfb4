"""A backend from another installed package: `tests/data/toy_backend` (the package
docs/extending.md shows) is built and installed into a temporary folder with pip, and a real
`itemscale sweep` with that folder on its path finds `backend = "toy"` through the entry point
group `itemscale.backends`, drives it by its `serving` and records its `usage()`. A broken plugin
(an import error, no function, a wrong type, a name taken, a bad name) is a one-line error naming
the entry point and the package, never a traceback or a half-filled registry."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from _support.packages import install_copy, itemscale_with, pip_install
from _support.paths import REPO
from _support.sweep import write_benchmark, write_protocol
from itemscale.collect.importers import IMPORTERS
from itemscale.collect.models import BACKENDS, Backend, PluginError
from itemscale.collect.models._load import register_backends
from itemscale.core.plugins import Registry
from itemscale.core.responses import read_run

TOY = Path(__file__).resolve().parents[1] / "data" / "toy_backend"

#: a package whose backend entry points are broken each in its own way, one group each (the
#: first is the real group: the CLI test sees it), and a working importer
BROKEN_PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "plugin-cases"
version = "0.2.0"

[project.entry-points."itemscale.backends"]
broken = "broken_import:register"

[project.entry-points."itemscale.importers"]
mytool = "broken_plugins:register_importers"

[project.entry-points."itemscale_tests.not_callable"]
table = "broken_plugins:NOT_A_FUNCTION"

[project.entry-points."itemscale_tests.wrong_type"]
odd = "broken_plugins:wrong_type"

[project.entry-points."itemscale_tests.duplicate"]
again = "broken_plugins:duplicate"

[project.entry-points."itemscale_tests.bad_name"]
spaced = "broken_plugins:bad_name"

[project.entry-points."itemscale_tests.raises"]
boom = "broken_plugins:raises"

[tool.setuptools]
py-modules = ["broken_import", "broken_plugins"]
"""

BROKEN_IMPORT = "import a_module_nobody_installed\n\n\ndef register(register):\n    pass\n"

BROKEN_PLUGINS = """\
from itemscale.collect.importers import Importer, ImportInputError, ImportOption
from itemscale.collect.models import Backend, lazy

NOT_A_FUNCTION = {"toy": "not a plugin"}
GOOD = Backend(parse_options=lazy("json:loads"), load=lazy("json:loads"))


def wrong_type(register):
    register("odd", {"load": None})


def duplicate(register):
    register("hf", GOOD)


def bad_name(register):
    register("no spaces allowed", GOOD)


def raises(register):
    register("fine", GOOD)
    raise RuntimeError("the plugin's own bug")


def run_mytool_import(*, files, run_dir, dry_run):
    raise ImportInputError(f"mytool: read {files}")


def register_importers(register):
    register(
        "mytool",
        Importer(
            run=run_mytool_import,
            help="MyTool result files",
            description="Import MyTool results.",
            options=(ImportOption(("files",), nargs="+", metavar="FILE"),),
        ),
    )
"""


@pytest.fixture(scope="module")
def toy_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("setuptools", reason="building the toy package needs setuptools")
    return install_copy(TOY, tmp_path_factory.mktemp("toy"))


@pytest.fixture(scope="module")
def broken_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("setuptools", reason="building the broken package needs setuptools")
    root = tmp_path_factory.mktemp("broken")
    source = root / "plugin-cases"
    source.mkdir()
    (source / "pyproject.toml").write_text(BROKEN_PYPROJECT)
    (source / "broken_import.py").write_text(BROKEN_IMPORT)
    (source / "broken_plugins.py").write_text(BROKEN_PLUGINS)
    return pip_install(source, root / "site")


def test_a_sweep_runs_a_backend_installed_from_another_package(
    toy_site: Path, tmp_path: Path
) -> None:
    suite = write_benchmark(tmp_path / "suite", 2)
    models = [
        {"name": "toy0", "backend": "toy", "model": "toy"},
        {"name": "toy1", "backend": "toy", "model": "toy", "options": {"shift": 1}},
    ]
    protocol = write_protocol(tmp_path / "p.toml", suite, frames=(2, 4), models=models)
    done = itemscale_with(
        toy_site, "sweep", str(protocol), "--no-progress", "--concurrency", "3", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    df, meta = read_run(tmp_path / "run")
    assert sorted(set(df["model"])) == ["toy0", "toy1"]
    assert set(df["status"]) == {"ok"}
    # the option reached the backend: toy1 answers the letter after toy0's, cell for cell
    key = ["item_id", "config_id", "repeat"]
    pairs = df[df["model"] == "toy0"].merge(df[df["model"] == "toy1"], on=key)
    assert len(pairs) == len(df) // 2 > 0
    after = {"A": "B", "B": "C", "C": "D", "D": "A"}
    assert [after[a] for a in pairs["answer_x"]] == list(pairs["answer_y"])
    specs = {entry["name"]: entry["spec"] for entry in meta["model_specs"].values()}
    assert specs["toy0"]["backend"] == specs["toy1"]["backend"] == "toy"
    assert (specs["toy0"]["processor"], specs["toy1"]["processor"]) == ({"shift": 0}, {"shift": 1})
    for model in ("toy0", "toy1"):
        counted = meta["sweep"]["served"][model]
        cells = int((df["model"] == model).sum())
        # `--concurrency 3` reached the backend through `serving.requests_in_flight`: three
        # requests per call although the batch size is 1
        assert counted["max_in_flight"] == 3
        assert counted["logprob_requests"] == cells
        assert counted["logprob_missing"] == counted["replies_cut"] == 0


def test_the_protocol_lists_a_plugins_backend_among_the_known_ones(
    toy_site: Path, tmp_path: Path
) -> None:
    suite = write_benchmark(tmp_path / "suite", 1)
    models = [{"name": "m", "backend": "tyo", "model": "toy"}]
    protocol = write_protocol(tmp_path / "p.toml", suite, frames=(2,), models=models)
    done = itemscale_with(toy_site, "sweep", str(protocol), "--dry-run", cwd=tmp_path)
    assert done.returncode == 2
    assert "Input should be 'hf', 'openai', 'builtin' or 'toy' (got 'tyo')" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_plugin_that_cannot_be_imported_is_one_line_naming_it(
    broken_site: Path, tmp_path: Path
) -> None:
    suite = write_benchmark(tmp_path / "suite", 1)
    protocol = write_protocol(tmp_path / "p.toml", suite, frames=(2,))
    done = itemscale_with(broken_site, "sweep", str(protocol), "--dry-run", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "itemscale sweep: error: backend plugin entry point 'broken = broken_import:register' "
        "of package plugin-cases 0.2.0 (group itemscale.backends) cannot be imported: "
        "ModuleNotFoundError: No module named 'a_module_nobody_installed'\n"
    )
    # a command that reads no backend is not stopped by it
    assert itemscale_with(broken_site, "--version", cwd=tmp_path).returncode == 0


def test_an_importer_from_another_package_gets_its_subcommand(
    broken_site: Path, tmp_path: Path
) -> None:
    shown = itemscale_with(broken_site, "import", "--help", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "MyTool result files" in shown.stdout
    done = itemscale_with(broken_site, "import", "mytool", "a.json", "-o", "run", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        "itemscale import: error: mytool: read ['a.json']\n",
    )


@pytest.fixture
def broken_path(broken_site: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(broken_site))
    yield broken_site


@pytest.mark.parametrize(
    ("group", "said"),
    [
        (
            "not_callable",
            "entry point 'table = broken_plugins:NOT_A_FUNCTION' of package plugin-cases 0.2.0 "
            "(group itemscale_tests.not_callable) is a dict, not a function that takes "
            "`register` and registers backends",
        ),
        (
            "wrong_type",
            "entry point 'odd = broken_plugins:wrong_type' of package plugin-cases 0.2.0 "
            "(group itemscale_tests.wrong_type) registers backend 'odd' as a dict, not an "
            "itemscale.collect.models.Backend",
        ),
        (
            "duplicate",
            "entry point 'again = broken_plugins:duplicate' of package plugin-cases 0.2.0 "
            "(group itemscale_tests.duplicate) registers backend 'hf', which itemscale (built "
            "in) registered already; uninstall one of the two packages",
        ),
        (
            "bad_name",
            "(group itemscale_tests.bad_name) registers the backend name 'no spaces allowed': "
            "a name is letters, digits",
        ),
        (
            "raises",
            "(group itemscale_tests.raises) failed while registering: RuntimeError: the "
            "plugin's own bug",
        ),
    ],
)
def test_a_broken_plugin_is_a_typed_error_and_registers_nothing(
    broken_path: Path, group: str, said: str
) -> None:
    registry = Registry(
        what="backend", group=f"itemscale_tests.{group}", kind=Backend, builtin=register_backends
    )
    for _ in range(2):  # every lookup says it again: the registry is never half-filled
        with pytest.raises(PluginError) as info:
            _ = "hf" in registry
        assert said in str(info.value)
        assert str(info.value).startswith("backend plugin ")


def test_the_builtin_backends_and_importers_need_no_installed_metadata() -> None:
    """itemscale's own entries come from its built-in plugin, called directly, not from its
    installed metadata: a source tree on PYTHONPATH (or a stale editable install) has them all,
    and once only (the project declares no entry point of its own groups)."""
    assert [str(BACKENDS.origin(name)) for name in BACKENDS] == ["itemscale (built in)"] * 3
    assert [str(IMPORTERS.origin(name)) for name in IMPORTERS] == ["itemscale (built in)"] * 3
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert BACKENDS.group not in pyproject and IMPORTERS.group not in pyproject


def test_docs_show_the_package_the_test_installs() -> None:
    """docs/extending.md's "A backend as a separate package" shows these very files."""
    page = (REPO / "docs" / "extending.md").read_text(encoding="utf-8")
    for name, fence in (("pyproject.toml", "toml"), ("toy_backend.py", "python")):
        text = (TOY / name).read_text(encoding="utf-8")
        assert f"```{fence}\n{text}```\n" in page, f"docs/extending.md does not show {name}"
    assert "plugin-cases 0.2.0 (group itemscale.backends) cannot be imported" in page
