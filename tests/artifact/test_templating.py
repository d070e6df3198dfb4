"""The report's template environment escapes what it is given and refuses a misspelt name; the
page's markup lives in templates, and its script is the shipped file its CSP hash names."""

from __future__ import annotations

import base64
import hashlib
import re
from importlib.resources import files

import jinja2
import pytest

from _support.paths import SRC
from itemscale.report._assets import JS, script_hash
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


def test_the_content_security_policy_allows_the_script_file_as_shipped() -> None:
    shipped = (files("itemscale.report") / "static" / "explorer.js").read_bytes()
    digest = base64.b64encode(hashlib.sha256(shipped).digest()).decode("ascii")
    assert JS.encode("utf-8") == shipped and script_hash(JS) == f"'sha256-{digest}'"


def _command_flags() -> dict[str, set[str]]:
    import argparse

    from itemscale.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {
        # a retired flag still parses (with a note) but is hidden from --help: not a live one
        name: {o for a in p._actions if a.help != argparse.SUPPRESS for o in a.option_strings}
        for name, p in sub.choices.items()
    }


def test_every_command_a_page_suggests_takes_the_flags_it_names() -> None:
    """A page that says "run `itemscale intervene RUN_DIR --policy nested`" after the flag was
    renamed sends the reader to a warning; each suggested command line names live flags."""
    flags = _command_flags()
    report = SRC / "itemscale" / "report"
    sources = [*report.glob("templates/*.html"), *report.glob("*.py")]
    suggested = [
        (path.name, m.group(1), m.group(2))
        for path in sources
        for m in re.finditer(
            r"itemscale ([a-z][a-z-]+)((?: [^\n<`\"']*)?)", path.read_text("utf-8")
        )
        if m.group(1) in flags
    ]
    assert len(suggested) >= 5  # the not-run hints of every section
    for name, command, rest in suggested:
        for flag in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", rest):
            assert flag in flags[command], f"{name}: itemscale {command} has no {flag}"
