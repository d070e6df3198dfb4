"""The one place HTML is made: Jinja2 templates (`templates/`) with autoescaping on, so untrusted
text is escaped at every interpolation; sections render to `Markup` so a page places them
without escaping twice, and `StrictUndefined` makes a misspelt variable an error."""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

__all__ = ["Markup", "render"]


@cache
def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("itemscale.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )


def render(template: str, /, **context: Any) -> Markup:
    """Render `templates/<template>` with `context`; the result is markup (already escaped)."""
    return Markup(_environment().get_template(template).render(**context))
