"""The report's item response section: shown for a run large enough for a 2PL fit (at least
10 respondents and 50 items), with the fit `itemscale irt` makes, the planted items whose
outcome falls as ability rises, and re-rendered byte for byte by `verify`; absent (and the page
as before) for a smaller run."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from _support.runs import IRT_PLANTED, irt_table, make_irt_run, make_run
from itemscale.analysis.measures import IRT_METHOD
from itemscale.cli import main
from itemscale.report import build_artifact, verify_artifact
from itemscale.report._html_irt import IRT_MIN_ITEMS, IRT_MIN_RESPONDENTS, report_fit

#: The page's navigation before the item response section existed (a small run keeps it).
OLD_NAV = (
    '<nav><a href="#measures">curves and trajectories</a><a href="#cascade">compute savings</a>'
    '<a href="#intervention">intervention</a><a href="#audit">frame audit</a>'
    '<a href="#items">items</a><a href="#provenance">provenance</a></nav>'
)


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("irt") / "run"
    make_irt_run(run)
    return build_artifact(run, bootstrap=10, seed=0)


def _section(page: str) -> str:
    start = page.index("<section id='irt'>")
    return page[start : page.index("</section>", start)]


def test_the_section_shows_the_fit_and_the_planted_items(artifact: Path, tmp_path: Path) -> None:
    page = (artifact / "report.html").read_text(encoding="utf-8")
    assert '<a href="#irt">item response model</a>' in page
    section = _section(page)
    assert html.escape(IRT_METHOD) in section and "A model fit" in section
    assert f"at least {IRT_MIN_RESPONDENTS} respondents and {IRT_MIN_ITEMS} items" in section
    assert "18 (model, series, budget) respondents on 80 multiple-choice items" in section
    assert section.count('<svg class="figure irt-information"') == 1
    assert section.count('<g class="irt-budget">') == 18  # every (model, budget) marked
    # the same fit as `itemscale irt RUN --json`: every ability in the table, as printed there
    assert main(["irt", str(artifact.parent), "--json", str(tmp_path / "fit.json")]) == 0
    fit = json.loads((tmp_path / "fit.json").read_text())
    budgets = section[section.index("irt-budgets") : section.index("irt-negative")]
    for r in fit["respondents"]:
        assert f"{r['theta']:.2f} ({r['theta_se']:.2f})" in budgets
    assert budgets.count("<tr><td>") == 18
    # budgets in frame order within each model
    assert re.findall(r"<td>model 0 / default</td><td>(\w+)</td>", budgets) == [
        "8f",
        "16f",
        "32f",
        "64f",
        "128f",
        "256f",
    ]
    negative = section[section.index("irt-negative") :]
    listed = re.findall(r"<tr><td>(q\d+)</td>", negative)
    planted = {f"q{j:03d}" for j in range(IRT_PLANTED)}
    assert len(listed) >= 3 and set(listed) <= planted  # found, and nothing else
    by_id = {it["item_id"]: it for it in fit["items"]}
    first = by_id[listed[0]]
    assert f"<td class='num'>{first['discrimination']:.2f}</td>" in negative
    assert f"<td class='num'>{first['discrimination_se']:.2f}</td>" in negative
    assert f"{len(listed)} of 80 items have a discrimination below zero" in section


def test_verify_re_renders_the_section_and_catches_an_edit(artifact: Path) -> None:
    assert verify_artifact(artifact).ok
    report = artifact / "report.html"
    page = report.read_text(encoding="utf-8")
    section = _section(page)
    edited = section.replace("converged in", "converged after", 1)
    assert edited != section
    report.write_text(page.replace(section, edited), encoding="utf-8")
    try:
        result = verify_artifact(artifact)
        assert not result.ok
        assert any(
            "report.html" in p and "differs from the report rendered again" in p
            for p in map(str, result.problems)
        ), result.problems
    finally:
        report.write_text(page, encoding="utf-8")


def test_the_fit_needs_ten_respondents_and_fifty_items() -> None:
    assert report_fit(irt_table(models=1)) is None  # 6 respondents
    assert report_fit(irt_table(models=2, n_items=IRT_MIN_ITEMS - 1)) is None
    fit = report_fit(irt_table(models=2, n_items=IRT_MIN_ITEMS))  # 12 respondents, 50 items
    assert fit is not None and len(fit.respondents) == 12 and len(fit.items) == IRT_MIN_ITEMS


def test_a_run_too_small_for_a_fit_has_no_section(tmp_path: Path) -> None:
    run = tmp_path / "run"
    make_run(run)  # 2 models x (3 budgets + text-only) = 8 respondents, 24 items
    page = (build_artifact(run, bootstrap=10, seed=0) / "report.html").read_text(encoding="utf-8")
    assert OLD_NAV in page
    assert "id='irt'" not in page and "irt-information" not in page
    assert '</section>\n<section id="cascade">' in page
