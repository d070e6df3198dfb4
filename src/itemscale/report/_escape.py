"""The one way the report's pages escape text: model outputs, item ids, model names and benchmark
names are untrusted, so every piece of text that reaches HTML or SVG goes through `esc`."""

from __future__ import annotations

import html


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)
