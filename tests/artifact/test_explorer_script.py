"""The item explorer's script ships as a static file; the report places exactly that text and
its Content-Security-Policy allows exactly it (by the sha256 of the bytes placed)."""

from __future__ import annotations

import base64
import hashlib
import html
import re
from importlib.resources import files
from pathlib import Path

from _support.runs import make_run
from itemscale.report import build_artifact


def test_the_report_places_the_shipped_script_and_its_csp_allows_exactly_it(
    tmp_path: Path,
) -> None:
    make_run(tmp_path / "run", n_items=6, with_audit=False)
    page = (build_artifact(tmp_path / "run", bootstrap=10, seed=0) / "report.html").read_text(
        encoding="utf-8"
    )
    (script,) = re.findall(r"<script>(.*?)</script>", page, re.S)
    shipped = (files("itemscale.report") / "static" / "explorer.js").read_text(encoding="utf-8")
    assert script == shipped and "textContent" in script and "innerHTML" not in script
    csp = html.unescape(
        re.findall(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)[0]
    )
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    assert re.findall(r"script-src ([^;]*);", csp) == [f"'sha256-{digest}'"]
