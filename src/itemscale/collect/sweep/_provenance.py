"""Provenance of a sweep: what produced the table, recorded in `run.json` beside it."""

from __future__ import annotations

import platform
import socket
import subprocess
import sys
from pathlib import Path

from ...core.version import __version__
from ._records import DecoderInfo, HostInfo, ToolInfo


def git_commit(path: Path | None = None) -> str | None:
    """The commit of the itemscale source tree, when it is a git checkout (else None)."""
    where = path or Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    commit = out.stdout.strip()
    if out.returncode != 0 or len(commit) != 40:
        return None
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no", "--", "."],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    return commit + ("+dirty" if dirty.stdout.strip() else "")


def decoder_info() -> DecoderInfo:
    try:
        import av
    except ImportError:  # pragma: no cover - the sweep needs PyAV anyway
        return {"name": "PyAV", "version": None}
    libs = getattr(av, "library_versions", {}) or {}
    return {
        "name": "PyAV",
        "version": av.__version__,
        "ffmpeg": {name: ".".join(str(p) for p in ver) for name, ver in libs.items()},
    }


def host_info() -> HostInfo:
    return {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "machine": platform.machine(),
    }


def tool_info() -> ToolInfo:
    return {"name": "itemscale", "version": __version__, "git_commit": git_commit()}
