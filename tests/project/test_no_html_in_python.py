"""HTML is made by the templates in src/itemscale/report/templates (Jinja2, autoescaping), not by
Python strings: a page written in f-strings escapes by hand at every interpolation, and one
forgotten escape is a hole. The SVG post-processing of figures may stay in Python."""

from __future__ import annotations

import re
from pathlib import Path

from _support.paths import SRC

TAG = re.compile(r"<(div|td|tr|th|table|span|section|h[1-6]|p|ul|li|a|details|summary)[\s>/]")

#: Lines allowed to hold a tag, each with why (the issue allows at most five).
EXCEPTIONS: dict[str, str] = {}


def _python_lines_with_tags() -> list[str]:
    found = []
    for path in sorted((SRC / "itemscale").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if TAG.search(line):
                found.append(f"{path.relative_to(SRC).as_posix()}:{number}: {line.strip()}")
    return found


def test_no_html_markup_in_python_source() -> None:
    found = [f for f in _python_lines_with_tags() if f.split(":")[0] not in EXCEPTIONS]
    assert not found, "HTML belongs in report/templates:\n" + "\n".join(found)
    assert len(EXCEPTIONS) <= 5


def test_the_rule_sees_a_tag(tmp_path: Path) -> None:
    assert TAG.search('return f"<td class=x>{v}</td>"')
    assert TAG.search("<p>")
    assert not TAG.search("if a<b and b>c:")
    assert not TAG.search('"<svg width=3>"')
