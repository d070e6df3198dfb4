"""The report's stylesheet and script (`static/`), inlined so the page opens offline. The
Content-Security-Policy allows exactly this script (by its sha256), so even an injected
`<script>` would not run.
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
