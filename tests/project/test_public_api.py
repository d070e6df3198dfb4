"""The curated public API resolves, and analysis does not pull in torch or a decoder."""

from __future__ import annotations

import subprocess
import sys

import itemscale


def test_every_public_name_resolves() -> None:
    for name in itemscale.__all__:
        assert getattr(itemscale, name) is not None, name


def test_analysis_imports_neither_torch_nor_a_decoder() -> None:
    code = (
        "import sys, itemscale\n"
        "from itemscale import analyze_responses, cascade_report, audit_transitions, import_table\n"
        "import itemscale.cli.cmd_analyze\n"
        "bad = [m for m in ('torch', 'av', 'transformers', 'ray') if m in sys.modules]\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
