"""Installing a package for a plugin test: built with pip into a folder of its own, never into
the environment, so a subprocess with that folder on PYTHONPATH sees its entry points as those
of an installed distribution (importlib.metadata reads its `*.dist-info`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from _support.paths import SRC


def install_copy(package: Path, root: Path) -> Path:
    """`package` (a source folder) copied under `root`, built and installed into `root/site`;
    returns the site folder."""
    source = shutil.copytree(package, root / package.name)  # pip builds in the copy
    return pip_install(source, root / "site")


def pip_install(package: Path, target: Path) -> Path:
    """`package` (a source folder pip may build in) installed into `target` alone, never into
    the environment; returns `target`."""
    done = subprocess.run(
        [
            sys.executable,
            *("-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"),
            *("--no-index", "--target", str(target), str(package)),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return target


def itemscale_with(
    site: Path | None, *args: str, cwd: Path, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """`python -m itemscale ARGS` in a fresh process, with `site` (if any) on its path."""
    path = os.pathsep.join([*([str(site)] if site is not None else []), str(SRC)])
    env = {**os.environ, "PYTHONPATH": path, "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "itemscale", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=cwd,
    )
