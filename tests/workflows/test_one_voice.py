"""One voice: `itemscale analyze`'s console and the report say the same headline numbers.

For the shipped release labels (five models, each on its own grid, with the paper comparison
`itemscale demo` writes), for small generated response tables (one model, two models on one
grid) and for a small generated sweep (the built-in model on a tiny suite of real videos), the
console output and report.html are built from the same run, every headline number is read
back out of both texts, and each must be the same number in the same scope: the visual
budgets alone, or the grid with the text-only answer as budget 0. Nothing is compared with the
analysis' JSON; only what a reader sees on either side.
"""

from __future__ import annotations

import html
import io
import json
import re
from pathlib import Path

import pytest

from _support.runs import make_run
from _support.sweep import write_benchmark, write_protocol
from itemscale.analysis.measures import GRID_WITH_TEXT_TITLE, MeasureKind, measures_for
from itemscale.cli import main
from itemscale.cli._paper import print_comparison
from itemscale.core.responses import write_json_atomic
from itemscale.report import COMPARISON_FILE, CurveHeadline, PaperComparison, build_artifact
from itemscale.workflows import compare_with_paper

#: A number as both sides print it; a budget's label (`f32`, `16f_151k`) is not one.
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
Rows = dict[str, list[str]]


def numbers(text: str) -> list[str]:
    return NUMBER.findall(text)


def _console(run: Path, bootstrap: int, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["analyze", str(run), "--bootstrap", str(bootstrap), "--seed", "0"]) == 0
    return capsys.readouterr().out


def _report(run: Path, bootstrap: int) -> str:
    page = build_artifact(run, bootstrap=bootstrap, seed=0) / "report.html"
    return page.read_text(encoding="utf-8")


def _unescape(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", fragment)).split())


def _labels(grid: str) -> list[str]:
    """A grid's budgets, however a side joins them (`a < b`, or `a, b` on a partial order)."""
    return re.split(r" < |, ", grid)


def report_headline(page: str) -> str:
    found = re.search(r'<p class="headline">(.*?)</p>', page, re.S)
    assert found is not None
    return _unescape(found.group(1))


def report_tables(page: str, model: str) -> dict[str, Rows]:
    """The model's headline tables by block (`binary`, `binary_with_text`): header -> numbers."""
    start = page.index(f"<h3>{html.escape(model)} <span class='muted'>series")
    end = page.find("<h3>", page.index("</h3>", start) + 5)
    # the next model's part begins with its own <h3>; the flips section too, after the tables
    section = page[start : end if end > 0 else len(page)]
    tables: dict[str, Rows] = {}
    for block, body in re.findall(
        r"<table class='headline' data-block='(\w+)'><tbody>(.*?)</tbody>", section, re.S
    ):
        rows = re.findall(r"<tr><th>(.*?)</th><td class='num'>(.*?)</td>", body, re.S)
        tables[block] = {
            _unescape(th): [_unescape(td)] if th == "grid" else numbers(_unescape(td))
            for th, td in rows
        }
    return tables


def console_blocks(out: str, model: str) -> dict[str, Rows]:
    """The model's measure lines by scope (`binary`: the visual budgets; `binary_with_text`),
    and its accuracy curve (`accuracy`): label -> numbers."""
    block = next(b for b in out.split("\n== ")[1:] if b.startswith(f"{model} "))
    lines = block.splitlines()
    scopes: dict[str, Rows] = {"accuracy": {}, "binary": {}, "binary_with_text": {}}
    scope = "accuracy"
    for line in lines:
        text = line.strip()
        if text.startswith("visual budgets only"):
            scope = "binary"
        elif text == f"{GRID_WITH_TEXT_TITLE}:":
            scope = "binary_with_text"
        elif scope == "binary_with_text" and text.startswith("grid "):
            grid, _, items = text.removeprefix("grid ").rpartition(": ")
            scopes[scope]["grid"] = [grid, *numbers(items)]
        elif text.startswith("matched grid:"):
            scopes["binary"]["matched grid"] = numbers(text.split("   (")[0])
        elif scope == "accuracy" and re.match(r"\S+ +\d", text):
            label, rest = text.split(maxsplit=1)
            scopes["accuracy"][label] = numbers(rest.split("   noanswer")[0])
        elif ":" in text and scope != "accuracy":
            label, rest = text.split(":", 1)
            # the term's explanation, printed beside its first appearance, holds no result
            scopes[scope].setdefault(label, numbers(rest.split("   (")[0]))
    return scopes


def assert_tables_agree(out: str, page: str, model: str) -> int:
    """Every registered measure both sides print, in both scopes; the count compared."""
    console, report = console_blocks(out, model), report_tables(page, model)
    compared = 0
    scopes: tuple[MeasureKind, ...] = ("binary", "binary_with_text")
    for kind in scopes:
        for unit in measures_for(kind):
            if unit.console_label is None or unit.report_label is None:
                continue
            if unit.report_label not in report[kind]:
                continue  # the report leaves an undefined measure out
            shown = report[kind][unit.report_label]
            said = console[kind][unit.console_label]
            assert shown and said[: len(shown)] == shown, (model, kind, unit.key, shown, said)
            compared += 1
    visual, with_text = report["binary"], report["binary_with_text"]
    assert console["binary"]["matched grid"][::2] == (
        visual["items on the matched grid"] + visual["items dropped (reasons)"]
    )
    grid, *items = console["binary_with_text"]["grid"]
    assert items[:1] == with_text["items on this grid"]
    (shown,) = with_text["grid"]
    assert _labels(grid.split(" (")[0]) == _labels(shown), (grid, shown)
    return compared


def console_headline(out: str) -> str:
    """The sentence `analyze` opens with: the paragraph between its first line and the models."""
    return " ".join(out.split("\n== ")[0].split("\n\n")[1].split())


#: One model's opening sentence (`report.CurveHeadline`), its additive verdict where it has one.
CURVE = re.compile(
    r"(?P<model>\S+): accuracy goes from (?P<first>\S+) at (?P<low>\S+) to (?P<last>\S+) at "
    r"(?P<high>\S+), (?:yet|and) (?P<harmful>\S+)% of the (?P<n>\d+) items \((?P<k>\d+)\) are right "
    r"at some budget and wrong at a larger one(?:, and choosing the budget per item would gain "
    r"(?P<headroom>\S+) points over the best single budget)?\."
    r"(?: An additive world .* gives (?P<additive>\S+)% against the observed (?P<observed>\S+)%)?"
)


def curve_numbers(sentence: str) -> dict[str, str | None]:
    found = CURVE.match(sentence)
    assert found is not None, sentence
    return found.groupdict()


def assert_every_headline_number_agrees(out: str, page: str) -> None:
    """One model's opening sentence, console and report: the same numbers, and each side's
    numbers are the other side's tables' (the console's sentence against the report's tables,
    the report's sentence against the console's lines)."""
    said, shown = curve_numbers(console_headline(out)), curve_numbers(report_headline(page))
    assert said == shown, (said, shown)
    model = str(said["model"])
    lines, tables = console_blocks(out, model), report_tables(page, model)["binary"]
    # the report's sentence against the console's lines
    assert lines["accuracy"][str(shown["low"])][0] == shown["first"]
    assert lines["accuracy"][str(shown["high"])][0] == shown["last"]
    harmful = lines["binary"]["harmful rate"]
    assert [harmful[0], *harmful[-2:]] == [shown["harmful"], shown["k"], shown["n"]]
    assert lines["binary"]["matched grid"][0] == shown["n"]
    if shown["headroom"] is not None:
        assert lines["binary"]["oracle headroom"][0] == shown["headroom"]
    if shown["additive"] is not None:
        additive = lines["binary"]["additive model (item + budget, no interaction)"]
        assert [additive[0], additive[3]] == [shown["observed"], shown["additive"]]
    # the console's sentence against the report's tables
    harmful = tables["harmful rate"]
    assert [harmful[0], *harmful[-2:]] == [said["harmful"], said["k"], said["n"]]
    assert tables["items on the matched grid"] == [said["n"]]
    if said["headroom"] is not None:
        assert tables["oracle headroom"][0] == said["headroom"]
    if said["additive"] is not None:
        test = re.search(
            r"<h4>Heterogeneity: visual budgets</h4>.*?harmful rate</th>(.*?)</tr>", page, re.S
        )
        assert test is not None
        assert numbers(_unescape(test.group(1)))[::3][:2] == [said["observed"], said["additive"]]
    assert assert_tables_agree(out, page, model) >= 8


def assert_one_model_sentence_agrees(out: str, page: str, model: str) -> None:
    """The report's opening sentence of one model against the console's lines it summarises."""
    sentence = report_headline(page)
    found = re.match(
        rf"{re.escape(model)}: accuracy goes from (\S+) at (\S+) to (\S+) at (\S+), (?:yet|and) "
        r"(\S+)% of the (\d+) items \((\d+)\) are right at some budget and wrong at a larger "
        r"one, and choosing the budget per item would gain (\S+) points over the best single "
        r"budget\. An additive world .* gives (\S+)% against the observed (\S+)%: .*"
        r"steadily worse with more: (\S+)% against (\S+)% additive",
        sentence,
    )
    assert found is not None, sentence
    first, low, last, high, harmful, n, k, headroom, add, obs, dec, dec_add = found.groups()
    console = console_blocks(out, model)
    assert console["accuracy"][low][0] == first and console["accuracy"][high][0] == last
    visual = console["binary"]
    assert visual["harmful rate"][0] == harmful and visual["harmful rate"][-2:] == [k, n]
    assert visual["matched grid"][0] == n
    assert visual["oracle headroom"][0] == headroom
    # the additive model of the visual budgets (the first printed), not the text-only grid's
    additive = visual["additive model (item + budget, no interaction)"]
    assert [additive[0], additive[3]] == [obs, add]
    trajectories = visual["by trajectory, observed vs additive"]
    assert trajectories[3:5] == [dec, dec_add]


@pytest.fixture(scope="module")
def two_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("voice") / "run"
    make_run(run, n_items=24, seed=3, models=("m1", "m2"), with_audit=False)
    return run


def test_one_generated_model_says_the_same_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    make_run(run, n_items=24, seed=0, models=("m1",), with_audit=False)
    out, page = _console(run, 50, capsys), _report(run, 50)
    assert console_headline(out) == report_headline(page)  # `analyze` opens with it too
    assert_one_model_sentence_agrees(out, page, "m1")
    assert_every_headline_number_agrees(out, page)
    assert assert_tables_agree(out, page, "m1") >= 10


@pytest.fixture(scope="module")
def small_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built-in model swept over 12 questions on 6 real H.264 videos at 2, 4 and 8 frames
    and with no frames (torch on one thread, as every test)."""
    root = tmp_path_factory.mktemp("sweep")
    suite = write_benchmark(root / "suite", 6)
    model = {"name": "tiny", "backend": "builtin", "model": "builtin", "dtype": "float32"}
    protocol = write_protocol(root / "protocol.toml", suite, models=[model])
    assert main(["sweep", str(protocol), "--no-progress"]) == 0
    return root / "run"


def test_a_small_generated_sweep_says_the_same_numbers(
    small_sweep: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, page = _console(small_sweep, 50, capsys), _report(small_sweep, 50)
    assert console_headline(out).startswith("tiny: accuracy goes from ")
    assert_every_headline_number_agrees(out, page)
    # the check reads each side: one number changed on either side fails it
    harmful = curve_numbers(console_headline(out))["harmful"]
    wrong = f"{float(str(harmful)) + 0.1:.1f}"
    line = re.search(r"\n  harmful rate: +(\S+)", out)
    assert line is not None and line.group(1) == harmful
    bad_console = out[: line.start(1)] + wrong + out[line.end(1) :]
    bad_sentence = out.replace(f"yet {harmful}% of", f"yet {wrong}% of", 1)
    bad_page = page.replace(f"yet {harmful}% of", f"yet {wrong}% of", 1)
    for bad_out, bad_report in ((bad_console, page), (bad_sentence, page), (out, bad_page)):
        assert (bad_out, bad_report) != (out, page)
        with pytest.raises(AssertionError):
            assert_every_headline_number_agrees(bad_out, bad_report)


def test_two_generated_models_on_one_grid_say_the_same_sentence(
    two_models: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, page = _console(two_models, 50, capsys), _report(two_models, 50)
    console = " ".join(out.split("\n\n")[1].split())
    assert console.startswith("Across 2 models on one grid (text-only < f8 < f16 < f32)")
    assert report_headline(page) == console
    ranges = re.search(
        r"budget 0 .*?, (\S+) to (\S+)% of the items.*gain (\S+) to (\S+) points", console
    )
    assert ranges is not None, console
    blocks = [console_blocks(out, m)["binary_with_text"] for m in ("m1", "m2")]
    harms = sorted([float(b["harmful rate"][0]) for b in blocks])
    rooms = sorted([float(b["oracle headroom"][0]) for b in blocks])
    assert [float(x) for x in ranges.groups()] == [harms[0], harms[1], rooms[0], rooms[1]]
    for model in ("m1", "m2"):
        assert assert_tables_agree(out, page, model) >= 10


def test_the_release_labels_say_the_same_numbers(
    shipped_release_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Five models on their own grids; with comparison.json written as `demo` writes it, the
    report's count of reproduced numbers is the console's (`demo`'s comparison table)."""
    run = tmp_path / "release"
    import shutil

    shutil.copytree(shipped_release_run, run)
    capsys.readouterr()
    measures = tmp_path / "measures.json"
    assert main(["analyze", str(run), "--bootstrap", "0", "--json", str(measures)]) == 0
    out = capsys.readouterr().out
    rows = compare_with_paper(json.loads(measures.read_text(encoding="utf-8")))
    write_json_atomic(run / COMPARISON_FILE, PaperComparison(tuple(rows)).as_json())
    table = io.StringIO()
    print_comparison(rows, table)
    page = _report(run, 0)

    console = " ".join(out.split("\n\n")[1].split())
    report = report_headline(page)
    assert report.startswith(console), (console, report)
    paper, visual = console.split(" On the visual budgets alone ")
    models = [b.split(" ", 1)[0] for b in out.split("\n== ")[1:]]
    assert len(models) == 5
    for model in models:
        blocks = console_blocks(out, model)
        with_text, alone = blocks["binary_with_text"], blocks["binary"]
        said = f"{model} {with_text['harmful rate'][0]}% and {with_text['oracle headroom'][0]}"
        assert said in paper, said
        said = f"{model} {alone['harmful rate'][0]}% and {alone['oracle headroom'][0]}"
        assert said in visual, said
        assert assert_tables_agree(out, page, model) >= 8
    reproduced = re.search(r"(\d+) of (\d+) published numbers reproduced", table.getvalue())
    assert reproduced is not None
    same, published = reproduced.groups()
    assert report.endswith(
        f"{same} of {published} of the seed paper's published numbers are reproduced to "
        "0.01 points (below)."
    )
    assert f"published numbers: {same} of {published} reproduced" in page


@pytest.mark.parametrize(("flips", "word"), [(0, "and"), (3, "yet")])
def test_the_opening_sentence_says_yet_only_against_a_flip(flips: int, word: str) -> None:
    """52.5 to 52.5 with no item flipping is no contrast: "yet 0.0% of the 40 items" would
    promise one (an lmms-eval log imported twice under two labels reads so)."""
    headline = CurveHeadline(
        model="m",
        grid=("kf8", "u16"),
        n_items=40,
        first_accuracy=0.525,
        last_accuracy=0.525,
        harmful_rate=flips / 40,
        harmful_items=flips,
        oracle_headroom=0.0,
        additive=None,
    )
    assert headline.text().startswith(
        f"m: accuracy goes from 52.5 at kf8 to 52.5 at u16, {word} {100 * flips / 40:.1f}% of "
        f"the 40 items ({flips}) are right at some budget"
    )
