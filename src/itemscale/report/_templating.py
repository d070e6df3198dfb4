"""The one place HTML is made: Jinja2 templates shipped beside this module (`templates/`), with
autoescaping on, so model outputs, item ids and model names (untrusted text) are escaped by the
template engine at every interpolation instead of by hand.

Sections render to `Markup` so a page template can place them without escaping them twice;
`StrictUndefined` makes a misspelt variable an error instead of an empty cell. Jinja2 is a core
dependency (the report renders on the light install), chosen because it is the templating
library the Python tools around this one already use and autoescapes by default for `.html`."""

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
