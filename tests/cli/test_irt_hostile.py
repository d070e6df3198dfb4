"""A fit file edited by hand and fits of degenerate data (docs/anchors.md, "What a fit and a
prediction cannot tell"): an edited or non-finite fit is refused naming the key, a fit of
outcomes all alike, one that did not converge and predictions from few or uniform anchor answers
say so, and `anchors --strata` out of range is refused or stated, never silently clamped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _support.runs import make_irt_run
from _support.tables import table
from itemscale.analysis.measures import IrtError, IrtFit, fitted_digest
from itemscale.cli import main
from itemscale.core.responses import normalise_responses, write_run


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(a run, its fit.json as `irt --json` wrote it, 10 anchors drawn from it)."""
    root = tmp_path_factory.mktemp("irt")
    make_irt_run(root / "R")
    assert main(["irt", str(root / "R"), "--json", str(root / "fit.json")]) == 0
    argv = ["anchors", str(root / "R"), "--k", "10", "--irt", str(root / "fit.json")]
    assert main([*argv, "--out", str(root / "a.txt")]) == 0
    return root / "R", root / "fit.json", root / "a.txt"


def _edited(fit: Path, out: Path, edit: object) -> Path:
    data = json.loads(fit.read_text())
    edit(data)  # type: ignore[operator]
    out.write_text(json.dumps(data))  # NaN and Infinity written as JSON's extension tokens
    return out


def _set(path: str, value: object) -> object:
    section, index, key = path.split(".")

    def edit(data: dict[str, list[dict[str, object]]]) -> None:
        data[section][int(index)][key] = value

    return edit


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (_set("items.0.difficulty", float("nan")), "items[0].difficulty: Input should be a finite"),
        (_set("respondents.2.theta", float("nan")), "respondents[2].theta: Input should be a fin"),
        (_set("items.3.discrimination", float("inf")), "items[3].discrimination: Input should be"),
        (lambda d: d.update(respondents=[]), "respondents: Tuple should have at least 1 item"),
        (lambda d: d["items"].__setitem__(1, d["items"][0]), "items: 1 repeated ('q000')"),
        (_set("items.0.difficulty", 1.25), "fit_digest does not match the fitted values"),
        (lambda d: d.update(converged=not d["converged"]), "fit_digest does not match"),
    ],
    ids=["nan-b", "nan-theta", "inf-a", "no-respondents", "repeated-item", "edited", "flag"],
)
def test_an_edited_fit_file_is_refused_naming_the_key(
    fitted: tuple[Path, Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    edit: object,
    said: str,
) -> None:
    run, fit, anchors = fitted
    bad = _edited(fit, tmp_path / "bad.json", edit)
    out = tmp_path / "pred.json"
    argv = ["analyze", str(run), "--anchors", str(anchors), "--irt", str(bad), "--json", str(out)]
    assert main([*argv, "--bootstrap", "20"]) == 2
    captured = capsys.readouterr()
    assert f"--irt {bad}: " in captured.err and said in captured.err, captured.err
    assert "nan" not in captured.out and not out.exists()
    assert main(["anchors", str(run), "--k", "10", "--irt", str(bad), "--out", str(out)]) == 2


def test_a_version_1_fit_is_read_and_its_caveats_said(
    fitted: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _, fit, _ = fitted

    def v1(data: dict[str, object]) -> None:
        data.update(schema_version=1, converged=False)
        del data["fit_digest"]
        for item in data["items"]:  # type: ignore[attr-defined]
            item["discrimination"] = 0.0

    zero = _edited(fit, tmp_path / "zero.json", v1)
    with pytest.raises(IrtError, match="every discrimination is 0"):
        IrtFit.from_json(zero.read_text(), where="zero.json")
    data = json.loads(zero.read_text())
    data["items"][0]["discrimination"] = 0.5
    read = IrtFit.from_json(json.dumps(data))
    assert read.fit_digest is None
    assert read.caveats()[0].startswith("the fit did not converge")


def _uniform_run(run: Path, right: float) -> Path:
    """3 models x 3 budgets x 20 items, every outcome `right`."""
    frames = [
        table(
            {f"q{j:02d}": [right] * 3 for j in range(20)},
            labels=["4f", "8f", "16f"],
            model=f"m{m}",
        )
        for m in range(3)
    ]
    import pandas as pd

    write_run(run, normalise_responses(pd.concat(frames, ignore_index=True)), {})
    return run


@pytest.mark.parametrize("right", [1.0, 0.0], ids=["all-right", "all-wrong"])
def test_outcomes_all_alike_say_cannot_tell_not_an_interval_of_width_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], right: float
) -> None:
    run = _uniform_run(tmp_path / "R", right)
    fit, anchors, pred = tmp_path / "fit.json", tmp_path / "a.txt", tmp_path / "pred.json"
    assert main(["irt", str(run), "--json", str(fit)]) == 0
    word = "right" if right else "wrong"
    assert f"warning: every outcome is {word} (all 20 items, all 9 respondents)" in (
        capsys.readouterr().out
    )
    assert main(["anchors", str(run), "--k", "10", "--irt", str(fit), "--out", str(anchors)]) == 0
    argv = ["analyze", str(run), "--anchors", str(anchors), "--irt", str(fit)]
    assert main([*argv, "--bootstrap", "50", "--json", str(pred)]) == 0
    out = capsys.readouterr().out
    shown = "100.0" if right else "0.0"
    assert f"[{shown}, {shown}]" not in out
    assert "[cannot tell]" in out and f"all 10 anchor answers are {word}" in out
    record = json.loads(pred.read_text())
    assert all(c["predicted_accuracy"]["ci"] is None for c in record["configurations"])
    assert all(r["harmful_rate"]["ci"] is None for r in record["rates"])
    assert any(w.startswith(f"every outcome is {word}") for w in record["warnings"])


def test_a_prediction_from_few_anchors_says_how_few(
    fitted: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from itemscale.analysis.measures import read_anchors
    from itemscale.core.responses import read_run

    run, fit, anchors = fitted
    df, prov = read_run(run)
    ids = read_anchors(anchors).items
    one = df[(df["model"] != "model 0") | (df["item_id"] == ids[0])]
    write_run(tmp_path / "R", one, prov)
    argv = ["analyze", str(tmp_path / "R"), "--anchors", str(anchors), "--irt", str(fit)]
    assert main([*argv, "--bootstrap", "20"]) == 0
    out = capsys.readouterr().out
    assert "warning: model 0 8f: predicted from 1 of 10 anchors" in out
    assert "model 1 8f: predicted from" not in out


def test_anchors_strata_out_of_range_is_refused_or_stated(
    fitted: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, fit, _ = fitted
    argv = ["anchors", str(run), "--k", "20", "--irt", str(fit), "--out", str(tmp_path / "a")]
    for strata in ("0", "-1"):
        assert main([*argv, "--strata", strata]) == 2
        assert f"--strata {strata}: at least 1 difficulty group" in capsys.readouterr().err
    assert main([*argv, "--strata", "1000"]) == 0
    assert "10 difficulty groups (--strata 1000 lowered to 10" in capsys.readouterr().out
    assert main([*argv, "--strata", "4"]) == 0
    assert "4 difficulty groups, seed" in capsys.readouterr().out


def test_a_fit_records_its_digest_and_reads_back_equal(fitted: tuple[Path, Path, Path]) -> None:
    _, fit, _ = fitted
    record = json.loads(fit.read_text())
    assert record["schema_version"] == 2 and len(record["fit_digest"]) == 64
    read = IrtFit.from_json(fit.read_text())
    assert read.fit_digest == record["fit_digest"] == fitted_digest(read)
    assert read.model_copy(update={"fit_digest": None}).with_digest() == read
