"""How the figures' SVG post-processing (`_plot`) escapes text: model names and labels are
untrusted, so every piece of text it writes into SVG goes through `esc` (HTML is escaped by the
templates, `_templating`)."""

from __future__ import annotations

import html


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)
