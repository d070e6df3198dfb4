"""The report's template environment escapes what it is given and refuses a misspelt name."""

from __future__ import annotations

import jinja2
import pytest

from itemscale.report._templating import Markup, _environment

HOSTILE = "<script>alert(\"x\")</script> & 'q'"


def test_text_is_escaped_and_markup_is_not() -> None:
    template = _environment().from_string("<td>{{ text }}</td>{{ section }}")
    out = template.render(text=HOSTILE, section=Markup("<p>ok</p>"))
    assert "<script>" not in out
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#39;q&#39;" in out
    assert out.endswith("<p>ok</p>")


def test_a_misspelt_variable_is_an_error_not_an_empty_cell() -> None:
    with pytest.raises(jinja2.UndefinedError):
        _environment().from_string("{{ mising }}").render(missing=1)
