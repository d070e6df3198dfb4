"""The report's stylesheet and script, files shipped beside this module (`static/`) and inlined
into the page (no CDN, no external file: the page opens offline).

The script only reads the JSON data block and builds the item explorer with `textContent`, never
`innerHTML`, so a model output cannot become markup. The page's Content-Security-Policy allows
exactly this script (by the sha256 of the file's bytes), so even an injected `<script>` would
not run.
"""

from __future__ import annotations

import base64
import hashlib
from importlib.resources import files
from typing import Final


def _static(name: str) -> str:
    return (files("itemscale.report") / "static" / name).read_text(encoding="utf-8")


CSS: Final[str] = _static("report.css")
JS: Final[str] = _static("explorer.js")


def script_hash(script: str) -> str:
    """The CSP source expression that allows exactly `script`."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"
