"""Provenance of a sweep: what produced the table, recorded in `run.json` beside it."""

from __future__ import annotations

import platform
import socket
import subprocess
import sys
from pathlib import Path

from ...core.version import __version__
from ._records import DecoderInfo, HostInfo, ToolInfo


def command_output(args: list[str], cwd: Path | None = None) -> str | None:
    """A short command's stripped output; None when it cannot run, times out or fails."""
    try:
        out = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def git_commit(path: Path | None = None) -> str | None:
    """The commit of the itemscale source tree, when it is a git checkout (else None)."""
    where = path or Path(__file__).resolve().parent
    commit = command_output(["git", "rev-parse", "HEAD"], where)
    if commit is None or len(commit) != 40:
        return None
    dirty = command_output(
        ["git", "status", "--porcelain", "--untracked-files=no", "--", "."], where
    )
    return commit + ("+dirty" if dirty else "")


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
