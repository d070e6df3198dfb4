"""The one-line explanations of itemscale's terms: each printed once, where the term first
appears, in the console and the report, and each listed in docs/glossary.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from _support.paths import REPO
from itemscale.analysis.measures import GLOSSARY
from itemscale.cli import main


def _two_model_run(tmp_path: Path) -> Path:
    rows = ["model,item_id,video_id,config,order,frames,correct,answer"]
    for model in ("m1", "m2"):
        for i in range(8):
            for order, frames in enumerate((0, 4, 8, 16)):
                label = "blind" if frames == 0 else f"{frames}f"
                right = (i * 5 + order * 3 + len(model)) % 4 < 2
                rows.append(
                    f"{model},q{i},v{i // 2},{label},{order},{frames},{int(right)},"
                    f"{'A' if right else 'B'}"
                )
    table = tmp_path / "results.csv"
    table.write_text("\n".join(rows) + "\n")
    run = tmp_path / "run"
    assert main(["import", "table", str(table), "-o", str(run)]) == 0
    return run


def test_every_term_is_in_the_glossary_page() -> None:
    page = (REPO / "docs" / "glossary.md").read_text(encoding="utf-8").lower()
    missing = [term for term in GLOSSARY if term.lower() not in page]
    assert not missing, f"docs/glossary.md does not list {missing}"


def test_the_console_explains_each_term_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _two_model_run(tmp_path)
    capsys.readouterr()
    assert main(["analyze", str(run), "--bootstrap", "20"]) == 0
    out = capsys.readouterr().out
    assert out.count("== m1") == out.count("== m2") == 1
    for term in ("series", "matched grid", "oracle headroom", "terminal regression"):
        assert out.count(GLOSSARY[term]) == 1, term
    # on the line of the term's first appearance, not in a legend elsewhere
    first_headroom = next(line for line in out.splitlines() if "oracle headroom:" in line)
    assert GLOSSARY["oracle headroom"] in first_headroom
    later = out[out.index("== m2") :]
    assert "oracle headroom:" in later and GLOSSARY["oracle headroom"] not in later
    # a second command explains again: the record of what was shown is per output
    assert main(["analyze", str(run), "--bootstrap", "20"]) == 0
    assert capsys.readouterr().out.count(GLOSSARY["oracle headroom"]) == 1

    assert main(["cascade", str(run), "--bootstrap", "20"]) == 0
    cascade = capsys.readouterr().out
    assert cascade.count(GLOSSARY["frontier"]) <= 1
    assert cascade.count(GLOSSARY["series"]) == 1


def test_the_report_explains_its_headline_terms(tmp_path: Path) -> None:
    import html

    run = _two_model_run(tmp_path)
    assert main(["report", str(run), "--bootstrap", "20"]) == 0
    page = html.unescape((run / "artifact" / "report.html").read_text(encoding="utf-8"))
    for term in ("matched grid", "oracle headroom", "text overwrite", "series"):
        assert GLOSSARY[term] in page, term


def test_a_closed_pipe_ends_quietly_and_keeps_the_written_file(tmp_path: Path) -> None:
    import subprocess
    import sys

    run = _two_model_run(tmp_path)
    out = tmp_path / "m.json"
    command = f"{sys.executable} -m itemscale analyze {run} --bootstrap 20 --json {out} | head -n 1"
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.startswith("itemscale analyze:")
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr
    assert done.returncode in (0, 141)  # 141 when the pipe closed before the last line
    assert out.is_file()
