"""Shared test setup. Torch runs on one thread: two threads on two shared cores run 20-50x
slower."""

from __future__ import annotations

import atexit
import fcntl
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

from _support.paths import shared

# Property tests draw the same examples on every run, so a red CI is reproducible and never a
# roll of the dice; `ITEMSCALE_HYPOTHESIS=explore` draws fresh ones to hunt for new failures.
settings.register_profile("deterministic", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("ITEMSCALE_HYPOTHESIS", "deterministic"))

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

if os.environ.get("PYTEST_XDIST_WORKER") and "RAY_TMPDIR" not in os.environ:
    # `ray.init()` joins a cluster it finds recorded in Ray's temporary folder (/tmp/ray), so
    # under two workers one worker's test joined the cluster the other's had started: each
    # worker (and every process it starts) keeps its own, short for Ray's socket paths
    _ray_tmp = tempfile.mkdtemp(prefix=f"ray-{os.environ['PYTEST_XDIST_WORKER']}-", dir="/tmp")
    os.environ["RAY_TMPDIR"] = _ray_tmp
    atexit.register(shutil.rmtree, _ray_tmp, ignore_errors=True)

try:  # torch is optional for the analysis tests
    import torch

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    pass


#: the suite's longest test (it runs `make demo`, about half the suite's time alone): first
LONGEST = "tests/project/test_docs_commands.py::test_document_commands_run_as_written[README.md]"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    _skip_extended(items)
    _slow_first(items)


def _skip_extended(items: list[pytest.Item]) -> None:
    """Tests marked `extended` run under ITEMSCALE_TEST_EXTENDED=1, as .ci/run sets; a plain
    `make test` skips them (at most 60 s of the suite, named in docs/performance.md)."""
    if os.environ.get("ITEMSCALE_TEST_EXTENDED") == "1":
        return
    skip = pytest.mark.skip(reason="an extended test: ITEMSCALE_TEST_EXTENDED=1 runs it (CI does)")
    for item in items:
        if item.get_closest_marker("extended") is not None:
            item.add_marker(skip)


def _slow_first(items: list[pytest.Item]) -> None:
    """The slow modules first (any test marked `slow`; the docs commands, whose README test
    runs the demo, first of all), each module's tests kept together and in their order. Under
    `make test`'s two workers (`-n 2 --dist worksteal`) the long tests then start at once
    and the other worker takes the short ones, instead of the demo starting last and running
    alone at the end."""
    rank: dict[str, int] = {}
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        slow = item.get_closest_marker("slow") is not None
        mine = 0 if item.nodeid == LONGEST else 1 if slow else 2
        rank[module] = min(rank.get(module, 2), mine)
    items.sort(key=lambda item: (rank[item.nodeid.split("::", 1)[0]], item.nodeid != LONGEST))


@pytest.fixture
def fixtures_dir() -> Path:
    """../shared/fixtures, or a skip with its reason (a failure under
    ITEMSCALE_REQUIRE_FIXTURES=1, as CI runs)."""
    return shared()


# -- expensive set-up built once per test session ------------------------------------------
# Each fixture below is read-only for the tests that take it: a test that changes the folder
# copies it first (`shutil.copytree(folder, tmp_path / "copy")`), so the next test sees the
# same files. Add a fixture here when a second test module would build the same thing.


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]
) -> Path:
    """`build(folder)` run once per test session, also under `make test`'s two workers
    (pytest-xdist): the workers share the session's temporary root, and the first to take
    the folder's lock builds it while the other waits, then reads the same files."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # each worker's base folder sits in the session's one
    folder = root / f"built-once-{name}"
    with (root / f"built-once-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / f"built-once-{name}.done").exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a failed build left
            folder.mkdir()
            build(folder)
            (root / f"built-once-{name}.done").touch()
    return folder


@pytest.fixture(scope="session")
def shipped_release_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run folder of the packaged seed-paper release (5 models, 786 questions), imported
    once per session (about 3 s of CPU each time it was imported per module)."""
    from itemscale.workflows import import_release

    folder = built_once(tmp_path_factory, "shipped_release", lambda f: import_release(f / "run"))
    return folder / "run"


@pytest.fixture(scope="session")
def small_synthetic_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 3-video synthetic suite (seed 11, a third of the videos in the test split), generated
    once per session: the built-in model's recipe tests all train and decode on it."""
    from itemscale.collect.synth import generate_suite

    def build(folder: Path) -> None:
        generate_suite(folder, n_videos=3, seed=11, test_fraction=0.34)

    return built_once(tmp_path_factory, "small_synthetic_suite", build)
